"""The soak between environments (``gatewayctl.deploy.soak``, ``deploy/rollout.yaml``'s
``promotion``): since when a release is Healthy by its records, and ``promote`` refusing,
accepting and overriding through the command line."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gatewayctl.deploy import soak
from gatewayctl.inputs import status_records
from gatewayctl.inputs.status_records import GatewayRecord, Record
from tests.builders import copy_project
from tests.hostile_helpers import Outcome, run_cli

REL, OLD = "openshell-0.0.110", "openshell-0.0.109"
DAY = timedelta(hours=24)
PLAN = "promotion:\n  order: [aws, ibm]\n  soak: 24h\n"


def at(hour: float) -> datetime:
    """Hours after 2026-12-05T00:00Z."""
    return datetime(2026, 12, 5, tzinfo=UTC) + timedelta(hours=hour)


def gw(
    name: str, release: str | None = REL, sync: str = "Synced", health: str = "Healthy"
) -> GatewayRecord:
    return GatewayRecord(name=name, release=release, sync=sync, health=health)


def rec(hour: float, *gateways: GatewayRecord) -> Record:
    return Record(recorded=at(hour), stack="aws", state="synced", gateways=gateways)


HEALTHY = (gw("audit"), gw("payments"), gw("search", OLD, "OutOfSync", "Degraded"))


# --- since and until -----------------------------------------------------------------------


def test_healthy_since_is_the_start_of_the_run_that_ends_with_the_newest_record() -> None:
    history = [rec(0, *HEALTHY), rec(5, gw("audit", health="Degraded")), rec(6, *HEALTHY)]
    # A gap of 20 hours between checks does not break the run; only a record does.
    history += [rec(26, *HEALTHY), rec(30, *HEALTHY)]
    assert soak.healthy_since(history, REL) == at(6)
    found = soak.upstream("aws", history, REL, DAY)
    assert found == soak.Upstream(
        stack="aws",
        since=at(6),
        newest=at(30),
        met=True,
        why=f"aws: {REL} Healthy since 2026-12-05T06:00:00+00:00, 1d of 1d",
    )


def test_one_hour_short_says_until_when_and_that_a_later_record_is_needed() -> None:
    found = soak.upstream("aws", [rec(6, *HEALTHY), rec(29, *HEALTHY)], REL, DAY)
    assert (found.met, found.since, found.newest) == (False, at(6), at(29))
    assert found.why == (
        f"aws: {REL} Healthy since 2026-12-05T06:00:00+00:00, 23h of 1d by the newest record"
        " (2026-12-06T05:00:00+00:00); the soak ends at 2026-12-06T06:00:00+00:00: a record at"
        " or after that time is needed (the next drift check's)"
    )


@pytest.mark.parametrize(
    ("newest", "why"),
    [
        ((gw("audit"), gw("payments", sync="OutOfSync")), "payments OutOfSync/Healthy"),
        ((gw("audit", health="Progressing"),), "audit Synced/Progressing"),
        ((gw("audit", OLD), gw("payments", None)), f"no gateway runs {REL}"),
        ((), f"no gateway runs {REL}"),
    ],
)
def test_a_newest_record_that_breaks_the_rule_leaves_no_since(
    newest: tuple[GatewayRecord, ...], why: str
) -> None:
    # Healthy for two days before: a newer record that breaks the rule cancels all of it.
    history = [rec(0, *HEALTHY), rec(48, *HEALTHY), rec(49, *newest)]
    assert soak.healthy_since(history, REL) is None
    assert soak.upstream("aws", history, REL, DAY) == soak.Upstream(
        stack="aws",
        newest=at(49),
        why=f"aws: {REL} not Healthy in the newest record (2026-12-07T01:00:00+00:00): {why}",
    )


def test_other_releases_and_their_gateways_do_not_count() -> None:
    # `search` runs the old release, out of sync and degraded: not the release's business.
    assert soak.broken(rec(0, *HEALTHY), REL) is None
    assert soak.broken(rec(0, *HEALTHY), OLD) == "search OutOfSync/Degraded"
    assert soak.healthy_since([], REL) is None
    assert soak.upstream("aws", [], REL, DAY).why == "aws: no records in its file"


def test_the_gate_waits_for_the_latest_since_of_the_environment() -> None:
    gate = soak.Gate(
        required=True,
        release=REL,
        previous="aws-*",
        soak=DAY,
        upstream=(
            soak.Upstream(stack="aws-1", since=at(0), newest=at(30), met=True),
            soak.Upstream(stack="aws-2", since=at(10), newest=at(30)),
        ),
    )
    assert (gate.met, gate.since, gate.until) == (False, at(10), at(34))
    none_yet = soak.Gate(
        required=True, soak=DAY, upstream=(soak.Upstream(stack="aws-1", since=at(0)),)
    )
    assert (none_yet.since, soak.Gate(required=True, soak=DAY).met) == (at(0), False)
    assert soak.NO_SOAK.met is True
    assert soak.span(timedelta(days=2, minutes=5)) == "2d5m"


# --- promote through the command line -------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = copy_project(tmp_path / "p")
    (root / "deploy" / "rollout.yaml").write_text(PLAN)
    return root


def write_records(directory: Path, *items: Record, stack: str = "aws") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    text = "".join(status_records.line(r) + "\n" for r in items)
    (directory / f"{stack}.jsonl").write_text(text)
    return directory


def promote(root: Path, *argv: str) -> Outcome:
    return run_cli("--root", str(root), "promote", REL, *argv)


SHORT = (
    f"  aws: {REL} Healthy since 2026-12-05T06:00:00+00:00, 23h of 1d by the newest record"
    " (2026-12-06T05:00:00+00:00); the soak ends at 2026-12-06T06:00:00+00:00: a record at or"
    " after that time is needed (the next drift check's)"
)


def test_promote_refuses_before_the_soak_and_writes_nothing(project: Path) -> None:
    before = (project / "Pulumi.ibm.yaml").read_bytes()
    folder = write_records(project / "rec", rec(6, *HEALTHY), rec(29, *HEALTHY))
    out = promote(project, "--to", "ibm", "--records", str(folder))
    assert (out.code, out.err) == (6, "")
    assert out.out.splitlines() == [
        f"soak: {REL} must have been Healthy in aws for 1d first (deploy/rollout.yaml)",
        SHORT,
        "refused: the soak is not met; Pulumi.ibm.yaml not written (a reason with"
        " --override-soak REASON lets it through)",
    ]
    assert (project / "Pulumi.ibm.yaml").read_bytes() == before
    document = json.loads(
        promote(project, "--to", "ibm", "--records", str(folder), "-o", "json").out
    )
    assert (document["written"], document["soak"]["stacks"][0]["why"]) == (False, SHORT[2:])
    assert {k: document["soak"][k] for k in ("required", "met", "since", "until", "override")} == {
        "required": True,
        "met": False,
        "since": "2026-12-05T06:00:00+00:00",
        "until": "2026-12-06T06:00:00+00:00",
        "override": None,
    }


def test_promote_goes_through_once_the_soak_is_met(project: Path) -> None:
    folder = write_records(project / "rec", rec(6, *HEALTHY), rec(30, *HEALTHY))
    out = promote(project, "--to", "ibm/roks-us-east", "--records", str(folder))
    assert (out.code, out.err) == (0, "")
    assert out.out.splitlines()[:3] == [
        f"soak: {REL} must have been Healthy in aws for 1d first (deploy/rollout.yaml)",
        f"  aws: {REL} Healthy since 2026-12-05T06:00:00+00:00, 1d of 1d",
        "soak met",
    ]
    assert f"      release: {REL}\n" in (project / "Pulumi.ibm.yaml").read_text()


def test_the_first_environment_and_a_promotion_that_changes_nothing_need_no_soak(
    project: Path,
) -> None:
    out = promote(project, "--to", "aws", "--records", str(project / "none"), "-o", "json")
    assert out.code == 0
    assert json.loads(out.out)["soak"] == {
        "required": False,
        "met": True,
        "since": None,
        "until": None,
        "override": None,
        "release": None,
        "previous": None,
        "soak": None,
        "stacks": [],
    }
    out = promote(project, "--to", "local", "--records", str(project / "none"))
    assert out.code == 0  # local is in no entry of the order


def test_an_override_lands_above_the_binding_and_keeps_every_other_byte(project: Path) -> None:
    path = project / "Pulumi.ibm.yaml"
    before = path.read_text()
    folder = write_records(project / "rec", rec(6, *HEALTHY), rec(9, *HEALTHY))
    reason = "INC-4521: CVE-2026-1234 in the gateway"
    out = promote(
        project,
        "--to",
        "ibm",
        "--records",
        str(folder),
        "--override-soak",
        reason,
        "--now",
        "2026-12-05T10:00:30Z",
        "-o",
        "json",
    )
    assert (out.code, out.err) == (0, "")
    comment = f"# soak overridden 2026-12-05T10:00Z: {reason} ({REL} Healthy in aws for 3h of 1d)"
    after = path.read_text()
    binding = f"      release: {OLD}\n"
    assert before.count(binding) == 1
    assert after == before.replace(binding, f"      {comment}\n      release: {REL}\n")
    document = json.loads(out.out)
    assert (document["written"], document["soak"]["override"]) == (True, reason)
    assert (document["soak"]["met"], document["soak"]["until"]) == (
        False,
        "2026-12-06T06:00:00+00:00",
    )


def test_an_override_of_a_release_never_healthy_says_so_in_text(project: Path) -> None:
    folder = write_records(project / "rec", rec(6, gw("audit", health="Degraded")))
    out = promote(
        project, "--to", "ibm", "--records", str(folder), "--override-soak", "x", "--dry-run"
    )
    assert out.code == 0
    lines = out.out.splitlines()
    assert lines[1] == (
        f"  aws: {REL} not Healthy in the newest record (2026-12-05T06:00:00+00:00): audit"
        " Synced/Degraded"
    )
    assert lines[2].startswith("soak not met; overridden, in Pulumi.ibm.yaml: # soak overridden ")
    assert lines[2].endswith(f": x ({REL} not Healthy in aws)")
    assert lines[-1] == "dry run: Pulumi.ibm.yaml not written"


@pytest.mark.parametrize("reason", ["", "  ", "two\nlines", "bell\a", "x" * 201])
def test_an_override_needs_a_printable_one_line_reason(project: Path, reason: str) -> None:
    out = promote(project, "--to", "ibm", "--override-soak", reason)
    assert (out.code, out.err) == (
        2,
        "error: --override-soak needs a reason of 1 to 200 printable characters on one line\n",
    )


def test_a_bad_record_line_is_invalid_input(project: Path) -> None:
    folder = write_records(project / "rec", rec(6, *HEALTHY))
    with (folder / "aws.jsonl").open("a") as stream:
        stream.write('{"recorded": "yesterday"}\n')
    out = promote(project, "--to", "ibm", "--records", str(folder))
    assert out.code == 2
    assert f"{folder}/aws.jsonl:2: recorded: expected an ISO 8601 time" in out.err


def test_records_of_a_stack_missing_or_not_deployed_are_named(project: Path) -> None:
    out = promote(project, "--to", "ibm", "--records", str(project / "none"))
    assert (out.code, out.out.splitlines()[1]) == (
        6,
        f"  aws: no records: {project}/none/aws.jsonl does not exist",
    )
    (project / "deploy" / "stacks.yaml").write_text("deployed: [ibm]\n")
    out = promote(project, "--to", "ibm", "--records", str(project / "none"))
    assert (out.code, out.out.splitlines()[1]) == (
        6,
        "  aws: no stack of it is deployed (deploy/stacks.yaml), so none has recorded status;"
        " change the order in deploy/rollout.yaml or override",
    )


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_by_default_records_come_from_the_fetched_records_branch(project: Path) -> None:
    out = promote(project, "--to", "ibm")
    assert (out.code, out.out.splitlines()[1]) == (
        6,
        "  aws: no origin/hypershell-records here (not fetched, or not a git checkout); fetch"
        " it with `git fetch origin hypershell-records` (or give --records DIR)",
    )
    git(project, "init", "-q", "-b", "main")
    git(project, "commit", "-q", "--allow-empty", "-m", "empty")
    git(project, "update-ref", "refs/remotes/origin/hypershell-records", "HEAD")
    out = promote(project, "--to", "ibm")
    assert (out.code, out.out.splitlines()[1]) == (
        6,
        "  aws: no records: origin/hypershell-records:records/aws.jsonl does not exist (no drift"
        " check recorded it)",
    )
    write_records(project / "records", rec(6, *HEALTHY), rec(30, *HEALTHY))
    git(project, "add", "records/aws.jsonl")
    git(project, "commit", "-q", "-m", "records")
    git(project, "update-ref", "refs/remotes/origin/hypershell-records", "HEAD")
    git(project, "rm", "-q", "--cached", "records/aws.jsonl")
    (project / "records" / "aws.jsonl").unlink()  # only the branch has it
    out = promote(project, "--to", "ibm", "--dry-run")
    assert (out.code, out.out.splitlines()[1:3]) == (
        0,
        [f"  aws: {REL} Healthy since 2026-12-05T06:00:00+00:00, 1d of 1d", "soak met"],
    )

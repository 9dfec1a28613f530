"""``gatewayctl history`` (gatewayctl.deploy.deploy_history, gatewayctl.inputs.history_records):
each ``up``
recorded as one JSON line (commit, outcome, per gateway release, images and declaration blob),
read back strictly, and shown newest first joined with the drift check's status records."""

from __future__ import annotations

import json
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gatewayctl.errors import InvalidInputError
from gatewayctl.inputs import history_records, status_records
from gatewayctl.inputs.status_records import GatewayRecord, Record
from tests.builders import copy_stack
from tests.hostile_helpers import run_cli

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
OLD = "openshell-0.0.109"
GATEWAYS = ["audit", "ml-platform", "payments", "search"]


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = copy_stack("aws", tmp_path / "repo")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


def record_up(repo: Path, out: Path, *args: str) -> tuple[int, str, str]:
    done = run_cli("--root", str(repo), "history", "aws", "--record", str(out), *args)
    return done.code, done.out, done.err


ROLLOUT = {
    "stack": "aws",
    "completed": False,
    "summary": "...",
    "waves": [
        {"wave": 0, "name": "shared", "gateways": [], "result": "done"},
        {"wave": 1, "name": "canary", "gateways": ["audit"], "result": "done"},
        {"wave": 2, "name": "us-east-1", "gateways": ["payments"], "result": "stopped"},
        {"wave": 3, "name": "x", "gateways": ["ml-platform", "search"], "result": "untouched"},
    ],
}


def test_an_up_is_recorded_with_its_commit_releases_images_and_blobs(
    repo: Path, tmp_path: Path
) -> None:
    out, rollout = tmp_path / "history.jsonl", tmp_path / "rollout.json"
    rollout.write_text(json.dumps(ROLLOUT))
    args = ["--outcome", "stopped", "--rollout", str(rollout), "--workflow", "deploy"]
    run = ["--run-url", "https://github.com/o/r/actions/runs/7", "--now", "2026-12-06T10:00Z"]
    assert record_up(repo, out, *args, *run) == (0, "", "")
    head = git(repo, "rev-parse", "HEAD").strip()
    (entry,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert list(entry) == list(history_records.KEYS)
    assert {k: entry[k] for k in history_records.KEYS[:-1]} == {
        "recorded": "2026-12-06T10:00:00+00:00",
        "stack": "aws",
        "workflow": "deploy",
        "run": "https://github.com/o/r/actions/runs/7",
        "commit": head,
        "outcome": "stopped",
        "stoppedAt": 2,
    }
    assert [g["name"] for g in entry["gateways"]] == GATEWAYS
    waves = {g["name"]: g["wave"] for g in entry["gateways"]}
    assert waves == {"audit": "done", "ml-platform": "untouched", "payments": "stopped",
                     "search": "untouched"}  # fmt: skip
    for gateway in entry["gateways"]:
        blob = git(repo, "rev-parse", f"HEAD:gateways/aws/{gateway['name']}.yaml").strip()
        assert (gateway["release"], gateway["declaration"]) == (OLD, blob)
    audit = entry["gateways"][0]["images"]
    assert sorted(audit) == ["gateway", "sandbox", "supervisor"]
    assert audit["gateway"].startswith("ghcr.io/") and "@sha256:" in audit["gateway"]
    # The line reads back as it was written.
    (parsed,) = history_records.parse(out.read_text(), str(out), "aws")
    assert history_records.line(parsed) == out.read_text().strip()


def test_stopped_needs_the_rollout_and_reading_flags_need_no_record(
    repo: Path, tmp_path: Path
) -> None:
    out = tmp_path / "h.jsonl"
    assert record_up(repo, out, "--outcome", "stopped")[1:] == (
        "",
        "error: --outcome stopped needs --rollout FILE showing the wave it stopped at\n",
    )
    bad = record_up(repo, out, "--outcome", "failed", "--run-url", "x|y")
    assert bad[1:] == ("", "error: --run-url 'x|y': expected one http(s) address\n")
    done = run_cli("--root", str(repo), "history", "aws", "--outcome", "failed")
    assert (done.code, done.err) == (2, "error: --outcome: only with --record FILE\n")
    assert not out.exists()


def test_a_bad_history_line_names_the_file_line_and_field(tmp_path: Path) -> None:
    good = (
        '{"recorded":"2026-12-06T10:00:00+00:00","stack":"aws","workflow":"deploy","run":null,'
        '"commit":null,"outcome":"succeeded","stoppedAt":null,"gateways":[]}'
    )
    bad = good.replace('"succeeded","stoppedAt":null', '"stopped","stoppedAt":null')
    with pytest.raises(InvalidInputError) as raised:
        history_records.parse(f"{good}\n{bad}\n{{}}\n", "history/aws.jsonl", "aws")
    assert sorted(str(p) for p in raised.value.problems) == [
        "history/aws.jsonl:2: stoppedAt: expected the wave it stopped at (a number)",
        "history/aws.jsonl:3: and 1 more line(s) that are not records: 3",
    ]


def entry(hour: int, release: str, outcome: str = "succeeded") -> history_records.Entry:
    images = {"gateway": f"g:{release}", "supervisor": "s", "sandbox": "b"}
    return history_records.Entry(
        recorded=datetime(2026, 12, 6, hour, tzinfo=UTC),
        stack="aws",
        workflow="deploy",
        run=f"https://ci/{hour}",
        commit=f"{hour:02d}" * 20,
        outcome=outcome,
        stopped_at=None,
        gateways=tuple(
            history_records.GatewayEntry(
                name=n, release=release, images=images, declaration="ab" * 20
            )
            for n in ("audit", "search")
        ),
    )


def check(hour: int, search: str = "Healthy", minute: int = 0) -> Record:
    return Record(
        recorded=datetime(2026, 12, 6, hour, minute, tzinfo=UTC),
        stack="aws",
        state="synced",
        gateways=(
            GatewayRecord(name="audit", release=None, sync="Synced", health="Healthy"),
            GatewayRecord(name="search", release=None, sync="Synced", health=search),
        ),
    )


@pytest.fixture
def branch(tmp_path: Path) -> Path:
    """A checkout of the records branch: two ups (5:00, 8:00) and the checks after each."""
    root = tmp_path / "records"
    (root / "history").mkdir(parents=True)
    (root / "records").mkdir()
    for item in (entry(5, OLD), entry(8, "openshell-0.0.110")):
        history_records.append(root / "history" / "aws.jsonl", item)
    checks = [check(6, "Degraded"), check(7), check(9, "Degraded"), check(10), check(11)]
    for checked in checks:
        status_records.append(root / "records" / "aws.jsonl", checked)
    return root


def test_history_shows_ups_newest_first_with_healthy_since(repo: Path, branch: Path) -> None:
    done = run_cli("--root", str(repo), "history", "aws", "--records", str(branch))
    assert (done.code, done.err) == (0, "")
    t = "2026-12-06T{:02d}:00:00+00:00".format
    assert done.out.splitlines() == [
        "history of aws: 2 up(s), newest first",
        f"{t(8)}  deploy  succeeded  commit {'08' * 6}  healthy since {t(10)}",
        "  run https://ci/8",
        f"  audit   openshell-0.0.110  declaration {'ab' * 6}  healthy since {t(9)}",
        f"  search  openshell-0.0.110  declaration {'ab' * 6}  healthy since {t(10)}",
        f"{t(5)}  deploy  succeeded  commit {'05' * 6}  healthy since {t(7)} (until the next up;"
        f" last check {t(7)})",
        "  run https://ci/5",
        f"  audit   {OLD}  declaration {'ab' * 6}  healthy since {t(6)} (until the next up;"
        f" last check {t(7)})",
        f"  search  {OLD}  declaration {'ab' * 6}  healthy since {t(7)} (until the next up;"
        f" last check {t(7)})",
    ]


def test_history_of_one_gateway_as_json(repo: Path, branch: Path) -> None:
    status_records.append(branch / "records" / "aws.jsonl", check(12, "Degraded"))
    argv = ["--root", str(repo), "history", "aws", "--records", str(branch), "--gateway"]
    done = run_cli(*argv, "search", "-o", "json")
    document = json.loads(done.out)
    newest = document["ups"][0]
    assert [g["name"] for u in document["ups"] for g in u["gateways"]] == ["search", "search"]
    assert {k: newest[k] for k in ("outcome", "superseded", "healthySince", "health")} == {
        "outcome": "succeeded",
        "superseded": False,
        "healthySince": None,  # Degraded in the newest check
        "health": "Degraded",
    }
    assert newest["gateways"][0]["lastRecorded"] == "2026-12-06T12:00:00+00:00"
    text = run_cli(*argv, "search").out.splitlines()
    assert text[3].endswith("last status Synced/Degraded at 2026-12-06T12:00:00+00:00")
    unknown = run_cli(*argv, "ghost")
    assert unknown.code == 2 and "no up of gateway 'ghost' is recorded" in unknown.err


def test_history_reads_the_records_branch_by_ref(repo: Path, branch: Path) -> None:
    # The branch as the workflows push it: its own history, history/ and records/ at its root.
    git(branch, "init", "-q", "-b", "hypershell-records")
    git(branch, "add", "-A")
    git(branch, "commit", "-q", "-m", "records")
    git(repo, "fetch", "-q", str(branch), "hypershell-records:hypershell-records")
    done = run_cli("--root", str(repo), "history", "aws", "--ref", "hypershell-records")
    assert done.out.splitlines()[0] == "history of aws: 2 up(s), newest first"
    absent = run_cli("--root", str(repo), "history", "aws")  # origin/hypershell-records
    assert absent.code == 1
    assert "no origin/hypershell-records here (not fetched" in absent.err
    empty = run_cli("--root", str(repo), "history", "aws", "--records", str(repo))
    assert (empty.code, empty.out) == (
        0,
        f"history of aws: no records: {repo}/history/aws.jsonl does not exist\n",
    )

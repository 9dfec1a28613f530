"""The refusal of a removal that loses the only key of a retained database, and the records
that let it through (issue 45 item 2): ``deploy/decommissions.yaml`` read strictly, checked
by ``validate``, and ``gatewayctl diff`` exiting 7 with the report written, end to end."""

from __future__ import annotations

import dataclasses
import datetime
import json
from pathlib import Path

import pytest

from gatewayctl.cli import main as cli
from gatewayctl.cli.exits import EXIT_REFUSED
from gatewayctl.diff import decommission, risks
from gatewayctl.diff.compare import GatewayChange, StackDiff
from gatewayctl.diff.risks import Uncommitted
from gatewayctl.errors import InvalidInputError
from gatewayctl.inputs import decommissions
from gatewayctl.inputs.decommissions import Record
from tests.builders import cluster, copy_project, git, write_gateway, write_stack
from tests.diff_helpers import clone, run_diff
from tests.hostile_helpers import run_cli

RECORDS = "deploy/decommissions.yaml"
REFUSAL = (
    "gatewayctl diff: refused: removing gateway dev of stack local (gateways/local/dev.yaml)"
    " deletes its KEK Secret openshell-gateway-credential-kek, the only copy of the key of the"
    " credentials in its database, which is retained (deletionPolicy Retain). Either export the"
    " key (kubectl -n openshell-dev get secret openshell-gateway-credential-kek -o yaml) and"
    " record it in deploy/decommissions.yaml as `local/dev: {kek: exported, exportedTo: <where"
    " the copy is kept>}`, or record there that the credentials may go: `local/dev: {data:"
    ' discard}` (docs/decommissioning.md, "The record")'
)
REFUSED_RISK = (
    "- stack `local`: **refused**: gateway `dev` is removed, its database retained and its KEK"
    " deleted, and `deploy/decommissions.yaml` has no record of `local/dev`: add `kek: exported`"
    " with `exportedTo: <where the copy is kept>` after exporting the key, or `data: discard` if"
    " the credentials may go"
)


def write(root: Path, text: str) -> None:
    (root / "deploy").mkdir(parents=True, exist_ok=True)
    (root / RECORDS).write_text(text, encoding="utf-8")


# --- the records file -----------------------------------------------------------------------


def test_no_file_is_no_record_and_both_kinds_of_record_are_read(tmp_path: Path) -> None:
    assert decommissions.read(tmp_path) == {}
    write(
        tmp_path,
        "gateways:\n"
        "  ibm/team-a:\n"
        "    kek: exported\n"
        "    exportedTo: vault kv secret/backups/ibm/team-a/kek (OPS-1234)\n"
        "    by: alice\n"
        "    date: 2026-12-06\n"
        "  local/dev:\n"
        "    data: discard\n",
    )
    assert decommissions.read(tmp_path) == {
        "ibm/team-a": Record(
            stack="ibm",
            gateway="team-a",
            exported_to="vault kv secret/backups/ibm/team-a/kek (OPS-1234)",
            by="alice",
            date=datetime.date(2026, 12, 6).isoformat(),
        ),
        "local/dev": Record(stack="local", gateway="dev", discard=True),
    }


def test_every_problem_of_the_file_is_named_at_its_line_and_column(tmp_path: Path) -> None:
    root = copy_project(tmp_path / "p")
    write(
        root,
        "gateways:\n"
        "  team-a:\n"  # 2
        "    data: discard\n"
        "  ibm/team-a:\n"  # 4
        "    kek: yes\n"
        "  local/x:\n"  # 6
        "    kek: exported\n"
        "    data: discard\n"
        "    colour: red\n"  # 9
        "    date: soon\n"
        "  aws/y:\n"  # 11
        "    kek: exported\n"
        "  aws/z:\n"  # 13
        "    data: discard\n"
        "    exportedTo: nowhere\n"
        "other: 1\n",  # 16
    )
    with pytest.raises(InvalidInputError):
        decommissions.read(root)

    out = run_cli("--root", str(root), "validate", "--all")

    assert out.code == 2
    assert out.out == ""
    # Sorted by file, field and message, each where it is written (a missing key: its parent).
    required = "required with `kek: exported`: where the copy is kept (a Vault path, a ticket)"
    assert out.err.splitlines() == [
        f"error: {RECORDS}:11:3: gateways.aws/y.exportedTo: {required}",
        f"error: {RECORDS}:15:5: gateways.aws/z.exportedTo: only with `kek: exported`",
        f"error: {RECORDS}:5:10: gateways.ibm/team-a.kek: expected exported",
        f"error: {RECORDS}:6:3: gateways.local/x: expected `kek: exported` (with exportedTo) or"
        " `data: discard`, one of them",
        f"error: {RECORDS}:9:5: gateways.local/x.colour: unknown key; expected one of kek,"
        " exportedTo, data, by, date",
        f"error: {RECORDS}:10:11: gateways.local/x.date: expected a date, YYYY-MM-DD",
        f"error: {RECORDS}:6:3: gateways.local/x.exportedTo: {required}",
        f"error: {RECORDS}:2:3: gateways.team-a: is no <stack>/<gateway> (two DNS-1123 labels:"
        " ibm/team-a)",
        f"error: {RECORDS}:16:1: other: unknown key; the file holds 'gateways'",
        "9 problem(s); nothing written",
    ]


def test_validate_refuses_a_record_of_a_gateway_still_declared(tmp_path: Path) -> None:
    root = copy_project(tmp_path / "p")
    write(root, "gateways:\n  local/gone:\n    data: discard\n  local/dev:\n    data: discard\n")

    out = run_cli("--root", str(root), "validate", "local")

    assert out.code == 2
    assert out.err.splitlines() == [
        f"error: {RECORDS}:4:3: gateways.local/dev: gateway dev is declared in stack local: a"
        " record is for its removal; delete the entry, or the declaration",
        "1 problem(s); nothing written",
    ]
    (root / "gateways/local/dev.yaml").unlink()
    assert run_cli("--root", str(root), "validate", "local").code == 0


def test_an_uncommitted_record_is_named_as_one(tmp_path: Path) -> None:
    """The pull request holds only what is committed: a record in the working tree alone would
    let the local diff through and not the pull request's."""
    git(tmp_path, "init", "--quiet", "--initial-branch=main")
    (tmp_path / "README.md").write_text("x\n", encoding="utf-8")
    git(tmp_path, "add", "README.md")
    git(tmp_path, "commit", "-qm", "x")
    write(tmp_path, "gateways:\n  local/dev:\n    data: discard\n")
    (tmp_path / "deploy/windows.yaml").write_text("stacks: {}\n", encoding="utf-8")

    assert risks.uncommitted(tmp_path) == (Uncommitted(path=RECORDS, state="untracked"),)


# --- which removals are refused -------------------------------------------------------------


def stack_diff(stack: str, *lost: str) -> StackDiff:
    return StackDiff(
        stack=stack, base_note=None, head_note=None, gateways=(), objects=(), resources=(),
        key_only_copies=lost,
    )  # fmt: skip


def test_a_record_lets_the_removal_through_and_says_what_it_says(tmp_path: Path) -> None:
    write(
        tmp_path,
        "gateways:\n"
        "  ibm/team-a:\n    kek: exported\n    exportedTo: 'OPS-1 `x`'\n    by: bob\n"
        "  ibm/research:\n    data: discard\n    date: 2026-12-06\n"
        "  local/dev:\n    data: discard\n",
    )
    diffs = [stack_diff("ibm", "research", "team-a", "batch-jobs"), stack_diff("aws")]

    found, refused = decommission.apply(tmp_path, diffs, {"ibm": "inventory/ibm"})

    assert found[0].decommissions == (
        "gateway `research` is removed, its database retained and its KEK deleted:"
        " `deploy/decommissions.yaml` records `data: discard` (2026-12-06): the credentials"
        " stored in the database may be lost",
        "gateway `team-a` is removed, its database retained and its KEK deleted:"
        " `deploy/decommissions.yaml` records `kek: exported` (by `bob`): the copy of the key is"
        " kept at `` OPS-1 `x` ``",
        "**refused**: gateway `batch-jobs` is removed, its database retained and its KEK deleted,"
        " and `deploy/decommissions.yaml` has no record of `ibm/batch-jobs`: add `kek: exported`"
        " with `exportedTo: <where the copy is kept>` after exporting the key, or `data: discard`"
        " if the credentials may go",
    )
    assert found[1] is diffs[1]  # nothing lost, nothing said
    assert [(r.stack, r.gateway, r.declaration) for r in refused] == [
        ("ibm", "batch-jobs", "inventory/ibm/batch-jobs.yaml")
    ]


@pytest.mark.parametrize("case", ["same-cluster", "other-context", "other-cluster"])
def test_a_move_between_shards_is_no_decommission(tmp_path: Path, case: str) -> None:
    """The shard ``one`` no longer declares ``team-a``: ``two`` does (relabelled), on the same
    cluster and database server: a move (docs/scale-out.md), whose state move keeps the KEK
    Secret. On a cluster of another ``kubeconfigContext`` it is not one, and is refused; nor
    when ``two`` declares it on another of the clusters both stacks share (``c2``) than the
    one it leaves (``c1``): another tenant of the same name elsewhere."""
    inventory = "inventory/gateways"
    root = tmp_path
    elsewhere = cluster(kubeconfigContext="elsewhere")
    both = {"c1": cluster(), "c2": elsewhere}
    write_stack(root, stack="one", directory=inventory, selector={"shard": "1"}, clusters=both)
    there = elsewhere if case == "other-context" else cluster()
    clusters = both if case == "other-cluster" else {"c1": there}
    write_stack(root, stack="two", directory=inventory, selector={"shard": "2"}, clusters=clusters)
    declared_on = "c2" if case == "other-cluster" else "c1"
    write_gateway(
        root, "team-a", {"cluster": declared_on}, directory=inventory, labels={"shard": "2"}
    )
    removed = GatewayChange(
        name="team-a", status="removed", cluster="c1", namespace="openshell-team-a"
    )
    diff = dataclasses.replace(stack_diff("one", "team-a"), gateways=(removed,))

    found, refused = decommission.apply(root, [diff], {"one": inventory})

    if case == "same-cluster":
        assert refused == []
        assert found[0].decommissions == (
            "gateway `team-a` leaves this stack for stack `two`, which declares it in namespace"
            " `openshell-team-a` on the same cluster and database server: a move (`gatewayctl"
            " move`, docs/scale-out.md), whose state move keeps its KEK Secret and database; not"
            " refused. Without the state move first, the next `up` of this stack deletes them",
        )
    else:
        assert [(r.stack, r.gateway, r.declaration) for r in refused] == [
            ("one", "team-a", "inventory/gateways/team-a.yaml")
        ]


# --- end to end: the diff of a pull request -------------------------------------------------


def test_the_diff_refuses_with_exit_7_and_writes_the_report(pristine: Path, tmp_path: Path) -> None:
    repo = clone(pristine, tmp_path / "repo")
    git(repo, "rm", "--quiet", "gateways/local/dev.yaml")
    git(repo, "commit", "--quiet", "-m", "Remove dev")
    report = tmp_path / "report.md"

    refused = run_diff(repo, "local", "--base", "HEAD~1", "--output", str(report))

    assert refused.code == EXIT_REFUSED == 7
    assert refused.err == REFUSAL + "\n"
    assert refused.out.startswith(f"## Risks\n\n**Decommissions** (1):\n\n{REFUSED_RISK}\n\n")
    assert report.read_text(encoding="utf-8") == refused.out
    summary = run_diff(repo, "local", "--base", "HEAD~1", "--format", "json")
    assert summary.code == 7
    document = json.loads(summary.out)
    assert document["refused"] == [
        {"stack": "local", "gateway": "dev", "declaration": "gateways/local/dev.yaml"}
    ]
    assert document["stacks"][0]["decommissions"] == [REFUSED_RISK.split(": ", 1)[1]]

    write(repo, "gateways:\n  local/dev:\n    kek: exported\n    exportedTo: vault kv x/dev\n")
    git(repo, "add", RECORDS)
    git(repo, "commit", "--quiet", "-m", "Record the exported key of dev")
    recorded = run_diff(repo, "local", "--base", "HEAD~2")

    assert recorded.code == 3, recorded.err
    assert recorded.err == ""
    assert recorded.out.startswith(
        "## Risks\n\n**Decommissions** (1):\n\n- stack `local`: gateway `dev` is removed, its"
        " database retained and its KEK deleted: `deploy/decommissions.yaml` records `kek:"
        " exported`: the copy of the key is kept at `vault kv x/dev`\n\n**Destroys** (4):\n\n"
    )


def test_the_help_names_the_refusal_s_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        cli.main(["diff", "--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "7 refused: a removed gateway's database is retained while the only copy of its" in text
    assert "deploy/decommissions.yaml has no record for it" in text

"""``gatewayctl move``: a gateway's move between two stacks (shards) of one cluster, checked
offline, with the state move printed (``gatewayctl.deploy.move``). The move itself is proven
against the real engine in tests/e2e/test_e2e_i_shards.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gatewayctl.cli import main as cli
from tests.builders import cluster, write_gateway, write_stack

INVENTORY = "inventory/gateways"


def _shards(root: Path, *, dest_cluster: dict[str, object] | None = None) -> None:
    """Stacks ``one`` and ``two`` reading one inventory, by label ``shard``; gateway ``team-a``
    labelled for ``two``, ``team-b`` for ``one``."""
    write_stack(root, stack="one", directory=INVENTORY, selector={"shard": "1"})
    write_stack(
        root,
        stack="two",
        directory=INVENTORY,
        selector={"shard": "2"},
        clusters={"c1": dest_cluster or cluster()},
    )
    for name, shard in (("team-a", "2"), ("team-b", "1")):
        write_gateway(
            root,
            name,
            {"cluster": "c1", "signIn": "none"},
            directory=INVENTORY,
            labels={"shard": shard},
        )


def _run(capsys: pytest.CaptureFixture[str], root: Path, *args: str) -> tuple[int, str, str]:
    code = cli.main(["--root", str(root), "move", *args])
    printed = capsys.readouterr()
    return code, printed.out, printed.err


def test_a_relabelled_gateway_moves_with_one_urn(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _shards(tmp_path)
    code, out, err = _run(capsys, tmp_path, "team-a", "--from", "one", "--to", "two", "-o", "json")
    assert (code, err) == (0, "")
    urn = "urn:pulumi:one::hypershell-gateways::hypershell:gateway:Gateway::team-a"
    assert json.loads(out) == {
        "gateway": "team-a",
        "source": "one",
        "dest": "two",
        "cluster": "c1",
        "namespace": "openshell-team-a",
        "database": "gw_team_a",
        "databaseServer": "db.example.com:5432",
        "urn": urn,
        "commands": [
            f"pulumi state move --source one --dest two --yes '{urn}'",
            "pulumi preview --stack two",
            "pulumi preview --stack one",
        ],
    }
    code, out, _ = _run(capsys, tmp_path, "team-a", "--from", "one", "--to", "two")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == (
        "Move gateway team-a from stack one to stack two (cluster c1, namespace"
        " openshell-team-a, database gw_team_a on db.example.com:5432), keeping every object:"
        " only the state moves."
    )
    assert f"   pulumi state move --source one --dest two --yes '{urn}'" in lines


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (
            ["team-b", "--from", "one", "--to", "two"],
            "error: Pulumi.two.yaml: stack 'two' does not take gateway 'team-b': change its"
            " declaration's metadata.labels to match this stack's selector first, in the same"
            " pull request",
        ),
        (
            ["team-a", "--from", "two", "--to", "two"],
            "error: --from: the gateway is already in 'two'",
        ),
        (
            ["team-a", "--from", "one", "--to", "three"],
            "error: Pulumi.three.yaml: no such stack; the stacks here are one, two",
        ),
    ],
)
def test_a_move_the_working_tree_does_not_make_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], problem: str | None
) -> None:
    _shards(tmp_path)
    code, _, err = _run(capsys, tmp_path, *args)
    if problem is None:
        # From `two`, which does not take team-b now: the source's check does not apply, the
        # destination `one` takes it, so the plan is printed (the state move then finds no
        # such URN in `two` and says so).
        assert code == 0
        return
    assert code == 2
    assert err.splitlines()[0] == problem


def test_the_source_must_no_longer_take_the_gateway(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _shards(tmp_path)
    # A second stack selecting shard 2 as well: both take team-a.
    write_stack(tmp_path, stack="three", directory=INVENTORY, selector={"shard": "2"})
    code, _, err = _run(capsys, tmp_path, "team-a", "--from", "three", "--to", "two")
    assert code == 2
    assert err.splitlines()[0] == (
        "error: inventory/gateways/team-a.yaml:5:3: metadata.labels: stack 'three' still takes"
        " gateway 'team-a': its labels must match the selector of 'two' alone"
    )


@pytest.mark.parametrize(
    ("changes", "difference"),
    [
        ({"kubeconfigContext": "other"}, "kubeconfigContext 'ctx' != 'other'"),
        (
            {"database": {"adminHost": "db2.example.com"}},
            "the database server (adminHost:adminPort) differs",
        ),
    ],
)
def test_a_move_to_another_cluster_or_server_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], changes: dict[str, object], difference: str
) -> None:
    _shards(tmp_path, dest_cluster=cluster(**changes))
    code, _, err = _run(capsys, tmp_path, "team-a", "--from", "one", "--to", "two")
    assert code == 2
    assert err.splitlines()[0] == (
        "error: Pulumi.two.yaml:4:5: hypershell-gateways:clusters.c1: is not the cluster 'one'"
        f" names so: {difference}"
    )

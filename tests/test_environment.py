"""An environment's configuration said once for its stacks (shards): ``environments/<name>.yaml``
named by ``hypershell-gateways:environment`` (``gatewayctl.inputs.environment``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from gatewayctl.cli import main as cli
from gatewayctl.engine import render
from gatewayctl.resolve import preparation
from tests.builders import cluster, secrets_for, write_gateway, write_stack, write_text

INVENTORY = "inventory/gateways"
CLUSTERS = {"c1": cluster()}
PREFIX = "hypershell-gateways:"


def _environment(root: Path, shared: dict[str, Any] | None = None) -> None:
    write_text(
        root,
        "environments/east.yaml",
        yaml.safe_dump(
            shared if shared is not None else {"clusters": CLUSTERS},
            sort_keys=False,
        ),
    )


def _shard(root: Path, stack: str, shard: str, **more: Any) -> None:
    config = {
        f"{PREFIX}environment": "east",
        f"{PREFIX}declarationsDir": INVENTORY,
        f"{PREFIX}selector": {"matchLabels": {"shard": shard}},
        f"{PREFIX}clusterSecrets": secrets_for(CLUSTERS),
        **more,
    }
    write_text(root, f"Pulumi.{stack}.yaml", yaml.safe_dump({"config": config}, sort_keys=False))


def _project(root: Path) -> None:
    """Environment ``east`` in two shards, and stack ``whole``: the same stack said in full."""
    _environment(root)
    _shard(root, "east-1", "1")
    _shard(root, "east-2", "2")
    for name, shard in (("team-a", "1"), ("team-b", "2"), ("team-c", "1")):
        write_gateway(
            root,
            name,
            {"cluster": "c1", "signIn": "none"},
            directory=INVENTORY,
            labels={"shard": shard},
        )


def _run(capsys: pytest.CaptureFixture[str], root: Path, *args: str) -> tuple[int, str, str]:
    code = cli.main(["--root", str(root), *args])
    printed = capsys.readouterr()
    return code, printed.out, printed.err


def test_each_shard_is_the_environment_and_its_own_selection(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shards, full = tmp_path / "shards", tmp_path / "full"
    _project(shards)
    # Another project: the same stack said in full, in its own file.
    _project(full)
    write_stack(
        full, stack="whole", clusters=CLUSTERS, directory=INVENTORY, selector={"shard": "1"}
    )
    for path in full.glob("Pulumi.east-*.yaml"):
        path.unlink()
    code, out, _ = _run(capsys, shards, "validate", "--all", "-o", "json")
    assert code == 0
    gateways = {s["stack"]: s["gateways"] for s in json.loads(out)["stacks"]}
    assert gateways == {"east-1": ["team-a", "team-c"], "east-2": ["team-b"]}
    shard = render.execute(preparation.prepare(shards, "east-1"))
    whole = render.execute(preparation.prepare(full, "whole"))
    # The same resources and objects as the stack said in full (the stack's name aside).
    plan = json.loads(shard.files["plan.json"].replace("east-1", "whole"))
    assert plan == json.loads(whole.files["plan.json"])
    assert {k: v for k, v in shard.files.items() if k.startswith("manifests/")} == {
        k: v for k, v in whole.files.items() if k.startswith("manifests/")
    }


def test_the_program_is_handed_the_stack_files_own_keys(tmp_path: Path) -> None:
    # As `pulumi up` hands them: the program reads the environment itself.
    _project(tmp_path)
    prepared = preparation.prepare(tmp_path, "east-2")
    assert sorted(prepared.config) == [
        f"{PREFIX}clusterSecrets",
        f"{PREFIX}declarationsDir",
        f"{PREFIX}environment",
        f"{PREFIX}selector",
    ]
    assert [g.name for g in prepared.loaded.gateways] == ["team-b"]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            {"env": {"clusters": CLUSTERS, "selector": {}}},
            "error: environments/east.yaml:13:1: selector: a stack's own key: each stack"
            " selects its own gateways",
        ),
        (
            {"env": {"clusters": CLUSTERS, "clusterz": {}}},
            "error: environments/east.yaml:13:1: clusterz: unknown key; did you mean 'clusters'?",
        ),
        (
            {"stack": {f"{PREFIX}clusters": CLUSTERS}},
            "error: Pulumi.east-1.yaml:10:3: hypershell-gateways:clusters: also set in"
            " environments/east.yaml: an environment's key is said once, there",
        ),
        (
            {"env": {"clusters": CLUSTERS, "production": True}},
            "error: environments/east.yaml:13:1: production: a stack's own key: a scalar key"
            " Pulumi.yaml types, which the CLI requires of, or defaults in, every stack's own"
            " config",
        ),
        (
            {"stack": {f"{PREFIX}environment": "west"}},
            "error: Pulumi.east-1.yaml:2:36: hypershell-gateways:environment: no"
            " environments/west.yaml: the environment's file is missing",
        ),
        (
            {"stack": {f"{PREFIX}environment": "West_1"}},
            "error: Pulumi.east-1.yaml:2:36: hypershell-gateways:environment: 'West_1' is not an"
            " environment name (a DNS-1123 label)",
        ),
        (
            {"env": {"clusters": {"c1": cluster(baseDomain="Not A Domain")}}},
            "error: environments/east.yaml:8:17: clusters.c1.baseDomain: base domain"
            " 'Not A Domain'",
        ),
    ],
)
def test_problems_name_the_file_and_key_that_hold_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: dict[str, Any], expected: str
) -> None:
    _project(tmp_path)
    if "env" in change:
        _environment(tmp_path, change["env"])
    if "stack" in change:
        _shard(tmp_path, "east-1", "1", **change["stack"])
    code, _, err = _run(capsys, tmp_path, "validate", "east-1")
    assert code == 2
    assert err.splitlines()[0].startswith(expected), err


def test_promote_points_at_the_environment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _project(tmp_path)
    code, _, err = _run(capsys, tmp_path, "promote", "anything", "--to", "east-1")
    assert code == 2
    assert err.splitlines()[0] == (
        "error: Pulumi.east-1.yaml:2:36: hypershell-gateways:environment: the clusters of stack"
        " 'east-1' are in environments/east.yaml, shared by every stack of the environment: bind"
        " the release there (clusters.<cluster>.release), one change for all of them; promote"
        " edits a stack file's own clusters"
    )

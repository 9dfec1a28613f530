"""Shards, for real (issue 39 point 4): two stacks of one cluster reading one inventory by a
label, and a gateway moved from one to the other with the state move ``gatewayctl move``
prints, keeping its tenant: no object of it is deleted, created or replaced, in the cluster or
in PostgreSQL, and each stack's next ``up`` finds it where its program declares it.

The stacks are made from the committed ``local`` stack (its cluster, pointed at the lane's API
server and PostgreSQL by ``make_project``), as the shards of one environment: the cluster said
once in ``environments/e2e-shards.yaml``, which the program reads under the real engine, each
stack file holding its inventory, selector and secrets. Their three gateways sign
no one in (``signIn: none``), so that nothing here depends on the Keycloak realms other files
set up.

Found when the postgresql stand-in put every resource in the state: the CLI refused the state
move while the gateway's database owner's provider was a child of its Database component (a
provider never moves, and one left under a moved parent fails the snapshot's integrity check);
the program now keeps it a child of the stack (components/database.py), and this test moves it.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from e2e.cluster import Cluster
from e2e.engine import Engine, Result
from e2e.project import E2EProject, make_project
from gatewayctl.cli import main as cli
from tests.e2e.lane import figure, pulumi

SOURCE, DEST = "e2e-shard-a", "e2e-shard-b"
# The one provider of the gateway's own: it stays in the source (providers never move), with
# the dependencies on the moved Role and Database the CLI breaks and prints.
OWNER_PROVIDER_LEFT = "pulumi:providers:postgresql::shard-x-database-db-owner has a dependency on"
INVENTORY = "inventory"
PROJECT = "hypershell-gateways"
SELECTOR = f"{PROJECT}:selector"
ENVIRONMENT = "e2e-shards"
MOVED = "shard-x"
SHARDS = {"shard-x": "a", "shard-y": "a", "shard-z": "b"}


def _declaration(name: str, shard: str) -> dict[str, Any]:
    return {
        "apiVersion": "hypershell.redhat.io/v1alpha1",
        "kind": "Gateway",
        "metadata": {"name": name, "labels": {"shard": shard}},
        "spec": {
            "cluster": "kind",
            "exposure": {"enabled": False},
            "signIn": "none",
            "deletionPolicy": "Retain",
        },
    }


def _label(root: Path, name: str, shard: str) -> None:
    path = root / INVENTORY / f"{name}.yaml"
    path.write_text(yaml.safe_dump(_declaration(name, shard), sort_keys=False))


def _commit(root: Path, message: str) -> None:
    git = ["git", "-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid"]
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", message], cwd=root, check=True)


@pytest.fixture(scope="module")
def shards(workdir: Path, cluster: Cluster) -> tuple[E2EProject, E2EProject]:
    """One project directory holding both stacks (a state move is between stacks of one
    project) of one environment, reading ``inventory/`` by the label ``shard``."""
    source = make_project(
        workdir / "projects", stack=SOURCE, source="local", context=cluster.context(), gateways=[]
    )
    # What the shards share said once (gatewayctl.inputs.environment): the cluster, as
    # make_project pointed it at this machine. Each stack file keeps its own: the
    # environment's name, the inventory, its selector and its secrets.
    config = yaml.safe_load(source.config_file.read_text())["config"]
    shared = {"clusters": config.pop(f"{PROJECT}:clusters")}
    config[f"{PROJECT}:declarationsDir"] = INVENTORY
    environments = source.root / "environments"
    environments.mkdir()
    (environments / f"{ENVIRONMENT}.yaml").write_text(yaml.safe_dump(shared, sort_keys=False))
    for stack, shard in ((SOURCE, "a"), (DEST, "b")):
        own = {
            **config,
            f"{PROJECT}:environment": ENVIRONMENT,
            SELECTOR: {"matchLabels": {"shard": shard}},
        }
        path = source.root / f"Pulumi.{stack}.yaml"
        path.write_text(yaml.safe_dump({"config": own}, sort_keys=False))
    (source.root / INVENTORY).mkdir()
    for name, shard in SHARDS.items():
        _label(source.root, name, shard)
    _commit(source.root, "two shards")
    return source, E2EProject(source.root, DEST)


def _steps(result: Result) -> Counter[tuple[str, str]]:
    """(op, type) of every step of a ``preview --json``."""
    return Counter(
        (s["op"], s["urn"].split("::")[2].split("$")[-1]) for s in result.json()["steps"]
    )


def _tenant(cluster: Cluster, namespace: str) -> dict[str, Any]:
    """What must survive the move: the objects' identities (uid) and the Secrets' values."""
    return {
        "namespace": cluster.get("namespace", namespace)["metadata"]["uid"],
        "deployment": cluster.get("deployment", "openshell-gateway", namespace)["metadata"]["uid"],
        "server-tls": cluster.get("secret", "openshell-server-tls", namespace)["data"],
        "db-credentials": cluster.get("secret", "openshell-gateway-db-credentials", namespace)[
            "data"
        ],
    }


def test_a_gateway_moves_between_shards_keeping_its_tenant(
    engine: Engine,
    cluster: Cluster,
    kube_env: dict[str, str],
    shards: tuple[E2EProject, E2EProject],
) -> None:
    source, dest = shards
    for project in (source, dest):
        engine.run(
            ["stack", "init", project.stack, "--cwd", str(project.root)],
            cwd=project.root,
            env=kube_env,
        )
        pulumi(engine, project, kube_env, "up", "--yes", "--skip-preview")
    namespace = f"openshell-{MOVED}"
    before = _tenant(cluster, namespace)

    # The pull request relabels the gateway for the other shard; `move` checks it and prints
    # the state move.
    _label(source.root, MOVED, "b")
    _commit(source.root, f"move {MOVED} to shard b")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main(
            [
                "--root",
                str(source.root),
                "move",
                MOVED,
                "--from",
                SOURCE,
                "--to",
                DEST,
                "-o",
                "json",
            ]
        )
    assert code == 0
    plan = json.loads(out.getvalue())
    state_move = plan["commands"][0].split()
    assert state_move[:3] == ["pulumi", "state", "move"]
    urn = state_move[-1].strip("'")
    assert urn == f"urn:pulumi:{SOURCE}::hypershell-gateways::hypershell:gateway:Gateway::{MOVED}"
    moved = engine.run(
        [
            "state",
            "move",
            "--source",
            SOURCE,
            "--dest",
            DEST,
            "--yes",
            urn,
            "--cwd",
            str(source.root),
        ],
        cwd=source.root,
        env=kube_env,
        check=False,
    )
    assert moved.returncode == 0, moved.stdout[-3000:] + moved.stderr[-2000:]
    # Outside the gateway's subtree, the owner's provider is left in the source (and copied
    # into the destination): before components/database.py moved it, this move stopped with
    # "snapshot integrity error" (it stayed in the source under its moved parent).
    assert OWNER_PROVIDER_LEFT in moved.stdout, moved.stdout[-3000:]

    # Neither stack deletes, creates, replaces or updates anything of the tenant: the
    # destination holds the gateway as its program declares it, the source no longer holds
    # it. Only provider resources may go: the copies the move made or left behind (a copy is
    # re-parented to the stack, so it is not the provider the program declares; a provider
    # owns nothing in the cluster).
    changed: dict[str, list[str]] = {}
    for project in (dest, source):
        steps = pulumi(engine, project, kube_env, "preview", "--json").json()["steps"]
        changed[project.stack] = sorted(f"{s['op']} {s['urn']}" for s in steps if s["op"] != "same")
        for step in steps:
            if step["op"] != "same":
                kind = step["urn"].split("::")[2].split("$")[-1]
                assert step["op"] == "delete" and kind.startswith("pulumi:providers:"), changed
    # The destination declares the owner's provider under the URN the move copied it to; the
    # source deletes its own, which nothing uses any more. Nothing else of the gateway moves.
    assert not any(MOVED in line for line in changed[DEST]), changed
    owner = (
        f"urn:pulumi:{SOURCE}::{PROJECT}::pulumi:providers:postgresql::{MOVED}-database-db-owner"
    )
    assert [line for line in changed[SOURCE] if MOVED in line] == [f"delete {owner}"], changed
    for project in (source, dest):
        pulumi(engine, project, kube_env, "up", "--yes", "--skip-preview")
    assert _tenant(cluster, namespace) == before
    for project in (source, dest):
        again = pulumi(engine, project, kube_env, "preview", "--expect-no-changes", check=False)
        assert again.returncode == 0, again.stdout[-3000:]
    figure(
        f"shards: {MOVED} moved {SOURCE} -> {DEST} by one state move; the previews' only steps"
        f" besides same: {DEST} {len(changed[DEST])}, {SOURCE} {len(changed[SOURCE])}, each the"
        " delete of a provider (a copy, or the source's own database owner's);"
        " the tenant's namespace, Deployment and Secrets unchanged"
    )


def test_a_stack_written_with_the_owner_provider_under_its_database_keeps_it(
    engine: Engine,
    kube_env: dict[str, str],
    shards: tuple[E2EProject, E2EProject],
    tmp_path: Path,
) -> None:
    """The alias of components/database.py, for real: the destination's state (after the move
    above) made as the program wrote it before the owner's provider left the gateway's
    subtree (its URN and parent under the Database component, the revoke Grant's provider
    reference with it), imported, then previewed: the engine matches the alias, and nothing
    is created, replaced or deleted."""
    _, dest = shards
    exported = tmp_path / "state.json"
    pulumi(engine, dest, kube_env, "stack", "export", "--file", str(exported), program=False)
    state = json.loads(exported.read_text())
    resources = state["deployment"]["resources"]
    prefix = f"urn:pulumi:{DEST}::{PROJECT}::"
    renamed: dict[str, str] = {}
    for res in resources:
        if res["type"] == "pulumi:providers:postgresql" and res["urn"].endswith("-db-owner"):
            name = res["urn"].rsplit("::", 1)[1]
            database = name.removesuffix("-db-owner")
            old = (
                f"{prefix}hypershell:gateway:Gateway$hypershell:gateway:Database"
                f"$pulumi:providers:postgresql::{name}"
            )
            renamed[f"{res['urn']}::{res['id']}"] = f"{old}::{res['id']}"
            res["urn"] = old
            res["parent"] = (
                f"{prefix}hypershell:gateway:Gateway$hypershell:gateway:Database::{database}"
            )
    assert len(renamed) == 2, sorted(renamed)  # shard-x (moved here) and shard-z
    grants = [res for res in resources if res.get("provider") in renamed]
    assert len(grants) == 2 and {g["type"] for g in grants} == {"postgresql:index/grant:Grant"}
    for grant in grants:
        grant["provider"] = renamed[grant["provider"]]
    exported.write_text(json.dumps(state))
    pulumi(engine, dest, kube_env, "stack", "import", "--file", str(exported), program=False)

    preview = pulumi(engine, dest, kube_env, "preview", "--json")
    steps = preview.json()["steps"]
    assert {s["op"] for s in steps} == {"same"}, sorted(
        f"{s['op']} {s['urn']}" for s in steps if s["op"] != "same"
    )
    # (A provider that stays the same is no step of a preview's JSON: the state says it.)
    owners = {
        f"{prefix}pulumi:providers:postgresql::{g}-database-db-owner"
        for g in ("shard-x", "shard-z")
    }
    pulumi(engine, dest, kube_env, "up", "--yes", "--skip-preview")
    pulumi(engine, dest, kube_env, "stack", "export", "--file", str(exported), program=False)
    urns = {res["urn"] for res in json.loads(exported.read_text())["deployment"]["resources"]}
    assert not any(old.rsplit("::", 1)[0] in urns for old in renamed.values())
    assert owners <= urns
    figure(
        f"shards: {DEST}'s state with the owner providers under their Database components (as"
        " written before they left the gateway's subtree) previews no change (without the alias:"
        " a create and a delete of each); after an up the state holds them under their new URNs"
    )

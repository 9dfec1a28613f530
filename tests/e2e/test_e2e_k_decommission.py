"""A tenant removed by deleting its declaration, for real (issue 45 item 2,
docs/decommissioning.md): the next ``up`` deletes the gateway's KEK Secret from the API server
and keeps its PostgreSQL database and role under ``deletionPolicy: Retain``, owned by the role
as before, while a gateway removed in the same change under ``Delete`` loses both; the
gateway that stays keeps its key. What the offline diff said of the same removal (the risks,
and the refusal of the retained database's lost key) is checked against it.

A stack of its own (``e2e-decommission``, made from the committed ``local`` stack by
``make_project``, its own PostgreSQL server): its gateways sign no one in and are not exposed,
so nothing here depends on the Keycloak realms or the routes of the other files.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import psycopg
import pytest

from components import naming
from e2e.cluster import Cluster, KubectlError
from e2e.engine import Engine
from e2e.project import E2EProject, make_project
from gatewayctl.diff.compare import compare
from gatewayctl.diff.sides import Side
from tests.e2e.databases import LaneDatabases
from tests.e2e.lane import figure, pulumi, refresh_changes_nothing, rendered

STACK = "e2e-decommission"
KEEP, RETAINED, DROPPED = "stays", "gone-retain", "gone-delete"
POLICIES = {KEEP: "Retain", RETAINED: "Retain", DROPPED: "Delete"}


def _declaration(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "hypershell.redhat.io/v1alpha1",
        "kind": "Gateway",
        "metadata": {"name": name},
        "spec": {
            "cluster": "kind",
            "exposure": {"enabled": False},
            "signIn": "none",
            "deletionPolicy": POLICIES[name],
        },
    }


def _commit(project: E2EProject, message: str) -> None:
    git = ["git", "-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid"]
    subprocess.run([*git, "add", "-A"], cwd=project.root, check=True)
    subprocess.run([*git, "commit", "-qm", message], cwd=project.root, check=True)


def _kek(cluster: Cluster, gateway: str) -> str | None:
    """The KEK Secret's key, or None when the API server has no such Secret."""
    try:
        secret = cluster.get("secret", naming.KEK_SECRET, namespace=f"openshell-{gateway}")
    except KubectlError as error:
        assert "NotFound" in str(error) or "not found" in str(error), error
        return None
    return str(secret["data"]["key-encryption-key"])


def _tenants(databases: LaneDatabases) -> tuple[dict[str, str], set[str]]:
    """Tenant database -> its owner, and the tenant roles, on the stack's server."""
    with databases.by_stack[STACK].superuser() as su:
        rows = su.execute(
            "SELECT datname, pg_get_userbyid(datdba) FROM pg_database WHERE datname LIKE 'gw\\_%'"
        ).fetchall()
        roles = su.execute("SELECT rolname FROM pg_roles WHERE rolname LIKE 'gw\\_%'").fetchall()
    return {str(d): str(o) for d, o in rows}, {str(r[0]) for r in roles}


@pytest.fixture(scope="module")
def project(workdir: Path, cluster: Cluster) -> E2EProject:
    made = make_project(
        workdir / "projects", stack=STACK, source="local", context=cluster.context(), gateways=[]
    )
    for name in POLICIES:
        made.write_declaration(name, _declaration(name))
    _commit(made, "three tenants")
    return made


def test_a_removed_tenant_keeps_its_retained_database_and_loses_its_key(
    engine: Engine,
    cluster: Cluster,
    kube_env: dict[str, str],
    databases: LaneDatabases,
    project: E2EProject,
) -> None:
    engine.run(["stack", "init", STACK, "--cwd", str(project.root)], cwd=project.root, env=kube_env)
    pulumi(engine, project, kube_env, "up", "--yes", "--skip-preview")
    keys = {name: _kek(cluster, name) for name in POLICIES}
    assert all(keys.values()), keys
    databases_before, roles_before = _tenants(databases)
    owned = {naming.postgres_identifier(n): naming.postgres_identifier(n) for n in POLICIES}
    assert databases_before == owned
    assert roles_before == set(owned)
    with databases.by_stack[STACK].superuser(naming.postgres_identifier(RETAINED)) as su:
        su.execute("CREATE TABLE kept (note text)")
        su.execute("INSERT INTO kept VALUES ('written before the removal')")
    base = Side(files=rendered(project).files)

    # The pull request: both declarations deleted in one commit.
    for name in (RETAINED, DROPPED):
        (project.declarations / f"{name}.yaml").unlink()
    _commit(project, "decommission two tenants")
    diff = compare(STACK, base, Side(files=rendered(project).files))
    # What the report said: the retained database's only key is lost (refused unless
    # recorded); the dropped one's goes by declaration.
    assert diff.key_only_copies == (RETAINED,)
    assert (
        f"gateway `{RETAINED}` is removed: its PostgreSQL database `gw_gone_retain` and its role"
        " stay on the server (deletionPolicy Retain), managed by no stack: export or drop them"
        " by hand"
    ) in diff.left_behind
    assert any("drops its PostgreSQL database `gw_gone_delete`" in x for x in diff.data_loss)

    pulumi(engine, project, kube_env, "up", "--yes", "--skip-preview")

    # The KEK Secrets of both removed tenants are gone from the API server (the engine deletes
    # each Secret, whatever the namespace's own deletion still has to do); the kept one's key
    # is the same.
    assert {name: _kek(cluster, name) for name in POLICIES} == {
        KEEP: keys[KEEP],
        RETAINED: None,
        DROPPED: None,
    }
    # Retain: database and role stay, the database still the role's, its rows still there;
    # Delete: both dropped.
    databases_after, roles_after = _tenants(databases)
    assert databases_after == {"gw_stays": "gw_stays", "gw_gone_retain": "gw_gone_retain"}
    assert roles_after == {"gw_stays", "gw_gone_retain"}
    with databases.by_stack[STACK].superuser("gw_gone_retain") as su:
        rows = su.execute("SELECT note FROM kept").fetchall()
    assert rows == [("written before the removal",)]
    with pytest.raises(psycopg.OperationalError):
        databases.by_stack[STACK].superuser("gw_gone_delete").close()
    refresh_changes_nothing(engine, project, kube_env)
    figure(
        f"{STACK}: {RETAINED} (Retain) and {DROPPED} (Delete) removed by one up: both KEK"
        f" Secrets gone from the API server; gw_gone_retain and its role kept with their rows,"
        " gw_gone_delete and its role dropped; the kept gateway's key unchanged"
    )

"""PostgreSQL under the real engine: the program's roles, databases and grants made by the
postgresql stand-in plugin (``e2e/providers/postgresql.py``, the provider's SQL) on each
project's own PostgreSQL 18, reached as the program configures it: ``adminHost``/``adminPort``
the lane's TLS front, ``sslmode=verify-full`` with the lane CA as ``sslRootCert``
(tests/e2e/databases.py).

Checked after the stacks' ``up``: the state holds every Role, Database and Grant with its
provider, and the server holds them as declared; tenant isolation through the program's own
grants; a refresh reads them all unchanged, and reads drift; the database password rotated by
the documented command (docs/running.md: ``pulumi up --replace`` of the gateway's
``-db-password``) really changes the password. Deletion policies on ``destroy``:
test_e2e_z_teardown.py.
"""

from __future__ import annotations

import base64
import json
import urllib.parse
from collections import Counter
from typing import Any

import pytest

from components import naming
from e2e.engine import Engine
from e2e.project import DATABASE_CA, E2EProject
from tests.e2e.conftest import E2E_STACKS
from tests.e2e.databases import LaneDatabases
from tests.e2e.lane import (
    Deployed,
    export,
    figure,
    manifests,
    pulumi,
    refresh_changes_nothing,
    rendered,
    up_summary,
)

STACKS = sorted(E2E_STACKS)
ROLE = "postgresql:index/role:Role"
DATABASE = "postgresql:index/database:Database"
GRANT = "postgresql:index/grant:Grant"
PROVIDER = "pulumi:providers:postgresql"


def _plan(project: E2EProject) -> list[dict[str, Any]]:
    resources: list[dict[str, Any]] = json.loads(rendered(project).files["plan.json"])["resources"]
    return resources


def _state(engine: Engine, project: E2EProject, env: dict[str, str]) -> list[dict[str, Any]]:
    resources: list[dict[str, Any]] = export(engine, project, env)["deployment"]["resources"]
    return resources


def credentials(cluster: Any, project: E2EProject) -> dict[str, dict[str, str]]:
    """Each tenant's ``openshell-gateway-db-credentials`` Secret as it is live, by its user."""
    found = {}
    for _, obj in manifests(rendered(project)):
        if obj["kind"] == "Secret" and obj["metadata"]["name"] == naming.DB_SECRET:
            live = cluster.get("secret", naming.DB_SECRET, namespace=obj["metadata"]["namespace"])
            data = {k: base64.b64decode(v).decode() for k, v in live["data"].items()}
            data["namespace"] = obj["metadata"]["namespace"]
            found[data["user"]] = data
    return found


def login(databases: LaneDatabases, project: E2EProject, user: str, password: str, db: str) -> str:
    return databases.by_stack[project.stack].login(project.root / DATABASE_CA, user, password, db)


def assert_password_rotated(
    databases: LaneDatabases,
    project: E2EProject,
    before: dict[str, str],
    after: dict[str, str],
) -> None:
    """gw_dev's credentials Secret changed its password and nothing else but the URI that holds
    it, the server refuses the old password and accepts the new one."""
    assert after["password"] != before["password"]
    assert {k: after[k] for k in ("user", "dbname", "host", "port")} == {
        k: before[k] for k in ("user", "dbname", "host", "port")
    }
    assert urllib.parse.quote(after["password"], safe="") in after["uri"]
    assert (
        login(databases, project, "gw_dev", before["password"], "gw_dev")
        == "password authentication failed"
    )
    assert login(databases, project, "gw_dev", after["password"], "gw_dev") == "gw_dev@gw_dev"


@pytest.mark.parametrize("stack", STACKS)
def test_roles_databases_and_grants_are_in_the_state_and_on_the_server(
    deployed: dict[str, Deployed],
    databases: LaneDatabases,
    engine: Engine,
    kube_env: dict[str, str],
    stack: str,
) -> None:
    project = deployed[stack].project
    plan = _plan(project)
    declared = {r["inputs"]["name"]: r for r in plan if r["type"] == ROLE}
    state = _state(engine, project, kube_env)
    counts = Counter(r["type"] for r in state if "postgresql" in r["type"])
    clusters = sum(1 for r in plan if r["type"] == PROVIDER) - len(declared)
    assert counts == {
        ROLE: len(declared),
        DATABASE: len(declared),
        GRANT: len(declared),
        PROVIDER: clusters + len(declared),
    }
    by_urn = {r["urn"]: r for r in state}
    for resource in state:
        if resource["type"] == GRANT:
            # through the owner's provider: the tenant role on its own database
            provider = by_urn[resource["provider"].rsplit("::", 1)[0]]
            assert provider["urn"].endswith("-db-owner")
            assert provider["inputs"]["username"] == resource["inputs"]["database"]
            assert resource["outputs"]["privileges"] == []
        if resource["type"] in (ROLE, DATABASE):
            name = resource["outputs"]["name"]
            assert resource["id"] == name
            assert bool(resource.get("retainOnDelete")) == declared[name]["retainOnDelete"]
    with databases.by_stack[stack].superuser() as su:
        roles = su.execute(
            "SELECT rolname, rolcanlogin, rolsuper, rolcreatedb, rolcreaterole, rolinherit"
            " FROM pg_roles WHERE rolname LIKE 'gw\\_%'"
        ).fetchall()
        owners = su.execute(
            "SELECT datname, pg_get_userbyid(datdba) FROM pg_database WHERE datname LIKE 'gw\\_%'"
        ).fetchall()
    assert {r[0]: r[1:] for r in roles} == {
        name: (True, False, False, False, True) for name in declared
    }
    assert dict(owners) == {name: name for name in declared}
    figure(
        f"{stack}: {len(declared)} roles, databases and grants made by the postgresql stand-in"
        f" through {clusters + len(declared)} providers (verify-full)"
    )


@pytest.mark.parametrize("stack", STACKS)
def test_each_tenant_reaches_its_own_database_and_no_other(
    deployed: dict[str, Deployed], databases: LaneDatabases, cluster: Any, stack: str
) -> None:
    project = deployed[stack].project
    tenants = credentials(cluster, project)
    assert tenants
    for user, secret in tenants.items():
        assert secret["dbname"] == user  # gw_<name>: role and database
        for other in tenants:
            expected = f"{user}@{other}" if other == user else "permission denied for database"
            assert login(databases, project, user, secret["password"], other) == expected
    with databases.by_stack[stack].superuser() as su:
        public = su.execute(
            "SELECT datname, count(a.privilege_type) FROM pg_database"
            " LEFT JOIN LATERAL aclexplode(COALESCE(datacl, acldefault('d', datdba))) a"
            " ON a.grantee = 0 WHERE datname LIKE 'gw\\_%' GROUP BY datname"
        ).fetchall()
    # PUBLIC holds nothing on a tenant database: the default CONNECT and TEMPORARY are revoked
    assert dict(public) == {user: 0 for user in tenants}


def test_refresh_reads_the_postgresql_resources_and_their_drift(
    deployed: dict[str, Deployed],
    databases: LaneDatabases,
    engine: Engine,
    kube_env: dict[str, str],
) -> None:
    project = deployed["e2e-local"].project
    state = _state(engine, project, kube_env)
    targets = [f"--target={r['urn']}" for r in state if r["type"] in (ROLE, DATABASE, GRANT)]
    assert len(targets) >= 9

    def refresh(*extra: str) -> Any:
        return pulumi(
            engine,
            project,
            kube_env,
            "refresh",
            "--yes",
            *extra,
            *targets,
            program=False,
            check=False,
        )

    unchanged = refresh("--expect-no-changes")
    assert unchanged.returncode == 0, unchanged.stdout[-3000:]
    # Drift: PUBLIC given CONNECT on a tenant database behind Pulumi's back.
    grant = next(r for r in state if r["type"] == GRANT)
    database = grant["inputs"]["database"]
    with databases.by_stack[project.stack].superuser() as su:
        su.execute(f'GRANT CONNECT ON DATABASE "{database}" TO PUBLIC')
    drifted = refresh("--expect-no-changes")
    assert drifted.returncode != 0
    assert refresh().returncode == 0  # the drift into the state
    read = next(r for r in _state(engine, project, kube_env) if r["urn"] == grant["urn"])
    assert read["outputs"]["privileges"] == ["CONNECT"]
    up = pulumi(engine, project, kube_env, "up", "--yes", "--skip-preview", "--json")
    assert up_summary(up).get("update") == 1, up_summary(up)
    with databases.by_stack[project.stack].superuser() as su:
        (acl,) = su.execute(
            "SELECT count(*) FROM pg_database, aclexplode(datacl) a"
            " WHERE datname = %s AND a.grantee = 0",
            [database],
        ).fetchone() or (None,)
    assert acl == 0
    assert refresh("--expect-no-changes").returncode == 0


def test_db_password_rotation_by_the_documented_command(
    deployed: dict[str, Deployed],
    databases: LaneDatabases,
    engine: Engine,
    cluster: Any,
    kube_env: dict[str, str],
) -> None:
    """docs/running.md: ``pulumi up --replace`` of the gateway's ``-db-password``."""
    project = deployed["e2e-local"].project
    state = _state(engine, project, kube_env)
    (password,) = [r["urn"] for r in state if r["urn"].endswith("::dev-database-db-password")]
    before = credentials(cluster, project)["gw_dev"]
    up = pulumi(
        engine,
        project,
        kube_env,
        "up",
        "--yes",
        "--skip-preview",
        "--json",
        f"--replace={password}",
    )
    summary = up_summary(up)
    assert summary.get("replace") == 1, summary
    after = credentials(cluster, project)["gw_dev"]
    assert_password_rotated(databases, project, before, after)
    # The owner's provider logs in with the new password: its Grant still reads.
    refresh_changes_nothing(engine, project, kube_env)
    figure(f"e2e-local: db password rotated with up --replace: {summary}")

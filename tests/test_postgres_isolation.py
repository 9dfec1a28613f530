"""Tenant isolation on a real PostgreSQL 18 server, with a non-superuser admin.

Each stack is rendered offline (the same code as ``render``) and its plan.json replayed on a
throwaway server (the ``postgres`` fixture): the SQL pulumi-postgresql issues for every
``postgresql:`` resource, each statement as the user of the provider the resource names.
tests/pg_replay.py replays them with the statements of e2e/providers/pgsql.py (shared with
the lane's stand-in provider), each function citing the terraform-provider-postgresql
function it follows (resource_postgresql_role.go, resource_postgresql_database.go,
resource_postgresql_grant.go, helpers.go).

The admin is what RDS and IBM Cloud Databases hand out: LOGIN CREATEROLE CREATEDB, not a
superuser. One server stands for every cluster of a stack (aws has two), which is stricter
than production: tenants of different clusters must not reach each other either.

The server has no TLS (the wheel is built without it): sslmode is the policy tests' concern.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from typing import Any

import psycopg
import pytest
from psycopg import sql

from tests.pg_replay import DATABASE, GRANT, PROVIDER, ROLE, Replay
from tests.pg_server import SUPERUSER, Server
from tests.support import STACKS, rendered

ADMIN_ATTRIBUTES = "LOGIN CREATEROLE CREATEDB"
"""The admin's attributes: not SUPERUSER."""
REVOKE = "REVOKE ALL PRIVILEGES ON DATABASE"
SYSTEM_DATABASES = ("postgres", "template0", "template1")


# --- set-up ---------------------------------------------------------------------------------


def plan_of(stack: str, *, revoke_as_admin: bool = False) -> dict[str, Any]:
    """The stack's rendered plan.json; ``revoke_as_admin`` puts each Grant back on the
    cluster's admin provider, as the program did before the owner provider."""
    plan: dict[str, Any] = json.loads(rendered(stack).files["plan.json"])
    if revoke_as_admin:
        admin_of = {
            r["inputs"]["name"]: r["provider"] for r in plan["resources"] if r["type"] == DATABASE
        }
        for grant in plan["resources"]:
            if grant["type"] == GRANT:
                grant["provider"] = admin_of[grant["inputs"]["database"]]
    return plan


def reset(server: Server) -> None:
    """Back to a fresh cluster: only the system databases and the bootstrap superuser."""
    with server.superuser() as su:
        for (name,) in su.execute(
            "SELECT datname FROM pg_database WHERE NOT datname = ANY(%s)", [list(SYSTEM_DATABASES)]
        ).fetchall():
            su.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))
        roles = [
            name
            for (name,) in su.execute(
                "SELECT rolname FROM pg_roles WHERE rolname !~ '^pg_' AND rolname <> current_user"
            ).fetchall()
        ]
        for name in roles:
            su.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(name)))
        for name in roles:
            su.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(name)))


def admins(plan: Mapping[str, Any]) -> list[str]:
    """Login names of the providers the Roles name (the clusters' admin providers)."""
    by_name = {r["name"]: r for r in plan["resources"] if r["type"] == PROVIDER}
    return sorted(
        {
            by_name[r["provider"].rsplit("::", 1)[1]]["inputs"]["username"]
            for r in plan["resources"]
            if r["type"] == ROLE
        }
    )


def tenants(plan: Mapping[str, Any]) -> dict[str, str]:
    """Tenant database by tenant role (the Databases' owners)."""
    return {
        r["inputs"]["owner"]: r["inputs"]["name"]
        for r in plan["resources"]
        if r["type"] == DATABASE
    }


def deploy(server: Server, plan: dict[str, Any]) -> Replay:
    """A fresh cluster with the admins, then ``pulumi up`` of the plan's PostgreSQL part."""
    reset(server)
    names = admins(plan) + sorted(tenants(plan))
    assert len(names) == len(set(names))
    # plan.json holds placeholders for passwords: one per role, used for the Role and for
    # every provider that logs in as it.
    passwords = {name: secrets.token_hex(20) for name in names}
    with server.superuser() as su:
        for admin in admins(plan):
            su.execute(
                sql.SQL("CREATE ROLE {} " + ADMIN_ATTRIBUTES + " PASSWORD {}").format(
                    sql.Identifier(admin), sql.Literal(passwords[admin])
                )
            )
    replay = Replay(server, plan, passwords)
    replay.up()
    return replay


@pytest.fixture(scope="class", params=STACKS)
def deployed(request: pytest.FixtureRequest, postgres: Server) -> Replay:
    """One deployment per stack for the checks that only look (class ``TestDeployed``)."""
    return deploy(postgres, plan_of(request.param))


@pytest.fixture(params=STACKS)
def fresh(request: pytest.FixtureRequest, postgres: Server) -> Replay:
    """A deployment of its own, for a test that changes the server."""
    return deploy(postgres, plan_of(request.param))


# --- observations ---------------------------------------------------------------------------


def login(server: Server, user: str, password: str, database: str) -> str:
    """``user@database`` as the server reports the session, or the connection error."""
    try:
        with server.connect(user, password, database) as conn:
            ((who, where),) = conn.execute("SELECT current_user, current_database()").fetchall()
            return f"{who}@{where}"
    except psycopg.OperationalError as error:
        return str(error)


def refused(server: Server, database: str) -> str:
    return (
        f'connection failed: connection to server at "127.0.0.1", port {server.port} failed:'
        f' FATAL:  permission denied for database "{database}"\n'
        "DETAIL:  User does not have CONNECT privilege."
    )


def acl(server: Server) -> dict[str, list[tuple[str, str, str]]]:
    """(grantee, grantor, privilege) of every database but the system ones. A NULL datacl
    means the default ACL, in which PUBLIC has CONNECT and TEMPORARY: acldefault spells it
    out, so a database whose ACL was never touched does not pass as closed."""
    with server.superuser() as su:
        rows = su.execute(
            "SELECT d.datname,"
            " CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE a.grantee::regrole::text END,"
            " a.grantor::regrole::text, a.privilege_type"
            " FROM pg_database d,"
            " aclexplode(coalesce(d.datacl, acldefault('d', d.datdba))) a"
            " WHERE NOT d.datname = ANY(%s) ORDER BY 1, 2, 3, 4",
            [list(SYSTEM_DATABASES)],
        ).fetchall()
    found: dict[str, list[tuple[str, str, str]]] = {}
    for database, grantee, grantor, privilege in rows:
        found.setdefault(database, []).append((grantee, grantor, privilege))
    return found


def owner_only(database_owners: dict[str, str]) -> dict[str, list[tuple[str, str, str]]]:
    """The ACL of a database only its owner may use: CONNECT, CREATE, TEMPORARY."""
    return {
        database: [(owner, owner, p) for p in ("CONNECT", "CREATE", "TEMPORARY")]
        for owner, database in database_owners.items()
    }


def memberships(server: Server) -> list[tuple[str, str, str, bool, bool, bool]]:
    """(role, member, grantor, admin, inherit, set) of every membership but the built-in."""
    with server.superuser() as su:
        return su.execute(
            "SELECT roleid::regrole::text, member::regrole::text, grantor::regrole::text,"
            " admin_option, inherit_option, set_option FROM pg_auth_members"
            " WHERE roleid::regrole::text !~ '^pg_' ORDER BY 1, 2, 3"
        ).fetchall()


def catalog(server: Server) -> dict[str, list[tuple[Any, ...]]]:
    """Everything a replay could change: roles (with password hashes), databases and their
    ACLs, memberships, per-role settings."""
    with server.superuser() as su:
        return {
            "roles": su.execute(
                "SELECT rolname, rolsuper, rolinherit, rolcreaterole, rolcreatedb, rolcanlogin,"
                " rolreplication, rolbypassrls, rolconnlimit, rolpassword, rolvaliduntil::text"
                " FROM pg_authid WHERE rolname !~ '^pg_' ORDER BY 1"
            ).fetchall(),
            "databases": su.execute(
                "SELECT datname, datdba::regrole::text, datacl::text[], datallowconn,"
                " datconnlimit, datistemplate FROM pg_database ORDER BY 1"
            ).fetchall(),
            "memberships": memberships(server),
            "settings": su.execute(
                "SELECT setdatabase, setrole::regrole::text, setconfig FROM pg_db_role_setting"
                " ORDER BY 1, 2"
            ).fetchall(),
        }


def declared(plan: Mapping[str, Any]) -> dict[str, Any]:
    """What Pulumi holds after ``up`` for each resource: the declared inputs with the
    provider's schema defaults, and the computed database attributes this server gives."""
    state: dict[str, Any] = {}
    for resource in plan["resources"]:
        inputs = resource["inputs"]
        if resource["type"] == ROLE:
            state[resource["name"]] = Replay.declared_role(resource)
        elif resource["type"] == DATABASE:
            state[resource["name"]] = {
                "name": inputs["name"],
                "owner": inputs["owner"],
                "encoding": "UTF8",
                "lc_collate": "C",
                "lc_ctype": "C",
                "tablespace_name": "pg_default",
                "connection_limit": -1,
                "template": "template0",
                "allow_connections": True,
                "is_template": False,
            }
        elif resource["type"] == GRANT:
            state[resource["name"]] = sorted(inputs["privileges"])
    return state


# --- the declared design ----------------------------------------------------------------------


class TestDeployed:
    """Checks that only look at a deployment: one per stack, shared by the class."""

    def test_each_tenant_reaches_its_own_database_and_no_other(self, deployed: Replay) -> None:
        server, owners = deployed.server, tenants(deployed.plan)
        assert len(owners) >= 3
        for role, database in owners.items():
            password = deployed.passwords[role]
            assert login(server, role, password, database) == f"{role}@{database}"
            for other in sorted(set(owners.values()) - {database}):
                assert login(server, role, password, other) == refused(server, other)

    def test_public_holds_no_privilege_on_a_tenant_database(self, deployed: Replay) -> None:
        assert acl(deployed.server) == owner_only(tenants(deployed.plan))

    def test_the_revoke_runs_as_the_owner_and_revokes(self, deployed: Replay) -> None:
        revokes = [e for e in deployed.journal if e.sql.startswith(REVOKE)]
        assert sorted((e.user, e.database, e.notices) for e in revokes) == [
            (role, database, ()) for role, database in sorted(tenants(deployed.plan).items())
        ]
        assert all(e.notices == () for e in deployed.journal)

    def test_admin_keeps_no_inheriting_membership_in_tenant_roles(self, deployed: Replay) -> None:
        # Only PostgreSQL 16+'s automatic CREATEROLE grant (ADMIN OPTION, granted by the bootstrap
        # superuser, no INHERIT, no SET); the GRANTs the provider makes to create the databases
        # (helpers.go grantRoleMembership, from createDatabase) were revoked again.
        (admin,) = set(admins(deployed.plan))
        assert memberships(deployed.server) == [
            (role, admin, SUPERUSER, True, False, False) for role in sorted(tenants(deployed.plan))
        ]


def test_a_refresh_reads_back_what_was_declared_and_a_replay_changes_nothing(
    fresh: Replay,
) -> None:
    deployed = fresh
    want = declared(deployed.plan)
    assert deployed.state == want
    before = catalog(deployed.server)
    assert deployed.refresh() == want
    # What an update of each Grant would run (resourcePostgreSQLGrantUpdate is the same
    # CreateOrUpdate), then a second refresh.
    for grant in deployed.resources(GRANT):
        assert deployed.create_grant(grant) == []
    assert deployed.refresh() == want
    assert catalog(deployed.server) == before


def test_deleting_gateways_drops_or_keeps_their_database_per_deletion_policy(
    fresh: Replay,
) -> None:
    deployed = fresh
    server, plan = deployed.server, deployed.plan
    owners = tenants(plan)
    retained = {
        r["inputs"]["owner"]: r["retainOnDelete"]
        for r in plan["resources"]
        if r["type"] == DATABASE
    }
    # A gateway's Role and Database share the policy.
    assert {r["inputs"]["name"]: r["retainOnDelete"] for r in deployed.resources(ROLE)} == retained
    assert sorted(set(retained.values())) == [False, True]  # the stack has both policies
    kept = {role: database for role, database in owners.items() if retained[role]}
    dropped = sorted(set(owners) - set(kept))
    start = len(deployed.journal)

    deployed.destroy()  # every declaration removed

    # Every Grant is deleted, by the owner (the revoke again, harmless), before its Database.
    revokes = [e for e in deployed.journal[start:] if e.sql.startswith(REVOKE)]
    assert sorted((e.user, e.database, e.notices) for e in revokes) == [
        (role, database, ()) for role, database in sorted(owners.items())
    ]
    # The admin drops the Delete gateways' databases and roles, and nothing else.
    (admin,) = set(admins(plan))
    drops = sorted((e.user, e.sql) for e in deployed.journal[start:] if e.sql.startswith("DROP "))
    assert drops == sorted(
        [(admin, f'DROP DATABASE "{owners[role]}" WITH ( FORCE )') for role in dropped]
        + [(admin, f'DROP OWNED BY "{role}"') for role in dropped]
        + [(admin, f'DROP ROLE "{role}"') for role in dropped]
    )
    assert acl(server) == owner_only(kept)
    with server.superuser() as su:
        remaining = [
            name
            for (name,) in su.execute(
                "SELECT rolname FROM pg_roles WHERE rolname !~ '^pg_' ORDER BY 1"
            ).fetchall()
        ]
    assert remaining == sorted([SUPERUSER, *set(admins(plan)), *kept])
    for role, database in kept.items():
        assert login(server, role, deployed.passwords[role], database) == f"{role}@{database}"
    for role in dropped:
        assert login(server, role, deployed.passwords[role], owners[role]) == (
            f'connection failed: connection to server at "127.0.0.1", port {server.port}'
            f' failed: FATAL:  password authentication failed for user "{role}"'
        )
    assert memberships(server) == [
        (role, admin, SUPERUSER, True, False, False) for role in sorted(kept)
    ]


# --- the design it replaces -------------------------------------------------------------------


@pytest.mark.parametrize("stack", STACKS)
def test_revoking_as_the_admin_leaves_public_connected(postgres: Server, stack: str) -> None:
    """The Grant on the cluster's admin provider (the program before the owner provider):
    the checks above would fail. PostgreSQL only warns, PUBLIC keeps CONNECT and TEMPORARY,
    every tenant reaches every tenant database, and every refresh reads back a diff."""
    replay = deploy(postgres, plan_of(stack, revoke_as_admin=True))
    owners = tenants(replay.plan)
    (admin,) = set(admins(replay.plan))
    revokes = [e for e in replay.journal if e.sql.startswith(REVOKE)]
    assert sorted((e.user, e.notices) for e in revokes) == [
        (admin, (f'WARNING: no privileges could be revoked for "{database}"',))
        for database in sorted(owners.values())
    ]
    assert acl(postgres) == {
        database: [
            ("PUBLIC", owner, "CONNECT"),
            ("PUBLIC", owner, "TEMPORARY"),
            *[(owner, owner, p) for p in ("CONNECT", "CREATE", "TEMPORARY")],
        ]
        for owner, database in owners.items()
    }
    (first, second, *_) = sorted(owners.items())
    assert login(postgres, first[0], replay.passwords[first[0]], second[1]) == (
        f"{first[0]}@{second[1]}"
    )
    reads = replay.refresh()
    assert {g["name"]: reads[g["name"]] for g in replay.resources(GRANT)} == {
        g["name"]: ["CONNECT", "TEMPORARY"] for g in replay.resources(GRANT)
    }

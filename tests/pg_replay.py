"""Replay, against a real server, the SQL pulumi-postgresql issues for a rendered plan.json.

pulumi-postgresql bridges terraform-provider-postgresql. The statements are in
``e2e/providers/pgsql.py``, shared with the lane's stand-in provider: each is taken from its
source (cyrilgdn/terraform-provider-postgresql, directory ``postgresql/``, read at commit
ff936b9; these paths are unchanged since v1.26.0 but for MAINTAIN privileges), and each
function names the one it follows. What the replay keeps from the provider:

- who: every statement runs as the user of the provider the resource names in plan.json
  (``username``, its ``database`` as the connection's default database), logged in with a
  password over TCP (SCRAM); plan.json holds placeholders for passwords, the test supplies one
  per role and uses it for both the Role and any provider that logs in as it;
- how: statements the provider runs on its connection pool run on an autocommit connection;
  those it runs in ``startTransaction`` run between BEGIN and COMMIT (ROLLBACK on error) on a
  connection to the database it names; ``$n`` parameters are sent as the provider sends them;
- what: the Create, Read and Delete paths, with the schema defaults the provider applies to
  the attributes a declaration leaves out; Read returns the state the provider would store,
  so comparing it with the declaration is Pulumi's diff after a refresh.

The engine's order is kept: Role, Database, Grant on create (each depends on the one before,
the Grant through its provider) and the reverse on delete; a resource with
``retainOnDelete`` is left alone on delete (the engine only forgets it).

Only what plan.json uses is supported; any other input fails the replay, so a new input in
the program cannot pass unreplayed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from e2e.providers import pgsql
from e2e.providers.pgsql import Exec
from gatewayctl.inputs.secrets import REDACTED
from tests.pg_server import Server

ROLE = "postgresql:index/role:Role"
DATABASE = "postgresql:index/database:Database"
GRANT = "postgresql:index/grant:Grant"
PROVIDER = "pulumi:providers:postgresql"
SUPPORTED_INPUTS = {
    ROLE: {"name", "login", "password"},
    DATABASE: {"name", "owner"},
    GRANT: {"database", "role", "objectType", "privileges"},
}


@dataclass(frozen=True)
class Executed:
    """One statement as the server received it."""

    user: str
    database: str
    sql: str
    notices: tuple[str, ...]


@dataclass
class _Client:
    """A provider's login (``pgsql.Client``) whose statements go to the replay's journal."""

    replay: Replay
    user: str
    database: str

    @contextlib.contextmanager
    def session(self, database: str) -> Iterator[Exec]:
        server, journal = self.replay.server, self.replay.journal
        with server.connect(self.user, self.replay.passwords[self.user], database) as conn:
            notices: list[str] = []
            conn.add_notice_handler(lambda d: notices.append(f"{d.severity}: {d.message_primary}"))

            def execute(sql: str, *params: Any) -> list[tuple[Any, ...]]:
                cursor = conn.execute(sql, params or None)
                rows = cursor.fetchall() if cursor.description is not None else []
                journal.append(Executed(self.user, database, sql, tuple(notices)))
                notices.clear()
                return rows

            yield execute


@dataclass
class Replay:
    """The provider's SQL for the ``postgresql:`` resources of one plan.json."""

    server: Server
    plan: Mapping[str, Any]
    passwords: Mapping[str, str]
    """Password of each login role, admin and tenants, by role name."""
    journal: list[Executed] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)
    """What the provider stored for each resource at its last Create, by resource name."""

    # --- plan ---------------------------------------------------------------------------

    def resources(self, type_: str) -> list[dict[str, Any]]:
        found = [r for r in self.plan["resources"] if r["type"] == type_]
        for resource in found:
            unsupported = set(resource["inputs"]) - SUPPORTED_INPUTS.get(type_, set())
            assert not unsupported, f"{resource['name']}: no replay for inputs {unsupported}"
        return found

    def provider(self, resource: Mapping[str, Any]) -> dict[str, Any]:
        """The ``pulumi:providers:postgresql`` entry the resource names (by URN)."""
        reference = resource["provider"]
        assert reference is not None, f"{resource['name']} names no provider"
        chain, name = reference.rsplit("::", 1)
        assert chain.endswith(PROVIDER), reference
        entry: dict[str, Any]
        (entry,) = [
            r for r in self.plan["resources"] if r["type"] == PROVIDER and r["name"] == name
        ]
        return entry

    def login(self, resource: Mapping[str, Any]) -> tuple[str, str]:
        """(user, default database) of the provider the resource names."""
        inputs = self.provider(resource)["inputs"]
        assert inputs["password"] == REDACTED, "plan.json must not hold a password"
        return str(inputs["username"]), str(inputs["database"])

    def client(self, resource: Mapping[str, Any]) -> _Client:
        """The connection settings of the provider the resource names."""
        user, database = self.login(resource)
        return _Client(self, user, database)

    # --- resource_postgresql_role.go (e2e/providers/pgsql.py) ---------------------------

    def create_role(self, resource: Mapping[str, Any]) -> dict[str, Any]:
        """``resourcePostgreSQLRoleCreate``; plan.json holds a placeholder for the password,
        the replay's own password for the role is set."""
        inputs = resource["inputs"]
        name = inputs["name"]
        assert inputs.get("password", REDACTED) == REDACTED
        password = self.passwords[name] if "password" in inputs else None
        pgsql.create_role(
            self.client(resource), name, login=bool(inputs.get("login", False)), password=password
        )
        return self.read_role(resource)

    def read_role(self, resource: Mapping[str, Any]) -> dict[str, Any]:
        """``resourcePostgreSQLRoleReadImpl`` ({} when gone)."""
        return pgsql.read_role(self.client(resource), resource["inputs"]["name"])

    @staticmethod
    def declared_role(resource: Mapping[str, Any]) -> dict[str, Any]:
        """What the declaration asks for, with the schema's defaults (Optional, not Computed:
        a read that differs is a diff)."""
        inputs = resource["inputs"]
        return {
            **pgsql.ROLE_DEFAULTS,
            "name": inputs["name"],
            "login": inputs.get("login", False),
        }

    def delete_role(self, resource: Mapping[str, Any]) -> None:
        """``resourcePostgreSQLRoleDelete``."""
        pgsql.delete_role(self.client(resource), resource["inputs"]["name"])

    # --- resource_postgresql_database.go ------------------------------------------------

    def create_database(self, resource: Mapping[str, Any]) -> dict[str, Any]:
        """``createDatabase``."""
        inputs = resource["inputs"]
        pgsql.create_database(self.client(resource), inputs["name"], inputs["owner"])
        return self.read_database(resource)

    def read_database(self, resource: Mapping[str, Any]) -> dict[str, Any]:
        """``resourcePostgreSQLDatabaseReadImpl`` ({} when gone)."""
        return pgsql.read_database(self.client(resource), resource["inputs"]["name"])

    def delete_database(self, resource: Mapping[str, Any]) -> None:
        """``resourcePostgreSQLDatabaseDelete``."""
        inputs = resource["inputs"]
        pgsql.delete_database(self.client(resource), inputs["name"], inputs["owner"])

    # --- resource_postgresql_grant.go ---------------------------------------------------

    def _grant_target(self, resource: Mapping[str, Any]) -> tuple[str, str, list[str]]:
        inputs = resource["inputs"]
        assert inputs["objectType"] == "database", "the replay knows object_type database"
        return inputs["database"], inputs["role"], list(inputs["privileges"])

    def create_grant(self, resource: Mapping[str, Any]) -> list[str] | None:
        """``resourcePostgreSQLGrantCreateOrUpdate`` for object_type database; then the read."""
        database, role, privileges = self._grant_target(resource)
        pgsql.create_grant(self.client(resource), database, role, privileges)
        return self.read_grant(resource)

    def read_grant(self, resource: Mapping[str, Any]) -> list[str] | None:
        """``resourcePostgreSQLGrantRead``: the privileges it stores (None when gone)."""
        database, role, _ = self._grant_target(resource)
        return pgsql.read_grant(self.client(resource), database, role)

    def delete_grant(self, resource: Mapping[str, Any]) -> None:
        """``resourcePostgreSQLGrantDelete``."""
        database, role, _ = self._grant_target(resource)
        pgsql.delete_grant(self.client(resource), database, role)

    # --- the engine's order -------------------------------------------------------------

    def up(self) -> None:
        """Create every resource (``pulumi up`` on an empty stack), keeping what each stored."""
        for resource in self.resources(ROLE):
            self.state[resource["name"]] = self.create_role(resource)
        for resource in self.resources(DATABASE):
            self.state[resource["name"]] = self.create_database(resource)
        for resource in self.resources(GRANT):
            self.state[resource["name"]] = self.create_grant(resource)

    def refresh(self) -> dict[str, Any]:
        """Read every resource, as ``pulumi refresh`` does; by resource name."""
        readers: dict[str, Callable[[Mapping[str, Any]], Any]] = {
            ROLE: self.read_role,
            DATABASE: self.read_database,
            GRANT: self.read_grant,
        }
        return {
            r["name"]: readers[type_](r)
            for type_ in (ROLE, DATABASE, GRANT)
            for r in self.resources(type_)
        }

    def destroy(self) -> None:
        """Delete every resource in reverse order, skipping those retained on delete."""
        deleters: dict[str, Callable[[Mapping[str, Any]], None]] = {
            GRANT: self.delete_grant,
            DATABASE: self.delete_database,
            ROLE: self.delete_role,
        }
        for type_ in (GRANT, DATABASE, ROLE):
            for resource in self.resources(type_):
                if not resource["retainOnDelete"]:
                    deleters[type_](resource)

"""Replay, against a real server, the SQL pulumi-postgresql issues for a rendered plan.json.

pulumi-postgresql bridges terraform-provider-postgresql. Every statement below is taken from
its source (cyrilgdn/terraform-provider-postgresql, directory ``postgresql/``, read at commit
ff936b9; these paths are unchanged since v1.26.0 but for MAINTAIN privileges), and each method
names the function it follows. What the replay keeps from the provider:

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
PUBLIC = "public"

Exec = Callable[..., list[tuple[Any, ...]]]


def quote_ident(name: str) -> str:
    """lib/pq ``QuoteIdentifier``."""
    return '"' + name.replace('"', '""') + '"'


def quote_literal(value: str) -> str:
    """helpers.go ``pqQuoteLiteral`` (the caller adds the quotes)."""
    return value.replace("\\", "\\\\").replace("'", "''")


@dataclass(frozen=True)
class Executed:
    """One statement as the server received it."""

    user: str
    database: str
    sql: str
    notices: tuple[str, ...]


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
        (entry,) = [
            r for r in self.plan["resources"] if r["type"] == PROVIDER and r["name"] == name
        ]
        return entry

    def login(self, resource: Mapping[str, Any]) -> tuple[str, str]:
        """(user, default database) of the provider the resource names."""
        inputs = self.provider(resource)["inputs"]
        assert inputs["password"] == REDACTED, "plan.json must not hold a password"
        return str(inputs["username"]), str(inputs["database"])

    # --- connections --------------------------------------------------------------------

    @contextlib.contextmanager
    def _session(self, user: str, database: str) -> Iterator[Exec]:
        with self.server.connect(user, self.passwords[user], database) as conn:
            notices: list[str] = []
            conn.add_notice_handler(lambda d: notices.append(f"{d.severity}: {d.message_primary}"))

            def execute(sql: str, *params: Any) -> list[tuple[Any, ...]]:
                cursor = conn.execute(sql, params or None)
                rows = cursor.fetchall() if cursor.description is not None else []
                self.journal.append(Executed(user, database, sql, tuple(notices)))
                notices.clear()
                return rows

            yield execute

    def pool(self, resource: Mapping[str, Any]) -> contextlib.AbstractContextManager[Exec]:
        """The provider's ``*sql.DB`` (autocommit) on its own database (config.go, Connect)."""
        user, database = self.login(resource)
        return self._session(user, database)

    @contextlib.contextmanager
    def transaction(
        self, resource: Mapping[str, Any], database: str = "", *, commit: bool = True
    ) -> Iterator[Exec]:
        """helpers.go ``startTransaction``: the provider's database, or ``database`` when
        given (a new client for it, same user); ``deferredRollback`` when not committed."""
        user, default = self.login(resource)
        with self._session(user, database or default) as execute:
            execute("BEGIN")
            try:
                yield execute
            except BaseException:
                execute("ROLLBACK")
                raise
            execute("COMMIT" if commit else "ROLLBACK")

    # --- helpers.go ---------------------------------------------------------------------

    @staticmethod
    def is_member_of_role(execute: Exec, role: str, member: str) -> bool:
        """helpers.go ``isMemberOfRole``: a membership that allows SET ROLE (PostgreSQL 16+)."""
        set_option = execute(
            "SELECT 1 FROM information_schema.columns"
            " WHERE table_name='pg_auth_members' AND column_name = 'set_option'"
        )
        query = (
            "SELECT 1 FROM pg_auth_members"
            " WHERE pg_get_userbyid(roleid) = $1 AND pg_get_userbyid(member) = $2"
        )
        if set_option:
            query += " AND set_option"
        return bool(execute(query, role, member))

    def grant_role_membership(self, execute: Exec, role: str, member: str) -> bool:
        """helpers.go ``grantRoleMembership``."""
        if member == role or self.is_member_of_role(execute, role, member):
            return False
        execute(f"GRANT {quote_ident(role)} TO {quote_ident(member)}")
        return True

    def revoke_role_membership(self, execute: Exec, role: str, member: str) -> bool:
        """helpers.go ``revokeRoleMembership``."""
        if member == role or not self.is_member_of_role(execute, role, member):
            return False
        execute(f"REVOKE {quote_ident(role)} FROM {quote_ident(member)}")
        return True

    @staticmethod
    def lock_role(execute: Exec, role: str) -> None:
        """helpers.go ``pgLockRole``."""
        execute("SET statement_timeout = 0")
        execute("SELECT pg_advisory_xact_lock(oid::bigint) FROM pg_roles WHERE rolname = $1", role)
        execute(
            "SELECT pg_advisory_xact_lock(member::bigint) FROM pg_auth_members"
            " JOIN pg_roles ON roleid = pg_roles.oid WHERE rolname = $1",
            role,
        )

    @staticmethod
    def lock_database(execute: Exec, database: str) -> None:
        """helpers.go ``pgLockDatabase``."""
        execute("SET statement_timeout = 0")
        execute(
            "SELECT pg_advisory_xact_lock(oid::bigint) FROM pg_database WHERE datname = $1",
            database,
        )

    def with_roles_granted(self, execute: Exec, roles: list[str], fn: Callable[[], None]) -> None:
        """helpers.go ``withRolesGranted``: temporarily GRANT each role to the current user."""
        if not roles:
            fn()
            return
        ((current,),) = execute("SELECT CURRENT_USER")
        ((superuser,),) = execute("SELECT rolsuper FROM pg_roles WHERE rolname = $1", current)
        if superuser:
            fn()
            return
        granted, revoked = [], []
        for role in roles:
            ((role_superuser,),) = execute("SELECT rolsuper FROM pg_roles WHERE rolname = $1", role)
            if role_superuser:
                continue
            if self.revoke_role_membership(execute, current, role):
                revoked.append(role)
            if self.grant_role_membership(execute, role, current):
                granted.append(role)
        fn()
        for role in granted:
            self.revoke_role_membership(execute, role, current)
        for role in revoked:
            if execute("SELECT 1 FROM pg_roles WHERE rolname=$1", role):
                self.grant_role_membership(execute, current, role)

    # --- resource_postgresql_role.go ----------------------------------------------------

    def create_role(self, resource: Mapping[str, Any]) -> dict[str, Any]:
        """``resourcePostgreSQLRoleCreate``, with the schema's defaults for what the plan
        leaves out (encrypted_password true, valid_until 'infinity', connection_limit -1,
        inherit true, every other flag false; featureRLS and featureReplication on 18)."""
        inputs = resource["inputs"]
        name = inputs["name"]
        assert inputs.get("password", REDACTED) == REDACTED
        options = []
        if "password" in inputs:
            options += ["ENCRYPTED", f"PASSWORD '{quote_literal(self.passwords[name])}'"]
        options += [
            "VALID UNTIL 'infinity'",
            "CONNECTION LIMIT -1",
            "NOSUPERUSER",
            "NOCREATEDB",
            "NOCREATEROLE",
            "INHERIT",
            "LOGIN" if inputs.get("login", False) else "NOLOGIN",
            "NOBYPASSRLS",
            "NOREPLICATION",
        ]
        with self.transaction(resource) as execute:
            execute(f"CREATE ROLE {quote_ident(name)} WITH {' '.join(options)}")
            # grantRoles: no roles declared. alterSearchPath runs on every create.
            execute(f"ALTER ROLE {quote_ident(name)} SET search_path TO DEFAULT")
            # setStatementTimeout, setIdleInTransactionSessionTimeout, setAssumeRole: no change.
        return self.read_role(resource)

    def read_role(self, resource: Mapping[str, Any]) -> dict[str, Any]:
        """``resourcePostgreSQLRoleReadImpl``: the state it stores ({} when gone). The
        password comes from state, not the server (``readRolePassword``: superuser false)."""
        with self.pool(resource) as execute:
            rows = execute(
                "SELECT ARRAY("
                "SELECT pg_get_userbyid(roleid) FROM pg_catalog.pg_auth_members members"
                " WHERE member = pg_roles.oid"
                "), rolname, rolsuper, rolinherit, rolcreaterole, rolcreatedb, rolcanlogin,"
                " rolconnlimit, COALESCE(rolvaliduntil::TEXT, 'infinity'), rolconfig,"
                " rolreplication, rolbypassrls"
                " FROM pg_catalog.pg_roles WHERE rolname=$1",
                resource["inputs"]["name"],
            )
        if not rows:
            return {}
        roles, name, sup, inherit, createrole, createdb, login, limit, until, config, repl, rls = (
            rows[0]
        )
        settings = dict(item.split("=", 1) for item in config or [])
        search_path = settings.get("search_path")
        return {
            "name": name,
            "superuser": sup,
            "inherit": inherit,
            "create_role": createrole,
            "create_database": createdb,
            "login": login,
            "connection_limit": limit,
            "valid_until": until,
            "replication": repl,
            "bypass_row_level_security": rls,
            "roles": sorted(roles),
            # readSearchPath: split on ", ", quotes trimmed; nil when not set.
            "search_path": [p.strip('"') for p in search_path.split(", ")] if search_path else [],
            "statement_timeout": int(settings.get("statement_timeout", 0)),
            "idle_in_transaction_session_timeout": int(
                settings.get("idle_in_transaction_session_timeout", 0)
            ),
            "assume_role": settings.get("role", ""),
        }

    @staticmethod
    def declared_role(resource: Mapping[str, Any]) -> dict[str, Any]:
        """What the declaration asks for, with the schema's defaults (Optional, not Computed:
        a read that differs is a diff)."""
        inputs = resource["inputs"]
        return {
            "name": inputs["name"],
            "superuser": False,
            "inherit": True,
            "create_role": False,
            "create_database": False,
            "login": inputs.get("login", False),
            "connection_limit": -1,
            "valid_until": "infinity",
            "replication": False,
            "bypass_row_level_security": False,
            "roles": [],
            "search_path": [],
            "statement_timeout": 0,
            "idle_in_transaction_session_timeout": 0,
            "assume_role": "",
        }

    def delete_role(self, resource: Mapping[str, Any]) -> None:
        """``resourcePostgreSQLRoleDelete`` (skip_reassign_owned and skip_drop_role false)."""
        name = resource["inputs"]["name"]
        user, _ = self.login(resource)
        with self.transaction(resource) as execute:
            self.lock_role(execute, name)

            def reassign_and_drop_owned() -> None:
                execute(f"REASSIGN OWNED BY {quote_ident(name)} TO {quote_ident(user)}")
                execute(f"DROP OWNED BY {quote_ident(name)}")

            self.with_roles_granted(execute, [name], reassign_and_drop_owned)
            execute(f"DROP ROLE {quote_ident(name)}")

    # --- resource_postgresql_database.go ------------------------------------------------

    @contextlib.contextmanager
    def _owner_granted(self, resource: Mapping[str, Any], owner: str) -> Iterator[Exec]:
        """The preamble of ``createDatabase`` and ``resourcePostgreSQLDatabaseDelete``: lock
        the current user in a transaction held open, GRANT the owner to the current user on
        the pool when it is not already a member with SET, REVOKE it afterwards (deferred)."""
        user, _ = self.login(resource)
        with (
            self.transaction(resource, commit=False) as lock,
            self.pool(resource) as execute,
        ):
            self.lock_role(lock, user)
            granted = self.grant_role_membership(execute, owner, user)
            try:
                yield execute
            finally:
                if granted:
                    self.revoke_role_membership(execute, owner, user)

    def create_database(self, resource: Mapping[str, Any]) -> dict[str, Any]:
        """``createDatabase`` with the schema's defaults (template0, UTF8, allow_connections
        true, connection_limit -1, is_template false)."""
        inputs = resource["inputs"]
        with self._owner_granted(resource, inputs["owner"]) as execute:
            execute(
                f"CREATE DATABASE {quote_ident(inputs['name'])}"
                f" OWNER {quote_ident(inputs['owner'])} TEMPLATE template0 ENCODING 'UTF8'"
                " ALLOW_CONNECTIONS true CONNECTION LIMIT -1 IS_TEMPLATE false"
            )
        return self.read_database(resource)

    def read_database(self, resource: Mapping[str, Any]) -> dict[str, Any]:
        """``resourcePostgreSQLDatabaseReadImpl`` ({} when gone)."""
        name = resource["inputs"]["name"]
        with self.pool(resource) as execute:
            found = execute(
                "SELECT d.datname, pg_catalog.pg_get_userbyid(d.datdba) from pg_database d"
                " WHERE datname=$1",
                name,
            )
            if not found:
                return {}
            fmt = (
                "SELECT {} FROM pg_catalog.pg_database AS d, pg_catalog.pg_tablespace AS ts"
                " WHERE d.datname = $1 AND d.dattablespace = ts.oid"
            )
            ((encoding, collate, ctype, tablespace, limit),) = execute(
                fmt.format(
                    "pg_catalog.pg_encoding_to_char(d.encoding), d.datcollate, d.datctype,"
                    " ts.spcname, d.datconnlimit"
                ),
                name,
            )
            ((allow,),) = execute(fmt.format("d.datallowconn"), name)
            ((template,),) = execute(fmt.format("d.datistemplate"), name)
        return {
            "name": found[0][0],
            "owner": found[0][1],
            "encoding": encoding,
            "lc_collate": collate,
            "lc_ctype": ctype,
            "tablespace_name": tablespace,
            "connection_limit": limit,
            "template": "template0",  # from state: template is never read back
            "allow_connections": allow,
            "is_template": template,
        }

    def delete_database(self, resource: Mapping[str, Any]) -> None:
        """``resourcePostgreSQLDatabaseDelete``: is_template is false, so no
        ``doSetDBIsTemplate``; then ``terminateBConnections`` and DROP ... WITH (FORCE)."""
        inputs = resource["inputs"]
        name = inputs["name"]
        with self._owner_granted(resource, inputs["owner"]) as execute:
            execute(f"ALTER DATABASE {quote_ident(name)} ALLOW_CONNECTIONS false")
            execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                f" WHERE datname = '{name}' AND pid <> pg_backend_pid()"
            )
            execute(f"DROP DATABASE {quote_ident(name)} WITH ( FORCE )")

    # --- resource_postgresql_grant.go ---------------------------------------------------

    def _grant_target(self, resource: Mapping[str, Any]) -> tuple[str, str, list[str]]:
        inputs = resource["inputs"]
        assert inputs["objectType"] == "database", "the replay knows object_type database"
        return inputs["database"], inputs["role"], list(inputs["privileges"])

    def _revoke_all(self, execute: Any, database: str, role: str) -> None:
        """``createRevokeQuery`` for a database, under the provider's locks on both."""
        self.lock_role(execute, role)
        self.lock_database(execute, database)
        execute(
            f"REVOKE ALL PRIVILEGES ON DATABASE {quote_ident(database)} FROM {quote_ident(role)}"
        )

    def create_grant(self, resource: Mapping[str, Any]) -> list[str] | None:
        """``resourcePostgreSQLGrantCreateOrUpdate`` for object_type database:
        ``getRolesToGrant`` returns no role, so ``createRevokeQuery`` runs as the provider's
        own user, then ``createGrantQuery`` when there are privileges; then the read."""
        database, role, privileges = self._grant_target(resource)
        with self.transaction(resource, database) as execute:
            self._revoke_all(execute, database, role)
            if privileges:
                execute(
                    f"GRANT {','.join(privileges)} ON DATABASE {quote_ident(database)}"
                    f" TO {quote_ident(role)}"
                )
        return self.read_grant(resource)

    def read_grant(self, resource: Mapping[str, Any]) -> list[str] | None:
        """``resourcePostgreSQLGrantRead``: ``checkRoleDBSchemaExists`` then
        ``readDatabaseRolePrivileges``; the privileges it stores (sorted; None when gone)."""
        database, role, _ = self._grant_target(resource)
        with self.pool(resource) as execute:
            if not execute("SELECT datname FROM pg_database WHERE datname=$1", database):
                return None
        with self.transaction(resource, database, commit=False) as execute:
            if role != PUBLIC and not execute("SELECT 1 FROM pg_roles WHERE rolname=$1", role):
                return None
        with self.transaction(resource, database, commit=False) as execute:
            # getRoleOID: 0 for public, without a query.
            oid = 0
            if role != PUBLIC:
                ((oid,),) = execute("SELECT oid FROM pg_roles WHERE rolname = $1", role)
            ((granted,),) = execute(
                "SELECT array_agg(privilege_type) FROM ("
                " SELECT (aclexplode(datacl)).* FROM pg_database WHERE datname=$1"
                ") as privileges WHERE grantee = $2",
                database,
                oid,
            )
        return sorted(granted or [])

    def delete_grant(self, resource: Mapping[str, Any]) -> None:
        """``resourcePostgreSQLGrantDelete``: the same revoke, as the provider's user."""
        database, role, _ = self._grant_target(resource)
        with self.transaction(resource, database) as execute:
            self._revoke_all(execute, database, role)

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

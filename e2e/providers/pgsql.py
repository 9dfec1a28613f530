"""The SQL terraform-provider-postgresql issues for Role, Database and Grant (object_type
database): one implementation, used by the lane's stand-in provider (``postgresql.py``) and by
the fast suite's replay of a rendered plan (``tests/pg_replay.py``).

pulumi-postgresql bridges terraform-provider-postgresql. Every statement below is taken from
its source (cyrilgdn/terraform-provider-postgresql, directory ``postgresql/``, read at commit
ff936b9; these paths are unchanged since v1.26.0 but for MAINTAIN privileges), and each
function names the one it follows. What is kept from the provider:

- who: every statement runs as the provider's user, logged in with a password over TCP
  (SCRAM), its ``database`` the connection's default (a :class:`Client`);
- how: statements the provider runs on its connection pool run on an autocommit connection;
  those it runs in ``startTransaction`` run between BEGIN and COMMIT (ROLLBACK on error) on a
  connection to the database it names; ``$n`` parameters are sent as the provider sends them;
- what: Create, Read, Update (a role's password) and Delete, with the schema's defaults for
  the attributes a declaration leaves out; Read returns the state the provider would store.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any, Protocol

PUBLIC = "public"

Exec = Callable[..., list[tuple[Any, ...]]]
"""Run one statement with ``$n`` parameters; the rows it returned."""


class Client(Protocol):
    """The provider's connection settings: its user and default database."""

    @property
    def user(self) -> str: ...

    @property
    def database(self) -> str: ...

    def session(self, database: str) -> contextlib.AbstractContextManager[Exec]:
        """An autocommit connection, as :attr:`user`, to ``database``."""
        ...


def quote_ident(name: str) -> str:
    """lib/pq ``QuoteIdentifier``."""
    return '"' + name.replace('"', '""') + '"'


def quote_literal(value: str) -> str:
    """helpers.go ``pqQuoteLiteral`` (the caller adds the quotes)."""
    return value.replace("\\", "\\\\").replace("'", "''")


def pool(client: Client) -> contextlib.AbstractContextManager[Exec]:
    """The provider's ``*sql.DB`` (autocommit) on its own database (config.go, Connect)."""
    return client.session(client.database)


@contextlib.contextmanager
def transaction(client: Client, database: str = "", *, commit: bool = True) -> Iterator[Exec]:
    """helpers.go ``startTransaction``: the provider's database, or ``database`` when given (a
    new client for it, same user); ``deferredRollback`` when not committed."""
    with client.session(database or client.database) as execute:
        execute("BEGIN")
        try:
            yield execute
        except BaseException:
            execute("ROLLBACK")
            raise
        execute("COMMIT" if commit else "ROLLBACK")


# --- helpers.go -----------------------------------------------------------------------------


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


def grant_role_membership(execute: Exec, role: str, member: str) -> bool:
    """helpers.go ``grantRoleMembership``."""
    if member == role or is_member_of_role(execute, role, member):
        return False
    execute(f"GRANT {quote_ident(role)} TO {quote_ident(member)}")
    return True


def revoke_role_membership(execute: Exec, role: str, member: str) -> bool:
    """helpers.go ``revokeRoleMembership``."""
    if member == role or not is_member_of_role(execute, role, member):
        return False
    execute(f"REVOKE {quote_ident(role)} FROM {quote_ident(member)}")
    return True


def lock_role(execute: Exec, role: str) -> None:
    """helpers.go ``pgLockRole``."""
    execute("SET statement_timeout = 0")
    execute("SELECT pg_advisory_xact_lock(oid::bigint) FROM pg_roles WHERE rolname = $1", role)
    execute(
        "SELECT pg_advisory_xact_lock(member::bigint) FROM pg_auth_members"
        " JOIN pg_roles ON roleid = pg_roles.oid WHERE rolname = $1",
        role,
    )


def lock_database(execute: Exec, database: str) -> None:
    """helpers.go ``pgLockDatabase``."""
    execute("SET statement_timeout = 0")
    execute(
        "SELECT pg_advisory_xact_lock(oid::bigint) FROM pg_database WHERE datname = $1",
        database,
    )


def with_roles_granted(execute: Exec, roles: list[str], fn: Callable[[], None]) -> None:
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
        if revoke_role_membership(execute, current, role):
            revoked.append(role)
        if grant_role_membership(execute, role, current):
            granted.append(role)
    fn()
    for role in granted:
        revoke_role_membership(execute, role, current)
    for role in revoked:
        if execute("SELECT 1 FROM pg_roles WHERE rolname=$1", role):
            grant_role_membership(execute, current, role)


# --- resource_postgresql_role.go ------------------------------------------------------------

ROLE_DEFAULTS: dict[str, Any] = {
    "superuser": False,
    "inherit": True,
    "create_role": False,
    "create_database": False,
    "login": False,
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
"""The role schema's defaults (Optional, not Computed: a read that differs is a diff)."""


def create_role(client: Client, name: str, *, login: bool, password: str | None) -> None:
    """``resourcePostgreSQLRoleCreate``, with the schema's defaults for what is left out
    (encrypted_password true, valid_until 'infinity', connection_limit -1, inherit true, every
    other flag false; featureRLS and featureReplication on 18)."""
    options = []
    if password is not None:
        options += ["ENCRYPTED", f"PASSWORD '{quote_literal(password)}'"]
    options += [
        "VALID UNTIL 'infinity'",
        "CONNECTION LIMIT -1",
        "NOSUPERUSER",
        "NOCREATEDB",
        "NOCREATEROLE",
        "INHERIT",
        "LOGIN" if login else "NOLOGIN",
        "NOBYPASSRLS",
        "NOREPLICATION",
    ]
    with transaction(client) as execute:
        execute(f"CREATE ROLE {quote_ident(name)} WITH {' '.join(options)}")
        # grantRoles: no roles declared. alterSearchPath runs on every create.
        execute(f"ALTER ROLE {quote_ident(name)} SET search_path TO DEFAULT")
        # setStatementTimeout, setIdleInTransactionSessionTimeout, setAssumeRole: no change.


def read_role(client: Client, name: str) -> dict[str, Any]:
    """``resourcePostgreSQLRoleReadImpl``: the state it stores ({} when gone). The password
    comes from state, not the server (``readRolePassword``: superuser false)."""
    with pool(client) as execute:
        rows = execute(
            "SELECT ARRAY("
            "SELECT pg_get_userbyid(roleid) FROM pg_catalog.pg_auth_members members"
            " WHERE member = pg_roles.oid"
            "), rolname, rolsuper, rolinherit, rolcreaterole, rolcreatedb, rolcanlogin,"
            " rolconnlimit, COALESCE(rolvaliduntil::TEXT, 'infinity'), rolconfig,"
            " rolreplication, rolbypassrls"
            " FROM pg_catalog.pg_roles WHERE rolname=$1",
            name,
        )
    if not rows:
        return {}
    roles, name, sup, inherit, createrole, createdb, login, limit, until, config, repl, rls = rows[
        0
    ]
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


def update_role(
    client: Client,
    old: dict[str, Any],
    new: dict[str, Any],
) -> None:
    """``resourcePostgreSQLRoleUpdate`` for the inputs the program sets (``name``, ``login``,
    ``password``), in one ``startTransaction``, in its order: ``setRoleName`` (``ALTER ROLE
    ... RENAME TO``) when the name changed; ``setRolePassword`` when the password or the name
    changed (a rename resets an MD5 password): ``ALTER ROLE ... PASSWORD '<literal>'`` (no
    ``ENCRYPTED``: the server hashes it with its ``password_encryption``, SCRAM on 18);
    ``setRoleLogin`` when login changed (``ALTER ROLE ... WITH LOGIN|NOLOGIN``)."""
    name = str(new["name"])
    with transaction(client) as execute:
        if old["name"] != name:
            execute(f"ALTER ROLE {quote_ident(str(old['name']))} RENAME TO {quote_ident(name)}")
        if old.get("password") != new.get("password") or old["name"] != name:
            password = str(new.get("password") or "")
            execute(f"ALTER ROLE {quote_ident(name)} PASSWORD '{quote_literal(password)}'")
        if bool(old.get("login")) != bool(new.get("login")):
            execute(
                f"ALTER ROLE {quote_ident(name)} WITH {'LOGIN' if new.get('login') else 'NOLOGIN'}"
            )


def delete_role(client: Client, name: str) -> None:
    """``resourcePostgreSQLRoleDelete`` (skip_reassign_owned and skip_drop_role false)."""
    with transaction(client) as execute:
        lock_role(execute, name)

        def reassign_and_drop_owned() -> None:
            execute(f"REASSIGN OWNED BY {quote_ident(name)} TO {quote_ident(client.user)}")
            execute(f"DROP OWNED BY {quote_ident(name)}")

        with_roles_granted(execute, [name], reassign_and_drop_owned)
        execute(f"DROP ROLE {quote_ident(name)}")


# --- resource_postgresql_database.go --------------------------------------------------------

DATABASE_TEMPLATE = "template0"


@contextlib.contextmanager
def _owner_granted(client: Client, owner: str) -> Iterator[Exec]:
    """The preamble of ``createDatabase`` and ``resourcePostgreSQLDatabaseDelete``: lock the
    current user in a transaction held open, GRANT the owner to the current user on the pool
    when it is not already a member with SET, REVOKE it afterwards (deferred)."""
    with transaction(client, commit=False) as lock, pool(client) as execute:
        lock_role(lock, client.user)
        granted = grant_role_membership(execute, owner, client.user)
        try:
            yield execute
        finally:
            if granted:
                revoke_role_membership(execute, owner, client.user)


def create_database(client: Client, name: str, owner: str) -> None:
    """``createDatabase`` with the schema's defaults (template0, UTF8, allow_connections true,
    connection_limit -1, is_template false)."""
    with _owner_granted(client, owner) as execute:
        execute(
            f"CREATE DATABASE {quote_ident(name)}"
            f" OWNER {quote_ident(owner)} TEMPLATE {DATABASE_TEMPLATE} ENCODING 'UTF8'"
            " ALLOW_CONNECTIONS true CONNECTION LIMIT -1 IS_TEMPLATE false"
        )


def read_database(client: Client, name: str) -> dict[str, Any]:
    """``resourcePostgreSQLDatabaseReadImpl`` ({} when gone)."""
    with pool(client) as execute:
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
        "template": DATABASE_TEMPLATE,  # from state: template is never read back
        "allow_connections": allow,
        "is_template": template,
    }


def set_database_owner(client: Client, name: str, owner: str) -> None:
    """``resourcePostgreSQLDatabaseUpdate`` → ``setDBOwner`` (only when ``owner`` changed),
    with the new owner granted to the current user around it (``withRolesGranted``)."""
    with pool(client) as execute:

        def alter() -> None:
            execute(f"ALTER DATABASE {quote_ident(name)} OWNER TO {quote_ident(owner)}")

        with_roles_granted(execute, [owner], alter)


def rename_database(client: Client, old: str, new: str) -> None:
    """``resourcePostgreSQLDatabaseUpdate`` → ``setDBName`` (only when ``name`` changed)."""
    with pool(client) as execute:
        execute(f"ALTER DATABASE {quote_ident(old)} RENAME TO {quote_ident(new)}")


def delete_database(client: Client, name: str, owner: str) -> None:
    """``resourcePostgreSQLDatabaseDelete``: is_template is false, so no
    ``doSetDBIsTemplate``; then ``terminateBConnections`` and DROP ... WITH (FORCE)."""
    with _owner_granted(client, owner) as execute:
        execute(f"ALTER DATABASE {quote_ident(name)} ALLOW_CONNECTIONS false")
        execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            f" WHERE datname = '{name}' AND pid <> pg_backend_pid()"
        )
        execute(f"DROP DATABASE {quote_ident(name)} WITH ( FORCE )")


# --- resource_postgresql_grant.go -----------------------------------------------------------


def _revoke_all(execute: Exec, database: str, role: str) -> None:
    """``createRevokeQuery`` for a database, under the provider's locks on both."""
    lock_role(execute, role)
    lock_database(execute, database)
    execute(f"REVOKE ALL PRIVILEGES ON DATABASE {quote_ident(database)} FROM {quote_ident(role)}")


def create_grant(client: Client, database: str, role: str, privileges: list[str]) -> None:
    """``resourcePostgreSQLGrantCreateOrUpdate`` for object_type database (Create, and Update
    of ``privileges``): ``getRolesToGrant`` returns no role, so ``createRevokeQuery`` runs as
    the provider's own user, then ``createGrantQuery`` when there are privileges."""
    with transaction(client, database) as execute:
        _revoke_all(execute, database, role)
        if privileges:
            execute(
                f"GRANT {','.join(privileges)} ON DATABASE {quote_ident(database)}"
                f" TO {quote_ident(role)}"
            )


def read_grant(client: Client, database: str, role: str) -> list[str] | None:
    """``resourcePostgreSQLGrantRead``: ``checkRoleDBSchemaExists`` then
    ``readDatabaseRolePrivileges``; the privileges it stores (sorted; None when gone)."""
    with pool(client) as execute:
        if not execute("SELECT datname FROM pg_database WHERE datname=$1", database):
            return None
    with transaction(client, database, commit=False) as execute:
        if role != PUBLIC and not execute("SELECT 1 FROM pg_roles WHERE rolname=$1", role):
            return None
    with transaction(client, database, commit=False) as execute:
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


def delete_grant(client: Client, database: str, role: str) -> None:
    """``resourcePostgreSQLGrantDelete``: the same revoke, as the provider's user."""
    with transaction(client, database) as execute:
        _revoke_all(execute, database, role)


def grant_id(role: str, database: str, object_type: str) -> str:
    """resource_postgresql_grant.go ``generateGrantID`` for object_type database: role,
    database and object type joined with ``_`` (no schema, no objects)."""
    return f"{role}_{database}_{object_type}"

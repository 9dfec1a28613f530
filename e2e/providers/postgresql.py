"""Stand-in ``pulumi-resource-postgresql``: roles, databases and grants really made, with the
provider's SQL, on a real server, logged in with the provider's own connection settings.

Follows cyrilgdn/terraform-provider-postgresql (bridged by pulumi-postgresql 3.18.2), directory
``postgresql/``; the statements themselves are in ``pgsql.py`` (shared with the fast suite's
replay, tests/pg_replay.py), each citing the function it follows.

- ``provider.go`` ``providerConfigure`` keeps the settings and opens no connection
  (``config.go`` ``Connect`` runs at the first operation: helpers.go ``PGResourceFunc``). Here
  :meth:`PostgresStandIn.configure` keeps ``host``, ``port``, ``username``, ``password``,
  ``database``, ``sslmode``, ``sslrootcert``, ``superuser`` and ``connectTimeout``; each
  operation connects with them (libpq through psycopg: ``sslmode=verify-full`` checks the
  chain to ``sslrootcert``, a path read from the plugin's working directory, the project's,
  as lib/pq reads it, and the host name).
- A configuration with unknowns (the owner provider on a new gateway's first preview: its
  password and database are other resources' outputs): the engine does not configure such a
  provider and answers its resources' preview itself with unknowns (pulumi/pulumi v3.274.0
  ``sdk/go/common/resource/plugin/provider_plugin.go`` ``Configure``: "If any are unknown, do
  not configure the underlying plugin: instead, leave the cfgknown bit unset"). Should it
  configure one anyway, the arguments arrive as the SDK's unknowns (pulumi 3.272.0
  ``pulumi/provider/experimental/provider.py`` ``ConfigureRequest.args``, values of
  ``property_value.py`` ``Computed`` or the protocol's unknown string): they are kept, a
  preview then returns every output unknown and any real operation fails.
- ``resource_postgresql_role.go``: id the role name (Create ``d.SetId(roleName)``; the
  Importer is ``ImportStatePassthrough``, so ``pulumi import`` reads the role named by the
  id); Read ``resourcePostgreSQLRoleReadImpl`` (the password is kept from state,
  ``readRolePassword`` with superuser false); Update ``resourcePostgreSQLRoleUpdate`` (name,
  password, login in place: no attribute is ``ForceNew``); Delete
  ``resourcePostgreSQLRoleDelete``. ``password`` is secret (the SDK's
  ``additional_secret_outputs=["password", "passwordWo"]``).
- ``resource_postgresql_database.go``: id the database name (Importer
  ``ImportStatePassthrough``); ``template``, ``encoding``, ``lc_collate``, ``lc_ctype``,
  ``tablespace_name`` and ``is_template`` are Optional and Computed (absent from the
  declaration, they are read back and never a change), the first four ``ForceNew``; ``owner``
  and ``name`` are altered in place (``resourcePostgreSQLDatabaseUpdate``).
- ``resource_postgresql_grant.go``: object_type ``database`` only (the program's use); id
  ``generateGrantID``; ``privileges`` updated in place (``resourcePostgreSQLGrantCreateOrUpdate``),
  every other attribute ``ForceNew``; no Importer (pulumi-postgresql's Grant documents no
  import, unlike Role and Database), so ``pulumi import`` of a Grant finds nothing.

Only what the program declares is made; any other input set to a value other than its
default is refused at create or update (the stand-in would otherwise pretend).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pulumi.provider.experimental import provider as p

from e2e.providers import pgsql
from e2e.providers.base import (
    UNKNOWN,
    Kind,
    ProviderError,
    StandIn,
    Values,
    has_unknown,
    plain,
    run,
)

ROLE = "postgresql:index/role:Role"
DATABASE = "postgresql:index/database:Database"
GRANT = "postgresql:index/grant:Grant"

CONFIG_KEYS = (
    "host",
    "port",
    "username",
    "password",
    "database",
    "sslmode",
    "sslMode",
    "sslrootcert",
    "superuser",
    "connectTimeout",
    "scheme",
)
CONFIG_DEFAULTS: dict[str, Any] = {
    # provider.go's schema: port 5432, database "postgres", username "postgres", superuser
    # true, connect_timeout 180, scheme "postgres"; sslmode is read from ssl_mode when unset.
    "port": 5432,
    "database": "postgres",
    "username": "postgres",
    "superuser": True,
    "connectTimeout": 180,
    "scheme": "postgres",
}


@dataclass
class Settings:
    """The provider's configuration, kept at Configure (module docstring)."""

    values: dict[str, Any] = field(default_factory=dict)
    configured: bool = False

    @property
    def known(self) -> bool:
        return self.configured and not has_unknown(self.values)

    def client(self) -> Connection:
        if not self.configured:
            raise ProviderError("postgresql stand-in: the provider is not configured")
        if not self.known:
            raise ProviderError("postgresql stand-in: the provider's configuration is unknown")
        values = {**CONFIG_DEFAULTS, **{k: v for k, v in self.values.items() if v is not None}}
        if values.get("scheme") != "postgres":
            raise ProviderError(f"postgresql stand-in: scheme {values['scheme']!r} not served")
        return Connection(
            host=str(values.get("host", "")),
            port=int(values["port"]),
            user=str(values["username"]),
            password=str(values.get("password", "")),
            database=str(values["database"]),
            sslmode=str(values.get("sslmode") or values.get("sslMode") or "prefer"),
            sslrootcert=values.get("sslrootcert"),
            connect_timeout=int(values["connectTimeout"]),
        )


@dataclass(frozen=True)
class Connection:
    """``pgsql.Client`` over libpq with the provider's settings (config.go ``connStr``: host,
    port, user, password, dbname, sslmode, sslrootcert, connect_timeout)."""

    host: str
    port: int
    user: str
    password: str
    database: str
    sslmode: str
    sslrootcert: str | None
    connect_timeout: int

    @contextlib.contextmanager
    def session(self, database: str) -> Iterator[pgsql.Exec]:
        import psycopg

        options: dict[str, Any] = {}
        if self.sslrootcert:
            options["sslrootcert"] = os.path.abspath(self.sslrootcert)  # the plugin's cwd
        try:
            conn = psycopg.connect(
                host=self.host,
                port=self.port,
                user=self.user,
                password=self.password,
                dbname=database,
                sslmode=self.sslmode,
                connect_timeout=self.connect_timeout,
                autocommit=True,
                cursor_factory=psycopg.RawCursor,
                **options,
            )
        except psycopg.OperationalError as error:
            # config.go Connect: "Error connecting to PostgreSQL server <host> (scheme: ...)"
            raise ProviderError(
                f"Error connecting to PostgreSQL server {self.host} (scheme: postgres): {error}"
            ) from None
        with conn:

            def execute(sql: str, *params: Any) -> list[tuple[Any, ...]]:
                try:
                    cursor = conn.execute(sql, params or None)
                except psycopg.Error as error:
                    raise ProviderError(f"{error}") from None
                return cursor.fetchall() if cursor.description is not None else []

            yield execute


SETTINGS = Settings()
"""One provider per plugin process (the engine starts one per provider resource)."""


def _refuse_unsupported(kind: Kind, inputs: Values, supported: frozenset[str]) -> None:
    odd = sorted(
        k
        for k, v in inputs.items()
        if k not in supported and v not in (None, [], kind.defaults.get(k, None))
    )
    if odd:
        raise ProviderError(f"{kind.token}: the stand-in does not implement {', '.join(odd)}")


# --- Role -----------------------------------------------------------------------------------

ROLE_READ = {
    # pgsql.read_role's keys (the Terraform attributes) → the Pulumi inputs.
    "name": "name",
    "superuser": "superuser",
    "inherit": "inherit",
    "create_role": "createRole",
    "create_database": "createDatabase",
    "login": "login",
    "connection_limit": "connectionLimit",
    "valid_until": "validUntil",
    "replication": "replication",
    "bypass_row_level_security": "bypassRowLevelSecurity",
    "roles": "roles",
    "search_path": "searchPaths",
    "statement_timeout": "statementTimeout",
    "idle_in_transaction_session_timeout": "idleInTransactionSessionTimeout",
    "assume_role": "assumeRole",
}
ROLE_FROM_STATE = ("password", "encryptedPassword", "skipDropRole", "skipReassignOwned")
"""Attributes Read keeps from state (``readRolePassword``; the flags are never read)."""


class Role(Kind):
    def create(self, inputs: Values) -> tuple[str, Values]:
        _refuse_unsupported(self, inputs, frozenset({"name", "login", "password"}))
        name = str(inputs["name"])
        password = inputs.get("password")
        pgsql.create_role(
            SETTINGS.client(),
            name,
            login=bool(inputs.get("login")),
            password=None if password is None else str(password),
        )
        return name, self._read(name, inputs) or {}

    def _read(self, name: str, state: Values) -> Values | None:
        found = pgsql.read_role(SETTINGS.client(), name)
        if not found:
            return None
        read = {ROLE_READ[k]: v for k, v in found.items()}
        kept = {k: state.get(k, self.defaults.get(k)) for k in ROLE_FROM_STATE}
        return {**read, **{k: v for k, v in kept.items() if v is not None}}

    def read(self, id_: str, state: Values) -> Values | None:
        return self._read(id_, state)

    def update(self, id_: str, olds: Values, news: Values) -> Values:
        _refuse_unsupported(self, news, frozenset({"name", "login", "password"}))
        pgsql.update_role(SETTINGS.client(), olds, news)
        return self._read(str(news["name"]), news) or {}

    def delete(self, id_: str, state: Values) -> None:
        pgsql.delete_role(SETTINGS.client(), str(state.get("name") or id_))


# --- Database -------------------------------------------------------------------------------

DATABASE_READ = {
    "name": "name",
    "owner": "owner",
    "encoding": "encoding",
    "lc_collate": "lcCollate",
    "lc_ctype": "lcCtype",
    "tablespace_name": "tablespaceName",
    "connection_limit": "connectionLimit",
    "template": "template",
    "allow_connections": "allowConnections",
    "is_template": "isTemplate",
}
DATABASE_DEFAULTS = {"encoding": "UTF8", "template": pgsql.DATABASE_TEMPLATE}
"""What ``createDatabase`` makes when the declaration leaves them out (pgsql.create_database)."""


class Database(Kind):
    def create(self, inputs: Values) -> tuple[str, Values]:
        _refuse_unsupported(self, inputs, frozenset({"name", "owner"}))
        for key, made in DATABASE_DEFAULTS.items():
            if inputs.get(key) not in (None, made):
                raise ProviderError(f"{self.token}: the stand-in makes {key} {made} only")
        name = str(inputs["name"])
        pgsql.create_database(SETTINGS.client(), name, str(inputs["owner"]))
        return name, self._read(name, inputs) or {}

    def _read(self, name: str, state: Values) -> Values | None:
        found = pgsql.read_database(SETTINGS.client(), name)
        if not found:
            return None
        read = {DATABASE_READ[k]: v for k, v in found.items()}
        # template is never read back: kept from state (empty on import).
        read["template"] = state.get("template", pgsql.DATABASE_TEMPLATE if state else None)
        read["alterObjectOwnership"] = state.get(
            "alterObjectOwnership", self.defaults["alterObjectOwnership"]
        )
        return {k: v for k, v in read.items() if v is not None}

    def read(self, id_: str, state: Values) -> Values | None:
        return self._read(id_, state)

    def update(self, id_: str, olds: Values, news: Values) -> Values:
        _refuse_unsupported(self, news, frozenset({"name", "owner"}))
        client = SETTINGS.client()
        name = str(news["name"])
        if olds.get("name") != name:
            pgsql.rename_database(client, str(olds["name"]), name)
        if olds.get("owner") != news.get("owner"):
            pgsql.set_database_owner(client, name, str(news["owner"]))
        return self._read(name, {**olds, **news}) or {}

    def delete(self, id_: str, state: Values) -> None:
        pgsql.delete_database(
            SETTINGS.client(), str(state.get("name") or id_), str(state.get("owner"))
        )


# --- Grant ----------------------------------------------------------------------------------


class Grant(Kind):
    def _target(self, inputs: Values) -> tuple[str, str, list[str]]:
        if inputs.get("objectType") != "database":
            raise ProviderError(f"{self.token}: the stand-in serves object_type database only")
        _refuse_unsupported(
            self, inputs, frozenset({"database", "role", "objectType", "privileges"})
        )
        return str(inputs["database"]), str(inputs["role"]), list(inputs.get("privileges") or [])

    def create(self, inputs: Values) -> tuple[str, Values]:
        database, role, privileges = self._target(inputs)
        pgsql.create_grant(SETTINGS.client(), database, role, privileges)
        id_ = pgsql.grant_id(role, database, "database")
        return id_, self.read(id_, inputs) or {}

    def read(self, id_: str, state: Values) -> Values | None:
        if not state:
            return None  # no Importer (module docstring)
        database, role, _ = self._target(state)
        privileges = pgsql.read_grant(SETTINGS.client(), database, role)
        if privileges is None:
            return None
        return {**state, "privileges": privileges}

    def update(self, id_: str, olds: Values, news: Values) -> Values:
        database, role, privileges = self._target(news)
        pgsql.create_grant(SETTINGS.client(), database, role, privileges)
        return self.read(id_, news) or {}

    def delete(self, id_: str, state: Values) -> None:
        database, role, _ = self._target(state)
        pgsql.delete_grant(SETTINGS.client(), database, role)


KINDS: tuple[Kind, ...] = (
    Role(
        ROLE,
        inputs=frozenset(
            {
                "assumeRole",
                "bypassRowLevelSecurity",
                "connectionLimit",
                "createDatabase",
                "createRole",
                "encrypted",
                "encryptedPassword",
                "idleInTransactionSessionTimeout",
                "inherit",
                "login",
                "name",
                "password",
                "passwordWo",
                "passwordWoVersion",
                "replication",
                "roles",
                "searchPaths",
                "skipDropRole",
                "skipReassignOwned",
                "statementTimeout",
                "superuser",
                "validUntil",
            }
        ),
        required=frozenset({"name"}),
        # resource_postgresql_role.go's Default values, and what Read stores for the
        # attributes without one (roles and search_path empty, the timeouts 0, assume_role
        # ""), so a read of an unchanged role equals the checked inputs (pgsql.ROLE_DEFAULTS).
        defaults={
            **{ROLE_READ[k]: v for k, v in pgsql.ROLE_DEFAULTS.items()},
            "encryptedPassword": True,
            "skipDropRole": False,
            "skipReassignOwned": False,
        },
        secret_outputs=frozenset({"password", "passwordWo"}),
        secret_inputs=frozenset({"password", "passwordWo"}),
    ),
    Database(
        DATABASE,
        inputs=frozenset(
            {
                "allowConnections",
                "alterObjectOwnership",
                "connectionLimit",
                "encoding",
                "isTemplate",
                "lcCollate",
                "lcCtype",
                "name",
                "owner",
                "tablespaceName",
                "template",
            }
        ),
        required=frozenset({"name"}),
        defaults={"allowConnections": True, "alterObjectOwnership": False, "connectionLimit": -1},
        outputs=("encoding", "isTemplate", "lcCollate", "lcCtype", "tablespaceName", "template"),
    ),
    Grant(
        GRANT,
        inputs=frozenset(
            {
                "columns",
                "database",
                "objectType",
                "objects",
                "privileges",
                "role",
                "schema",
                "withGrantOption",
            }
        ),
        required=frozenset({"database", "objectType", "privileges", "role"}),
        defaults={"withGrantOption": False},
    ),
)


class PostgresStandIn(StandIn):
    """The stand-in with the provider's configuration (module docstring)."""

    async def configure(self, request: p.ConfigureRequest) -> p.ConfigureResponse:
        args: Mapping[str, Any] = {k: plain(v) for k, v in request.args.items()}
        if not args:  # an engine that sends only the flat variables
            prefix = "postgresql:config:"
            args = {
                k[len(prefix) :]: v for k, v in request.variables.items() if k.startswith(prefix)
            }
        SETTINGS.values = {k: args[k] for k in CONFIG_KEYS if k in args}
        SETTINGS.configured = True
        return await super().configure(request)

    async def create(self, request: p.CreateRequest) -> p.CreateResponse:
        if request.preview and not SETTINGS.known:
            kind = self.kind(request.urn)
            unknown = {k: UNKNOWN for k in kind.inputs}
            return p.CreateResponse(resource_id="", properties=self._state(kind, unknown))
        return await super().create(request)


def main() -> None:
    from e2e.providers import plugin_version

    run("postgresql", plugin_version("postgresql"), KINDS, PostgresStandIn)

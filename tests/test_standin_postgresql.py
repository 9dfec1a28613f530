"""The lane's stand-in postgresql provider (``e2e/providers/postgresql.py``), driven as the
engine drives it (the plugin process, every call over the provider gRPC protocol), against a
real PostgreSQL 18 (tests/pg_server.py) reached through the lane's TLS front
(``e2e/pgtls.py``) with the provider's own settings: ``sslmode=verify-full`` and the lane CA
as ``sslrootcert``, a non-superuser admin with CREATEDB CREATEROLE (as RDS and IBM Cloud
Databases hand out), the tenant role for the owner provider.

The module starts a server of its own: other modules reset the session's server.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import psycopg
import pytest
from google.protobuf import empty_pb2
from psycopg import sql
from pulumi.provider.experimental.property_value import Computed, PropertyValue
from pulumi.runtime.proto import provider_pb2, provider_pb2_grpc
from pulumi.runtime.rpc import UNKNOWN as UNKNOWN_TEXT

from e2e import pgtls
from e2e.providers import install, plugin_version
from e2e.providers.base import plain, wrap
from gatewayctl.diff.rules import predict_one
from tests import pg_server

ROLE = "postgresql:index/role:Role"
DATABASE = "postgresql:index/database:Database"
GRANT = "postgresql:index/grant:Grant"
ADMIN, ADMIN_PASSWORD = "lane_admin", "admin-password-1"
DIFF_NONE = provider_pb2.DiffResponse.DIFF_NONE


def _marshal(values: dict[str, Any]) -> Any:
    return PropertyValue.marshal_map({k: wrap(v) for k, v in values.items()})


def values(struct: Any) -> dict[str, Any]:
    return {k: plain(v) for k, v in PropertyValue.unmarshal_map(struct).items()}


def secrets(struct: Any) -> set[str]:
    return {k for k, v in PropertyValue.unmarshal_map(struct).items() if v.is_secret}


class Lane:
    """The server, its TLS front and the lane CA written where ``sslrootcert`` names it."""

    def __init__(self, server: pg_server.Server, front: pgtls.Front, ca: Path) -> None:
        self.server, self.front, self.ca = server, front, ca

    def config(self, user: str, password: Any, database: str, **extra: Any) -> dict[str, Any]:
        return {
            "host": "localhost",
            "port": self.front.port,
            "username": user,
            "password": password,
            "database": database,
            "sslmode": "verify-full",
            "sslrootcert": str(self.ca),
            "superuser": False,
            **extra,
        }

    def login(self, user: str, password: str, database: str) -> str:
        """``user@database``, or the error, over TLS with verify-full."""
        try:
            with psycopg.connect(
                host="localhost",
                port=self.front.port,
                user=user,
                password=password,
                dbname=database,
                sslmode="verify-full",
                sslrootcert=str(self.ca),
                connect_timeout=10,
            ) as conn:
                row = conn.execute("SELECT current_user, current_database()").fetchone()
                assert row is not None
                return f"{row[0]}@{row[1]}"
        except psycopg.OperationalError as error:
            return str(error).splitlines()[-1] if "FATAL" not in str(error) else "refused"


@pytest.fixture(scope="module")
def lane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lane]:
    try:
        server = pg_server.start()
    except pg_server.ServerUnavailableError as reason:
        pytest.skip(f"the embedded PostgreSQL server cannot start on this machine: {reason}")
    try:
        with server.superuser() as su:
            su.execute(
                sql.SQL("CREATE ROLE {} LOGIN CREATEROLE CREATEDB PASSWORD {}").format(
                    sql.Identifier(ADMIN), sql.Literal(ADMIN_PASSWORD)
                )
            )
        with pgtls.running(server.port) as front:
            ca = tmp_path_factory.mktemp("certs") / "lane-ca.pem"
            ca.write_text(front.authority.ca_pem)
            yield Lane(server, front, ca)
    finally:
        pg_server.stop(server)


class Plugin:
    def __init__(self, stub: Any) -> None:
        self.stub = stub

    @staticmethod
    def urn(type_: str, name: str = "r") -> str:
        return f"urn:pulumi:s::p::{type_}::{name}"

    def configure(self, config: dict[str, Any]) -> None:
        done = self.stub.Configure(
            provider_pb2.ConfigureRequest(args=_marshal(config), acceptSecrets=True)
        )
        assert done.acceptSecrets and done.supportsPreview

    def check(self, type_: str, news: dict[str, Any]) -> Any:
        return self.stub.Check(
            provider_pb2.CheckRequest(urn=self.urn(type_), news=_marshal(news), olds=_marshal({}))
        )

    def checked(self, type_: str, news: dict[str, Any]) -> Any:
        done = self.check(type_, news)
        assert list(done.failures) == []
        return done.inputs

    def create(self, type_: str, inputs: dict[str, Any], *, preview: bool = False) -> Any:
        return self.stub.Create(
            provider_pb2.CreateRequest(
                urn=self.urn(type_), properties=self.checked(type_, inputs), preview=preview
            )
        )

    def read(self, type_: str, id_: str, state: Any = None) -> Any:
        return self.stub.Read(
            provider_pb2.ReadRequest(urn=self.urn(type_), id=id_, properties=state)
        )

    def diff(self, type_: str, state: Any, news: dict[str, Any]) -> Any:
        return self.stub.Diff(
            provider_pb2.DiffRequest(
                urn=self.urn(type_), id="x", olds=state, news=self.checked(type_, news)
            )
        )

    def update(self, type_: str, id_: str, state: Any, news: dict[str, Any]) -> Any:
        return self.stub.Update(
            provider_pb2.UpdateRequest(
                urn=self.urn(type_), id=id_, olds=state, news=self.checked(type_, news)
            )
        )

    def delete(self, type_: str, id_: str, state: Any) -> None:
        self.stub.Delete(provider_pb2.DeleteRequest(urn=self.urn(type_), id=id_, properties=state))


@contextlib.contextmanager
def started(directory: Path, config: dict[str, Any] | None) -> Iterator[Plugin]:
    """``pulumi-resource-postgresql`` as the engine starts it (one process per provider)."""
    script = install(directory) / "pulumi-resource-postgresql"
    proc = subprocess.Popen(
        [str(script), "127.0.0.1:1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = provider_pb2_grpc.ResourceProviderStub(channel)
            assert stub.GetPluginInfo(empty_pb2.Empty()).version == plugin_version("postgresql")
            plugin = Plugin(stub)
            if config is not None:
                plugin.configure(config)
            yield plugin
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture(scope="module")
def admin(lane: Lane, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Plugin]:
    """The cluster's admin provider (components/cluster.py: database postgres)."""
    config = lane.config(ADMIN, ADMIN_PASSWORD, "postgres")
    with started(tmp_path_factory.mktemp("plugins"), config) as plugin:
        yield plugin


def acl(lane: Lane, database: str) -> list[str]:
    with lane.server.superuser() as su:
        rows = su.execute(
            "SELECT (aclexplode(datacl)).grantee::regrole::text || ':' ||"
            " (aclexplode(datacl)).privilege_type FROM pg_database WHERE datname = %s",
            [database],
        ).fetchall()
    return sorted(str(r[0]) for r in rows)


ROLE_STATE = {
    "name": "gw_alpha",
    "login": True,
    "password": "first-password",
    "superuser": False,
    "inherit": True,
    "createRole": False,
    "createDatabase": False,
    "connectionLimit": -1,
    "validUntil": "infinity",
    "replication": False,
    "bypassRowLevelSecurity": False,
    "roles": [],
    "searchPaths": [],
    "statementTimeout": 0,
    "idleInTransactionSessionTimeout": 0,
    "assumeRole": "",
    "encryptedPassword": True,
    "skipDropRole": False,
    "skipReassignOwned": False,
}
DATABASE_STATE = {
    "name": "gw_alpha",
    "owner": "gw_alpha",
    "encoding": "UTF8",
    "lcCollate": "C",
    "lcCtype": "C",
    "tablespaceName": "pg_default",
    "connectionLimit": -1,
    "template": "template0",
    "allowConnections": True,
    "isTemplate": False,
    "alterObjectOwnership": False,
}
GRANT_INPUTS = {
    "database": "gw_alpha",
    "role": "public",
    "objectType": "database",
    "privileges": [],
}


def test_version_is_the_locked_sdk_package() -> None:
    assert plugin_version("postgresql") == "3.18.2"


def test_role_database_and_grant_made_read_updated_and_deleted(
    lane: Lane, admin: Plugin, tmp_path: Path
) -> None:
    role_inputs = {"name": "gw_alpha", "login": True, "password": "first-password"}
    role = admin.create(ROLE, role_inputs)
    assert role.id == "gw_alpha"
    assert values(role.properties) == ROLE_STATE
    assert secrets(role.properties) == {"password"}
    assert lane.login("gw_alpha", "first-password", "postgres") == "gw_alpha@postgres"

    database = admin.create(DATABASE, {"name": "gw_alpha", "owner": "gw_alpha"})
    assert (database.id, values(database.properties)) == ("gw_alpha", DATABASE_STATE)
    with lane.server.superuser() as su:
        # The admin keeps only the ADMIN OPTION PostgreSQL 16+ gives a CREATEROLE creator: no
        # INHERIT, no SET (createDatabase's temporary GRANT was revoked).
        assert su.execute(
            "SELECT pg_get_userbyid(member)::text, admin_option, inherit_option, set_option"
            " FROM pg_auth_members WHERE pg_get_userbyid(roleid) = 'gw_alpha'"
        ).fetchall() == [(ADMIN, True, False, False)]

    # The owner provider: the tenant role, on its own database.
    owner_config = lane.config("gw_alpha", "first-password", "gw_alpha")
    with started(tmp_path, owner_config) as owner:
        grant = owner.create(GRANT, GRANT_INPUTS)
        assert grant.id == "public_gw_alpha_database"
        assert values(grant.properties) == {**GRANT_INPUTS, "withGrantOption": False}
        assert acl(lane, "gw_alpha") == [
            "gw_alpha:CONNECT",
            "gw_alpha:CREATE",
            "gw_alpha:TEMPORARY",
        ]

        # Refresh: every read equals what create stored, and the inputs equal the checked ones.
        for plugin, type_, made, inputs in (
            (admin, ROLE, role, role_inputs),
            (admin, DATABASE, database, {"name": "gw_alpha", "owner": "gw_alpha"}),
            (owner, GRANT, grant, GRANT_INPUTS),
        ):
            read = plugin.read(type_, made.id, made.properties)
            assert (read.id, values(read.properties)) == (made.id, values(made.properties))
            assert plugin.diff(type_, read.properties, inputs).changes == DIFF_NONE

        # A password change is an update in place: ALTER ROLE ... PASSWORD.
        changed = {**role_inputs, "password": "second-password"}
        diff = admin.diff(ROLE, role.properties, changed)
        assert (list(diff.diffs), list(diff.replaces)) == (["password"], [])
        updated = admin.update(ROLE, role.id, role.properties, changed)
        assert values(updated.properties) == {**ROLE_STATE, "password": "second-password"}
        assert lane.login("gw_alpha", "first-password", "postgres") == "refused"
        assert lane.login("gw_alpha", "second-password", "gw_alpha") == "gw_alpha@gw_alpha"
        # The engine configures the owner provider again with the new password (its inputs).
        owner.configure(lane.config("gw_alpha", "second-password", "gw_alpha"))

        # Drift is read back: a privilege granted behind the provider's back.
        with lane.server.superuser() as su:
            su.execute("GRANT CONNECT ON DATABASE gw_alpha TO public")
        drifted = owner.read(GRANT, grant.id, grant.properties)
        assert values(drifted.properties)["privileges"] == ["CONNECT"]
        diff = owner.diff(GRANT, drifted.properties, GRANT_INPUTS)
        assert (list(diff.diffs), list(diff.replaces)) == (["privileges"], [])
        owner.update(GRANT, grant.id, drifted.properties, GRANT_INPUTS)
        assert values(owner.read(GRANT, grant.id, grant.properties).properties)["privileges"] == []

        owner.delete(GRANT, grant.id, grant.properties)
    admin.delete(DATABASE, database.id, database.properties)
    admin.delete(ROLE, role.id, updated.properties)
    gone = [admin.read(t, "gw_alpha", s).id for t, s in ((ROLE, role.properties),)]
    gone += [admin.read(DATABASE, "gw_alpha", database.properties).id]
    assert gone == ["", ""]
    assert lane.login("gw_alpha", "second-password", "postgres") == "refused"


def test_import_reads_a_role_and_database_by_name_and_finds_no_grant(
    lane: Lane, admin: Plugin
) -> None:
    with lane.server.superuser() as su:
        su.execute("CREATE ROLE gw_upstream LOGIN PASSWORD 'upstream-password'")
        su.execute("CREATE DATABASE gw_upstream OWNER gw_upstream")
    try:
        role = admin.read(ROLE, "gw_upstream")
        assert role.id == "gw_upstream"
        expected = {**ROLE_STATE, "name": "gw_upstream"}
        del expected["password"]  # never read from the server (readRolePassword)
        assert values(role.properties) == expected
        assert values(role.inputs) == expected
        database = admin.read(DATABASE, "gw_upstream")
        expected_db = {**DATABASE_STATE, "name": "gw_upstream", "owner": "gw_upstream"}
        del expected_db["template"]  # never read back
        assert (database.id, values(database.properties)) == ("gw_upstream", expected_db)
        # The declaration's password then differs: an update, not a replacement.
        diff = admin.diff(
            ROLE, role.properties, {"name": "gw_upstream", "login": True, "password": "x"}
        )
        assert (list(diff.diffs), list(diff.replaces)) == (["password"], [])
        # Grant has no importer.
        assert admin.read(GRANT, "public_gw_upstream_database").id == ""
        assert admin.read(ROLE, "gw_nobody").id == ""
    finally:
        with lane.server.superuser() as su:
            su.execute("DROP DATABASE gw_upstream")
            su.execute("DROP ROLE gw_upstream")


def test_a_server_certificate_from_another_ca_is_refused(lane: Lane, tmp_path: Path) -> None:
    other = tmp_path / "other-ca.pem"
    other.write_text(pgtls.make_ca("someone else").ca_pem)
    config = lane.config(ADMIN, ADMIN_PASSWORD, "postgres", sslrootcert=str(other))
    with started(tmp_path, config) as plugin, pytest.raises(grpc.RpcError) as refused:
        plugin.create(ROLE, {"name": "gw_never", "login": True, "password": "p"})
    assert "certificate verify failed" in str(refused.value.details())
    # The front asks every client for TLS, as a hostssl-only server does.
    config = lane.config(ADMIN, ADMIN_PASSWORD, "postgres", sslmode="disable")
    with started(tmp_path, config) as plugin, pytest.raises(grpc.RpcError) as refused:
        plugin.create(ROLE, {"name": "gw_never", "login": True, "password": "p"})
    assert "server closed the connection unexpectedly" in str(refused.value.details())
    assert lane.login("gw_never", "p", "postgres") == "refused"


def test_check_refuses_unknown_and_missing_inputs(admin: Plugin) -> None:
    failures = admin.check(ROLE, {"name": "x", "colour": "blue"}).failures
    assert [(f.property, f.reason) for f in failures] == [
        ("colour", f"colour is not an input of {ROLE}")
    ]
    failures = admin.check(GRANT, {"database": "d"}).failures
    assert sorted(f.property for f in failures) == ["objectType", "privileges", "role"]
    checked = values(admin.checked(DATABASE, {"name": "d"}))
    assert checked == {
        "name": "d",
        "allowConnections": True,
        "alterObjectOwnership": False,
        "connectionLimit": -1,
    }


def test_diff_replaces_as_the_schema_says(admin: Plugin) -> None:
    database = _marshal(DATABASE_STATE)
    same = {"name": "gw_alpha", "owner": "gw_alpha"}
    assert admin.diff(DATABASE, database, same).changes == DIFF_NONE
    owner = admin.diff(DATABASE, database, {**same, "owner": "other"})
    assert (list(owner.diffs), list(owner.replaces)) == (["owner"], [])
    encoding = admin.diff(DATABASE, database, {**same, "encoding": "LATIN1"})
    assert list(encoding.replaces) == ["encoding"] and encoding.deleteBeforeReplace is False
    grant = _marshal({**GRANT_INPUTS, "withGrantOption": False})
    moved = admin.diff(GRANT, grant, {**GRANT_INPUTS, "role": "gw_alpha"})
    assert list(moved.replaces) == ["role"]
    # The offline prediction reads the same table.
    assert predict_one(GRANT, {"role": "public"}, {"role": "gw_alpha"}) == ("replace", ("role",))
    predicted = predict_one(ROLE, {"password": "a"}, {"password": "b"})
    assert predicted is not None and predicted[0] == "update"


def test_unknown_configuration_previews_unknown_outputs(lane: Lane, tmp_path: Path) -> None:
    """The owner provider on a first preview: its password is another resource's output."""
    config = lane.config("gw_new", Computed(), "gw_new")
    with started(tmp_path, config) as plugin:
        previewed = plugin.create(GRANT, GRANT_INPUTS, preview=True)
        assert previewed.id == ""
        assert previewed.properties["privileges"] == UNKNOWN_TEXT
        with pytest.raises(grpc.RpcError) as refused:
            plugin.create(GRANT, GRANT_INPUTS)
        assert "configuration is unknown" in str(refused.value.details())

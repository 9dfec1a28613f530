"""The lane's stand-in keycloak provider (``e2e/providers/keycloak.py``) without a Keycloak: the
plugin started as the engine starts it, its Check, Diff, preview and import-id rules over the
provider gRPC protocol, the request bodies it builds from the program's inputs, and its
log-in, look-ups and import against a small fake of the admin API that records each request.
What it does against the real Keycloak is tests/e2e/test_e2e_d_keycloak.py's."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qs

import grpc
import pytest
from pulumi.provider.experimental.property_value import Computed, PropertyValue
from pulumi.runtime.proto import provider_pb2

from e2e.providers.base import ProviderError, plain
from e2e.providers.keycloak import KINDS, URLS_ENV, Client, Mapper, Role, loopback
from gatewayctl.diff.rules import predict_one
from tests.test_standin_providers import Plugin, _marshal, secrets, started, values

CLIENT = "keycloak:openid/client:Client"
ROLE = "keycloak:index/role:Role"
AUDIENCE = "keycloak:openid/audienceProtocolMapper:AudienceProtocolMapper"
ROLES_CLAIM = "keycloak:openid/userClientRoleProtocolMapper:UserClientRoleProtocolMapper"
GROUP_ROLES = "keycloak:index/groupRoles:GroupRoles"
SCOPE_MAPPING = "keycloak:index/genericRoleMapper:GenericRoleMapper"
DEFAULT_SCOPES = "keycloak:openid/clientDefaultScopes:ClientDefaultScopes"
URL = "https://keycloak.example.test"
KINDS_BY_TOKEN = {k.token: k for k in KINDS}

PUBLIC_CLIENT = {
    # What components/keycloak_client.py registers for a gateway's client.
    "realmId": "r",
    "clientId": "openshell-g",
    "name": "openshell-g",
    "enabled": True,
    "accessType": "PUBLIC",
    "standardFlowEnabled": True,
    "directAccessGrantsEnabled": True,
    "implicitFlowEnabled": False,
    "serviceAccountsEnabled": False,
    "fullScopeAllowed": False,
    "validRedirectUris": ["http://localhost:*", "http://127.0.0.1:*"],
    "pkceCodeChallengeMethod": "S256",
    "oauth2DeviceAuthorizationGrantEnabled": True,
}


class FakeAdmin(http.server.BaseHTTPRequestHandler):
    """Answers ``routes[(method, path-with-query)]``; records every request."""

    routes: ClassVar[dict[tuple[str, str], tuple[int, Any]]] = {}
    seen: ClassVar[list[tuple[str, str, Any]]] = []
    url: ClassVar[str] = ""

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length).decode() if length else ""
        body: Any = parse_qs(raw) if "form" in (self.headers.get("Content-Type") or "") else raw
        if raw and not isinstance(body, dict):
            body = json.loads(raw)
        self.seen.append((self.command, self.path, body))
        status, answer = self.routes.get((self.command, self.path), (404, {"error": "none"}))
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_DELETE = _answer  # noqa: N815

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def fake() -> Iterator[type[FakeAdmin]]:
    FakeAdmin.routes = {
        ("POST", "/realms/r/protocol/openid-connect/token"): (200, {"access_token": "t"}),
    }
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeAdmin)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    FakeAdmin.url = f"http://127.0.0.1:{server.server_address[1]}"
    yield FakeAdmin
    server.shutdown()


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory, fake: type[FakeAdmin]) -> Iterator[Plugin]:
    env = {URLS_ENV: json.dumps({URL: fake.url})}
    config = {
        "url": URL,
        "realm": "r",
        "clientId": "provisioner",
        "clientSecret": "s3cret",
        "basePath": "",
    }
    with started("keycloak", tmp_path_factory.mktemp("plugins"), env, config) as served:
        yield served


def test_check_fills_the_schema_defaults_the_program_leaves_out(plugin: Plugin) -> None:
    checked = plugin.check(CLIENT, PUBLIC_CLIENT)
    assert list(checked.failures) == []
    assert values(checked.inputs) == {
        **PUBLIC_CLIENT,
        # resource_keycloak_openid_client.go: the `Default`s of what the program leaves out
        "clientAuthenticatorType": "client-secret",
        "useRefreshTokens": True,
        "useRefreshTokensClientCredentials": False,
        "backchannelLogoutSessionRequired": True,
        "alwaysDisplayInConsole": False,
        "import": False,
        # a TypeSet, sorted
        "validRedirectUris": ["http://127.0.0.1:*", "http://localhost:*"],
    }
    mapper = plugin.check(
        ROLES_CLAIM, {"realmId": "r", "clientId": "c", "name": "n", "claimName": "x.roles"}
    )
    assert values(mapper.inputs) == {
        "realmId": "r",
        "clientId": "c",
        "name": "n",
        "claimName": "x.roles",
        "addToIdToken": True,
        "addToAccessToken": True,
        "addToUserinfo": True,
        "claimValueType": "String",
        "multivalued": False,
    }
    roles = plugin.check(GROUP_ROLES, {"realmId": "r", "groupId": "g", "roleIds": ["b", "a"]})
    assert values(roles.inputs) == {
        "realmId": "r",
        "groupId": "g",
        "roleIds": ["a", "b"],
        "exhaustive": True,
    }


def test_check_refuses_what_the_type_lacks_or_needs(plugin: Plugin) -> None:
    failures = plugin.check(CLIENT, {"realmId": "r", "clientId": "c", "colour": "blue"}).failures
    assert [(f.property, f.reason) for f in failures] == [
        ("colour", f"colour is not an input of {CLIENT}"),
        ("accessType", "Missing required argument accessType"),
    ]


def _state(type_: str, inputs: dict[str, Any], outputs: dict[str, Any] | None = None) -> Any:
    from e2e.providers.base import wrap

    kind = KINDS_BY_TOKEN[type_]
    full = {**dict(kind.defaults), **inputs, **(outputs or {})}
    return PropertyValue.marshal_map({k: wrap(v) for k, v in full.items()})


def test_diff_replaces_on_the_force_new_table_and_updates_the_rest(plugin: Plugin) -> None:
    checked = values(plugin.check(CLIENT, PUBLIC_CLIENT).inputs)
    # What Read put in the state: the server's values of what the program left out.
    state = _state(
        CLIENT,
        checked,
        {"webOrigins": [], "description": "", "clientSecret": "", "serviceAccountUserId": ""},
    )
    same = plugin.diff(CLIENT, state, PUBLIC_CLIENT)
    assert same.changes == provider_pb2.DiffResponse.DIFF_NONE
    reordered = {**PUBLIC_CLIENT, "validRedirectUris": list(reversed(checked["validRedirectUris"]))}
    assert plugin.diff(CLIENT, state, reordered).changes == provider_pb2.DiffResponse.DIFF_NONE
    moved = plugin.diff(CLIENT, state, {**PUBLIC_CLIENT, "validRedirectUris": ["http://a/*"]})
    assert (list(moved.diffs), list(moved.replaces)) == (["validRedirectUris"], [])
    realm = plugin.diff(CLIENT, state, {**PUBLIC_CLIENT, "realmId": "other"})
    assert list(realm.replaces) == ["realmId"]
    assert realm.deleteBeforeReplace is False
    role = {"realmId": "r", "clientId": "c", "name": "openshell-user", "description": "d"}
    role_state = _state(ROLE, role)
    assert list(plugin.diff(ROLE, role_state, {**role, "clientId": "c2"}).replaces) == ["clientId"]
    renamed = plugin.diff(ROLE, role_state, {**role, "description": "e"})
    assert (list(renamed.diffs), list(renamed.replaces)) == (["description"], [])
    grant = {"realmId": "r", "groupId": "g", "roleIds": ["a"], "exhaustive": False}
    widened = plugin.diff(GROUP_ROLES, _state(GROUP_ROLES, grant), {**grant, "roleIds": ["a", "b"]})
    assert (list(widened.diffs), list(widened.replaces)) == (["roleIds"], [])
    scope = {"realmId": "r", "clientId": "c", "roleId": "x"}
    moved_role = plugin.diff(SCOPE_MAPPING, _state(SCOPE_MAPPING, scope), {**scope, "roleId": "y"})
    assert list(moved_role.replaces) == ["roleId"]
    # The offline prediction reads the same table.
    assert predict_one(ROLE, {"clientId": "c"}, {"clientId": "c2"}) == ("replace", ("clientId",))
    predicted = predict_one(GROUP_ROLES, {"roleIds": ["a"]}, {"roleIds": ["a", "b"]})
    assert predicted is not None and predicted[0] == "update"


def test_preview_leaves_the_computed_outputs_unknown_and_the_secret_secret(
    plugin: Plugin,
) -> None:
    previewed = plugin.create(CLIENT, {**PUBLIC_CLIENT, "accessType": "CONFIDENTIAL"}, preview=True)
    unmarshalled = PropertyValue.unmarshal_map(previewed.properties)
    for key in ("clientSecret", "serviceAccountUserId", "resourceServerId"):
        assert isinstance(plain(unmarshalled[key]), Computed)
    assert "clientSecret" in secrets(previewed.properties)
    assert previewed.id == ""


def test_request_bodies_are_built_from_the_inputs() -> None:
    kind = KINDS_BY_TOKEN[CLIENT]
    assert isinstance(kind, Client)
    checked = {**dict(kind.defaults), **PUBLIC_CLIENT}
    assert kind.body(checked, "uuid-1") == {
        "id": "uuid-1",
        "clientId": "openshell-g",
        "name": "openshell-g",
        "protocol": "openid-connect",
        "clientAuthenticatorType": "client-secret",
        "enabled": True,
        "description": "",
        "publicClient": True,
        "bearerOnly": False,
        "standardFlowEnabled": True,
        "implicitFlowEnabled": False,
        "directAccessGrantsEnabled": True,
        "serviceAccountsEnabled": False,
        "redirectUris": ["http://localhost:*", "http://127.0.0.1:*"],
        "webOrigins": [],
        "fullScopeAllowed": False,
        "alwaysDisplayInConsole": False,
        "attributes": {
            "pkce.code.challenge.method": "S256",
            "oauth2.device.authorization.grant.enabled": "true",
            "use.refresh.tokens": "true",
            "client_credentials.use_refresh_token": "false",
            "backchannel.logout.session.required": "true",
        },
    }
    audience = KINDS_BY_TOKEN[AUDIENCE]
    assert isinstance(audience, Mapper)
    inputs = {
        **dict(audience.defaults),
        "realmId": "r",
        "clientId": "c",
        "name": "audience",
        "includedClientAudience": "openshell-g",
        "addToIdToken": False,
    }
    assert audience.body(inputs) == {
        "name": "audience",
        "protocol": "openid-connect",
        "protocolMapper": "oidc-audience-mapper",
        "config": {
            "included.client.audience": "openshell-g",
            "included.custom.audience": "",
            "id.token.claim": "false",
            "access.token.claim": "true",
            "introspection.token.claim": "true",
        },
    }
    role = KINDS_BY_TOKEN[ROLE]
    assert isinstance(role, Role)
    assert role.body({"realmId": "r", "clientId": "c", "name": "n", "description": "d"}) == {
        "name": "n",
        "description": "d",
        "clientRole": True,
        "containerId": "c",
        "composite": False,
    }


@pytest.mark.parametrize(
    ("type_", "id_", "message"),
    [
        (CLIENT, "uuid-only", "Supported import format: {{realmId}}/{{openidClientId}}"),
        (ROLE, "r/a/b", "Supported import format: {{realm}}/{{roleId}}."),
        (GROUP_ROLES, "r", "Supported import format: {{realm}}/{{groupId}}."),
        (DEFAULT_SCOPES, "r/", "Supported import format: {{realmId}}/{{clientId}}"),
        (AUDIENCE, "r/client/c", "{{realmId}}/client/{{clientId}}/{{protocolMapperId}}"),
        (AUDIENCE, "r/group/c/m", "{{realmId}}/client/{{clientId}}/{{protocolMapperId}}"),
        (SCOPE_MAPPING, "r/client/c/x/o/id", "scope-mappings/{{roleClientId}}/{{roleId}}"),
    ],
)
def test_an_import_id_of_another_form_is_refused(
    plugin: Plugin, type_: str, id_: str, message: str
) -> None:
    with pytest.raises(grpc.RpcError) as refused:
        plugin.stub.Read(provider_pb2.ReadRequest(urn=plugin.urn(type_), id=id_))
    assert message in str(refused.value.details())


def test_import_reads_the_client_by_realm_and_uuid(plugin: Plugin, fake: type[FakeAdmin]) -> None:
    client = {
        "id": "u-1",
        "clientId": "legacy",
        "name": "",
        "enabled": True,
        "publicClient": True,
        "clientAuthenticatorType": "client-secret",
        "standardFlowEnabled": True,
        "redirectUris": ["http://b/*", "http://a/*"],
        "webOrigins": [],
        "fullScopeAllowed": True,
        "attributes": {"pkce.code.challenge.method": "S256"},
    }
    fake.routes[("GET", "/admin/realms/r/clients/u-1")] = (200, client)
    fake.routes[("GET", "/admin/realms/r/clients/u-1/client-secret")] = (
        200,
        {"type": "secret", "value": "generated"},
    )
    read = plugin.stub.Read(provider_pb2.ReadRequest(urn=plugin.urn(CLIENT), id="r/u-1"))
    assert read.id == "u-1"  # resourceKeycloakOpenidClientImport: the id is the uuid
    state = values(read.properties)
    assert (state["realmId"], state["clientId"], state["accessType"]) == ("r", "legacy", "PUBLIC")
    assert state["validRedirectUris"] == ["http://a/*", "http://b/*"]
    assert (state["import"], state["useRefreshTokens"], state["clientSecret"]) == (
        False,
        False,
        "generated",
    )
    assert "clientSecret" in secrets(read.properties)
    assert values(read.inputs)["pkceCodeChallengeMethod"] == "S256"
    # Logged in as the provider does: client credentials of the configured client.
    token = next(s for s in fake.seen if s[1].endswith("/openid-connect/token"))
    assert token[2] == {
        "grant_type": ["client_credentials"],
        "client_id": ["provisioner"],
        "client_secret": ["s3cret"],
    }


def test_a_client_gone_from_keycloak_is_gone_from_the_state(plugin: Plugin) -> None:
    state = _state(CLIENT, {**PUBLIC_CLIENT, "import": False})
    read = plugin.stub.Read(
        provider_pb2.ReadRequest(urn=plugin.urn(CLIENT), id="u-gone", properties=state)
    )
    assert read.id == ""


def _invoke(plugin: Plugin, token: str, args: dict[str, Any]) -> Any:
    return plugin.stub.Invoke(provider_pb2.InvokeRequest(tok=token, args=_marshal(args)))


def test_the_look_ups_ask_the_admin_api_as_the_provider_does(
    plugin: Plugin, fake: type[FakeAdmin]
) -> None:
    group = {"id": "g-1", "name": "admins", "path": "/ops/admins", "parentId": "g-0"}
    fake.routes[("GET", "/admin/realms/r/group-by-path/ops/admins")] = (200, group)
    found = _invoke(
        plugin, "keycloak:index/getGroup:getGroup", {"realmId": "r", "groupPath": "/ops/admins"}
    )
    assert values(getattr(found, "return")) == {
        "id": "g-1",
        "realmId": "r",
        "name": "admins",
        "groupPath": "/ops/admins",
        "path": "/ops/admins",
        "parentId": "g-0",
        "attributes": {},
    }
    users = [
        {"id": "u-2", "username": "sam000", "enabled": True},
        {"id": "u-1", "username": "sam", "enabled": True},
    ]
    fake.routes[("GET", "/admin/realms/r/users?username=sam")] = (200, users)
    user = _invoke(plugin, "keycloak:index/getUser:getUser", {"realmId": "r", "username": "sam"})
    assert values(getattr(user, "return"))["id"] == "u-1"
    with pytest.raises(grpc.RpcError) as missing:
        _invoke(plugin, "keycloak:index/getGroup:getGroup", {"realmId": "r", "groupPath": "/nope"})
    assert "group not found at path: /nope" in str(missing.value.details())
    fake.routes[("GET", "/admin/realms/r/users?username=lee")] = (200, users)
    with pytest.raises(grpc.RpcError) as nobody:
        _invoke(plugin, "keycloak:index/getUser:getUser", {"realmId": "r", "username": "lee"})
    assert "user with username lee not found" in str(nobody.value.details())


def test_the_stack_url_is_sent_to_the_loopback_named_for_it() -> None:
    table = {URLS_ENV: json.dumps({URL: "http://127.0.0.1:9"})}
    assert loopback(URL + "/", table) == "http://127.0.0.1:9"
    with pytest.raises(ProviderError) as unknown:
        loopback("https://elsewhere.test", table)
    assert str(unknown.value) == (
        f"keycloak stand-in: no loopback Keycloak for https://elsewhere.test in ${URLS_ENV}"
    )


def test_every_type_the_program_registers_is_served() -> None:
    from gatewayctl.diff.rules import BRIDGED_FORCE_NEW

    keycloak = {t for t in BRIDGED_FORCE_NEW if t.startswith("keycloak:")}
    assert keycloak == set(KINDS_BY_TOKEN)
    assert Path(__file__).exists()

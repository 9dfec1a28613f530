"""What the keycloak provider would call, made against the real Keycloak (e2e/keycloak.py).

The provider (pulumi-keycloak 6.14.1, which bridges keycloak/terraform-provider-keycloak
v5.9.0, commit f1724f757eb5) cannot be built here (e2e/engine.py). This module is the nearest
real thing: it makes the admin REST calls that provider makes, from exactly the inputs the
program registered (``HybridMonitor.mock.recording``), with the registered provider's own
credentials. Each function names the provider source it follows. Only the inputs the program
sets are mapped; every other field is left to the provider's schema default, which is
Keycloak's default for the fields involved here (noted where it is not).

The one liberty is the host: the provider's ``url`` is the stack's (an https name that does
not resolve here); requests go to the loopback server, whose realm ``frontendUrl`` is that
name, so Keycloak issues tokens under it exactly as behind its real host name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import requests

from e2e.keycloak import Keycloak
from gatewayctl.engine.offline import RecordedResource, Recording, is_secret
from gatewayctl.engine.placeholders import GET_GROUP, GET_USER

CLIENT = "keycloak:openid/client:Client"
DEFAULT_SCOPES = "keycloak:openid/clientDefaultScopes:ClientDefaultScopes"
ROLE = "keycloak:index/role:Role"
AUDIENCE = "keycloak:openid/audienceProtocolMapper:AudienceProtocolMapper"
SUB = "keycloak:openid/subProtocolMapper:SubProtocolMapper"
CLIENT_ROLES = "keycloak:openid/userClientRoleProtocolMapper:UserClientRoleProtocolMapper"
GROUP_ROLES = "keycloak:index/groupRoles:GroupRoles"
USER_ROLES = "keycloak:index/userRoles:UserRoles"
KEYCLOAK_TYPES = frozenset(
    {CLIENT, DEFAULT_SCOPES, ROLE, AUDIENCE, SUB, CLIENT_ROLES, GROUP_ROLES, USER_ROLES}
)
"""Every keycloak resource type the program registers for a gateway's sign-in."""


class LookupFailedError(Exception):
    """A data source found nothing: the provider's own diagnostic text."""


def plain(value: Any) -> Any:
    """A registered input without its secret wrapper (the wire form the SDK sends)."""
    return value["value"] if is_secret(value) else value


def _ok(response: requests.Response, *codes: int) -> requests.Response:
    if response.status_code not in codes:
        raise AssertionError(
            f"{response.request.method} {response.url}: {response.status_code}"
            f" {response.text[:500]}"
        )
    return response


@dataclass
class ProviderSession:
    """The provider signed in as it signs in (terraform-provider-keycloak ``keycloak/``
    ``keycloak_client.go``, ``login``: a client id and secret with no user name is the
    client-credentials grant against the provider's ``realm``)."""

    keycloak: Keycloak
    realm: str
    client_id: str
    client_secret: str
    _token: str | None = field(default=None, repr=False)

    @classmethod
    def of(cls, keycloak: Keycloak, provider_inputs: Mapping[str, Any]) -> ProviderSession:
        return cls(
            keycloak,
            realm=str(provider_inputs["realm"]),
            client_id=str(plain(provider_inputs["clientId"])),
            client_secret=str(plain(provider_inputs["clientSecret"])),
        )

    def token(self) -> str:
        if self._token is None:
            self._token = self.keycloak.token(
                realm=self.realm,
                grant_type="client_credentials",
                client_id=self.client_id,
                client_secret=self.client_secret,
            )
        return self._token

    def call(self, method: str, path: str, *codes: int, **kwargs: Any) -> requests.Response:
        return _ok(self.keycloak.admin(method, path, self.token(), **kwargs), *codes)


# --- data sources (the program's invokes) -----------------------------------------------------


def get_group(session: ProviderSession, realm: str, path: str) -> dict[str, Any]:
    """``data.keycloak_group`` with ``group_path`` (``keycloak/group.go``, ``GetGroupByPath``:
    GET ``/realms/{realm}/group-by-path/{escaped segments}``; a 404 is "group not found at
    path: <path>")."""
    segments = "/".join(quote(s, safe="") for s in path.strip("/").split("/"))
    response = session.keycloak.admin("GET", f"/{realm}/group-by-path/{segments}", session.token())
    if response.status_code == 404:
        raise LookupFailedError(f"group not found at path: {path}")
    group = _ok(response, 200).json()
    return {
        "id": group["id"],
        "realmId": realm,
        "name": group["name"],
        "path": group["path"],
        "parentId": group.get("parentId", ""),
        "attributes": group.get("attributes", {}),
    }


def get_user(session: ProviderSession, realm: str, username: str) -> dict[str, Any]:
    """``data.keycloak_user`` (``keycloak/user.go``, ``GetUserByUsername``: GET
    ``/realms/{realm}/users?username=<name>`` with no ``exact`` and no ``max``, then the first
    result whose user name equals the name; none is "user with username <name> not found",
    ``provider/data_source_keycloak_user.go``). Keycloak answers that query with at most 100
    users (its default ``max``) whose names contain the name, in user-name order."""
    users = session.call(
        "GET", f"/{realm}/users", 200, params={"username": username.replace("\\", "\\\\")}
    ).json()
    for user in users:
        if user["username"] == username:
            return {
                "id": user["id"],
                "realmId": realm,
                "username": user["username"],
                "enabled": user["enabled"],
            }
    raise LookupFailedError(f"user with username {username} not found")


def lookups(keycloak: Keycloak) -> dict[str, Any]:
    """The program's two Keycloak invokes answered by the real server (``HybridMonitor``)."""

    def answer(token: str, args: dict[str, Any], provider: dict[str, Any]) -> dict[str, Any]:
        session = ProviderSession.of(keycloak, provider)
        realm = str(args["realmId"])
        if token == GET_GROUP:
            return get_group(session, realm, str(args["groupPath"]))
        return get_user(session, realm, str(args["username"]))

    return {GET_GROUP: answer, GET_USER: answer}


# --- resources ------------------------------------------------------------------------------


def _bool(value: Any) -> str:
    return "true" if value else "false"


@dataclass
class Created:
    """Keycloak's ids of what was created, by the mock id the program's references carry."""

    ids: dict[str, str] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)

    def real(self, mock_id: Any) -> str:
        return self.ids.get(str(mock_id), str(mock_id))


def create(session: ProviderSession, recording: Recording) -> Created:
    """Every keycloak resource of ``recording``, created in dependency order as the engine
    would (client; its scopes, roles and mappers; then the role mappings)."""
    made = Created()
    order = [CLIENT, DEFAULT_SCOPES, ROLE, AUDIENCE, SUB, CLIENT_ROLES, GROUP_ROLES, USER_ROLES]
    resources = [r for r in recording.resources.values() if r.type in KEYCLOAK_TYPES]
    for type_ in order:
        for resource in resources:
            if resource.type == type_:
                _CREATE[type_](session, resource, made)
                made.calls.append(f"{type_} {resource.name}")
    return made


def _client(session: ProviderSession, r: RecordedResource, made: Created) -> None:
    """``keycloak_openid_client`` (``provider/resource_keycloak_openid_client.go``,
    ``getOpenidClientFromData``; ``keycloak/openid_client.go``, ``NewOpenidClient``: POST
    ``/realms/{realm}/clients``, the id from the Location header). ``access_type`` PUBLIC is
    ``publicClient`` true, ``bearerOnly`` false; PKCE and the device grant are attributes."""
    i = r.inputs
    body = {
        "clientId": i["clientId"],
        "name": i.get("name", ""),
        "enabled": i["enabled"],
        "publicClient": i["accessType"] == "PUBLIC",
        "bearerOnly": i["accessType"] == "BEARER-ONLY",
        "standardFlowEnabled": i["standardFlowEnabled"],
        "implicitFlowEnabled": i["implicitFlowEnabled"],
        "directAccessGrantsEnabled": i["directAccessGrantsEnabled"],
        "serviceAccountsEnabled": i["serviceAccountsEnabled"],
        "fullScopeAllowed": i["fullScopeAllowed"],
        "redirectUris": list(i["validRedirectUris"]),
        "attributes": {
            "pkce.code.challenge.method": i["pkceCodeChallengeMethod"],
            "oauth2.device.authorization.grant.enabled": _bool(
                i["oauth2DeviceAuthorizationGrantEnabled"]
            ),
        },
    }
    response = session.call("POST", f"/{i['realmId']}/clients", 201, json=body)
    made.ids[f"{r.name}-id"] = response.headers["Location"].rsplit("/", 1)[-1]


def _default_scopes(session: ProviderSession, r: RecordedResource, made: Created) -> None:
    """``keycloak_openid_client_default_scopes`` (``provider/resource_keycloak_openid_client_
    default_scopes.go``, create: ``AttachOpenidClientDefaultScopes`` of the listed names, then
    ``DetachOpenidClientDefaultScopes`` of every other default scope of the client;
    ``keycloak/openid_client.go``: PUT/DELETE ``/clients/{id}/default-client-scopes/{scope}``)."""
    realm, client = r.inputs["realmId"], made.real(r.inputs["clientId"])
    wanted = set(r.inputs["defaultScopes"])
    scopes = session.call("GET", f"/{realm}/client-scopes", 200).json()
    by_name = {s["name"]: s["id"] for s in scopes if s.get("protocol") == "openid-connect"}
    for name in sorted(wanted):
        session.call("PUT", f"/{realm}/clients/{client}/default-client-scopes/{by_name[name]}", 204)
    attached = session.call("GET", f"/{realm}/clients/{client}/default-client-scopes", 200).json()
    for scope in attached:
        if scope["name"] not in wanted:
            session.call(
                "DELETE", f"/{realm}/clients/{client}/default-client-scopes/{scope['id']}", 204
            )


def _role(session: ProviderSession, r: RecordedResource, made: Created) -> None:
    """``keycloak_role`` of a client (``keycloak/role.go``, ``CreateRole``: POST
    ``/clients/{id}/roles``, then GET it by name for its id)."""
    realm, client = r.inputs["realmId"], made.real(r.inputs["clientId"])
    body = {"name": r.inputs["name"], "description": r.inputs.get("description", "")}
    session.call("POST", f"/{realm}/clients/{client}/roles", 201, json=body)
    role = session.call("GET", f"/{realm}/clients/{client}/roles/{quote(body['name'])}", 200)
    made.ids[f"{r.name}-id"] = role.json()["id"]


def _mapper(
    session: ProviderSession, r: RecordedResource, made: Created, kind: str, config: dict[str, str]
) -> None:
    """A protocol mapper of a client (``keycloak/generic_protocol_mapper.go``: POST
    ``/clients/{id}/protocol-mappers/models``), its config as the mapper's
    ``convertToGenericProtocolMapper`` writes it (``keycloak/protocol_mapper.go`` names)."""
    realm, client = r.inputs["realmId"], made.real(r.inputs["clientId"])
    body = {"name": r.inputs["name"], "protocol": "openid-connect", "protocolMapper": kind}
    session.call(
        "POST",
        f"/{realm}/clients/{client}/protocol-mappers/models",
        201,
        json={**body, "config": config},
    )


def _audience(session: ProviderSession, r: RecordedResource, made: Created) -> None:
    """``keycloak/openid_audience_protocol_mapper.go``; schema defaults true for the three
    ``add_to_*`` (``provider/resource_keycloak_openid_audience_protocol_mapper.go``)."""
    i = r.inputs
    config = {
        "id.token.claim": _bool(i.get("addToIdToken", True)),
        "access.token.claim": _bool(i.get("addToAccessToken", True)),
        "introspection.token.claim": _bool(i.get("addToTokenIntrospection", True)),
        "included.client.audience": i.get("includedClientAudience", ""),
        "included.custom.audience": i.get("includedCustomAudience", ""),
    }
    _mapper(session, r, made, "oidc-audience-mapper", config)


def _sub(session: ProviderSession, r: RecordedResource, made: Created) -> None:
    """``keycloak/openid_sub_protocol_mapper.go``; schema defaults true."""
    i = r.inputs
    config = {
        "access.token.claim": _bool(i.get("addToAccessToken", True)),
        "introspection.token.claim": _bool(i.get("addToTokenIntrospection", True)),
    }
    _mapper(session, r, made, "oidc-sub-mapper", config)


def _client_roles(session: ProviderSession, r: RecordedResource, made: Created) -> None:
    """``keycloak/openid_user_client_role_protocol_mapper.go``; schema defaults: the three
    ``add_to_*`` true, ``claim_value_type`` String, ``multivalued`` false, prefix empty."""
    i = r.inputs
    config = {
        "id.token.claim": _bool(i.get("addToIdToken", True)),
        "access.token.claim": _bool(i.get("addToAccessToken", True)),
        "userinfo.token.claim": _bool(i.get("addToUserinfo", True)),
        "claim.name": i["claimName"],
        "jsonType.label": i.get("claimValueType", "String"),
        "multivalued": _bool(i.get("multivalued", False)),
        "usermodel.clientRoleMapping.clientId": i.get("clientIdForRoleMappings", ""),
        "usermodel.clientRoleMapping.rolePrefix": i.get("clientRolePrefix", ""),
    }
    _mapper(session, r, made, "oidc-usermodel-client-role-mapper", config)


def _grant(session: ProviderSession, r: RecordedResource, made: Created, principal: str) -> None:
    """``keycloak_group_roles`` / ``keycloak_user_roles`` (``provider/resource_keycloak_group_
    roles.go``, create: each role id looked up with ``GetRole`` (GET ``/roles-by-id/{id}``),
    client roles POSTed per client to ``/{groups|users}/{id}/role-mappings/clients/{client}``;
    ``exhaustive`` false removes nothing)."""
    realm = r.inputs["realmId"]
    owner = r.inputs["groupId" if principal == "groups" else "userId"]
    roles = [
        session.call("GET", f"/{realm}/roles-by-id/{made.real(i)}", 200).json()
        for i in r.inputs["roleIds"]
    ]
    by_client: dict[str, list[dict[str, Any]]] = {}
    for role in roles:
        assert role["clientRole"], role
        by_client.setdefault(role["containerId"], []).append(role)
    for client, held in sorted(by_client.items()):
        session.call(
            "POST", f"/{realm}/{principal}/{owner}/role-mappings/clients/{client}", 204, json=held
        )


def _group_roles(session: ProviderSession, r: RecordedResource, made: Created) -> None:
    _grant(session, r, made, "groups")


def _user_roles(session: ProviderSession, r: RecordedResource, made: Created) -> None:
    _grant(session, r, made, "users")


_CREATE: dict[str, Callable[[ProviderSession, RecordedResource, Created], None]] = {
    CLIENT: _client,
    DEFAULT_SCOPES: _default_scopes,
    ROLE: _role,
    AUDIENCE: _audience,
    SUB: _sub,
    CLIENT_ROLES: _client_roles,
    GROUP_ROLES: _group_roles,
    USER_ROLES: _user_roles,
}

"""Stand-in ``pulumi-resource-keycloak``: the program's Keycloak objects made, read, updated and
deleted through the admin API of the lane's real Keycloak (e2e/keycloak.py).

Follows keycloak/terraform-provider-keycloak v5.9.0 (commit f1724f757eb5; pulumi-keycloak 6.14.1
bridges it): ``keycloak/*.go`` for the admin calls and their JSON, ``provider/*.go`` for the
schema (defaults, ``ForceNew``, ``Computed``), what Read puts in the state and the import ids.
Each type below names its files. No code of the provider is used: the calls are made again
here with ``requests``.

- **Configure** keeps the provider's configuration (``url``, ``realm``, ``clientId``,
  ``clientSecret``, ``basePath``). It logs in as ``keycloak/keycloak_client.go`` ``login`` does
  with a client id and secret and no user name: the client-credentials grant at
  ``{url}{basePath}/realms/{realm}/protocol/openid-connect/token``; admin calls go to
  ``{url}{basePath}/admin/realms/...`` with the bearer token (a 401 logs in again, as
  ``sendRequest`` does).
- **The one liberty is the host.** The stack's ``url`` is an https name that does not resolve
  here; the lane's engine runs with :data:`URLS_ENV`, a JSON map of such URLs to the loopback
  server's, and the requests go there. The realm's ``frontendUrl`` is the stack's URL, so
  Keycloak issues tokens under that name as it would behind it; ``rootCaCertificate`` is kept
  but unused (the loopback is plain http).
- **Ids and imports** are the provider's: a client, role or protocol mapper is Keycloak's uuid;
  default scopes ``<realm>/<client uuid>``, group and user role mappings ``<realm>/<group or
  user id>``, a scope mapping ``<realm>/client/<client>/scope-mappings/<role's client>/<role>``.
  ``pulumi import`` takes each importer's id form (cited per type).
- **Read after Create**: as every resource of the provider does, Create returns what Read then
  reads, so ``pulumi refresh`` after ``up`` has nothing to change.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import requests
from pulumi.provider.experimental import provider as p
from pulumi.provider.experimental.server import main as serve

from e2e.providers.base import Kind, ProviderError, StandIn, Values, plain, plain_map, wrap

URLS_ENV = "HYPERSHELL_E2E_KEYCLOAK_URLS"
"""A JSON object: a stack's Keycloak URL → the lane's loopback Keycloak that answers for it."""

GET_GROUP = "keycloak:index/getGroup:getGroup"
GET_USER = "keycloak:index/getUser:getUser"


class NotFoundError(ProviderError):
    """A 404 from the admin API (``keycloak/keycloak_client.go``: ``ApiError`` with code 404,
    which Read turns into "gone": ``provider/util.go`` ``handleNotFoundError``)."""


def loopback(url: str, env: Mapping[str, str] | None = None) -> str:
    """The loopback server answering for the stack's ``url`` (:data:`URLS_ENV`)."""
    table = json.loads((env if env is not None else os.environ).get(URLS_ENV) or "{}")
    try:
        return str(table[url.rstrip("/")])
    except KeyError:
        raise ProviderError(
            f"keycloak stand-in: no loopback Keycloak for {url} in ${URLS_ENV}"
        ) from None


@dataclass
class Connection:
    """The configured provider: where and as whom it calls the admin API."""

    url: str = ""
    realm: str = ""
    client_id: str = ""
    client_secret: str = ""
    base_path: str = ""
    server: str | None = None
    """The loopback server, when known; else looked up in :data:`URLS_ENV` by ``url``."""
    _token: str | None = field(default=None, repr=False)

    def base(self) -> str:
        if not self.url:
            raise ProviderError("keycloak stand-in: not configured")
        return (self.server or loopback(self.url)) + self.base_path

    def login(self) -> str:
        """``keycloak_client.go`` ``login``: ``grant_type=client_credentials`` with the client
        id and secret as form fields."""
        response = requests.post(
            f"{self.base()}/realms/{self.realm}/protocol/openid-connect/token",
            data={
                "grant_type": "client_credentials",
                "client_id": self.client_id,
                "client_secret": self.client_secret,
            },
            timeout=120,
        )
        if response.status_code != 200:
            raise ProviderError(
                f"error sending POST request to /realms/{self.realm}/protocol/openid-connect/token:"
                f" {response.status_code} {response.text[:300]}"
            )
        self._token = str(response.json()["access_token"])
        return self._token

    def call(self, method: str, path: str, body: Any = None, **params: str) -> Any:
        """``{method} /admin/realms{path}``; the JSON answer (None when empty), the Location
        header's last segment for a 201 without a body. A 404 raises :class:`NotFoundError`."""
        for attempt in (1, 2):
            token = self._token or self.login()
            response = requests.request(
                method,
                f"{self.base()}/admin/realms{path}",
                headers={"Authorization": f"Bearer {token}"},
                json=body,
                params=params or None,
                timeout=120,
            )
            if response.status_code == 401 and attempt == 1:
                self._token = None
                continue
            break
        if response.status_code == 404:
            raise NotFoundError(f"error sending {method} request to {path}: 404 Not Found")
        if response.status_code >= 300:
            raise ProviderError(
                f"error sending {method} request to {path}: {response.status_code}"
                f" {response.text[:500]}"
            )
        if response.status_code == 201 and "Location" in response.headers:
            return response.headers["Location"].rsplit("/", 1)[-1]
        return response.json() if response.content else None

    def find(self, path: str) -> Any:
        """GET ``path``, or None on a 404."""
        try:
            return self.call("GET", path)
        except NotFoundError:
            return None


CONNECTION = Connection()
"""The one configuration of this plugin process: the engine starts a plugin per provider
resource (pulumi/pulumi ``pkg/resource/deploy/providers/registry.go``: each provider
resource loads its own plugin and ``Configure``s it)."""


def _bool(value: Any) -> str:
    return "true" if value else "false"


def _attr_bool(attributes: Mapping[str, Any], key: str) -> bool:
    """``types.KeycloakBoolQuoted``: ``"true"`` is true, anything else (absent too) false."""
    return str(attributes.get(key, "")).lower() == "true"


def split_id(id_: str, parts: int, form: str) -> list[str]:
    """An import id of ``parts`` ``/``-separated segments, or the importer's error."""
    found = id_.split("/")
    if len(found) != parts or not all(found):
        raise ProviderError(f"Invalid import. Supported import format: {form}")
    return found


class KeycloakKind(Kind):
    """A type answered through the admin API; every Terraform ``Optional`` primitive the
    program leaves out is its zero value (:attr:`Kind.absent_is_zero`)."""


# --- openid/client:Client -------------------------------------------------------------------

ACCESS_TYPES = ("CONFIDENTIAL", "PUBLIC", "BEARER-ONLY")
CLIENT_ATTRIBUTES = {
    # input: (attribute, boolean) -- keycloak/openid_client.go OpenidClientAttributes tags
    "pkceCodeChallengeMethod": ("pkce.code.challenge.method", False),
    "oauth2DeviceAuthorizationGrantEnabled": ("oauth2.device.authorization.grant.enabled", True),
    "useRefreshTokens": ("use.refresh.tokens", True),
    "useRefreshTokensClientCredentials": ("client_credentials.use_refresh_token", True),
    "backchannelLogoutSessionRequired": ("backchannel.logout.session.required", True),
}


class Client(KeycloakKind):
    """``provider/resource_keycloak_openid_client.go``: ``getOpenidClientFromData`` (the body),
    ``setOpenidClientData`` (Read), ``resourceKeycloakOpenidClientImport`` (``{{realmId}}/
    {{openidClientId}}``); ``keycloak/openid_client.go``: ``NewOpenidClient`` (POST
    ``/clients``), ``GetOpenidClient`` (GET ``/clients/{id}`` and ``/clients/{id}/client-secret``),
    ``UpdateOpenidClient`` (PUT ``/clients/{id}``, the whole body), ``DeleteOpenidClient``,
    ``GetOpenidClientServiceAccountUserId`` (GET ``/clients/{id}/service-account-user``)."""

    def body(self, inputs: Values, id_: str | None = None) -> dict[str, Any]:
        access = inputs["accessType"]
        if access not in ACCESS_TYPES:
            raise ProviderError(f"expected access_type to be one of {list(ACCESS_TYPES)}")
        attributes = {
            attribute: _bool(inputs.get(key)) if boolean else str(inputs.get(key) or "")
            for key, (attribute, boolean) in CLIENT_ATTRIBUTES.items()
        }
        body: dict[str, Any] = {
            "clientId": inputs["clientId"],
            "name": inputs.get("name", ""),
            "protocol": "openid-connect",
            "clientAuthenticatorType": inputs["clientAuthenticatorType"],
            "enabled": bool(inputs["enabled"]),
            "description": inputs.get("description", ""),
            "publicClient": access == "PUBLIC",
            "bearerOnly": access == "BEARER-ONLY",
            "standardFlowEnabled": bool(inputs.get("standardFlowEnabled")),
            "implicitFlowEnabled": bool(inputs.get("implicitFlowEnabled")),
            "directAccessGrantsEnabled": bool(inputs.get("directAccessGrantsEnabled")),
            "serviceAccountsEnabled": bool(inputs.get("serviceAccountsEnabled")),
            "redirectUris": list(inputs.get("validRedirectUris") or []),
            "webOrigins": list(inputs.get("webOrigins") or []),
            "fullScopeAllowed": bool(inputs["fullScopeAllowed"]),
            "alwaysDisplayInConsole": bool(inputs["alwaysDisplayInConsole"]),
            "attributes": attributes,
        }
        if inputs.get("clientSecret"):  # `secret,omitempty`: Keycloak generates one otherwise
            body["secret"] = inputs["clientSecret"]
        if id_ is not None:
            body["id"] = id_
        return body

    def create(self, inputs: Values) -> tuple[str, Values]:
        realm = inputs["realmId"]
        id_ = CONNECTION.call("POST", f"/{realm}/clients", self.body(inputs))
        state = self.fetch(realm, id_, import_=bool(inputs.get("import")))
        assert state is not None
        return id_, state

    def fetch(self, realm: str, id_: str, *, import_: bool) -> Values | None:
        client = CONNECTION.find(f"/{realm}/clients/{id_}")
        if client is None:
            return None
        secret = CONNECTION.call("GET", f"/{realm}/clients/{id_}/client-secret") or {}
        attributes = client.get("attributes") or {}
        access = (
            "PUBLIC"
            if client.get("publicClient")
            else "BEARER-ONLY"
            if client.get("bearerOnly")
            else "CONFIDENTIAL"
        )
        account = ""
        if client.get("serviceAccountsEnabled"):
            user = CONNECTION.call("GET", f"/{realm}/clients/{id_}/service-account-user")
            account = user["id"]
        state: Values = {
            "realmId": realm,
            "clientId": client["clientId"],
            "name": client.get("name") or "",
            "enabled": bool(client.get("enabled")),
            "description": client.get("description") or "",
            "accessType": access,
            "clientAuthenticatorType": client.get("clientAuthenticatorType") or "",
            "standardFlowEnabled": bool(client.get("standardFlowEnabled")),
            "implicitFlowEnabled": bool(client.get("implicitFlowEnabled")),
            "directAccessGrantsEnabled": bool(client.get("directAccessGrantsEnabled")),
            "serviceAccountsEnabled": bool(client.get("serviceAccountsEnabled")),
            "validRedirectUris": sorted(client.get("redirectUris") or []),
            "webOrigins": sorted(client.get("webOrigins") or []),
            "fullScopeAllowed": bool(client.get("fullScopeAllowed")),
            "alwaysDisplayInConsole": bool(client.get("alwaysDisplayInConsole")),
            "clientSecret": str(secret.get("value") or ""),
            "serviceAccountUserId": account,
            "import": import_,
        }
        for key, (attribute, boolean) in CLIENT_ATTRIBUTES.items():
            value = attributes.get(attribute, "")
            state[key] = _attr_bool(attributes, attribute) if boolean else str(value)
        if client.get("authorizationServicesEnabled"):
            state["resourceServerId"] = id_
        return state

    def read(self, id_: str, state: Values) -> Values | None:
        return self.fetch(state["realmId"], id_, import_=bool(state.get("import")))

    def import_(self, id_: str) -> tuple[str, Values | None]:
        realm, uuid = split_id(id_, 2, "{{realmId}}/{{openidClientId}}")
        state = self.fetch(realm, uuid, import_=False)
        if state is None:
            raise ProviderError(f"openid client {uuid} not found in realm {realm}")
        return uuid, state

    def update(self, id_: str, olds: Values, news: Values) -> Values:
        realm = news["realmId"]
        CONNECTION.call("PUT", f"/{realm}/clients/{id_}", self.body(news, id_))
        state = self.fetch(realm, id_, import_=bool(news.get("import")))
        if state is None:
            raise ProviderError(f"openid client {id_} vanished during its update")
        return state

    def delete(self, id_: str, state: Values) -> None:
        with contextlib.suppress(NotFoundError):  # already gone: handleNotFoundError
            CONNECTION.call("DELETE", f"/{state['realmId']}/clients/{id_}")


# --- openid/clientDefaultScopes:ClientDefaultScopes ------------------------------------------


class DefaultScopes(KeycloakKind):
    """``provider/resource_keycloak_openid_client_default_scopes.go``: Create and Update
    reconcile (the client's default scopes not listed are detached, then the listed ones
    attached), Read lists the client's default scopes, Delete detaches the listed ones; the id
    ``<realm>/<client>``. ``keycloak/openid_client.go``: GET ``/clients/{id}/default-client-
    scopes``, the realm's scopes by name from GET ``/client-scopes``, PUT and DELETE
    ``/clients/{id}/default-client-scopes/{scope id}``."""

    def _attached(self, realm: str, client: str) -> list[dict[str, Any]]:
        return list(CONNECTION.call("GET", f"/{realm}/clients/{client}/default-client-scopes"))

    def reconcile(self, inputs: Values) -> tuple[str, Values]:
        realm, client = inputs["realmId"], inputs["clientId"]
        wanted = set(inputs["defaultScopes"])
        for scope in self._attached(realm, client):
            if scope["name"] not in wanted:
                CONNECTION.call(
                    "DELETE", f"/{realm}/clients/{client}/default-client-scopes/{scope['id']}"
                )
        scopes = CONNECTION.call("GET", f"/{realm}/client-scopes")
        by_name = {s["name"]: s["id"] for s in scopes if s.get("protocol") == "openid-connect"}
        missing = sorted(wanted - set(by_name))
        if missing:
            raise ProviderError(f"validation error: client scopes {missing} do not exist")
        for name in sorted(wanted):
            CONNECTION.call(
                "PUT", f"/{realm}/clients/{client}/default-client-scopes/{by_name[name]}"
            )
        id_ = f"{realm}/{client}"
        state = self.read(id_, inputs)
        assert state is not None
        return id_, state

    def create(self, inputs: Values) -> tuple[str, Values]:
        return self.reconcile(inputs)

    def update(self, id_: str, olds: Values, news: Values) -> Values:
        return self.reconcile(news)[1]

    def read(self, id_: str, state: Values) -> Values | None:
        realm, client = state["realmId"], state["clientId"]
        try:
            attached = self._attached(realm, client)
        except NotFoundError:
            return None
        return {
            "realmId": realm,
            "clientId": client,
            "defaultScopes": sorted(s["name"] for s in attached),
        }

    def import_(self, id_: str) -> tuple[str, Values | None]:
        realm, client = split_id(id_, 2, "{{realmId}}/{{clientId}}")
        return id_, self.read(id_, {"realmId": realm, "clientId": client})

    def delete(self, id_: str, state: Values) -> None:
        realm, client = state["realmId"], state["clientId"]
        try:
            attached = {s["name"]: s["id"] for s in self._attached(realm, client)}
        except NotFoundError:
            return
        for name in state.get("defaultScopes") or []:
            if name in attached:
                CONNECTION.call(
                    "DELETE", f"/{realm}/clients/{client}/default-client-scopes/{attached[name]}"
                )


# --- index/role:Role -------------------------------------------------------------------------


class Role(KeycloakKind):
    """``provider/resource_keycloak_role.go`` (``mapFromDataToRole``, ``mapFromRoleToData``,
    ``resourceKeycloakRoleImport``: ``{{realm}}/{{roleId}}``); ``keycloak/role.go``:
    ``CreateRole`` (POST ``/clients/{client}/roles``, or ``/roles`` for a realm role, then GET
    it by name for its id), ``GetRole`` (GET ``/roles-by-id/{id}``: a client role's
    ``containerId`` is its client), ``UpdateRole`` (PUT ``/roles-by-id/{id}``),
    ``DeleteRole`` (DELETE ``/roles-by-id/{id}``)."""

    def body(self, inputs: Values, id_: str | None = None) -> dict[str, Any]:
        client = inputs.get("clientId") or ""
        body: dict[str, Any] = {
            "name": inputs["name"],
            "description": inputs.get("description", ""),
            "clientRole": bool(client),
            "containerId": client,
            "composite": False,
        }
        if id_ is not None:
            body["id"] = id_
        return body

    def create(self, inputs: Values) -> tuple[str, Values]:
        realm, client = inputs["realmId"], inputs.get("clientId") or ""
        base = f"/{realm}/clients/{client}/roles" if client else f"/{realm}/roles"
        CONNECTION.call("POST", base, self.body(inputs))
        role = CONNECTION.call("GET", f"{base}/{quote(inputs['name'], safe='')}")
        state = self.fetch(realm, role["id"], import_=bool(inputs.get("import")))
        assert state is not None
        return role["id"], state

    def fetch(self, realm: str, id_: str, *, import_: bool) -> Values | None:
        role = CONNECTION.find(f"/{realm}/roles-by-id/{id_}")
        if role is None:
            return None
        return {
            "realmId": realm,
            "clientId": role["containerId"] if role.get("clientRole") else "",
            "name": role["name"],
            "description": role.get("description") or "",
            "import": import_,
        }

    def read(self, id_: str, state: Values) -> Values | None:
        return self.fetch(state["realmId"], id_, import_=bool(state.get("import")))

    def import_(self, id_: str) -> tuple[str, Values | None]:
        realm, uuid = split_id(id_, 2, "{{realm}}/{{roleId}}.")
        state = self.fetch(realm, uuid, import_=False)
        if state is None:
            raise ProviderError(f"role {uuid} not found in realm {realm}")
        return uuid, state

    def update(self, id_: str, olds: Values, news: Values) -> Values:
        realm = news["realmId"]
        CONNECTION.call("PUT", f"/{realm}/roles-by-id/{id_}", self.body(news, id_))
        state = self.fetch(realm, id_, import_=bool(news.get("import")))
        if state is None:
            raise ProviderError(f"role {id_} vanished during its update")
        return state

    def delete(self, id_: str, state: Values) -> None:
        with contextlib.suppress(NotFoundError):
            CONNECTION.call("DELETE", f"/{state['realmId']}/roles-by-id/{id_}")


# --- protocol mappers ---------------------------------------------------------------------


@dataclass(frozen=True)
class MapperField:
    key: str
    """The mapper's config key (``keycloak/protocol_mapper.go`` and each mapper's file)."""
    boolean: bool = False
    omit_empty: bool = False
    """Read leaves the input out when the config holds nothing for it."""


@dataclass(frozen=True)
class Mapper(KeycloakKind):
    """A protocol mapper of a client (``keycloak/generic_protocol_mapper.go`` and
    ``keycloak/protocol_mapper.go``: POST ``/clients/{client}/protocol-mappers/models``, GET,
    PUT and DELETE ``.../models/{id}``; a client scope's under ``/client-scopes/{id}``). The
    import id: ``{{realmId}}/client/{{clientId}}/{{protocolMapperId}}`` or
    ``{{realmId}}/client-scope/{{clientScopeId}}/{{protocolMapperId}}``
    (``provider/generic_protocol_mapper_helpers.go`` ``parseGenericProtocolMapperImportId``)."""

    mapper: str = ""
    fields: Mapping[str, MapperField] = field(default_factory=dict)

    def parent(self, values: Values) -> str:
        if values.get("clientId"):
            return f"/{values['realmId']}/clients/{values['clientId']}"
        if values.get("clientScopeId"):
            return f"/{values['realmId']}/client-scopes/{values['clientScopeId']}"
        raise ProviderError('"client_id": one of `client_id,client_scope_id` must be specified')

    def body(self, inputs: Values, id_: str | None = None) -> dict[str, Any]:
        config = {
            f.key: _bool(inputs.get(k)) if f.boolean else str(inputs.get(k) or "")
            for k, f in self.fields.items()
        }
        body: dict[str, Any] = {
            "name": inputs["name"],
            "protocol": "openid-connect",
            "protocolMapper": self.mapper,
            "config": config,
        }
        if id_ is not None:
            body["id"] = id_
        return body

    def create(self, inputs: Values) -> tuple[str, Values]:
        id_ = CONNECTION.call(
            "POST", f"{self.parent(inputs)}/protocol-mappers/models", self.body(inputs)
        )
        state = self.read(id_, inputs)
        assert state is not None
        return id_, state

    def read(self, id_: str, state: Values) -> Values | None:
        found = CONNECTION.find(f"{self.parent(state)}/protocol-mappers/models/{id_}")
        if found is None:
            return None
        config = found.get("config") or {}
        read: Values = {"realmId": state["realmId"], "name": found["name"]}
        for key in ("clientId", "clientScopeId"):
            if state.get(key):
                read[key] = state[key]
        for key, f in self.fields.items():
            value = config.get(f.key, "")
            if f.boolean:
                read[key] = str(value).lower() == "true"
            elif value or not f.omit_empty:
                read[key] = str(value)
        return read

    def import_(self, id_: str) -> tuple[str, Values | None]:
        parts = id_.split("/")
        if len(parts) != 4 or parts[1] not in ("client", "client-scope") or not all(parts):
            raise ProviderError(
                "invalid import. supported import formats: {{realmId}}/client/{{clientId}}/"
                "{{protocolMapperId}}, {{realmId}}/client-scope/{{clientScopeId}}/"
                "{{protocolMapperId}}"
            )
        realm, kind, parent, uuid = parts
        key = "clientId" if kind == "client" else "clientScopeId"
        return uuid, self.read(uuid, {"realmId": realm, key: parent})

    def update(self, id_: str, olds: Values, news: Values) -> Values:
        CONNECTION.call(
            "PUT", f"{self.parent(news)}/protocol-mappers/models/{id_}", self.body(news, id_)
        )
        state = self.read(id_, news)
        if state is None:
            raise ProviderError(f"protocol mapper {id_} vanished during its update")
        return state

    def delete(self, id_: str, state: Values) -> None:
        with contextlib.suppress(NotFoundError):
            CONNECTION.call("DELETE", f"{self.parent(state)}/protocol-mappers/models/{id_}")


# --- role mappings of a group or user ----------------------------------------------------------


@dataclass(frozen=True)
class RoleMappings(KeycloakKind):
    """``provider/resource_keycloak_group_roles.go`` / ``resource_keycloak_user_roles.go``:
    ``Reconcile`` (Create and Update) removes the roles dropped from ``role_ids``, adds the
    listed roles not mapped yet and, when ``exhaustive``, removes every other mapping; Read
    keeps the mapped roles (all of them when ``exhaustive``, else only the listed ones); Delete
    removes the listed roles; the id and import id ``{{realm}}/{{groupId}}`` (the importer sets
    ``exhaustive`` true). ``keycloak/group.go`` / ``user.go``: GET the principal; GET
    ``/{groups|users}/{id}/role-mappings``; POST and DELETE ``.../role-mappings/realm`` and
    ``.../role-mappings/clients/{client}`` with the roles (each read with GET
    ``/roles-by-id/{id}``)."""

    principal: str = "groups"
    owner_key: str = "groupId"

    def _path(self, realm: str, owner: str) -> str:
        return f"/{realm}/{self.principal}/{owner}"

    def _change(self, method: str, realm: str, owner: str, role_ids: list[str]) -> None:
        realm_roles: list[dict[str, Any]] = []
        by_client: dict[str, list[dict[str, Any]]] = {}
        for role_id in role_ids:
            role = CONNECTION.call("GET", f"/{realm}/roles-by-id/{role_id}")
            if role.get("clientRole"):
                by_client.setdefault(role["containerId"], []).append(role)
            else:
                realm_roles.append(role)
        base = self._path(realm, owner) + "/role-mappings"
        if realm_roles:
            CONNECTION.call(method, f"{base}/realm", realm_roles)
        for client, roles in sorted(by_client.items()):
            CONNECTION.call(method, f"{base}/clients/{client}", roles)

    def _mapped(self, realm: str, owner: str) -> list[str]:
        mappings = CONNECTION.call("GET", self._path(realm, owner) + "/role-mappings") or {}
        ids = [r["id"] for r in mappings.get("realmMappings") or []]
        for client in (mappings.get("clientMappings") or {}).values():
            ids += [r["id"] for r in client.get("mappings") or []]
        return ids

    def reconcile(self, olds: Values, news: Values) -> tuple[str, Values]:
        realm, owner = news["realmId"], news[self.owner_key]
        CONNECTION.call("GET", self._path(realm, owner))
        wanted = list(news["roleIds"])
        dropped = sorted(set(olds.get("roleIds") or []) - set(wanted))
        if dropped:
            self._change("DELETE", realm, owner, dropped)
        mapped = self._mapped(realm, owner)
        self._change("POST", realm, owner, [r for r in wanted if r not in mapped])
        if news.get("exhaustive"):
            extra = [r for r in self._mapped(realm, owner) if r not in wanted]
            if extra:
                self._change("DELETE", realm, owner, extra)
        id_ = f"{realm}/{owner}"
        state = self.read(id_, news)
        assert state is not None
        return id_, state

    def create(self, inputs: Values) -> tuple[str, Values]:
        return self.reconcile({}, inputs)

    def update(self, id_: str, olds: Values, news: Values) -> Values:
        return self.reconcile(olds, news)[1]

    def read(self, id_: str, state: Values) -> Values | None:
        realm, owner = state["realmId"], state[self.owner_key]
        if CONNECTION.find(self._path(realm, owner)) is None:
            return None
        exhaustive = bool(state.get("exhaustive"))
        listed = set(state.get("roleIds") or [])
        mapped = [r for r in self._mapped(realm, owner) if exhaustive or r in listed]
        return {
            "realmId": realm,
            self.owner_key: owner,
            "roleIds": sorted(mapped),
            "exhaustive": exhaustive,
        }

    def import_(self, id_: str) -> tuple[str, Values | None]:
        what = "groupId" if self.principal == "groups" else "userId"
        realm, owner = split_id(id_, 2, f"{{{{realm}}}}/{{{{{what}}}}}.")
        return id_, self.read(id_, {"realmId": realm, self.owner_key: owner, "exhaustive": True})

    def delete(self, id_: str, state: Values) -> None:
        realm, owner = state["realmId"], state[self.owner_key]
        if CONNECTION.find(self._path(realm, owner)) is None:
            return
        self._change("DELETE", realm, owner, list(state.get("roleIds") or []))


# --- index/genericRoleMapper:GenericRoleMapper -----------------------------------------------


class ScopeMapping(KeycloakKind):
    """``provider/resource_keycloak_generic_role_mapper.go``: Create reads the role (``GetRole``)
    and maps it (``keycloak/role_scope_mapping.go`` ``CreateRoleScopeMapping``: POST
    ``/clients/{client}/scope-mappings/clients/{role's client}`` or ``.../realm``), the id
    ``{realm}/client/{client}/scope-mappings/{role's client}/{role}``; Read drops it when the
    role or the mapping is gone; Delete is DELETE of the same path; every input ``ForceNew``
    (no Update)."""

    def _path(self, values: Values, role: dict[str, Any]) -> str:
        if values.get("clientId"):
            base = f"/{values['realmId']}/clients/{values['clientId']}"
        elif values.get("clientScopeId"):
            base = f"/{values['realmId']}/client-scopes/{values['clientScopeId']}"
        else:
            raise ProviderError("one of `client_id,client_scope_id` must be specified")
        if role.get("clientRole"):
            return f"{base}/scope-mappings/clients/{role['containerId']}"
        return f"{base}/scope-mappings/realm"

    def _id(self, values: Values, role: dict[str, Any]) -> str:
        kind, parent = (
            ("client", values["clientId"])
            if values.get("clientId")
            else ("client-scope", values["clientScopeId"])
        )
        owner = role["containerId"] if role.get("clientRole") else ""
        return f"{values['realmId']}/{kind}/{parent}/scope-mappings/{owner}/{role['id']}"

    def create(self, inputs: Values) -> tuple[str, Values]:
        role = CONNECTION.call("GET", f"/{inputs['realmId']}/roles-by-id/{inputs['roleId']}")
        CONNECTION.call("POST", self._path(inputs, role), [role])
        keys = ("realmId", "clientId", "clientScopeId", "roleId")
        return self._id(inputs, role), {k: inputs[k] for k in keys if k in inputs}

    def read(self, id_: str, state: Values) -> Values | None:
        role = CONNECTION.find(f"/{state['realmId']}/roles-by-id/{state['roleId']}")
        if role is None:
            return None
        mapped = CONNECTION.find(self._path(state, role)) or []
        return state if any(r["id"] == role["id"] for r in mapped) else None

    def import_(self, id_: str) -> tuple[str, Values | None]:
        parts = id_.split("/")
        if (
            len(parts) != 6
            or parts[1] not in ("client", "client-scope")
            or parts[3] != ("scope-mappings")
        ):
            raise ProviderError(
                "Invalid import. Supported import formats: {{realmId}}/client/{{clientId}}/"
                "scope-mappings/{{roleClientId}}/{{roleId}}, {{realmId}}/client-scope/"
                "{{clientScopeId}}/scope-mappings/{{roleClientId}}/{{roleId}}"
            )
        key = "clientId" if parts[1] == "client" else "clientScopeId"
        return id_, self.read(id_, {"realmId": parts[0], key: parts[2], "roleId": parts[5]})

    def delete(self, id_: str, state: Values) -> None:
        role = CONNECTION.find(f"/{state['realmId']}/roles-by-id/{state['roleId']}")
        if role is not None:
            CONNECTION.call("DELETE", self._path(state, role), [role])


# --- the data sources ------------------------------------------------------------------------


def get_group(realm: str, path: str, connection: Connection = CONNECTION) -> Values:
    """``data.keycloak_group`` with ``group_path`` (``keycloak/group.go`` ``GetGroupByPath``:
    GET ``/realms/{realm}/group-by-path/{escaped segments}``; a 404 is "group not found at
    path: <path>")."""
    segments = "/".join(quote(s, safe="") for s in path.strip("/").split("/"))
    group = connection.find(f"/{realm}/group-by-path/{segments}")
    if group is None:
        raise ProviderError(f"group not found at path: {path}")
    return {
        "id": group["id"],
        "realmId": realm,
        "name": group["name"],
        "groupPath": path,
        "path": group["path"],
        "parentId": group.get("parentId", ""),
        "attributes": group.get("attributes", {}),
    }


def get_user(realm: str, username: str, connection: Connection = CONNECTION) -> Values:
    """``data.keycloak_user`` (``keycloak/user.go`` ``GetUserByUsername``: GET
    ``/realms/{realm}/users?username=<name>`` with no ``exact`` and no ``max``, then the first
    result whose user name equals the name; none is "user with username <name> not found",
    ``provider/data_source_keycloak_user.go``). Keycloak answers that query with at most 100
    users (its default ``max``) whose names contain the name, in user-name order."""
    users = connection.call("GET", f"/{realm}/users", username=username.replace("\\", "\\\\"))
    for user in users:
        if user["username"] == username:
            return {
                "id": user["id"],
                "realmId": realm,
                "username": user["username"],
                "enabled": user["enabled"],
            }
    raise ProviderError(f"user with username {username} not found")


# --- the provider ---------------------------------------------------------------------------

_MAPPER_INPUTS = frozenset({"realmId", "clientId", "clientScopeId", "name"})

KINDS: tuple[Kind, ...] = (
    Client(
        "keycloak:openid/client:Client",
        inputs=frozenset(
            {
                "realmId",
                "clientId",
                "name",
                "enabled",
                "description",
                "accessType",
                "clientAuthenticatorType",
                "clientSecret",
                "standardFlowEnabled",
                "implicitFlowEnabled",
                "directAccessGrantsEnabled",
                "serviceAccountsEnabled",
                "validRedirectUris",
                "webOrigins",
                "fullScopeAllowed",
                "alwaysDisplayInConsole",
                "import",
                *CLIENT_ATTRIBUTES,
            }
        ),
        required=frozenset({"realmId", "clientId", "accessType"}),
        # resource_keycloak_openid_client.go: the attributes above with a `Default`.
        defaults={
            "enabled": True,
            "clientAuthenticatorType": "client-secret",
            "fullScopeAllowed": True,
            "useRefreshTokens": True,
            "useRefreshTokensClientCredentials": False,
            "backchannelLogoutSessionRequired": True,
            "oauth2DeviceAuthorizationGrantEnabled": False,
            "alwaysDisplayInConsole": False,
            "import": False,
        },
        outputs=("clientSecret", "serviceAccountUserId", "resourceServerId"),
        # pulumi-keycloak sdk/python/pulumi_keycloak/openid/client.py: additional_secret_outputs
        # clientSecret (the Terraform attribute is Sensitive).
        secret_outputs=frozenset({"clientSecret"}),
        secret_inputs=frozenset({"clientSecret"}),
        # `Optional` + `Computed`, or suppressDiffWhenNotInConfig (name, description).
        server_defaulted=frozenset(
            {
                "name",
                "description",
                "clientSecret",
                "standardFlowEnabled",
                "implicitFlowEnabled",
                "directAccessGrantsEnabled",
                "serviceAccountsEnabled",
                "validRedirectUris",
                "webOrigins",
            }
        ),
        sets=frozenset({"validRedirectUris", "webOrigins"}),
        absent_is_zero=True,
    ),
    DefaultScopes(
        "keycloak:openid/clientDefaultScopes:ClientDefaultScopes",
        inputs=frozenset({"realmId", "clientId", "defaultScopes"}),
        required=frozenset({"realmId", "clientId", "defaultScopes"}),
        sets=frozenset({"defaultScopes"}),
        absent_is_zero=True,
    ),
    Role(
        "keycloak:index/role:Role",
        inputs=frozenset({"realmId", "clientId", "name", "description", "import"}),
        required=frozenset({"realmId", "name"}),
        defaults={"import": False},  # resource_keycloak_role.go: import Default false
        absent_is_zero=True,
    ),
    Mapper(
        "keycloak:openid/audienceProtocolMapper:AudienceProtocolMapper",
        inputs=_MAPPER_INPUTS
        | {
            "includedClientAudience",
            "includedCustomAudience",
            "addToIdToken",
            "addToAccessToken",
            "addToTokenIntrospection",
        },
        required=frozenset({"realmId", "name"}),
        # resource_keycloak_openid_audience_protocol_mapper.go: the three add_to_* default true.
        defaults={"addToIdToken": True, "addToAccessToken": True, "addToTokenIntrospection": True},
        absent_is_zero=True,
        # keycloak/openid_audience_protocol_mapper.go: the config keys.
        mapper="oidc-audience-mapper",
        fields={
            "includedClientAudience": MapperField("included.client.audience", omit_empty=True),
            "includedCustomAudience": MapperField("included.custom.audience", omit_empty=True),
            "addToIdToken": MapperField("id.token.claim", boolean=True),
            "addToAccessToken": MapperField("access.token.claim", boolean=True),
            "addToTokenIntrospection": MapperField("introspection.token.claim", boolean=True),
        },
    ),
    Mapper(
        "keycloak:openid/subProtocolMapper:SubProtocolMapper",
        inputs=_MAPPER_INPUTS | {"addToAccessToken", "addToTokenIntrospection"},
        required=frozenset({"realmId", "name"}),
        # resource_keycloak_openid_sub_protocol_mapper.go: both add_to_* default true.
        defaults={"addToAccessToken": True, "addToTokenIntrospection": True},
        absent_is_zero=True,
        mapper="oidc-sub-mapper",  # keycloak/openid_sub_protocol_mapper.go
        fields={
            "addToAccessToken": MapperField("access.token.claim", boolean=True),
            "addToTokenIntrospection": MapperField("introspection.token.claim", boolean=True),
        },
    ),
    Mapper(
        "keycloak:openid/userClientRoleProtocolMapper:UserClientRoleProtocolMapper",
        inputs=_MAPPER_INPUTS
        | {
            "claimName",
            "claimValueType",
            "multivalued",
            "clientIdForRoleMappings",
            "clientRolePrefix",
            "addToIdToken",
            "addToAccessToken",
            "addToUserinfo",
        },
        required=frozenset({"realmId", "name", "claimName"}),
        # resource_keycloak_openid_user_client_role_protocol_mapper.go: add_to_* true,
        # claim_value_type "String", multivalued false.
        defaults={
            "addToIdToken": True,
            "addToAccessToken": True,
            "addToUserinfo": True,
            "claimValueType": "String",
            "multivalued": False,
        },
        absent_is_zero=True,
        mapper="oidc-usermodel-client-role-mapper",  # keycloak/openid_user_client_role_...go
        fields={
            "claimName": MapperField("claim.name"),
            "claimValueType": MapperField("jsonType.label"),
            "multivalued": MapperField("multivalued", boolean=True),
            "clientIdForRoleMappings": MapperField(
                "usermodel.clientRoleMapping.clientId", omit_empty=True
            ),
            "clientRolePrefix": MapperField(
                "usermodel.clientRoleMapping.rolePrefix", omit_empty=True
            ),
            "addToIdToken": MapperField("id.token.claim", boolean=True),
            "addToAccessToken": MapperField("access.token.claim", boolean=True),
            "addToUserinfo": MapperField("userinfo.token.claim", boolean=True),
        },
    ),
    RoleMappings(
        "keycloak:index/groupRoles:GroupRoles",
        inputs=frozenset({"realmId", "groupId", "roleIds", "exhaustive"}),
        required=frozenset({"realmId", "groupId", "roleIds"}),
        defaults={"exhaustive": True},  # resource_keycloak_group_roles.go: Default true
        sets=frozenset({"roleIds"}),
        absent_is_zero=True,
        principal="groups",
        owner_key="groupId",
    ),
    RoleMappings(
        "keycloak:index/userRoles:UserRoles",
        inputs=frozenset({"realmId", "userId", "roleIds", "exhaustive"}),
        required=frozenset({"realmId", "userId", "roleIds"}),
        defaults={"exhaustive": True},  # resource_keycloak_user_roles.go: Default true
        sets=frozenset({"roleIds"}),
        absent_is_zero=True,
        principal="users",
        owner_key="userId",
    ),
    ScopeMapping(
        "keycloak:index/genericRoleMapper:GenericRoleMapper",
        inputs=frozenset({"realmId", "clientId", "clientScopeId", "roleId"}),
        required=frozenset({"realmId", "roleId"}),
        absent_is_zero=True,
    ),
)


class KeycloakStandIn(StandIn):
    """:class:`StandIn` with the provider's configuration and its two data sources."""

    async def configure(self, request: p.ConfigureRequest) -> p.ConfigureResponse:
        args = plain_map(request.args)
        variables = {k.rsplit(":", 1)[-1]: v for k, v in request.variables.items()}

        def setting(key: str) -> str:
            value = args.get(key, variables.get(key, ""))
            return "" if value is None else str(value)

        CONNECTION.url = setting("url").rstrip("/")
        CONNECTION.realm = setting("realm") or "master"  # provider.go: realm Default "master"
        CONNECTION.client_id = setting("clientId")
        CONNECTION.client_secret = setting("clientSecret")
        CONNECTION.base_path = setting("basePath")
        CONNECTION._token = None
        return await super().configure(request)

    async def invoke(self, request: p.InvokeRequest) -> p.InvokeResponse:
        args = {k: plain(v) for k, v in request.args.items()}
        if request.tok == GET_GROUP:
            found = get_group(str(args["realmId"]), str(args["groupPath"]))
        elif request.tok == GET_USER:
            found = get_user(str(args["realmId"]), str(args["username"]))
        else:
            raise ProviderError(f"keycloak stand-in: unknown function {request.tok}")
        return p.InvokeResponse(return_value={k: wrap(v) for k, v in found.items()})


def main() -> None:
    import sys

    from e2e.providers import plugin_version

    serve(sys.argv[1:], plugin_version("keycloak"), KeycloakStandIn("keycloak", KINDS))

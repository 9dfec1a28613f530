"""Sign-in as models: the identity provider of a cluster (a Keycloak server and realm) and,
per gateway, its own OIDC issuer, who holds its roles and its Keycloak client (docs/sign-in.md).
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BeforeValidator, ConfigDict, Field, field_validator, model_validator

from components.hostnames import check_host
from gatewayctl.inputs.model import PATH_MAX, JsonSchema, Model, ProjectPath, unnamed

_HTTPS_URL = re.compile(
    r"https://(?P<host>[A-Za-z0-9.-]+)(?::(?P<port>[0-9]{1,5}))?"
    r"(?P<path>/[A-Za-z0-9._~%!$&'()*+,;=:@/-]*)?"
)
_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
PORT_MAX = 65535


def _https_url(value: object) -> object:
    """An ``https`` URL without query, fragment, user info or white space (upstream's rule for
    an issuer; a Keycloak server is reached the same way): a fully qualified DNS host (no IP
    address, no single label: ``components.hostnames.check_host``), a TCP port 1-65535, and a
    path without empty, ``.`` or ``..`` segments or a broken ``%`` escape. An issuer is
    compared as written with every token's ``iss`` and is the base of its discovery document,
    so a URL that a client would normalise into another one is refused, not kept."""
    if not isinstance(value, str):
        return value  # the str type reports it
    match = _HTTPS_URL.fullmatch(value) if len(value) <= PATH_MAX else None
    if match is None:
        raise ValueError(
            f"{value!r} is not an https URL (https://host[:port][/path], no query, fragment,"
            " user info or white space)"
        )
    port = match["port"]
    if port is not None and not 1 <= int(port) <= PORT_MAX:
        raise ValueError(f"{value!r}: port {port} is out of range (1-{PORT_MAX})")
    check_host(match["host"].lower(), what="URL host")
    path = (match["path"] or "").rstrip("/")
    if any(segment in {"", ".", ".."} for segment in path.split("/")[1:]):
        raise ValueError(f"{value!r}: the path has an empty, '.' or '..' segment")
    if _PERCENT.search(path):
        raise ValueError(f"{value!r}: the path has a '%' that is no escape (%XX, two hex digits)")
    return value.rstrip("/")


HttpsUrl = Annotated[
    str,
    BeforeValidator(_https_url),
    JsonSchema({"pattern": unnamed(f"^{_HTTPS_URL.pattern}$"), "maxLength": PATH_MAX}),
]

_KEYCLOAK_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,254}")


def _keycloak_name(value: object) -> object:
    """A realm or client id as it goes into Keycloak's admin URLs: letters, digits, '.', '_',
    '-' (the provider puts realm ids into URL paths unescaped, terraform-provider-keycloak
    keycloak/openid_client.go ``GetOpenidClient``: ``/realms/%s/clients/%s``)."""
    if isinstance(value, str) and not _KEYCLOAK_NAME.fullmatch(value):
        raise ValueError(
            f"{value!r} is not a Keycloak name (letters, digits, '.', '_', '-', starting with a"
            " letter or digit, at most 255)"
        )
    return value


KeycloakName = Annotated[
    str, BeforeValidator(_keycloak_name), JsonSchema({"pattern": f"^{_KEYCLOAK_NAME.pattern}$"})
]


class KeycloakServer(Model):
    """A Keycloak server and realm the gateways of a cluster get their clients in."""

    url: HttpsUrl
    """The server's base URL (the provider's ``url``: before ``/realms``)."""
    realm: KeycloakName
    """The realm of the gateways' clients, and of the admin client."""
    admin_client_id: KeycloakName = Field(alias="adminClientId")
    """A confidential client of ``realm`` with a service account (client-credentials grant);
    its secret is ``clusterSecrets.<cluster>.keycloakAdminClientSecret``."""
    issuer_url: HttpsUrl | None = Field(None, alias="issuerUrl")
    """The issuer the gateways trust, when it differs from ``<url>/realms/<realm>`` (upstream's
    ``GATEWAY_OIDC_ISSUER_URL``: a proxy, another host name)."""
    ca_bundle_file: ProjectPath | None = Field(None, alias="caBundleFile")
    """PEM bundle Pulumi verifies the server with (the provider's ``rootCaCertificate``);
    None uses the system trust store."""

    @property
    def issuer(self) -> str:
        return self.issuer_url or f"{self.url}/realms/{self.realm}"


class IdentityConfig(Model):
    keycloak: KeycloakServer | None = None
    """None: no identity provider; each gateway declares ``spec.oidc`` or ``spec.signIn:
    none``."""


_PRINTABLE = JsonSchema({"pattern": "^(?!\\s)(?!.*\\s$)[^\\x00-\\x1f\\x7f]+$"})
"""``OidcSpec._printable``: no control character, no white space at either end."""
Claim = Annotated[str, _PRINTABLE]


class OidcSpec(Model):
    """Bring your own issuer: ``[openshell.gateway.oidc]`` as the gateway reads it."""

    # Both role names or neither (``_roles_together``), for editors.
    model_config = ConfigDict(
        json_schema_extra={
            "dependentRequired": {"adminRole": ["userRole"], "userRole": ["adminRole"]}
        }
    )

    issuer: HttpsUrl
    """The issuer's https URL; the gateway reads its discovery document and keys from it."""
    audience: Claim = Field("openshell-cli", min_length=1, max_length=255)
    """The audience the gateway requires in tokens (``aud``)."""
    roles_claim: Claim | None = Field(None, alias="rolesClaim", min_length=1, max_length=255)
    """The claim holding the user's roles; unset: the gateway's default."""
    admin_role: Claim | None = Field(None, alias="adminRole", min_length=1, max_length=255)
    """The role granting admin; set with ``userRole`` or neither."""
    user_role: Claim | None = Field(None, alias="userRole", min_length=1, max_length=255)
    """The role granting use; set with ``adminRole`` or neither (neither: every signed-in user
    is a user, no one an admin)."""
    scopes_claim: Claim | None = Field(None, alias="scopesClaim", min_length=1, max_length=255)
    """The claim holding the token's scopes; unset: the gateway's default."""
    jwks_ttl_seconds: int = Field(3600, alias="jwksTtlSeconds", ge=60, le=86400)
    """How long the gateway caches the issuer's keys, 60-86400 seconds."""

    @field_validator("audience", "roles_claim", "admin_role", "user_role", "scopes_claim")
    @classmethod
    def _printable(cls, value: str | None) -> str | None:
        if value is not None and (value != value.strip() or not value.isprintable()):
            raise ValueError("must be printable, without leading or trailing white space")
        return value

    @model_validator(mode="after")
    def _roles_together(self) -> OidcSpec:
        # Upstream's rule: both role names, or neither (the gateway then grants every
        # authenticated user the user role and no one the admin role).
        if (self.admin_role is None) != (self.user_role is None):
            raise ValueError("adminRole and userRole are both set or both left out")
        if self.admin_role is not None and self.admin_role == self.user_role:
            raise ValueError("adminRole and userRole must differ")
        return self


_GROUP_SEGMENT = re.compile(r"[A-Za-z0-9]([A-Za-z0-9 ._@+-]{0,253}[A-Za-z0-9._@+-])?")
_USERNAME = re.compile(r"[a-z0-9][a-z0-9._@+-]{0,254}")


def principal_problem(value: str) -> str | None:
    """Why ``value`` is not ``group:/<path>`` or ``user:<username>``; None when it is one."""
    kind, sep, name = value.partition(":")
    if not sep or kind not in {"group", "user"}:
        return f"{value!r} is not a principal: write group:/<path> or user:<username>"
    if kind == "group":
        segments = name.split("/")
        if (
            not name.startswith("/")
            or len(segments) < 2
            or not all(_GROUP_SEGMENT.fullmatch(s) for s in segments[1:])
        ):
            return (
                f"{value!r}: a group is its full path from the realm's top, /<group>[/<subgroup>]"
                " (letters, digits, space, '.', '_', '@', '+', '-' in each name)"
            )
        return None
    # Keycloak stores user names lowercased, and the provider looks a user up by exact name
    # (terraform-provider-keycloak keycloak/user.go, GetUserByUsername: user.Username ==
    # username), so a capital letter would never match.
    if not _USERNAME.fullmatch(name):
        return (
            f"{value!r}: a user name is lowercase letters, digits, '.', '_', '@', '+', '-',"
            " at most 255"
        )
    return None


def _principals(value: object) -> object:
    if not isinstance(value, list):
        return value  # the list type reports it
    seen: set[object] = set()
    for item in value:
        if not isinstance(item, str):
            continue  # the str type reports it
        problem = principal_problem(item)
        if problem is not None:
            raise ValueError(problem)
        if item in seen:
            raise ValueError(f"{item!r} is listed twice")
        seen.add(item)
    return value


Principals = Annotated[
    list[
        Annotated[
            str,
            JsonSchema(
                {"pattern": f"^(?:group:(?:/{_GROUP_SEGMENT.pattern})+|user:{_USERNAME.pattern})$"}
            ),
        ]
    ],
    BeforeValidator(_principals),
    JsonSchema({"uniqueItems": True}),
]


class AccessSpec(Model):
    """Who holds the gateway's roles: principals of the cluster's Keycloak realm."""

    admins: Principals = Field(default_factory=list, max_length=200)
    """Principals holding the admin role: ``group:/<path>`` or ``user:<username>``."""
    users: Principals = Field(default_factory=list, max_length=200)
    """Principals holding the user role: ``group:/<path>`` or ``user:<username>``."""


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _uuid(value: object) -> object:
    if isinstance(value, str) and not _UUID.fullmatch(value):
        raise ValueError(f"{value!r} is not a lowercase UUID (Keycloak's id of the object)")
    return value


KeycloakId = Annotated[str, BeforeValidator(_uuid), JsonSchema({"pattern": f"^{_UUID.pattern}$"})]


class KeycloakImportIds(Model):
    """Keycloak's ids (the UUIDs in the admin console's URLs) of an adopted gateway's client
    and its two roles: the provider imports each by ``<realm>/<id>``."""

    client: KeycloakId
    """The UUID of the adopted gateway's client."""
    admin_role: KeycloakId = Field(alias="adminRole")
    """The UUID of the client's admin role."""
    user_role: KeycloakId = Field(alias="userRole")
    """The UUID of the client's user role."""


class KeycloakClientSpec(Model):
    client_id: KeycloakName = Field(alias="clientId")
    """The gateway's client id in the realm; set it to upstream's ``<name>-<id>`` to keep an
    adopted gateway's existing client."""
    import_ids: KeycloakImportIds | None = Field(None, alias="importIds")
    """Keycloak's own ids of the adopted client and its roles, for ``import-file``."""

"""Sign-in through Keycloak, as data (``components.identity`` creates the client, its roles and
the role mappings): the roles, the principals and what the resolution decides for a gateway. No
provider SDK is imported here, so validating a stack does not load one (issue 23)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import pulumi
    import pulumi_keycloak as keycloak

ADMIN_ROLE = "openshell-admin"
USER_ROLE = "openshell-user"
ROLES_CLAIM = "hypershell.roles"
"""Upstream's claim. Keycloak nests a claim at each '.', and the gateway reads the same path."""
JWKS_TTL_SECONDS = 3600
REDIRECT_URIS = ("http://127.0.0.1:*", "http://localhost:*")
"""Loopback only: the CLI receives the authorization code on a port of the user's machine."""
DEFAULT_SCOPES = ("profile", "email", "roles", "web-origins", "acr")
PKCE_METHOD = "S256"

PrincipalKind = Literal["group", "user"]


@dataclass(frozen=True, kw_only=True, order=True)
class Principal:
    """A group (by its full path) or a user (by user name) of the realm."""

    kind: PrincipalKind
    name: str
    """``/parent/child`` for a group, the user name for a user."""

    def __str__(self) -> str:
        return f"{self.kind}:{self.name}"

    @staticmethod
    def parse(text: str) -> Principal:
        """``group:/path`` or ``user:name``, already validated by the declaration's model."""
        kind, _, name = text.partition(":")
        if kind == "group":
            return Principal(kind="group", name=name)
        if kind == "user":
            return Principal(kind="user", name=name)
        raise ValueError(f"{text!r} is not a principal")


@dataclass(frozen=True, kw_only=True)
class KeycloakServerArgs:
    """A Keycloak server the program signs in to with the client-credentials grant."""

    url: str
    """Base URL (before ``/realms``)."""
    realm: str
    """Realm of the admin client, and of the gateways' clients."""
    admin_client_id: str
    """Confidential client with a service account and the realm-management roles
    (docs/sign-in.md)."""
    admin_client_secret: pulumi.Input[str]
    """Its secret (a Pulumi secret)."""
    root_ca_certificate: str | None
    """PEM bundle the provider verifies the server with; None for the system trust store."""


def server_key(url: str, realm: str, admin_client_id: str) -> str:
    """The logical name of the provider of one Keycloak server: clusters that name the same
    server, realm and admin client share one provider, whatever their names."""
    digest = hashlib.sha256(f"{url}\0{realm}\0{admin_client_id}".encode()).hexdigest()[:10]
    return f"keycloak-{realm}-{digest}"


@dataclass(frozen=True, kw_only=True)
class IdentityArgs:
    realm: str
    """The realm of the client (and of every principal)."""
    client_id: str
    """The client's id, stable: derived from the gateway, or the adopted gateway's own."""
    issuer: str
    """The issuer the gateway trusts (``<url>/realms/<realm>`` or the stack's override)."""
    admins: tuple[Principal, ...] = ()
    """Principals granted ``openshell-admin`` (and, as upstream's owners, ``openshell-user``)."""
    users: tuple[Principal, ...] = ()
    """Principals granted ``openshell-user``."""
    provider: keycloak.Provider | None = None
    """The Keycloak server's provider (the program's, one per server); None inherits one."""


def grants(args: IdentityArgs) -> dict[Principal, tuple[str, ...]]:
    """Each principal and the roles it holds, sorted (an admin also holds the user role, as
    upstream's ``gateway:owner`` binding grants both)."""
    held: dict[Principal, set[str]] = {}
    for principal in args.admins:
        held.setdefault(principal, set()).update((ADMIN_ROLE, USER_ROLE))
    for principal in args.users:
        held.setdefault(principal, set()).add(USER_ROLE)
    return {p: tuple(sorted(held[p])) for p in sorted(held)}


def principal_suffix(principal: Principal) -> str:
    """A logical-name suffix for a principal: its kind and a digest of its whole text (group
    paths hold '/' and spaces, and two principals must never share a name)."""
    return f"{principal.kind}-{hashlib.sha256(str(principal).encode()).hexdigest()[:12]}"

"""Sign-in decisions of a stack: per cluster its Keycloak and trusted CA bundle, per gateway
its issuer, its Keycloak client and who holds its roles (issue 12).

One gateway signs people in one of three ways, decided here once:

- ``keycloak``: the cluster names a Keycloak server and the declaration no ``spec.oidc``: a
  client of the realm (``components.identity``), its id ``openshell-<name>`` unless
  ``spec.keycloak.clientId`` keeps an adopted gateway's own;
- ``oidc``: the declaration brings its own issuer (``spec.oidc``);
- ``none``: the declaration says no person signs in (``spec.signIn: none``).

A gateway with none of these is ``unset``: it renders (``gateway.toml`` without an OIDC table,
as before), and ``validate`` reports it (:func:`validate_rules`), as it reports an adopted
gateway that keeps its Keycloak client without Keycloak's ids of it (:func:`kept_client_problem`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from components.console_types import console_client_id
from components.gateway_config import OidcSettings
from components.hostnames import endpoint
from components.identity_types import (
    ADMIN_ROLE,
    JWKS_TTL_SECONDS,
    ROLES_CLAIM,
    USER_ROLE,
    IdentityArgs,
    Principal,
)
from components.settings import from_fields
from gatewayctl.errors import Problem
from gatewayctl.inputs import reserved
from gatewayctl.inputs.clusters import ClusterConfig, StackConfig
from gatewayctl.inputs.gateway_declaration import GatewaySpec
from gatewayctl.inputs.pem import bundle_problem
from gatewayctl.inputs.signin import KeycloakImportIds, KeycloakServer
from gatewayctl.inputs.stackfile import PROJECT
from gatewayctl.resolve.resolved import ClusterBundles, LoadedStack, ResolvedGateway, SignIn

BUNDLE_MAX_BYTES = 1 << 20
"""A CA bundle larger than this is no CA bundle (a ConfigMap holds at most 1 MiB)."""


@dataclass(frozen=True, kw_only=True)
class GatewaySignIn:
    """How one gateway signs people in, as the component args and the tooling need it."""

    mode: SignIn
    oidc: OidcSettings | None = None
    identity: IdentityArgs | None = None
    import_ids: KeycloakImportIds | None = None
    """Keycloak's ids of an adopted client and its roles (``import-file``)."""


def default_client_id(name: str) -> str:
    """The client id of a gateway's Keycloak client: stable for the gateway's life, and the
    same on every run (upstream's ``<name>-<id>`` changes with a new id)."""
    return f"openshell-{name}"


def resolve_sign_in(
    display: str, name: str, spec: GatewaySpec, cluster_name: str, cluster: ClusterConfig
) -> tuple[GatewaySignIn, list[Problem]]:
    server = cluster.identity.keycloak
    if spec.sign_in == "none":
        return GatewaySignIn(mode="none"), []
    if spec.oidc is not None:
        own = spec.oidc
        return GatewaySignIn(
            mode="oidc",
            oidc=from_fields(OidcSettings, own, jwks_ttl_secs="jwks_ttl_seconds"),
        ), []
    if server is None:
        problems = [
            Problem(
                display,
                f"spec.{field}",
                f"cluster {cluster_name!r} has no identity.keycloak; {why}",
            )
            for field, value, why in (
                ("access", spec.access, "declare spec.oidc and grant the roles in your issuer"),
                ("keycloak", spec.keycloak, "there is no Keycloak client to keep"),
            )
            if value is not None
        ]
        return GatewaySignIn(mode="unset"), problems
    client_id = spec.keycloak.client_id if spec.keycloak is not None else default_client_id(name)
    access = spec.access
    identity = IdentityArgs(
        realm=server.realm,
        client_id=client_id,
        issuer=server.issuer,
        admins=tuple(Principal.parse(p) for p in (access.admins if access else ())),
        users=tuple(Principal.parse(p) for p in (access.users if access else ())),
    )
    return GatewaySignIn(
        mode="keycloak",
        oidc=OidcSettings(
            issuer=server.issuer,
            audience=client_id,
            jwks_ttl_secs=JWKS_TTL_SECONDS,
            roles_claim=ROLES_CLAIM,
            admin_role=ADMIN_ROLE,
            user_role=USER_ROLE,
        ),
        identity=identity,
        import_ids=spec.keycloak.import_ids if spec.keycloak is not None else None,
    ), []


# --- files ----------------------------------------------------------------------------------


def _bundle(root: Path, relative: str) -> tuple[str | None, str | None]:
    """(PEM text, None) or (None, why not) for a CA bundle of the project."""
    path = root / relative
    try:
        if not path.resolve().is_relative_to(root.resolve()):
            return None, f"{relative!r} leads outside the project through a symbolic link"
        if not path.is_file():
            return None, f"{relative!r} is not a file of the project"
        data = path.read_bytes()[: BUNDLE_MAX_BYTES + 1]
    except (OSError, RuntimeError) as error:
        reason = getattr(error, "strerror", None) or "a loop of symbolic links"
        return None, f"{relative!r} cannot be read: {reason}"
    if len(data) > BUNDLE_MAX_BYTES:
        return None, f"{relative!r} is larger than {BUNDLE_MAX_BYTES:,} bytes; not a CA bundle"
    problem = bundle_problem(data)
    if problem is not None:
        return None, f"{relative!r} {problem}"
    return data.decode("ascii"), None


def read_bundles(
    root: Path, display: str, config: StackConfig
) -> tuple[dict[str, ClusterBundles], list[Problem]]:
    """Every cluster's CA bundles, read from the project (their text goes into the program's
    resources, so the offline render needs them too)."""
    found: dict[str, ClusterBundles] = {}
    problems: list[Problem] = []
    for name, cluster in sorted(config.clusters.items()):
        texts: dict[str, str | None] = {}
        server = cluster.identity.keycloak
        for key, field, relative in (
            ("trusted", "trustedCaBundleFile", cluster.trusted_ca_bundle_file),
            (
                "keycloak",
                "identity.keycloak.caBundleFile",
                server.ca_bundle_file if server is not None else None,
            ),
        ):
            texts[key] = None
            if relative is None:
                continue
            text, problem = _bundle(root, relative)
            if problem is not None:
                problems.append(Problem(display, f"{PROJECT}:clusters.{name}.{field}", problem))
            texts[key] = text
        found[name] = ClusterBundles(trusted=texts["trusted"], keycloak=texts["keycloak"])
    return found, problems


# --- across gateways ------------------------------------------------------------------------


Realm = tuple[str, str]
"""A Keycloak realm: the server (its URL as an endpoint) and the realm's name."""


def realm_of(server: KeycloakServer) -> Realm:
    """Clusters and stacks that name one server and realm share its clients (one namespace of
    client ids); the server is compared in the one normal form of an endpoint
    (``components.hostnames.endpoint``: case, default port, trailing slash or dot)."""
    return (endpoint(server.url), server.realm)


def clients_of(gateway: ResolvedGateway) -> list[tuple[str, str, str]]:
    """The Keycloak clients a gateway owns, each (client id, the field that makes it, what it
    is): its own client and, with a web console, the console's ``<id>-console``."""
    identity = gateway.args.identity
    if identity is None:
        return []
    owned = [(identity.client_id, "spec.keycloak.clientId", "")]
    if gateway.args.console is not None:
        console = console_client_id(identity.client_id)
        owned.append((console, "spec.console.enabled", " (the client of its web console)"))
    return owned


def admin_clients(clusters: Mapping[str, ClusterConfig]) -> dict[tuple[Realm, str], str]:
    """Every cluster's admin client (the one Pulumi signs in with), by realm and client id:
    the first cluster naming it."""
    found: dict[tuple[Realm, str], str] = {}
    for name, cluster in sorted(clusters.items()):
        server = cluster.identity.keycloak
        if server is not None:
            found.setdefault((realm_of(server), server.admin_client_id), name)
    return found


def client_problem(client_id: str, realm: Realm, admin_cluster: str | None) -> str | None:
    """Why a gateway may not own the client ``client_id`` of ``realm`` by itself: a client
    every realm has (``gatewayctl.inputs.reserved``), or the realm's admin client of the cluster
    ``admin_cluster``."""
    builtin = reserved.client_problem(client_id)
    if builtin is not None:
        return builtin
    if admin_cluster is not None:
        return (
            f"client {client_id!r} of realm {realm[1]!r} is the admin client Pulumi signs in"
            f" with (identity.keycloak.adminClientId of cluster {admin_cluster!r}); the gateway"
            " would take it over, and deleting the gateway would delete it"
        )
    return None


def client_clashes(gateways: Sequence[ResolvedGateway], config: StackConfig) -> list[Problem]:
    """Client ids are unique per Keycloak realm (clusters may share one): Keycloak refuses a
    second client of the same id, and one client cannot serve two gateways. A gateway's
    clients are its own and its console's; none may be a client Keycloak creates in every
    realm, or the realm's admin client."""
    admins = admin_clients(config.clusters)
    seen: dict[tuple[Realm, str], str] = {}
    problems = []
    for gateway in gateways:
        server = config.clusters[gateway.cluster].identity.keycloak
        if server is None:
            continue
        realm = realm_of(server)
        for client_id, field, what in clients_of(gateway):
            wrong = client_problem(client_id, realm, admins.get((realm, client_id)))
            if wrong is not None:
                problems.append(Problem(gateway.source, field, wrong))
            key = (realm, client_id)
            if key in seen:
                problems.append(
                    Problem(
                        gateway.source,
                        field,
                        f"client {client_id!r} of realm {server.realm!r} is already used"
                        f" by {seen[key]}",
                    )
                )
            else:
                seen[key] = f"{gateway.source}{what}"
    return problems


def no_sign_in(spec: GatewaySpec, cluster: ClusterConfig) -> bool:
    """No person can sign in: no ``spec.signIn: none``, no ``spec.oidc``, and the cluster has
    no Keycloak (:func:`resolve_sign_in`'s ``unset``)."""
    return spec.sign_in is None and spec.oidc is None and cluster.identity.keycloak is None


def no_sign_in_problem(source: str, cluster_name: str) -> Problem:
    """``validate``'s rule: a gateway with neither Keycloak nor ``spec.oidc`` says on purpose
    that no person signs in (``spec.signIn: none``)."""
    return Problem(
        source,
        "spec.signIn",
        f"no person can sign in: cluster {cluster_name!r} has no identity.keycloak and"
        " the gateway declares no spec.oidc; declare spec.oidc (your issuer) or"
        " spec.signIn: none",
    )


def kept_client_problem(
    source: str, name: str, client_id: str, import_ids: KeycloakImportIds | None
) -> Problem | None:
    """``validate``'s rule for an adopted gateway (``spec.namespace``) that keeps a client of
    its own (``spec.keycloak.clientId``, upstream's ``<name>-<id>``): without Keycloak's ids of
    it and its roles, ``import-file`` leaves them out, and ``pulumi up`` creates a client that
    exists, which Keycloak refuses (docs/adoption.md, step 5). A client id that is the derived
    one is a new client: nothing to import."""
    if import_ids is not None or client_id == default_client_id(name):
        return None
    return Problem(
        source,
        "spec.keycloak.importIds",
        f"missing: the gateway is adopted (spec.namespace) and keeps the client {client_id!r};"
        " without Keycloak's ids of it `pulumi up` creates it anew, which Keycloak refuses as"
        " it exists: add importIds {client, adminRole, userRole} (the UUIDs in Keycloak's admin"
        f" console), or remove spec.keycloak to give the gateway a new client"
        f" {default_client_id(name)!r}",
    )


def validate_rules(loaded: LoadedStack) -> list[Problem]:
    """``validate``'s own rules for every gateway of a stack that loads (for one that does
    not, ``gatewayctl.resolve.stack.validate_rules``): :func:`no_sign_in_problem` and
    :func:`kept_client_problem`."""
    problems = [
        no_sign_in_problem(gateway.source, gateway.cluster)
        for gateway in loaded.gateways
        if gateway.sign_in == "unset"
    ]
    for gateway in loaded.gateways:
        identity = gateway.args.identity
        if gateway.adopted and identity is not None:
            kept = kept_client_problem(
                gateway.source, gateway.name, identity.client_id, gateway.keycloak_import_ids
            )
            problems += [kept] if kept is not None else []
    return problems


def access_entry(gateway: ResolvedGateway) -> Mapping[str, object]:
    """The plan's sign-in facts of a gateway: issuer, client id, roles and who holds them."""
    oidc, identity = gateway.args.oidc, gateway.args.identity
    roles = [r for r in (oidc.admin_role, oidc.user_role) if r] if oidc is not None else []
    return {
        "signIn": gateway.sign_in,
        "issuer": oidc.issuer if oidc is not None else None,
        "clientId": oidc.audience if oidc is not None else None,
        "roles": roles,
        "access": {
            "admins": sorted(str(p) for p in identity.admins) if identity else [],
            "users": sorted(str(p) for p in identity.users) if identity else [],
        },
    }

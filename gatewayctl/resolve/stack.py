"""Resolve a stack: its config and its declarations, validated together before any resource.

Every problem of every file is collected and raised at once as ``InvalidInputError``; nothing is
returned half-valid. Cross-file rules: the cluster exists (or is the only one), names,
namespaces and hosts are unique, hosts obey the one hostname function, images resolve, no
gateway takes a namespace or role the stack config refers to, no two share a credential
namespace or a Vault role or mount. The files themselves are read by
:mod:`gatewayctl.inputs.stackfile` and :mod:`gatewayctl.inputs.declarations`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from components import images, naming
from components.credentials import GatewayCredentials
from components.database_types import DatabaseEndpoint
from components.exposure_types import (
    GatewayExposure,
    GrpcRouteExposure,
    NoExposure,
    RouteExposure,
    SharedGateway,
)
from components.gateway_types import GatewayArgs, GatewayImages
from components.hostnames import HostnameError, gateway_hostname, grpcs_address
from components.images import ImageReferenceError
from components.ingress import IngressMode
from gatewayctl.errors import InvalidInputError, Problem
from gatewayctl.inputs import reserved
from gatewayctl.inputs.declarations import load_declarations
from gatewayctl.inputs.models import (
    ClusterConfig,
    GatewayDeclaration,
    KeycloakImportIds,
    StackConfig,
    is_inside_project,
)
from gatewayctl.inputs.releases import ReleaseFile, known, load_releases
from gatewayctl.inputs.stackfile import PROJECT, parse_stack_config, read_stack_config, stack_file
from gatewayctl.resolve import credentials
from gatewayctl.resolve.console import resolve_console
from gatewayctl.resolve.identity import (
    ClusterBundles,
    SignIn,
    client_clashes,
    kept_client_problem,
    no_sign_in,
    no_sign_in_problem,
    read_bundles,
    resolve_sign_in,
)
from gatewayctl.resolve.releases import binding_problems, override_problems


@dataclass(frozen=True, kw_only=True)
class ResolvedGateway:
    """A declaration with every stack-level decision made: the ``Gateway`` component's args,
    and what only the tooling reads."""

    name: str
    source: str
    """The declaration file, as problems name it."""
    adopted: bool
    """The declaration names an existing namespace (``spec.namespace``): an adoption."""
    ingress_mode: IngressMode
    """The cluster's resolved mode, for reports (the component reads ``args.exposure``)."""
    args: GatewayArgs
    """The input of the gateway's ``Gateway`` component."""
    release: str | None = None
    """The release its images come from (its own ``spec.release``, else its cluster's)."""
    release_pinned: bool = False
    """The release is the gateway's own pin (``spec.release``), not its cluster's binding."""
    image_overrides: tuple[str, ...] = ()
    """The images the declaration sets itself (``spec.images``), in place of the release's."""
    sign_in: SignIn = "unset"
    """How people sign in (``gatewayctl.resolve.identity``); the args carry what the component
    needs."""
    keycloak_import_ids: KeycloakImportIds | None = None
    """Keycloak's ids of an adopted gateway's client and roles, for ``import-file``."""

    @property
    def cluster(self) -> str:
        return self.args.cluster

    @property
    def namespace(self) -> str:
        return self.args.namespace

    @property
    def database_name(self) -> str:
        return self.args.database_name

    @property
    def hostname(self) -> str | None:
        """The external host, None when the gateway is not exposed."""
        return self.args.exposure.host

    @property
    def address(self) -> str | None:
        return grpcs_address(self.hostname) if self.hostname else None

    @property
    def credentials(self) -> GatewayCredentials:
        return self.args.credentials

    @property
    def console_host(self) -> str | None:
        """The web console's external host, None without one or when it is not exposed."""
        return self.args.console.exposure.host if self.args.console is not None else None


@dataclass(frozen=True, kw_only=True)
class LoadedStack:
    name: str
    config_path: str
    config: StackConfig
    gateways: tuple[ResolvedGateway, ...]
    releases: Mapping[str, ReleaseFile] = dataclasses.field(default_factory=dict)
    """Every release of the project (``releases/``), by name."""
    bundles: Mapping[str, ClusterBundles] = dataclasses.field(default_factory=dict)
    """Each cluster's CA bundles (PEM text), read from the project."""

    def cluster(self, name: str) -> ClusterConfig:
        return self.config.clusters[name]


def _pick_cluster(
    display: str, spec_cluster: str | None, config: StackConfig
) -> tuple[str | None, list[Problem]]:
    # An unknown spec.cluster was already reported by the model (validation context).
    if spec_cluster is not None:
        return spec_cluster, []
    clusters = sorted(config.clusters)
    if len(clusters) == 1:
        return clusters[0], []
    return None, [
        Problem(display, "spec.cluster", f"required: the stack has clusters {', '.join(clusters)}")
    ]


def _resolve(
    display: str,
    declaration: GatewayDeclaration,
    config: StackConfig,
    config_path: str,
    releases: Mapping[str, ReleaseFile],
    bundles: Mapping[str, ClusterBundles] | None = None,
    project: Mapping[str, tuple[str, str]] | None = None,
) -> tuple[ResolvedGateway | None, list[Problem]]:
    name, spec = declaration.metadata.name, declaration.spec
    project = project or {}
    cluster_name, problems = _pick_cluster(display, spec.cluster, config)
    if cluster_name is None:
        return None, problems
    cluster = config.clusters[cluster_name]
    # An unknown cluster binding is the stack file's problem (releases.binding_problems).
    release_name = spec.release or cluster.release
    release = releases.get(release_name) if release_name is not None else None
    if spec.release is not None and release is None:
        problems.append(
            Problem(display, "spec.release", f"unknown release {spec.release!r}; {known(releases)}")
        )
    overrides = {"gateway": spec.images.gateway, "supervisor": spec.images.supervisor}
    problems += override_problems(display, overrides, config_path, config.production)
    sign_in, found = resolve_sign_in(display, name, spec, cluster_name, cluster)
    problems += found
    mode = cluster.ingress_mode
    namespace = spec.namespace or naming.default_namespace(name)
    database_name = spec.database_name or naming.postgres_identifier(name)
    problems += _reserved_namespace(
        display, namespace, spec.namespace is not None, cluster_name, cluster, project
    )
    problems += _admin_role(
        display, database_name, spec.database_name is not None, cluster_name, config
    )
    console, found = resolve_console(
        display,
        spec,
        namespace=namespace,
        cluster_name=cluster_name,
        cluster=cluster,
        keycloak=sign_in.identity is not None,
        release=release,
        production=config.production,
    )
    problems += found
    stored = credentials.resolve(spec.credentials, namespace)
    problems += credentials.reserved(display, stored, namespace, cluster_name, cluster, project)

    # An explicit host is checked whenever it is written, even if unused (exposure disabled or
    # mode none), so a declaration stays valid when it moves to another cluster.
    exposed = spec.exposure.enabled and mode is not IngressMode.NONE
    hostname: str | None = None
    if exposed or spec.exposure.host is not None:
        try:
            host = gateway_hostname(
                namespace=namespace, base_domain=cluster.base_domain, explicit=spec.exposure.host
            )
            problems += _foreign_domain(display, host, cluster_name, config)
            if exposed:
                problems += _outside_listener(display, host, mode, cluster.base_domain)
            hostname = host if exposed else None
        except HostnameError as error:
            problems.append(Problem(display, "spec.exposure.host", str(error)))

    resolved: dict[str, str] = {}
    for which, override, default, builtin in (
        ("gateway", spec.images.gateway, config.images.gateway, images.DEFAULT_GATEWAY_IMAGE),
        (
            "supervisor",
            spec.images.supervisor,
            config.images.supervisor,
            images.DEFAULT_SUPERVISOR_IMAGE,
        ),
        ("sandbox", None, config.images.sandbox, images.DEFAULT_SANDBOX_IMAGE),
    ):
        # Per gateway > its release > stack default > built-in (DESIGN §5.4, releases in
        # docs/design-notes.md); the mirrors rewrite the result, keeping tag and digest.
        origin = None
        if release is not None:
            default = release.release.image(which)
            origin = f"release {release.release.name!r} ({release.path}: spec.images.{which})"
        try:
            resolved[which] = images.resolve_image(
                override=override,
                stack_default=default,
                builtin_default=builtin,
                mirrors=cluster.registry_mirrors,
            )
        except ImageReferenceError as error:
            problems.append(
                _mirror_problem(
                    display,
                    config_path,
                    cluster_name,
                    cluster.registry_mirrors,
                    field=which,
                    chosen=(override, default, builtin),
                    error=error,
                    origin=origin,
                )
            )
    if problems:
        return None, problems
    server = cluster.database
    bundle = bundles.get(cluster_name) if bundles is not None else None
    return (
        ResolvedGateway(
            name=name,
            source=display,
            adopted=spec.namespace is not None,
            ingress_mode=mode,
            release=release_name,
            release_pinned=spec.release is not None,
            image_overrides=tuple(k for k, v in overrides.items() if v is not None),
            sign_in=sign_in.mode,
            keycloak_import_ids=sign_in.import_ids,
            args=GatewayArgs(
                cluster=cluster_name,
                namespace=namespace,
                exposure=_exposure(hostname, cluster),
                images=GatewayImages(**resolved),
                replicas=spec.replicas,
                database_name=database_name,
                database_host=server.host,
                database_port=server.port,
                database_endpoint=DatabaseEndpoint(
                    host=server.admin_host,
                    port=server.admin_port,
                    ssl_root_cert=server.ssl_root_cert,
                ),
                retain_database=spec.deletion_policy == "Retain",
                openshift=cluster.capabilities.openshift,
                metrics_namespace=cluster.metrics_namespace,
                credentials=stored,
                oidc=sign_in.oidc,
                identity=sign_in.identity,
                trusted_ca_bundle=bundle.trusted if bundle is not None else None,
                console=console,
            ),
        ),
        [],
    )


def _exposure(host: str | None, cluster: ClusterConfig) -> GatewayExposure:
    """How the gateway is reached, decided once. ``host`` is None when it is not exposed."""
    mode, shared = cluster.ingress_mode, cluster.ingress.gateway
    if host is None or mode is IngressMode.NONE:
        return NoExposure()
    if mode is IngressMode.ROUTE:
        return RouteExposure(host=host, router_namespace=cluster.ingress.router_namespace)
    assert shared is not None  # ClusterConfig refuses gateway-api without ingress.gateway
    return GrpcRouteExposure(
        host=host,
        gateway=SharedGateway(
            name=shared.name, namespace=shared.namespace, section_name=shared.section_name
        ),
    )


def _mirror_problem(
    display: str,
    config_path: str,
    cluster_name: str,
    mirrors: Mapping[str, str],
    *,
    field: str,
    chosen: tuple[str | None, str | None, str],
    error: ImageReferenceError,
    origin: str | None = None,
) -> Problem:
    """An image a registry mirror turns into an invalid reference. The problem is the
    declaration's when the image is its own override, else the mirror's: the stack file's.

    ``chosen`` is (declaration override, stack default, built-in default); ``origin`` names
    the default when it is not the stack's (a release's image).
    """
    override, default, builtin = chosen
    image = override or default or builtin
    mirror = f"{PROJECT}:clusters.{cluster_name}.registryMirrors"
    # The entry that applies is the longest prefix that fails on its own (the images module
    # decides which prefixes match).
    failing = [prefix for prefix in sorted(mirrors) if _fails(image, {prefix: mirrors[prefix]})]
    if failing:
        mirror += "." + max(failing, key=len)
    if override:
        return Problem(display, f"spec.images.{field}", f"after {config_path}: {mirror}: {error}")
    if origin is None:
        origin = f"stack default ({PROJECT}:images.{field})" if default else "built-in default"
    return Problem(
        config_path,
        mirror,
        f"turns the {origin} {field} image {image!r} into an invalid reference: {error}",
    )


def _fails(image: str, mirrors: Mapping[str, str]) -> bool:
    try:
        images.resolve_image(
            override=image, stack_default=None, builtin_default=image, mirrors=mirrors
        )
    except ImageReferenceError:
        return True
    return False


def _reserved_namespace(
    display: str,
    namespace: str,
    explicit: bool,
    cluster_name: str,
    cluster: ClusterConfig,
    project: Mapping[str, tuple[str, str]],
) -> list[Problem]:
    """The stack config's own namespaces (shared Gateway, router, metrics, in-cluster database
    service) and the project's (the operator's, ``gatewayctl.inputs.reserved``) are not a tenant's:
    removing the gateway would delete its namespace."""
    found = reserved.namespace_owner(namespace, cluster.referenced_namespaces(), project)
    if found is None:
        return []
    what, field, of_cluster = found
    where = f" of cluster {cluster_name!r}" if of_cluster else ""
    value = repr(namespace) if explicit else f"the default namespace {namespace!r}"
    return [
        Problem(
            display,
            "spec.namespace",
            f"{value} is {what}{where} ({field}); a gateway needs its own",
        )
    ]


def _admin_role(
    display: str, database_name: str, explicit: bool, cluster_name: str, config: StackConfig
) -> list[Problem]:
    """The gateway manages the role named after its database (and drops it with
    ``deletionPolicy: Delete``): never the admin role of its database server, which other
    clusters may share."""
    own = config.clusters[cluster_name].database
    owners = [
        name
        for name in sorted(config.clusters, key=lambda n: (n != cluster_name, n))
        if (server := config.clusters[name].database).admin_user == database_name
        and (server.admin_host, server.admin_port) == (own.admin_host, own.admin_port)
    ]
    if not owners:
        return []
    value = repr(database_name) if explicit else f"the default database name {database_name!r}"
    return [
        Problem(
            display,
            "spec.databaseName",
            f"{value} is the database server's admin user (database.adminUser of cluster"
            f" {owners[0]!r}): the gateway would take over that role (reset its password) and,"
            " with deletionPolicy Delete, drop it; a gateway needs a role and database of its own",
        )
    ]


def _foreign_domain(display: str, host: str, own: str, config: StackConfig) -> list[Problem]:
    """A host under another cluster's base domain would take a slot that cluster hands out."""
    return [
        Problem(
            display,
            "spec.exposure.host",
            f"host {host!r} is under the base domain {other.base_domain!r} of cluster"
            f" {name!r}; a gateway on {own!r} may not use it",
        )
        for name, other in sorted(config.clusters.items())
        if name != own
        and other.base_domain is not None
        and other.base_domain != config.clusters[own].base_domain
        and (host == other.base_domain or host.endswith("." + other.base_domain))
    ]


def _outside_listener(
    display: str, host: str, mode: IngressMode, base_domain: str | None
) -> list[Problem]:
    """In gateway-api mode TLS ends at the shared Gateway's listener, whose certificate is the
    wildcard ``*.<baseDomain>``: a GRPCRoute for any other host is not accepted (or is served
    the wrong certificate). Route mode passes TLS through to the tenant's own certificate."""
    if mode is not IngressMode.GATEWAY_API or base_domain is None:
        return []
    if host.endswith("." + base_domain) and "." not in host.removesuffix("." + base_domain):
        return []
    return [
        Problem(
            display,
            "spec.exposure.host",
            f"host {host!r} is outside the base domain {base_domain!r}: in gateway-api mode the"
            f" shared Gateway's listener serves only *.{base_domain}; leave the host unset or"
            " use a cluster in route mode for a vanity host",
        )
    ]


def selects(config: StackConfig, declaration: GatewayDeclaration) -> bool:
    """A shared inventory's rule: on one of the stack's clusters, with every selector label."""
    wanted = config.selector.match_labels.items() if config.selector else ()
    return declaration.spec.cluster in config.clusters and all(
        declaration.metadata.labels.get(k) == v for k, v in wanted
    )


def _select(
    declarations: list[tuple[str, GatewayDeclaration]], config: StackConfig
) -> tuple[list[tuple[str, GatewayDeclaration]], list[Problem]]:
    problems = [
        Problem(source, "spec.cluster", "required in a shared inventory")
        for source, declaration in declarations
        if declaration.spec.cluster is None
    ]
    return [(s, d) for s, d in declarations if selects(config, d)], problems


def _duplicates(gateways: Sequence[ResolvedGateway], config: StackConfig) -> list[Problem]:
    """Names, namespaces (per cluster), databases and their roles (per database server, which
    clusters may share) and hosts (DNS is global) are unique."""

    def server(gateway: ResolvedGateway) -> str:
        database = config.clusters[gateway.cluster].database
        return f"{database.admin_host}:{database.admin_port}"

    rules: tuple[
        tuple[str, Callable[[ResolvedGateway], object], Callable[[ResolvedGateway], str]], ...
    ] = (
        ("metadata.name", lambda g: g.name, lambda g: f"gateway {g.name!r} is already declared in"),
        (
            "spec.namespace",
            lambda g: (g.cluster, g.namespace),
            lambda g: f"namespace {g.namespace!r} on cluster {g.cluster!r} is already used by",
        ),
        (
            "spec.databaseName",
            lambda g: (server(g), g.database_name),
            lambda g: f"database {g.database_name!r} on server {server(g)} is already used by",
        ),
        (
            "spec.exposure.host",
            lambda g: g.hostname,
            lambda g: f"host {g.hostname!r} is already used by",
        ),
        (
            "spec.console.enabled",
            lambda g: g.console_host,
            lambda g: f"console host {g.console_host!r} is already used by",
        ),
    )
    problems = []
    for field, key, clash in rules:
        seen: dict[object, str] = {}
        for gateway in gateways:
            value = key(gateway)
            if value is None:
                continue
            if value in seen:
                problems.append(Problem(gateway.source, field, f"{clash(gateway)} {seen[value]}"))
            else:
                seen[value] = gateway.source
    return problems


def _linked_outside(root: Path, display: str, config: StackConfig) -> list[Problem]:
    """``database.sslRootCert`` files that a symbolic link leads out of the project: ``pulumi
    up`` would hand the provider a file of the machine running it (the model refuses absolute
    paths and ``..``)."""
    problems = []
    for name, cluster in sorted(config.clusters.items()):
        path = cluster.database.ssl_root_cert
        if path is None:
            continue
        field = f"{PROJECT}:clusters.{name}.database.sslRootCert"
        try:
            inside = (root / path).resolve().is_relative_to(root.resolve())
        except (OSError, RuntimeError) as error:  # a link loop is a RuntimeError before 3.13
            reason = getattr(error, "strerror", None) or "a loop of symbolic links"
            problems.append(Problem(display, field, f"{path!r} cannot be resolved: {reason}"))
            continue
        if not inside:
            problems.append(
                Problem(
                    display,
                    field,
                    f"{path!r} leads outside the project through a symbolic link; it must be a"
                    " file inside the project",
                )
            )
    return problems


def _declaration_problems(root: Path, display: str, raw_config: Mapping[str, Any]) -> list[Problem]:
    """With the stack config broken, still check each declaration on its own (no clusters)."""
    directory = raw_config.get("declarationsDir")
    if not isinstance(directory, str) or not is_inside_project(directory):
        return []
    return load_declarations(root, directory, None, config_path=display)[1]


def validate_rules(root: Path, stack: str) -> list[Problem]:
    """``validate``'s own rules (``gatewayctl.resolve.identity.validate_rules``: nobody can sign in,
    an adopted client without its ids) for a stack that does not load: every declaration valid on
    its own whose cluster is known, so that the rules are reported with the stack's other
    problems, not only once they are fixed."""
    try:
        display, raw = read_stack_config(root, stack)
        config = parse_stack_config(display, raw)
    except (InvalidInputError, OSError):
        return []  # the stack file's own problems; its declarations cannot be placed
    inventory = config.selector is not None
    declarations, _ = load_declarations(
        root, config.declarations_dir, None if inventory else config.clusters, config_path=display
    )
    if inventory:
        declarations, _ = _select(declarations, config)
    problems = []
    for source, declaration in declarations:
        spec = declaration.spec
        cluster_name, _ = _pick_cluster(source, spec.cluster, config)
        if cluster_name is None:
            continue
        cluster = config.clusters[cluster_name]
        if no_sign_in(spec, cluster):
            problems.append(no_sign_in_problem(source, cluster_name))
        # Without the cluster's Keycloak, spec.keycloak is a problem of its own.
        if spec.namespace is not None and spec.keycloak and cluster.identity.keycloak is not None:
            name, kept = declaration.metadata.name, spec.keycloak
            found = kept_client_problem(source, name, kept.client_id, kept.import_ids)
            problems += [found] if found is not None else []
    return problems


def load_stack(root: Path, stack: str, raw_config: Mapping[str, Any] | None = None) -> LoadedStack:
    """Validate a stack's config and all its declarations; raise InvalidInputError on problems.

    ``raw_config`` is the project's config keys without prefix (from ``pulumi.Config`` in a
    real run); when None it is read from ``Pulumi.<stack>.yaml``.
    """
    display = stack_file(stack)
    if raw_config is None:
        display, raw_config = read_stack_config(root, stack)
    try:
        config = parse_stack_config(display, raw_config)
    except InvalidInputError as error:
        raise InvalidInputError(
            error.problems + _declaration_problems(root, display, raw_config)
        ) from None
    inventory = config.selector is not None
    declarations, problems = load_declarations(
        root, config.declarations_dir, None if inventory else config.clusters, config_path=display
    )
    releases, release_problems = load_releases(root)
    problems += release_problems + binding_problems(display, config, releases)
    problems += _linked_outside(root, display, config)
    bundles, found = read_bundles(root, display, config)
    problems += found
    if inventory:
        declarations, missing = _select(declarations, config)
        problems += missing
    gateways: list[ResolvedGateway] = []
    project = reserved.project_namespaces(root)
    for source, declaration in declarations:
        gateway, found = _resolve(source, declaration, config, display, releases, bundles, project)
        problems += found
        if gateway is not None:
            gateways.append(gateway)
    problems += _duplicates(gateways, config)
    problems += credentials.clashes(gateways, lambda g: g.cluster)
    problems += credentials.vault_clashes(
        gateways, lambda g: g, lambda g: g.source, lambda a, b: a.cluster == b.cluster
    )
    problems += client_clashes(gateways, config)
    if problems:
        raise InvalidInputError(problems)
    return LoadedStack(
        name=stack,
        config_path=display,
        config=config,
        gateways=tuple(sorted(gateways, key=lambda g: g.name)),
        releases=releases,
        bundles=bundles,
    )

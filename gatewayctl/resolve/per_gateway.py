"""Resolve one declaration into a :class:`~gatewayctl.resolve.resolved.ResolvedGateway`: its
cluster, namespace and admin role (none the stack config reserves), its host (the one hostname
function, inside its cluster's domain and listener), its images through the registry mirrors,
its sign-in, console and credentials. Every problem is returned, none raised; the rules across
gateways are :mod:`gatewayctl.resolve.stack`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from components import images, naming
from components.database_types import DatabaseEndpoint
from components.deployment import WorkloadSettings
from components.gateway_types import GatewayArgs, GatewayImages
from components.hostnames import HostnameError, gateway_hostname
from components.images import ImageReferenceError
from components.ingress import reaches_outside
from components.rotation import Rotation
from components.settings import from_fields
from gatewayctl.errors import Problem
from gatewayctl.inputs import reserved
from gatewayctl.inputs.clusters import ClusterConfig, StackConfig
from gatewayctl.inputs.gateway_declaration import GatewayDeclaration
from gatewayctl.inputs.release_files import ReleaseFile, known
from gatewayctl.inputs.stackfile import PROJECT
from gatewayctl.resolve import credential_drivers
from gatewayctl.resolve.console_plan import resolve_console
from gatewayctl.resolve.exposure_plan import gateway_exposure, outside_listener
from gatewayctl.resolve.release_bindings import override_problems
from gatewayctl.resolve.resolved import ClusterBundles, ResolvedGateway
from gatewayctl.resolve.signin_plan import (
    resolve_sign_in,
)


def pick_cluster(
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


def resolve_gateway(
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
    cluster_name, problems = pick_cluster(display, spec.cluster, config)
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
        sign_in=sign_in.mode,
        release=release,
        production=config.production,
    )
    problems += found
    stored = credential_drivers.resolve(spec.credentials, namespace)
    problems += credential_drivers.reserved(
        display, stored, namespace, cluster_name, cluster, project
    )

    # An explicit host is checked whenever it is written, even if unused (exposure disabled or
    # mode none), so a declaration stays valid when it moves to another cluster.
    exposed = spec.exposure.enabled and reaches_outside(mode)
    hostname: str | None = None
    if exposed or spec.exposure.host is not None:
        try:
            host = gateway_hostname(
                namespace=namespace, base_domain=cluster.base_domain, explicit=spec.exposure.host
            )
            problems += _foreign_domain(display, host, cluster_name, config)
            if exposed:
                problems += outside_listener(display, host, mode, cluster.base_domain)
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
        # Per gateway > its release > stack default > built-in (docs/upstream-differences.md,
        # "4. Image references are checked"; releases in
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
            labels=dict(declaration.metadata.labels),
            args=GatewayArgs(
                cluster=cluster_name,
                namespace=namespace,
                exposure=gateway_exposure(hostname, cluster),
                images=GatewayImages(**resolved),
                settings=from_fields(WorkloadSettings, spec),
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
                rotation=from_fields(Rotation, spec.rotation),
            ),
        ),
        [],
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


def service_namespaces(
    declarations: Iterable[tuple[str, GatewayDeclaration]],
) -> dict[str, tuple[str, str]]:
    """The namespaces of the in-cluster services the declarations name (a Vault's address, an
    issuer): namespace -> (what it is, where it is named). No gateway may take one, as its
    namespace or its credential store, whichever declaration names it: the service's data
    would be the gateway's (``gatewayctl.inputs.reserved.service_namespace``). The first
    declaration naming a namespace wins."""
    found: dict[str, tuple[str, str]] = {}
    for source, declaration in declarations:
        spec = declaration.spec
        named: list[tuple[str, str, str]] = []
        if spec.credentials.vault is not None:
            named.append(
                ("Vault", "spec.credentials.vault.address", spec.credentials.vault.address)
            )
        if spec.oidc is not None:
            named.append(("issuer", "spec.oidc.issuer", spec.oidc.issuer))
        for what, field, url in named:
            namespace = reserved.url_namespace(url)
            if namespace is not None:
                found.setdefault(
                    namespace,
                    (f"the namespace of the {what} service {url!r}", f"{source}: {field}"),
                )
    return found


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

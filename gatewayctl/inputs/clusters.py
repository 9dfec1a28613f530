"""The stack config as models (docs/reference.md): the stack's clusters (capabilities, ingress,
registry mirrors, database server, storage, release, identity), its default images, the
selector of a shared inventory and the stack's switches.
"""

from __future__ import annotations

from typing import Annotated, assert_never

from pydantic import BeforeValidator, Field, WithJsonSchema, field_validator, model_validator

from components.hostnames import check_dns_name, check_host
from components.images import parse_image
from components.ingress import (
    AUTO,
    IngressMode,
    IngressSetting,
    parse_ingress_mode,
    resolve_ingress_mode,
)
from gatewayctl.inputs import reserved
from gatewayctl.inputs.model import (
    DnsLabel,
    ImageReference,
    JsonSchema,
    KeysByPattern,
    LabelKey,
    LabelValue,
    Model,
    ProjectPath,
    ReleaseName,
)
from gatewayctl.inputs.signin import IdentityConfig


def _mirror_name(value: object) -> object:
    if not isinstance(value, str):
        return value  # the str type reports it
    ref = parse_image(value)
    if ref.tag or ref.digest:
        raise ValueError(f"{value!r}: a mirror names a repository prefix, without tag or digest")
    return ref.name


def _ingress_mode(value: object) -> object:
    if isinstance(value, IngressMode):
        return value
    if not isinstance(value, str):
        raise ValueError(
            f"expected a string such as route, gateway-api, none or auto, not {value!r}"
        )
    return parse_ingress_mode(value)


MirrorName = Annotated[str, BeforeValidator(_mirror_name)]


class Capabilities(Model):
    """What the cluster serves: ``ingress.mode`` ``auto`` resolves by it, ``route`` and
    ``gateway-api`` require it."""

    openshift: bool = False
    """The cluster serves ``route.openshift.io/v1`` (OpenShift)."""
    gateway_api: bool = Field(False, alias="gatewayApi")
    """The cluster serves Gateway API v1 with GRPCRoute and a shared Gateway exists."""


class SharedGatewayRef(Model):
    """The shared Gateway (Gateway API) the cluster's gateways attach their routes to."""

    name: DnsLabel
    """The shared Gateway's name: every gateway's GRPCRoute (and console's HTTPRoute) names it
    as its parent."""
    namespace: DnsLabel = "openshift-ingress"
    """The shared Gateway's namespace: each gateway's NetworkPolicy admits ingress from it; no
    gateway may take it."""
    section_name: DnsLabel = Field("grpc", alias="sectionName")
    """The listener the gateways' GRPCRoutes attach to (TLS for ``*.<baseDomain>``)."""
    https_section_name: DnsLabel = Field("https", alias="httpsSectionName")
    """The HTTPS listener web consoles attach to (upstream's GATEWAY_API_HTTP_LISTENER_NAME)."""

    @model_validator(mode="after")
    def _two_listeners(self) -> SharedGatewayRef:
        if self.https_section_name == self.section_name:
            raise ValueError(
                f"httpsSectionName and sectionName are both {self.section_name!r}: consoles"
                " (HTTPRoute) and gateways (GRPCRoute) attach to two listeners of their own"
            )
        return self


class IngressConfig(Model):
    """How the cluster's gateways are reached from outside it (docs/upstream-differences.md,
    "5. Ingress modes are chosen per cluster")."""

    mode: Annotated[
        IngressSetting,
        BeforeValidator(_ingress_mode),
        WithJsonSchema({"enum": [*IngressMode, AUTO], "type": "string"}),
    ] = AUTO
    """``route``: an OpenShift Route with TLS passthrough per gateway (needs
    ``capabilities.openshift``); ``gateway-api``: a GRPCRoute on the shared Gateway
    ``ingress.gateway`` (needs ``capabilities.gatewayApi``); ``none``: no external access;
    ``auto``: ``gateway-api`` if ``capabilities.gatewayApi``, else ``route`` if
    ``capabilities.openshift``, else ``none``. Upstream's spellings (``routes``,
    ``gatewayapi``, ``off``, ``disabled``) are read too, in any case."""
    router_namespace: DnsLabel = Field("openshift-ingress", alias="routerNamespace")
    """The OpenShift router's namespace (mode ``route``): each gateway's NetworkPolicy admits
    ingress from it; no gateway may take it. Unused in the other modes."""
    gateway: SharedGatewayRef | None = None
    """The shared Gateway; required when the mode resolves to ``gateway-api``, unused in the
    other modes."""


class DatabaseServer(Model):
    """The cluster's PostgreSQL server: Pulumi makes each gateway's role and database there."""

    admin_host: str = Field(alias="adminHost", min_length=1)
    """Host Pulumi connects to as admin (verify-full: must match the server certificate)."""
    admin_port: int = Field(5432, alias="adminPort", ge=1, le=65535)
    """Port Pulumi connects to as admin."""
    admin_user: str = Field(alias="adminUser", min_length=1)
    """The role Pulumi logs in as to make the gateways' roles and databases (its password:
    ``clusterSecrets.<cluster>.dbAdminPassword``): no reserved role, and no gateway's role may be
    it."""
    host: str = Field(min_length=1)
    """Host the gateway pods connect to."""
    port: int = Field(5432, ge=1, le=65535)
    """Port the gateway pods connect to."""
    ssl_root_cert: ProjectPath | None = Field(None, alias="sslRootCert")
    """CA bundle for the admin connection, a file of the project (``pulumi up`` reads it from
    there; a path outside could point the provider at any file of the machine running it);
    None uses the system trust store."""

    @field_validator("admin_host", "host")
    @classmethod
    def _host(cls, value: str) -> str:
        return check_dns_name(value, what="database host")

    @field_validator("admin_user")
    @classmethod
    def _admin_user(cls, value: str) -> str:
        problem = reserved.role_problem(value, login=True)
        if problem is not None:
            raise ValueError(f"{problem}; it cannot be the admin role Pulumi logs in as")
        return value


class ClusterConfig(Model):
    """One cluster of the stack; declarations name it in ``spec.cluster``."""

    kubeconfig_context: str | None = Field(None, alias="kubeconfigContext")
    """The context of the kubeconfig that Pulumi's Kubernetes provider and ``status --live``
    use for this cluster; None: the kubeconfig's current context."""
    capabilities: Capabilities = Capabilities()
    """What the cluster serves, as said here: the tool does not probe the cluster."""
    ingress: IngressConfig = IngressConfig()
    """How the gateways are reached from outside the cluster."""
    base_domain: str | None = Field(None, alias="baseDomain")
    """Each exposed gateway's host is ``gw-<namespace>.<baseDomain>`` unless it sets
    ``spec.exposure.host`` (a host under this domain must be that slot), a console's
    ``console-<namespace>.<baseDomain>``. None: every exposed gateway sets its host."""
    registry_mirrors: dict[MirrorName, MirrorName] = Field(
        default_factory=dict, alias="registryMirrors"
    )
    """Repository prefix to the prefix that replaces it in every image the cluster's gateways
    and consoles run (tag and digest kept): the longest prefix, on ``/`` boundaries, wins;
    registry hosts compare case-insensitively. No tag or digest in either."""
    database: DatabaseServer
    """The PostgreSQL server of the cluster's gateways."""
    storage_class: DnsLabel | None = Field(None, alias="storageClass")
    """Checked (a DNS-1123 label) but read by nothing yet: no object the program makes claims a
    volume."""
    metrics_namespace: DnsLabel | None = Field(None, alias="metricsNamespace")
    """Namespace allowed to scrape the gateways' metrics port."""
    release: ReleaseName | None = None
    """The release the cluster's gateways run (``releases/<name>.yaml``); a gateway may pin
    another (``spec.release``). None: the stack's ``images`` or the built-in defaults."""
    identity: IdentityConfig = IdentityConfig()
    """Where the cluster's gateways get their sign-in (``identity.keycloak``), if anywhere."""
    trusted_ca_bundle_file: ProjectPath | None = Field(None, alias="trustedCaBundleFile")
    """PEM bundle the gateways trust beyond the system store (a private issuer): ConfigMap
    ``gateway-trusted-ca`` in each tenant namespace, ``SSL_CERT_FILE`` in the pod."""
    delete_unreachable: bool = Field(False, alias="deleteUnreachable")
    """Decommissioned cluster: the Kubernetes provider drops the cluster's objects from the
    state when its API server cannot be reached, instead of failing the stack's runs."""

    @field_validator("base_domain")
    @classmethod
    def _base_domain(cls, value: str | None) -> str | None:
        return None if value is None else check_host(value, what="base domain")

    @field_validator("registry_mirrors")
    @classmethod
    def _one_prefix_per_registry_host(cls, value: dict[str, str]) -> dict[str, str]:
        """Registry hosts compare case-insensitively (``images.rewrite_with_mirrors``), so
        two keys that differ only in the host's case would be one prefix with two targets."""
        seen: dict[str, str] = {}
        for key in value:
            other = seen.setdefault(key.lower(), key)
            if other != key:
                raise ValueError(
                    f"{other!r} and {key!r} are the same prefix (registry hosts compare"
                    " case-insensitively); keep one"
                )
        return value

    @model_validator(mode="after")
    def _mode_needs(self) -> ClusterConfig:
        """What the mode needs of the cluster: its capability when the mode is explicit (``auto``
        chooses by them), and the shared Gateway for gateway-api."""
        explicit = self.ingress.mode != AUTO
        mode = self.ingress_mode
        match mode:
            case IngressMode.ROUTE:
                if explicit and not self.capabilities.openshift:
                    raise ValueError("ingress.mode is route but capabilities.openshift is false")
            case IngressMode.GATEWAY_API:
                if self.ingress.gateway is None:
                    raise ValueError(
                        "ingress resolves to gateway-api but ingress.gateway (the shared"
                        " Gateway's name, namespace, sectionName) is not set"
                    )
                if explicit and not self.capabilities.gateway_api:
                    raise ValueError(
                        "ingress.mode is gateway-api but capabilities.gatewayApi is false"
                    )
            case IngressMode.NONE:
                pass
            case _:
                assert_never(mode)
        return self

    @property
    def ingress_mode(self) -> IngressMode:
        """The resolved mode: never ``auto``."""
        return resolve_ingress_mode(
            self.ingress.mode,
            openshift=self.capabilities.openshift,
            gateway_api=self.capabilities.gateway_api,
        )

    def referenced_namespaces(self) -> dict[str, tuple[str, str]]:
        """Namespaces this config refers to: namespace -> (what it is, the field naming it).

        A gateway owns its namespace (removing the gateway deletes it), so it may not take one
        of these. The first field naming a namespace wins.
        """
        found: dict[str, tuple[str, str]] = {}
        mode = self.ingress_mode
        match mode:
            case IngressMode.ROUTE:
                found.setdefault(
                    self.ingress.router_namespace,
                    ("the router's namespace", "ingress.routerNamespace"),
                )
            case IngressMode.GATEWAY_API:
                if self.ingress.gateway is not None:
                    found.setdefault(
                        self.ingress.gateway.namespace,
                        ("the shared Gateway's namespace", "ingress.gateway.namespace"),
                    )
            case IngressMode.NONE:
                pass
            case _:
                assert_never(mode)
        if self.metrics_namespace is not None:
            found.setdefault(self.metrics_namespace, ("the metrics namespace", "metricsNamespace"))
        for field, host in (("host", self.database.host), ("adminHost", self.database.admin_host)):
            namespace = reserved.service_namespace(host)
            if namespace is not None:
                found.setdefault(
                    namespace,
                    (f"the namespace of the database service {host!r}", f"database.{field}"),
                )
        keycloak = self.identity.keycloak
        if keycloak is not None:
            for field, url in (("url", keycloak.url), ("issuerUrl", keycloak.issuer_url)):
                namespace = reserved.url_namespace(url) if url is not None else None
                if namespace is not None:
                    found.setdefault(
                        namespace,
                        (
                            f"the namespace of the Keycloak service {url!r}",
                            f"identity.keycloak.{field}",
                        ),
                    )
        return found


class ImageDefaults(Model):
    """The stack's images for a gateway whose release (``spec.release``, else its cluster's
    ``release``) and ``spec.images`` name none; None: the built-in default."""

    gateway: ImageReference | None = None
    """The gateway's image reference."""
    supervisor: ImageReference | None = None
    """The supervisor's image reference."""
    sandbox: ImageReference | None = None
    """The sandboxes' base image reference."""


class Selector(Model):
    """Which gateways of a shared inventory belong to this stack (docs/scale-out.md)."""

    match_labels: Annotated[dict[LabelKey, LabelValue], KeysByPattern()] = Field(
        default_factory=dict, alias="matchLabels"
    )
    """Every label must be on the declaration; {} selects all on the stack's clusters."""


def _cli_bool(value: object) -> object:
    """``"true"``/``"false"`` as the Pulumi CLI writes a boolean key back to the stack file.

    The CLI keeps config values as strings (pulumi/pulumi sdk/go/common/resource/config,
    ``Value``) and quotes them when it saves ``Pulumi.<stack>.yaml``: the real-engine lane saw
    ``production: true`` become ``production: "true"`` after ``pulumi stack init``. The
    program reads both the same way (``Config.get_object``)."""
    return {"true": True, "false": False}.get(value, value) if isinstance(value, str) else value


CliBool = Annotated[
    bool,
    BeforeValidator(_cli_bool),
    JsonSchema({"type": ["boolean", "string"], "enum": [True, False, "true", "false"]}),
]
UnmanagedPattern = Annotated[
    str, Field(pattern=r"^[A-Za-z][A-Za-z0-9]*/[^/\s]+$", description="Kind/name pattern")
]


class StackConfig(Model):
    """A stack's settings: its project keys (``hypershell-gateways:<key>``), as
    :func:`gatewayctl.inputs.stackfile.parse_stack_config` reads them."""

    declarations_dir: ProjectPath = Field(alias="declarationsDir", min_length=1)
    """The directory of the stack's declarations (``<name>.yaml``, one per gateway), relative
    to the project root, and inside it."""
    images: ImageDefaults = ImageDefaults()
    """The stack's default images."""
    clusters: Annotated[dict[DnsLabel, ClusterConfig], KeysByPattern(key="cluster")] = Field(
        min_length=1
    )
    """The stack's clusters by name, at least one."""
    production: CliBool = False
    """Only releases, pinned by digest, on every cluster, and no per-gateway image without a
    digest (gatewayctl.inputs.release_files; the policy pack's ``images-pinned-by-digest``)."""
    selector: Selector | None = None
    """Set when ``declarationsDir`` is an inventory shared by several stacks: the stack takes
    the declarations on its clusters whose labels match; each must be taken by one stack."""
    self_heal: CliBool = Field(False, alias="selfHeal")
    """The scheduled drift check may run ``pulumi up --refresh`` when the only problem is
    drift, and reissue certificates inside their renewal window (``gatewayctl.status``);
    never for a stack the operator owns."""
    self_heal_unmanaged: CliBool = Field(False, alias="selfHealUnmanaged")
    """With ``selfHeal``, the check also deletes the objects nobody declared in the gateway
    namespaces (and the ClusterRoleBindings to them) that ``unmanagedIgnore`` does not let be
    (``gatewayctl.status.heal``); without it, they are reported with the command."""
    unmanaged_ignore: list[UnmanagedPattern] = Field(default_factory=list, alias="unmanagedIgnore")
    """``Kind/name`` patterns (``fnmatch``: ``Secret/builder-dockercfg-*``) of objects the
    platform makes in the gateway namespaces, which ``status --live`` does not report as
    unmanaged (``gatewayctl.status.live``)."""

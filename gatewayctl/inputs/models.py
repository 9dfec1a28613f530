"""Stack config and gateway declarations as pydantic v2 models (DESIGN §3, §5).

Models are the edge: frozen, unknown fields forbidden, camelCase aliases matching the YAML.
Rules that involve one field live here; rules across files live in ``gatewayctl.resolve.stack``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from components import credentials, naming
from components.hostnames import check_dns_name, check_host
from components.images import parse_image
from components.ingress import IngressMode, parse_ingress_mode, resolve_ingress_mode
from gatewayctl.inputs import reserved

API_VERSION = "hypershell.redhat.io/v1alpha1"


class Model(BaseModel):
    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        populate_by_name=False,
        strict=True,
        hide_input_in_errors=True,
        # Attribute docstrings are the fields' descriptions in the JSON Schema
        # (gatewayctl.inputs.schema).
        use_attribute_docstrings=True,
    )


def _image(value: object) -> object:
    if isinstance(value, str):
        parse_image(value)
    return value


def _dns_label(value: object) -> object:
    if isinstance(value, str) and not naming.is_dns1123_label(value):
        raise ValueError(
            f"{value!r} is not a DNS-1123 label (lowercase a-z, 0-9, inner '-', at most 63)"
        )
    return value


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


RELEASE_NAME_MAX = 63
_RELEASE_NAME = re.compile(r"[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?")


def release_name_problem(value: str) -> str | None:
    """What keeps ``value`` from being a release name (``releases/<name>.yaml``), or None."""
    if len(value) > RELEASE_NAME_MAX or not _RELEASE_NAME.fullmatch(value):
        return (
            f"{value!r} is not a release name (lowercase a-z, 0-9, inner '.' and '-', at most"
            f" {RELEASE_NAME_MAX})"
        )
    return None


def _release_name(value: object) -> object:
    if isinstance(value, str) and (problem := release_name_problem(value)) is not None:
        raise ValueError(problem)
    return value


ImageReference = Annotated[str, BeforeValidator(_image)]
ReleaseName = Annotated[str, BeforeValidator(_release_name)]
"""The name of a release, ``releases/<name>.yaml`` (gatewayctl.resolve.releases)."""
DnsLabel = Annotated[str, BeforeValidator(_dns_label)]
MirrorName = Annotated[str, BeforeValidator(_mirror_name)]


PATH_MAX = 1024
"""Characters of a path field: a path inside the project is short."""
NAME_MAX = 255
"""Bytes of one path component (Linux NAME_MAX): a longer name is an OS error, not a file."""


def project_path_problem(path: str) -> str | None:
    """What keeps ``path`` from being a path inside the project, relative to its root; None
    when it is one. A path the OS would refuse to look up is a problem here, not an OS error
    later."""
    if not path:
        return "must not be empty"
    if any(not c.isprintable() for c in path):
        return f"{path!r} contains a control character"
    if len(path) > PATH_MAX:
        return f"is {len(path):,} characters long; at most {PATH_MAX}"
    pure = PurePosixPath(path)
    if any(len(part.encode("utf-8", "surrogatepass")) > NAME_MAX for part in pure.parts):
        return f"{path!r} has a component longer than {NAME_MAX} bytes"
    if pure.is_absolute() or ".." in pure.parts:
        return f"{path!r} must be a path inside the project, relative to its root"
    return None


def is_inside_project(path: str) -> bool:
    """A non-empty relative path that does not climb out of the project root."""
    return project_path_problem(path) is None


def _project_path(value: object) -> object:
    if isinstance(value, str) and (problem := project_path_problem(value)) is not None:
        raise ValueError(problem)
    return value


ProjectPath = Annotated[str, BeforeValidator(_project_path)]
"""A file or directory of the project, relative to its root (resolved symbolic links are
checked where the file is read)."""


# --- sign-in (identity per cluster, OIDC and access per gateway) -----------------------------


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


HttpsUrl = Annotated[str, BeforeValidator(_https_url)]

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


KeycloakName = Annotated[str, BeforeValidator(_keycloak_name)]


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


class OidcSpec(Model):
    """Bring your own issuer: ``[openshell.gateway.oidc]`` as the gateway reads it."""

    issuer: HttpsUrl
    """The issuer's https URL; the gateway reads its discovery document and keys from it."""
    audience: str = Field("openshell-cli", min_length=1, max_length=255)
    """The audience the gateway requires in tokens (``aud``)."""
    roles_claim: str | None = Field(None, alias="rolesClaim", min_length=1, max_length=255)
    """The claim holding the user's roles; unset: the gateway's default."""
    admin_role: str | None = Field(None, alias="adminRole", min_length=1, max_length=255)
    """The role granting admin; set with ``userRole`` or neither."""
    user_role: str | None = Field(None, alias="userRole", min_length=1, max_length=255)
    """The role granting use; set with ``adminRole`` or neither (neither: every signed-in user
    is a user, no one an admin)."""
    scopes_claim: str | None = Field(None, alias="scopesClaim", min_length=1, max_length=255)
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


Principals = Annotated[list[str], BeforeValidator(_principals)]


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


KeycloakId = Annotated[str, BeforeValidator(_uuid)]


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


# --- stack config ---------------------------------------------------------------------------


class Capabilities(Model):
    openshift: bool = False
    """The cluster serves ``route.openshift.io/v1`` (OpenShift)."""
    gateway_api: bool = Field(False, alias="gatewayApi")
    """The cluster serves Gateway API v1 with GRPCRoute and a shared Gateway exists."""


class SharedGatewayRef(Model):
    name: DnsLabel
    namespace: DnsLabel = "openshift-ingress"
    section_name: DnsLabel = Field("grpc", alias="sectionName")
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
    mode: Annotated[IngressMode, BeforeValidator(_ingress_mode)] = IngressMode.AUTO
    router_namespace: DnsLabel = Field("openshift-ingress", alias="routerNamespace")
    gateway: SharedGatewayRef | None = None


class DatabaseServer(Model):
    admin_host: str = Field(alias="adminHost", min_length=1)
    """Host Pulumi connects to as admin (verify-full: must match the server certificate)."""
    admin_port: int = Field(5432, alias="adminPort", ge=1, le=65535)
    admin_user: str = Field(alias="adminUser", min_length=1)
    host: str = Field(min_length=1)
    """Host the gateway pods connect to."""
    port: int = Field(5432, ge=1, le=65535)
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


_SERVICE_HOST = re.compile(r"[a-z0-9-]+\.(?P<namespace>[a-z0-9-]+)\.svc(\.cluster\.local)?")


def service_namespace(host: str) -> str | None:
    """The namespace of an in-cluster service name (``<svc>.<ns>.svc[.cluster.local]``)."""
    match = _SERVICE_HOST.fullmatch(host)
    return match["namespace"] if match is not None else None


class ClusterConfig(Model):
    kubeconfig_context: str | None = Field(None, alias="kubeconfigContext")
    capabilities: Capabilities = Capabilities()
    ingress: IngressConfig = IngressConfig()
    base_domain: str | None = Field(None, alias="baseDomain")
    registry_mirrors: dict[MirrorName, MirrorName] = Field(
        default_factory=dict, alias="registryMirrors"
    )
    database: DatabaseServer
    storage_class: DnsLabel | None = Field(None, alias="storageClass")
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
    def _gateway_api_needs_gateway(self) -> ClusterConfig:
        if self.ingress_mode is IngressMode.GATEWAY_API and self.ingress.gateway is None:
            raise ValueError(
                "ingress resolves to gateway-api but ingress.gateway (the shared Gateway's"
                " name, namespace, sectionName) is not set"
            )
        if self.ingress.mode is IngressMode.ROUTE and not self.capabilities.openshift:
            raise ValueError("ingress.mode is route but capabilities.openshift is false")
        if self.ingress.mode is IngressMode.GATEWAY_API and not self.capabilities.gateway_api:
            raise ValueError("ingress.mode is gateway-api but capabilities.gatewayApi is false")
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
        if mode is IngressMode.GATEWAY_API and self.ingress.gateway is not None:
            found.setdefault(
                self.ingress.gateway.namespace,
                ("the shared Gateway's namespace", "ingress.gateway.namespace"),
            )
        if mode is IngressMode.ROUTE:
            found.setdefault(
                self.ingress.router_namespace, ("the router's namespace", "ingress.routerNamespace")
            )
        if self.metrics_namespace is not None:
            found.setdefault(self.metrics_namespace, ("the metrics namespace", "metricsNamespace"))
        for field, host in (("host", self.database.host), ("adminHost", self.database.admin_host)):
            namespace = service_namespace(host)
            if namespace is not None:
                found.setdefault(
                    namespace,
                    (f"the namespace of the database service {host!r}", f"database.{field}"),
                )
        return found


class ImageDefaults(Model):
    gateway: ImageReference | None = None
    supervisor: ImageReference | None = None
    sandbox: ImageReference | None = None


_LABEL_NAME = re.compile(r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?")


def _label_key(value: object) -> object:
    if not isinstance(value, str):
        return value
    prefix, _, name = value.rpartition("/")
    if (
        not name
        or len(name) > naming.DNS1123_LABEL_MAX
        or not _LABEL_NAME.fullmatch(name)
        or (prefix and not _is_dns_name(prefix))
    ):
        raise ValueError(f"{value!r} is not a Kubernetes label key ([prefix/]name)")
    return value


def _is_dns_name(value: str) -> bool:
    try:
        check_dns_name(value)
    except ValueError:
        return False
    return True


def _label_value(value: object) -> object:
    if isinstance(value, str) and (
        len(value) > naming.DNS1123_LABEL_MAX or not _LABEL_NAME.fullmatch(value)
    ):
        raise ValueError(f"{value!r} is not a Kubernetes label value")
    return value


LabelKey = Annotated[str, BeforeValidator(_label_key)]
LabelValue = Annotated[str, BeforeValidator(_label_value)]


class Selector(Model):
    """Which gateways of a shared inventory belong to this stack (DESIGN scale-out)."""

    match_labels: dict[LabelKey, LabelValue] = Field(default_factory=dict, alias="matchLabels")
    """Every label must be on the declaration; {} selects all on the stack's clusters."""


def _cli_bool(value: object) -> object:
    """``"true"``/``"false"`` as the Pulumi CLI writes a boolean key back to the stack file.

    The CLI keeps config values as strings (pulumi/pulumi sdk/go/common/resource/config,
    ``Value``) and quotes them when it saves ``Pulumi.<stack>.yaml``: the real-engine lane saw
    ``production: true`` become ``production: "true"`` after ``pulumi stack init``. The
    program reads both the same way (``Config.get_object``)."""
    return {"true": True, "false": False}.get(value, value) if isinstance(value, str) else value


CliBool = Annotated[bool, BeforeValidator(_cli_bool)]


class StackConfig(Model):
    declarations_dir: ProjectPath = Field(alias="declarationsDir", min_length=1)
    """Relative to the project root, and inside it."""
    images: ImageDefaults = ImageDefaults()
    clusters: dict[DnsLabel, ClusterConfig] = Field(min_length=1)
    production: CliBool = False
    """Only releases, pinned by digest, on every cluster, and no per-gateway image without a
    digest (gatewayctl.resolve.releases; the policy pack's ``images-pinned-by-digest``)."""
    selector: Selector | None = None
    """Set when ``declarationsDir`` is an inventory shared by several stacks: the stack takes
    the declarations on its clusters whose labels match; each must be taken by one stack."""
    self_heal: CliBool = Field(False, alias="selfHeal")
    """The scheduled drift check may run ``pulumi up --refresh`` when the only problem is
    drift, and reissue certificates inside their renewal window (``gatewayctl.status``);
    never for a stack the operator owns."""


# --- declarations ---------------------------------------------------------------------------


def _gateway_name(value: object) -> object:
    if not isinstance(value, str):
        return value  # the str type reports it
    _dns_label(value)
    limit = naming.max_gateway_name_length()
    if len(value) > limit:
        raise ValueError(
            f"{value!r} is {len(value)} characters; at most {limit} so that the namespace"
            f" {naming.default_namespace(value)!r}, the host label"
            f" {naming.host_label(naming.default_namespace(value))!r} and the PostgreSQL name"
            " fit their limits"
        )
    return value


def _namespace(value: object) -> object:
    if not isinstance(value, str):
        return value  # the str type reports it
    _dns_label(value)
    if reserved.system_namespace(value):
        raise ValueError(f"{value!r} is a system namespace; a gateway needs its own")
    limit = naming.max_namespace_length()
    if len(value) > limit:
        raise ValueError(
            f"{value!r} is {len(value)} characters; at most {limit} so that the host label"
            f" {naming.host_label(value)!r} fits in 63"
        )
    return value


class Metadata(Model):
    name: Annotated[str, BeforeValidator(_gateway_name)]
    """The gateway's name and identity: a DNS-1123 label, the declaration's file name."""
    labels: dict[LabelKey, LabelValue] = Field(default_factory=dict)
    """Free labels; a shared inventory selects gateways by them."""


class ExposureSpec(Model):
    enabled: bool = True
    """False: no Route or GRPCRoute, and no address."""
    host: str | None = None
    """Explicit external host; default ``gw-<namespace>.<baseDomain>``. Under the base domain
    it must be that slot."""


class ImageOverrides(Model):
    gateway: ImageReference | None = None
    """The gateway image, in place of its release's (an OCI reference)."""
    supervisor: ImageReference | None = None
    """The sandbox supervisor image, in place of its release's (an OCI reference)."""


def _postgres_identifier(value: object) -> object:
    if isinstance(value, str) and not naming.is_postgres_identifier(value):
        raise ValueError(
            f"{value!r} is not a lowercase PostgreSQL identifier (a-z, 0-9, '_', not starting"
            " with a digit, at most 63)"
        )
    return value


_OWN_DATABASE = "a gateway needs a role and database of its own"


def _database_name(value: object) -> object:
    """A gateway manages the role and database of this name (and drops both with
    ``deletionPolicy: Delete``): never the server's own, never a reserved role name."""
    _postgres_identifier(value)
    if not isinstance(value, str):
        return value  # the str type reports it
    # The name is the database's and its role's: both rules apply.
    problem = reserved.database_problem(value) or reserved.role_problem(value)
    if problem is not None:
        raise ValueError(f"{problem}; {_OWN_DATABASE}")
    return value


# Where the gateway keeps its users' credentials (issue 13); the checks are upstream's
# (components.credentials). A driver block must match ``driver``: each block's validator runs on
# its default too, so a missing or stray block is reported at its own path.


def _checked(check: Callable[[str], str]) -> Callable[[object], object]:
    def validate(value: object) -> object:
        return check(value) if isinstance(value, str) else value  # the str type reports others

    return validate


def _credential_namespace(value: object) -> object:
    if not isinstance(value, str):
        return value  # the str type reports it
    _dns_label(value)
    if reserved.system_namespace(value):
        raise ValueError(f"{value!r} is a system namespace; credentials need a tenant's own")
    return value


class KubernetesSecretsSpec(Model):
    namespace: Annotated[str, BeforeValidator(_credential_namespace)] | None = None
    """Where the Secrets are kept; default the gateway's own namespace. Another namespace
    must exist, belong to no other gateway and be no namespace of the platform."""


class VaultSpec(Model):
    address: Annotated[str, BeforeValidator(_checked(credentials.check_vault_address))]
    """Vault's http(s) URL."""
    role: Annotated[str, BeforeValidator(_checked(credentials.check_identifier))]
    """The Vault role the gateway logs in as (through the Kubernetes auth method)."""
    mount: Annotated[str, BeforeValidator(_checked(credentials.check_vault_path))] = (
        credentials.VAULT_DEFAULT_MOUNT
    )
    """The KV mount path the credentials are kept under."""
    auth_method: Annotated[str, BeforeValidator(_checked(credentials.check_auth_method))] = Field(
        credentials.VAULT_DEFAULT_AUTH_METHOD, alias="authMethod"
    )
    """How the gateway logs in to Vault: ``kubernetes`` only (its ServiceAccount token)."""
    kubernetes_auth_mount: Annotated[
        str, BeforeValidator(_checked(credentials.check_vault_path))
    ] = Field(credentials.VAULT_DEFAULT_KUBERNETES_AUTH_MOUNT, alias="kubernetesAuthMount")
    """The path the Kubernetes auth method is mounted at."""
    timeout_seconds: int = Field(
        credentials.VAULT_DEFAULT_TIMEOUT_SECONDS,
        alias="timeoutSeconds",
        ge=1,
        le=credentials.VAULT_MAX_TIMEOUT_SECONDS,
    )
    """How long one request to Vault may take, 1-3600 seconds."""


class CredentialsSpec(Model):
    driver: Literal["kek", "kubernetes-secrets", "vault"] = "kek"
    """``kek``: encrypted in the database with a key in a Secret; ``kubernetes-secrets``: in
    Secrets; ``vault``: in a HashiCorp Vault KV mount."""
    kubernetes_secrets: KubernetesSecretsSpec | None = Field(
        None, alias="kubernetesSecrets", validate_default=True
    )
    """Settings of the ``kubernetes-secrets`` driver; only with that driver."""
    vault: VaultSpec | None = Field(None, validate_default=True)
    """Settings of the ``vault`` driver; required with it, and only with it."""

    @field_validator("kubernetes_secrets", "vault")
    @classmethod
    def _matches_driver(cls, value: object, info: ValidationInfo) -> object:
        driver = info.data.get("driver")
        own = {"kubernetes_secrets": "kubernetes-secrets", "vault": "vault"}[info.field_name or ""]
        if driver is None:
            return value  # the driver's own problem is reported
        if value is not None and driver != own:
            raise ValueError(f"only with driver {own!r}; the driver is {driver!r}")
        if value is None and own == "vault" and driver == "vault":
            raise ValueError("required with driver 'vault' (address and role)")
        return value


class ConsoleImages(Model):
    dashboard: ImageReference | None = None
    """The console's dashboard image (an OCI reference)."""
    oauth2_proxy: ImageReference | None = Field(None, alias="oauth2Proxy")
    """The console's oauth2-proxy image, which signs people in (an OCI reference)."""


class ConsoleSpec(Model):
    """The gateway's web console (``components.console``); needs the cluster's Keycloak."""

    enabled: bool = False
    """True: the gateway gets a web console."""
    images: ConsoleImages = ConsoleImages()
    """Per-gateway images, in place of its release's (or the built-in defaults)."""


class GatewaySpec(Model):
    cluster: DnsLabel | None = None
    """Key of the stack's clusters (``Pulumi.<stack>.yaml``); optional when the stack has one."""
    # Checked against them when validated with the context ``{"clusters": [...]}``, so an
    # unknown cluster is reported with every other problem.
    namespace: Annotated[str, BeforeValidator(_namespace)] | None = None
    """The tenant namespace; default ``openshell-<name>``. Set it to adopt an upstream
    gateway's existing namespace."""
    exposure: ExposureSpec = ExposureSpec()
    """Whether and where the gateway is reachable from outside the cluster."""
    images: ImageOverrides = ImageOverrides()
    """Per-gateway images, in place of its release's."""
    release: ReleaseName | None = None
    """Pin this gateway to a release other than its cluster's (a canary)."""
    replicas: int = Field(1, ge=1, le=10)
    """Gateway pods, 1-10."""
    deletion_policy: Literal["Retain", "Delete"] = Field("Retain", alias="deletionPolicy")
    """``Retain`` keeps the PostgreSQL role and database when the gateway is removed;
    ``Delete`` drops them (the data is lost)."""
    database_name: Annotated[str, BeforeValidator(_database_name)] | None = Field(
        None, alias="databaseName"
    )
    """Role and database name; default ``gw_<name>``. Set it to adopt an upstream gateway's
    existing database (upstream names it ``gw_<gateway id>``)."""
    credentials: CredentialsSpec = CredentialsSpec()
    """Where the gateway keeps its users' credentials: the driver and its settings."""
    oidc: OidcSpec | None = None
    """Bring your own issuer (instead of the cluster's Keycloak, or without one)."""
    access: AccessSpec | None = None
    """Who holds the admin and user roles (with the cluster's Keycloak)."""
    keycloak: KeycloakClientSpec | None = None
    """The gateway's Keycloak client, when not the derived one (adoption)."""
    sign_in: Literal["none"] | None = Field(None, alias="signIn")
    """``none``: no person signs in to this gateway (sandboxes only), declared on purpose."""
    console: ConsoleSpec = ConsoleSpec()
    """The web console (off unless enabled)."""

    @model_validator(mode="after")
    def _one_way_to_sign_in(self) -> GatewaySpec:
        if self.sign_in == "none":
            for field, value in (("oidc", self.oidc), ("access", self.access)):
                if value is not None:
                    raise ValueError(f"signIn is none, so {field} cannot be set")
            if self.keycloak is not None:
                raise ValueError("signIn is none, so keycloak cannot be set")
        if self.oidc is not None:
            if self.keycloak is not None:
                raise ValueError(
                    "oidc (your own issuer) and keycloak (the cluster's) exclude each other"
                )
            if self.access is not None:
                raise ValueError(
                    "access is granted through the cluster's Keycloak; with oidc (your own"
                    " issuer) grant the roles there"
                )
        return self

    @field_validator("cluster")
    @classmethod
    def _known_cluster(cls, value: str | None, info: ValidationInfo) -> str | None:
        clusters = (info.context or {}).get("clusters")
        if value is not None and clusters is not None and value not in clusters:
            raise ValueError(f"unknown cluster {value!r}; the stack has {', '.join(clusters)}")
        return value


class GatewayDeclaration(Model):
    api_version: Literal["hypershell.redhat.io/v1alpha1"] = Field(alias="apiVersion")
    """The declaration's API version."""
    kind: Literal["Gateway"]
    """Always ``Gateway``."""
    metadata: Metadata
    """The gateway's name and labels."""
    spec: GatewaySpec = GatewaySpec()
    """What the gateway is: cluster, exposure, images, database, credentials, sign-in."""

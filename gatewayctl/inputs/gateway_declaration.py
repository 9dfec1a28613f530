"""A gateway declaration (``gateways/<stack>/<name>.yaml``) as models (docs/declaring.md): its
metadata and its spec: cluster, namespace, exposure, images, release, database, credentials,
sign-in and console.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import (
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from components import credentials, naming
from components.credentials import CredentialDriver
from gatewayctl.inputs import reserved
from gatewayctl.inputs.counters import RotationSpec
from gatewayctl.inputs.model import (
    DNS_LABEL_BODY,
    DnsLabel,
    ImageReference,
    JsonSchema,
    Labels,
    Model,
    ReleaseName,
    check_dns_label,
    dns_label_schema,
)
from gatewayctl.inputs.quantities import ResourcesSpec
from gatewayctl.inputs.signin import AccessSpec, KeycloakClientSpec, OidcSpec

API_VERSION = "hypershell.redhat.io/v1alpha1"


def _gateway_name(value: object) -> object:
    if not isinstance(value, str):
        return value  # the str type reports it
    check_dns_label(value)
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
    check_dns_label(value)
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
    name: Annotated[
        str,
        BeforeValidator(_gateway_name),
        dns_label_schema(naming.max_gateway_name_length()),
    ]
    """The gateway's name and identity: a DNS-1123 label, the declaration's file name."""
    labels: Labels = Field(default_factory=dict)
    """Free labels; a shared inventory selects gateways by them."""


HOST_PATTERN = (
    f"^(?=.{{1,253}}$)(?:{DNS_LABEL_BODY}\\.)+(?![0-9]+$)(?!0x[0-9a-f]*$){DNS_LABEL_BODY}$"
)
"""A host clients reach by name (``components.hostnames.check_host``, checked when the stack
is resolved): a lowercase DNS name of at least two labels whose last is not numeric."""


class ExposureSpec(Model):
    enabled: bool = True
    """False: no Route or GRPCRoute, and no address."""
    host: Annotated[str, JsonSchema({"pattern": HOST_PATTERN})] | None = None
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
    check_dns_label(value)
    if reserved.system_namespace(value):
        raise ValueError(f"{value!r} is a system namespace; credentials need a tenant's own")
    return value


class KubernetesSecretsSpec(Model):
    namespace: (
        Annotated[
            str,
            BeforeValidator(_credential_namespace),
            dns_label_schema(**reserved.system_namespace_schema()),
        ]
        | None
    ) = None
    """Where the Secrets are kept; default the gateway's own namespace. Another namespace
    must exist, belong to no other gateway and be no namespace of the platform."""


VAULT_ADDRESS_PATTERN = "^https?://[^\\s/?#@]+(?:/[^\\s?#]*)?$"
"""``credentials.check_vault_address``: http(s), a host, no user info, query or fragment."""
_IDENTIFIER = JsonSchema(
    {"pattern": "^[a-zA-Z0-9][a-zA-Z0-9._/-]*$", "maxLength": credentials.IDENTIFIER_MAX}
)
"""``credentials.check_identifier``."""
_VAULT_PATH = JsonSchema(
    {
        "pattern": "^(?!.*//)(?!.*/$)(?!(?:.*/)?[.][.]?(?:/|$))[a-zA-Z0-9][a-zA-Z0-9._/-]*$",
        "maxLength": credentials.IDENTIFIER_MAX,
    }
)
"""``credentials.check_vault_path``: an identifier of non-empty segments, none ``.``/``..``."""


class VaultSpec(Model):
    address: Annotated[
        str,
        BeforeValidator(_checked(credentials.check_vault_address)),
        JsonSchema({"pattern": VAULT_ADDRESS_PATTERN, "maxLength": credentials.ADDRESS_MAX}),
    ]
    """Vault's http(s) URL."""
    role: Annotated[str, BeforeValidator(_checked(credentials.check_identifier)), _IDENTIFIER]
    """The Vault role the gateway logs in as (through the Kubernetes auth method)."""
    mount: Annotated[str, BeforeValidator(_checked(credentials.check_vault_path)), _VAULT_PATH] = (
        credentials.VAULT_DEFAULT_MOUNT
    )
    """The KV mount path the credentials are kept under."""
    auth_method: Annotated[
        str,
        BeforeValidator(_checked(credentials.check_auth_method)),
        JsonSchema({"enum": sorted(credentials.VAULT_AUTH_METHODS)}),
    ] = Field(credentials.VAULT_DEFAULT_AUTH_METHOD, alias="authMethod")
    """How the gateway logs in to Vault: ``kubernetes`` only (its ServiceAccount token)."""
    kubernetes_auth_mount: Annotated[
        str, BeforeValidator(_checked(credentials.check_vault_path)), _VAULT_PATH
    ] = Field(credentials.VAULT_DEFAULT_KUBERNETES_AUTH_MOUNT, alias="kubernetesAuthMount")
    """The path the Kubernetes auth method is mounted at."""
    timeout_seconds: int = Field(
        credentials.VAULT_DEFAULT_TIMEOUT_SECONDS,
        alias="timeoutSeconds",
        ge=1,
        le=credentials.VAULT_MAX_TIMEOUT_SECONDS,
    )
    """How long one request to Vault may take, 1-3600 seconds."""


def _only_with(driver: str, field: str, *, required: bool) -> dict[str, Any]:
    """``field`` is set only with ``driver`` (and must be, when ``required``)."""
    return {
        "if": {"properties": {"driver": {"const": driver}}, "required": ["driver"]},
        "then": (
            {"required": [field], "properties": {field: {"type": "object"}}} if required else {}
        ),
        "else": {"properties": {field: {"type": "null"}}},
    }


class CredentialsSpec(Model):
    # The driver's blocks (``_matches_driver``), for editors; ``driver`` defaults to kek.
    model_config = ConfigDict(
        json_schema_extra={
            "allOf": [
                _only_with("kubernetes-secrets", "kubernetesSecrets", required=False),
                _only_with("vault", "vault", required=True),
            ]
        }
    )
    driver: CredentialDriver = "kek"
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


def _excludes(field: str, *others: str, value: object = None) -> dict[str, Any]:
    """With ``field`` set (to ``value``, when given), none of ``others`` may be."""
    condition: dict[str, Any] = {"required": [field]}
    if value is not None:
        condition["properties"] = {field: {"const": value}}
    return {
        "if": condition,
        "then": {"not": {"anyOf": [{"required": [other]} for other in others]}},
    }


class GatewaySpec(Model):
    # One way to sign in (``_one_way_to_sign_in``), for editors.
    model_config = ConfigDict(
        json_schema_extra={
            "allOf": [
                _excludes("signIn", "oidc", "access", "keycloak", value="none"),
                _excludes("oidc", "keycloak", "access"),
            ]
        }
    )
    cluster: DnsLabel | None = None
    """Key of the stack's clusters (``Pulumi.<stack>.yaml``); optional when the stack has one."""
    # Checked against them when validated with the context ``{"clusters": [...]}``, so an
    # unknown cluster is reported with every other problem.
    namespace: (
        Annotated[
            str,
            BeforeValidator(_namespace),
            dns_label_schema(naming.max_namespace_length(), **reserved.system_namespace_schema()),
        ]
        | None
    ) = None
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
    resources: ResourcesSpec = ResourcesSpec()
    """The gateway container's CPU and memory requests and limits; default upstream's."""
    deletion_policy: Literal["Retain", "Delete"] = Field("Retain", alias="deletionPolicy")
    """``Retain`` keeps the PostgreSQL role and database when the gateway is removed;
    ``Delete`` drops them (the data is lost)."""
    database_name: (
        Annotated[
            str,
            BeforeValidator(_database_name),
            JsonSchema(
                {
                    "pattern": "^[a-z_][a-z0-9_]*$",
                    "maxLength": naming.POSTGRES_IDENTIFIER_MAX,
                    **reserved.gateway_database_schema(),
                }
            ),
        ]
        | None
    ) = Field(None, alias="databaseName")
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
    rotation: RotationSpec = RotationSpec()
    """Rotate a secret by raising its counter (a reviewed pull request, not a laptop)."""

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

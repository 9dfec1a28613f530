"""What one gateway is made of, as data (``components.gateway`` composes its parts): built by
the stack's resolution. No provider SDK is imported here, so validating a stack does not load
one (issue 23)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from components import naming
from components.console_types import ConsoleSettings
from components.credentials import DEFAULT_CREDENTIALS, GatewayCredentials
from components.database_types import DatabaseEndpoint
from components.deployment import UPSTREAM_SETTINGS, WorkloadSettings
from components.exposure_types import GatewayExposure
from components.gateway_config import OidcSettings
from components.identity_types import IdentityArgs
from components.rotation import NO_ROTATION, Rotation

if TYPE_CHECKING:
    import pulumi
    import pulumi_keycloak as keycloak


@dataclass(frozen=True, kw_only=True)
class GatewayImages:
    """Final image references (precedence and registry mirrors already applied)."""

    gateway: str
    """The gateway container."""
    supervisor: str
    """The supervisor sideloaded into sandboxes (``supervisor_image`` in gateway.toml)."""
    sandbox: str
    """The sandbox base image (``default_image`` in gateway.toml)."""


@dataclass(frozen=True, kw_only=True)
class GatewayArgs:
    """Everything one gateway is made of, built by the stack's resolution (every decision
    made, every value validated): a new per-gateway setting is a field here, set there."""

    cluster: str
    """Key of the cluster the gateway runs on (a label; providers come through ``opts``)."""
    namespace: str
    """Tenant namespace, validated by the stack model."""
    exposure: GatewayExposure
    """How the gateway is reached from outside the cluster, if at all."""
    images: GatewayImages
    """Final images."""
    database_name: str
    """PostgreSQL role and database name (``gw_<name>``, or the adopted gateway's own)."""
    database_host: str
    """PostgreSQL host as the gateway pods reach it."""
    database_port: int
    """PostgreSQL port as the gateway pods reach it."""
    database_endpoint: DatabaseEndpoint
    """PostgreSQL as Pulumi reaches it (the cluster admin connection's host, port and CA)."""
    retain_database: bool
    """Keep the role and database when the gateway is deleted (``deletionPolicy: Retain``)."""
    openshift: bool
    """The cluster is OpenShift: sandboxes get the privileged SCC binding."""
    metrics_namespace: str | None
    """Namespace allowed to scrape metrics, or None."""
    settings: WorkloadSettings = UPSTREAM_SETTINGS
    """The declaration's settings of the workload (``spec.replicas``, …), passed whole."""
    credentials: GatewayCredentials = DEFAULT_CREDENTIALS
    """Where the gateway keeps its users' credentials (the driver, ``spec.credentials``)."""
    node_reader_cluster_role: pulumi.Input[str] = naming.NODE_READER_CLUSTER_ROLE
    """The cluster's shared node-reader ClusterRole. The resolution, before any resource
    exists, knows its name; the program passes the ``Cluster``'s output of that name, so the
    binding is ordered after the role."""
    oidc: OidcSettings | None = None
    """What ``gateway.toml`` trusts to sign people in; None: no person signs in."""
    identity: IdentityArgs | None = None
    """The gateway's Keycloak client and who holds its roles; None without Keycloak."""
    keycloak_provider: keycloak.Provider | None = None
    """The provider of the cluster's Keycloak server (the program passes it with
    ``identity``)."""
    trusted_ca_bundle: str | None = None
    """The cluster's trusted CA bundle (PEM), or None."""
    console: ConsoleSettings | None = None
    """The web console (``spec.console``); None: no console. Needs ``identity``."""
    rotation: Rotation = NO_ROTATION
    """The declaration's rotation counters (``spec.rotation``: :mod:`components.rotation`)."""

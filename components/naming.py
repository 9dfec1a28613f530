"""Names, labels and limits shared by every part of a gateway.

Object names and labels are upstream's (openshift-online/hypershell
``manifests/gateway``) so the gateway image, dashboards and existing clients keep working.
Everything derived from a gateway name is computed here, once, and validated against the
Kubernetes and PostgreSQL limits.
"""

from __future__ import annotations

import re
from typing import Final

DNS1123_LABEL_MAX: Final = 63
DNS1123_SUBDOMAIN_MAX: Final = 253
POSTGRES_IDENTIFIER_MAX: Final = 63
_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_POSTGRES = re.compile(r"[a-z_][a-z0-9_]*")

NAMESPACE_PREFIX: Final = "openshell-"
HOST_LABEL_PREFIX: Final = "gw-"
POSTGRES_PREFIX: Final = "gw_"

# Object names inside a tenant namespace (upstream's).
GATEWAY: Final = "openshell-gateway"
SANDBOX_SA: Final = "openshell-gateway-sandbox"
CONFIG_MAP: Final = "openshell-gateway-config"
SERVER_TLS_SECRET: Final = "openshell-server-tls"
CLIENT_TLS_SECRET: Final = "openshell-client-tls"
JWT_SECRET: Final = "openshell-gateway-jwt-keys"
DB_SECRET: Final = "openshell-gateway-db-credentials"
KEK_SECRET: Final = "openshell-gateway-credential-kek"
BACKEND_CA_CONFIG_MAP: Final = "openshell-backend-ca"
NODE_READER_CLUSTER_ROLE: Final = "openshell-gateway-node-reader"
PRIVILEGED_SCC_BINDING: Final = "openshell-sandbox-privileged-scc"
PRIVILEGED_SCC_CLUSTER_ROLE: Final = "system:openshift:scc:privileged"
CLIENT_CERT_COMMON_NAME: Final = "openshell-client"
CA_COMMON_NAME: Final = "openshell-ca"

GRPC_PORT: Final = 8080
HEALTH_PORT: Final = 8081
METRICS_PORT: Final = 9090
SANDBOX_SSH_PORT: Final = 2222
POSTGRES_PORT: Final = 5432

CONFIG_HASH_ANNOTATION: Final = "hypershell.redhat.io/config-hash"
MANAGED_LABEL: Final = "hypershell.redhat.io/managed"
GATEWAY_LABEL: Final = "hypershell.redhat.io/gateway"
NAMESPACE_NAME_LABEL: Final = "kubernetes.io/metadata.name"


def is_dns1123_label(value: str) -> bool:
    """True for a lowercase RFC 1123 label of at most 63 characters."""
    return len(value) <= DNS1123_LABEL_MAX and _DNS1123_LABEL.fullmatch(value) is not None


def default_namespace(gateway: str) -> str:
    """The tenant namespace of a gateway that does not name one: ``openshell-<name>``."""
    return f"{NAMESPACE_PREFIX}{gateway}"


def host_label(namespace: str) -> str:
    """The first label of a tenant's own host slot: ``gw-<namespace>``."""
    return f"{HOST_LABEL_PREFIX}{namespace}"


def is_postgres_identifier(value: str) -> bool:
    """A lowercase, unquoted PostgreSQL identifier of at most 63 bytes."""
    return len(value) <= POSTGRES_IDENTIFIER_MAX and _POSTGRES.fullmatch(value) is not None


def postgres_identifier(gateway: str) -> str:
    """Role and database name: ``gw_<name>`` (hyphens become underscores)."""
    return POSTGRES_PREFIX + gateway.replace("-", "_")


def service_names(namespace: str) -> tuple[str, ...]:
    """Every in-cluster DNS name of the gateway Service, shortest first."""
    return (
        GATEWAY,
        f"{GATEWAY}.{namespace}",
        f"{GATEWAY}.{namespace}.svc",
        service_fqdn(namespace),
    )


def service_fqdn(namespace: str) -> str:
    """The Service's fully qualified name, used by the BackendTLSPolicy and grpc_endpoint."""
    return f"{GATEWAY}.{namespace}.svc.cluster.local"


def cluster_role_binding(namespace: str) -> str:
    """Per-tenant binding to the shared node-reader ClusterRole (upstream's name)."""
    return f"{NODE_READER_CLUSTER_ROLE}-{namespace}"


def max_gateway_name_length() -> int:
    """The longest gateway name whose every derived name fits its limit.

    Bound by the first host label ``gw-openshell-<name>`` (63) before the namespace (63) or
    the PostgreSQL identifier (63).
    """
    return min(
        DNS1123_LABEL_MAX - len(NAMESPACE_PREFIX),
        DNS1123_LABEL_MAX - len(HOST_LABEL_PREFIX) - len(NAMESPACE_PREFIX),
        POSTGRES_IDENTIFIER_MAX - len(POSTGRES_PREFIX),
    )


def max_namespace_length() -> int:
    """The longest namespace whose host slot label ``gw-<namespace>`` still fits."""
    return DNS1123_LABEL_MAX - len(HOST_LABEL_PREFIX)


def selector_labels() -> dict[str, str]:
    """Labels selecting the gateway pods (upstream's Service and NetworkPolicy selectors)."""
    return {"app.kubernetes.io/name": "openshell", "app.kubernetes.io/instance": GATEWAY}


def standard_labels(gateway: str, component: str = "gateway") -> dict[str, str]:
    """Labels on every object of a gateway: upstream's four plus the declaration name."""
    return {
        "app.kubernetes.io/name": "openshell",
        "app.kubernetes.io/component": component,
        "app.kubernetes.io/managed-by": "hypershell-control-plane",
        MANAGED_LABEL: "true",
        GATEWAY_LABEL: gateway,
    }

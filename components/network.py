"""NetworkPolicy specs of the tenant cell (docs/upstream-differences.md, "7. The tenant cell
denies by default"), as pure data.

Upstream has no default-deny and, once any policy selects the gateway pod, no way for
Prometheus to scrape it. Here every tenant namespace denies ingress by default, then allows:
the gateway to sandbox SSH (legacy and v2 sandbox selectors, upstream's), sandboxes to the
gateway, the metrics scraper namespace to the metrics port, and (in ``exposure``) the router
or Gateway namespace to the gRPC port.

Specs use the Kubernetes wire (camelCase) keys: the Python SDK sends them verbatim, whereas
snake_case keys inside lists are not translated (``_from`` would reach the API server as is).
"""

from __future__ import annotations

from typing import Any

from components import naming
from components.exposure_types import GatewayExposure, ingress_peers

DEFAULT_DENY = "openshell-default-deny-ingress"
SANDBOX_SSH = "openshell-gateway-sandbox-ssh"
SANDBOX_SSH_V2 = "openshell-gateway-sandbox-ssh-v2"
ALLOW_SANDBOX = "openshell-gateway-allow-sandbox-v2"
ALLOW_METRICS = "openshell-gateway-allow-metrics"
ALLOW_ROUTER = "openshell-gateway-allow-router"

_SANDBOX_V2 = {
    "matchExpressions": [{"key": "agents.x-k8s.io/sandbox-name-hash", "operator": "Exists"}]
}
_SANDBOX_LEGACY = {
    "matchExpressions": [
        {"key": "openshell.ai/managed-by", "operator": "In", "values": ["openshell"]}
    ]
}


def _tcp(*ports: int) -> list[dict[str, Any]]:
    return [{"protocol": "TCP", "port": port} for port in ports]


def _ingress(
    pod_selector: dict[str, Any], peers: list[dict[str, Any]], ports: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "podSelector": pod_selector,
        "policyTypes": ["Ingress"],
        "ingress": [{"from": peers, "ports": ports}],
    }


def _namespace(name: str) -> dict[str, Any]:
    return {"namespaceSelector": {"matchLabels": {naming.NAMESPACE_NAME_LABEL: name}}}


def tenant_policies(namespace: str, metrics_namespace: str | None) -> dict[str, dict[str, Any]]:
    """Name → spec of the policies every tenant namespace gets, whatever the ingress mode."""
    gateway_pods = {"matchLabels": naming.selector_labels()}
    from_gateway = [{**_namespace(namespace), "podSelector": gateway_pods}]
    policies: dict[str, dict[str, Any]] = {
        DEFAULT_DENY: {"podSelector": {}, "policyTypes": ["Ingress"]},
        SANDBOX_SSH: _ingress(_SANDBOX_LEGACY, from_gateway, _tcp(naming.SANDBOX_SSH_PORT)),
        SANDBOX_SSH_V2: _ingress(_SANDBOX_V2, from_gateway, _tcp(naming.SANDBOX_SSH_PORT)),
        ALLOW_SANDBOX: _ingress(
            gateway_pods, [{"podSelector": _SANDBOX_V2}], _tcp(naming.GRPC_PORT, naming.HEALTH_PORT)
        ),
    }
    if metrics_namespace is not None:
        policies[ALLOW_METRICS] = _ingress(
            gateway_pods, [_namespace(metrics_namespace)], _tcp(naming.METRICS_PORT)
        )
    return policies


def ingress_policy(exposure: GatewayExposure) -> dict[str, Any]:
    """Allow what reaches the gateway from outside (:func:`ingress_peers`) to its gRPC port."""
    peers = ingress_peers(exposure)
    return _ingress({"matchLabels": naming.selector_labels()}, peers, _tcp(naming.GRPC_PORT))

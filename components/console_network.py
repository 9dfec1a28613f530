"""The console's NetworkPolicies: ``openshell-gateway-allow-console`` (the console pod may dial
the gateway's gRPC port) and ``openshell-console-allow-router`` (the router or the shared
Gateway's namespace may reach the proxy; exposed consoles only)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pulumi
from pulumi_kubernetes.networking.v1 import NetworkPolicy

from components import naming
from components.console_types import ALLOW_CONSOLE, ALLOW_ROUTER, PROXY_PORT, selector_labels
from components.exposure_types import ConsoleExposure, ingress_peers
from components.wire import wire


def allow_console(
    name: str, meta: Callable[..., Any], opts: pulumi.ResourceOptions
) -> NetworkPolicy:
    return NetworkPolicy(
        f"{name}-netpol-allow-console",
        metadata=meta(ALLOW_CONSOLE),
        spec=wire(
            {
                "podSelector": {"matchLabels": naming.selector_labels()},
                "policyTypes": ["Ingress"],
                "ingress": [
                    {
                        "from": [{"podSelector": {"matchLabels": selector_labels()}}],
                        "ports": [{"protocol": "TCP", "port": naming.GRPC_PORT}],
                    }
                ],
            }
        ),
        opts=opts,
    )


def allow_router(
    name: str,
    meta: Callable[..., Any],
    exposure: ConsoleExposure,
    *,
    opts: pulumi.ResourceOptions,
) -> NetworkPolicy:
    """Ingress to the proxy from what reaches the console (``exposure_types.ingress_peers``)."""
    peers = ingress_peers(exposure)
    return NetworkPolicy(
        f"{name}-netpol-allow-router",
        metadata=meta(ALLOW_ROUTER),
        spec=wire(
            {
                "podSelector": {"matchLabels": selector_labels()},
                "policyTypes": ["Ingress"],
                "ingress": [{"from": peers, "ports": [{"protocol": "TCP", "port": PROXY_PORT}]}],
            }
        ),
        opts=opts,
    )

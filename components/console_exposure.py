"""How the console is reached: Service ``openshell-console`` (the proxy's port only) and, by
the cluster's ingress mode, an edge Route, an HTTPRoute on the shared Gateway's HTTPS listener
(each with the NetworkPolicy admitting its source), or nothing (``kubectl port-forward``).

pulumi-kubernetes ``provider/pkg/metadata/overrides.go``: a ``pulumi.com/waitFor`` JSON array
waits until every condition holds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, assert_never

import pulumi
from pulumi_kubernetes.apiextensions import CustomResource
from pulumi_kubernetes.core.v1 import Service

from components.console_network import allow_router
from components.console_types import HTTPROUTE_READY, NAME, PROXY_PORT, selector_labels
from components.exposure_types import (
    ROUTE_ADMITTED,
    WAIT_FOR,
    ConsoleExposure,
    ConsoleHttpRoute,
    ConsolePortForward,
    ConsoleRoute,
)
from components.wire import wire


def console_service(name: str, meta: Callable[..., Any], opts: pulumi.ResourceOptions) -> Service:
    # The Route and HTTPRoute name the Service by its fixed name, as the gateway's do (the
    # policy pack recognises the console's Route by it, known in every preview).
    return Service(
        f"{name}-svc",
        metadata=meta(NAME),
        spec=wire(
            {
                "type": "ClusterIP",
                "selector": selector_labels(),
                "ports": [
                    {
                        "name": "http",
                        "port": PROXY_PORT,
                        "targetPort": "http",
                        "protocol": "TCP",
                    }
                ],
            }
        ),
        opts=opts,
    )


def console_ingress(
    name: str,
    exposure: ConsoleExposure,
    meta: Callable[..., Any],
    opts: pulumi.ResourceOptions,
) -> None:
    """The Route or HTTPRoute of ``exposure``, after the NetworkPolicy admitting its source."""
    match exposure:
        case ConsoleRoute() as route:
            allow_router(name, meta, route, opts=opts)
            CustomResource(
                f"{name}-route",
                api_version="route.openshift.io/v1",
                kind="Route",
                metadata=meta(NAME, {WAIT_FOR: ROUTE_ADMITTED}),
                spec={
                    "host": route.host,
                    "to": {"kind": "Service", "name": NAME, "weight": 100},
                    "port": {"targetPort": "http"},
                    # TLS ends at the router with its certificate for the base domain;
                    # plain HTTP is redirected, never served.
                    "tls": {"termination": "edge", "insecureEdgeTerminationPolicy": "Redirect"},
                    "wildcardPolicy": "None",
                },
                opts=opts,
            )
        case ConsoleHttpRoute() as http_route:
            shared = http_route.gateway
            allow_router(name, meta, http_route, opts=opts)
            CustomResource(
                f"{name}-httproute",
                api_version="gateway.networking.k8s.io/v1",
                kind="HTTPRoute",
                metadata=meta(NAME, {WAIT_FOR: HTTPROUTE_READY}),
                spec={
                    "parentRefs": [
                        {
                            "name": shared.name,
                            "namespace": shared.namespace,
                            "sectionName": shared.section_name,
                        }
                    ],
                    "hostnames": [http_route.host],
                    "rules": [{"backendRefs": [{"name": NAME, "port": PROXY_PORT}]}],
                },
                opts=opts,
            )
        case ConsolePortForward():
            pass
        case _:
            assert_never(exposure)

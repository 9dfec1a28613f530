"""How a gateway and its console are reached, by their cluster's ingress mode: every choice the
resolution makes among the modes (docs/upstream-differences.md, "5. Ingress modes are chosen per
cluster"), so a mode is resolved here and nowhere else in ``gatewayctl.resolve``.

- ``route``: an OpenShift Route each, admitted from the router's namespace; the gateway's passes
  TLS through to it, the console's ends TLS at the router.
- ``gateway-api``: a GRPCRoute on the shared Gateway's listener ``sectionName`` (TLS ends there,
  under its wildcard ``*.<baseDomain>``), an HTTPRoute for the console on ``httpsSectionName``.
- ``none``: the gateway is not exposed; the console is reached with ``kubectl port-forward``.
"""

from __future__ import annotations

from typing import assert_never

from components.exposure_types import (
    ConsoleExposure,
    ConsoleHttpRoute,
    ConsolePortForward,
    ConsoleRoute,
    GatewayExposure,
    GrpcRouteExposure,
    NoExposure,
    RouteExposure,
    SharedGateway,
)
from components.ingress import IngressMode
from gatewayctl.errors import Problem
from gatewayctl.inputs.clusters import ClusterConfig


def gateway_exposure(host: str | None, cluster: ClusterConfig) -> GatewayExposure:
    """How the gateway is reached, decided once. ``host`` is None when it is not exposed."""
    mode, shared = cluster.ingress_mode, cluster.ingress.gateway
    if host is None:
        return NoExposure()
    match mode:
        case IngressMode.ROUTE:
            return RouteExposure(host=host, router_namespace=cluster.ingress.router_namespace)
        case IngressMode.GATEWAY_API:
            assert shared is not None  # ClusterConfig refuses gateway-api without ingress.gateway
            return GrpcRouteExposure(
                host=host,
                gateway=SharedGateway(
                    name=shared.name, namespace=shared.namespace, section_name=shared.section_name
                ),
            )
        case IngressMode.NONE:
            return NoExposure()
        case _:
            assert_never(mode)


def outside_listener(
    display: str, host: str, mode: IngressMode, base_domain: str | None
) -> list[Problem]:
    """In gateway-api mode TLS ends at the shared Gateway's listener, whose certificate is the
    wildcard ``*.<baseDomain>``: a GRPCRoute for any other host is not accepted (or is served
    the wrong certificate). Route mode passes TLS through to the tenant's own certificate."""
    match mode:
        case IngressMode.GATEWAY_API:
            if base_domain is None:
                return []
            if host.endswith("." + base_domain) and "." not in host.removesuffix("." + base_domain):
                return []
        case IngressMode.ROUTE | IngressMode.NONE:
            return []
        case _:
            assert_never(mode)
    return [
        Problem(
            display,
            "spec.exposure.host",
            f"host {host!r} is outside the base domain {base_domain!r}: in gateway-api mode the"
            f" shared Gateway's listener serves only *.{base_domain}; leave the host unset or"
            " use a cluster in route mode for a vanity host",
        )
    ]


def console_exposure(host: str | None, cluster: ClusterConfig) -> ConsoleExposure:
    """How the console is reached, decided once. ``host`` is None when the cluster's mode does
    not reach it from outside (:func:`components.ingress.reaches_outside`)."""
    mode, shared = cluster.ingress_mode, cluster.ingress.gateway
    if host is None:
        return ConsolePortForward()
    match mode:
        case IngressMode.ROUTE:
            return ConsoleRoute(host=host, router_namespace=cluster.ingress.router_namespace)
        case IngressMode.GATEWAY_API:
            assert shared is not None  # ClusterConfig refuses gateway-api without ingress.gateway
            return ConsoleHttpRoute(
                host=host,
                gateway=SharedGateway(
                    name=shared.name,
                    namespace=shared.namespace,
                    section_name=shared.https_section_name,
                ),
            )
        case IngressMode.NONE:
            return ConsolePortForward()
        case _:
            assert_never(mode)

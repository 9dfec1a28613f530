"""How a gateway and its console are reached, as data (``components.exposure`` and
``components.console_exposure`` create the objects): decided once when the declaration is
resolved. No provider SDK is imported here, so validating a stack does not load one (issue 23).

The one declaration of the exposure kinds: :data:`ExposureKind` names each (the names the plan
writes), :data:`GatewayExposure` and :data:`ConsoleExposure` hold the data of each, and
:func:`kind_of` ties the two. Every choice among them is a ``match`` that ends in
``assert_never``, so a kind added here fails type checking at each place that must handle it
(tests/test_exhaustive.py names them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal, assert_never, get_args

from components.ingress import IngressMode
from components.naming import NAMESPACE_NAME_LABEL

WAIT_FOR = "pulumi.com/waitFor"
# The router admits a Route per router shard; the first is the default router.
ROUTE_ADMITTED = 'jsonpath={.status.ingress[0].conditions[?(@.type=="Admitted")].status}=True'
# The GRPCRoute has exactly one parent, the shared Gateway.
GRPCROUTE_ACCEPTED = 'jsonpath={.status.parents[0].conditions[?(@.type=="Accepted")].status}=True'
ROUTER_TIMEOUT = {"haproxy.router.openshift.io/timeout": "3600s"}


@dataclass(frozen=True, kw_only=True)
class SharedGateway:
    """A Gateway API Gateway shared by all tenants of a cluster (an admin prerequisite)."""

    name: str
    namespace: str
    section_name: str


@dataclass(frozen=True, kw_only=True)
class NoExposure:
    """Not reachable from outside the cluster (exposure disabled, or the cluster's mode is
    ``none``)."""

    @property
    def host(self) -> None:
        return None


@dataclass(frozen=True, kw_only=True)
class RouteExposure:
    """An OpenShift Route with TLS passthrough, admitted by the router."""

    host: str
    """External host, from the one hostname function."""
    router_namespace: str
    """Namespace of the OpenShift router, admitted by the NetworkPolicy."""


@dataclass(frozen=True, kw_only=True)
class GrpcRouteExposure:
    """A GRPCRoute attached to the cluster's shared Gateway."""

    host: str
    """External host, under the shared Gateway listener's wildcard."""
    gateway: SharedGateway
    """The parent of the GRPCRoute; its namespace is admitted by the NetworkPolicy."""


GatewayExposure = NoExposure | RouteExposure | GrpcRouteExposure
"""How one gateway is reached: decided once when the declaration is resolved."""


@dataclass(frozen=True, kw_only=True)
class ConsoleRoute:
    """An OpenShift Route, TLS terminated at the router (edge), HTTP redirected to HTTPS."""

    host: str
    router_namespace: str


@dataclass(frozen=True, kw_only=True)
class ConsoleHttpRoute:
    """An HTTPRoute on the shared Gateway's HTTPS listener (``gateway.section_name``)."""

    host: str
    gateway: SharedGateway


@dataclass(frozen=True, kw_only=True)
class ConsolePortForward:
    """No ingress on the cluster: deployed, reached with ``kubectl port-forward``."""

    @property
    def host(self) -> None:
        return None


ConsoleExposure = ConsoleRoute | ConsoleHttpRoute | ConsolePortForward
"""How a gateway's web console is reached: decided once when the declaration is resolved."""

ExposureKind = Literal["none", "route", "grpcroute", "httproute", "port-forward"]
"""Every way a gateway or its console is reached, by the name the plan gives it (a console's
``exposure``)."""
EXPOSURE_KINDS: Final[tuple[ExposureKind, ...]] = get_args(ExposureKind)


def known_kind(value: object) -> ExposureKind | None:
    """``value`` as an exposure kind (a plan names it), None when it names none."""
    return next((kind for kind in EXPOSURE_KINDS if kind == value), None)


def kind_of(exposure: GatewayExposure | ConsoleExposure) -> ExposureKind:
    """The kind of an exposure."""
    match exposure:
        case NoExposure():
            return "none"
        case RouteExposure() | ConsoleRoute():
            return "route"
        case GrpcRouteExposure():
            return "grpcroute"
        case ConsoleHttpRoute():
            return "httproute"
        case ConsolePortForward():
            return "port-forward"
        case _:
            assert_never(exposure)


def exposed_by(kind: ExposureKind) -> tuple[str, str] | None:
    """The apiVersion and kind of the object that exposes a gateway or console of ``kind``;
    None when nothing outside the cluster reaches it."""
    match kind:
        case "route":
            return "route.openshift.io/v1", "Route"
        case "grpcroute":
            return "gateway.networking.k8s.io/v1", "GRPCRoute"
        case "httproute":
            return "gateway.networking.k8s.io/v1", "HTTPRoute"
        case "none" | "port-forward":
            return None
        case _:
            assert_never(kind)


def routed_by(mode: IngressMode | None) -> tuple[str, str] | None:
    """(the kind of the object that routes a gateway's host, where that host's DNS points) in
    ``mode``; None when nothing outside the cluster reaches the gateway (or ``mode`` is one
    this program does not know: a plan's ``ingressMode``, :func:`components.ingress.known_mode`)."""
    match mode:
        case IngressMode.ROUTE:
            return "Route", "the cluster's router"
        case IngressMode.GATEWAY_API:
            return "GRPCRoute", "the cluster's shared Gateway"
        case IngressMode.NONE | None:
            return None
        case _:
            assert_never(mode)


# OpenShift labels the namespaces of host-network routers with this policy group.
OPENSHIFT_INGRESS_POLICY_GROUP = "policy-group.network.openshift.io/ingress"


def _namespace(name: str) -> dict[str, Any]:
    return {"namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: name}}}


def ingress_peers(exposure: GatewayExposure | ConsoleExposure) -> list[dict[str, Any]]:
    """What reaches a gateway or its console from outside, as NetworkPolicy peers: the router's
    namespace (Route) or the shared Gateway's (GRPCRoute, HTTPRoute); nothing when it is not
    exposed.

    On OpenShift, routers on the host network are matched by the ingress policy group label,
    not by their namespace name, so a Route allows both peers.
    """
    match exposure:
        case RouteExposure() | ConsoleRoute():
            return [
                _namespace(exposure.router_namespace),
                {"namespaceSelector": {"matchLabels": {OPENSHIFT_INGRESS_POLICY_GROUP: ""}}},
            ]
        case GrpcRouteExposure() | ConsoleHttpRoute():
            return [_namespace(exposure.gateway.namespace)]
        case NoExposure() | ConsolePortForward():
            return []
        case _:
            assert_never(exposure)

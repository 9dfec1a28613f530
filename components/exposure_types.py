"""How a gateway is reached, as data (``components.exposure`` creates the objects): decided once
when the declaration is resolved. No provider SDK is imported here, so validating a stack does
not load one (issue 23)."""

from __future__ import annotations

from dataclasses import dataclass

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

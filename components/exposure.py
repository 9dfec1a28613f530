"""How a gateway is reached from outside the cluster (docs/upstream-differences.md, "8.
Readiness is awaited"): a ``GatewayExposure``
decided once when the declaration is resolved (the cluster's ingress mode, whether the
declaration is exposed, its host) and matched here.

- ``RouteExposure``: OpenShift Route with TLS passthrough (the gateway terminates TLS with the
  tenant CA) and a NetworkPolicy admitting the router.
- ``GrpcRouteExposure``: a GRPCRoute on the cluster's shared Gateway, a BackendTLSPolicy making
  the Gateway verify the backend with the tenant CA, the CA as ConfigMap
  ``openshell-backend-ca`` and a NetworkPolicy admitting the Gateway's namespace.
- ``NoExposure``: nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, assert_never

import pulumi
from pulumi_kubernetes.apiextensions import CustomResource
from pulumi_kubernetes.core.v1 import ConfigMap
from pulumi_kubernetes.networking.v1 import NetworkPolicy

from components import naming, network, tokens
from components.exposure_types import (
    GRPCROUTE_ACCEPTED,
    ROUTE_ADMITTED,
    ROUTER_TIMEOUT,
    WAIT_FOR,
    GatewayExposure,
    GrpcRouteExposure,
    NoExposure,
    RouteExposure,
)
from components.metadata import metadata
from components.wire import wire


@dataclass(frozen=True, kw_only=True)
class ExposureArgs:
    exposure: GatewayExposure
    """What to create."""
    namespace: str
    """Tenant namespace (already validated)."""
    namespace_ref: pulumi.Input[str]
    """The namespace as an output of the Namespace resource, for dependency ordering."""
    ca_cert_pem: pulumi.Input[str]
    """Tenant CA certificate; the Gateway validates the backend with it."""
    labels: dict[str, str]
    """Standard labels of the gateway's objects."""


class Exposure(pulumi.ComponentResource):
    """Creates the ingress objects of one exposure (see the module docstring)."""

    def __init__(self, name: str, args: ExposureArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(tokens.EXPOSURE, name, None, opts)
        self._name = name
        self._args = args
        self._child = pulumi.ResourceOptions(parent=self)
        match args.exposure:
            case RouteExposure() as route:
                self._route(route)
            case GrpcRouteExposure() as grpc_route:
                self._grpc_route(grpc_route)
            case NoExposure():
                pass
            case _:
                assert_never(args.exposure)
        self.register_outputs({})

    def _meta(self, object_name: str, annotations: dict[str, str] | None = None) -> Any:
        return metadata(
            object_name,
            self._args.labels,
            namespace=self._args.namespace_ref,
            annotations=annotations,
        )

    def _allow_from(self, exposure: GatewayExposure) -> None:
        NetworkPolicy(
            f"{self._name}-netpol-allow-ingress",
            metadata=self._meta(network.ALLOW_ROUTER),
            spec=wire(network.ingress_policy(exposure)),
            opts=self._child,
        )

    def _route(self, route: RouteExposure) -> None:
        CustomResource(
            f"{self._name}-route",
            api_version="route.openshift.io/v1",
            kind="Route",
            metadata=self._meta(naming.GATEWAY, {**ROUTER_TIMEOUT, WAIT_FOR: ROUTE_ADMITTED}),
            spec={
                "host": route.host,
                "to": {"kind": "Service", "name": naming.GATEWAY, "weight": 100},
                "port": {"targetPort": "grpc"},
                "tls": {"termination": "passthrough", "insecureEdgeTerminationPolicy": "None"},
                "wildcardPolicy": "None",
            },
            opts=self._child,
        )
        self._allow_from(route)

    def _grpc_route(self, grpc_route: GrpcRouteExposure) -> None:
        shared = grpc_route.gateway
        backend_ca = ConfigMap(
            f"{self._name}-backend-ca",
            metadata=self._meta(naming.BACKEND_CA_CONFIG_MAP),
            data={"ca.crt": self._args.ca_cert_pem},
            opts=self._child,
        )
        CustomResource(
            f"{self._name}-grpcroute",
            api_version="gateway.networking.k8s.io/v1",
            kind="GRPCRoute",
            metadata=self._meta(naming.GATEWAY, {WAIT_FOR: GRPCROUTE_ACCEPTED}),
            spec={
                "parentRefs": [
                    {
                        "name": shared.name,
                        "namespace": shared.namespace,
                        "sectionName": shared.section_name,
                    }
                ],
                "hostnames": [grpc_route.host],
                "rules": [{"backendRefs": [{"name": naming.GATEWAY, "port": naming.GRPC_PORT}]}],
            },
            opts=self._child,
        )
        CustomResource(
            f"{self._name}-backend-tls",
            api_version="gateway.networking.k8s.io/v1",
            kind="BackendTLSPolicy",
            metadata=self._meta(naming.GATEWAY),
            spec={
                "targetRefs": [{"group": "", "kind": "Service", "name": naming.GATEWAY}],
                "validation": {
                    "caCertificateRefs": [
                        {"group": "", "kind": "ConfigMap", "name": backend_ca.metadata.name}
                    ],
                    "hostname": naming.service_fqdn(self._args.namespace),
                },
            },
            opts=self._child,
        )
        self._allow_from(grpc_route)

"""The route status stand-in on the real API server: routes the OpenShift router or a Gateway API
implementation would refuse are refused here too, with their conditions, while the deployed
stacks' own routes stay admitted (``e2e/routestatus.py``; each rule's unit test is in
tests/test_lane_routestatus.py). This is what makes the program's ``pulumi.com/waitFor`` on
``Admitted``/``Accepted`` wait here as it would there."""

from __future__ import annotations

import json
import time
from typing import Any

from e2e.cluster import Cluster
from e2e.routestatus import StatusStandIn
from tests.e2e.conftest import SHARED_GATEWAY
from tests.e2e.lane import Deployed

ROUTES = "routes.route.openshift.io"
GRPCROUTES = "grpcroutes.gateway.networking.k8s.io"


def conditions(
    cluster: Cluster, kind: str, namespace: str, name: str
) -> dict[str, tuple[str, str]]:
    obj = json.loads(cluster.kubectl("get", kind, name, "-n", namespace, "-o", "json"))
    status = obj.get("status") or {}
    found = [c for i in status.get("ingress") or [] for c in i.get("conditions", [])]
    found += [c for p in status.get("parents") or [] for c in p.get("conditions", [])]
    return {c["type"]: (c["status"], c.get("reason", "")) for c in found}


def settled(
    cluster: Cluster, kind: str, namespace: str, name: str, condition: str
) -> tuple[str, str]:
    """The condition once the stand-in has written it (it sweeps every 0.5 s)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = conditions(cluster, kind, namespace, name)
        if condition in found:
            return found[condition]
        time.sleep(0.5)
    raise AssertionError(f"no {condition} on {kind} {namespace}/{name} within 60 s")


def tenant_route(cluster: Cluster) -> dict[str, Any]:
    items = json.loads(cluster.kubectl("get", ROUTES, "-A", "-o", "json"))["items"]
    admitted = [
        r
        for r in items
        if conditions(cluster, ROUTES, *_where(r)).get("Admitted", ("",))[0] == "True"
    ]
    assert admitted, "the e2e-route stack deployed no admitted Route"
    return dict(admitted[0])


def _where(obj: dict[str, Any]) -> tuple[str, str]:
    return obj["metadata"]["namespace"], obj["metadata"]["name"]


def test_a_route_for_a_host_a_tenant_holds_is_refused_and_the_tenant_keeps_it(
    cluster: Cluster, stand_in: StatusStandIn, deployed: dict[str, Deployed]
) -> None:
    held = tenant_route(cluster)
    namespace = "e2e-route-intruder"
    cluster.kubectl("create", "namespace", namespace)
    try:
        cluster.apply(
            [
                {
                    "apiVersion": "route.openshift.io/v1",
                    "kind": "Route",
                    "metadata": {"name": "claim", "namespace": namespace},
                    "spec": {
                        "host": held["spec"]["host"],
                        "to": {"kind": "Service", "name": "anything"},
                        "tls": {"termination": "passthrough"},
                    },
                }
            ]
        )
        assert settled(cluster, ROUTES, namespace, "claim", "Admitted") == (
            "False",
            "HostAlreadyClaimed",
        )
        assert conditions(cluster, ROUTES, *_where(held))["Admitted"][0] == "True"
    finally:
        cluster.kubectl("delete", "namespace", namespace, "--wait=false")


def test_grpcroutes_a_gateway_would_refuse_are_refused_with_its_reasons(
    cluster: Cluster, stand_in: StatusStandIn, deployed: dict[str, Deployed]
) -> None:
    namespace = "e2e-gwapi-refusals"
    gateway_ns, gateway = SHARED_GATEWAY
    cluster.kubectl("create", "namespace", namespace)

    def grpcroute(name: str, section: str, host: str, port: int) -> dict[str, Any]:
        return {
            "apiVersion": "gateway.networking.k8s.io/v1",
            "kind": "GRPCRoute",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {
                "parentRefs": [{"name": gateway, "namespace": gateway_ns, "sectionName": section}],
                "hostnames": [host],
                "rules": [{"backendRefs": [{"name": "backend", "port": port}]}],
            },
        }

    good = "refusals.use1.openshell.example.com"
    try:
        cluster.apply(
            [
                {
                    "apiVersion": "v1",
                    "kind": "Service",
                    "metadata": {"name": "backend", "namespace": namespace},
                    "spec": {"ports": [{"name": "grpc", "port": 8080}], "selector": {"a": "b"}},
                },
                grpcroute("valid", "grpc", good, 8080),
                grpcroute("no-listener", "h2c", good, 8080),
                grpcroute("other-domain", "grpc", "refusals.euw1.openshell.example.com", 8080),
                grpcroute("no-port", "grpc", good, 9090),
            ]
        )
        assert settled(cluster, GRPCROUTES, namespace, "valid", "Accepted") == ("True", "Accepted")
        assert settled(cluster, GRPCROUTES, namespace, "valid", "ResolvedRefs")[0] == "True"
        assert settled(cluster, GRPCROUTES, namespace, "no-listener", "Accepted") == (
            "False",
            "NoMatchingParent",
        )
        assert settled(cluster, GRPCROUTES, namespace, "other-domain", "Accepted") == (
            "False",
            "NoMatchingListenerHostname",
        )
        assert settled(cluster, GRPCROUTES, namespace, "no-port", "ResolvedRefs") == (
            "False",
            "BackendNotFound",
        )
    finally:
        cluster.kubectl("delete", "namespace", namespace, "--wait=false")

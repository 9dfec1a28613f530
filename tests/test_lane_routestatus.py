"""The lane's route status stand-in (``e2e/routestatus.py``) admits only what the OpenShift
router and a Gateway API implementation admit, with the conditions they set."""

from __future__ import annotations

from typing import Any

from e2e.routestatus import (
    World,
    route_parents_status,
    route_status,
    route_verdicts,
)

CONTROLLER = "e2e.hypershell.invalid/stand-in"


def route(
    namespace: str,
    name: str,
    host: str,
    created: str,
    path: str = "",
    termination: str = "passthrough",
) -> dict[str, Any]:
    spec: dict[str, Any] = {"host": host, "to": {"kind": "Service", "name": "gateway"}}
    if path:
        spec["path"] = path
    if termination:
        spec["tls"] = {"termination": termination}
    return {
        "kind": "Route",
        "metadata": {
            "namespace": namespace,
            "name": name,
            "creationTimestamp": created,
            "uid": f"uid-{namespace}-{name}",
        },
        "spec": spec,
    }


def test_routes_with_hosts_of_their_own_are_all_admitted() -> None:
    routes = [
        route("team-a", "gateway", "a.apps.example.com", "2026-01-01T00:00:00Z"),
        route("team-b", "gateway", "b.apps.example.com", "2026-01-01T00:00:00Z"),
    ]
    assert route_verdicts(routes) == {
        ("team-a", "gateway"): ("", ""),
        ("team-b", "gateway"): ("", ""),
    }
    status = route_status(routes[0], ("", ""))
    assert status is not None
    (ingress,) = status["ingress"]
    assert (ingress["host"], ingress["routerName"]) == ("a.apps.example.com", "default")
    assert [(c["type"], c["status"]) for c in ingress["conditions"]] == [("Admitted", "True")]


def test_a_host_another_namespace_holds_is_refused_as_the_router_refuses_it() -> None:
    older = route("team-a", "gateway", "a.apps.example.com", "2026-01-01T00:00:00Z")
    newer = route("team-b", "gateway", "a.apps.example.com", "2026-01-02T00:00:00Z")
    verdicts = route_verdicts([newer, older])
    assert verdicts[("team-a", "gateway")] == ("", "")
    assert verdicts[("team-b", "gateway")] == (
        "HostAlreadyClaimed",
        "a route in another namespace holds a.apps.example.com and is older than gateway",
    )
    status = route_status(newer, verdicts[("team-b", "gateway")])
    assert status is not None
    (condition,) = status["ingress"][0]["conditions"]
    assert (condition["type"], condition["status"], condition["reason"]) == (
        "Admitted",
        "False",
        "HostAlreadyClaimed",
    )


def test_the_same_host_and_path_in_one_namespace_goes_to_the_older_route() -> None:
    older = route("team-a", "gateway", "a.apps.example.com", "2026-01-01T00:00:00Z")
    newer = route("team-a", "second", "a.apps.example.com", "2026-01-02T00:00:00Z")
    assert route_verdicts([newer, older])[("team-a", "second")] == (
        "HostAlreadyClaimed",
        "route gateway already exposes a.apps.example.com and is older",
    )


def test_one_namespace_may_share_a_host_by_path_unless_a_passthrough_route_holds_it() -> None:
    edge = route("team-a", "api", "a.apps.example.com", "2026-01-01T00:00:00Z", "/api", "edge")
    other = route("team-a", "ui", "a.apps.example.com", "2026-01-02T00:00:00Z", "/ui", "edge")
    assert set(route_verdicts([edge, other]).values()) == {("", "")}
    passthrough = route("team-a", "grpc", "a.apps.example.com", "2026-01-01T00:00:00Z")
    assert route_verdicts([passthrough, other])[("team-a", "ui")][0] == "HostAlreadyClaimed"


def test_the_oldest_by_creation_then_uid_wins_and_a_route_without_a_host_is_refused() -> None:
    same_time = "2026-01-01T00:00:00Z"
    first = route("team-b", "gateway", "x.apps.example.com", same_time)  # uid-team-b-gateway
    second = route("team-c", "gateway", "x.apps.example.com", same_time)  # uid-team-c-gateway
    verdicts = route_verdicts([second, first])
    assert verdicts[("team-b", "gateway")] == ("", "")
    assert verdicts[("team-c", "gateway")][0] == "HostAlreadyClaimed"
    hostless = route("team-d", "gateway", "", same_time)
    assert route_verdicts([hostless])[("team-d", "gateway")] == (
        "NoHostValue",
        "no host value was defined for the route",
    )


def test_a_route_is_written_again_only_when_its_verdict_changes() -> None:
    held = route("team-b", "gateway", "a.apps.example.com", "2026-01-02T00:00:00Z")
    refused = route_status(held, ("HostAlreadyClaimed", "…"))
    assert refused is not None
    held["status"] = refused
    assert route_status(held, ("HostAlreadyClaimed", "…")) is None
    # The holder deleted: the router admits the route that waited.
    admitted = route_status(held, ("", ""))
    assert admitted is not None
    assert admitted["ingress"][0]["conditions"][0]["status"] == "True"


# --- Gateway API -----------------------------------------------------------------------------


def world(**changes: Any) -> World:
    listeners = changes.get(
        "listeners",
        [
            {
                "name": "grpc",
                "protocol": "HTTPS",
                "port": 443,
                "hostname": "*.use1.example.com",
                "allowedRoutes": {"namespaces": {"from": "All"}},
            }
        ],
    )
    return World(
        [
            {
                "kind": "GatewayClass",
                "metadata": {"name": "e2e"},
                "spec": {"controllerName": changes.get("controller", CONTROLLER)},
            },
            {
                "kind": "Gateway",
                "metadata": {"namespace": "openshift-ingress", "name": "shared"},
                "spec": {"gatewayClassName": "e2e", "listeners": listeners},
            },
            {
                "kind": "Service",
                "metadata": {"namespace": "team-a", "name": "gateway"},
                "spec": {"ports": [{"name": "grpc", "port": 8080}]},
            },
            {"kind": "Namespace", "metadata": {"name": "team-a", "labels": {"tier": "tenant"}}},
        ]
    )


def grpcroute(**changes: Any) -> dict[str, Any]:
    ref = {"name": "shared", "namespace": "openshift-ingress", "sectionName": "grpc"}
    ref.update(changes.get("ref", {}))
    backend = {"name": "gateway", "port": 8080, **changes.get("backend", {})}
    return {
        "kind": changes.get("kind", "GRPCRoute"),
        "metadata": {"namespace": "team-a", "name": "gateway", "generation": 3},
        "spec": {
            "parentRefs": [ref],
            "hostnames": changes.get("hostnames", ["team-a.use1.example.com"]),
            "rules": [{"backendRefs": [backend]}],
        },
    }


def conditions(status: dict[str, Any] | None) -> list[tuple[str, str, str]]:
    assert status is not None
    (parent,) = status["parents"]
    assert parent["controllerName"] == CONTROLLER
    return [(c["type"], c["status"], c["reason"]) for c in parent["conditions"]]


def test_a_route_the_gateway_admits_is_accepted_with_its_refs_resolved() -> None:
    status = route_parents_status(grpcroute(), world(), CONTROLLER)
    assert conditions(status) == [
        ("Accepted", "True", "Accepted"),
        ("ResolvedRefs", "True", "ResolvedRefs"),
    ]
    assert status is not None
    assert status["parents"][0]["conditions"][0]["observedGeneration"] == 3


def test_a_section_name_no_listener_has_is_no_matching_parent() -> None:
    status = route_parents_status(grpcroute(ref={"sectionName": "h2"}), world(), CONTROLLER)
    assert conditions(status)[0] == ("Accepted", "False", "NoMatchingParent")


def test_a_hostname_no_listener_matches_is_refused() -> None:
    route = grpcroute(hostnames=["team-a.euw1.example.com"])
    status = route_parents_status(route, world(), CONTROLLER)
    assert conditions(status)[0] == ("Accepted", "False", "NoMatchingListenerHostname")
    # A wildcard listener is a suffix match: deeper names match, the bare domain does not.
    deeper = route_parents_status(
        grpcroute(hostnames=["x.team-a.use1.example.com"]), world(), CONTROLLER
    )
    assert conditions(deeper)[0] == ("Accepted", "True", "Accepted")
    bare = route_parents_status(grpcroute(hostnames=["use1.example.com"]), world(), CONTROLLER)
    assert conditions(bare)[0][2] == "NoMatchingListenerHostname"


def test_listeners_that_do_not_allow_the_namespace_or_kind_refuse_the_route() -> None:
    same = world(
        listeners=[{"name": "grpc", "protocol": "HTTPS", "port": 443, "allowedRoutes": {}}]
    )
    status = route_parents_status(grpcroute(), same, CONTROLLER)
    assert conditions(status)[0] == ("Accepted", "False", "NotAllowedByListeners")
    selected = world(
        listeners=[
            {
                "name": "grpc",
                "protocol": "HTTPS",
                "port": 443,
                "allowedRoutes": {
                    "namespaces": {
                        "from": "Selector",
                        "selector": {"matchLabels": {"tier": "tenant"}},
                    }
                },
            }
        ]
    )
    assert conditions(route_parents_status(grpcroute(), selected, CONTROLLER))[0][1] == "True"
    http_only = world(
        listeners=[
            {
                "name": "grpc",
                "protocol": "HTTPS",
                "port": 443,
                "allowedRoutes": {"namespaces": {"from": "All"}, "kinds": [{"kind": "HTTPRoute"}]},
            }
        ]
    )
    status = route_parents_status(grpcroute(), http_only, CONTROLLER)
    assert conditions(status)[0] == ("Accepted", "False", "NotAllowedByListeners")


def test_a_backend_port_the_service_lacks_is_backend_not_found() -> None:
    status = route_parents_status(grpcroute(backend={"port": 9090}), world(), CONTROLLER)
    assert conditions(status) == [
        ("Accepted", "True", "Accepted"),
        ("ResolvedRefs", "False", "BackendNotFound"),
    ]
    missing = route_parents_status(grpcroute(backend={"name": "nope"}), world(), CONTROLLER)
    assert conditions(missing)[1] == ("ResolvedRefs", "False", "BackendNotFound")
    other_ns = route_parents_status(grpcroute(backend={"namespace": "x"}), world(), CONTROLLER)
    assert conditions(other_ns)[1] == ("ResolvedRefs", "False", "RefNotPermitted")
    not_service = route_parents_status(grpcroute(backend={"kind": "Pod"}), world(), CONTROLLER)
    assert conditions(not_service)[1] == ("ResolvedRefs", "False", "InvalidKind")


def test_a_gateway_nobody_here_serves_gets_no_status() -> None:
    assert route_parents_status(grpcroute(ref={"name": "absent"}), world(), CONTROLLER) is None
    foreign = world(controller="example.com/another")
    assert route_parents_status(grpcroute(), foreign, CONTROLLER) is None


def test_a_status_is_written_again_only_when_the_verdict_changes() -> None:
    route = grpcroute()
    route["status"] = route_parents_status(route, world(), CONTROLLER)
    assert route_parents_status(route, world(), CONTROLLER) is None
    route["spec"]["parentRefs"][0]["sectionName"] = "h2"
    assert conditions(route_parents_status(route, world(), CONTROLLER))[0][2] == (
        "NoMatchingParent"
    )

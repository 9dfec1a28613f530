"""The status the OpenShift router and a Gateway API implementation set, which cannot run here.

:class:`StatusStandIn` polls the lane's cluster and writes, on each Route, GRPCRoute and
HTTPRoute, the status the controller that serves it would write, admitting only what that
controller admits, so that the program's awaits (``pulumi.com/waitFor`` on ``Admitted`` and
``Accepted``) wait here for as long as they would there:

- **Routes**, as the router's ``UniqueHost`` plugin decides (openshift/router
  ``pkg/router/controller/unique_host.go``, ``hostindex/activation.go`` ``SameNamespace``, the
  default with the namespace ownership check on): the routes that name one host are taken
  oldest first (``routeapihelpers.RouteLessThan``: creation time, then uid); the oldest one's
  namespace owns the host; a route is admitted when it is of that namespace and no older admitted
  route has its path (or a passthrough route holds the host while it has TLS too); any other is
  refused, ``Admitted=False`` reason ``HostAlreadyClaimed``, with the router's message. A route
  with no host is refused ``NoHostValue``. The router does not check the backend port against
  the Service (it admits the route; traffic to a missing port fails), so neither does this.
- **GRPCRoutes and HTTPRoutes**, as the Gateway API says an implementation reports each parent
  (gateway-api v1.6.1 ``apis/v1/shared_types.go``, the ``RouteReason*`` constants): a parent
  Gateway that is absent, or of a class another controller serves, gets no status (nobody
  reconciles it); a ``sectionName`` no listener has is ``Accepted=False`` ``NoMatchingParent``;
  listeners whose ``allowedRoutes`` admit neither the route's kind nor its namespace give
  ``NotAllowedByListeners``; hostnames no remaining listener's hostname matches give
  ``NoMatchingListenerHostname`` (a ``*.`` listener hostname is a suffix match,
  ``apis/v1/gateway_types.go`` ``Hostname``). ``ResolvedRefs`` is ``False`` with
  ``InvalidKind`` for a backend that is not a Service, ``RefNotPermitted`` for one in another
  namespace (the lane installs no ReferenceGrant), and ``BackendNotFound`` for a Service that is
  absent or lacks the port.

It writes a status only when the one it computes differs from the one there (by condition
type, status and reason), so a route refused for a host another holds is admitted once that one
goes, as the router does.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from e2e.cluster import Cluster

ROUTE = "routes.route.openshift.io"
GATEWAY_ROUTES = ("grpcroutes.gateway.networking.k8s.io", "httproutes.gateway.networking.k8s.io")
GATEWAY_GROUP = "gateway.networking.k8s.io"
LISTENER_KINDS = {"HTTP": {"HTTPRoute", "GRPCRoute"}, "HTTPS": {"HTTPRoute", "GRPCRoute"}}
"""The route kinds a listener admits when ``allowedRoutes.kinds`` is empty, by protocol
(gateway-api ``apis/v1/gateway_types.go``, ``RouteGroupKind``: an implementation's kinds for the
protocol; GRPCRoute is served over HTTP and HTTPS listeners, ``grpcroute_types.go``)."""

Obj = Mapping[str, Any]


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _key(obj: Obj) -> tuple[str, str, str, str]:
    meta = obj["metadata"]
    return (
        meta.get("creationTimestamp", ""),
        meta.get("uid", ""),
        meta.get("namespace", ""),
        meta["name"],
    )


# --- OpenShift Routes -------------------------------------------------------------------------


def route_verdicts(routes: Iterable[Obj]) -> dict[tuple[str, str], tuple[str, str]]:
    """``(namespace, name)`` of every route: its ``Admitted`` reason (``""`` when admitted) and
    the router's message (module docstring)."""
    by_host: dict[str, list[Obj]] = {}
    verdicts: dict[tuple[str, str], tuple[str, str]] = {}
    for route in routes:
        meta = route["metadata"]
        host = route.get("spec", {}).get("host") or ""
        if not host:
            verdicts[(meta["namespace"], meta["name"])] = (
                "NoHostValue",
                "no host value was defined for the route",
            )
            continue
        by_host.setdefault(host, []).append(route)
    for host, claimants in by_host.items():
        claimants.sort(key=_key)
        owner = claimants[0]
        admitted: list[Obj] = []
        for route in claimants:
            meta = route["metadata"]
            if meta["namespace"] != owner["metadata"]["namespace"]:
                message = (
                    f"a route in another namespace holds {host} and is older than {meta['name']}"
                )
                verdicts[(meta["namespace"], meta["name"])] = ("HostAlreadyClaimed", message)
            elif any(_same_path(other, route) for other in admitted):
                message = f"route {owner['metadata']['name']} already exposes {host} and is older"
                verdicts[(meta["namespace"], meta["name"])] = ("HostAlreadyClaimed", message)
            else:
                admitted.append(route)
                verdicts[(meta["namespace"], meta["name"])] = ("", "")
    return verdicts


def _same_path(existing: Obj, route: Obj) -> bool:
    """``hostindex.hasExistingMatch``: the same path, or a passthrough route holding the host
    while this one has TLS too."""
    a, b = existing.get("spec", {}), route.get("spec", {})
    if (a.get("path") or "") == (b.get("path") or ""):
        return True
    tls_a, tls_b = a.get("tls"), b.get("tls")
    return bool(tls_a and tls_b and tls_a.get("termination") == "passthrough")


def route_status(route: Obj, verdict: tuple[str, str]) -> dict[str, Any] | None:
    """The status the router writes for ``verdict`` (openshift/api route/v1 ``RouteIngress``:
    host, routerName, conditions[type=Admitted], wildcardPolicy), or None when it is there."""
    reason, message = verdict
    status = "False" if reason else "True"
    ingress = route.get("status", {}).get("ingress") or []
    now = [
        (c.get("status"), c.get("reason", ""))
        for i in ingress
        if i.get("routerName") == "default"
        for c in i.get("conditions", [])
        if c.get("type") == "Admitted"
    ]
    if now == [(status, reason)]:
        return None
    condition: dict[str, Any] = {"type": "Admitted", "status": status, "lastTransitionTime": _now()}
    if reason:
        condition.update(reason=reason, message=message)
    return {
        "ingress": [
            {
                "host": route["spec"].get("host", ""),
                "routerName": "default",
                "routerCanonicalHostname": "router-default.apps.e2e.invalid",
                "wildcardPolicy": route["spec"].get("wildcardPolicy", "None"),
                "conditions": [condition],
            }
        ]
    }


# --- Gateway API routes -----------------------------------------------------------------------


class World:
    """What an implementation reads besides the route: Gateways, their classes, Services and
    namespaces' labels."""

    def __init__(self, items: Iterable[Obj]) -> None:
        self.gateways: dict[tuple[str, str], Obj] = {}
        self.classes: dict[str, str] = {}
        self.services: dict[tuple[str, str], Obj] = {}
        self.namespaces: dict[str, dict[str, str]] = {}
        for item in items:
            kind, meta = item.get("kind"), item["metadata"]
            if kind == "Gateway":
                self.gateways[(meta["namespace"], meta["name"])] = item
            elif kind == "GatewayClass":
                self.classes[meta["name"]] = item.get("spec", {}).get("controllerName", "")
            elif kind == "Service":
                self.services[(meta["namespace"], meta["name"])] = item
            elif kind == "Namespace":
                self.namespaces[meta["name"]] = dict(meta.get("labels") or {})


def _hostname_matches(listener: str | None, host: str) -> bool:
    if not listener:
        return True
    if listener.startswith("*."):
        return host.endswith(listener[1:]) and len(host) > len(listener) - 1
    if host.startswith("*."):  # a wildcard route hostname against an exact listener's
        return listener.endswith(host[1:])
    return listener == host


def _selects(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """A ``LabelSelector`` (``matchLabels`` and ``matchExpressions``) against ``labels``."""
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr["key"], expr["operator"], expr.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def _allows(listener: Obj, kind: str, namespace: str, gateway_ns: str, world: World) -> bool:
    allowed = listener.get("allowedRoutes") or {}
    kinds = {k["kind"] for k in allowed.get("kinds") or []} or LISTENER_KINDS.get(
        listener.get("protocol", ""), set()
    )
    if kind not in kinds:
        return False
    space = allowed.get("namespaces") or {}
    origin = space.get("from", "Same")
    if origin == "All":
        return True
    if origin == "Selector":
        return _selects(space.get("selector") or {}, world.namespaces.get(namespace, {}))
    return namespace == gateway_ns


def parent_conditions(
    route: Obj, ref: Obj, world: World, controller: str
) -> list[tuple[str, str, str, str]] | None:
    """``(type, status, reason, message)`` of ``Accepted`` and ``ResolvedRefs`` for one parent,
    or None when no Gateway of ``controller``'s is there (module docstring)."""
    namespace = route["metadata"]["namespace"]
    if ref.get("kind", "Gateway") != "Gateway" or ref.get("group", GATEWAY_GROUP) != GATEWAY_GROUP:
        return None
    gateway_ns = ref.get("namespace") or namespace
    gateway = world.gateways.get((gateway_ns, ref["name"]))
    if gateway is None:
        return None
    if world.classes.get(gateway["spec"].get("gatewayClassName", "")) != controller:
        return None
    listeners = list(gateway["spec"].get("listeners") or [])
    accepted = ("True", "Accepted", "accepted")
    section = ref.get("sectionName")
    if section:
        listeners = [x for x in listeners if x.get("name") == section]
    if ref.get("port"):
        listeners = [x for x in listeners if x.get("port") == ref["port"]]
    if not listeners:
        accepted = ("False", "NoMatchingParent", f"no listener {section or ref.get('port')}")
    else:
        kind = route.get("kind", "")
        listeners = [x for x in listeners if _allows(x, kind, namespace, gateway_ns, world)]
        hosts = route["spec"].get("hostnames") or []
        if not listeners:
            accepted = ("False", "NotAllowedByListeners", f"no listener admits {kind} here")
        elif hosts and not any(
            _hostname_matches(x.get("hostname"), h) for x in listeners for h in hosts
        ):
            accepted = ("False", "NoMatchingListenerHostname", f"no listener matches {hosts}")
    return [("Accepted", *accepted), ("ResolvedRefs", *_resolved(route, world))]


def _resolved(route: Obj, world: World) -> tuple[str, str, str]:
    namespace = route["metadata"]["namespace"]
    for rule in route["spec"].get("rules") or []:
        for backend in rule.get("backendRefs") or []:
            name = backend["name"]
            if backend.get("kind", "Service") != "Service" or backend.get("group", "") != "":
                return ("False", "InvalidKind", f"{backend.get('kind')} {name} is not a Service")
            if (backend.get("namespace") or namespace) != namespace:
                return ("False", "RefNotPermitted", f"no ReferenceGrant allows Service {name}")
            service = world.services.get((namespace, name))
            if service is None:
                return ("False", "BackendNotFound", f"Service {name} not found")
            ports = {p.get("port") for p in service.get("spec", {}).get("ports") or []}
            if backend.get("port") not in ports:
                return (
                    "False",
                    "BackendNotFound",
                    f"port {backend.get('port')} not found in Service {name}",
                )
    return ("True", "ResolvedRefs", "resolved")


def route_parents_status(route: Obj, world: World, controller: str) -> dict[str, Any] | None:
    """What a Gateway API implementation writes on a GRPCRoute/HTTPRoute (gateway-api apis/v1
    shared_types.go, RouteParentStatus: parentRef, controllerName, conditions), or None when
    it is there already or no parent is this controller's."""
    generation = route["metadata"].get("generation", 1)
    parents = []
    for ref in route["spec"].get("parentRefs") or []:
        conditions = parent_conditions(route, ref, world, controller)
        if conditions is not None:
            parents.append((ref, conditions))
    if not parents:
        return None
    current = {
        json.dumps(p.get("parentRef"), sort_keys=True): sorted(
            (c.get("type"), c.get("status"), c.get("reason")) for c in p.get("conditions", [])
        )
        for p in route.get("status", {}).get("parents") or []
        if p.get("controllerName") == controller
    }
    wanted = {
        json.dumps(ref, sort_keys=True): sorted((t, s, r) for t, s, r, _ in conditions)
        for ref, conditions in parents
    }
    if current == wanted:
        return None
    return {
        "parents": [
            {
                "parentRef": ref,
                "controllerName": controller,
                "conditions": [
                    {
                        "type": t,
                        "status": s,
                        "reason": r,
                        "message": f"stand-in controller: {m}",
                        "observedGeneration": generation,
                        "lastTransitionTime": _now(),
                    }
                    for t, s, r, m in conditions
                ],
            }
            for ref, conditions in parents
        ]
    }


# --- the poller -------------------------------------------------------------------------------


class StatusStandIn:
    """Polls the cluster and sets the router's / Gateway implementation's status (module doc)."""

    CONTROLLER = "e2e.hypershell.invalid/stand-in"

    def __init__(self, cluster: Cluster, *, interval: float = 0.5) -> None:
        self.cluster = cluster
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="status-stand-in", daemon=True)
        self.patched: list[tuple[str, str, str]] = []

    def __enter__(self) -> StatusStandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _kinds(self) -> list[str]:
        resources = self.cluster.kubectl("api-resources", "-o", "name", check=False).split()
        wanted = [ROUTE, *GATEWAY_ROUTES, "gateways.gateway.networking.k8s.io"]
        wanted += ["gatewayclasses.gateway.networking.k8s.io"]
        return [k for k in wanted if k in resources]

    def sweep(self) -> None:
        kinds = self._kinds()
        if not any(k == ROUTE or k in GATEWAY_ROUTES for k in kinds):
            return
        # One read of everything an admission depends on.
        listed = json.loads(
            self.cluster.kubectl(
                "get", ",".join([*kinds, "services", "namespaces"]), "-A", "-o", "json", check=False
            )
            or '{"items": []}'
        )
        items = listed.get("items", [])
        routes = [i for i in items if i.get("kind") == "Route"]
        verdicts = route_verdicts(routes)
        world = World(items)
        for obj in items:
            kind = obj.get("kind")
            meta = obj["metadata"]
            if kind == "Route":
                status = route_status(obj, verdicts[(meta["namespace"], meta["name"])])
                resource = ROUTE
            elif kind in ("GRPCRoute", "HTTPRoute"):
                status = route_parents_status(obj, world, self.CONTROLLER)
                resource = f"{kind.lower()}s.{GATEWAY_GROUP}"
            else:
                continue
            if status is None:
                continue
            self.cluster.kubectl(
                "patch",
                resource,
                meta["name"],
                "-n",
                meta["namespace"],
                "--subresource=status",
                "--type=merge",
                "-p",
                json.dumps({"status": status}),
                check=False,
            )
            self.patched.append((resource, meta["namespace"], meta["name"]))

    def _loop(self) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(Exception):
                self.sweep()
            self._stop.wait(self.interval)

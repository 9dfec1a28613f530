"""The objects that expose a gateway or its console, one per exposure kind of the program, and
what the pack judges of each (policy/README.md, "Which objects expose a gateway or a console").

The program declares the kinds (``components.exposure_types.ExposureKind``). The pack cannot
import the program where it runs, so :data:`EXPOSURE_KINDS` names them again
(tests/test_exhaustive.py checks they are the program's), and :func:`exposing` is a ``match``
that mypy, importing the declaration for types only, checks is exhaustive: a kind added to the
program fails type checking here until the pack knows the object that exposes it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, assert_never

from pulumi_policy import ReportViolation, ResourceValidationArgs

from ._props import elements, get

if TYPE_CHECKING:
    from components.exposure_types import ExposureKind

EXPOSURE_KINDS: tuple[ExposureKind, ...] = (
    "none",
    "route",
    "grpcroute",
    "httproute",
    "port-forward",
)
"""``components.exposure_types.ExposureKind``'s members, which the pack cannot import."""

ROUTE = ("route.openshift.io", "Route")
GRPC_ROUTE = ("gateway.networking.k8s.io", "GRPCRoute")
HTTP_ROUTE = ("gateway.networking.k8s.io", "HTTPRoute")
CONSOLE_SERVICE = "openshell-console"
"""The web console's Service: its Route ends TLS at the router (``console.console_tls_only``)."""
DEFAULT_HTTPS_LISTENERS = ("https",)
CONSOLE_TERMINATIONS = ("edge", "reencrypt")
CONSOLE_INSECURE = ("Redirect", "None")

Hosts = Callable[[Any], list[tuple[str, Any]]]
"""``(field, host)`` an object's properties name."""
Rule = Callable[[ResourceValidationArgs, str, ReportViolation], None]
"""A TLS rule of ``console-tls-only``: the object's arguments, its description, the report."""


@dataclass(frozen=True)
class Exposing:
    """What the pack judges of the objects of one kind that expose a gateway or a console."""

    group_kind: tuple[str, str]
    hosts: Hosts
    """The hosts it serves."""
    to_console: Callable[[Any], bool]
    """It sends to the console's Service (a console's, not a gateway's)."""
    gateway: bool
    """It may expose a gateway: the gateway's server certificate covers its hosts
    (``server-cert-covers-host``) and the gateway names an issuer
    (``exposed-gateway-has-issuer``)."""
    console_rule: Rule | None
    """``console-tls-only``'s rule for it, when it may expose a console."""


def _route_host(props: Any) -> list[tuple[str, Any]]:
    """A Route's one host, which may be missing (None: the router would make one up)."""
    return [("spec.host", get(props, "spec", "host"))]


def _hostnames(props: Any) -> list[tuple[str, Any]]:
    """A Gateway API route's hostnames."""
    hostnames = elements(get(props, "spec", "hostnames"))
    return [(f"spec.hostnames[{i}]", host) for i, host in enumerate(hostnames)]


def is_console_route(props: Any) -> bool:
    """A Route whose backend is the console's Service."""
    return bool(get(props, "spec", "to", "name") == CONSOLE_SERVICE)


def _never(props: Any) -> bool:
    return False


def https_listeners(config: Any) -> tuple[str, ...]:
    configured = get(config, "httpsListeners")
    return tuple(str(n) for n in configured) if configured else DEFAULT_HTTPS_LISTENERS


def _console_route(args: ResourceValidationArgs, what: str, report: ReportViolation) -> None:
    if not is_console_route(args.props):
        return  # a gateway's Route: network.route_passthrough judges it
    tls = get(args.props, "spec", "tls")
    termination = get(tls, "termination")
    if termination not in CONSOLE_TERMINATIONS:
        got = "not set" if termination is None else repr(termination)
        report(
            f"{what}: spec.tls.termination is {got}; the console's Route must be 'edge' or"
            " 'reencrypt' (TLS at the router: the console serves plain HTTP in the pod)",
            None,
        )
    insecure = get(tls, "insecureEdgeTerminationPolicy")
    if insecure not in CONSOLE_INSECURE:
        got = "not set" if insecure is None else repr(insecure)
        report(
            f"{what}: spec.tls.insecureEdgeTerminationPolicy is {got}; must be 'Redirect'"
            " or 'None' (the console is never served over plain HTTP)",
            None,
        )


def _http_route(args: ResourceValidationArgs, what: str, report: ReportViolation) -> None:
    allowed = https_listeners(args.get_config())
    for index, parent in enumerate(elements(get(args.props, "spec", "parentRefs"))):
        section = get(parent, "sectionName")
        if section not in allowed:
            got = "not set" if section is None else repr(section)
            report(
                f"{what}: spec.parentRefs[{index}].sectionName is {got}; an HTTPRoute"
                f" attaches only to an HTTPS listener ({', '.join(allowed)})",
                None,
            )


def exposing(kind: ExposureKind) -> Exposing | None:
    """The objects that expose a gateway or console of ``kind``; None when nothing does."""
    match kind:
        case "route":  # a gateway's (TLS passed through) or a console's (TLS at the router)
            return Exposing(ROUTE, _route_host, is_console_route, True, _console_route)
        case "grpcroute":  # a gateway's only
            return Exposing(GRPC_ROUTE, _hostnames, _never, True, None)
        case "httproute":  # a console's only: TLS ends at the shared Gateway, with its certificate
            return Exposing(HTTP_ROUTE, _hostnames, _never, False, _http_route)
        case "none" | "port-forward":
            return None
        case _:
            assert_never(kind)


EXPOSING: dict[tuple[str, str], Exposing] = {
    found.group_kind: found for kind in EXPOSURE_KINDS if (found := exposing(kind)) is not None
}
"""Every kind of object that exposes a gateway or a console, by (group, kind)."""
GATEWAY_EXPOSURES = frozenset(g for g, found in EXPOSING.items() if found.gateway)
"""The kinds of object that may expose a gateway."""


def to_console(group_kind: tuple[str, str] | None, props: Any) -> bool:
    """An exposing object that sends to the console's Service."""
    found = EXPOSING.get(group_kind) if group_kind is not None else None
    return found is not None and found.to_console(props)

"""The web console is reached over TLS only (issue 13).

- A Route to the console's Service (``openshell-console``) terminates TLS at the router (edge)
  or re-encrypts it, and never serves plain HTTP: ``insecureEdgeTerminationPolicy`` is
  ``Redirect`` or ``None``. (Routes to anything else keep the passthrough rule of
  ``network.route_passthrough``.)
- An HTTPRoute attaches to the shared Gateway only through a listener named in the policy
  config's ``httpsListeners`` (default ``https``): every parentRef names its ``sectionName``,
  since a parentRef without one attaches to every listener, plain HTTP ones included.
- The console's confidential Keycloak client redirects only to an ``https`` callback (or, for
  a console reached through ``kubectl port-forward``, the loopback one), with PKCE S256 and
  full scope off.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, assert_never

from pulumi_policy import (
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
)

from ._props import EXPOSURE_KINDS, describe, elements, get, kind_of
from .network import ROUTE

if TYPE_CHECKING:
    from components.exposure_types import ExposureKind

CONSOLE_SERVICE = "openshell-console"
HTTP_ROUTE = ("gateway.networking.k8s.io", "HTTPRoute")
KEYCLOAK_CLIENT = "keycloak:openid/client:Client"
DEFAULT_HTTPS_LISTENERS = ("https",)
CONSOLE_TERMINATIONS = ("edge", "reencrypt")
CONSOLE_INSECURE = ("Redirect", "None")
_CALLBACK = re.compile(
    r"(https://[a-z0-9.-]+(:[0-9]{1,5})?|http://(localhost|127\.0\.0\.1):[0-9]{1,5})"
    r"/oauth2/callback"
)


def is_console_route(props: Any) -> bool:
    """A Route whose backend is the console's Service."""
    return bool(get(props, "spec", "to", "name") == CONSOLE_SERVICE)


def https_listeners(config: Any) -> tuple[str, ...]:
    configured = get(config, "httpsListeners")
    return tuple(str(n) for n in configured) if configured else DEFAULT_HTTPS_LISTENERS


Rule = Callable[[ResourceValidationArgs, str, ReportViolation], None]
"""A console exposure's TLS rule: the object's arguments, its description, the report."""


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


def console_exposure(kind: ExposureKind) -> tuple[tuple[str, str], Rule] | None:
    """The object (group, kind) that exposes a console of ``kind`` and its TLS rule; None when
    no object exposes a console as ``kind`` (a GRPCRoute only ever exposes a gateway)."""
    match kind:
        case "route":
            return ROUTE, _console_route
        case "httproute":
            return HTTP_ROUTE, _http_route
        case "grpcroute" | "none" | "port-forward":
            return None
        case _:
            assert_never(kind)


CONSOLE_RULES: dict[tuple[str, str], Rule] = dict(
    exposure for kind in EXPOSURE_KINDS if (exposure := console_exposure(kind)) is not None
)


def validate_console_tls(args: ResourceValidationArgs, report: ReportViolation) -> None:
    group_kind = kind_of(args.resource_type)
    rule = CONSOLE_RULES.get(group_kind) if group_kind is not None else None
    if rule is not None:
        rule(args, describe(args.resource_type, args.props, args.name), report)
    elif args.resource_type == KEYCLOAK_CLIENT and get(args.props, "accessType") == "CONFIDENTIAL":
        name = f"Keycloak client {args.name}"
        for uri in [str(u) for u in elements(get(args.props, "validRedirectUris"))]:
            if not _CALLBACK.fullmatch(uri):
                report(
                    f"{name}: redirect URI {uri!r} is not an https /oauth2/callback (or the"
                    " loopback one of a port-forward)",
                    None,
                )
        if get(args.props, "pkceCodeChallengeMethod") != "S256":
            report(f"{name}: pkceCodeChallengeMethod must be 'S256'", None)
        if get(args.props, "fullScopeAllowed") is not False:
            report(f"{name}: fullScopeAllowed must be false", None)


console_tls_only = ResourceValidationPolicy(
    name="console-tls-only",
    description=(
        "The web console is reached over TLS only: edge or re-encrypt Routes without plain"
        " HTTP, HTTPRoutes on HTTPS listeners, https callbacks."
    ),
    validate=validate_console_tls,
    config_schema=PolicyConfigSchema(
        properties={
            "httpsListeners": {
                "description": "sectionNames of the shared Gateway's HTTPS listeners.",
                "type": "array",
                "items": {"type": "string"},
                "default": list(DEFAULT_HTTPS_LISTENERS),
            }
        }
    ),
)

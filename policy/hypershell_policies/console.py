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

from pulumi_policy import (
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
)

from ._props import describe, elements, get, kind_of
from .exposures import DEFAULT_HTTPS_LISTENERS, EXPOSING

KEYCLOAK_CLIENT = "keycloak:openid/client:Client"
_CALLBACK = re.compile(
    r"(https://[a-z0-9.-]+(:[0-9]{1,5})?|http://(localhost|127\.0\.0\.1):[0-9]{1,5})"
    r"/oauth2/callback"
)


def validate_console_tls(args: ResourceValidationArgs, report: ReportViolation) -> None:
    found = EXPOSING.get(kind_of(args.resource_type) or ("", ""))
    if found is not None and found.console_rule is not None:
        found.console_rule(args, describe(args.resource_type, args.props, args.name), report)
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

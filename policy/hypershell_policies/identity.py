"""Sign-in: public OpenID clients are safe for a CLI, and every exposed gateway has an issuer.

- A public client (no secret: anyone can use its id) must use PKCE with S256, so an
  intercepted authorization code is useless; redirect only to the user's own machine
  (``http://127.0.0.1:*``, ``http://localhost:*``), so a code never leaves it; and keep full
  scope off, so its tokens carry only the client's own roles, not every role of the user.
- A gateway reachable from outside the cluster (a Route or GRPCRoute) names an OIDC issuer in
  its ``gateway.toml``: without one, no person can sign in to it, and it only exposes an
  endpoint that refuses everyone.
"""

from __future__ import annotations

import re
import tomllib
from typing import Any

from pulumi_policy import (
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from ._props import elements, get, kind_of
from .exposures import GATEWAY_EXPOSURES
from .network import gateway_of

KEYCLOAK_CLIENT = "keycloak:openid/client:Client"
CONFIG_MAP = ("core", "ConfigMap")
GATEWAY_CONFIG_MAP = "openshell-gateway-config"
GATEWAY_TOML = "gateway.toml"
_LOOPBACK = re.compile(r"http://(127\.0\.0\.1|localhost|\[::1\])(:(\*|[0-9]{1,5}))?(/[^*\s]*)?")


def is_loopback(uri: str) -> bool:
    """A redirect URI on the user's own machine: http to a loopback host, any port."""
    return bool(_LOOPBACK.fullmatch(uri))


def validate_public_client(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.resource_type != KEYCLOAK_CLIENT or get(args.props, "accessType") != "PUBLIC":
        return
    name = f"Keycloak client {args.name}"
    pkce = get(args.props, "pkceCodeChallengeMethod")
    if pkce != "S256":
        got = "not set" if pkce is None else repr(pkce)
        report(f"{name}: pkceCodeChallengeMethod is {got}; a public client must use 'S256'", None)
    # The provider's default is true (terraform-provider-keycloak, resource_keycloak_openid_
    # client.go: full_scope_allowed Default true), so it must be set, to false.
    if get(args.props, "fullScopeAllowed") is not False:
        report(f"{name}: fullScopeAllowed must be false for a public client", None)
    uris = [str(u) for u in elements(get(args.props, "validRedirectUris"))]
    if not uris and get(args.props, "standardFlowEnabled") is not False:
        report(f"{name}: validRedirectUris is empty; list only loopback URIs", None)
    for uri in uris:
        if not is_loopback(uri):
            report(
                f"{name}: redirect URI {uri!r} is not a loopback address"
                " (http://127.0.0.1:*, http://localhost:*)",
                None,
            )


keycloak_public_client = ResourceValidationPolicy(
    name="keycloak-public-client",
    description=(
        "Public Keycloak clients use PKCE S256, redirect only to loopback addresses and have"
        " full scope off."
    ),
    validate=validate_public_client,
)


def issuer_of(toml: Any) -> str | None:
    """The ``[openshell.gateway.oidc]`` issuer of a gateway.toml text, or None."""
    if not isinstance(toml, str):
        return None
    try:
        document = tomllib.loads(toml)
    except tomllib.TOMLDecodeError:
        return None
    issuer = document.get("openshell", {}).get("gateway", {}).get("oidc", {}).get("issuer")
    return issuer if isinstance(issuer, str) and issuer.startswith("https://") else None


def validate_exposed_issuer(args: StackValidationArgs, report: ReportViolation) -> None:
    configs = {
        gateway_of(r): r
        for r in args.resources
        if kind_of(r.resource_type) == CONFIG_MAP
        and get(r.props, "metadata", "name") == GATEWAY_CONFIG_MAP
    }
    for route in args.resources:
        if kind_of(route.resource_type) not in GATEWAY_EXPOSURES:
            continue
        gateway = gateway_of(route)
        if gateway is None:
            continue
        config = configs.get(gateway)
        toml = get(config.props, "data", GATEWAY_TOML) if config is not None else None
        if issuer_of(toml) is None:
            report(
                f"gateway {gateway!r} is exposed ({route.name}) but its {GATEWAY_TOML} names no"
                " https OIDC issuer ([openshell.gateway.oidc] issuer): no person could sign in",
                route.urn,
            )


exposed_gateway_has_issuer = StackValidationPolicy(
    name="exposed-gateway-has-issuer",
    description="Every gateway exposed by a Route or GRPCRoute names an https OIDC issuer.",
    validate=validate_exposed_issuer,
)

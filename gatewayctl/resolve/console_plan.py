"""Console decisions of one gateway (issue 13): whether it may have one, where it is reached,
which images it runs.

- ``spec.console.enabled`` needs the cluster's Keycloak (the console signs people in with a
  confidential client next to the gateway's; a gateway with its own issuer or ``signIn: none``
  has no such client) and a gateway that is not deliberately hidden (``spec.exposure.enabled:
  false`` refuses a console: the operator said the gateway is not reached from outside).
- The cluster's ingress mode decides the exposure (``gatewayctl.resolve.exposure_plan``): ``route``
  an edge Route, ``gateway-api`` an HTTPRoute on the shared Gateway's HTTPS listener, both at
  ``console-<namespace>.<baseDomain>`` (a base domain is required); ``none`` deploys the console
  unexposed, reached with ``kubectl port-forward`` at ``http://localhost:4180`` (what a cluster
  without ingress offers for the gateway too; docs/design-notes.md, "The web console").
- Images: ``spec.console.images`` > the gateway's release (``console``, ``oauth2Proxy``,
  optional) > upstream's defaults; then the cluster's registry mirrors. A production stack
  runs them by digest like every other image.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import assert_never

from components import images
from components.console_types import ConsoleSettings, console_client_id, console_host
from components.exposure_types import ConsoleExposure, kind_of
from components.hostnames import HostnameError, check_dns_name
from components.images import ImageReferenceError
from components.ingress import reaches_outside
from gatewayctl.errors import Problem
from gatewayctl.inputs.clusters import ClusterConfig
from gatewayctl.inputs.gateway_declaration import GatewaySpec
from gatewayctl.inputs.release_files import ReleaseFile
from gatewayctl.resolve.exposure_plan import console_exposure
from gatewayctl.resolve.resolved import ResolvedGateway, SignIn

DEFAULT_DASHBOARD_IMAGE = (
    "quay.io/gkrumbach07/openshell-dashboard"
    "@sha256:cb5e5b18b4cdf62efb1ce33e2ae73ed646d3cdf438966cae3c328f1c04cce0b4"
)
"""Upstream's default (hypershell ``internal/gateway/config.go``, ``defaultConsoleImage``)."""
DEFAULT_OAUTH2_PROXY_IMAGE = "quay.io/oauth2-proxy/oauth2-proxy:v7.7.1"
"""Upstream's default (``defaultOAuth2ProxyImage``); a tag, so a production stack takes it
from a release or ``spec.console.images.oauth2Proxy``, by digest."""
FIELD = "spec.console.enabled"


def resolve_console(
    display: str,
    spec: GatewaySpec,
    *,
    namespace: str,
    cluster_name: str,
    cluster: ClusterConfig,
    sign_in: SignIn,
    release: ReleaseFile | None,
    production: bool,
) -> tuple[ConsoleSettings | None, list[Problem]]:
    """The console of a gateway, or None when it has none; the problems of its fields."""
    console = spec.console
    if not console.enabled:
        return None, []
    problems: list[Problem] = []
    why = _no_keycloak(sign_in, cluster_name)
    if why is not None:
        problems.append(
            Problem(
                display, FIELD, f"the console signs people in with the cluster's Keycloak: {why}"
            )
        )
    if not spec.exposure.enabled:
        problems.append(
            Problem(
                display,
                FIELD,
                "the console needs an exposed gateway, and spec.exposure.enabled is false",
            )
        )
    exposure = _exposure(display, namespace, cluster_name, cluster, problems)
    chosen = {}
    for which, override, builtin in (
        ("dashboard", console.images.dashboard, DEFAULT_DASHBOARD_IMAGE),
        ("oauth2Proxy", console.images.oauth2_proxy, DEFAULT_OAUTH2_PROXY_IMAGE),
    ):
        from_release = release.release.console_image(which) if release is not None else None
        field = f"spec.console.images.{which}"
        try:
            image = images.resolve_image(
                override=override,
                stack_default=from_release,
                builtin_default=builtin,
                mirrors=cluster.registry_mirrors,
            )
        except ImageReferenceError as error:
            problems.append(
                Problem(display, field, f"after clusters.{cluster_name}.registryMirrors: {error}")
            )
            continue
        if production and images.parse_image(image).digest is None:
            origin = (
                "its own"
                if override
                else f"release {release.release.name!r}'s"
                if from_release is not None and release is not None
                else "the built-in default"
            )
            problems.append(
                Problem(
                    display,
                    field,
                    f"{image!r} ({origin}) has no digest: the stack is production, so the console"
                    f" runs images by digest: set {field} @sha256:..., or pin a release whose"
                    f" spec.images.{which} has one",
                )
            )
        chosen[which] = image
    if problems or exposure is None:
        return None, problems
    return (
        ConsoleSettings(
            exposure=exposure,
            dashboard_image=chosen["dashboard"],
            proxy_image=chosen["oauth2Proxy"],
        ),
        [],
    )


def _no_keycloak(sign_in: SignIn, cluster_name: str) -> str | None:
    """Why a gateway signing people in as ``sign_in`` has no client of the cluster's Keycloak
    for its console; None when it has one."""
    match sign_in:
        case "keycloak":
            return None
        case "oidc":
            return "the gateway brings its own issuer (spec.oidc)"
        case "none":
            return "the gateway declares signIn: none"
        case "unset":
            return f"cluster {cluster_name!r} has no identity.keycloak"
        case _:
            assert_never(sign_in)


def _exposure(
    display: str,
    namespace: str,
    cluster_name: str,
    cluster: ClusterConfig,
    problems: list[Problem],
) -> ConsoleExposure | None:
    if not reaches_outside(cluster.ingress_mode):
        return console_exposure(None, cluster)
    if cluster.base_domain is None:
        problems.append(
            Problem(
                display,
                FIELD,
                f"the console's host is console-<namespace>.<baseDomain>, and cluster"
                f" {cluster_name!r} has no baseDomain",
            )
        )
        return None
    try:
        host = check_dns_name(console_host(namespace, cluster.base_domain), what="console host")
    except HostnameError as error:
        problems.append(Problem(display, FIELD, str(error)))
        return None
    return console_exposure(host, cluster)


def console_entry(gateway: ResolvedGateway, address: str | None) -> Mapping[str, object] | None:
    """The plan's console facts of a gateway (None without a console): its address (the
    program's output), how it is reached, its Keycloak client and its final images."""
    settings, identity = gateway.args.console, gateway.args.identity
    if settings is None or identity is None:
        return None
    return {
        "address": address,
        "exposure": kind_of(settings.exposure),
        "clientId": console_client_id(identity.client_id),
        "images": {"dashboard": settings.dashboard_image, "oauth2Proxy": settings.proxy_image},
    }


def console_cell(gateway: ResolvedGateway, address: str | None) -> str | None:
    """The render summary's console cell: the address, ``port-forward``, or None."""
    if gateway.args.console is None:
        return None
    return address or "port-forward"

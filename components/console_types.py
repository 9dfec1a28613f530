"""The web console's settings, names and arguments, as data (``components.console`` composes
the parts that create its objects): decided once when the declaration is resolved. No provider
SDK is imported here, so validating a stack does not load one (issue 23)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from components.exposure_types import ConsoleExposure
from components.rotation import NO_ROTATION, Rotation

if TYPE_CHECKING:
    import pulumi
    import pulumi_keycloak as keycloak

NAME = "openshell-console"
"""Deployment, Service, HTTPRoute or Route."""
SECRET = "openshell-console-oauth2"
CLIENT_SECRET_KEY = "client-secret"
COOKIE_SECRET_KEY = "cookie-secret"
DASHBOARD_PORT = 8000
PROXY_PORT = 4180
ALLOW_ROUTER = "openshell-console-allow-router"
"""Ingress to the proxy from the router or the shared Gateway's namespace."""
ALLOW_CONSOLE = "openshell-gateway-allow-console"
"""Ingress to the gateway's gRPC port from the console pod (the dashboard dials it)."""
HOST_PREFIX = "console-"
CALLBACK_PATH = "/oauth2/callback"
PORT_FORWARD_ORIGIN = f"http://localhost:{PROXY_PORT}"
"""Where the console is reached on a cluster without ingress (``kubectl port-forward``)."""
COOKIE_BYTES = 32
"""oauth2-proxy decodes the secret and needs 16, 24 or 32 bytes (AES)."""

# The Route's router shard admits it; the HTTPRoute must be accepted by its parent listener and
# its backend resolved (upstream's ConsoleRouteReady).
HTTPROUTE_READY = json.dumps(
    [
        'jsonpath={.status.parents[0].conditions[?(@.type=="Accepted")].status}=True',
        'jsonpath={.status.parents[0].conditions[?(@.type=="ResolvedRefs")].status}=True',
    ]
)
GATEWAY_CA_DIR = "/etc/openshell-tls/gateway"
GATEWAY_CLIENT_DIR = "/etc/openshell-tls/gateway-client"
OIDC_CA_PATH = "/etc/openshell-tls/oidc/ca-bundle.crt"


def console_host(namespace: str, base_domain: str) -> str:
    """``console-<namespace>.<baseDomain>`` (upstream's ``deriveConsoleHost``)."""
    return f"{HOST_PREFIX}{namespace}.{base_domain}"


def console_client_id(gateway_client_id: str) -> str:
    """The console's Keycloak client: the gateway's client id and ``-console``."""
    return f"{gateway_client_id}-console"


def console_url(exposure: ConsoleExposure) -> str:
    """The console's origin: ``https://<host>``, or the port-forward's local address."""
    return f"https://{exposure.host}" if exposure.host is not None else PORT_FORWARD_ORIGIN


def console_address(exposure: ConsoleExposure) -> str | None:
    """The published address: None when the console is not exposed."""
    return console_url(exposure) if exposure.host is not None else None


@dataclass(frozen=True, kw_only=True)
class ConsoleSettings:
    """What the resolution decides for a gateway whose console is enabled."""

    exposure: ConsoleExposure
    dashboard_image: str
    """Final image (precedence and mirrors applied)."""
    proxy_image: str
    """Final oauth2-proxy image."""


@dataclass(frozen=True, kw_only=True)
class ConsoleArgs:
    settings: ConsoleSettings
    namespace: str
    """Tenant namespace (already validated)."""
    namespace_ref: pulumi.Input[str]
    realm: str
    issuer: str
    """The issuer the gateway trusts; oauth2-proxy must see the same ``iss``."""
    gateway_client_id: str
    """The gateway's client id: the audience of the console's tokens and the owner of the
    roles mapped into ``hypershell.roles``."""
    gateway_role_ids: tuple[pulumi.Input[str], ...]
    """Keycloak's ids of the gateway client's roles, mapped into the console's scope."""
    openshift: bool
    server_tls_secret: pulumi.Input[str]
    client_tls_secret: pulumi.Input[str]
    trusted_ca_config_map: pulumi.Input[str] | None
    labels: dict[str, str]
    provider: keycloak.Provider | None = None
    rotation: Rotation = NO_ROTATION
    """The gateway's counters: ``consoleCookie`` replaces the cookie's bytes; it, ``ca`` and
    ``clientCertificate`` roll the console's pod (:func:`components.rotation.pod_annotations`)."""


def console_labels(labels: dict[str, str]) -> dict[str, str]:
    return {**labels, "app.kubernetes.io/component": "console", **selector_labels()}


def selector_labels() -> dict[str, str]:
    return {"app.kubernetes.io/name": "openshell", "app.kubernetes.io/instance": NAME}

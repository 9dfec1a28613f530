"""The console pod's two containers, as wire-format data: upstream's OpenShell dashboard and
the oauth2-proxy sidecar in front of it (``buildConsoleDeployment``'s env variables, ports,
probes and mounts), with the gateway's restricted container security."""

from __future__ import annotations

from typing import Any

import pulumi

from components import naming, trusted_ca
from components.console_types import (
    CALLBACK_PATH,
    CLIENT_SECRET_KEY,
    COOKIE_SECRET_KEY,
    DASHBOARD_PORT,
    GATEWAY_CA_DIR,
    GATEWAY_CLIENT_DIR,
    OIDC_CA_PATH,
    PROXY_PORT,
    ConsoleArgs,
    console_url,
)
from components.deployment import RESTRICTED_CONTAINER_SECURITY_CONTEXT
from components.identity_types import ADMIN_ROLE, PKCE_METHOD, ROLES_CLAIM, USER_ROLE


def pull_policy(image: str) -> str:
    """``IfNotPresent`` for an image pinned by digest (it cannot change; upstream's policy),
    ``Always`` for a tag, which can move (the gateway's reason, ``components.deployment``)."""
    return "IfNotPresent" if "@" in image else "Always"


def _env(name: str, value: pulumi.Input[str]) -> dict[str, Any]:
    return {"name": name, "value": value}


def _secret_env(name: str, secret: pulumi.Input[str], key: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"secretKeyRef": {"name": secret, "key": key}}}


# Upstream's requests and memory limit; a CPU limit as well, which the policy pack requires of
# every container (policy/hypershell_policies/pods.py).
RESOURCES = {
    "requests": {"cpu": "10m", "memory": "64Mi"},
    "limits": {"cpu": "200m", "memory": "128Mi"},
}


def dashboard_container(args: ConsoleArgs) -> dict[str, Any]:
    """The dashboard: it dials the gateway's gRPC port with the gateway's client certificate
    and trusts the headers the proxy sets."""
    image = args.settings.dashboard_image
    return {
        "name": "dashboard",
        "image": image,
        "imagePullPolicy": pull_policy(image),
        "env": [
            _env("PORT", str(DASHBOARD_PORT)),
            _env(
                "OPENSHELL_GATEWAY_URL",
                f"grpcs://{naming.service_fqdn(args.namespace)}:{naming.GRPC_PORT}",
            ),
            _env("GATEWAY_CA_CERT", f"{GATEWAY_CA_DIR}/ca.crt"),
            _env("GATEWAY_CLIENT_CERT", f"{GATEWAY_CLIENT_DIR}/tls.crt"),
            _env("GATEWAY_CLIENT_KEY", f"{GATEWAY_CLIENT_DIR}/tls.key"),
            _env("AUTH_DISABLED", "false"),
            _env("AUTH_TOKEN_HEADER", "X-Forwarded-Access-Token"),
            _env("AUTH_USER_HEADER", "X-Forwarded-User"),
            _env("ADMIN_ROLE", "openshell-admin"),
            _env("LOGOUT_URL", "/oauth2/sign_out"),
        ],
        "ports": [{"name": "dashboard", "containerPort": DASHBOARD_PORT, "protocol": "TCP"}],
        "readinessProbe": {
            "tcpSocket": {"port": DASHBOARD_PORT},
            "initialDelaySeconds": 5,
            "periodSeconds": 10,
        },
        "livenessProbe": {
            "tcpSocket": {"port": DASHBOARD_PORT},
            "initialDelaySeconds": 10,
            "periodSeconds": 20,
        },
        "volumeMounts": [
            {"name": "gateway-ca", "mountPath": GATEWAY_CA_DIR, "readOnly": True},
            {"name": "gateway-client", "mountPath": GATEWAY_CLIENT_DIR, "readOnly": True},
            {"name": "tmp-dashboard", "mountPath": "/tmp"},
        ],
        "securityContext": RESTRICTED_CONTAINER_SECURITY_CONTEXT,
        "resources": RESOURCES,
    }


def proxy_container(
    *, args: ConsoleArgs, client_id: str, secret: pulumi.Input[str]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The oauth2-proxy sidecar, reading its client and cookie secrets from ``secret``, and
    the volumes it needs beyond the pod's own (the OIDC trusted CA bundle, when there is one)."""
    settings = args.settings
    url = console_url(settings.exposure)
    exposed = settings.exposure.host is not None
    proxy_env = [
        _env("OAUTH2_PROXY_PROVIDER", "oidc"),
        _env("OAUTH2_PROXY_OIDC_ISSUER_URL", args.issuer),
        _env("OAUTH2_PROXY_CLIENT_ID", client_id),
        _secret_env("OAUTH2_PROXY_CLIENT_SECRET", secret, CLIENT_SECRET_KEY),
        _secret_env("OAUTH2_PROXY_COOKIE_SECRET", secret, COOKIE_SECRET_KEY),
        _env("OAUTH2_PROXY_CODE_CHALLENGE_METHOD", PKCE_METHOD),
        _env("OAUTH2_PROXY_REDIRECT_URL", url + CALLBACK_PATH),
        _env("OAUTH2_PROXY_UPSTREAMS", f"http://127.0.0.1:{DASHBOARD_PORT}"),
        _env("OAUTH2_PROXY_HTTP_ADDRESS", f"0.0.0.0:{PROXY_PORT}"),
        _env("OAUTH2_PROXY_REVERSE_PROXY", "true"),
        _env("OAUTH2_PROXY_PASS_ACCESS_TOKEN", "true"),
        _env("OAUTH2_PROXY_PASS_USER_HEADERS", "true"),
        _env("OAUTH2_PROXY_SKIP_PROVIDER_BUTTON", "true"),
        # Secure cookies need HTTPS; through a port-forward the browser speaks plain HTTP
        # to localhost (the tunnel to the API server is TLS).
        _env("OAUTH2_PROXY_COOKIE_SECURE", "true" if exposed else "false"),
        _env("OAUTH2_PROXY_COOKIE_REFRESH", "2m"),
        _env("OAUTH2_PROXY_EMAIL_DOMAINS", "*"),
        _env("OAUTH2_PROXY_SCOPE", "openid profile email roles"),
        # Only holders of one of the gateway's roles get in (components.console's docstring).
        _env("OAUTH2_PROXY_OIDC_GROUPS_CLAIM", ROLES_CLAIM),
        _env("OAUTH2_PROXY_ALLOWED_GROUPS", f"{ADMIN_ROLE},{USER_ROLE}"),
    ]
    proxy_mounts: list[dict[str, Any]] = [{"name": "tmp-proxy", "mountPath": "/tmp"}]
    volumes: list[dict[str, Any]] = []
    if args.trusted_ca_config_map is not None:
        proxy_env.append(_env("OAUTH2_PROXY_PROVIDER_CA_FILES", OIDC_CA_PATH))
        proxy_mounts.append(
            {
                "name": "oidc-trusted-ca",
                "mountPath": OIDC_CA_PATH,
                "subPath": trusted_ca.KEY,
                "readOnly": True,
            }
        )
        volumes.append(
            {
                "name": "oidc-trusted-ca",
                "configMap": {
                    "name": args.trusted_ca_config_map,
                    "items": [{"key": trusted_ca.KEY, "path": trusted_ca.KEY}],
                },
            }
        )
    proxy = {
        "name": "oauth2-proxy",
        "image": settings.proxy_image,
        "imagePullPolicy": pull_policy(settings.proxy_image),
        "env": proxy_env,
        "ports": [{"name": "http", "containerPort": PROXY_PORT, "protocol": "TCP"}],
        "readinessProbe": {
            "httpGet": {"path": "/ready", "port": PROXY_PORT},
            "initialDelaySeconds": 5,
            "periodSeconds": 10,
        },
        "livenessProbe": {
            "httpGet": {"path": "/ping", "port": PROXY_PORT},
            "initialDelaySeconds": 10,
            "periodSeconds": 20,
        },
        "volumeMounts": proxy_mounts,
        "securityContext": RESTRICTED_CONTAINER_SECURITY_CONTEXT,
        "resources": RESOURCES,
    }
    return proxy, volumes

"""``gateway.toml`` from typed data (docs/upstream-differences.md, "3. gateway.toml is
rendered from data").

Upstream fills a template by string replacement and appends tables at the end of the file
(with the quirk that appended keys land in the wrong table). Here the document is a nested
mapping written by a TOML library, so every value is escaped and every key is where it belongs.
Keys and values are upstream's (``manifests/gateway/configmap.yaml``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import tomli_w

from components import credentials as creds
from components import naming
from components.credentials import DEFAULT_CREDENTIALS, GatewayCredentials

CONFIG_DIR = "/etc/openshell"
CONFIG_FILE = "gateway.toml"
JWT_DIR = "/etc/openshell-jwt"
TLS_DIR = "/etc/openshell-tls/server"


def gateway_config(
    *,
    namespace: str,
    sandbox_image: str,
    supervisor_image: str,
    server_sans: Sequence[str],
    credentials: GatewayCredentials = DEFAULT_CREDENTIALS,
) -> dict[str, Any]:
    """The gateway's configuration as data, in upstream's table and key order.

    ``credentials`` picks the credential driver (``components.credentials``): the KEK's
    ``credential_storage`` table, or ``credential_drivers`` in ``[openshell.gateway]`` and the
    driver's own ``[openshell.credential_drivers.<driver>]`` table."""
    return {
        "openshell": {
            "version": 1,
            "gateway": {
                "bind_address": f"0.0.0.0:{naming.GRPC_PORT}",
                "health_bind_address": f"0.0.0.0:{naming.HEALTH_PORT}",
                "metrics_bind_address": f"0.0.0.0:{naming.METRICS_PORT}",
                "log_level": "info",
                "sandbox_namespace": namespace,
                "default_image": sandbox_image,
                "supervisor_image": supervisor_image,
                "client_tls_secret_name": naming.CLIENT_TLS_SECRET,
                "enable_loopback_service_http": True,
                "policy_validation_failure_mode": "fail_closed",
                "server_sans": list(server_sans),
                "tls": {
                    "cert_path": f"{TLS_DIR}/tls.crt",
                    "key_path": f"{TLS_DIR}/tls.key",
                },
                **creds.gateway_keys(credentials),
                "auth": {"allow_unauthenticated_users": False},
                "gateway_jwt": {
                    "signing_key_path": f"{JWT_DIR}/signing.pem",
                    "public_key_path": f"{JWT_DIR}/public.pem",
                    "kid_path": f"{JWT_DIR}/kid",
                    "gateway_id": naming.GATEWAY,
                    "ttl_secs": 3600,
                },
            },
            "drivers": {
                "kubernetes": {
                    "grpc_endpoint": f"https://{naming.service_fqdn(namespace)}:{naming.GRPC_PORT}",
                    "service_account_name": naming.SANDBOX_SA,
                    "supervisor_sideload_method": "image-volume",
                    "sa_token_ttl_secs": 3600,
                    "app_armor_profile": "Unconfined",
                    "topology": "combined",
                    "sidecar": {"proxy_uid": 1337, "process_binary_aware_network_policy": False},
                },
            },
            **creds.driver_tables(credentials),
        },
    }


def render_gateway_toml(config: dict[str, Any]) -> str:
    """Serialise the configuration; the TOML writer does all quoting and escaping."""
    return tomli_w.dumps(config)


# --- sign-in: ``[openshell.gateway.oidc]`` --------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class OidcSettings:
    """What the gateway trusts to sign people in (upstream's persisted ``oidc``)."""

    issuer: str
    """An https URL: tokens' ``iss``; the gateway fetches its JWKS from there."""
    audience: str
    """Tokens' ``aud`` (the Keycloak client id, or the declaration's)."""
    jwks_ttl_secs: int = 3600
    roles_claim: str | None = None
    admin_role: str | None = None
    user_role: str | None = None
    scopes_claim: str | None = None


def oidc_table(settings: OidcSettings) -> dict[str, Any]:
    """The ``[openshell.gateway.oidc]`` table: upstream's keys, the optional ones only when
    set (``ApplyConfigOverrides``), every value escaped by the TOML writer."""
    table: dict[str, Any] = {
        "issuer": settings.issuer,
        "audience": settings.audience,
        "jwks_ttl_secs": settings.jwks_ttl_secs,
    }
    for key, value in (
        ("roles_claim", settings.roles_claim),
        ("admin_role", settings.admin_role),
        ("user_role", settings.user_role),
        ("scopes_claim", settings.scopes_claim),
    ):
        if value is not None:
            table[key] = value
    return table


def with_oidc(config: dict[str, Any], settings: OidcSettings | None) -> dict[str, Any]:
    """``config`` with the OIDC table under ``openshell.gateway`` (a copy; unchanged for None).
    Upstream also forces ``allow_unauthenticated_users`` to false: it is false already."""
    if settings is None:
        return config
    gateway = {**config["openshell"]["gateway"], "oidc": oidc_table(settings)}
    return {**config, "openshell": {**config["openshell"], "gateway": gateway}}

"""The HyperShell gateway policies, importable without the Pulumi CLI.

``POLICIES`` is the pack's whole content: ``policy/__main__.py`` builds the PolicyPack from it
and the tests run it against the offline render of every stack.
"""

from __future__ import annotations

from pulumi_policy import Policy

from .console import console_tls_only
from .credentials import no_plaintext_credentials
from .database import postgresql_verify_full
from .identity import exposed_gateway_has_issuer, keycloak_public_client
from .images import images_pinned
from .network import route_passthrough, server_cert_covers_host, tenant_default_deny
from .pods import allowed_images, pod_security
from .vault import vault_address_https

PACK_NAME = "hypershell-gateways"

POLICIES: tuple[Policy, ...] = (
    pod_security,
    allowed_images,
    images_pinned,
    postgresql_verify_full,
    no_plaintext_credentials,
    tenant_default_deny,
    route_passthrough,
    server_cert_covers_host,
    vault_address_https,
    keycloak_public_client,
    exposed_gateway_has_issuer,
    console_tls_only,
)

__all__ = ["PACK_NAME", "POLICIES"]

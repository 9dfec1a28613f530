"""Per-tenant PKI with pulumi-tls (replaces upstream's cert-manager objects and certgen Job)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_tls as tls
from pulumi_kubernetes.core.v1 import Secret

from components import naming, tokens
from components.metadata import metadata
from components.rotation import NO_ROTATION, Rotation, rotated_name
from components.wire import wire

CA_VALIDITY_HOURS = 10 * 365 * 24
LEAF_VALIDITY_HOURS = 365 * 24
# A refresh inside the last 30 days marks the leaf ready for renewal; the next `up` reissues it.
LEAF_EARLY_RENEWAL_HOURS = 30 * 24


@dataclass(frozen=True, kw_only=True)
class PkiArgs:
    namespace: pulumi.Input[str]
    """Tenant namespace the Secrets go into."""
    server_dns_names: Sequence[str]
    """SANs of the server certificate: the service names, plus the external host if exposed."""
    labels: dict[str, str]
    """Labels for the Secrets."""
    rotation: Rotation = NO_ROTATION
    """The counters of ``ca``, ``serverCertificate`` and ``clientCertificate``: raised, that
    key is new (its logical name carries the counter: :mod:`components.rotation`), and so is
    every request and certificate made from it."""


def _ecdsa_key(name: str, parent: pulumi.Resource) -> tls.PrivateKey:
    return tls.PrivateKey(
        name, algorithm="ECDSA", ecdsa_curve="P256", opts=pulumi.ResourceOptions(parent=parent)
    )


def _kid(public_key_pem: str) -> str:
    return hashlib.sha256(public_key_pem.encode()).hexdigest()[:16]


class Pki(pulumi.ComponentResource):
    """Creates: CA key and self-signed CA; server and client keys, requests and certificates
    signed by the CA; a JWT signing key; Secrets ``openshell-server-tls``,
    ``openshell-client-tls`` (tls.crt, tls.key, ca.crt) and ``openshell-gateway-jwt-keys``
    (signing.pem, public.pem, kid)."""

    ca_cert_pem: pulumi.Output[str]
    server_cert_pem: pulumi.Output[str]
    server_tls_secret: pulumi.Output[str]
    jwt_secret: pulumi.Output[str]

    def __init__(self, name: str, args: PkiArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(tokens.PKI, name, None, opts)
        child = pulumi.ResourceOptions(parent=self)

        counters = args.rotation
        ca_key = _ecdsa_key(rotated_name(f"{name}-ca-key", counters.ca), self)
        ca = tls.SelfSignedCert(
            f"{name}-ca",
            private_key_pem=ca_key.private_key_pem,
            is_ca_certificate=True,
            subject={"common_name": naming.CA_COMMON_NAME, "organization": "HyperShell"},
            validity_period_hours=CA_VALIDITY_HOURS,
            allowed_uses=["cert_signing", "crl_signing", "digital_signature"],
            opts=child,
        )

        def leaf(
            suffix: str,
            uses: list[str],
            *,
            common_name: str | None,
            dns_names: Sequence[str],
            counter: int,
        ) -> tuple[tls.PrivateKey, tls.LocallySignedCert]:
            key = _ecdsa_key(rotated_name(f"{name}-{suffix}-key", counter), self)
            request = tls.CertRequest(
                f"{name}-{suffix}-csr",
                private_key_pem=key.private_key_pem,
                subject={"common_name": common_name} if common_name else None,
                dns_names=list(dns_names) or None,
                opts=child,
            )
            cert = tls.LocallySignedCert(
                f"{name}-{suffix}-cert",
                cert_request_pem=request.cert_request_pem,
                ca_private_key_pem=ca_key.private_key_pem,
                ca_cert_pem=ca.cert_pem,
                validity_period_hours=LEAF_VALIDITY_HOURS,
                early_renewal_hours=LEAF_EARLY_RENEWAL_HOURS,
                allowed_uses=uses,
                opts=child,
            )
            return key, cert

        server_key, server = leaf(
            "server",
            ["digital_signature", "key_encipherment", "server_auth"],
            common_name=None,
            dns_names=args.server_dns_names,
            counter=counters.server_certificate,
        )
        client_key, client = leaf(
            "client",
            ["digital_signature", "key_encipherment", "client_auth"],
            common_name=naming.CLIENT_CERT_COMMON_NAME,
            dns_names=(),
            counter=counters.client_certificate,
        )

        def tls_secret(
            suffix: str, secret_name: str, key: tls.PrivateKey, cert: tls.LocallySignedCert
        ) -> Secret:
            return Secret(
                f"{name}-{suffix}-tls",
                metadata=wire(metadata(secret_name, args.labels, namespace=args.namespace)),
                type="kubernetes.io/tls",
                string_data={
                    "tls.crt": cert.cert_pem,
                    "tls.key": key.private_key_pem,
                    "ca.crt": ca.cert_pem,
                },
                opts=child,
            )

        server_secret = tls_secret("server", naming.SERVER_TLS_SECRET, server_key, server)
        client_secret = tls_secret("client", naming.CLIENT_TLS_SECRET, client_key, client)

        jwt_key = _ecdsa_key(f"{name}-jwt-key", self)
        jwt_secret = Secret(
            f"{name}-jwt-keys",
            metadata=wire(metadata(naming.JWT_SECRET, args.labels, namespace=args.namespace)),
            type="Opaque",
            string_data={
                "signing.pem": jwt_key.private_key_pem_pkcs8,
                "public.pem": jwt_key.public_key_pem,
                "kid": jwt_key.public_key_pem.apply(_kid),
            },
            opts=child,
        )

        self.ca_cert_pem = ca.cert_pem
        self.server_cert_pem = server.cert_pem
        self.server_tls_secret = server_secret.metadata.name
        self.jwt_secret = jwt_secret.metadata.name
        self.client_tls_secret = client_secret.metadata.name
        self.register_outputs({"ca_cert_pem": self.ca_cert_pem})

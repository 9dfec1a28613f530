"""Stand-in ``pulumi-resource-tls``: keys and certificates really made (``cryptography``).

What each type does follows hashicorp/terraform-provider-tls (the provider pulumi-tls 5.6.2
bridges), ``internal/provider/``:

- ``resource_private_key.go`` ``Create``: the key in PEM (``EC PRIVATE KEY`` for ECDSA, ``RSA
  PRIVATE KEY``, PKCS#8 for ED25519), PKCS#8 PEM, OpenSSH PEM (empty for P224), the public key
  in PEM and OpenSSH form and its MD5/SHA256 fingerprints (``common_key.go``
  ``setPublicKeyAttributes``; the id is the SHA1 of the public key PEM, hex); defaults
  ``ecdsa_curve = P224``, ``rsa_bits = 2048``. Read, Update and Delete do nothing.
- ``common_cert.go`` ``createCertificate``: validity from now for ``validity_period_hours``,
  a random 128-bit serial (the id, decimal), key usages and extended key usages from
  ``allowed_uses``, ``is_ca_certificate`` with a subject key id, ``set_subject_key_id``;
  ``validity_start_time``/``validity_end_time`` in RFC 3339.
  ``modifyStateIfCertificateReadyForRenewal`` (Read, so ``refresh``) sets
  ``ready_for_renewal`` once ``validity_end_time - early_renewal_hours`` has passed, and
  ``modifyPlanIfCertificateReadyForRenewal`` then plans a replacement.
- ``resource_cert_request.go``: a CSR signed by the key, with the subject and SANs.
- ``resource_locally_signed_cert.go``: the request's subject and SANs, issued by the CA.
- ``early_renewal_hours`` is the one input a certificate updates in place (every other one
  replaces it: ``gatewayctl.diff.rules.forces_new``).
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import secrets
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from e2e.providers.base import Kind, ProviderError, Values, run

CURVES: dict[str, ec.EllipticCurve] = {
    "P224": ec.SECP224R1(),
    "P256": ec.SECP256R1(),
    "P384": ec.SECP384R1(),
    "P521": ec.SECP521R1(),
}
KEY_USAGES = {
    "digital_signature": "digital_signature",
    "content_commitment": "content_commitment",
    "key_encipherment": "key_encipherment",
    "data_encipherment": "data_encipherment",
    "key_agreement": "key_agreement",
    "cert_signing": "key_cert_sign",
    "crl_signing": "crl_sign",
    "encipher_only": "encipher_only",
    "decipher_only": "decipher_only",
}
EXTENDED_KEY_USAGES = {
    "any_extended": ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE,
    "server_auth": ExtendedKeyUsageOID.SERVER_AUTH,
    "client_auth": ExtendedKeyUsageOID.CLIENT_AUTH,
    "code_signing": ExtendedKeyUsageOID.CODE_SIGNING,
    "email_protection": ExtendedKeyUsageOID.EMAIL_PROTECTION,
    "timestamping": ExtendedKeyUsageOID.TIME_STAMPING,
    "ocsp_signing": ExtendedKeyUsageOID.OCSP_SIGNING,
}
SUBJECT_FIELDS = {
    "commonName": NameOID.COMMON_NAME,
    "organization": NameOID.ORGANIZATION_NAME,
    "organizationalUnit": NameOID.ORGANIZATIONAL_UNIT_NAME,
    "locality": NameOID.LOCALITY_NAME,
    "province": NameOID.STATE_OR_PROVINCE_NAME,
    "country": NameOID.COUNTRY_NAME,
    "postalCode": NameOID.POSTAL_CODE,
    "serialNumber": NameOID.SERIAL_NUMBER,
}
PEM = serialization.Encoding.PEM


def now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC).replace(microsecond=0)


def rfc3339(moment: datetime.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def algorithm_of(key: Any) -> str:
    if isinstance(key, (ec.EllipticCurvePrivateKey, ec.EllipticCurvePublicKey)):
        return "ECDSA"
    if isinstance(key, (rsa.RSAPrivateKey, rsa.RSAPublicKey)):
        return "RSA"
    return "ED25519"


def load_key(pem: str) -> Any:
    try:
        return serialization.load_pem_private_key(pem.encode(), password=None)
    except ValueError as error:
        raise ProviderError(f"failed to decode the private key PEM: {error}") from None


class PrivateKey(Kind):
    def create(self, inputs: Values) -> tuple[str, Values]:
        algorithm = inputs["algorithm"]
        key: Any
        if algorithm == "ECDSA":
            key = ec.generate_private_key(CURVES[inputs["ecdsaCurve"]])
            traditional = key.private_bytes(
                PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
            )
        elif algorithm == "RSA":
            key = rsa.generate_private_key(65537, int(inputs["rsaBits"]))
            traditional = key.private_bytes(
                PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
            )
        elif algorithm == "ED25519":
            key = ed25519.Ed25519PrivateKey.generate()
            traditional = key.private_bytes(
                PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        else:
            raise ProviderError(f'Key Algorithm "{algorithm}" is not supported')
        pkcs8 = key.private_bytes(
            PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        public = key.public_key()
        public_pem = public.public_bytes(PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        openssh_ok = not (algorithm == "ECDSA" and inputs["ecdsaCurve"] == "P224")
        outputs: Values = {
            **inputs,
            "privateKeyPem": traditional.decode(),
            "privateKeyPemPkcs8": pkcs8.decode(),
            "publicKeyPem": public_pem.decode(),
            "privateKeyOpenssh": "",
            "publicKeyOpenssh": "",
            "publicKeyFingerprintMd5": "",
            "publicKeyFingerprintSha256": "",
        }
        if openssh_ok:
            ssh_public = public.public_bytes(
                serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
            )
            blob = base64.b64decode(ssh_public.split()[1])
            md5 = hashlib.md5(blob, usedforsecurity=False).hexdigest()
            sha256 = base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")
            outputs |= {
                "privateKeyOpenssh": key.private_bytes(
                    PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()
                ).decode(),
                "publicKeyOpenssh": ssh_public.decode() + "\n",
                "publicKeyFingerprintMd5": ":".join(md5[i : i + 2] for i in range(0, 32, 2)),
                "publicKeyFingerprintSha256": f"SHA256:{sha256}",
            }
        return hashlib.sha1(public_pem, usedforsecurity=False).hexdigest(), outputs


def subject_name(subject: Any) -> x509.Name:
    attributes = [
        x509.NameAttribute(oid, str(subject[k]))
        for k, oid in SUBJECT_FIELDS.items()
        if isinstance(subject, dict) and subject.get(k)
    ]
    return x509.Name(attributes)


def sans(inputs: Values) -> list[x509.GeneralName]:
    return [x509.DNSName(n) for n in inputs.get("dnsNames") or []]


def certificate(
    inputs: Values,
    *,
    subject: x509.Name,
    public: Any,
    names: list[x509.GeneralName],
    issuer: x509.Name,
    signer: Any,
    issuer_key_id: bytes | None,
) -> tuple[str, Values]:
    start = now()
    end = start + datetime.timedelta(hours=int(inputs["validityPeriodHours"]))
    serial = secrets.randbits(128)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public)
        .serial_number(serial or 1)
        .not_valid_before(start)
        .not_valid_after(end)
    )
    uses = list(inputs.get("allowedUses") or [])
    flags = {v: False for v in KEY_USAGES.values()}
    for use in uses:
        if use in KEY_USAGES:
            flags[KEY_USAGES[use]] = True
    if any(flags.values()):
        builder = builder.add_extension(x509.KeyUsage(**flags), critical=True)
    extended = [EXTENDED_KEY_USAGES[u] for u in uses if u in EXTENDED_KEY_USAGES]
    if extended:
        builder = builder.add_extension(x509.ExtendedKeyUsage(extended), critical=False)
    is_ca = bool(inputs.get("isCaCertificate"))
    max_path = int(inputs.get("maxPathLength") or 0)
    builder = builder.add_extension(
        x509.BasicConstraints(ca=is_ca, path_length=max_path if is_ca and max_path > 0 else None),
        critical=True,
    )
    if is_ca or inputs.get("setSubjectKeyId"):
        builder = builder.add_extension(
            x509.SubjectKeyIdentifier.from_public_key(public), critical=False
        )
    if issuer_key_id and inputs.get("setAuthorityKeyId"):
        builder = builder.add_extension(
            x509.AuthorityKeyIdentifier(issuer_key_id, None, None), critical=False
        )
    if names:
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    algorithm = None if isinstance(signer, ed25519.Ed25519PrivateKey) else hashes.SHA256()
    cert = builder.sign(signer, algorithm)
    return str(serial or 1), {
        **inputs,
        "certPem": cert.public_bytes(PEM).decode(),
        "validityStartTime": rfc3339(start),
        "validityEndTime": rfc3339(end),
        "readyForRenewal": ready_for_renewal(rfc3339(end), inputs),
    }


def ready_for_renewal(end: str, inputs: Values) -> bool:
    """``common_cert.go``: the early renewal time (end - early_renewal_hours) has passed."""
    moment = datetime.datetime.strptime(end, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.UTC)
    hours = int(inputs.get("earlyRenewalHours") or 0)
    return moment - datetime.timedelta(hours=hours) <= now()


class Certificate(Kind):
    """Self-signed and locally signed certificates share Read and renewal."""

    def read(self, id_: str, state: Values) -> Values | None:
        end = state.get("validityEndTime")
        return (
            {**state, "readyForRenewal": True} if end and ready_for_renewal(end, state) else state
        )

    def extra_replaces(self, olds: Values, news: Values) -> list[str]:
        end = olds.get("validityEndTime")
        due = olds.get("readyForRenewal") or (isinstance(end, str) and ready_for_renewal(end, news))
        return ["readyForRenewal"] if due else []

    def update(self, id_: str, olds: Values, news: Values) -> Values:
        state = {**olds, **news}
        return {**state, "readyForRenewal": ready_for_renewal(state["validityEndTime"], state)}


class SelfSignedCert(Certificate):
    def create(self, inputs: Values) -> tuple[str, Values]:
        key = load_key(inputs["privateKeyPem"])
        name = subject_name(inputs.get("subject"))
        if inputs.get("isCaCertificate") and not list(name):
            raise ProviderError(
                "Invalid Certificate Subject: Must contain at least one Distinguished Name"
                " when creating Certificate Authority (CA)"
            )
        public = key.public_key()
        id_, outputs = certificate(
            inputs,
            subject=name,
            public=public,
            names=sans(inputs),
            issuer=name,
            signer=key,
            issuer_key_id=x509.SubjectKeyIdentifier.from_public_key(public).digest,
        )
        return id_, {**outputs, "keyAlgorithm": algorithm_of(key)}


class CertRequest(Kind):
    def create(self, inputs: Values) -> tuple[str, Values]:
        key = load_key(inputs["privateKeyPem"])
        builder = x509.CertificateSigningRequestBuilder().subject_name(
            subject_name(inputs.get("subject"))
        )
        if sans(inputs):
            builder = builder.add_extension(x509.SubjectAlternativeName(sans(inputs)), False)
        algorithm = None if isinstance(key, ed25519.Ed25519PrivateKey) else hashes.SHA256()
        pem = builder.sign(key, algorithm).public_bytes(PEM).decode()
        outputs = {**inputs, "certRequestPem": pem, "keyAlgorithm": algorithm_of(key)}
        return hashlib.sha1(pem.encode(), usedforsecurity=False).hexdigest(), outputs


class LocallySignedCert(Certificate):
    def create(self, inputs: Values) -> tuple[str, Values]:
        request = x509.load_pem_x509_csr(inputs["certRequestPem"].encode())
        ca = x509.load_pem_x509_certificate(inputs["caCertPem"].encode())
        ca_key = load_key(inputs["caPrivateKeyPem"])
        try:
            names = list(
                request.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
            )
        except x509.ExtensionNotFound:
            names = []
        try:
            ca_key_id = ca.extensions.get_extension_for_class(
                x509.SubjectKeyIdentifier
            ).value.digest
        except x509.ExtensionNotFound:
            ca_key_id = None
        id_, outputs = certificate(
            inputs,
            subject=request.subject,
            public=request.public_key(),
            names=names,
            issuer=ca.subject,
            signer=ca_key,
            issuer_key_id=ca_key_id,
        )
        return id_, {**outputs, "caKeyAlgorithm": algorithm_of(ca_key)}


CERT_OUTPUTS = ("certPem", "readyForRenewal", "validityEndTime", "validityStartTime")
KINDS: tuple[Kind, ...] = (
    PrivateKey(
        "tls:index/privateKey:PrivateKey",
        inputs=frozenset({"algorithm", "ecdsaCurve", "rsaBits"}),
        required=frozenset({"algorithm"}),
        defaults={"ecdsaCurve": "P224", "rsaBits": 2048},
        outputs=(
            "privateKeyOpenssh",
            "privateKeyPem",
            "privateKeyPemPkcs8",
            "publicKeyFingerprintMd5",
            "publicKeyFingerprintSha256",
            "publicKeyOpenssh",
            "publicKeyPem",
        ),
        secret_outputs=frozenset({"privateKeyOpenssh", "privateKeyPem", "privateKeyPemPkcs8"}),
    ),
    SelfSignedCert(
        "tls:index/selfSignedCert:SelfSignedCert",
        inputs=frozenset(
            {
                "allowedUses",
                "dnsNames",
                "earlyRenewalHours",
                "ipAddresses",
                "isCaCertificate",
                "maxPathLength",
                "privateKeyPem",
                "setAuthorityKeyId",
                "setSubjectKeyId",
                "subject",
                "uris",
                "validityPeriodHours",
            }
        ),
        required=frozenset({"allowedUses", "validityPeriodHours"}),
        defaults={
            "earlyRenewalHours": 0,
            "isCaCertificate": False,
            "setSubjectKeyId": False,
            "setAuthorityKeyId": False,
        },
        outputs=(*CERT_OUTPUTS, "keyAlgorithm"),
        secret_inputs=frozenset({"privateKeyPem"}),
    ),
    CertRequest(
        "tls:index/certRequest:CertRequest",
        inputs=frozenset({"dnsNames", "ipAddresses", "privateKeyPem", "subject", "uris"}),
        outputs=("certRequestPem", "keyAlgorithm"),
        secret_inputs=frozenset({"privateKeyPem"}),
    ),
    LocallySignedCert(
        "tls:index/locallySignedCert:LocallySignedCert",
        inputs=frozenset(
            {
                "allowedUses",
                "caCertPem",
                "caPrivateKeyPem",
                "certRequestPem",
                "earlyRenewalHours",
                "isCaCertificate",
                "maxPathLength",
                "setSubjectKeyId",
                "validityPeriodHours",
            }
        ),
        required=frozenset({"allowedUses", "caCertPem", "certRequestPem", "validityPeriodHours"}),
        defaults={"earlyRenewalHours": 0, "isCaCertificate": False, "setSubjectKeyId": False},
        outputs=(*CERT_OUTPUTS, "caKeyAlgorithm"),
        secret_inputs=frozenset({"caPrivateKeyPem"}),
    ),
)


def main() -> None:
    from e2e.providers import plugin_version

    run("tls", plugin_version("tls"), KINDS)

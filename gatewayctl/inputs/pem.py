"""CA bundles: PEM files that hold certificates and nothing else.

Every CA bundle the program reads (a cluster's ``trustedCaBundleFile``, published as ConfigMap
``gateway-trusted-ca`` in every tenant namespace; ``identity.keycloak.caBundleFile``, handed to
the Keycloak provider; ``database.sslRootCert``, handed to the PostgreSQL provider) is parsed
here as PEM (RFC 7468): each block is ``-----BEGIN <label>-----``, base64, ``-----END
<label>-----``, and every block must be a ``CERTIFICATE``. Any other block (a ``PRIVATE KEY``
pasted in beside the certificates, a CRL, a ``TRUSTED CERTIFICATE``) is refused, since the
text of a bundle is published whole. Go's ``crypto/x509`` ``CertPool.AppendCertsFromPEM``,
which the gateway's TLS client uses, reads only ``CERTIFICATE`` blocks too (it skips the
others). Explanatory text between blocks (RFC 7468 §5.2, as in the Mozilla bundles) is allowed,
but not a broken boundary line.
"""

from __future__ import annotations

import base64
import binascii
import re

CERTIFICATE = "CERTIFICATE"
_BOUNDARY = re.compile(r"-----(?P<kind>BEGIN|END) (?P<label>[^\r\n]*?)-----")
NO_CERTIFICATE = "holds no PEM certificate (-----BEGIN CERTIFICATE-----)"


def _base64(lines: list[str]) -> bool:
    try:
        base64.b64decode("".join(lines).encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        return False
    return bool(lines)


def bundle_problem(data: bytes) -> str | None:
    """Why ``data`` is not a bundle of PEM certificates and only that, or None.

    The message follows the file's name in a problem (``'certs/ca.pem' holds ...``); it
    never quotes the file's content, only its block labels and line numbers."""
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        return "is not PEM text (ASCII)"
    certificates = 0
    inside: tuple[str, int] | None = None  # (label, line) of the block being read
    body: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        match = _BOUNDARY.fullmatch(stripped)
        if match is None:
            if "-----BEGIN" in line or "-----END" in line:
                return f"has a broken PEM boundary at line {number}"
            if inside is not None:
                body.append(stripped)
            continue
        kind, label = match["kind"], match["label"]
        if kind == "BEGIN":
            if inside is not None:
                return f"has a BEGIN at line {number} inside the block of line {inside[1]}"
            if label != CERTIFICATE:
                return (
                    f"holds a {label!r} block at line {number}; a CA bundle holds certificates"
                    " only (its whole text is published): remove that block"
                )
            inside, body = (label, number), []
            continue
        if inside is None or label != inside[0]:
            return f"has an END {label} at line {number} that closes no BEGIN {label}"
        if not _base64(body):
            return f"has a certificate at line {inside[1]} that is not base64"
        certificates += 1
        inside = None
    if inside is not None:
        return f"has a BEGIN {inside[0]} at line {inside[1]} that no END closes"
    if not certificates:
        return NO_CERTIFICATE
    return None

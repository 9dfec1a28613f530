"""Render fidelity for the values the stand-in providers really made (``e2e/providers``).

The offline render holds placeholders where only a provider can compute a value (a PEM body
marked ``OFFLINE-PLACEHOLDER``, ``gatewayctl.engine.offline``) and values derived from them
(the pod template's config hash). Live, the stand-ins made real keys and certificates, so
such a field is compared for what can be compared: the same PEM blocks, each of which parses
(a certificate is one, a CA certificate is the tenant CA the server's TLS Secret carries), and
a config hash that is the hash of the live config, certificates and database URI.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Mapping
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives.serialization import load_pem_public_key

from components import naming
from components.gateway_config import CONFIG_FILE
from components.trusted_ca import CONFIG_MAP as TRUSTED_CA_CONFIG_MAP
from components.trusted_ca import KEY as TRUSTED_CA_KEY
from components.workload import config_hash
from gatewayctl.engine.placeholders import PLACEHOLDER_MARK

BLOCK = re.compile(r"-----BEGIN ([A-Z ]+)-----\n.*?\n-----END \1-----\n?", re.S)
Live = Mapping[tuple[str, str, str, str], Any]

PARSERS: dict[str, Callable[[bytes], object]] = {
    "CERTIFICATE": x509.load_pem_x509_certificate,
    "CERTIFICATE REQUEST": x509.load_pem_x509_csr,
    "PUBLIC KEY": load_pem_public_key,
}


def is_made(obj: Mapping[str, Any], field: tuple[Any, ...], value: Any) -> bool:
    """A rendered value only a provider can make, or one derived from such values."""
    if isinstance(value, str) and PLACEHOLDER_MARK in value:
        return True
    return obj["kind"] == "Deployment" and field[-1] == naming.CONFIG_HASH_ANNOTATION


def _data(live: Live, kind: str, namespace: str, name: str, key: str) -> str:
    obj = live.get(("v1", kind, namespace, name)) or {}
    if kind == "Secret":
        return base64.b64decode(obj.get("data", {}).get(key, "")).decode()
    return str(obj.get("data", {}).get(key, ""))


def problem(
    obj: Mapping[str, Any], field: tuple[Any, ...], value: Any, found: Any, live: Live
) -> str | None:
    """What is wrong with live value ``found`` for rendered ``value`` (:func:`is_made`)."""
    namespace = obj["metadata"].get("namespace", "")
    if obj["kind"] == "Deployment":
        secret = naming.SERVER_TLS_SECRET
        certs = [_data(live, "Secret", namespace, secret, k) for k in ("ca.crt", "tls.crt")]
        uri = _data(live, "Secret", namespace, naming.DB_SECRET, "uri")
        toml = _data(live, "ConfigMap", namespace, naming.CONFIG_MAP, CONFIG_FILE)
        bundle = _data(live, "ConfigMap", namespace, TRUSTED_CA_CONFIG_MAP, TRUSTED_CA_KEY)
        expected = config_hash(toml, certs, uri, *([bundle] if bundle else []))
        return (
            None if found == expected else f"config hash {found!r}, of the live files {expected!r}"
        )
    if not isinstance(found, str):
        return f"live {found!r} is not PEM"
    labels = [m.group(1) for m in BLOCK.finditer(value)]
    live_labels = [m.group(1) for m in BLOCK.finditer(found)]
    if labels != live_labels:
        return f"PEM blocks {live_labels} live, {labels} rendered"
    for match, label in zip(BLOCK.finditer(found), live_labels, strict=True):
        parse = PARSERS.get(label)
        if parse is None:
            return f"a {label} block in a non-secret field"
        try:
            parse(match.group(0).encode())
        except ValueError as error:
            return f"live {label} does not parse: {error}"
    if obj["kind"] == "ConfigMap" and obj["metadata"]["name"] == naming.BACKEND_CA_CONFIG_MAP:
        ca = _data(live, "Secret", namespace, naming.SERVER_TLS_SECRET, "ca.crt")
        if found != ca:
            return "the backend CA is not the CA of the server's TLS Secret"
    return None

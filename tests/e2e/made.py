"""Render fidelity for the values the stand-in providers really made (``e2e/providers``).

The offline render holds placeholders where only a provider can compute a value (a PEM body
marked ``OFFLINE-PLACEHOLDER``, ``gatewayctl.engine.offline``) and values derived from them
(the pod template's config hash). Live, the stand-ins made real keys and certificates, so
such a field is compared for what can be compared: the same PEM blocks, each of which parses
(a certificate is one, a CA certificate is the tenant CA the server's TLS Secret carries), and
a config hash that is the hash of the live config, certificates and database URI.

The database credentials Secret carries a password the random stand-in drew and the
postgresql stand-in set on the role (redacted in the render): :func:`credentials_problem`
checks that it logs in as the Secret's ``user`` to its ``dbname`` on the lane's server (so the
role and database exist and the password is the role's), that ``user`` and ``dbname`` are the
same ``gw_<name>`` (and the rendered values where the render shows them: it redacts the
Secret's data), and that the ``uri`` carries the same password.
"""

from __future__ import annotations

import base64
import re
import urllib.parse
from collections.abc import Callable, Mapping
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives.serialization import load_pem_public_key

from components import naming
from components.credentials import KEK_KEY
from components.gateway_config import CONFIG_FILE
from components.trusted_ca import CONFIG_MAP as TRUSTED_CA_CONFIG_MAP
from components.trusted_ca import KEY as TRUSTED_CA_KEY
from components.workload import config_hash
from gatewayctl.engine.placeholders import PLACEHOLDER_MARK
from gatewayctl.inputs.secrets import REDACTED

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
    kind: str = obj["kind"]
    return kind == "Deployment" and field[-1] == naming.CONFIG_HASH_ANNOTATION


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
        kek = _data(live, "Secret", namespace, naming.KEK_SECRET, KEK_KEY)
        expected = config_hash(
            toml, certs, uri, *([bundle] if bundle else []), *([kek] if kek else [])
        )
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


def credentials_problem(
    rendered: Mapping[str, Any], live: Mapping[str, str], login: Callable[[str, str, str], str]
) -> str | None:
    """What is wrong with the live database credentials Secret (``live``: its data decoded)
    for the rendered one; ``login(user, password, dbname)`` answers ``user@dbname`` when the
    server lets the session in."""
    data = rendered["stringData"]
    for key in ("user", "dbname", "host", "port"):
        # The render redacts the whole Secret's data; a value it shows must be the live one.
        if data[key] != REDACTED and live.get(key) != data[key]:
            return f"{key} {live.get(key)!r} live, {data[key]!r} rendered"
    if live["user"] != live["dbname"]:  # gw_<name>: the role and its database
        return f"user {live['user']!r} and dbname {live['dbname']!r} differ"
    session = login(live["user"], live["password"], live["dbname"])
    if session != f"{live['user']}@{live['dbname']}":
        return f"the password does not log in as {live['user']} to {live['dbname']}: {session}"
    if urllib.parse.quote(live["password"], safe="") not in live.get("uri", ""):
        return "the uri carries another password"
    return None

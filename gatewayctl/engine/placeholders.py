"""The offline engine's stand-ins for what only a provider or a server can answer: stable,
name-derived outputs (a PEM body marked ``OFFLINE-PLACEHOLDER``, a password of the asked
length) and the Keycloak look-ups (:func:`invoke_answer`). ``gatewayctl.engine.offline``
answers registrations and invokes with them."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

PLACEHOLDER_MARK = "T0ZGTElORS1QTEFDRUhPTERFUg"
"""Base64 of ``OFFLINE-PLACEHOLDER``: the body of every placeholder PEM starts with it."""


def _pem(kind: str, seed: str) -> str:
    body = hashlib.sha256(f"{kind}:{seed}".encode()).hexdigest()
    return f"-----BEGIN {kind}-----\n{PLACEHOLDER_MARK}{body}\n-----END {kind}-----\n"


def _fixed(seed: str, length: int) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()[:length]


def placeholder_outputs(type_: str, name: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """Stable stand-ins for outputs that only a provider can compute."""
    if type_ == "tls:index/privateKey:PrivateKey":
        return {
            "privateKeyPem": _pem("EC PRIVATE KEY", name),
            "privateKeyPemPkcs8": _pem("PRIVATE KEY", name),
            "privateKeyOpenssh": _pem("OPENSSH PRIVATE KEY", name),
            "publicKeyPem": _pem("PUBLIC KEY", name),
            "publicKeyOpenssh": f"ecdsa-sha2-nistp256 {_fixed(name, 40)}\n",
            "publicKeyFingerprintMd5": _fixed("md5" + name, 32),
            "publicKeyFingerprintSha256": "SHA256:" + _fixed("sha256" + name, 43),
        }
    if type_ in {
        "tls:index/selfSignedCert:SelfSignedCert",
        "tls:index/locallySignedCert:LocallySignedCert",
    }:
        return {"certPem": _pem("CERTIFICATE", name), "readyForRenewal": False}
    if type_ == "tls:index/certRequest:CertRequest":
        return {"certRequestPem": _pem("CERTIFICATE REQUEST", name)}
    if type_ == "random:index/randomPassword:RandomPassword":
        return {"result": _fixed("password" + name, int(inputs.get("length", 32)))}
    if type_ == "random:index/randomBytes:RandomBytes":
        return {"base64": _fixed("bytes" + name, 44), "hex": _fixed("hex" + name, 64)}
    if type_ == "keycloak:openid/client:Client" and inputs.get("accessType") == "CONFIDENTIAL":
        # Keycloak generates a confidential client's secret and the provider reads it back
        # (components.console); a secret output of the provider's schema.
        return {"clientSecret": _fixed("client-secret" + name, 32)}
    return {}


GET_GROUP = "keycloak:index/getGroup:getGroup"
GET_USER = "keycloak:index/getUser:getUser"


def keycloak_id(kind: str, realm: str, name: str) -> str:
    """A stable UUID-shaped stand-in for the id Keycloak gave a group or user."""
    digest = hashlib.sha256(f"{kind}\0{realm}\0{name}".encode()).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


def invoke_answer(token: str, args: Mapping[str, Any]) -> dict[str, Any] | None:
    """What the offline engine answers an invoke with, or None when it has no answer.

    The Keycloak lookups (``get_group`` by ``groupPath``, ``get_user`` by ``username``) answer
    as if the principal exists, with an id derived from its realm and name: the offline render
    cannot see the realm, and a preview against the real server fails for one that does not
    exist (``components.identity``).
    """
    realm = str(args.get("realmId", ""))
    if token == GET_GROUP:
        path = str(args.get("groupPath") or args.get("name") or "")
        return {
            "id": keycloak_id("group", realm, path),
            "realmId": realm,
            "name": path.rsplit("/", 1)[-1],
            "path": path,
            "parentId": "",
            "attributes": {},
        }
    if token == GET_USER:
        username = str(args.get("username", ""))
        return {
            "id": keycloak_id("user", realm, username),
            "realmId": realm,
            "username": username,
            "enabled": True,
        }
    return None

"""A copy of the project made ready to deploy: CA bundles present, ``secure:`` values that have
the shape of real ciphertext (the committed samples hold placeholders and no bundles)."""

from __future__ import annotations

import base64
import hashlib
import shutil
from pathlib import Path

from tests.support import ROOT

PLACEHOLDER = "v1:cmVwbGFjZS1tZS13aXRoLXB1bHVtaS1jb25maWctc2V0LS1zZWNyZXQ="
BUNDLES = ("certs/aws-rds-global-bundle.pem", "certs/ibm-databases-for-postgresql-ca.pem")


def random_bytes(seed: str, size: int) -> bytes:
    """Deterministic bytes that look random (ciphertext, nonces, certificate bodies)."""
    out = b""
    counter = 0
    while len(out) < size:
        out += hashlib.sha256(f"{seed}/{counter}".encode()).digest()
        counter += 1
    return out[:size]


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def passphrase_ciphertext(seed: str, sealed: int = 40) -> str:
    """The passphrase/KMS providers' shape: ``v1:<12-byte nonce>:<sealed>``."""
    return f"v1:{b64(random_bytes(seed + 'n', 12))}:{b64(random_bytes(seed, sealed))}"


def service_ciphertext(seed: str, sealed: int = 48) -> str:
    """Pulumi Cloud's shape: base64 of the sealed bytes."""
    return b64(random_bytes(seed, sealed))


def pem_bundle(seed: str, certificates: int = 2) -> str:
    blocks = []
    for i in range(certificates):
        body = b64(random_bytes(f"{seed}/{i}", 600))
        lines = [body[j : j + 64] for j in range(0, len(body), 64)]
        blocks.append("-----BEGIN CERTIFICATE-----\n" + "\n".join(lines))
        blocks[-1] += "\n-----END CERTIFICATE-----\n"
    return "".join(blocks)


def copy_project(destination: Path) -> Path:
    """The stack files, declarations, operator settings and CLI version file of the project."""
    destination.mkdir(parents=True, exist_ok=True)
    for stack_file in ROOT.glob("Pulumi*.yaml"):
        shutil.copy(stack_file, destination / stack_file.name)
    for source in ROOT.glob("gateways/*/*.yaml"):
        target = destination / source.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, target)
    (destination / "deploy").mkdir(exist_ok=True)
    shutil.copy(ROOT / "deploy" / "operator.yaml", destination / "deploy" / "operator.yaml")
    shutil.copy(ROOT / ".pulumi.version", destination / ".pulumi.version")
    return destination


def make_ready(root: Path) -> Path:
    """Put the CA bundles in place and replace every placeholder with ciphertext."""
    for relative in BUNDLES:
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(pem_bundle(relative), encoding="utf-8")
    for stack_file in root.glob("Pulumi.*.yaml"):
        text = stack_file.read_text(encoding="utf-8")
        count = text.count(PLACEHOLDER)
        for i in range(count):
            text = text.replace(PLACEHOLDER, passphrase_ciphertext(f"{stack_file.name}/{i}"), 1)
        stack_file.write_text(text, encoding="utf-8")
    return root


def ready_project(destination: Path) -> Path:
    return make_ready(copy_project(destination))

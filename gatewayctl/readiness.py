"""Deploy readiness: what a real ``pulumi up`` needs that the offline render does not.

The offline render never connects to a database and never decrypts a secret, so it renders a
stack whose CA bundles are absent and whose ``secure:`` values are stand-ins. ``pulumi up``
would apply the Kubernetes objects first and fail at the first PostgreSQL role, halfway.
``validate --deploy`` (in ``deploy.yml`` and ``drift.yml``) and ``operator-manifests`` (for the
stacks it hands the operator) refuse such a stack before anything is applied.

Checked, per stack: every ``database.sslRootCert`` is a PEM certificate bundle inside the
project; no ``secure:`` value of the stack file is a placeholder (:func:`is_placeholder`); each
cluster has its ``clusterSecrets`` entry (the structural validation already requires it).
Problems name the file and the key, never a value.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from gatewayctl.errors import InvalidInputError, Problem
from gatewayctl.loader import PROJECT, LoadedStack, read_yaml_mapping
from gatewayctl.render import Prepared, is_secure

CA_BUNDLE_LIMIT = 4 * 1024 * 1024
"""A CA bundle larger than this is not one (AWS's global RDS bundle is about 160 KB)."""

SEALED_MIN_BYTES = 16
"""AES-GCM appends a 16-byte tag, so real ciphertext is never shorter."""

NONCE_BYTES = 12
"""The AES-GCM nonce of the passphrase and cloud KMS secrets providers."""

_PRINTABLE = frozenset(range(0x20, 0x7F)) | {0x09, 0x0A, 0x0D}
_PEM_CERTIFICATE = re.compile(
    rb"-----BEGIN CERTIFICATE-----\s*\n([A-Za-z0-9+/=\s]+?)\n-----END CERTIFICATE-----"
)

README_CA = 'README, "CA bundles for the admin connection"'


def _b64(text: str) -> bytes | None:
    """Standard base64 with padding, as Go's ``base64.StdEncoding`` writes it; else None."""
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        return None


def _sealed(data: bytes | None) -> bool:
    """Bytes that can be ciphertext: long enough, and not printable text."""
    return (
        data is not None
        and len(data) >= SEALED_MIN_BYTES
        and not all(byte in _PRINTABLE for byte in data)
    )


def is_placeholder(ciphertext: Any) -> bool:
    """True unless ``ciphertext`` (the value of a ``secure:`` key) has the shape real ciphertext
    has. Pulumi's secrets managers write one of two shapes:

    - ``v1:<nonce>:<sealed>``, the passphrase and cloud KMS providers (``symmetricCrypter`` in
      pulumi/pulumi ``sdk/go/common/resource/config/crypt.go``): both parts standard base64, the
      nonce 12 bytes, the sealed part at least 16 bytes (the AES-GCM tag);
    - ``<sealed>``, Pulumi Cloud (``serviceCrypter`` in pulumi/pulumi
      ``pkg/secrets/service/manager.go``): standard base64 of at least 16 bytes.

    In both the sealed bytes are random, so they are not all printable text (ASCII 0x20-0x7E,
    tab, CR, LF): 16 random bytes are all printable with a probability of about 2e-7.
    Everything else is a placeholder: not a string, empty, any other shape, invalid base64, too
    short, or base64 of text. The committed samples' ``v1:cmVw...`` (base64 of
    "replace-me-with-pulumi-config-set--secret" after ``v1:``, two parts) is one.
    """
    if not isinstance(ciphertext, str):
        return True
    parts = ciphertext.split(":")
    if len(parts) == 3 and parts[0] == "v1":
        nonce = _b64(parts[1])
        return nonce is None or len(nonce) != NONCE_BYTES or not _sealed(_b64(parts[2]))
    if len(parts) == 1:
        return not _sealed(_b64(ciphertext))
    return True


def _secure_leaves(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    """``(key path, ciphertext)`` of every ``secure:`` value under ``value``."""
    if is_secure(value):
        yield path, value["secure"]
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _secure_leaves(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _secure_leaves(item, f"{path}.{index}")


def placeholder_problems(root: Path, stack: str) -> list[Problem]:
    """Every ``secure:`` value of ``Pulumi.<stack>.yaml`` (any namespace, any depth) that is a
    placeholder. A file that cannot be read is reported by the stack's validation, not here."""
    display = f"Pulumi.{stack}.yaml"
    try:
        document = read_yaml_mapping(root / display, display)
    except InvalidInputError:
        return []
    config = document.get("config")
    if not isinstance(config, dict):
        return []
    problems = []
    for key, value in config.items():
        for path, ciphertext in _secure_leaves(value, str(key)):
            if is_placeholder(ciphertext):
                setting = path.removeprefix(f"{PROJECT}:")
                problems.append(
                    Problem(
                        display,
                        path,
                        "`secure:` value is a placeholder, not ciphertext; set the real value with"
                        f" `pulumi config set --secret --path '{setting}'`",
                    )
                )
    return problems


def _bundle_problem(root: Path, relative: str) -> str | None:
    """What keeps ``relative`` from being the CA bundle ``pulumi up`` verifies with, if anything."""
    # A link out of the project is refused by the loader for every command (gatewayctl.loader).
    shown = repr(relative)
    path = root / relative
    if path.is_symlink() and not path.exists():
        return f"{shown} is a broken symbolic link"
    if not path.exists():
        return (
            f"{shown} is not in the project, and `pulumi up` verifies the admin connection with"
            f" it: add the database server's public CA bundle ({README_CA})"
        )
    if not path.is_file():
        return f"{shown} is not a regular file"
    try:
        size = path.stat().st_size
        if size > CA_BUNDLE_LIMIT:
            return f"{shown} is larger than {CA_BUNDLE_LIMIT // (1024 * 1024)} MiB; not a CA bundle"
        data = path.read_bytes()
    except OSError as error:
        return f"{shown} cannot be read: {error.strerror}"
    blocks = _PEM_CERTIFICATE.findall(data)
    if not blocks or any(_b64(b"".join(block.split()).decode("ascii")) is None for block in blocks):
        return f"{shown} holds no PEM certificate (-----BEGIN CERTIFICATE-----); not a CA bundle"
    return None


def ca_bundle_problems(root: Path, loaded: LoadedStack) -> list[Problem]:
    """Every cluster's ``database.sslRootCert`` that is not a PEM bundle inside the project."""
    problems = []
    for name, cluster in sorted(loaded.config.clusters.items()):
        relative = cluster.database.ssl_root_cert
        if relative is None:
            continue  # the system trust store
        wrong = _bundle_problem(root, relative)
        if wrong is not None:
            field = f"{PROJECT}:clusters.{name}.database.sslRootCert"
            problems.append(Problem(loaded.config_path, field, wrong))
    return problems


Prepare = Callable[[Path, Sequence[str]], list[Prepared]]
"""Validates the named stacks with every rule (the CLI's), raising InvalidInputError."""


def check(root: Path, stacks: Sequence[str], prepare: Prepare) -> list[Prepared]:
    """Validate ``stacks`` with ``prepare`` and check that each is ready for ``pulumi up``.

    Raises InvalidInputError with every problem at once: the validation's, the placeholders'
    (found even when the stack is otherwise invalid) and the CA bundles' (of valid stacks).
    """
    problems = [problem for stack in stacks for problem in placeholder_problems(root, stack)]
    try:
        prepared = prepare(root, stacks)
    except InvalidInputError as error:
        raise InvalidInputError([*error.problems, *problems]) from None
    problems += [p for item in prepared for p in ca_bundle_problems(root, item.loaded)]
    if problems:
        raise InvalidInputError(problems)
    return prepared

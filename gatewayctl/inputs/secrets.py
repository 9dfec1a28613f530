"""Secrets of a stack file: the cluster-secrets model, ``secure:`` values, plaintext values.

- **Cluster secrets** (``clusterSecrets``: per cluster, the database admin password and an
  optional kubeconfig) are validated together before any resource is registered.
- **``secure:`` values** are ciphertext the offline render cannot decrypt: it substitutes
  :data:`SECURE_PLACEHOLDER` for each; ``validate --deploy`` refuses those that are no
  ciphertext at all (:func:`is_placeholder`, the committed samples' stand-ins).
- **Plaintext** ``clusterSecrets`` of a committed stack file are listed for the diff, which
  scrubs them from its report (the notes about them: ``gatewayctl.resolve.preparation``).
- :data:`REDACTED` is the marker of every secret value of a render
  (``gatewayctl.engine.redaction`` redacts and scrubs).

The stack file is read with the strict YAML reader (:mod:`gatewayctl.inputs.yamlfile`), as every
other file. No message quotes a secret value.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from gatewayctl.errors import InvalidInputError, Problem, from_validation_error
from gatewayctl.inputs.model import Model
from gatewayctl.inputs.stackfile import PROJECT, stack_file
from gatewayctl.inputs.yamlfile import SECRETS_KEY, read_yaml_mapping

REDACTED = "[secret]"
SECURE_PLACEHOLDER = "offline-placeholder-for-secure-value"

SEALED_MIN_BYTES = 16
"""AES-GCM appends a 16-byte tag, so real ciphertext is never shorter."""

NONCE_BYTES = 12
"""The AES-GCM nonce of the passphrase and cloud KMS secrets providers."""

_PRINTABLE = frozenset(range(0x20, 0x7F)) | {0x09, 0x0A, 0x0D}

SecretPath = tuple[str, ...]
"""Keys from a config value down to one of its leaves."""


# --- cluster secrets ------------------------------------------------------------------------


class ClusterSecrets(Model):
    """Per-cluster secrets, read only from the secret config object ``clusterSecrets``."""

    db_admin_password: str = Field(alias="dbAdminPassword", min_length=1)
    """The password of ``database.adminUser``, the role Pulumi logs in as."""
    kubeconfig: str | None = None
    """A whole kubeconfig for the cluster's Kubernetes provider (with ``kubeconfigContext``);
    None: the kubeconfig of the machine running Pulumi."""
    keycloak_admin_client_secret: str | None = Field(
        None, alias="keycloakAdminClientSecret", min_length=1
    )
    """The secret of ``identity.keycloak.adminClientId``; required when the cluster has one."""


KEYCLOAK_SECRET = "keycloakAdminClientSecret"
DB_ADMIN_PASSWORD = "dbAdminPassword"


def set_secret(stack: str, path: str) -> str:
    """The command that sets the secret at ``path`` of ``stack``'s config. It names the stack:
    without ``--stack`` it would write whichever stack is selected."""
    return f"`pulumi config set --stack {stack} --secret --path '{path}'`"


def all_cluster_secrets(
    raw: Any,
    clusters: Iterable[str],
    config_path: str,
    keycloak: Iterable[str] = (),
    *,
    stack: str,
) -> dict[str, ClusterSecrets]:
    """Every cluster's secrets, validated together; every problem raised at once.

    The program calls this before it registers any resource: a problem found later, inside an
    ``apply``, would reach the Pulumi CLI as an unhandled exception with a traceback.
    """
    field = f"{PROJECT}:{SECRETS_KEY}"
    if raw is not None and not isinstance(raw, Mapping):
        raise InvalidInputError(
            [
                Problem(
                    config_path,
                    field,
                    "expected a mapping of cluster name to its secrets, found"
                    f" {type(raw).__name__}",
                )
            ]
        )
    names = list(clusters)
    found: dict[str, ClusterSecrets] = {}
    problems: list[Problem] = []
    for cluster in names:
        try:
            found[cluster] = cluster_secrets(raw, cluster, config_path, stack=stack)
        except InvalidInputError as error:
            problems += error.problems
    problems += [
        Problem(
            config_path,
            f"{field}.{cluster}.{KEYCLOAK_SECRET}",
            "missing: the cluster has identity.keycloak; set the admin client's secret with"
            f" {set_secret(stack, f'{SECRETS_KEY}.{cluster}.{KEYCLOAK_SECRET}')}",
        )
        for cluster in sorted(set(keycloak))
        if cluster in found and found[cluster].keycloak_admin_client_secret is None
    ]
    if isinstance(raw, Mapping):
        problems += [
            Problem(config_path, f"{field}.{name}", "no such cluster in this stack")
            for name in sorted(set(raw) - set(names), key=str)
        ]
    if problems:
        raise InvalidInputError(problems)
    return found


def cluster_secrets(raw: Any, cluster: str, config_path: str, *, stack: str) -> ClusterSecrets:
    """Pick and validate one cluster's secrets; problems name the config path and field."""
    field = f"{PROJECT}:{SECRETS_KEY}.{cluster}"
    if not isinstance(raw, Mapping) or cluster not in raw:
        command = set_secret(stack, f"{SECRETS_KEY}.{cluster}.{DB_ADMIN_PASSWORD}")
        raise InvalidInputError([Problem(config_path, field, f"missing; set it with {command}")])
    try:
        return ClusterSecrets.model_validate(raw[cluster], by_alias=True)
    except ValidationError as error:
        raise InvalidInputError(
            from_validation_error(
                config_path, error, prefix=field, model=ClusterSecrets, document=raw[cluster]
            )
        ) from None


# --- `secure:` values ------------------------------------------------------------------------


def is_secure(value: Any) -> bool:
    """True for a ``secure:`` config value (ciphertext; placeholders in committed stacks)."""
    return isinstance(value, dict) and set(value) == {"secure"}


def replace_secure(value: Any, counter: list[int]) -> Any:
    """Substitute a placeholder for every ``secure:`` leaf (ciphertext cannot be decrypted here)."""
    if isinstance(value, dict):
        if is_secure(value):
            counter[0] += 1
            return SECURE_PLACEHOLDER
        return {k: replace_secure(v, counter) for k, v in value.items()}
    if isinstance(value, list):
        return [replace_secure(v, counter) for v in value]
    return value


def standard_b64(text: str) -> bytes | None:
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
        nonce = standard_b64(parts[1])
        return nonce is None or len(nonce) != NONCE_BYTES or not _sealed(standard_b64(parts[2]))
    if len(parts) == 1:
        return not _sealed(standard_b64(ciphertext))
    return True


def _leaves(value: Any, path: SecretPath) -> Iterator[tuple[SecretPath, Any]]:
    """``(key path, value)`` of every leaf under ``value``: a scalar, or a whole ``secure:``
    value (ciphertext is one value, not a mapping to walk)."""
    if isinstance(value, dict) and not is_secure(value):
        for key, item in value.items():
            yield from _leaves(item, (*path, str(key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, (*path, str(index)))
    else:
        yield path, value


def _config(root: Path, stack: str) -> dict[Any, Any] | None:
    """The ``config`` mapping of ``Pulumi.<stack>.yaml``, read with the strict reader; None for
    a file it refuses or one without a config mapping (the stack's validation reports those)."""
    display = stack_file(stack)
    try:
        document = read_yaml_mapping(root / display, display)
    except InvalidInputError:
        return None
    config = document.get("config")
    return config if isinstance(config, dict) else None


def secure_leaves(root: Path, stack: str) -> list[tuple[SecretPath, Any]]:
    """``(path, value)`` of every ``secure:`` value of ``Pulumi.<stack>.yaml`` (any namespace,
    any depth), the path starting at the config key; best effort: none from a file the strict
    reader refuses."""
    return [
        (keys, leaf)
        for key, value in (_config(root, stack) or {}).items()
        for keys, leaf in _leaves(value, (str(key),))
        if is_secure(leaf)
    ]


def placeholder_problems(root: Path, stack: str) -> list[Problem]:
    """Every ``secure:`` value of ``Pulumi.<stack>.yaml`` (any namespace, any depth) that is a
    placeholder. A file that cannot be read is reported by the stack's validation, not here."""
    problems = []
    for keys, leaf in secure_leaves(root, stack):
        if is_placeholder(leaf["secure"]):
            path = ".".join(keys)
            setting = path.removeprefix(f"{PROJECT}:")
            problems.append(
                Problem(
                    stack_file(stack),
                    path,
                    "`secure:` value is a placeholder, not ciphertext; set the real value with"
                    f" {set_secret(stack, setting)}",
                )
            )
    return problems


# --- plaintext values -----------------------------------------------------------------------


def plaintext_leaves(root: Path, stack: str) -> list[tuple[SecretPath, Any]]:
    """``(path, value)`` of every plaintext value under ``clusterSecrets`` of the stack file,
    for the diff to scrub from its report and to compare between its sides; never printed.

    Read with the strict reader, best effort: a file it refuses, or one without secrets, gives
    none. ``secure:`` values (ciphertext, or the committed placeholders) are not plaintext and
    are left out.
    """
    config, key = _config(root, stack), f"{PROJECT}:{SECRETS_KEY}"
    if config is None or key not in config:  # unreadable, or no secrets
        return []
    return [(path, value) for path, value in _leaves(config[key], ()) if not is_secure(value)]

"""Rotation by a reviewed change: one counter per secret (``spec.rotation``); raising one makes
the next ``up`` replace that secret, and everything made from it follows (docs/running.md,
"Rotating keys"). At 0 (the default) nothing is registered differently from a program without
counters, so no deployed stack changes.

How each counter reaches the engine, and why (the engine and providers are the judge):

- **random** (the database password, the KEK's and the console cookie's bytes): the counter is
  the ``keepers`` map, ``{"rotation": "<n>"}``, from 1 up (no keepers at 0).
  hashicorp/terraform-provider-random ``internal/provider/resource_password.go`` (schema v3:
  ``mapplanmodifiers.RequiresReplaceIfValuesNotNull``, ``internal/planmodifiers/map/
  mapplanmodifiers.go``: a null prior map and a config with a non-null value replaces) and
  ``resource_bytes.go`` (``mapplanmodifier.RequiresReplace``: any change replaces). So 0 -> 1
  replaces as 1 -> 2 does.
- **tls** keys (``tls.PrivateKey`` has no ``keepers``; its inputs, algorithm and curve, are the
  key's kind): the counter is in the key's logical name from 1 up (``<name>-r<n>``): the
  engine creates the new key, the certificates and requests made from it are replaced (their
  ``private_key_pem``/``ca_private_key_pem``/``cert_request_pem`` force a new resource:
  ``gatewayctl.diff.rules.forces_new``) and the old key is deleted last. Not the
  ``replacement_trigger`` option: the engine replaces on a trigger only when the old *and* the
  new one are set (pulumi/pulumi ``pkg/resource/deploy/step_generator.go``,
  ``shouldTriggerReplace``: "Nulls mean there is no replacement trigger"; measured with the
  v3.274.0 CLI: absent -> "1" kept the resource, "1" -> "2" replaced it), so a trigger set only
  from 1 up would never fire on the first rotation, and one set at 0 too would change every
  deployed stack's plan.
- the **KEK Secret** (create-only: ``ignore_changes`` on its data) is replaced with its bytes:
  the ``replace_with`` option names them from 1 up (step_generator.go: a resource is replaced
  when one in its ``ReplaceWith`` is; measured with the v3.274.0 CLI: the option added in the
  same ``up`` that replaces the bytes replaces the Secret).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Rotation:
    """The declaration's counters (``spec.rotation``), by the model's field names."""

    database_password: int = 0
    server_certificate: int = 0
    client_certificate: int = 0
    ca: int = 0
    kek: int = 0
    console_cookie: int = 0


NO_ROTATION = Rotation()
DECLARED_FIELDS: dict[str, str] = {
    "database_password": "databasePassword",
    "server_certificate": "serverCertificate",
    "client_certificate": "clientCertificate",
    "ca": "ca",
    "kek": "kek",
    "console_cookie": "consoleCookie",
}
"""Each counter's field of ``spec.rotation``, by its name here."""

ROTATION_ANNOTATION = "hypershell.redhat.io/rotation"
"""The console pod's annotation of the counters it reads at start (:func:`pod_annotations`)."""
ROTATION_KEEPER = "rotation"
"""The key of the ``keepers`` map that holds a counter."""
ROTATED_SUFFIX = "-r"
"""A rotated tls key's logical name: ``<name>-r<n>``."""


def keepers(counter: int) -> dict[str, str] | None:
    """The random resource's ``keepers`` for ``counter``: none at 0."""
    return {ROTATION_KEEPER: str(counter)} if counter > 0 else None


def rotated_name(name: str, counter: int) -> str:
    """A tls key's logical name for ``counter``: ``name`` at 0, ``<name>-r<n>`` after."""
    return f"{name}{ROTATED_SUFFIX}{counter}" if counter > 0 else name


def pod_annotations(counters: Rotation) -> dict[str, str] | None:
    """The console pod template's annotations: none while ``ca``, ``clientCertificate`` and
    ``consoleCookie`` are 0, else :data:`ROTATION_ANNOTATION` naming them, so that a raised one
    rolls the pod. oauth2-proxy reads its cookie secret from the environment at start, and the
    dashboard its client certificate and the gateway's CA; the console pod carries no hash of
    them (the gateway's pod does: ``components.workload.config_hash``)."""
    read = {
        "ca": counters.ca,
        "clientCertificate": counters.client_certificate,
        "consoleCookie": counters.console_cookie,
    }
    if not any(read.values()):
        return None
    return {ROTATION_ANNOTATION: ",".join(f"{k}={v}" for k, v in read.items())}

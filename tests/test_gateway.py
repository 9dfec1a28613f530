"""The declaration's models (``gatewayctl.inputs.gateway_declaration``): ``spec.credentials``
(issue 13), as
strict as every model, resolved to its driver's defaults, and a problem named at each bad field
without echoing a password.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from components.credentials import KubernetesSecretsCredentials, VaultCredentials
from gatewayctl.inputs.gateway_declaration import CredentialsSpec, GatewaySpec
from gatewayctl.inputs.model import Model
from tests.builders import cluster, write_gateway, write_stack
from tests.helpers import load, load_problems
from tests.hostile_helpers import run_cli, unlocated

# --- the declaration --------------------------------------------------------------------------


def test_the_credential_models_are_as_strict_as_every_model() -> None:
    # The same settings; its own json_schema_extra holds its per-driver rules in the schema.
    own = {k: v for k, v in CredentialsSpec.model_config.items() if k != "json_schema_extra"}
    assert own == Model.model_config
    assert GatewaySpec().credentials == CredentialsSpec(driver="kek")


def declared(tmp_path: Path, spec: dict[str, Any], **cluster_changes: Any) -> str:
    write_stack(tmp_path, clusters={"c1": cluster(**cluster_changes)})
    return write_gateway(tmp_path, "team-a", {"credentials": spec})


def test_resolved_defaults(tmp_path: Path) -> None:
    declared(
        tmp_path, {"driver": "vault", "vault": {"address": "https://v.example.com", "role": "r"}}
    )
    (gateway,) = load(tmp_path).gateways
    assert gateway.credentials == VaultCredentials(address="https://v.example.com", role="r")

    write_gateway(tmp_path, "team-a", {"credentials": {"driver": "kubernetes-secrets"}})
    (gateway,) = load(tmp_path).gateways
    assert gateway.credentials == KubernetesSecretsCredentials(namespace="openshell-team-a")


VAULT_OK = {"address": "https://vault.example.com", "role": "r"}
IDENTIFIER = "(a letter or digit, then letters, digits, '.', '_', '/' or '-')"
CASES: list[tuple[str, Any, str, str]] = [
    (
        "unknown driver",
        {"driver": "s3"},
        "driver",
        "Input should be 'kek', 'kubernetes-secrets' or 'vault'",
    ),
    (
        "driver not a string",
        {"driver": 1},
        "driver",
        "Input should be 'kek', 'kubernetes-secrets' or 'vault'",
    ),
    (
        "not a mapping",
        "vault",
        "",
        "Input should be a valid dictionary or instance of CredentialsSpec",
    ),
    ("unknown field", {"driver": "kek", "kek": {}}, "kek", "unknown field"),
    (
        "vault without its block",
        {"driver": "vault"},
        "vault",
        "required with driver 'vault' (address and role)",
    ),
    (
        "stray vault block",
        {"vault": VAULT_OK},
        "vault",
        "only with driver 'vault'; the driver is 'kek'",
    ),
    (
        "stray secrets block",
        {"driver": "vault", "vault": VAULT_OK, "kubernetesSecrets": {}},
        "kubernetesSecrets",
        "only with driver 'kubernetes-secrets'; the driver is 'vault'",
    ),
    (
        "missing role",
        {"driver": "vault", "vault": {"address": "https://v.example.com"}},
        "vault.role",
        "required field is missing",
    ),
    (
        "missing address",
        {"driver": "vault", "vault": {"role": "r"}},
        "vault.address",
        "required field is missing",
    ),
    (
        "address not a URL",
        {"driver": "vault", "vault": {**VAULT_OK, "address": "vault.example.com"}},
        "vault.address",
        "'vault.example.com' must be an http:// or https:// URL",
    ),
    (
        "address scheme",
        {"driver": "vault", "vault": {**VAULT_OK, "address": "ftp://v.example.com"}},
        "vault.address",
        "'ftp://v.example.com' must be an http:// or https:// URL",
    ),
    (
        "address without host",
        {"driver": "vault", "vault": {**VAULT_OK, "address": "https://:8200"}},
        "vault.address",
        "'https://:8200' has no host",
    ),
    (
        "address with a bad host",
        {"driver": "vault", "vault": {**VAULT_OK, "address": "https://vau;lt.example.com"}},
        "vault.address",
        "'https://vau;lt.example.com': the host is neither a DNS name nor an IP address",
    ),
    (
        "address with credentials",
        {"driver": "vault", "vault": {**VAULT_OK, "address": "https://u:hunter2@v.example.com"}},
        "vault.address",
        "must not include credentials (user:password@)",
    ),
    (
        "address with query",
        {"driver": "vault", "vault": {**VAULT_OK, "address": "https://v.example.com/?a=1"}},
        "vault.address",
        "'https://v.example.com/?[secret]' must not include a query or fragment",
    ),
    (
        "address with newline",
        {"driver": "vault", "vault": {**VAULT_OK, "address": "https://v.example.com\n[x]"}},
        "vault.address",
        "'https://v.example.com\\n[x]' contains whitespace, a control or a non-ASCII character",
    ),
    (
        "address bad port",
        {"driver": "vault", "vault": {**VAULT_OK, "address": "https://v.example.com:99999"}},
        "vault.address",
        "'https://v.example.com:99999' is not a URL: Port out of range 0-65535",
    ),
    (
        "address empty",
        {"driver": "vault", "vault": {**VAULT_OK, "address": ""}},
        "vault.address",
        "must not be empty",
    ),
    (
        "address not a string",
        {"driver": "vault", "vault": {**VAULT_OK, "address": 8200}},
        "vault.address",
        "Input should be a valid string",
    ),
    (
        "role empty",
        {"driver": "vault", "vault": {**VAULT_OK, "role": ""}},
        "vault.role",
        "must be 1-253 characters, got 0",
    ),
    (
        "role too long",
        {"driver": "vault", "vault": {**VAULT_OK, "role": "r" * 254}},
        "vault.role",
        "must be 1-253 characters, got 254",
    ),
    (
        "role quote",
        {"driver": "vault", "vault": {**VAULT_OK, "role": 'r"x'}},
        "vault.role",
        f"'r\"x' is not an identifier {IDENTIFIER}",
    ),
    (
        "role leading dash",
        {"driver": "vault", "vault": {**VAULT_OK, "role": "-r"}},
        "vault.role",
        f"'-r' is not an identifier {IDENTIFIER}",
    ),
    (
        "mount dot segment",
        {"driver": "vault", "vault": {**VAULT_OK, "mount": "kv/../x"}},
        "vault.mount",
        "'kv/../x' has a '.' or '..' path segment",
    ),
    (
        "mount trailing slash",
        {"driver": "vault", "vault": {**VAULT_OK, "mount": "kv/"}},
        "vault.mount",
        "'kv/' must not end with '/'",
    ),
    (
        "auth mount empty segment",
        {"driver": "vault", "vault": {**VAULT_OK, "kubernetesAuthMount": "a//b"}},
        "vault.kubernetesAuthMount",
        "'a//b' has an empty path segment ('//')",
    ),
    (
        "auth method",
        {"driver": "vault", "vault": {**VAULT_OK, "authMethod": "token_file"}},
        "vault.authMethod",
        "'token_file' is not supported; only 'kubernetes' (the gateway's Vault driver also knows"
        " 'token_file', which needs a Vault token file in the pod that nothing here provides)",
    ),
    (
        "timeout as text",
        {"driver": "vault", "vault": {**VAULT_OK, "timeoutSeconds": "30"}},
        "vault.timeoutSeconds",
        "Input should be a valid integer",
    ),
    (
        "timeout as bool",
        {"driver": "vault", "vault": {**VAULT_OK, "timeoutSeconds": True}},
        "vault.timeoutSeconds",
        "Input should be a valid integer",
    ),
    (
        "timeout zero",
        {"driver": "vault", "vault": {**VAULT_OK, "timeoutSeconds": 0}},
        "vault.timeoutSeconds",
        "Input should be greater than or equal to 1",
    ),
    (
        "timeout too long",
        {"driver": "vault", "vault": {**VAULT_OK, "timeoutSeconds": 3601}},
        "vault.timeoutSeconds",
        "Input should be less than or equal to 3600",
    ),
    (
        "vault unknown field",
        {"driver": "vault", "vault": {**VAULT_OK, "token": "x"}},
        "vault.token",
        "unknown field",
    ),
    (
        "namespace system",
        {"driver": "kubernetes-secrets", "kubernetesSecrets": {"namespace": "kube-system"}},
        "kubernetesSecrets.namespace",
        "'kube-system' is a system namespace; credentials need a tenant's own",
    ),
    (
        "namespace not a label",
        {"driver": "kubernetes-secrets", "kubernetesSecrets": {"namespace": "Creds"}},
        "kubernetesSecrets.namespace",
        "'Creds' is not a DNS-1123 label (lowercase a-z, 0-9, inner '-', at most 63)",
    ),
    (
        "namespace not a string",
        {"driver": "kubernetes-secrets", "kubernetesSecrets": {"namespace": ["a"]}},
        "kubernetesSecrets.namespace",
        "Input should be a valid string",
    ),
    (
        "secrets unknown field",
        {"driver": "kubernetes-secrets", "kubernetesSecrets": {"name": "a"}},
        "kubernetesSecrets.name",
        "unknown field",
    ),
]


@pytest.mark.parametrize(
    ("spec", "field", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_a_bad_credentials_field_is_named(
    tmp_path: Path, spec: Any, field: str, message: str
) -> None:
    source = declared(tmp_path, spec)
    path = "spec.credentials" + (f".{field}" if field else "")
    assert load_problems(tmp_path) == [(source, path, message)]


def test_the_cli_exits_2_writes_nothing_and_never_echoes_the_password(tmp_path: Path) -> None:
    out = tmp_path / "out"
    source = declared(
        tmp_path,
        {
            "driver": "vault",
            "vault": {
                "address": "https://u:hunter2@v.example.com",
                "role": "-r",
                "timeoutSeconds": "x",
            },
        },
    )
    validated = run_cli("--root", str(tmp_path), "validate", "test")
    rendered_ = run_cli("--root", str(tmp_path), "render", "test", "--out", str(out), "-q")

    assert (validated.code, rendered_.code) == (2, 2)
    assert unlocated(validated.err).splitlines() == [
        f"error: {source}: spec.credentials.vault.address: must not include credentials"
        " (user:password@)",
        f"error: {source}: spec.credentials.vault.role: '-r' is not an identifier {IDENTIFIER}",
        f"error: {source}: spec.credentials.vault.timeoutSeconds: Input should be a valid integer",
        "3 problem(s); nothing written",
    ]
    assert rendered_.err == validated.err
    assert "hunter2" not in validated.printed + rendered_.printed
    assert not out.exists()

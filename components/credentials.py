"""Where a gateway keeps the credentials its users store: the credential driver (issue 13).

Three drivers, one per gateway:

- ``kek`` (the default): the gateway encrypts credentials into its database with a
  key-encryption key from the create-only Secret ``openshell-gateway-credential-kek``, read from
  ``OPENSHELL_GATEWAY_CREDENTIAL_KEY_ENCRYPTION_KEY`` (``[openshell.gateway.credential_storage]``);
- ``kubernetes-secrets``: Secrets in a namespace (the tenant's unless set), through a Role there
  that allows what the driver does and nothing more;
- ``vault``: a HashiCorp Vault KV mount, logging in with the pod's projected ServiceAccount token.

With a driver, the KEK Secret, its env variable and ``credential_storage`` are gone, and
gateway.toml carries ``openshell.gateway.credential_drivers = ["<driver>"]`` and the table
``[openshell.credential_drivers.<driver>]``. Upstream (openshift-online/hypershell,
components/control-plane/internal/gateway/manifests.go, applyCredentialDriverToml) appends the
key at the end of the file, where it lands in the last table; here it is a key of the
``[openshell.gateway]`` table, where the gateway reads it (NVIDIA/OpenShell,
crates/openshell-server/src/config_file.rs, ``GatewayFileSection.credential_drivers``).

The pure checks here are upstream's validation (hypershell, internal/gateway/validation.go,
ValidateCredentialDriverConfig and validateIdentifier) plus what the gateway's own Vault driver
refuses at start (NVIDIA/OpenShell, crates/openshell-driver-vault/src/lib.rs, vault_address and
validate_secret_path), so a declaration the gateway would reject is rejected before ``up``.

The one declaration of the drivers: :data:`CredentialDriver` names each (the declaration's
``spec.credentials.driver``) and :data:`GatewayCredentials` holds the settings of each (its
``driver`` one of them). Every choice among the drivers is a ``match`` that ends in
``assert_never``, so a driver added here fails type checking at each place that must handle it
(tests/test_exhaustive.py names them).
"""

from __future__ import annotations

import ipaddress
import re
import urllib.parse
from dataclasses import dataclass
from typing import Any, Final, Literal, assert_never, get_args

from components.hostnames import check_dns_name

CredentialDriver = Literal["kek", "kubernetes-secrets", "vault"]
"""Where a gateway keeps its users' credentials (``spec.credentials.driver``)."""
DRIVERS: Final[tuple[CredentialDriver, ...]] = get_args(CredentialDriver)
KEK: Final = "kek"
KUBERNETES_SECRETS: Final = "kubernetes-secrets"
VAULT: Final = "vault"


def known_driver(name: object) -> CredentialDriver | None:
    """``name`` as a driver (a rendered ``gateway.toml`` names it), None when it names none."""
    return next((driver for driver in DRIVERS if driver == name), None)


KEK_ENV: Final = "OPENSHELL_GATEWAY_CREDENTIAL_KEY_ENCRYPTION_KEY"
KEK_KEY: Final = "key-encryption-key"
CREDENTIAL_SECRETS_ROLE: Final = "openshell-gateway-credential-secrets"
"""Role and RoleBinding of the kubernetes-secrets driver, in the credential namespace
(upstream's name: reconciler.go, reconcileCredentialSecretsRBAC)."""

CREDENTIAL_SECRETS_RULES: Final[list[dict[str, Any]]] = [
    {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "create", "patch", "delete"]}
]
"""What the kubernetes-secrets driver does with Secrets, and nothing more: it reads, creates,
patches and deletes Secrets by name and never lists or watches (NVIDIA/OpenShell,
crates/openshell-driver-kubernetes-secrets/src/lib.rs: ``Api::get``, ``create``, ``patch``,
``delete``); upstream grants exactly these verbs (reconcileCredentialSecretsRBAC)."""

SCAN_SUPPRESSION: Final = {
    "checkov.io/skip1": "CKV2_K8S_5=the kubernetes-secrets credential driver must read back the"
    " Secrets it writes under names it generates per credential, so its Role cannot name them"
    " (resourceNames); it reads only this namespace's Secrets (no list or watch), and the"
    " namespace is the gateway's own or one no other gateway uses"
}
"""checkov's CKV2_K8S_5 ("no ServiceAccount should be able to read all secrets") fails any
binding to a Role with secrets ``get`` and no ``resourceNames``; the driver's Role needs exactly
that, so its RoleBinding carries checkov's per-object suppression, with the reason, instead of a
scan-wide skip (checkov/kubernetes/kubernetes_utils.py: get_skipped_checks reads
``checkov.io/skip*`` annotations as ``<check>=<reason>``, split on ``=``, so the reason holds
none; create_check_result applies them to graph checks too)."""

VAULT_TOKEN_VOLUME: Final = "vault-sa-token"
VAULT_TOKEN_DIR: Final = "/var/run/secrets/vault"
VAULT_TOKEN_PATH: Final = f"{VAULT_TOKEN_DIR}/token"
VAULT_TOKEN_AUDIENCE: Final = "vault"
VAULT_TOKEN_SECONDS: Final = 3600
"""The projected token: audience ``vault``, 3600 s, at ``/var/run/secrets/vault/token``
(upstream, manifests.go, applyCredentialDriverDeploymentOverrides)."""

VAULT_DEFAULT_MOUNT: Final = "secret"
VAULT_DEFAULT_AUTH_METHOD: Final = "kubernetes"
VAULT_DEFAULT_KUBERNETES_AUTH_MOUNT: Final = "kubernetes"
VAULT_DEFAULT_TIMEOUT_SECONDS: Final = 30
VAULT_MAX_TIMEOUT_SECONDS: Final = VAULT_TOKEN_SECONDS
"""A Vault call waiting longer than the pod's Vault token lives cannot succeed with it."""
VAULT_AUTH_METHODS: Final = ("kubernetes",)
"""The auth methods a declaration can use. The gateway's Vault driver knows ``kubernetes`` and
``token_file``, and ``token_file`` needs a Vault token file in the pod (``token_path``) and
refuses ``role`` and ``kubernetes_auth_mount`` (openshell-driver-vault, from_table): nothing
here provides such a file, so only ``kubernetes`` would start."""

IDENTIFIER_MAX: Final = 253
_IDENTIFIER = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9._/-]*")
ADDRESS_MAX: Final = 2048


# --- checks ---------------------------------------------------------------------------------


def check_identifier(value: str) -> str:
    """Upstream's Vault identifier (role, mount, auth method, auth mount): 1-253 characters of
    ``[a-zA-Z0-9._/-]`` starting with a letter or digit (validateIdentifier)."""
    if not 1 <= len(value) <= IDENTIFIER_MAX:
        raise ValueError(f"must be 1-{IDENTIFIER_MAX} characters, got {len(value)}")
    if _IDENTIFIER.fullmatch(value) is None:
        raise ValueError(
            f"{value!r} is not an identifier (a letter or digit, then letters, digits,"
            " '.', '_', '/' or '-')"
        )
    return value


def check_vault_path(value: str) -> str:
    """A Vault mount path (``mount``, ``kubernetesAuthMount``): an identifier, and a relative
    path of non-empty segments other than ``.`` and ``..`` (the gateway's Vault driver:
    validate_secret_path)."""
    check_identifier(value)
    if value.endswith("/"):
        raise ValueError(f"{value!r} must not end with '/'")
    for segment in value.split("/"):
        if not segment:
            raise ValueError(f"{value!r} has an empty path segment ('//')")
        if segment in {".", ".."}:
            raise ValueError(f"{value!r} has a '.' or '..' path segment")
    return value


def check_auth_method(value: str) -> str:
    check_identifier(value)
    if value not in VAULT_AUTH_METHODS:
        raise ValueError(
            f"{value!r} is not supported; only 'kubernetes' (the gateway's Vault driver also"
            " knows 'token_file', which needs a Vault token file in the pod that nothing here"
            " provides)"
        )
    return value


def check_vault_address(value: str) -> str:
    """An absolute ``http`` or ``https`` URL whose host is a DNS name or an IP address: no
    credentials, query or fragment, no whitespace or control characters (upstream parses it
    with url.ParseRequestURI; the gateway's Vault driver refuses the rest: vault_address)."""
    if not value:
        raise ValueError("must not be empty")
    if len(value) > ADDRESS_MAX:
        raise ValueError(f"is {len(value):,} characters long; at most {ADDRESS_MAX}")
    if any(c.isspace() or not c.isprintable() for c in value) or not value.isascii():
        raise ValueError(f"{value!r} contains whitespace, a control or a non-ASCII character")
    try:
        url = urllib.parse.urlsplit(value)
        port = url.port
    except ValueError as error:
        raise ValueError(f"{value!r} is not a URL: {error}") from None
    if url.scheme not in {"http", "https"}:
        raise ValueError(f"{value!r} must be an http:// or https:// URL")
    if not url.hostname:
        raise ValueError(f"{value!r} has no host")
    if not _is_ip(url.hostname):
        try:
            check_dns_name(url.hostname)
        except ValueError:
            raise ValueError(
                f"{value!r}: the host is neither a DNS name nor an IP address"
            ) from None
    if url.username is not None or url.password is not None:
        raise ValueError("must not include credentials (user:password@)")
    if url.query or url.fragment or value.endswith(("?", "#")):
        raise ValueError(f"{value!r} must not include a query or fragment")
    if port == 0:
        raise ValueError(f"{value!r} has port 0")
    return value


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


# --- what the component receives ------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class KekCredentials:
    """The default: credentials encrypted into the gateway's database with the KEK Secret."""

    driver: Literal["kek"] = KEK


@dataclass(frozen=True, kw_only=True)
class KubernetesSecretsCredentials:
    driver: Literal["kubernetes-secrets"] = KUBERNETES_SECRETS
    namespace: str
    """Where the Secrets are kept (the tenant namespace unless the declaration names one);
    the Role and RoleBinding go there."""


@dataclass(frozen=True, kw_only=True)
class VaultCredentials:
    driver: Literal["vault"] = VAULT
    address: str
    role: str
    mount: str = VAULT_DEFAULT_MOUNT
    auth_method: str = VAULT_DEFAULT_AUTH_METHOD
    kubernetes_auth_mount: str = VAULT_DEFAULT_KUBERNETES_AUTH_MOUNT
    timeout_seconds: int = VAULT_DEFAULT_TIMEOUT_SECONDS

    @property
    def projected_token(self) -> bool:
        """Kubernetes auth logs in with the pod's projected token."""
        return self.auth_method == "kubernetes"


GatewayCredentials = KekCredentials | KubernetesSecretsCredentials | VaultCredentials
DEFAULT_CREDENTIALS: Final[GatewayCredentials] = KekCredentials()


# --- gateway.toml ---------------------------------------------------------------------------


def gateway_keys(credentials: GatewayCredentials) -> dict[str, Any]:
    """The keys of ``[openshell.gateway]`` for the driver: the KEK's ``credential_storage``
    table, or the ``credential_drivers`` list (never both: upstream's credentials spec)."""
    match credentials:
        case KekCredentials():
            return {"credential_storage": {"key_encryption_key_env": KEK_ENV}}
        case KubernetesSecretsCredentials() | VaultCredentials():
            return {"credential_drivers": [credentials.driver]}
        case _:
            assert_never(credentials)


def driver_tables(credentials: GatewayCredentials) -> dict[str, Any]:
    """The keys of ``[openshell]`` for the driver: ``credential_drivers.<driver>``, keys and
    order as upstream writes them (applyCredentialDriverToml)."""
    table: dict[str, Any]
    match credentials:
        case KekCredentials():
            return {}
        case KubernetesSecretsCredentials():
            table = {"namespace": credentials.namespace}
        case VaultCredentials():
            table = {
                "address": credentials.address,
                "mount": credentials.mount,
                "auth_method": credentials.auth_method,
                "role": credentials.role,
                "kubernetes_auth_mount": credentials.kubernetes_auth_mount,
                "timeout_secs": credentials.timeout_seconds,
            }
            if credentials.projected_token:
                table["service_account_token_path"] = VAULT_TOKEN_PATH
        case _:
            assert_never(credentials)
    return {"credential_drivers": {credentials.driver: table}}


# --- the pod --------------------------------------------------------------------------------


def vault_token_volume() -> dict[str, Any]:
    """The projected ServiceAccount token the Vault driver logs in with."""
    return {
        "name": VAULT_TOKEN_VOLUME,
        "projected": {
            "sources": [
                {
                    "serviceAccountToken": {
                        "path": "token",
                        "expirationSeconds": VAULT_TOKEN_SECONDS,
                        "audience": VAULT_TOKEN_AUDIENCE,
                    }
                }
            ]
        },
    }


def vault_token_mount() -> dict[str, Any]:
    return {"name": VAULT_TOKEN_VOLUME, "mountPath": VAULT_TOKEN_DIR, "readOnly": True}


def uses_projected_token(credentials: GatewayCredentials) -> bool:
    return isinstance(credentials, VaultCredentials) and credentials.projected_token


def external_namespace(credentials: GatewayCredentials, tenant: str) -> str | None:
    """The credential namespace when it is not the tenant's own, else None."""
    if isinstance(credentials, KubernetesSecretsCredentials) and credentials.namespace != tenant:
        return credentials.namespace
    return None

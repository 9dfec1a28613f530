"""Credential drivers (issue 13): ``spec.credentials`` from the declaration to gateway.toml, the
Deployment and the RBAC; the Vault policy. The rules on every field of the declaration are
tests/test_gateway.py's; whose store is whose tests/test_resolve_credentials.py's; the diff's
warning tests/test_diff_credentials.py's."""

from __future__ import annotations

import tomllib
from dataclasses import replace
from typing import Any

import pytest

from components import credentials, workload
from components.credentials import KekCredentials, KubernetesSecretsCredentials, VaultCredentials
from components.gateway_config import gateway_config, render_gateway_toml
from policy.hypershell_policies.vault import address_problem
from tests.helpers import k8s, kinds, raw
from tests.policy_helpers import stack_config, violations
from tests.support import rendered
from tests.test_components import BASE_ARGS, COMMON, NS, build, config_hash
from tests.test_policy import BY_NAME, broken, named

VAULT = VaultCredentials(address="https://vault.example.com:8200", role="openshell-acme")
SECRETS = KubernetesSecretsCredentials(namespace=NS)
ROLE = "openshell-gateway-credential-secrets"
KEK_SECRET = "Secret/openshell-gateway-credential-kek"
SIDECAR = {"proxy_uid": 1337, "process_binary_aware_network_policy": False}


def toml_of(recording: Any) -> str:
    return str(k8s(recording, "ConfigMap", "openshell-gateway-config", NS)["data"]["gateway.toml"])


def container(recording: Any) -> dict[str, Any]:
    spec: dict[str, Any] = k8s(recording, "Deployment", "openshell-gateway", NS)["spec"]
    containers: list[dict[str, Any]] = spec["template"]["spec"]["containers"]
    return containers[0]


def volumes(recording: Any) -> list[str]:
    spec = k8s(recording, "Deployment", "openshell-gateway", NS)["spec"]["template"]["spec"]
    return [v["name"] for v in spec["volumes"]]


def env_names(recording: Any) -> list[str]:
    return [e["name"] for e in container(recording)["env"]]


# --- the component --------------------------------------------------------------------------


def test_kek_is_the_default_and_keeps_todays_objects() -> None:
    recording, _ = build(BASE_ARGS)
    config = tomllib.loads(toml_of(recording))

    assert BASE_ARGS.credentials == KekCredentials()
    assert KEK_SECRET in kinds(recording, NS)
    assert env_names(recording) == ["OPENSHELL_DB_URL", credentials.KEK_ENV]
    assert config["openshell"]["gateway"]["credential_storage"] == {
        "key_encryption_key_env": "OPENSHELL_GATEWAY_CREDENTIAL_KEY_ENCRYPTION_KEY"
    }
    assert "credential_drivers" not in config["openshell"]["gateway"]
    assert "credential_drivers" not in config["openshell"]
    assert len(recording.of_type("random:index/randomBytes:RandomBytes")) == 1


def test_kubernetes_secrets_in_the_tenant_namespace() -> None:
    recording, _ = build(replace(BASE_ARGS, credentials=SECRETS))
    config = tomllib.loads(toml_of(recording))

    default = kinds(build(BASE_ARGS)[0], NS)
    assert KEK_SECRET in default and set(COMMON) <= set(default)
    expected = sorted(
        [k for k in default if k != KEK_SECRET] + [f"Role/{ROLE}", f"RoleBinding/{ROLE}"]
    )
    assert kinds(recording, NS) == expected
    assert recording.of_type("random:index/randomBytes:RandomBytes") == []
    assert env_names(recording) == ["OPENSHELL_DB_URL"]
    assert "vault-sa-token" not in volumes(recording)
    assert k8s(recording, "Role", ROLE, NS)["rules"] == [
        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "create", "patch", "delete"]}
    ]
    binding = k8s(recording, "RoleBinding", ROLE, NS)
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": ROLE,
    }
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "openshell-gateway", "namespace": NS}
    ]
    assert config["openshell"]["gateway"]["credential_drivers"] == ["kubernetes-secrets"]
    assert "credential_storage" not in config["openshell"]["gateway"]
    assert config["openshell"]["credential_drivers"] == {"kubernetes-secrets": {"namespace": NS}}


def test_only_the_drivers_binding_suppresses_the_read_all_secrets_scan_check() -> None:
    recording, _ = build(replace(BASE_ARGS, credentials=SECRETS))
    annotations = k8s(recording, "RoleBinding", ROLE, NS)["metadata"]["annotations"]

    # checkov reads `<check>=<reason>` and splits on "=": exactly one, or the scan crashes.
    check, reason = annotations["checkov.io/skip1"].split("=")
    assert (list(annotations), check) == (["checkov.io/skip1"], "CKV2_K8S_5")
    assert "names it generates" in reason
    suppressed = [
        r.name
        for r in recording.resources.values()
        if any(
            k.startswith("checkov.io/") for k in r.inputs.get("metadata", {}).get("annotations", {})
        )
    ]
    assert suppressed == ["acme-workload-credential-secrets-rb"]


def test_kubernetes_secrets_in_another_namespace_put_only_the_rbac_there() -> None:
    args = replace(BASE_ARGS, credentials=KubernetesSecretsCredentials(namespace="acme-creds"))
    recording, _ = build(args)

    assert kinds(recording, "acme-creds") == [f"Role/{ROLE}", f"RoleBinding/{ROLE}"]
    assert f"Role/{ROLE}" not in kinds(recording, NS)
    assert k8s(recording, "RoleBinding", ROLE, "acme-creds")["subjects"] == [
        {"kind": "ServiceAccount", "name": "openshell-gateway", "namespace": NS}
    ]
    assert tomllib.loads(toml_of(recording))["openshell"]["credential_drivers"] == {
        "kubernetes-secrets": {"namespace": "acme-creds"}
    }
    # The Role is the gateway's child like every other part (deleted with it).
    role = raw(recording, "Role", ROLE, "acme-creds")
    assert role.parent is not None and role.parent.endswith("::acme-workload")


def test_vault_mounts_the_projected_token_and_writes_its_table() -> None:
    recording, _ = build(replace(BASE_ARGS, credentials=VAULT))
    config = tomllib.loads(toml_of(recording))
    pod = k8s(recording, "Deployment", "openshell-gateway", NS)["spec"]["template"]["spec"]

    assert KEK_SECRET not in kinds(recording, NS)
    assert f"Role/{ROLE}" not in kinds(recording, NS)
    assert env_names(recording) == ["OPENSHELL_DB_URL"]
    assert pod["volumes"][-1] == {
        "name": "vault-sa-token",
        "projected": {
            "sources": [
                {
                    "serviceAccountToken": {
                        "path": "token",
                        "expirationSeconds": 3600,
                        "audience": "vault",
                    }
                }
            ]
        },
    }
    assert container(recording)["volumeMounts"][-1] == {
        "name": "vault-sa-token",
        "mountPath": "/var/run/secrets/vault",
        "readOnly": True,
    }
    assert config["openshell"]["gateway"]["credential_drivers"] == ["vault"]
    assert config["openshell"]["credential_drivers"] == {
        "vault": {
            "address": "https://vault.example.com:8200",
            "mount": "secret",
            "auth_method": "kubernetes",
            "role": "openshell-acme",
            "kubernetes_auth_mount": "kubernetes",
            "timeout_secs": 30,
            "service_account_token_path": "/var/run/secrets/vault/token",
        }
    }


def test_the_driver_key_is_in_the_gateway_table_not_in_the_last_one() -> None:
    """Upstream appends ``credential_drivers = [...]`` at the end of the file, where TOML puts
    it in the table before (the sidecar table). Here it is a key of ``[openshell.gateway]``,
    and the driver's table holds only the driver's keys."""
    for driver in (SECRETS, VAULT):
        text = render_gateway_toml(
            gateway_config(
                namespace=NS,
                sandbox_image="s:1",
                supervisor_image="v:1",
                server_sans=("a",),
                credentials=driver,
            )
        )
        config = tomllib.loads(text)
        assert config["openshell"]["gateway"]["credential_drivers"] == [driver.driver]
        assert config["openshell"]["drivers"]["kubernetes"]["sidecar"] == SIDECAR
        assert set(config["openshell"]) == {"version", "gateway", "drivers", "credential_drivers"}
        assert list(config["openshell"]["credential_drivers"]) == [driver.driver]
        # In the text, the key comes before the first sub-table of [openshell.gateway].
        assert text.index("credential_drivers = [") < text.index("[openshell.gateway.tls]")


def _revealed(value: Any) -> Any:
    """A recorded input with the recording's secret wrappers (``{sig, value}``) taken off."""
    if isinstance(value, dict) and "value" in value and len(value) == 2:
        return _revealed(value["value"])
    if isinstance(value, dict):
        return {k: _revealed(v) for k, v in value.items()}
    return value


def test_the_pod_hash_covers_the_kek_so_a_new_key_rolls_the_pod() -> None:
    # docs/running.md, "Rotating keys": the gateway reads the KEK from its environment at
    # start only, so the pod template's hash covers it like the files the pod reads.
    recording, _ = build(BASE_ARGS)

    def inputs(kind: str, name: str) -> Any:
        return _revealed(raw(recording, kind, name, NS).inputs)

    kek = inputs("Secret", "openshell-gateway-credential-kek")["stringData"]["key-encryption-key"]
    tls = inputs("Secret", "openshell-server-tls")["stringData"]
    uri = inputs("Secret", "openshell-gateway-db-credentials")["stringData"]["uri"]
    toml = inputs("ConfigMap", "openshell-gateway-config")["data"]["gateway.toml"]
    certs = [tls["ca.crt"], tls["tls.crt"]]
    found = config_hash(BASE_ARGS)
    assert found == workload.config_hash(toml, certs, uri, kek)
    assert found != workload.config_hash(toml, certs, uri)
    assert workload.config_hash(toml, certs, uri, kek + "x") != found


def test_the_pod_hash_covers_the_driver() -> None:
    hashes = {
        config_hash(replace(BASE_ARGS, credentials=c))
        for c in (
            KekCredentials(),
            SECRETS,
            KubernetesSecretsCredentials(namespace="acme-creds"),
            VAULT,
            replace(VAULT, mount="other"),
            replace(VAULT, address="https://vault2.example.com"),
        )
    }
    assert len(hashes) == 6


# --- the declaration --------------------------------------------------------------------------


# --- the Vault policy ---------------------------------------------------------------------------

POLICY = "vault-address-https"


def test_http_vault_passes_on_local_only() -> None:
    recording = rendered("local").recording
    assert violations([BY_NAME[POLICY]], recording, stack_config("local")) == []
    assert [v.message for v in violations([BY_NAME[POLICY]], recording, stack_config("ibm"))] == [
        "ConfigMap openshell-dev-build/openshell-gateway-config: data['gateway.toml']"
        " openshell.credential_drivers.vault.address 'http://vault.vault.svc.cluster.local:8200'"
        " must be an https:// URL"
    ]


def test_http_vault_fails_on_ibm() -> None:
    recording = broken("ibm")
    config_map_ = named(recording, "research-workload-config")
    toml = config_map_.inputs["data"]["gateway.toml"]
    assert 'address = "https://' in toml
    config_map_.inputs["data"]["gateway.toml"] = toml.replace(
        'address = "https://', 'address = "http://'
    )
    (message,) = [v.message for v in violations([BY_NAME[POLICY]], recording, stack_config("ibm"))]
    assert message.startswith(
        "ConfigMap openshell-research/openshell-gateway-config: data['gateway.toml']"
        " openshell.credential_drivers.vault.address 'http://"
    )
    assert message.endswith("' must be an https:// URL")


@pytest.mark.parametrize(
    ("address", "allow_http", "problem"),
    [
        ("https://v.example.com", False, None),
        ("HTTPS://v.example.com", False, None),
        ("http://v.example.com", True, None),
        ("http://v.example.com", False, "'http://v.example.com' must be an https:// URL"),
        ("ftp://v", True, "'ftp://v' must be an https:// (or http:// on this stack) URL"),
        (42, False, "42 must be an https:// URL"),
    ],
)
def test_address_problem(address: Any, allow_http: bool, problem: str | None) -> None:
    assert address_problem(address, allow_http=allow_http) == problem


def test_samples_exercise_every_driver() -> None:
    drivers: dict[str, set[str]] = {}
    for stack in ("ibm", "aws", "local"):
        for gateway in rendered(stack).prepared.loaded.gateways:
            drivers.setdefault(gateway.credentials.driver, set()).add(stack)
    assert drivers == {
        "kek": {"ibm", "aws", "local"},
        "kubernetes-secrets": {"ibm", "aws"},
        "vault": {"ibm", "aws", "local"},
    }
    every = [g for s in ("ibm", "aws", "local") for g in rendered(s).prepared.loaded.gateways]
    assert sum(g.credentials.driver == "kek" for g in every) > len(every) / 2
    external = [g.name for g in every if credentials.external_namespace(g.credentials, g.namespace)]
    assert external == ["audit"]

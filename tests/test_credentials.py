"""Credential drivers (issue 13): ``spec.credentials`` from the declaration to gateway.toml, the
Deployment and the RBAC; the rules across gateways and stacks; the diff's warning; the Vault
policy. The rules on every field of the declaration are in test_gateway."""

from __future__ import annotations

import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from components import credentials
from components.credentials import (
    KekCredentials,
    KubernetesSecretsCredentials,
    VaultCredentials,
)
from components.gateway_config import gateway_config, render_gateway_toml
from gatewayctl.diff.compare import ObjectChange, StackDiff
from gatewayctl.diff.credentials import DOCS_SECTION, Store, store_changes, summary_lines
from gatewayctl.diff.report import build_report
from gatewayctl.inputs import stackfile
from gatewayctl.resolve import credentials as gatewayctl_credentials
from gatewayctl.resolve import inventory, sharing
from policy.hypershell_policies.vault import address_problem
from tests.builders import DECLARATIONS, cluster, write_gateway, write_stack
from tests.diff_helpers import clone, run_diff
from tests.helpers import k8s, kinds, load, load_problems, raw
from tests.hostile_helpers import run_cli, unlocated
from tests.policy_helpers import stack_config, violations
from tests.support import ROOT, rendered
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
    return spec["template"]["spec"]["containers"][0]


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


# --- the credential namespace -----------------------------------------------------------------

FIELD = "spec.credentials.kubernetesSecrets.namespace"
OWN = "a gateway's credentials need a namespace no other gateway uses"


def secrets_in(namespace: str) -> dict[str, Any]:
    return {
        "credentials": {
            "driver": "kubernetes-secrets",
            "kubernetesSecrets": {"namespace": namespace},
        }
    }


def test_another_gateways_namespace_is_not_a_credential_store(tmp_path: Path) -> None:
    write_stack(tmp_path)
    thief = write_gateway(tmp_path, "alpha", secrets_in("openshell-beta"))
    victim = write_gateway(tmp_path, "beta", {})

    assert load_problems(tmp_path) == [
        (
            thief,
            FIELD,
            f"'openshell-beta' is the namespace of the gateway declared in {victim}; {OWN}",
        )
    ]


def test_two_gateways_may_not_share_a_credential_namespace(tmp_path: Path) -> None:
    write_stack(tmp_path)
    first = write_gateway(tmp_path, "alpha", secrets_in("shared-creds"))
    second = write_gateway(tmp_path, "beta", secrets_in("shared-creds"))

    assert load_problems(tmp_path) == [
        (
            first,
            FIELD,
            f"'shared-creds' is also the credential namespace of the gateway declared in {second};"
            f" {OWN}",
        ),
        (
            second,
            FIELD,
            f"'shared-creds' is also the credential namespace of the gateway declared in {first};"
            f" {OWN}",
        ),
    ]


def test_a_configured_namespace_is_not_a_credential_store(tmp_path: Path) -> None:
    write_stack(tmp_path, clusters={"c1": cluster(metricsNamespace="monitoring")})
    source = write_gateway(tmp_path, "alpha", secrets_in("monitoring"))

    assert load_problems(tmp_path) == [
        (
            source,
            FIELD,
            "'monitoring' is the metrics namespace of cluster 'c1' (metricsNamespace); the gateway"
            " would be granted every Secret in it",
        )
    ]


def test_the_own_namespace_written_out_is_the_default(tmp_path: Path) -> None:
    write_stack(tmp_path)
    write_gateway(tmp_path, "alpha", secrets_in("openshell-alpha"))
    (gateway,) = load(tmp_path).gateways
    assert gateway.credentials == KubernetesSecretsCredentials(namespace="openshell-alpha")


def site(name: str, **changes: Any) -> dict[str, Any]:
    own = {
        "kubeconfigContext": f"ctx-{name}",
        "baseDomain": f"{name}.example.com",
        "database": {"adminHost": f"db-{name}.example.com"},
    }
    return cluster(**{**own, **changes})


def shared(root: Path) -> list[tuple[str, str, str]]:
    stacks = stackfile.all_stacks(root)
    return [(p.path, p.field, p.message) for p in inventory.coverage_problems(root, stacks)]


def test_across_stacks_on_one_cluster_the_credential_namespace_is_checked(tmp_path: Path) -> None:
    a = write_stack(tmp_path, stack="a", clusters={"east": site("east", metricsNamespace="mon")})
    b = write_stack(
        tmp_path, stack="b", clusters={"main": site("other", kubeconfigContext="ctx-east")}
    )
    write_stack(tmp_path, stack="c", clusters={"c1": site("west")})
    alpha = write_gateway(tmp_path, "alpha", {}, stack="a")
    beta = write_gateway(tmp_path, "beta", secrets_in("openshell-alpha"), stack="b")
    gamma = write_gateway(tmp_path, "gamma", secrets_in("mon"), stack="b")
    write_gateway(tmp_path, "delta", secrets_in("openshell-alpha"), stack="c")  # another cluster
    reason = "one cluster by the same kubeconfigContext 'ctx-east'"

    assert shared(tmp_path) == sorted(
        [
            (
                beta,
                FIELD,
                f"'openshell-alpha' is the namespace of the gateway declared in {alpha} (cluster"
                f" 'east' of {a}), {reason}; {OWN}",
            ),
            (
                gamma,
                FIELD,
                f"'mon' is the metrics namespace of cluster 'east' in {a}, {reason}"
                " (metricsNamespace); the gateway would be granted every Secret in it",
            ),
        ]
    )
    assert b == "Pulumi.b.yaml"


# --- one Vault role and one mount per gateway (issue 25 item 5) --------------------------------

ROLE_REASON = (
    "a role is bound to one gateway's ServiceAccount and namespace, and one role would give both"
    " the same policy: each the other's credentials"
)
MOUNT_REASON = (
    "each would read and overwrite the other's credentials: give each gateway a mount of its own"
)


def in_vault(address: str, role: str, mount: str | None = None) -> dict[str, Any]:
    vault = {"address": address, "role": role} | ({"mount": mount} if mount else {})
    return {"credentials": {"driver": "vault", "vault": vault}}


def test_two_gateways_may_not_share_a_vault_role(tmp_path: Path) -> None:
    write_stack(tmp_path)
    address = "https://vault.example.com:8200"
    first = write_gateway(tmp_path, "alpha", in_vault(address, "openshell-alpha", "kv/alpha"))
    # A copy of alpha's declaration whose role was left as it was.
    second = write_gateway(tmp_path, "beta", in_vault(address, "openshell-alpha", "kv/beta"))

    assert load_problems(tmp_path) == [
        (
            first,
            "spec.credentials.vault.role",
            f"Vault role 'openshell-alpha' on {address} is also the role of the gateway declared"
            f" in {second}; {ROLE_REASON}",
        ),
        (
            second,
            "spec.credentials.vault.role",
            f"Vault role 'openshell-alpha' on {address} is also the role of the gateway declared"
            f" in {first}; {ROLE_REASON}",
        ),
    ]


def test_two_gateways_may_not_share_a_vault_mount_the_default_included(tmp_path: Path) -> None:
    write_stack(tmp_path)
    address = "https://vault.example.com"
    first = write_gateway(tmp_path, "alpha", in_vault(address, "openshell-alpha"))
    second = write_gateway(tmp_path, "beta", in_vault(address, "openshell-beta", "secret"))

    assert load_problems(tmp_path) == [
        (
            first,
            "spec.credentials.vault.mount",
            f"KV mount 'secret' on {address} is also the mount of the gateway declared in"
            f" {second}; {MOUNT_REASON}",
        ),
        (
            second,
            "spec.credentials.vault.mount",
            f"KV mount 'secret' on {address} is also the mount of the gateway declared in"
            f" {first}; {MOUNT_REASON}",
        ),
    ]


def test_one_vault_server_however_its_address_is_written(tmp_path: Path) -> None:
    write_stack(tmp_path)
    first = write_gateway(
        tmp_path, "alpha", in_vault("https://Vault.Example.com:443/", "Team-A", "kv/alpha")
    )
    write_gateway(tmp_path, "beta", in_vault("https://vault.example.com", "team-a", "kv/beta"))

    # Vault looks roles up in lowercase: 'Team-A' and 'team-a' are one role.
    assert [(path, field) for path, field, _ in load_problems(tmp_path)] == [
        (first, "spec.credentials.vault.role"),
        (f"{DECLARATIONS}/beta.yaml", "spec.credentials.vault.role"),
    ]


def test_other_vault_servers_may_use_the_same_role_and_mount(tmp_path: Path) -> None:
    write_stack(tmp_path)
    write_gateway(tmp_path, "alpha", in_vault("https://vault.example.com", "openshell-t"))
    write_gateway(tmp_path, "beta", in_vault("https://vault.example.com:8200", "openshell-t"))
    write_gateway(tmp_path, "gamma", in_vault("http://vault.example.com", "openshell-t"))

    assert [g.name for g in load(tmp_path).gateways] == ["alpha", "beta", "gamma"]


IN_CLUSTER = "http://vault.vault.svc.cluster.local:8200"


def test_a_vault_inside_the_cluster_is_another_server_on_another_cluster(tmp_path: Path) -> None:
    write_stack(tmp_path, clusters={"east": site("east"), "west": site("west")})
    write_gateway(tmp_path, "alpha", {"cluster": "east"} | in_vault(IN_CLUSTER, "openshell-t"))
    write_gateway(tmp_path, "beta", {"cluster": "west"} | in_vault(IN_CLUSTER, "openshell-t"))
    assert [g.name for g in load(tmp_path).gateways] == ["alpha", "beta"]

    # On one cluster it is one server.
    gamma = write_gateway(tmp_path, "gamma", {"cluster": "east"} | in_vault(IN_CLUSTER, "x", "kv"))
    delta = write_gateway(tmp_path, "delta", {"cluster": "east"} | in_vault(IN_CLUSTER, "y", "kv"))
    assert [(path, field) for path, field, _ in load_problems(tmp_path)] == [
        (delta, "spec.credentials.vault.mount"),
        (gamma, "spec.credentials.vault.mount"),
    ]


@pytest.mark.parametrize(
    ("address", "server", "in_cluster"),
    [
        ("https://Vault.Example.com:443/", "https://vault.example.com:443", False),
        ("http://vault.example.com", "http://vault.example.com:80", False),
        ("https://[2001:db8::1]:8200", "https://[2001:db8::1]:8200", False),
        (IN_CLUSTER, IN_CLUSTER, True),
        ("https://vault.secrets.svc", "https://vault.secrets.svc:443", True),
        ("http://vault:8200", "http://vault:8200", True),
        ("http://127.0.0.1:8200", "http://127.0.0.1:8200", True),
        ("http://[::1]:8200", "http://[::1]:8200", True),
    ],
)
def test_vault_server(address: str, server: str, in_cluster: bool) -> None:
    assert gatewayctl_credentials.vault_server(address) == (server, in_cluster)


def test_a_shared_vault_role_exits_2_through_the_cli_and_writes_nothing(tmp_path: Path) -> None:
    write_stack(tmp_path)
    address = "https://vault.example.com"
    for name, mount in (("alpha", "kv/a"), ("beta", "kv/b")):
        write_gateway(tmp_path, name, in_vault(address, "openshell-x", mount) | {"signIn": "none"})
    out = tmp_path / "out"

    rendered_ = run_cli("--root", str(tmp_path), "render", "test", "--out", str(out), "-q")

    assert rendered_.code == 2
    assert not out.exists()
    assert [line.split(": ")[2] for line in unlocated(rendered_.err).splitlines()[:-1]] == [
        "spec.credentials.vault.role",
        "spec.credentials.vault.role",
    ]


def test_across_stacks_one_vault_server_is_checked_whatever_the_clusters(tmp_path: Path) -> None:
    a = write_stack(tmp_path, stack="a", clusters={"east": site("east")})
    b = write_stack(tmp_path, stack="b", clusters={"west": site("west")})
    address = "https://vault.example.com"
    alpha = write_gateway(
        tmp_path, "alpha", in_vault(address, "openshell-alpha", "kv/a"), stack="a"
    )
    beta = write_gateway(tmp_path, "beta", in_vault(address, "openshell-alpha", "kv/b"), stack="b")
    stacks = stackfile.all_stacks(tmp_path)

    found = [(p.path, p.field, p.message) for p in sharing.shared_problems(tmp_path, stacks)]

    # An address inside the cluster names another Vault on another cluster.
    write_gateway(tmp_path, "gamma", in_vault(IN_CLUSTER, "openshell-t", "kv"), stack="a")
    write_gateway(tmp_path, "delta", in_vault(IN_CLUSTER, "openshell-t", "kv"), stack="b")
    assert [(p.path, p.field, p.message) for p in sharing.shared_problems(tmp_path, stacks)] == (
        found
    )
    assert found == [
        (
            alpha,
            "spec.credentials.vault.role",
            f"Vault role 'openshell-alpha' on {address} is also the role of the gateway declared"
            f" in {beta} (of {b}); {ROLE_REASON}",
        ),
        (
            beta,
            "spec.credentials.vault.role",
            f"Vault role 'openshell-alpha' on {address} is also the role of the gateway declared"
            f" in {alpha} (of {a}); {ROLE_REASON}",
        ),
    ]


# --- the offline diff -------------------------------------------------------------------------


def config_map(driver: Any, gateway: str = "acme", namespace: str = NS) -> str:
    toml = render_gateway_toml(
        gateway_config(
            namespace=namespace,
            sandbox_image="s:1",
            supervisor_image="v:1",
            server_sans=("a",),
            credentials=driver,
        )
    )
    document = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "openshell-gateway-config",
            "namespace": namespace,
            "labels": {"hypershell.redhat.io/gateway": gateway},
        },
        "data": {"gateway.toml": toml},
    }
    return yaml.safe_dump(document)


def changed(old: Any, new: Any, gateway: str = "acme", namespace: str = NS) -> ObjectChange:
    return ObjectChange(
        path=f"manifests/c1/{namespace}/configmap-openshell-gateway-config.yaml",
        kind="ConfigMap",
        status="changed",
        old=config_map(old, gateway, namespace),
        new=config_map(new, gateway, namespace),
    )


def stack_diff(*objects: ObjectChange) -> StackDiff:
    return StackDiff(
        stack="ibm", base_note=None, head_note=None, gateways=(), objects=objects, resources=()
    )


def test_a_store_change_is_found_and_a_setting_change_is_not() -> None:
    objects = [
        changed(KekCredentials(), VAULT),
        changed(SECRETS, KubernetesSecretsCredentials(namespace="x"), "beta", "openshell-beta"),
        changed(VAULT, replace(VAULT, role="other", timeout_seconds=5), "gamma", "openshell-gamma"),
        changed(VAULT, replace(VAULT, mount="kv"), "delta", "openshell-delta"),
    ]
    assert [(c.gateway, c.old, c.new) for c in store_changes(objects)] == [
        (
            "acme",
            Store("kek", "(database, KEK Secret)"),
            Store("vault", "`https://vault.example.com:8200` mount `secret`"),
        ),
        (
            "beta",
            Store("kubernetes-secrets", f"namespace `{NS}`"),
            Store("kubernetes-secrets", "namespace `x`"),
        ),
        (
            "delta",
            Store("vault", "`https://vault.example.com:8200` mount `secret`"),
            Store("vault", "`https://vault.example.com:8200` mount `kv`"),
        ),
    ]


def test_the_report_warns_above_the_object_diffs() -> None:
    diff = stack_diff(changed(SECRETS, KekCredentials()))
    lines = summary_lines(diff)
    report = build_report([diff], base_label="`main` (`abc`)", command="gatewayctl diff")

    assert lines == [
        "**Credential storage changes**: 1 gateway(s) would read their users' credentials from"
        " another store; what they stored before becomes unreadable to them (and leaving `kek`"
        " deletes the KEK Secret) unless migrated first: see docs/credential-drivers.md,"
        ' "Changing a gateway\'s credential driver".',
        "",
        "| Gateway | Namespace | From | To |",
        "|---|---|---|---|",
        f"| `acme` | `{NS}` | `kubernetes-secrets` namespace `{NS}`"
        " | `kek` (database, KEK Secret) |",
        "",
    ]
    assert "\n".join(lines) in report
    assert report.index("Credential storage changes") < report.index("### Object diffs")
    assert summary_lines(stack_diff(changed(VAULT, replace(VAULT, role="x")))) == []


def test_the_docs_have_the_section_the_warning_names() -> None:
    page = ROOT / "docs" / "credential-drivers.md"
    headings = [line for line in page.read_text().splitlines() if line[:1] == "#"]
    assert f"### {DOCS_SECTION}" in headings


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


def test_the_pr_diff_flags_a_live_gateway_switching_driver(
    pristine: Path,
    tmp_path: Path,
) -> None:
    repo = clone(pristine, tmp_path / "repo")
    declaration = repo / "gateways" / "local" / "offline.yaml"
    declaration.write_text(
        declaration.read_text() + "  credentials:\n    driver: kubernetes-secrets\n"
    )

    run = run_diff(repo, "local", "--base", "main")

    assert run.code == 3, run.err
    assert (
        "| `offline` | `openshell-offline` | `kek` (database, KEK Secret)"
        " | `kubernetes-secrets` namespace `openshell-offline` |"
    ) in run.out.splitlines()
    assert run.out.count("**Credential storage changes**: 1 gateway(s)") == 1

"""A gateway's credential store is its own (``gatewayctl.resolve.credential_drivers``): no
namespace of
another gateway, of the cluster's configuration or shared with another gateway, and one Vault
role and one mount per gateway on one Vault server, within a stack and across the stacks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from components.credentials import KubernetesSecretsCredentials
from gatewayctl.inputs import stackfile
from gatewayctl.resolve import credential_drivers, inventory, sharing
from tests.builders import DECLARATIONS, cluster, write_gateway, write_stack
from tests.helpers import load, load_problems
from tests.hostile_helpers import run_cli, unlocated

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
        ("https://Vault.Example.com:443/", "https://vault.example.com", False),
        ("http://vault.example.com:80", "http://vault.example.com", False),
        ("https://vault.example.com.:8443/v1/", "https://vault.example.com:8443/v1", False),
        ("https://[2001:db8::1]:8200", "https://[2001:db8::1]:8200", False),
        (IN_CLUSTER, IN_CLUSTER, True),
        ("https://vault.secrets.svc", "https://vault.secrets.svc", True),
        ("https://vault.secrets.svc.", "https://vault.secrets.svc", True),
        ("http://vault:8200", "http://vault:8200", True),
        ("http://127.0.0.1:8200", "http://127.0.0.1:8200", True),
        ("http://[::1]:8200", "http://[::1]:8200", True),
    ],
)
def test_vault_server(address: str, server: str, in_cluster: bool) -> None:
    assert credential_drivers.vault_server(address) == (server, in_cluster)


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

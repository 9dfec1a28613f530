"""Rules on names and addresses, within a stack and across the stacks of a repository.

Within a stack (``gatewayctl.resolve``, ``gatewayctl.models``): hosts and base domains are fully
qualified DNS names, never IP addresses; registry ports are TCP ports; infrastructure
namespaces and PostgreSQL's reserved role names are refused; a registry host matches its
mirror whatever its case. Across the stacks of a repository (``gatewayctl.inventory``, run by
``validate``/``render`` for the stacks they name): hosts, namespaces per cluster and roles and
databases per database server are unique, and no gateway takes another stack's base domain,
configured namespaces or admin role. Each problem is ``path: field: problem``, exit 2.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from gatewayctl import inventory
from gatewayctl.errors import Problem
from tests.builders import (
    CONFIG_FILE,
    DROP,
    PREFIX,
    cluster,
    one_cluster,
    write_gateway,
    write_stack,
)
from tests.helpers import load_problems, only_gateway
from tests.hostile_helpers import run_cli
from tests.strategies import two_stacks

OWN_DATABASE = "a gateway needs a role and database of its own"
SYSTEM = "is a system namespace; a gateway needs its own"


# --- hosts and base domains are fully qualified DNS names -----------------------------------


@pytest.mark.parametrize(
    ("host", "message"),
    [
        ("10.0.0.1", "host '10.0.0.1' is an IP address; it must be a DNS name"),
        (
            "127.1",
            "host '127.1' ends in the numeric label '1', so it is read as an IP address; it must"
            " be a DNS name (no top-level domain is numeric)",
        ),
        (
            "sandboxes",
            "host 'sandboxes' is a single label; it must be a fully qualified DNS name such as"
            " sandboxes.example.com",
        ),
    ],
)
@pytest.mark.parametrize("enabled", [True, False], ids=["exposed", "not-exposed"])
def test_an_address_or_single_label_host_is_refused(
    tmp_path: Path, host: str, message: str, enabled: bool
) -> None:
    write_stack(tmp_path)
    source = write_gateway(tmp_path, "team-a", {"exposure": {"host": host, "enabled": enabled}})

    assert load_problems(tmp_path) == [(source, "spec.exposure.host", message)]


@pytest.mark.parametrize(
    ("base_domain", "message"),
    [
        ("10.1.2.3", "base domain '10.1.2.3' is an IP address; it must be a DNS name"),
        (
            "apps.10",
            "base domain 'apps.10' ends in the numeric label '10', so it is read as an IP"
            " address; it must be a DNS name (no top-level domain is numeric)",
        ),
        (
            "apps",
            "base domain 'apps' is a single label; it must be a fully qualified DNS name such as"
            " apps.example.com",
        ),
    ],
)
def test_an_address_or_single_label_base_domain_is_refused(
    tmp_path: Path, base_domain: str, message: str
) -> None:
    write_stack(tmp_path, clusters=one_cluster(baseDomain=base_domain))

    assert load_problems(tmp_path) == [(CONFIG_FILE, f"{PREFIX}clusters.c1.baseDomain", message)]


def test_a_database_host_may_still_be_an_address_or_localhost(tmp_path: Path) -> None:
    database = {"adminHost": "localhost", "host": "10.0.0.5"}
    write_stack(tmp_path, clusters=one_cluster(database=database))
    write_gateway(tmp_path, "team-a")

    assert only_gateway(tmp_path).hostname == "gw-openshell-team-a.apps.example.com"


# --- registry ports -------------------------------------------------------------------------


def port_message(reference: str, port: str) -> str:
    return f"image reference {reference!r}: registry port {port} is out of range (1-65535)"


def test_a_registry_port_out_of_range_is_refused_in_every_field(tmp_path: Path) -> None:
    mirrors = {"ghcr.io/nvidia": "registry.internal:70000/nvidia", "quay.io:0/team": "quay.io/t"}
    write_stack(
        tmp_path,
        clusters=one_cluster(registryMirrors=mirrors),
        stack_images={"sandbox": "registry.internal:65536/sandbox:1"},
    )
    source = write_gateway(tmp_path, "team-a", {"images": {"gateway": "localhost:0/gw:1"}})

    mirror_field = f"{PREFIX}clusters.c1.registryMirrors"
    assert load_problems(tmp_path) == [
        (
            CONFIG_FILE,
            f"{mirror_field}.ghcr.io/nvidia",
            port_message("registry.internal:70000/nvidia", "70000"),
        ),
        (
            CONFIG_FILE,
            f"{mirror_field}.quay.io:0/team",
            f"key: {port_message('quay.io:0/team', '0')}",
        ),
        (
            CONFIG_FILE,
            f"{PREFIX}images.sandbox",
            port_message("registry.internal:65536/sandbox:1", "65536"),
        ),
        (source, "spec.images.gateway", port_message("localhost:0/gw:1", "0")),
    ]


# --- registry hosts compare case-insensitively ----------------------------------------------


def test_an_uppercase_registry_host_takes_the_clusters_mirror(tmp_path: Path) -> None:
    mirrors = {"ghcr.io/nvidia": "registry.internal:5000/nvidia"}
    write_stack(tmp_path, clusters=one_cluster(registryMirrors=mirrors))
    write_gateway(tmp_path, "team-a", {"images": {"gateway": "GHCR.IO/nvidia/openshell/gw:1"}})

    images = only_gateway(tmp_path).args.images
    assert images.gateway == "registry.internal:5000/nvidia/openshell/gw:1"
    assert images.supervisor == "registry.internal:5000/nvidia/openshell/supervisor:0.0.109"


def test_mirror_keys_differing_only_in_the_hosts_case_are_refused(tmp_path: Path) -> None:
    mirrors = {"ghcr.io/nvidia": "registry.internal/a", "GHCR.io/nvidia": "registry.internal/b"}
    write_stack(tmp_path, clusters=one_cluster(registryMirrors=mirrors))

    assert load_problems(tmp_path) == [
        (
            CONFIG_FILE,
            f"{PREFIX}clusters.c1.registryMirrors",
            "'ghcr.io/nvidia' and 'GHCR.io/nvidia' are the same prefix (registry hosts compare"
            " case-insensitively); keep one",
        )
    ]


# --- infrastructure namespaces --------------------------------------------------------------


@pytest.mark.parametrize(
    "namespace",
    [
        "istio-system",
        "istio-cni",
        "cert-manager",
        "cert-manager-operator",
        "olm",
        "operators",
        "hypershift",
        "open-cluster-management",
        "open-cluster-management-agent",
        "multicluster-engine",
        "local-cluster",
        "ibm-system",
        "calico-system",
        "tigera-operator",
        "local-path-storage",
        "hypershell-system",
    ],
)
def test_infrastructure_namespaces_are_refused(tmp_path: Path, namespace: str) -> None:
    write_stack(tmp_path)
    source = write_gateway(tmp_path, "team-a", {"namespace": namespace})

    assert load_problems(tmp_path) == [(source, "spec.namespace", f"{namespace!r} {SYSTEM}")]


@pytest.mark.parametrize(
    "namespace", ["istio", "team-olm", "kube", "openshell-kube-x", "cert-manager-x", "defaults"]
)
def test_names_that_only_resemble_infrastructure_namespaces_pass(
    tmp_path: Path, namespace: str
) -> None:
    write_stack(tmp_path)
    write_gateway(tmp_path, "team-a", {"namespace": namespace})

    assert only_gateway(tmp_path).namespace == namespace


# --- PostgreSQL reserved role names ---------------------------------------------------------

RESERVED = {
    "public": "PUBLIC stands for every role",
    "none": "PostgreSQL refuses to create a role of that name",
    "current_user": "CURRENT_USER stands for the role of the session",
    "current_role": "CURRENT_ROLE stands for the role of the session",
    "session_user": "SESSION_USER stands for the role that logged in",
}


@pytest.mark.parametrize("name", sorted(RESERVED))
def test_reserved_role_names_are_refused_as_database_names(tmp_path: Path, name: str) -> None:
    write_stack(tmp_path)
    source = write_gateway(tmp_path, "team-a", {"databaseName": name})

    assert load_problems(tmp_path) == [
        (
            source,
            "spec.databaseName",
            f"{name!r} is a reserved PostgreSQL role name ({RESERVED[name]}); {OWN_DATABASE}",
        )
    ]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        *[
            (name, f"{name!r} is a reserved PostgreSQL role name ({why})")
            for name, why in sorted(RESERVED.items())
        ],
        (
            "pg_monitor",
            "'pg_monitor' starts with 'pg_', which PostgreSQL reserves for its system roles",
        ),
    ],
)
def test_reserved_role_names_are_refused_as_admin_user(
    tmp_path: Path, name: str, message: str
) -> None:
    write_stack(tmp_path, clusters=one_cluster(database={"adminUser": name}))

    assert load_problems(tmp_path) == [
        (
            CONFIG_FILE,
            f"{PREFIX}clusters.c1.database.adminUser",
            f"{message}; it cannot be the admin role Pulumi logs in as",
        )
    ]


@pytest.mark.parametrize("name", ["postgres", "PUBLIC", "public_admin", "admin_none", "pgadmin"])
def test_admin_users_that_are_not_reserved_pass(tmp_path: Path, name: str) -> None:
    write_stack(tmp_path, clusters=one_cluster(database={"adminUser": name}))
    write_gateway(tmp_path, "team-a")

    assert only_gateway(tmp_path).database_name == "gw_team_a"


def test_these_rules_exit_2_through_the_cli(tmp_path: Path) -> None:
    write_stack(tmp_path)
    first = write_gateway(
        tmp_path, "team-a", {"namespace": "istio-system", "databaseName": "current_user"}
    )
    second = write_gateway(tmp_path, "team-b", {"exposure": {"host": "10.0.0.1"}})
    out = tmp_path / "out"

    validated = run_cli("--root", str(tmp_path), "validate", "test")
    rendered = run_cli("--root", str(tmp_path), "render", "test", "--out", str(out), "-q")

    assert (validated.code, rendered.code) == (2, 2)
    assert validated.err.splitlines() == [
        f"error: {first}: spec.databaseName: 'current_user' is a reserved PostgreSQL role name"
        f" (CURRENT_USER stands for the role of the session); {OWN_DATABASE}",
        f"error: {first}: spec.namespace: 'istio-system' {SYSTEM}",
        f"error: {second}: spec.exposure.host: host '10.0.0.1' is an IP address; it must be a"
        " DNS name",
        "3 problem(s); nothing written",
    ]
    assert rendered.err == validated.err
    assert not out.exists()


# === across stacks ==========================================================================


def site(name: str, **changes: Any) -> dict[str, Any]:
    """A cluster of its own: its own context, base domain and database server."""
    own = {
        "kubeconfigContext": f"ctx-{name}",
        "baseDomain": f"{name}.example.com",
        "database": {"adminHost": f"db-{name}.example.com"},
    }
    return cluster(**{**own, **changes})


def shared(root: Path, *stacks: str) -> list[tuple[str, str, str]]:
    wanted = stacks or inventory.all_stacks(root)
    return [(p.path, p.field, p.message) for p in inventory.coverage_problems(root, wanted)]


def namespace_clash(
    namespace: str, cluster_name: str, other: str, other_cluster: str, config: str, reason: str
) -> str:
    return (
        f"namespace {namespace!r} on cluster {cluster_name!r} is also used by {other} (cluster"
        f" {other_cluster!r} of {config}, one cluster by {reason})"
    )


def host_clash(host: str, other: str, other_cluster: str, config: str) -> str:
    return f"host {host!r} is also used by {other} (cluster {other_cluster!r} of {config})"


def database_clash(database: str, server: str, other: str, other_cluster: str, config: str) -> str:
    return (
        f"database {database!r} on server {server} is also used by {other}"
        f" (cluster {other_cluster!r} of {config})"
    )


def test_stacks_on_one_kubeconfig_context_may_not_share_a_namespace(tmp_path: Path) -> None:
    a = write_stack(tmp_path, stack="a", clusters={"east": site("east")})
    b = write_stack(
        tmp_path, stack="b", clusters={"main": site("other", kubeconfigContext="ctx-east")}
    )
    first = write_gateway(tmp_path, "alpha", {"namespace": "tenant"}, stack="a")
    second = write_gateway(tmp_path, "beta", {"namespace": "tenant"}, stack="b")
    reason = "the same kubeconfigContext 'ctx-east'"

    assert shared(tmp_path) == [
        (
            first,
            "spec.namespace",
            namespace_clash("tenant", "east", second, "main", b, reason),
        ),
        (
            second,
            "spec.namespace",
            namespace_clash("tenant", "main", first, "east", a, reason),
        ),
    ]


def test_stacks_on_one_base_domain_may_not_share_a_namespace_or_its_slot(tmp_path: Path) -> None:
    a = write_stack(tmp_path, stack="a", clusters={"c1": site("east")})
    b = write_stack(
        tmp_path, stack="b", clusters={"c1": site("west", baseDomain="east.example.com")}
    )
    first = write_gateway(tmp_path, "team", stack="a")
    second = write_gateway(tmp_path, "team", stack="b")
    slot = "gw-openshell-team.east.example.com"
    reason = "the same baseDomain 'east.example.com'"

    assert shared(tmp_path) == [
        (first, "spec.exposure.host", host_clash(slot, second, "c1", b)),
        (first, "spec.namespace", namespace_clash("openshell-team", "c1", second, "c1", b, reason)),
        (second, "spec.exposure.host", host_clash(slot, first, "c1", a)),
        (second, "spec.namespace", namespace_clash("openshell-team", "c1", first, "c1", a, reason)),
    ]


def test_the_same_key_in_a_shared_inventory_is_one_cluster(tmp_path: Path) -> None:
    # No context and no base domain to compare: spec.cluster names one cluster for both.
    edge = cluster(kubeconfigContext=DROP, baseDomain=DROP, capabilities=DROP, ingress=DROP)
    a = write_stack(
        tmp_path,
        stack="a",
        clusters={"edge": edge},
        directory="inventory",
        selector={"tier": "gold"},
    )
    b = write_stack(
        tmp_path,
        stack="b",
        clusters={"edge": edge},
        directory="inventory",
        selector={"tier": "lead"},
    )
    spec = {"cluster": "edge", "namespace": "tenant"}
    first = write_gateway(tmp_path, "x", spec, directory="inventory", labels={"tier": "gold"})
    second = write_gateway(tmp_path, "y", spec, directory="inventory", labels={"tier": "lead"})
    reason = "the same key in the shared inventory inventory"

    assert shared(tmp_path) == [
        (first, "spec.namespace", namespace_clash("tenant", "edge", second, "edge", b, reason)),
        (second, "spec.namespace", namespace_clash("tenant", "edge", first, "edge", a, reason)),
    ]


def test_one_namespace_on_two_clusters_of_two_stacks_is_fine(tmp_path: Path) -> None:
    write_stack(tmp_path, stack="a", clusters={"c1": site("east")})
    write_stack(tmp_path, stack="b", clusters={"c1": site("west")})
    write_gateway(tmp_path, "team", stack="a")  # the same name, namespace and database name
    write_gateway(tmp_path, "team", stack="b")

    assert shared(tmp_path) == []


def test_a_vanity_host_is_routed_by_one_stack_only(tmp_path: Path) -> None:
    a = write_stack(tmp_path, stack="a", clusters={"c1": site("east")})
    b = write_stack(tmp_path, stack="b", clusters={"c1": site("west")})
    host = "sandboxes.example.org"
    first = write_gateway(tmp_path, "alpha", {"exposure": {"host": host}}, stack="a")
    second = write_gateway(tmp_path, "beta", {"exposure": {"host": host}}, stack="b")
    write_gateway(
        tmp_path, "hidden", {"exposure": {"host": "x.example.org", "enabled": False}}, stack="b"
    )
    write_gateway(
        tmp_path, "hidden", {"exposure": {"host": "x.example.org", "enabled": False}}, stack="a"
    )

    assert shared(tmp_path) == [
        (first, "spec.exposure.host", host_clash(host, second, "c1", b)),
        (second, "spec.exposure.host", host_clash(host, first, "c1", a)),
    ]


def slot_message(host: str, domain: str, config: str, own: str, own_config: str) -> str:
    return (
        f"host {host!r} is under the base domain {domain!r} of cluster 'c1' in {config}; a"
        f" gateway on {own!r} of {own_config} may not use it"
    )


def test_another_stacks_tenant_slot_may_not_be_taken(tmp_path: Path) -> None:
    a = write_stack(tmp_path, stack="a", clusters={"c1": site("east")})
    b = write_stack(tmp_path, stack="b", clusters={"c1": site("west")})
    slot = "gw-openshell-x.east.example.com"  # stack a's slot for a namespace openshell-x
    thief = write_gateway(tmp_path, "thief", {"exposure": {"host": slot}}, stack="b")

    assert shared(tmp_path) == [
        (thief, "spec.exposure.host", slot_message(slot, "east.example.com", a, "c1", b))
    ]
    # Once a's tenant exists, its own file names the thief too.
    owner = write_gateway(tmp_path, "x", stack="a")
    assert shared(tmp_path) == [
        (owner, "spec.exposure.host", host_clash(slot, thief, "c1", b)),
        (thief, "spec.exposure.host", host_clash(slot, owner, "c1", a)),
        (thief, "spec.exposure.host", slot_message(slot, "east.example.com", a, "c1", b)),
    ]


def test_a_base_domain_inside_another_stacks_is_its_own(tmp_path: Path) -> None:
    write_stack(tmp_path, stack="a", clusters={"c1": site("outer", baseDomain="example.com")})
    b = write_stack(
        tmp_path, stack="b", clusters={"c1": site("inner", baseDomain="apps.example.com")}
    )
    write_gateway(tmp_path, "team", stack="b")  # gw-openshell-team.apps.example.com: its own slot
    vanity = write_gateway(
        tmp_path, "vanity", {"exposure": {"host": "grpc.example.com"}}, stack="b"
    )

    assert shared(tmp_path) == [
        (
            vanity,
            "spec.exposure.host",
            slot_message("grpc.example.com", "example.com", "Pulumi.a.yaml", "c1", b),
        )
    ]


def test_stacks_on_one_database_server_may_not_share_a_role_and_database(tmp_path: Path) -> None:
    server = {"adminHost": "pg.example.com"}
    a = write_stack(tmp_path, stack="a", clusters={"east": site("east", database=server)})
    b = write_stack(tmp_path, stack="b", clusters={"west": site("west", database=server)})
    write_stack(
        tmp_path, stack="c", clusters={"c1": site("north", database={**server, "adminPort": 6432})}
    )
    first = write_gateway(tmp_path, "alpha", {"databaseName": "gw_shared"}, stack="a")
    second = write_gateway(tmp_path, "beta", {"databaseName": "gw_shared"}, stack="b")
    write_gateway(tmp_path, "gamma", {"databaseName": "gw_shared"}, stack="c")  # another port
    server_name = "pg.example.com:5432"

    assert shared(tmp_path) == [
        (
            first,
            "spec.databaseName",
            database_clash("gw_shared", server_name, second, "west", b),
        ),
        (
            second,
            "spec.databaseName",
            database_clash("gw_shared", server_name, first, "east", a),
        ),
    ]


def test_another_stacks_admin_role_on_the_same_server_is_refused(tmp_path: Path) -> None:
    server = {"adminHost": "pg.example.com", "adminUser": "east_admin"}
    a = write_stack(tmp_path, stack="a", clusters={"east": site("east", database=server)})
    write_stack(
        tmp_path,
        stack="b",
        clusters={"west": site("west", database={**server, "adminUser": "west"})},
    )
    source = write_gateway(tmp_path, "beta", {"databaseName": "east_admin"}, stack="b")

    assert shared(tmp_path) == [
        (
            source,
            "spec.databaseName",
            "'east_admin' is the database server's admin user (database.adminUser of cluster"
            f" 'east' in {a}): the gateway would take over that role (reset its password) and,"
            f" with deletionPolicy Delete, drop it; {OWN_DATABASE}",
        )
    ]


def test_another_stacks_configured_namespace_on_the_same_cluster_is_refused(
    tmp_path: Path,
) -> None:
    a = write_stack(
        tmp_path, stack="a", clusters={"east": site("east", metricsNamespace="monitoring")}
    )
    write_stack(tmp_path, stack="b", clusters={"main": site("other", kubeconfigContext="ctx-east")})
    write_stack(tmp_path, stack="c", clusters={"c1": site("west")})
    source = write_gateway(tmp_path, "beta", {"namespace": "monitoring"}, stack="b")
    write_gateway(tmp_path, "gamma", {"namespace": "monitoring"}, stack="c")  # another cluster

    assert shared(tmp_path) == [
        (
            source,
            "spec.namespace",
            f"'monitoring' is the metrics namespace of cluster 'east' in {a} (metricsNamespace;"
            " one cluster by the same kubeconfigContext 'ctx-east'); a gateway needs its own",
        )
    ]


def test_only_the_named_stacks_files_are_reported(tmp_path: Path) -> None:
    write_stack(tmp_path, stack="a", clusters={"c1": site("east")})
    b = write_stack(tmp_path, stack="b", clusters={"c1": site("west")})
    write_stack(tmp_path, stack="c", clusters={"c1": site("north")})
    first = write_gateway(tmp_path, "alpha", {"exposure": {"host": "grpc.example.org"}}, stack="a")
    second = write_gateway(tmp_path, "beta", {"exposure": {"host": "grpc.example.org"}}, stack="b")

    assert shared(tmp_path, "a") == [
        (first, "spec.exposure.host", host_clash("grpc.example.org", second, "c1", b))
    ]
    assert shared(tmp_path, "c") == []


def test_a_stack_that_does_not_load_is_left_to_its_own_validation(tmp_path: Path) -> None:
    write_stack(tmp_path, stack="a", clusters={"c1": site("east")})
    write_stack(tmp_path, stack="b", clusters={"c1": site("west")})
    write_gateway(tmp_path, "alpha", {"exposure": {"host": "grpc.example.org"}}, stack="a")
    write_gateway(
        tmp_path, "beta", {"exposure": {"host": "grpc.example.org"}, "replicas": 0}, stack="b"
    )

    assert shared(tmp_path, "a") == []


def test_cli_validate_all_names_both_files_of_a_cross_stack_clash(tmp_path: Path) -> None:
    a = write_stack(tmp_path, stack="a", clusters={"c1": site("east")})
    b = write_stack(
        tmp_path, stack="b", clusters={"c1": site("west", kubeconfigContext="ctx-east")}
    )
    first = write_gateway(tmp_path, "alpha", {"namespace": "tenant"}, stack="a")
    second = write_gateway(tmp_path, "beta", {"namespace": "tenant"}, stack="b")
    reason = "the same kubeconfigContext 'ctx-east'"
    out = tmp_path / "out"

    validated = run_cli("--root", str(tmp_path), "validate", "--all")
    rendered = run_cli("--root", str(tmp_path), "render", "--all", "--out", str(out), "-q")
    one = run_cli("--root", str(tmp_path), "validate", "b")

    assert (validated.code, rendered.code, one.code) == (2, 2, 2)
    assert validated.err.splitlines() == [
        f"error: {first}: spec.namespace:"
        f" {namespace_clash('tenant', 'c1', second, 'c1', b, reason)}",
        f"error: {second}: spec.namespace:"
        f" {namespace_clash('tenant', 'c1', first, 'c1', a, reason)}",
        "2 problem(s); nothing written",
    ]
    assert rendered.err == validated.err
    assert not out.exists()
    assert one.err.splitlines() == [
        validated.err.splitlines()[1],  # b's file; it names a's
        "1 problem(s); nothing written",
    ]


# --- a generated repository of two stacks, against an oracle ---------------------------------


def expected_fields(plan: dict[str, dict[str, Any]]) -> list[tuple[str, str]]:
    """The fields each gateway must be told about, from the rules as documented."""
    a, b = plan["a"], plan["b"]
    host = {s: p["host"] or f"gw-{p['namespace']}.{p['domain']}" for s, p in plan.items()}
    found = []
    if (a["context"] == b["context"] or a["domain"] == b["domain"]) and (
        a["namespace"] == b["namespace"]
    ):
        found.append("spec.namespace")
    if a["port"] == b["port"] and a["database"] == b["database"]:
        found.append("spec.databaseName")
    if host["a"] == host["b"]:
        found.append("spec.exposure.host")
    # No host is under the other stack's base domain only: vanity hosts are outside both, a
    # slot is under its own. No name is a configured namespace or the admin role.
    return sorted((f"gateways/{s}/{s}.yaml", f) for s in ("a", "b") for f in found)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(two_stacks())
def test_generated_pairs_of_stacks_are_told_exactly_what_they_share(
    plan: dict[str, dict[str, Any]],
) -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        for stack, p in plan.items():
            server = {"adminHost": "pg.example.com", "adminPort": p["port"]}
            write_stack(
                root,
                stack=stack,
                clusters={
                    "c1": site(
                        stack,
                        kubeconfigContext=p["context"],
                        baseDomain=p["domain"],
                        database=server,
                    )
                },
            )
            spec: dict[str, Any] = {"namespace": p["namespace"], "databaseName": p["database"]}
            if p["host"] is not None:
                spec["exposure"] = {"host": p["host"]}
            write_gateway(root, stack, spec, stack=stack)
        problems = inventory.coverage_problems(root, ["a", "b"])
    assert all(isinstance(p, Problem) for p in problems)
    assert sorted({(p.path, p.field) for p in problems}) == expected_fields(plan)
    assert len(problems) == len(expected_fields(plan))

"""The stacks of one repository together (``gatewayctl.resolve.inventory``, run by ``validate`` and
``render`` for the stacks they name).

A shared inventory: stacks reading one declarations directory select their gateways by
cluster and labels, and each gateway is taken by exactly one stack. Across stacks: hosts,
namespaces per cluster and roles and databases per database server are unique, and no
gateway takes another stack's base domain, configured namespaces or admin role. Each
problem is ``path: field: problem``, exit 2.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from components import tokens
from gatewayctl.cli import main as cli
from gatewayctl.engine import render
from gatewayctl.errors import InvalidInputError, Problem
from gatewayctl.inputs import stackfile
from gatewayctl.resolve import inventory, preparation, sharing
from gatewayctl.resolve.stack import load_stack
from tests.builders import (
    DROP,
    cluster,
    copy_stack,
    edited_config,
    write_gateway,
    write_stack,
)
from tests.hostile_helpers import run_cli, unlocated
from tests.strategies import two_stacks
from tests.support import ROOT

OWN_DATABASE = "a gateway needs a role and database of its own"


# --- a shared inventory: selectors and coverage ---------------------------------------------

INVENTORY = "inventory/gateways"


def keyed_cluster(domain: str) -> dict[str, Any]:
    """A cluster known by its key alone (no kubeconfigContext) on the database server
    db.example.com."""
    return cluster(baseDomain=domain, kubeconfigContext=DROP, database={"host": "db.example.com"})


def inventory_stack(
    root: Path, name: str, clusters: list[str], labels: dict[str, str] | None
) -> None:
    """``Pulumi.<name>.yaml`` reading the shared inventory, with ``labels`` as its selector."""
    write_stack(
        root,
        stack=name,
        clusters={c: keyed_cluster(f"{c}.example.com") for c in clusters},
        secrets={c: {"dbAdminPassword": "x"} for c in clusters},
        selector=labels,
        directory=INVENTORY,
    )


def inventory_gateway(root: Path, name: str, cluster_name: str, labels: dict[str, str]) -> str:
    # No Keycloak on these clusters: the gateways say that no person signs in (validate).
    spec = {"cluster": cluster_name, "signIn": "none"}
    return write_gateway(root, name, spec, directory=INVENTORY, labels=labels)


@pytest.fixture
def fleet(tmp_path: Path) -> Path:
    """Two clusters split over three stacks: gold and standard tenants on east, all of west."""
    inventory_stack(tmp_path, "east-gold", ["east"], {"tier": "gold"})
    inventory_stack(tmp_path, "east-standard", ["east"], {"tier": "standard"})
    inventory_stack(tmp_path, "west", ["west"], {})
    inventory_gateway(tmp_path, "a", "east", {"tier": "gold"})
    inventory_gateway(tmp_path, "b", "east", {"tier": "standard"})
    inventory_gateway(tmp_path, "c", "west", {"tier": "gold"})
    inventory_gateway(tmp_path, "d", "west", {})
    return tmp_path


def names(root: Path, stack: str) -> list[str]:
    return [g.name for g in load_stack(root, stack).gateways]


SHARING = "stacks sharing declarations need a selector each (a shared inventory)"


def test_each_stack_takes_its_clusters_and_labels(fleet: Path) -> None:
    assert names(fleet, "east-gold") == ["a"]
    assert names(fleet, "east-standard") == ["b"]
    assert names(fleet, "west") == ["c", "d"]
    assert inventory.coverage_problems(fleet, ["west"]) == []


def test_a_gateway_taken_by_no_stack_is_reported(fleet: Path) -> None:
    source = inventory_gateway(fleet, "e", "east", {"tier": "bronze"})
    problems = inventory.coverage_problems(fleet, ["east-gold"])
    assert [(p.path, p.field, p.message) for p in problems] == [
        (
            source,
            "metadata.labels",
            f"taken by no stack of the inventory {INVENTORY}"
            " (stacks: east-gold, east-standard, west)",
        )
    ]


def test_a_gateway_taken_by_two_stacks_is_reported(fleet: Path) -> None:
    inventory_stack(fleet, "east-all", ["east"], {})
    problems = inventory.coverage_problems(fleet, ["west"])
    assert [(p.path, p.message) for p in problems] == [
        (
            f"{INVENTORY}/a.yaml",
            "taken by stacks east-all and east-gold; a gateway belongs to exactly one",
        ),
        (
            f"{INVENTORY}/b.yaml",
            "taken by stacks east-all and east-standard; a gateway belongs to exactly one",
        ),
    ]


def test_stacks_sharing_declarations_without_selectors_are_reported(tmp_path: Path) -> None:
    # The three read one directory, spelled two ways: compared by resolved path.
    inventory_stack(tmp_path, "one", ["east"], None)
    inventory_stack(tmp_path, "two", ["east"], None)
    inventory_stack(tmp_path, "three", ["east"], None)
    three = tmp_path / "Pulumi.three.yaml"
    three.write_text(three.read_text().replace(INVENTORY, f"./{INVENTORY}/"))
    inventory_gateway(tmp_path, "a", "east", {})
    problems = inventory.coverage_problems(tmp_path, ["one"])
    assert [str(p) for p in problems] == [
        "Pulumi.one.yaml: declarationsDir: 'inventory/gateways' is also read by"
        f" Pulumi.three.yaml and Pulumi.two.yaml; {SHARING}",
        "Pulumi.three.yaml: declarationsDir: './inventory/gateways/' is also read by"
        f" Pulumi.one.yaml and Pulumi.two.yaml; {SHARING}",
        "Pulumi.two.yaml: declarationsDir: 'inventory/gateways' is also read by"
        f" Pulumi.one.yaml and Pulumi.three.yaml; {SHARING}",
    ]


def test_a_stack_without_selector_in_a_shared_inventory_is_reported(fleet: Path) -> None:
    inventory_stack(fleet, "east-all", ["east"], None)  # takes every declaration of the directory
    problems = inventory.coverage_problems(fleet, ["east-all"])
    assert [str(p) for p in problems] == [
        "Pulumi.east-all.yaml: declarationsDir: 'inventory/gateways' is also read by"
        f" Pulumi.east-gold.yaml, Pulumi.east-standard.yaml and Pulumi.west.yaml; {SHARING}",
        f"{INVENTORY}/a.yaml: metadata.labels: taken by stacks east-all and east-gold;"
        " a gateway belongs to exactly one",
        f"{INVENTORY}/b.yaml: metadata.labels: taken by stacks east-all and east-standard;"
        " a gateway belongs to exactly one",
        f"{INVENTORY}/c.yaml: metadata.labels: taken by stacks east-all and west;"
        " a gateway belongs to exactly one",
        f"{INVENTORY}/d.yaml: metadata.labels: taken by stacks east-all and west;"
        " a gateway belongs to exactly one",
    ]


def test_a_symlinked_declarations_directory_is_the_same_inventory(tmp_path: Path) -> None:
    inventory_stack(tmp_path, "one", ["east"], None)
    inventory_stack(tmp_path, "two", ["east"], None)
    two = tmp_path / "Pulumi.two.yaml"
    two.write_text(two.read_text().replace(INVENTORY, "alias"))
    (tmp_path / INVENTORY).mkdir(parents=True, exist_ok=True)
    (tmp_path / "alias").symlink_to(tmp_path / INVENTORY, target_is_directory=True)
    problems = inventory.coverage_problems(tmp_path, ["two"])
    assert [(p.path, p.field) for p in problems] == [
        ("Pulumi.one.yaml", "declarationsDir"),
        ("Pulumi.two.yaml", "declarationsDir"),
    ]
    assert problems[1].message == f"'alias' is also read by Pulumi.one.yaml; {SHARING}"


def test_cli_validate_fails_on_a_copied_stack_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `cp Pulumi.ibm.yaml Pulumi.prod.yaml`: both stacks would manage every ibm gateway.
    copy_stack("ibm", tmp_path)
    assert cli.main(["--root", str(tmp_path), "validate", "--all"]) == 0
    shutil.copy(ROOT / "Pulumi.ibm.yaml", tmp_path / "Pulumi.prod.yaml")
    capsys.readouterr()
    assert cli.main(["--root", str(tmp_path), "validate", "--all"]) == 2
    assert unlocated(capsys.readouterr().err).splitlines() == [
        "error: Pulumi.ibm.yaml: declarationsDir: 'gateways/ibm' is also read by"
        f" Pulumi.prod.yaml; {SHARING}",
        "error: Pulumi.prod.yaml: declarationsDir: 'gateways/ibm' is also read by"
        f" Pulumi.ibm.yaml; {SHARING}",
        "2 problem(s); nothing written",
    ]
    # A directory of its own with the same gateways on the same cluster and database server:
    # each gateway's namespace, role, database and host would have two owners.
    shutil.copytree(ROOT / "gateways" / "ibm", tmp_path / "gateways" / "prod")
    prod = tmp_path / "Pulumi.prod.yaml"
    prod.write_text(prod.read_text().replace("gateways/ibm", "gateways/prod"))
    capsys.readouterr()
    assert cli.main(["--root", str(tmp_path), "validate", "--all"]) == 2
    err = unlocated(capsys.readouterr().err).splitlines()
    # ... each gateway's Keycloak client two owners on the one realm (10 of the 36), and
    # research's Vault role and mount (4).
    assert err[-1] == "36 problem(s); nothing written"
    assert sum("on the same Keycloak realm" in line for line in err) == 10
    assert sum(": spec.credentials.vault." in line for line in err) == 4
    assert err[0].startswith(
        "error: gateways/ibm/batch-jobs.yaml: spec.databaseName: database"
        " 'gw_batch_jobs' on server "
    )
    assert err[0].endswith(
        " is also used by gateways/prod/batch-jobs.yaml (cluster 'roks-us-east' of"
        " Pulumi.prod.yaml)"
    )
    # On a cluster, database server and Keycloak realm of its own, the copy is fine.
    text = prod.read_text()
    for old, new in (
        ("hysh-ibm-01/", "hysh-ibm-02/"),  # kubeconfigContext
        ("hysh-ibm-01-", "hysh-ibm-02-"),  # baseDomain
        ("5e4b1c7a-", "6f5c2d8b-"),  # the database server
        ("realm: hypershell", "realm: hypershell-prod"),  # the Keycloak realm
    ):
        assert old in text
        text = text.replace(old, new)
    prod.write_text(text)
    # A Vault of its own too: one Vault server is one whatever the clusters.
    research = tmp_path / "gateways" / "prod" / "research.yaml"
    research.write_text(research.read_text().replace("https://5f2b9c1e-", "https://7a8b9c0d-"))
    capsys.readouterr()
    assert cli.main(["--root", str(tmp_path), "validate", "--all"]) == 2
    # DNS is global: one vanity host, one owner.
    assert unlocated(capsys.readouterr().err).splitlines() == [
        "error: gateways/ibm/research.yaml: spec.exposure.host: host"
        " 'openshell.research.example.org' is also used by gateways/prod/research.yaml"
        " (cluster 'roks-us-east' of Pulumi.prod.yaml)",
        "error: gateways/prod/research.yaml: spec.exposure.host: host"
        " 'openshell.research.example.org' is also used by gateways/ibm/research.yaml"
        " (cluster 'roks-us-east' of Pulumi.ibm.yaml)",
        "2 problem(s); nothing written",
    ]
    research.write_text(research.read_text().replace("openshell.research", "prod.research"))
    assert cli.main(["--root", str(tmp_path), "validate", "--all"]) == 0


def test_inventories_not_read_by_the_requested_stacks_are_not_checked(fleet: Path) -> None:
    inventory_gateway(fleet, "e", "east", {"tier": "bronze"})
    write_stack(
        fleet, stack="solo", clusters={"solo": keyed_cluster("solo.example.com")}, secrets=DROP
    )
    assert inventory.coverage_problems(fleet, ["solo"]) == []


def test_inventory_declarations_must_name_their_cluster(fleet: Path) -> None:
    path = fleet / INVENTORY / "f.yaml"
    path.write_text(
        "apiVersion: hypershell.redhat.io/v1alpha1\nkind: Gateway\nmetadata:\n  name: f\n"
    )
    with pytest.raises(InvalidInputError) as caught:
        load_stack(fleet, "west")
    assert [str(p) for p in caught.value.problems] == [
        f"{INVENTORY}/f.yaml: spec.cluster: required in a shared inventory"
    ]


def test_bad_labels_are_reported(fleet: Path) -> None:
    inventory_gateway(fleet, "g", "west", {"tier": "not a value!"})
    with pytest.raises(InvalidInputError) as caught:
        load_stack(fleet, "west")
    assert [str(p) for p in caught.value.problems] == [
        f"{INVENTORY}/g.yaml: metadata.labels.tier: 'not a value!' is not a Kubernetes label value"
    ]


def test_the_program_reads_the_selector_from_pulumi_config(fleet: Path) -> None:
    # The render hands the stack's config to gatewayctl.engine.program.main() as the CLI would.
    rendered = render.execute(preparation.prepare(fleet, "east-gold"))
    assert [g.name for g in rendered.gateways] == ["a"]
    gateways = {r.name for r in rendered.recording.resources.values() if r.type == tokens.GATEWAY}
    assert gateways == {"a"}


def test_cli_validate_fails_on_an_orphan_gateway(
    fleet: Path, capsys: pytest.CaptureFixture[str]
) -> None:

    assert cli.main(["--root", str(fleet), "validate", "--all"]) == 0
    capsys.readouterr()  # its notes are on stderr too
    inventory_gateway(fleet, "e", "east", {"tier": "bronze"})
    assert cli.main(["--root", str(fleet), "validate", "west"]) == 2
    err = unlocated(capsys.readouterr().err).splitlines()
    assert err == [
        f"error: {INVENTORY}/e.yaml: metadata.labels: taken by no stack of the inventory"
        f" {INVENTORY} (stacks: east-gold, east-standard, west)",
        "1 problem(s); nothing written",
    ]


# --- names, hosts and databases across stacks -----------------------------------------------


def site(name: str, **changes: Any) -> dict[str, Any]:
    """A cluster of its own: its own context, base domain and database server."""
    own = {
        "kubeconfigContext": f"ctx-{name}",
        "baseDomain": f"{name}.example.com",
        "database": {"adminHost": f"db-{name}.example.com"},
    }
    return cluster(**{**own, **changes})


def shared(root: Path, *stacks: str) -> list[tuple[str, str, str]]:
    wanted = stacks or stackfile.all_stacks(root)
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


def slot_message(host: str, domain: str, config: str, own: str, own_config: str) -> str:
    return (
        f"host {host!r} is under the base domain {domain!r} of cluster 'c1' in {config}; a"
        f" gateway on {own!r} of {own_config} may not use it"
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


SSO = {"url": "https://sso.example.com", "realm": "hypershell", "adminClientId": "provisioner"}


def _keycloak_stack(root: Path, stack: str, admin: str = "provisioner") -> str:
    server = {**SSO, "adminClientId": admin}
    return write_stack(
        root,
        stack=stack,
        clusters={"c1": site(stack, identity={"keycloak": server})},
        secrets={"c1": {"dbAdminPassword": "pw", "keycloakAdminClientSecret": "kc"}},
    )


def test_client_ids_are_unique_across_the_stacks_of_one_keycloak_realm(tmp_path: Path) -> None:
    a = _keycloak_stack(tmp_path, "a")
    b = _keycloak_stack(tmp_path, "b", admin="provisioner-b")
    first = write_gateway(tmp_path, "alpha", {"console": {"enabled": True}}, stack="a")
    # In b: beta takes a's gateway client, gamma a's console client, delta a's admin client.
    second = write_gateway(
        tmp_path, "beta", {"keycloak": {"clientId": "openshell-alpha"}}, stack="b"
    )
    third = write_gateway(
        tmp_path, "gamma", {"keycloak": {"clientId": "openshell-alpha-console"}}, stack="b"
    )
    fourth = write_gateway(tmp_path, "delta", {"keycloak": {"clientId": "provisioner"}}, stack="b")

    assert sorted(shared(tmp_path, "b")) == [
        (
            second,
            "spec.keycloak.clientId",
            f"client 'openshell-alpha' of realm 'hypershell' is also used by {first} (cluster"
            f" 'c1' of {a}, on the same Keycloak realm)",
        ),
        (
            fourth,
            "spec.keycloak.clientId",
            f"client 'provisioner' of realm 'hypershell' is the admin client Pulumi signs in"
            f" with for {a} (identity.keycloak.adminClientId of cluster 'c1'); the gateway would"
            " take it over, and deleting the gateway would delete it",
        ),
        (
            third,
            "spec.keycloak.clientId",
            f"client 'openshell-alpha-console' of realm 'hypershell' is also used by {first}"
            f" (the client of its web console) (cluster 'c1' of {a}, on the same Keycloak"
            " realm)",
        ),
    ]
    assert sorted((path, field) for path, field, _ in shared(tmp_path, "a")) == [
        (first, "spec.console.enabled"),
        (first, "spec.keycloak.clientId"),
    ]
    assert b  # the second stack's file, named by a's problems
    # Another realm on the same server shares nothing.
    with edited_config(tmp_path, "b") as config:
        config["hypershell-gateways:clusters"]["c1"]["identity"]["keycloak"]["realm"] = "other"
    assert shared(tmp_path, "b") == []


def test_cli_validate_all_names_both_files_of_a_cross_stack_clash(tmp_path: Path) -> None:
    a = write_stack(tmp_path, stack="a", clusters={"c1": site("east")})
    b = write_stack(
        tmp_path, stack="b", clusters={"c1": site("west", kubeconfigContext="ctx-east")}
    )
    # Sandbox-only gateways: validate would also say, with the clash, that no one signs in.
    quiet = {"namespace": "tenant", "signIn": "none"}
    first = write_gateway(tmp_path, "alpha", quiet, stack="a")
    second = write_gateway(tmp_path, "beta", quiet, stack="b")
    reason = "the same kubeconfigContext 'ctx-east'"
    out = tmp_path / "out"

    validated = run_cli("--root", str(tmp_path), "validate", "--all")
    rendered = run_cli("--root", str(tmp_path), "render", "--all", "--out", str(out), "-q")
    one = run_cli("--root", str(tmp_path), "validate", "b")

    assert (validated.code, rendered.code, one.code) == (2, 2, 2)
    assert unlocated(validated.err).splitlines() == [
        f"error: {first}: spec.namespace:"
        f" {namespace_clash('tenant', 'c1', second, 'c1', b, reason)}",
        f"error: {second}: spec.namespace:"
        f" {namespace_clash('tenant', 'c1', first, 'c1', a, reason)}",
        "2 problem(s); nothing written",
    ]
    assert rendered.err == validated.err
    assert not out.exists()
    assert unlocated(one.err).splitlines() == [
        unlocated(validated.err).splitlines()[1],  # b's file; it names a's
        "1 problem(s); nothing written",
    ]


def test_stacks_already_loaded_are_compared_without_loading_them_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``render``/``validate`` hand the stacks they validated to the checks across stacks
    (``cli.prepared._prepare_all``): only the others are loaded again, and the problems are the
    same."""
    write_stack(tmp_path, stack="a", clusters={"east": site("east")})
    b = write_stack(
        tmp_path, stack="b", clusters={"main": site("other", kubeconfigContext="ctx-east")}
    )
    write_stack(tmp_path, stack="c", clusters={"far": site("far")})
    first = write_gateway(tmp_path, "alpha", {"namespace": "tenant"}, stack="a")
    second = write_gateway(tmp_path, "beta", {"namespace": "tenant"}, stack="b")
    write_gateway(tmp_path, "gamma", {"namespace": "tenant"}, stack="c")
    loaded: list[str] = []

    def counted(root: Path, stack: str, *args: Any) -> Any:
        loaded.append(stack)
        return load_stack(root, stack, *args)

    monkeypatch.setattr(sharing, "load_stack", counted)
    found = inventory.coverage_problems(tmp_path, ["a"])
    assert loaded == ["a", "b", "c"]
    loaded.clear()
    known = {"a": load_stack(tmp_path, "a"), "b": load_stack(tmp_path, "b")}
    assert inventory.coverage_problems(tmp_path, ["a"], known) == found
    assert loaded == ["c"]
    reason = "the same kubeconfigContext 'ctx-east'"
    assert [(p.path, p.message) for p in found] == [
        (first, namespace_clash("tenant", "east", second, "main", b, reason))
    ]


def test_render_all_loads_each_stack_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("a", "b", "c"):
        write_stack(tmp_path, stack=name, clusters={"c1": site(name)})
        write_gateway(tmp_path, f"gw-{name}", {"signIn": "none"}, stack=name)
    loaded: list[str] = []

    def counted(root: Path, stack: str, *args: Any) -> Any:
        loaded.append(stack)
        return load_stack(root, stack, *args)

    monkeypatch.setattr(sharing, "load_stack", counted)
    monkeypatch.setattr(preparation, "load_stack", counted)
    out = tmp_path / "out"
    code = cli.main(
        ["--root", str(tmp_path), "render", "--all", "--jobs", "1", "--out", str(out), "-q"]
    )

    assert code == 0
    assert sorted(loaded) == ["a", "b", "c"]
    assert sorted(p.name for p in out.iterdir()) == ["a", "b", "c"]


# --- a generated repository of two stacks, against an oracle --------------------------------


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

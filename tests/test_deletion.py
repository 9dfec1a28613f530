"""Deletion safety, proven on what the offline engine records.

``deletionPolicy: Retain`` registers the tenant's PostgreSQL role and database with
``retain_on_delete`` (``pulumi up`` after removing the declaration drops them from the state
but keeps them in PostgreSQL); ``Delete`` does not. Removing a declaration removes exactly
that gateway's resources: every other gateway's and every cluster-level resource keeps its URN
and its inputs, so the engine has nothing to replace or delete there. Adding one changes
nothing either.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from components import tokens
from gatewayctl.diff.compare import compare
from gatewayctl.diff.report import build_report
from gatewayctl.diff.sides import Side
from gatewayctl.engine import render
from gatewayctl.engine.offline import Recording
from gatewayctl.resolve import preparation
from tests.builders import (
    DECLARATIONS,
    EAST_DOMAIN,
    STACK,
    WEST_DOMAIN,
    cluster,
    copy_stack,
    gateway_api_cluster,
    write_gateway,
    write_stack,
)
from tests.hostile_helpers import descendants, facts, one_of_type
from tests.support import ROOT, STACKS

ROLE = "postgresql:index/role:Role"
DATABASE = "postgresql:index/database:Database"
GATEWAY = tokens.GATEWAY
CLUSTER = tokens.CLUSTER

EAST = cluster(baseDomain=EAST_DOMAIN)
WEST = gateway_api_cluster(baseDomain=WEST_DOMAIN)
THREE: dict[str, dict[str, Any]] = {
    "alpha": {"cluster": "east", "deletionPolicy": "Retain"},
    "bravo": {
        "cluster": "west",
        "deletionPolicy": "Delete",
        "exposure": {"host": "gw-openshell-bravo.west.example.com"},
    },
    "charlie": {
        "cluster": "east",
        "namespace": "legacy-charlie",
        "exposure": {"enabled": False},
        "replicas": 2,
    },
}


def project(root: Path, gateways: dict[str, dict[str, Any]]) -> Path:
    """Two clusters (route, gateway-api) and the given declarations."""
    write_stack(root, clusters={"east": EAST, "west": WEST})
    for name, spec in gateways.items():
        write_gateway(root, name, spec)
    return root


def rendered(root: Path, stack: str = STACK) -> render.Rendered:
    return render.execute(preparation.prepare(root, stack))


def gateway_urn(recording: Recording, name: str) -> str:
    return one_of_type(recording, GATEWAY, name).urn


def subtree(recording: Recording, name: str) -> set[str]:
    """The Gateway component ``name`` and its resources: everything registered under it, and
    its database owner's provider, a child of the stack (gatewayctl.ownership)."""
    urn = gateway_urn(recording, name)
    owner = (
        f"urn:pulumi:{recording_stack(urn)}::pulumi:providers:postgresql::{name}-database-db-owner"
    )
    assert owner in recording.resources and owner not in descendants(recording, urn)
    owned = {u for u, gateway in recording.gateways().items() if gateway == name}
    assert owned == descendants(recording, urn) | {owner}
    return {urn} | owned


def recording_stack(urn: str) -> str:
    """``<stack>::<project>`` of a URN."""
    return urn.split("::", 2)[0].removeprefix("urn:pulumi:") + "::" + urn.split("::", 2)[1]


def cluster_level(recording: Recording) -> dict[str, tuple[object, ...]]:
    """Cluster components, their providers and ClusterRoles, by URN."""
    urns: set[str] = set()
    for component in recording.of_type(CLUSTER):
        urns |= {component.urn} | descendants(recording, component.urn)
    return {urn: facts(recording.resources[urn]) for urn in sorted(urns)}


def retained(recording: Recording) -> list[tuple[str, str]]:
    """Retained resources of the gateways (the clusters' shared ClusterRoles are always kept)."""
    return sorted(
        (r.type, r.name)
        for r in recording.resources.values()
        if r.retain_on_delete and recording.ancestor_name(r, GATEWAY)
    )


def retained_outside_gateways(recording: Recording) -> list[tuple[str, str]]:
    return sorted(
        (r.type, r.name)
        for r in recording.resources.values()
        if r.retain_on_delete and not recording.ancestor_name(r, GATEWAY)
    )


def plan_without(plan_text: str, recording: Recording, urns: set[str], gone: str) -> Any:
    """``plan.json`` with the resources of ``urns`` and the gateway ``gone`` left out."""
    plan = json.loads(plan_text)
    keys = {(r.type, r.name, r.parent) for urn, r in recording.resources.items() if urn in urns}
    plan["resources"] = [
        r for r in plan["resources"] if (r["type"], r["name"], r["parent"]) not in keys
    ]
    plan["gateways"] = [g for g in plan["gateways"] if g["name"] != gone]
    return plan


# --- deletionPolicy -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("policy", "retain"),
    [("Retain", True), ("Delete", False), (None, True)],
    ids=["Retain", "Delete", "default"],
)
def test_deletion_policy_decides_whether_role_and_database_are_retained(
    tmp_path: Path, policy: str | None, retain: bool
) -> None:
    spec = {"deletionPolicy": policy} if policy is not None else {}
    recording = rendered(project(tmp_path, {"team-a": {"cluster": "east", **spec}})).recording

    role = one_of_type(recording, ROLE, "team-a-database-db-role")
    database = one_of_type(recording, DATABASE, "team-a-database-db")
    assert (role.retain_on_delete, database.retain_on_delete) == (retain, retain)
    assert role.inputs["name"] == database.inputs["name"] == "gw_team_a"
    # Nothing else is retained: a removed gateway's namespace, PKI and grants do go away.
    assert retained(recording) == (
        [(DATABASE, "team-a-database-db"), (ROLE, "team-a-database-db-role")] if retain else []
    )
    # Every tenant of a cluster is bound to its node-reader ClusterRole: never deleted.
    assert retained_outside_gateways(recording) == [
        ("kubernetes:rbac.authorization.k8s.io/v1:ClusterRolePatch", "east-node-reader"),
        ("kubernetes:rbac.authorization.k8s.io/v1:ClusterRolePatch", "west-node-reader"),
    ]
    assert [r.name for r in recording.resources.values() if r.protect] == []


def test_each_gateway_keeps_its_own_policy(tmp_path: Path) -> None:
    recording = rendered(project(tmp_path, THREE)).recording

    assert retained(recording) == [
        (DATABASE, "alpha-database-db"),
        (DATABASE, "charlie-database-db"),
        (ROLE, "alpha-database-db-role"),
        (ROLE, "charlie-database-db-role"),
    ]


def test_flipping_the_policy_changes_only_the_retain_flag(tmp_path: Path) -> None:
    # Were the policy part of any input, flipping it would make `pulumi up` replace (drop and
    # recreate) the tenant's database.
    retain = rendered(
        project(tmp_path / "retain", {"t1": {"cluster": "west", "deletionPolicy": "Retain"}})
    )
    delete = rendered(
        project(tmp_path / "delete", {"t1": {"cluster": "west", "deletionPolicy": "Delete"}})
    )

    before, after = retain.recording.resources, delete.recording.resources
    assert sorted(before) == sorted(after)
    changed = sorted(before[urn].name for urn in before if facts(before[urn]) != facts(after[urn]))
    assert changed == ["t1-database-db", "t1-database-db-role"]
    for urn in before:
        assert (before[urn].inputs, before[urn].type) == (after[urn].inputs, after[urn].type)
    assert {p for p in retain.files if p != "plan.json"} == {
        p for p in delete.files if p != "plan.json"
    }
    assert all(retain.files[p] == delete.files[p] for p in retain.files if p != "plan.json")


@pytest.mark.parametrize("stack", STACKS)
def test_committed_stacks_retain_exactly_the_databases_declared_retain(stack: str) -> None:
    loaded = preparation.prepare(ROOT, stack).loaded
    recording = rendered(ROOT, stack).recording

    expected = sorted(
        (type_, f"{g.name}-database-{suffix}")
        for g in loaded.gateways
        if g.args.retain_database
        for type_, suffix in ((ROLE, "db-role"), (DATABASE, "db"))
    )
    assert expected, f"stack {stack} declares no retained database"
    assert retained(recording) == expected


# --- removing and adding declarations -------------------------------------------------------


def assert_only_subtree_differs(
    smaller: render.Rendered, larger: render.Rendered, name: str
) -> None:
    """``larger`` is ``smaller`` plus the gateway ``name``, and nothing else differs."""
    few, many = smaller.recording, larger.recording
    extra = subtree(many, name)
    assert set(many.resources) - set(few.resources) == extra
    assert set(few.resources) <= set(many.resources)
    assert len(extra) >= 30, "a gateway is more than a handful of resources"
    changed = [
        urn for urn in few.resources if facts(few.resources[urn]) != facts(many.resources[urn])
    ]
    assert changed == []
    assert cluster_level(few) == cluster_level(many)
    assert len(cluster_level(few)) == 4 * len(few.of_type(CLUSTER))  # + k8s, postgres, role

    # What is written: the other gateways' manifests byte for byte, the plan minus this one.
    namespace = one_of_type(many, "kubernetes:core/v1:Namespace", f"{name}-ns").inputs["metadata"][
        "name"
    ]
    gone = set(larger.files) - set(smaller.files)
    assert set(smaller.files) <= set(larger.files)
    assert gone == {
        path
        for path in larger.files
        if f"/{namespace}/" in path
        or path.endswith(
            (
                f"/_cluster/namespace-{namespace}.yaml",
                f"/_cluster/clusterrolebinding-openshell-gateway-node-reader-{namespace}.yaml",
            )
        )
    }
    assert all(smaller.files[p] == larger.files[p] for p in smaller.files if p != "plan.json")
    assert json.loads(smaller.files["plan.json"]) == plan_without(
        larger.files["plan.json"], many, extra, name
    )


@pytest.mark.parametrize("removed", sorted(THREE))
def test_removing_a_declaration_removes_only_that_gateway(tmp_path: Path, removed: str) -> None:
    full = rendered(project(tmp_path, THREE))
    (tmp_path / DECLARATIONS / f"{removed}.yaml").unlink()
    reduced = rendered(tmp_path)

    assert [g.name for g in reduced.gateways] == sorted(set(THREE) - {removed})
    assert_only_subtree_differs(reduced, full, removed)


def test_removing_the_last_gateway_of_a_cluster_keeps_the_cluster(tmp_path: Path) -> None:
    full = rendered(project(tmp_path, THREE))
    (tmp_path / DECLARATIONS / "bravo.yaml").unlink()  # the only gateway on west
    reduced = rendered(tmp_path)

    west = {urn for urn in cluster_level(reduced.recording) if "::west" in urn}
    assert sorted(urn.rsplit("::", 1)[1] for urn in west) == [
        "west",
        "west-k8s",
        "west-node-reader",
        "west-postgres",
    ]
    assert "manifests/west/_cluster/clusterrole-openshell-gateway-node-reader.yaml" in (
        reduced.files
    )
    assert_only_subtree_differs(reduced, full, "bravo")


@pytest.mark.parametrize(
    ("added", "spec"),
    [
        ("aaa-first", {"cluster": "east"}),  # sorts before every existing gateway
        ("zulu", {"cluster": "west", "deletionPolicy": "Delete"}),
        ("delta", {"cluster": "east", "namespace": "legacy-delta", "exposure": {"enabled": False}}),
    ],
)
def test_adding_a_declaration_changes_nothing_of_the_others(
    tmp_path: Path, added: str, spec: dict[str, Any]
) -> None:
    before = rendered(project(tmp_path, THREE))
    write_gateway(tmp_path, added, spec)
    after = rendered(tmp_path)

    assert [g.name for g in after.gateways] == sorted({*THREE, added})
    assert_only_subtree_differs(before, after, added)


@pytest.mark.parametrize(
    ("stack", "removed"),
    [
        ("aws", "payments"),
        ("aws", "search"),
        ("ibm", "team-a"),
        ("ibm", "batch-jobs"),
        ("local", "dev"),
    ],
)
def test_removing_a_committed_declaration_removes_only_that_gateway(
    tmp_path: Path, stack: str, removed: str
) -> None:
    root = copy_stack(stack, tmp_path)
    full = rendered(root, stack)
    (root / "gateways" / stack / f"{removed}.yaml").unlink()
    reduced = rendered(root, stack)

    assert removed in [g.name for g in full.gateways]
    assert len(reduced.gateways) == len(full.gateways) - 1
    assert_only_subtree_differs(reduced, full, removed)


# --- the diff calls a dropped database data loss (issue 25 item 5) --------------------------

LOSS = (
    "gateway `bravo` is removed and its deletionPolicy is Delete: the next `up` drops its"
    " PostgreSQL database `gw_bravo` and its role, and everything the gateway stored in them;"
    " nothing of it is left on the server. To keep them, set `deletionPolicy: Retain` and run"
    " `pulumi up` before the removal."
)


def secrets_lost(gateway: str, namespace: str) -> str:
    return (
        f"gateway `{gateway}` is removed: namespace `{namespace}` is deleted with every Secret in"
        " it: `openshell-client-tls` (the client certificate and key),"
        " `openshell-gateway-credential-kek` (the KEK), `openshell-gateway-db-credentials` (the"
        " database password), `openshell-gateway-jwt-keys` (the JWT signing key),"
        " `openshell-server-tls` (the server certificate and key). The stack's state forgets"
        " them too: declared again, the gateway gets new ones"
    )


def test_removing_a_gateway_whose_policy_is_delete_is_data_loss_in_the_diff(
    tmp_path: Path,
) -> None:
    root = project(tmp_path, THREE)
    full = Side(files=rendered(root).files)
    (root / DECLARATIONS / "bravo.yaml").unlink()
    without_bravo = Side(files=rendered(root).files)

    diff = compare(STACK, full, without_bravo)

    assert diff.data_loss == (
        secrets_lost("bravo", "openshell-bravo"),
        "gateway `bravo` is removed: its KEK Secret `openshell-gateway-credential-kek` is deleted"
        " with the namespace, and the credentials it encrypts go with the database `gw_bravo`",
        LOSS,
    )
    assert diff.left_behind == (
        "gateway `bravo` is removed: host `gw-openshell-bravo.west.example.com` stops routing"
        " (its GRPCRoute is deleted); the base domain's wildcard DNS record still resolves it,"
        " to the cluster's shared Gateway, which routes it nowhere",
    )
    # The database goes by declaration: nothing to refuse (issue 45 item 2).
    assert diff.key_only_copies == ()
    report = build_report([diff], base_label="b", command="c")
    # In the risks, before every stack's summary: kept however short the report is cut.
    risks, summary = report.split("## Offline diff: stack", 1)
    assert risks.startswith("## Risks\n\n**Destroys** (4):\n\n")
    assert f"\n- stack `{STACK}`: **data loss**: {LOSS}\n" in risks
    assert "| `bravo` | removed |" in summary.split("**Kubernetes objects:**")[0]


def kek_lost(gateway: str, namespace: str) -> str:
    return (
        f"gateway `{gateway}` is removed: its KEK Secret `openshell-gateway-credential-kek` is"
        " deleted with the namespace: the only copy of the key the credentials stored in its"
        f" database `gw_{gateway}` are encrypted with, and the database is retained: without the"
        f" key they can no longer be read. Export it first (`kubectl -n {namespace} get secret"
        " openshell-gateway-credential-kek -o yaml`) and say so in `deploy/decommissions.yaml`"
    )


def database_left(gateway: str) -> str:
    return (
        f"gateway `{gateway}` is removed: its PostgreSQL database `gw_{gateway}` and its role"
        " stay on the server (deletionPolicy Retain), managed by no stack: export or drop them"
        " by hand"
    )


def test_removing_a_gateway_whose_policy_is_retain_keeps_its_database_but_not_its_key(
    tmp_path: Path,
) -> None:
    """Issue 42 item 5: the database stays, orphaned, and the key its stored credentials are
    encrypted with is deleted with the namespace; both are risks."""
    root = project(tmp_path, THREE)
    full = Side(files=rendered(root).files)
    for name in ("alpha", "charlie"):  # Retain, written and by default
        (root / DECLARATIONS / f"{name}.yaml").unlink()

    diff = compare(STACK, full, Side(files=rendered(root).files))

    assert [g.name for g in diff.gateways if g.status == "removed"] == ["alpha", "charlie"]
    assert diff.data_loss == (
        secrets_lost("alpha", "openshell-alpha"),
        kek_lost("alpha", "openshell-alpha"),
        secrets_lost("charlie", "legacy-charlie"),
        kek_lost("charlie", "legacy-charlie"),
    )
    assert diff.left_behind == (
        database_left("alpha"),
        "gateway `alpha` is removed: host `gw-openshell-alpha.east.example.com` stops routing"
        " (its Route is deleted); the base domain's wildcard DNS record still resolves it, to"
        " the cluster's router, which routes it nowhere",
        database_left("charlie"),
    )
    assert diff.key_only_copies == ("alpha", "charlie")
    report = build_report([diff], base_label="b", command="c")
    assert "drops its PostgreSQL database" not in report
    assert "**Leaves behind** (3):" in report
    assert f"- stack `{STACK}`: {database_left('alpha')}" in report


def test_a_driver_switch_is_a_risk_for_the_data_of_the_driver_it_leaves(tmp_path: Path) -> None:
    """Issue 42 item 5: off ``kek``, the key Secret is deleted (the report used to say "None:
    nothing is destroyed"); off ``vault``, what the gateway stored in Vault stays there."""
    vault = {
        "driver": "vault",
        "vault": {"address": "https://vault.example.com", "role": "openshell-alpha"},
    }
    root = project(tmp_path, {"alpha": {**THREE["alpha"], "credentials": vault}})
    on_vault = Side(files=rendered(root).files)
    write_gateway(root, "alpha", THREE["alpha"])  # back to the default, kek
    on_kek = Side(files=rendered(root).files)

    off_vault = compare(STACK, on_vault, on_kek)
    assert off_vault.data_loss == ()
    assert off_vault.left_behind == (
        "gateway `alpha`: the credentials it stored in Vault `https://vault.example.com` (KV"
        " mount `secret`) stay there, no longer read by it",
    )
    off_kek = compare(STACK, on_kek, on_vault)
    assert off_kek.data_loss == (
        "gateway `alpha`: its KEK Secret `openshell-gateway-credential-kek` is deleted: the"
        " credentials stored in its database are encrypted with that key and can no longer be"
        " read. Export the key first (`kubectl get secret` in the gateway's namespace) to keep"
        " them",
    )
    assert off_kek.left_behind == ()
    report = build_report([off_kek], base_label="b", command="c")
    assert "None: nothing is destroyed" not in report
    assert report.startswith("## Risks\n\n**Destroys** (1):\n\n")


def test_a_working_tree_without_the_stack_deletes_nothing(tmp_path: Path) -> None:
    full = Side(files=rendered(project(tmp_path, THREE)).files)

    diff = compare(STACK, full, Side(files={}, note="has no stack `test`"))

    assert [g.status for g in diff.gateways] == ["removed"] * 3
    assert diff.data_loss == ()

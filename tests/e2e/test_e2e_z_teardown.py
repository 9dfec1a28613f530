"""Stacks that share one cluster, and a node-reader ClusterRole that existed before them
(applied from upstream's own template, as upstream's reconciler leaves it): every `up`
succeeds, and destroying one stack leaves the shared role to the others.

Runs last (the file name sorts after the others): it destroys ``e2e-route``, whose
``deletionPolicy: Delete`` gateway (``batch-jobs``) loses its PostgreSQL role and database
with the stack while the ``Retain`` ones (the default) keep theirs
(docs/upstream-differences.md, "6. Declarative, and tenant data retained"), on the stack's own
PostgreSQL (tests/e2e/databases.py).
"""

from __future__ import annotations

import json

from e2e.cluster import Cluster, KubectlError
from e2e.engine import Engine
from tests.e2e.conftest import NODE_READER
from tests.e2e.databases import LaneDatabases
from tests.e2e.lane import Deployed, export, pulumi, rendered

DATABASE = "postgresql:index/database:Database"


def _bindings(cluster: Cluster) -> set[str]:
    items = cluster.get("clusterrolebindings")["items"]
    return {i["metadata"]["name"] for i in items if i["roleRef"]["name"] == NODE_READER}


def test_stacks_share_the_cluster_and_the_preexisting_role(
    deployed: dict[str, Deployed], cluster: Cluster
) -> None:
    assert all(run.up.returncode == 0 for run in deployed.values())
    role = json.loads(
        cluster.kubectl("get", "clusterrole", NODE_READER, "-o", "json", "--show-managed-fields")
    )
    managers = {m["manager"] for m in role["metadata"].get("managedFields", [])}
    # kubectl (upstream's template) and the stacks' server-side apply Patches, side by side.
    assert "kubectl-client-side-apply" in managers or "kubectl" in managers, managers
    assert any(m.startswith("pulumi") for m in managers), managers
    tenants = {
        f"{NODE_READER}-openshell-{name}" for name in ("dev", "dev-build", "offline", "team-a")
    }
    assert tenants <= _bindings(cluster)


def _tenants(databases: LaneDatabases, stack: str) -> dict[str, str]:
    """Tenant database → its owner, on the stack's server."""
    with databases.by_stack[stack].superuser() as su:
        rows = su.execute(
            "SELECT datname, pg_get_userbyid(datdba) FROM pg_database WHERE datname LIKE 'gw\\_%'"
        ).fetchall()
        roles = {r[0] for r in su.execute("SELECT rolname FROM pg_roles").fetchall()}
    return {str(name): str(owner) for name, owner in rows if owner in roles}


def test_destroying_one_stack_leaves_the_shared_role(
    deployed: dict[str, Deployed],
    engine: Engine,
    cluster: Cluster,
    kube_env: dict[str, str],
    databases: LaneDatabases,
) -> None:
    route = deployed["e2e-route"].project
    plan = json.loads(rendered(route).files["plan.json"])["resources"]
    retained = {r["inputs"]["name"]: r["retainOnDelete"] for r in plan if r["type"] == DATABASE}
    assert sorted(retained.values()) == [False, True, True, True]  # batch-jobs: Delete
    assert _tenants(databases, route.stack) == {name: name for name in retained}
    before = _bindings(cluster)
    result = pulumi(engine, route, kube_env, "destroy", "--yes", "--skip-preview", program=False)
    assert result.returncode == 0
    assert export(engine, route, kube_env)["deployment"].get("resources") in (None, [])
    # Delete: role and database dropped; Retain: both kept, the database still the role's.
    kept = {name: name for name, retain in retained.items() if retain}
    assert _tenants(databases, route.stack) == kept
    with databases.by_stack[route.stack].superuser() as su:
        roles = {r[0] for r in su.execute("SELECT rolname FROM pg_roles").fetchall()}
    assert {name for name in retained if name in roles} == set(kept)
    role = cluster.get("clusterrole", NODE_READER)
    assert [r["resources"] for r in role["rules"]] == [["tokenreviews"], ["nodes"], ["namespaces"]]
    after = _bindings(cluster)
    gone = before - after
    assert gone and all(name.startswith(f"{NODE_READER}-openshell-") for name in gone)
    assert f"{NODE_READER}-openshell-dev" in after  # e2e-local's tenants keep their binding
    try:
        namespace = cluster.get("namespace", "openshell-team-a")
        assert namespace["status"]["phase"] == "Terminating"
    except KubectlError:
        pass  # already gone

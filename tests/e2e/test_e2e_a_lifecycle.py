"""preview, up, a second up, refresh: the program under the real engine, three stacks.

The stacks: ``e2e-local`` (the committed ``local`` stack: auto → no ingress, console, Vault
driver), ``e2e-route`` (``ibm``: OpenShift Route mode, Route CRD installed) and ``e2e-gwapi``
(``aws``' first cluster: Gateway API mode, the CRDs and a shared Gateway installed). Routes,
GRPCRoutes and HTTPRoutes are awaited by the program (``pulumi.com/waitFor``); their status is
set by ``StatusStandIn``, standing in for the OpenShift router and a Gateway API
implementation, which cannot run here.
"""

from __future__ import annotations

import base64
import json
from collections import Counter
from typing import Any

import pytest

from components import naming
from e2e.cluster import Cluster
from e2e.engine import Engine
from e2e.project import DATABASE_CA
from gatewayctl.inputs.secrets import REDACTED
from tests.e2e import fidelity, made
from tests.e2e.conftest import E2E_STACKS
from tests.e2e.databases import LaneDatabases
from tests.e2e.lane import (
    Deployed,
    diagnostics,
    figure,
    lookup,
    manifests,
    pulumi,
    rendered,
    up_summary,
)

STACKS = sorted(E2E_STACKS)


@pytest.mark.parametrize("stack", STACKS)
def test_preview_then_up_from_empty(deployed: dict[str, Deployed], stack: str) -> None:
    run = deployed[stack]
    preview = run.preview.json()
    steps = Counter(step["op"] for step in preview["steps"])
    # From empty, every step of the preview is a create (nothing to update, replace or delete).
    assert set(steps) == {"create"}, steps
    assert run.up.returncode == 0
    changes = up_summary(run.up)
    # The preview counts the stack itself among its creates; the summary too.
    assert changes == {"create": steps["create"]}, (changes, steps)
    assert diagnostics(run.up) == []
    figure(
        f"{stack}: preview {steps['create']} creates in {run.preview_seconds:.1f} s; "
        f"up created {changes['create']} in {run.up_seconds:.1f} s"
    )


@pytest.mark.parametrize("stack", STACKS)
def test_every_deployment_is_available_and_every_pod_admitted_restricted(
    deployed: dict[str, Deployed], cluster: Cluster, stack: str
) -> None:
    project = deployed[stack].project
    namespaces = _tenant_namespaces(project)
    assert namespaces
    for namespace in namespaces:
        deployments = cluster.get("deployments", namespace=namespace)["items"]
        assert deployments, namespace
        for deployment in deployments:
            conditions = {
                c["type"]: c["status"] for c in deployment["status"].get("conditions", [])
            }
            assert conditions.get("Available") == "True", (
                namespace,
                deployment["metadata"]["name"],
            )
            assert deployment["status"].get("readyReplicas") == deployment["spec"]["replicas"]
        pods = cluster.get("pods", namespace=namespace)["items"]
        assert len(pods) == sum(d["spec"]["replicas"] for d in deployments)
        assert {p["status"]["phase"] for p in pods} == {"Running"}
    # Admission enforces `restricted` in these namespaces (e2e/cluster.py ADMISSION): a pod
    # that is not restricted is refused there, so the admitted ones above are restricted.
    refused = cluster.run(
        "run",
        "not-restricted",
        "-n",
        namespaces[0],
        "--image=registry.invalid/x:1",
        "--restart=Never",
        "--dry-run=server",
    )
    assert refused.returncode == 1
    assert 'violates PodSecurity "restricted:latest"' in refused.stderr


def _tenant_namespaces(project: Any) -> list[str]:
    plan = json.loads(rendered(project).files["plan.json"])
    return sorted(g["namespace"] for g in plan["gateways"])


# --- render fidelity --------------------------------------------------------------------------


def _live_index(
    cluster: Cluster, objects: list[dict[str, Any]]
) -> dict[tuple[str, str, str, str], Any]:
    kinds = sorted({_resource_name(o) for o in objects})
    items = cluster.get(",".join(kinds))["items"]
    return {
        (o["apiVersion"], o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]): o
        for o in items
    }


def _resource_name(obj: dict[str, Any]) -> str:
    group = obj["apiVersion"].split("/")[0] if "/" in obj["apiVersion"] else ""
    plural = {
        "NetworkPolicy": "networkpolicies",
        "Gateway": "gateways",
        "BackendTLSPolicy": "backendtlspolicies",
    }
    name = plural.get(obj["kind"], obj["kind"].lower() + "s")
    return f"{name}.{group}" if group else name


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    try:
        return lookup(value, path)
    except KeyError:
        return None


@pytest.mark.parametrize("stack", STACKS)
def test_render_fidelity(
    deployed: dict[str, Deployed], cluster: Cluster, databases: LaneDatabases, stack: str
) -> None:
    """Every object the offline render writes exists live, with every field it sets, and with
    nothing more in the lists it sets and the maps it owns (tests/e2e/fidelity.py)."""
    project = deployed[stack].project
    files = dict(manifests(rendered(project)))
    server = databases.by_stack[stack]

    def login(user: str, password: str, dbname: str) -> str:
        return server.login(project.root / DATABASE_CA, user, password, dbname)

    live = _live_index(cluster, list(files.values()))
    found = fields = matched = made_fields = extra = 0
    problems: list[str] = []
    for path, obj in files.items():
        key = (
            obj["apiVersion"],
            obj["kind"],
            obj["metadata"].get("namespace", ""),
            obj["metadata"]["name"],
        )
        if key not in live:
            problems.append(f"{path}: not live")
            continue
        found += 1
        current = live[key]
        if obj["kind"] == "Secret" and obj["metadata"]["name"] == naming.DB_SECRET:
            # The password (redacted in the render) the stand-ins made: it logs in.
            data = {k: base64.b64decode(v).decode() for k, v in current["data"].items()}
            wrong = made.credentials_problem(obj, data, login)
            fields += 1
            made_fields += 1
            if wrong is None:
                matched += 1
            else:
                problems.append(f"{path}: stringData.password: {wrong}")
        for field, value in fidelity.leaves(obj):
            fields += 1
            if value == REDACTED:
                # A secret value the render does not print (the made ones are compared in
                # test_secrets_*): live, the key is there and holds something.
                if obj["kind"] == "Secret" and field[0] in ("data", "stringData"):
                    held = current.get("data", {}).get(field[1])
                else:
                    held = _get(current, field)
                if held:
                    matched += 1
                else:
                    problems.append(f"{path}: {'.'.join(map(str, field))}: empty or absent live")
                continue
            if made.is_made(obj, field, value):  # by the stand-in providers: tests/e2e/made.py
                try:
                    wrong = made.problem(obj, field, value, lookup(current, field), live)
                except KeyError:
                    wrong = "absent live"
                if wrong is None:
                    matched += 1
                    made_fields += 1
                else:
                    problems.append(f"{path}: {'.'.join(map(str, field))}: {wrong}")
                continue
            if obj["kind"] == "Secret" and field[0] == "stringData":
                live_value = base64.b64decode(current.get("data", {}).get(field[1], "")).decode()
            else:
                try:
                    live_value = lookup(current, field)
                except KeyError:
                    problems.append(
                        f"{path}: {'.'.join(map(str, field))}: absent live (render: {value!r})"
                    )
                    continue
            if fidelity.same(field, value, live_value):
                matched += 1
            else:
                problems.append(
                    f"{path}: {'.'.join(map(str, field))}: render {value!r}, live {live_value!r}"
                )
        # Both ways: nothing more live in the lists the render sets and the maps it owns.
        found_extra = list(fidelity.extras(obj["kind"], obj, current))
        if obj["kind"] == "Secret":
            found_extra += fidelity.secret_keys(obj, current)
        extra += len(found_extra)
        problems.extend(f"{path}: {line}" for line in found_extra)
    figure(
        f"{stack}: render fidelity {found} of {len(files)} objects, {matched} of {fields} fields"
        f" ({made_fields} of them made by the stand-in providers, compared for what they are;"
        f" typed, empty maps and lists included), {extra} live additions to the lists and owned"
        " maps the render sets"
    )
    assert made_fields > 0
    assert problems == []
    assert found == len(files) and matched == fields


# --- no permanent diff ------------------------------------------------------------------------


@pytest.mark.parametrize("stack", STACKS)
def test_second_up_preview_and_refresh_change_nothing(
    deployed: dict[str, Deployed], engine: Engine, kube_env: dict[str, str], stack: str
) -> None:
    project = deployed[stack].project
    up = pulumi(engine, project, kube_env, "up", "--yes", "--skip-preview", "--json")
    summary = up_summary(up)
    assert set(summary) == {"same"}, summary
    preview = pulumi(engine, project, kube_env, "preview", "--expect-no-changes", check=False)
    assert preview.returncode == 0, preview.stdout[-3000:]
    refresh = pulumi(
        engine,
        project,
        kube_env,
        "refresh",
        "--expect-no-changes",
        "--yes",
        program=False,
        check=False,
    )
    assert refresh.returncode == 0, refresh.stdout[-3000:]

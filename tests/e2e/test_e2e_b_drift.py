"""Drift made with kubectl, seen by the real `pulumi refresh`, read by `gatewayctl status`,
healed by `pulumi up --refresh`."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from e2e.cluster import Cluster
from e2e.engine import Engine
from e2e.project import E2EProject
from gatewayctl.status import certificates
from tests.e2e.lane import Deployed, export, figure, pulumi, status, write_json

STACK = "e2e-local"
FORCE = {"PULUMI_K8S_ENABLE_PATCH_FORCE": "true"}
FIXTURES = (
    Path(os.environ.get("HYPERSHELL_E2E_RECORD", ""))
    if os.environ.get("HYPERSHELL_E2E_RECORD")
    else None
)


def record(name: str, document: Any) -> None:
    """Write a fixture for tests/test_status_engine.py as the repository's ``local`` stack: the
    lane's stack is that stack's copy under another name (e2e/project.py), and ``status``
    refuses another stack's files, so the stack's name in the URNs is the one change made to
    what the CLI printed (docs/status.md runs ``status local`` on them)."""
    assert FIXTURES is not None
    text = json.dumps(document).replace(f"urn:pulumi:{STACK}::", "urn:pulumi:local::")
    text = text.replace(f"::hypershell-gateways-{STACK}", "::hypershell-gateways-local")
    write_json(FIXTURES / f"local-{name}", json.loads(text))


def observe(
    engine: Engine, project: E2EProject, env: dict[str, str], out: Path, tag: str
) -> list[Path]:
    refresh = pulumi(
        engine, project, env, "refresh", "--preview-only", "--json", program=False, check=False
    )
    assert refresh.returncode == 0, refresh.stderr[-3000:]
    files = [out / f"{tag}-refresh.json", out / f"{tag}-state.json"]
    files[0].write_text(refresh.stdout)
    write_json(files[1], export(engine, project, env))
    if FIXTURES is not None:  # `make e2e-fixtures`: what tests/test_status_engine.py reads
        for path in files:
            record(path.name, json.loads(path.read_text()))
    return files


def test_drift_is_named_by_status_and_healed_by_up_refresh(
    deployed: dict[str, Deployed],
    engine: Engine,
    cluster: Cluster,
    kube_env: dict[str, str],
    tmp_path: Path,
) -> None:
    project = deployed[STACK].project
    files = observe(engine, project, kube_env, tmp_path, "clean")
    code, report = status(project, files)
    assert code == 0, report

    cluster.kubectl("scale", "deployment/openshell-gateway", "-n", "openshell-dev", "--replicas=3")
    cluster.kubectl(
        "patch",
        "networkpolicy",
        "openshell-default-deny-ingress",
        "-n",
        "openshell-offline",
        "--type=merge",
        "-p",
        json.dumps({"spec": {"policyTypes": ["Egress"]}}),
    )
    cluster.kubectl("delete", "configmap", "openshell-gateway-config", "-n", "openshell-dev-build")

    files = observe(engine, project, kube_env, tmp_path, "drift")
    code, report = status(project, files)
    assert code == 3, report
    drifted = {
        g["name"]: sorted(r["name"] for r in g.get("changes", g.get("resources", [])))
        for g in report["gateways"]
        if g["sync"] != "Synced"
    }
    assert sorted(drifted) == ["dev", "dev-build", "offline"], report

    # The self-heal as drift.yml runs it: kubectl's `scale` owns .spec.replicas now, and a
    # server-side apply without force fails on that conflict (pulumi-kubernetes
    # pkg/await/await.go, ssaUpdate/patchForce); PULUMI_K8S_ENABLE_PATCH_FORCE makes git win.
    heal = pulumi(
        engine,
        project,
        {**kube_env, **FORCE},
        "up",
        "--refresh",
        "--yes",
        "--skip-preview",
        "--json",
    )
    assert heal.returncode == 0
    live = cluster.get("deployment", "openshell-gateway", namespace="openshell-dev")
    assert live["spec"]["replicas"] == 1
    policy = cluster.get(
        "networkpolicy", "openshell-default-deny-ingress", namespace="openshell-offline"
    )
    assert policy["spec"]["policyTypes"] == ["Ingress"]
    cluster.get("configmap", "openshell-gateway-config", namespace="openshell-dev-build")

    code, report = status(project, observe(engine, project, kube_env, tmp_path, "healed"))
    assert code == 0, report


def test_a_change_in_git_is_named_by_status_from_the_real_preview(
    deployed: dict[str, Deployed],
    engine: Engine,
    kube_env: dict[str, str],
    tmp_path: Path,
) -> None:
    project = deployed[STACK].project
    path = project.declarations / "dev.yaml"
    original = path.read_text()
    document = yaml.safe_load(original)
    document.setdefault("spec", {})["replicas"] = 2
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    try:
        preview = pulumi(engine, project, kube_env, "preview", "--json")
    finally:
        path.write_text(original)
    out = tmp_path / "change-preview.json"
    out.write_text(preview.stdout)
    if FIXTURES is not None:
        record("change-preview.json", json.loads(preview.stdout))
    steps = [
        (s["op"], s["urn"].rsplit("::", 1)[-1])
        for s in preview.json()["steps"]
        if s["op"] != "same"
    ]
    # replicas is a Deployment field only (the pod template, and so its hash, stays the same)
    assert steps == [("update", "dev-workload-deploy")], steps
    code, report = status(project, [out])
    assert code == 3, report
    out_of_sync = [g["name"] for g in report["gateways"] if g["sync"] != "Synced"]
    assert out_of_sync == ["dev"], report


@pytest.mark.provider_behaviour("create-takes-over")  # `up --replace` leaves nothing on 4.25.0
def test_an_addition_refresh_cannot_see_is_named_from_a_refreshed_state(
    deployed: dict[str, Deployed],
    engine: Engine,
    cluster: Cluster,
    kube_env: dict[str, str],
    tmp_path: Path,
) -> None:
    """A default-deny policy's empty ``podSelector`` (every pod) narrowed by kubectl to a label
    no pod carries denies nothing: the namespace is open. pulumi-kubernetes prunes the live
    object to the inputs' shape before it diffs, so neither refresh nor preview sees it and up
    leaves it; a real refresh writes it to the state's outputs, where status finds it
    (gatewayctl/status/tampering.py); deleting the object and ``up --refresh`` removes it."""
    project = deployed[STACK].project
    namespace = "openshell-dev-build"
    name = "openshell-default-deny-ingress"
    resource = "dev-build-workload-netpol-default-deny-ingress"
    narrowed = {"matchLabels": {"nobody": "here"}}
    cluster.kubectl(
        "patch",
        "networkpolicy",
        name,
        "-n",
        namespace,
        "--type=merge",
        "-p",
        json.dumps({"spec": {"podSelector": narrowed}}),
    )

    def ops(result: Any) -> list[tuple[str, str]]:
        return [
            (s["op"], s["urn"].rsplit("::", 1)[-1])
            for s in result["steps"]
            if s["op"] not in {"same", "refresh"}
        ]

    files = observe(engine, project, kube_env, tmp_path, "added-unseen")
    assert ops(json.loads(files[0].read_text())) == []
    assert ops(pulumi(engine, project, kube_env, "preview", "--json").json()) == []
    code, report = status(project, files)
    assert code == 0, report  # what the engine's refresh diff can tell: nothing

    refresh = pulumi(engine, project, kube_env, "refresh", "--yes", "--json", program=False)
    assert refresh.returncode == 0
    files = observe(engine, project, kube_env, tmp_path, "added")
    state = json.loads(files[1].read_text())
    (policy,) = [r for r in state["deployment"]["resources"] if r["urn"].endswith(resource)]
    assert policy["outputs"]["spec"]["podSelector"] == narrowed
    assert policy["inputs"]["spec"]["podSelector"] == {}
    code, report = status(project, files)
    assert code == 3, report
    changed = {
        g["name"]: [(c["name"], c["op"], c["source"], c["paths"]) for c in g["changes"]]
        for g in report["gateways"]
        if g["changes"]
    }
    assert changed == {
        "dev-build": [(resource, "addition", "live", ["spec.podSelector.matchLabels"])]
    }, report

    # `up --refresh` (the self-heal) leaves it: the server-side apply does not own the field.
    pulumi(engine, project, {**kube_env, **FORCE}, "up", "--refresh", "--yes", "--skip-preview")
    live = cluster.get("networkpolicy", name, namespace=namespace)
    assert live["spec"]["podSelector"] == narrowed
    # `up --replace` is no remedy: with no replace reason from the provider the engine creates
    # the replacement first and then deletes "the original", the same object. Measured with the
    # provider the lane builds (pulumi-kubernetes 4.25.0, with force: an apply onto the same
    # object): no policy is left at all. That is the data loss 4.29.0 fixed (CHANGELOG 4.29.0,
    # #2926: creates are client-side since); with the pinned 4.34.2 the replacement's create
    # fails with AlreadyExists and the narrowed policy stays. Neither heals it.
    pulumi(
        engine,
        project,
        {**kube_env, **FORCE},
        "up",
        "--replace",
        policy["urn"],
        "--yes",
        "--skip-preview",
        allow_takeover=True,  # what is measured here: the lane's provider's takeover
    )
    gone = cluster.run("get", "networkpolicy", name, "-n", namespace)
    assert gone.returncode == 1 and "NotFound" in gone.stderr, gone.stderr
    # The object gone (`kubectl delete`, or after that replace), `up --refresh` recreates it
    # as declared.
    pulumi(engine, project, kube_env, "up", "--refresh", "--yes", "--skip-preview")
    live = cluster.get("networkpolicy", name, namespace=namespace)
    assert live["spec"]["podSelector"] == {}
    pulumi(engine, project, kube_env, "refresh", "--yes", program=False)
    code, report = status(project, observe(engine, project, kube_env, tmp_path, "recreated"))
    assert code == 0, report


def test_certificates_fall_due_in_status_on_the_real_state(
    deployed: dict[str, Deployed], engine: Engine, kube_env: dict[str, str], tmp_path: Path
) -> None:
    """Status's certificate path on the state the engine wrote: the tls stand-in's real
    validity times (e2e/providers), read at two instants. Now, none is due; a minute after the
    earliest renewal window opens (``validityEndTime - earlyRenewalHours``), exactly the
    certificates whose window has opened are due and status exits 5 (renewal due)."""
    project = deployed[STACK].project
    refresh = pulumi(
        engine, project, kube_env, "refresh", "--preview-only", "--json", program=False, check=False
    )
    assert refresh.returncode == 0, refresh.stderr[-3000:]
    files = [tmp_path / "refresh.json", tmp_path / "state.json"]
    files[0].write_text(refresh.stdout)
    state = export(engine, project, kube_env)
    write_json(files[1], state)
    windows = {}
    for resource in state["deployment"]["resources"]:
        if resource["type"] in certificates.TYPES:
            outputs = resource["outputs"]
            end = datetime.fromisoformat(outputs["validityEndTime"].replace("Z", "+00:00"))
            windows[resource["urn"]] = end - timedelta(hours=int(outputs["earlyRenewalHours"]))
            assert outputs["readyForRenewal"] is False, resource["urn"]
    assert windows

    code, report = status(project, files)
    reported = [c for g in report["gateways"] for c in g["certificates"]]
    assert code == 0, report
    assert sorted(c["urn"] for c in reported) == sorted(windows)
    assert not any(c["due"] for c in reported)
    assert all(g["certificates"] for g in report["gateways"]), report
    assert all(c["daysLeft"] > 0 for c in reported)

    at = min(windows.values()) + timedelta(minutes=1)
    code, report = status(project, files, "--now", at.astimezone(UTC).isoformat())
    due = sorted(c["urn"] for g in report["gateways"] for c in g["certificates"] if c["due"])
    assert code == 5, report
    assert due == sorted(urn for urn, opens in windows.items() if opens <= at)
    assert due
    figure(
        f"status on the real state: {len(windows)} certificates, none due now; at"
        f" {at:%Y-%m-%d %H:%M} UTC, {len(due)} due, exit 5"
    )

"""Drift made with kubectl, seen by the real `pulumi refresh`, read by `gatewayctl status`,
healed by `pulumi up --refresh`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from e2e.cluster import Cluster
from e2e.engine import Engine
from e2e.project import ROOT, E2EProject
from tests.e2e.lane import Deployed, export, pulumi, write_json

STACK = "e2e-local"
FORCE = {"PULUMI_K8S_ENABLE_PATCH_FORCE": "true"}
FIXTURES = (
    Path(os.environ.get("HYPERSHELL_E2E_RECORD", ""))
    if os.environ.get("HYPERSHELL_E2E_RECORD")
    else None
)


def status(project: E2EProject, files: list[Path]) -> tuple[int, Any]:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "gatewayctl",
            "--root",
            str(project.root),
            "status",
            project.stack,
            "--format",
            "json",
            "--from",
            *map(str, files),
        ],
        cwd=project.root,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.stdout.strip(), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


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
            write_json(FIXTURES / f"e2e-local-{path.name}", json.loads(path.read_text()))
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
        write_json(FIXTURES / "e2e-local-change-preview.json", json.loads(preview.stdout))
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

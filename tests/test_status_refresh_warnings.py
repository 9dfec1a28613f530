"""A refresh's warning that a resource is unhealthy (gatewayctl/status/health.py, UNHEALTHY):
``pulumi refresh --preview-only --json`` keeps the step and its old state for a Deployment whose
pods became unavailable, and says so only in a warning diagnostic; status reads it as Degraded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.hostile_helpers import run_cli
from tests.status_builders import FIXTURES, by_name, digest, refresh_step

STATE = FIXTURES / "state.json"
WARNING = (
    "warning: Refreshed resource is in an unhealthy state:\n* Resource 'openshell-gateway' was"
    " created but failed to initialize\n* [MinimumReplicasUnavailable] Deployment does not have"
    " minimum availability.\n"
)


def refresh(tmp_path: Path, diagnostics: list[dict[str, Any]]) -> Path:
    resources = json.loads(STATE.read_text())["deployment"]["resources"]
    document = digest([refresh_step(r) for r in resources])
    document["diagnostics"] += diagnostics
    path = tmp_path / "refresh.json"
    path.write_text(json.dumps(document))
    return path


def status(tmp_path: Path, diagnostics: list[dict[str, Any]]) -> tuple[int, dict[str, Any]]:
    files = [str(refresh(tmp_path, diagnostics)), str(STATE)]
    out = run_cli("status", "ibm", "--from", *files, "--now", "2026-12-01T05:30:00Z", "-o", "json")
    return out.code, json.loads(out.out)


def test_a_deployment_the_refresh_warns_about_is_degraded(tmp_path: Path) -> None:
    resources = json.loads(STATE.read_text())["deployment"]["resources"]
    urn = by_name(resources, "research-workload-deploy")["urn"]
    code, clean = status(tmp_path, [])
    research = {g["name"]: g for g in clean["gateways"]}["research"]
    assert research["health"] == "Healthy"
    code, document = status(tmp_path, [{"urn": urn, "severity": "warning", "message": WARNING}])
    assert code == 4
    research = {g["name"]: g for g in document["gateways"]}["research"]
    assert research["health"] == "Degraded"
    (part,) = [p for p in research["parts"] if p["name"] == "research-workload-deploy"]
    assert (part["health"], part["message"]) == (
        "Degraded",
        "the refresh found it unhealthy: Resource 'openshell-gateway' was created but failed to"
        " initialize; [MinimumReplicasUnavailable] Deployment does not have minimum availability.",
    )


def test_other_warnings_and_warnings_without_a_urn_change_nothing(tmp_path: Path) -> None:
    resources = json.loads(STATE.read_text())["deployment"]["resources"]
    urn = by_name(resources, "research-workload-deploy")["urn"]
    noise = [
        {"urn": urn, "severity": "warning", "message": "warning: a provider's note"},
        {"severity": "warning", "message": WARNING},
    ]
    _, document = status(tmp_path, noise)
    research = {g["name"]: g for g in document["gateways"]}["research"]
    assert research["health"] == "Healthy"

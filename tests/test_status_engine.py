"""`gatewayctl status` on what the real Pulumi CLI printed (tests/fixtures/engine/).

The fixtures are recorded by ``make e2e-fixtures`` (tests/e2e/test_e2e_b_drift.py): the
``e2e-local`` stack brought up by the real engine and pulumi-kubernetes against a real API
server, then drifted with kubectl (Deployment ``openshell-gateway`` of ``dev`` scaled to 3,
NetworkPolicy ``openshell-default-deny-ingress`` of ``offline`` edited, ConfigMap
``openshell-gateway-config`` of ``dev-build`` deleted), and a preview of a replicas change to
``dev``; ``added-*``: an addition the refresh's diff cannot see (the ``dev-build`` default-deny
policy's selector narrowed), before and after a real ``pulumi refresh --yes``. Where the
hand-made fixtures of tests/test_status.py disagree with these, these win. The lane's stack is
the repository's ``local`` under another name; the recording names it ``local`` (``record``
there), so ``status local`` reads them in the repository as docs/status.md runs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from tests.support import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "engine"


def _status(*names: str) -> tuple[int, Any]:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "gatewayctl",
            "status",
            "local",
            "--format",
            "json",
            "--from",
            *[str(FIXTURES / f"local-{n}.json") for n in names],
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=False,
    )
    return proc.returncode, json.loads(proc.stdout) if proc.stdout.strip() else proc.stderr


def _by_gateway(report: Any) -> dict[str, Any]:
    return {g["name"]: g for g in report["gateways"]}


def test_the_recorded_drift_names_exactly_the_drifted_gateways() -> None:
    code, report = _status("drift-refresh", "drift-state")
    assert code == 3, report
    gateways = _by_gateway(report)
    assert sorted(gateways) == ["dev", "dev-build", "offline"]
    assert {name: g["sync"] for name, g in gateways.items()} == {
        "dev": "OutOfSync",
        "dev-build": "Missing",
        "offline": "OutOfSync",
    }


def test_the_recorded_clean_and_healed_states_are_synced() -> None:
    for tag in ("clean", "healed"):
        code, report = _status(f"{tag}-refresh", f"{tag}-state")
        assert code == 0, (tag, report)
        assert {g["sync"] for g in report["gateways"]} == {"Synced"}


def test_the_recorded_preview_of_a_change_names_its_gateway() -> None:
    code, report = _status("change-preview")
    assert code == 3, report
    assert [n for n, g in _by_gateway(report).items() if g["sync"] != "Synced"] == ["dev"]


def test_an_addition_the_refresh_cannot_see_is_named_from_the_refreshed_state() -> None:
    """``added-*``: the default-deny policy of ``dev-build`` narrowed by kubectl, then a real
    ``pulumi refresh --yes``: the refresh digest has no step for it (the provider prunes the
    live object to the inputs' shape), the state's outputs hold it."""
    refresh = json.loads((FIXTURES / "local-added-refresh.json").read_text())
    assert [s["op"] for s in refresh["steps"] if s["op"] not in {"same", "refresh"}] == []
    code, report = _status("added-refresh", "added-state")
    assert code == 3, report
    changed = {
        g["name"]: [(c["name"], c["op"], c["source"], c["paths"]) for c in g["changes"]]
        for g in report["gateways"]
        if g["changes"]
    }
    assert changed == {
        "dev-build": [
            (
                "dev-build-workload-netpol-default-deny-ingress",
                "addition",
                "live",
                ["spec.podSelector.matchLabels"],
            )
        ]
    }
    # The refresh digest alone (its states are the old ones) cannot tell.
    code, report = _status("added-unseen-refresh", "added-unseen-state")
    assert code == 0, report

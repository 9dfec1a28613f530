"""The checkov configuration: every skipped check carries its written reason."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from tests.builders import copy_project, edited_config
from tests.support import ROOT, STACKS, rendered


def _run_module() -> ModuleType:
    """scan/run.py, a script: loaded from its file."""
    spec = importlib.util.spec_from_file_location("scan_run", ROOT / "scan" / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


run = _run_module()

CONFIG = ROOT / "scan" / "checkov.yaml"


def test_every_skipped_check_has_a_reason_right_above_it() -> None:
    skipped = yaml.safe_load(CONFIG.read_text())["skip-check"]
    assert skipped == ["CKV_K8S_38", "CKV_K8S_35", "CKV_K8S_40", "CKV_K8S_43"]
    lines = CONFIG.read_text().splitlines()
    for check in skipped:
        index = lines.index(f"  - {check}")
        reason: list[str] = []
        for line in reversed(lines[:index]):
            if not line.startswith("  #"):
                break
            reason.insert(0, line)
        assert reason and reason[0].startswith(f"  # {check} "), check
        assert len(" ".join(reason)) > 120, f"{check}: the reason should say why, not just what"


def test_scan_is_offline_and_kubernetes_only() -> None:
    config = yaml.safe_load(CONFIG.read_text())
    assert config["framework"] == ["kubernetes"]
    assert config["skip-download"] is True
    assert re.search(
        r"\n\t\$\(PY\) scan/run\.py --checkov \$\(CHECKOV\) build/scan\n",
        (ROOT / "Makefile").read_text(),
    )
    assert run.CONFIG == CONFIG


# --- production stacks: scanned without the digest skip -------------------------------------


def _reason(check: str) -> str:
    lines = CONFIG.read_text().splitlines()
    index = lines.index(f"  - {check}")
    reason: list[str] = []
    for line in reversed(lines[:index]):
        if not line.startswith("  #"):
            break
        reason.insert(0, line.removeprefix("  # "))
    return " ".join(reason)


def test_the_digest_skip_says_which_stacks_it_still_covers() -> None:
    production = run.production_stacks()
    assert production == ["aws", "ibm"]
    others = [s for s in STACKS if s not in production]
    covered = re.search(r"it still covers: ([a-z0-9, -]+)\.", _reason("CKV_K8S_43"))
    assert covered is not None
    assert covered[1].split(", ") == others == ["local"]
    assert run.PRODUCTION_ENFORCED == ("CKV_K8S_43",)


def test_production_stacks_are_scanned_without_the_skips_production_does_not_grant(
    tmp_path: Path,
) -> None:
    config = yaml.safe_load(CONFIG.read_text())
    assert run.production_config(config) == {
        **config,
        "skip-check": ["CKV_K8S_38", "CKV_K8S_35", "CKV_K8S_40"],
    }
    production_file = tmp_path / "production.yaml"
    assert run.runs("checkov", Path("build/scan"), production_file) == [
        ["checkov", "--config-file", str(production_file), "-d", "build/scan/aws"],
        ["checkov", "--config-file", str(production_file), "-d", "build/scan/ibm"],
        ["checkov", "--config-file", str(CONFIG), "-d", "build/scan/local"],
    ]


def test_a_stack_marked_production_moves_to_the_production_run(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "p")
    with edited_config(project, "local") as stack_config:
        stack_config["hypershell-gateways:production"] = True
    assert run.production_stacks(project) == ["aws", "ibm", "local"]
    commands = run.runs("checkov", Path("out"), Path("prod.yaml"), project)
    assert [command[2:] for command in commands] == [
        ["prod.yaml", "-d", f"out/{stack}"] for stack in ("aws", "ibm", "local")
    ]


@pytest.mark.parametrize("stack", ["aws", "ibm"])
def test_every_container_image_of_a_production_stack_has_a_digest(stack: str) -> None:
    """What CKV_K8S_43 requires of a container ('@' in its image: checkov's
    checkov/kubernetes/checks/resource/k8s/ImageDigest.py, scan_container_conf)."""
    files = rendered(stack).files
    images = [
        container["image"]
        for path, text in files.items()
        if path.startswith("manifests/") and (obj := yaml.safe_load(text))["kind"] == "Deployment"
        for container in obj["spec"]["template"]["spec"]["containers"]
    ]
    # One container per gateway, two per web console (dashboard and oauth2-proxy).
    gateways = rendered(stack).gateways
    consoles = sum(g.console is not None for g in gateways)
    assert consoles == 1
    assert len(images) == len(gateways) + 2 * consoles
    assert all("@sha256:" in image for image in images), images


def test_local_still_runs_a_tag_the_skip_covers() -> None:
    text = rendered("local").files[
        "manifests/kind/openshell-dev-build/deployment-openshell-gateway.yaml"
    ]
    assert "image: localhost:5001/openshell/gateway:dev\n" in text


def test_the_scan_fails_when_any_stack_fails(tmp_path: Path) -> None:
    assert run.main(["--checkov", "/bin/true", str(tmp_path)]) == 0
    assert run.main(["--checkov", "/bin/false", str(tmp_path)]) == 1

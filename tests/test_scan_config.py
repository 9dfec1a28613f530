"""The checkov configuration: every skipped check carries its written reason."""

from __future__ import annotations

import re

import yaml

from tests.support import ROOT

CONFIG = ROOT / "scan" / "checkov.yaml"


def test_every_skipped_check_has_a_reason_right_above_it() -> None:
    skipped = yaml.safe_load(CONFIG.read_text())["skip-check"]
    assert skipped == ["CKV_K8S_38", "CKV_K8S_35", "CKV_K8S_40", "CKV_K8S_43"]
    lines = CONFIG.read_text().splitlines()
    for check in skipped:
        index = lines.index(f"  - {check}")
        reason = []
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
    assert re.search(r"--config-file scan/checkov.yaml", (ROOT / "Makefile").read_text())

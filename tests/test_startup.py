"""Issue 23: start-up. The commands that do not run the program (``--help``, ``validate``,
``stacks``, ``status``, ``promote``, ``driver``, ``schema``, ``explain``, ``completion``,
``graph``) import no provider SDK; only the ones that run it (render, diff, import-file) load
them. Read from ``python -X importtime``, in a fresh interpreter as a user starts it (no timing
is asserted: bench/scale_bench.py shows the figures).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.builders import copy_project
from tests.support import ROOT

PROVIDER_SDKS = (
    "pulumi_kubernetes",
    "pulumi_keycloak",
    "pulumi_postgresql",
    "pulumi_random",
    "pulumi_tls",
)
STATUS = ROOT / "tests" / "fixtures" / "status"


def imported(args: list[str]) -> tuple[int, set[str]]:
    """The exit code of ``python -X importtime -m gatewayctl ARGS`` and every module it imported."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "gatewayctl", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    modules = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    return done.returncode, modules


def sdks(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in PROVIDER_SDKS)


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["validate", "local"],
        ["validate", "--all", "--jobs", "1"],
        ["validate", "--all", "--jobs", "2"],
        ["stacks"],
        ["driver", "local", "aws"],
        ["render", "--help"],
        ["schema"],
        ["schema", "--markdown"],
        ["schema", "--stack-file", "--markdown"],
        ["explain", "spec.credentials.vault"],
        ["completion", "bash"],
        ["graph", "--all"],
        ["graph", "local", "--format", "dot"],
        [
            "status",
            "ibm",
            "--from",
            str(STATUS / "refresh-clean.json"),
            str(STATUS / "state.json"),
            "--now",
            "2026-06-01T00:00:00Z",
        ],
    ],
    ids=lambda args: " ".join(a for a in args if not a.startswith("/")),
)
def test_a_command_that_does_not_run_the_program_imports_no_provider_sdk(
    args: list[str],
) -> None:
    code, modules = imported(args)
    assert code in {0, 3, 4, 5}  # status reports its state in its exit code
    assert "gatewayctl.cli.main" in modules
    assert sdks(modules) == []
    assert "gatewayctl.engine.render" not in modules
    assert "gatewayctl.engine.program" not in modules


def test_promote_imports_no_provider_sdk(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "project")
    code, modules = imported(
        ["--root", str(project), "promote", "openshell-0.0.110", "--to", "local"]
    )
    assert code == 0
    assert sdks(modules) == []


def test_the_help_imports_neither_pulumi_nor_the_models() -> None:
    code, modules = imported(["--help"])
    assert code == 0
    assert not {m for m in modules if m.split(".")[0] in {"pulumi", "pydantic", "yaml"}}


def test_render_loads_the_sdks_it_runs_the_program_with(tmp_path: Path) -> None:
    code, modules = imported(["render", "local", "--out", str(tmp_path / "out"), "-q"])
    assert code == 0
    assert {"pulumi_kubernetes", "pulumi_keycloak", "gatewayctl.engine.program"} <= modules

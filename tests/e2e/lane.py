"""Steps the real-engine tests share: bring a stack up, read its state, compare with the render."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from e2e import build
from e2e.engine import Engine, Result
from e2e.project import ROOT, E2EProject
from gatewayctl.engine import render
from gatewayctl.resolve import preparation
from tests.support import REFERENCE

UPSTREAM = REFERENCE / "upstream-manifests"
"""Upstream's manifests, which the cluster's node-reader ClusterRole (conftest) and the adopted
tenant (tests/e2e/adoption.py) are made from."""
FIGURES: list[str] = []
"""Figures the tests measured, printed at the end of the run (conftest's terminal summary)."""


def figure(text: str) -> None:
    FIGURES.append(text)


def built(partial: bool) -> dict[str, dict[str, Any]]:
    """What e2e/build.py built. Everything must be, unless the build ran with CI's deadline
    (``$HYPERSHELL_E2E_BUILD_DEADLINE``): then the tests whose items are missing are skipped
    by ``need``."""
    if partial:
        return build.built_paths(partial=True) or {}
    paths = build.built_paths()
    if paths is None:
        pytest.fail("the real-engine lane is not built: run `make e2e` (python e2e/build.py)")
    return paths


NOT_BUILT = "not built in this run"
"""How ``need``'s skip reason starts: the only skip a lane run may have (conftest)."""


def need(paths: Mapping[str, Any], *items: str) -> None:
    """Skip the test, naming what is missing, when the deadline left items unbuilt."""
    missing = [item for item in items if item not in paths]
    if missing:
        pytest.skip(
            f"{NOT_BUILT}: {', '.join(missing)} (CI's build deadline on a cold "
            'cache, docs/real-engine.md "CI"; `make e2e` without a deadline builds everything)'
        )


@dataclass
class Deployed:
    project: E2EProject
    preview: Result
    up: Result
    preview_seconds: float
    up_seconds: float


def stack_args(project: E2EProject) -> list[str]:
    return ["--stack", project.stack, "--cwd", str(project.root)]


def pulumi(
    engine: Engine,
    project: E2EProject,
    env: Mapping[str, str],
    *args: str,
    program: bool = True,
    check: bool = True,
    allow_takeover: bool = False,
) -> Result:
    return engine.run(
        [*args, *stack_args(project)],
        cwd=project.root,
        program=project.program() if program else None,
        env=env,
        check=check,
        allow_takeover=allow_takeover,
    )


def deploy(engine: Engine, project: E2EProject, env: Mapping[str, str]) -> Deployed:
    """``stack init``, ``preview --json``, ``up --yes`` from empty."""
    engine.run(
        ["stack", "init", project.stack, "--cwd", str(project.root)], cwd=project.root, env=env
    )
    started = time.monotonic()
    preview = pulumi(engine, project, env, "preview", "--json", "--diff")
    preview_seconds = time.monotonic() - started
    started = time.monotonic()
    up = pulumi(engine, project, env, "up", "--yes", "--skip-preview", "--json")
    return Deployed(project, preview, up, preview_seconds, time.monotonic() - started)


def export(engine: Engine, project: E2EProject, env: Mapping[str, str]) -> dict[str, Any]:
    exported: dict[str, Any] = pulumi(engine, project, env, "stack", "export", program=False).json()
    return exported


def rendered(project: E2EProject) -> render.Rendered:
    """The offline render of the same project directory (what `gatewayctl render` writes)."""
    return render.execute(preparation.prepare(project.root, project.stack))


def manifests(rendered_: render.Rendered) -> Iterator[tuple[str, dict[str, Any]]]:
    for path, text in sorted(rendered_.files.items()):
        if path.startswith("manifests/"):
            yield path, yaml.safe_load(text)


def up_summary(result: Result) -> dict[str, int]:
    return result.summary()


def refresh_changes_nothing(engine: Engine, project: E2EProject, env: Mapping[str, str]) -> None:
    """``pulumi refresh --yes --expect-no-changes`` (the providers' Read, no program) exits 0:
    nothing live differs from the state."""
    refresh = pulumi(
        engine, project, env, "refresh", "--yes", "--expect-no-changes", program=False, check=False
    )
    assert refresh.returncode == 0, refresh.stdout[-3000:]


def diagnostics(result: Result, severity: str = "error") -> list[str]:
    return [
        e["diagnosticEvent"]["message"]
        for e in result.events()
        if e.get("diagnosticEvent", {}).get("severity") == severity
    ]


def lookup(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        in_map = isinstance(value, Mapping) and key in value
        in_list = isinstance(value, list) and isinstance(key, int) and key < len(value)
        if in_map or in_list:
            value = value[key]
        else:
            raise KeyError(path)
    return value


def write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2, sort_keys=True) + "\n")


def status(
    project: E2EProject,
    files: list[Path],
    *extra: str,
    path: Path | None = None,
    notes: list[str] | None = None,
) -> tuple[int, Any]:
    """``python -m gatewayctl status <stack> --format json *extra --from *files``, as the
    workflows run it; ``path``: a directory put first on ``PATH`` (kubectl for ``--live``);
    ``notes``: gets its stderr."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if path is not None:
        env["PATH"] = f"{path}{os.pathsep}{env['PATH']}"
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
            *extra,
            "--from",
            *map(str, files),
        ],
        cwd=project.root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.stdout.strip(), proc.stderr
    if notes is not None:
        notes.append(proc.stderr)
    return proc.returncode, json.loads(proc.stdout)


SHOW_ALL = ("--show-sames", "--show-replacement-steps")
"""Every step in the JSON: sames, and a replacement's own steps (pkg/backend/display/display.go
``shouldShow``: without these flags the JSON omits them)."""


def engine_ops(preview: dict[str, Any]) -> dict[str, str]:
    """The engine's operation per URN, from the preview's steps.

    A replacement is three steps of one URN (pulumi/pulumi ``pkg/resource/deploy/
    step_generator.go``, ``generateStepsFromDiff``): ``create-replacement``, ``replace``, then
    ``delete-replaced`` among the deletes at the end; or, deleting first
    (``deleteBeforeReplace``), ``delete-replaced`` before ``replace`` and
    ``create-replacement``.
    """
    seen: dict[str, list[str]] = {}
    for step in preview["steps"]:
        seen.setdefault(step["urn"], []).append(step["op"])
    found: dict[str, str] = {}
    for urn, ops in seen.items():
        if set(ops) == {"create-replacement", "replace", "delete-replaced"}:
            first = ops.index("delete-replaced") < ops.index("create-replacement")
            found[urn] = "replace-delete-first" if first else "replace"
        elif len(ops) == 1:
            found[urn] = ops[0]
        else:
            found[urn] = "+".join(ops)
    return found

"""What the workflow tests share: the workflows as parsed YAML, their steps, and a step's
shell script run as the runner runs it (``bash -e``, with fake commands on ``PATH``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support import ROOT

WORKFLOWS = ROOT / ".github" / "workflows"
FILES = ("pull-request.yml", "deploy.yml", "drift.yml")


needs_bash = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def load(name: str) -> dict[Any, Any]:
    document = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    assert isinstance(document, dict)
    return document


def step(name: str, job: str, title_part: str) -> dict[str, Any]:
    found = [s for s in load(name)["jobs"][job]["steps"] if title_part in s.get("name", "")]
    assert len(found) == 1, f"{name}: one step named like {title_part!r} in {job}"
    assert isinstance(found[0], dict)
    return found[0]


TOKEN = "${{ secrets.PULUMI_ACCESS_TOKEN }}"


CREDENTIAL_CASES = [
    ("", "true", True),
    ("", "false", False),
    ("https://api.pulumi.example.com", "true", True),
    ("https://api.pulumi.example.com", "false", False),
    ("s3://acme-pulumi-state", "false", True),  # a self-managed backend needs no Pulumi token
    ("azblob://state", "false", True),
]


def fake(bin_dir: Path, name: str, script: str) -> None:
    bin_dir.mkdir(parents=True, exist_ok=True)
    path = bin_dir / name
    path.write_text("#!/usr/bin/env bash\n" + textwrap.dedent(script), encoding="utf-8")
    path.chmod(0o755)


def run_script(script: str, cwd: Path, env: dict[str, str]) -> tuple[int, dict[str, str]]:
    """Run a step's script as the runner does (``bash -e``); return its code and outputs."""
    output = cwd / "github-output"
    output.write_text("", encoding="utf-8")
    (cwd / "script.sh").write_text(script, encoding="utf-8")
    done = subprocess.run(
        ["bash", "-e", "script.sh"],
        cwd=cwd,
        env={**os.environ, **env, "GITHUB_OUTPUT": str(output)},
        capture_output=True,
        text=True,
        check=False,
    )
    pairs = [line.split("=", 1) for line in output.read_text(encoding="utf-8").splitlines()]
    return done.returncode, {k: v for k, v in pairs}


def steps_of(name: str, job: str) -> list[dict[str, Any]]:
    found = load(name)["jobs"][job]["steps"]
    assert isinstance(found, list)
    return found


def index_of(steps: list[dict[str, Any]], part: str) -> int:
    (index,) = [i for i, s in enumerate(steps) if part in s.get("name", "")]
    return index

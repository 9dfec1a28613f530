"""Shared helpers of the offline-diff tests: a throwaway git repository holding this checkout
(``pristine_repo``, the ``pristine`` fixture of tests/conftest.py), its clones, declarations and
passwords changed in them, and ``gatewayctl diff`` run in process with its result kept."""

from __future__ import annotations

import contextlib
import io
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from gatewayctl.cli import main as cli
from gatewayctl.diff import diff_command
from tests.builders import NOT_COPIED, git
from tests.support import ROOT

BASE_SENTINEL = "base-sentinel-Pa55word-must-never-show"


GATEWAY = """\
apiVersion: hypershell.redhat.io/v1alpha1
kind: Gateway
metadata:
  name: {name}
spec:
{spec}
"""


def set_password(project: Path, stack: str, password: str) -> None:
    """Plaintext ``dbAdminPassword`` for every cluster of the stack (the render redacts it)."""
    path = project / f"Pulumi.{stack}.yaml"
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    config = document["config"]
    secrets = config.setdefault("hypershell-gateways:clusterSecrets", {})
    for cluster in config["hypershell-gateways:clusters"]:
        secrets.setdefault(cluster, {})["dbAdminPassword"] = password
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")


def declare(project: Path, stack: str, name: str, spec: str = "  replicas: 1") -> None:
    path = project / "gateways" / stack / f"{name}.yaml"
    path.write_text(GATEWAY.format(name=name, spec=spec), encoding="utf-8")


def pristine_repo(directory: Path) -> Path:
    """A git repository whose one commit is this working tree, local password a sentinel."""
    repo = directory / "pristine"
    shutil.copytree(ROOT, repo, ignore=NOT_COPIED)
    set_password(repo, "local", BASE_SENTINEL)
    git(repo, "init", "--quiet", "--initial-branch=main")
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "--message", "base")
    return repo


def clone(pristine: Path, where: Path) -> Path:
    shutil.copytree(pristine, where, symlinks=True)
    return where


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str
    result: diff_command.Result | None


def run_diff(repo: Path, *args: str) -> Run:
    """``python -m gatewayctl --root REPO diff ARGS`` in process; keeps the diff's result."""
    results: list[diff_command.Result] = []
    original = diff_command.run

    def spy(*a: object, **k: object) -> diff_command.Result:
        result = original(*a, **k)  # type: ignore[arg-type]  # passed on as they came
        results.append(result)
        return result

    out, err = io.StringIO(), io.StringIO()
    with (
        pytest.MonkeyPatch.context() as patch,
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        patch.setattr(diff_command, "run", spy)
        code = cli.main(["--root", str(repo), "diff", *args])
    return Run(code, out.getvalue(), err.getvalue(), results[0] if results else None)


def object_blocks(report: str) -> list[str]:
    """The status of each object diff the report holds (one collapsible section each)."""
    return re.findall(r"^<details><summary>(added|changed|removed) ", report, re.MULTILINE)


def stack_section(report: str, stack: str) -> str:
    start = report.index(f"## Offline diff: stack `{stack}`")
    end = report.find("\n## ", start + 1)
    return report[start : end if end != -1 else len(report)]

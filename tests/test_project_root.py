"""The project a command works on (issue 42, item 8): ``--root``, else the current directory or
the nearest above it with this project's ``Pulumi.yaml``; never the checkout the tool is
installed from. A ``gatewayctl`` installed from one clone and run in another once validated
the first and reported a broken file of the second "ok"."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gatewayctl.cli import arguments
from gatewayctl.errors import UsageError
from tests.builders import copy_stack, write_gateway
from tests.hostile_helpers import run_cli, unlocated
from tests.support import ROOT

BROKEN = "spec.replicas: Input should be less than or equal to 10"


def _broken_clone(root: Path) -> str:
    """A clone of the project whose ibm stack holds a declaration ``validate`` rejects."""
    copy_stack("ibm", root)
    (root / "Pulumi.yaml").write_bytes((ROOT / "Pulumi.yaml").read_bytes())
    return write_gateway(root, "broken", {"replicas": 99}, stack="ibm")


def _expected(source: str) -> list[str]:
    return [f"error: {source}: {BROKEN}", "1 problem(s); nothing written"]


def test_the_tool_installed_elsewhere_validates_the_clone_it_runs_in(tmp_path: Path) -> None:
    # The tool's package is this checkout's (as an install from it is); the current directory
    # is another clone, with a broken file.
    clone = tmp_path / "clone"
    source = _broken_clone(clone)
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "gatewayctl", "validate", "ibm"],
        cwd=clone / "gateways",
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert unlocated(done.stderr).splitlines() == _expected(source)


def test_the_root_is_found_from_the_current_directory_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clone = tmp_path / "clone"
    source = _broken_clone(clone)
    for where in (clone, clone / "gateways" / "ibm"):
        monkeypatch.chdir(where)
        assert arguments.project_root(Path.cwd()) == clone
        out = run_cli("validate", "ibm")
        assert (out.code, out.out, unlocated(out.err).splitlines()) == (2, "", _expected(source))
    # An explicit --root wins over the current directory.
    out = run_cli("--root", str(ROOT), "validate", "ibm", "-q")
    assert (out.code, out.err) == (0, "")
    assert out.out == "Pulumi.ibm.yaml: ok (4 gateways, 1 cluster)\n"


def test_outside_any_project_a_command_that_reads_one_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    out = run_cli("validate", "--all")
    assert (out.code, out.out) == (2, "")
    assert out.err == (
        f"error: no Pulumi.yaml of project 'hypershell-gateways' in {tmp_path} or above it: run"
        " in a checkout of the project or give --root\n"
    )
    # A command that reads no project runs anywhere.
    explained = run_cli("explain", "spec.replicas")
    assert (explained.code, explained.err) == (0, "")
    assert explained.out.startswith("FIELD:       spec.replicas\nTYPE:        integer\n")


def test_the_nearest_pulumi_yaml_of_another_project_is_not_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _broken_clone(tmp_path)
    other = tmp_path / "vendor" / "other"
    other.mkdir(parents=True)
    (other / "Pulumi.yaml").write_text("name: 'other-project'\nruntime: go\n", encoding="utf-8")
    monkeypatch.chdir(other)
    out = run_cli("validate", "ibm")
    assert (out.code, out.out) == (2, "")
    assert out.err == (
        f"error: {other / 'Pulumi.yaml'} is of project 'other-project', not"
        " 'hypershell-gateways': run in a checkout of hypershell-gateways or give --root\n"
    )
    with pytest.raises(UsageError):
        arguments.project_root(other)
    assert arguments.project_root(other, required=False) == other

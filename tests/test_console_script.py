"""Issue 25 item 6: ``gatewayctl`` is a command of the project's venv (``[project.scripts]``),
the same tool as ``python -m gatewayctl``, with ``--version``."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

from gatewayctl.cli import main as cli
from tests.support import ROOT

SCRIPT = Path(sys.executable).parent / "gatewayctl"
UV = ROOT / ".tools" / "bin" / "uv"
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def run(*command: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(part) for part in command], cwd=ROOT, capture_output=True, text=True, check=False
    )


def test_the_venv_has_the_gatewayctl_command_and_its_help_is_the_tools() -> None:
    done = run(SCRIPT, "--help")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == cli.parser().format_help()


def test_the_command_exits_as_the_tool_does_on_invalid_input() -> None:
    done = run(SCRIPT, "explain", "spec.replica")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "error: no field 'spec.replica' in a gateway declaration; did you mean 'spec.replicas'"
        " or 'spec.release'?\n"
    )


def test_version_prints_the_projects_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert PROJECT["version"] == "0.1.0"
    done = run(SCRIPT, "--version")
    assert (done.returncode, done.stdout, done.stderr) == (0, "gatewayctl 0.1.0\n", "")
    with pytest.raises(SystemExit) as exited:
        cli.main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr() == ("gatewayctl 0.1.0\n", "")


def test_the_installed_entry_point_is_the_one_python_m_runs() -> None:
    (entry,) = metadata.entry_points(group="console_scripts", name="gatewayctl")
    assert entry.value == "gatewayctl.__main__:run"
    assert PROJECT["scripts"] == {"gatewayctl": "gatewayctl.__main__:run"}


@pytest.mark.skipif(not UV.exists(), reason="uv is installed by `make setup`")
def test_uv_run_finds_the_command() -> None:
    done = run(UV, "run", "--frozen", "--no-sync", "gatewayctl", "--version")
    assert (done.returncode, done.stdout) == (0, "gatewayctl 0.1.0\n")


@pytest.mark.skipif(not UV.exists(), reason="uv is installed by `make setup`")
def test_the_wheel_holds_only_the_projects_packages(tmp_path: Path) -> None:
    done = run(UV, "build", "--wheel", "--out-dir", tmp_path)
    assert done.returncode == 0, done.stderr
    (wheel,) = tmp_path.glob("*.whl")
    assert wheel.name == "hypershell_gateways-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert {name.split("/")[0] for name in names} == {
        "components",
        "gatewayctl",
        "hypershell_gateways-0.1.0.dist-info",
    }
    assert "gatewayctl/__main__.py" in names
    assert "gatewayctl/diff/__init__.py" in names  # subpackages too
    entry_points = "hypershell_gateways-0.1.0.dist-info/entry_points.txt"
    with zipfile.ZipFile(wheel) as archive:
        assert archive.read(entry_points).decode() == (
            "[console_scripts]\ngatewayctl = gatewayctl.__main__:run\n\n"
        )

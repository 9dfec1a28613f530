"""``gatewayctl render`` (``gatewayctl.cli.render``): the progress display while the stacks
render, in this process or in workers."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from gatewayctl.cli import render as render_command
from gatewayctl.resolve import preparation
from tests.builders import copy_project, write_gateway


def test_progress_bar_for_many_gateways(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "p")
    for index in range(render_command.PROGRESS_MIN_GATEWAYS):
        write_gateway(project, f"t{index:02}", stack="local")
    prepared = preparation.prepare(project, "local")
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=120)
    (result,) = render_command._render_all([prepared], console, show_progress=True, jobs=1)
    gateways = render_command.PROGRESS_MIN_GATEWAYS + 3
    assert f"rendering local ({gateways} gateways)" in buffer.getvalue()
    assert f"{result.resources} resources" in buffer.getvalue()
    assert len(result.gateways) == render_command.PROGRESS_MIN_GATEWAYS + 3
    quiet = io.StringIO()
    render_command._render_all([prepared], Console(file=quiet, force_terminal=True), False, jobs=1)
    assert quiet.getvalue() == ""


def test_one_progress_display_for_the_stacks_rendering_in_workers(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "p")
    for index in range(render_command.PROGRESS_MIN_GATEWAYS):
        write_gateway(project, f"t{index:02}", stack="local")
        write_gateway(project, f"t{index:02}", {"cluster": "roks-us-east"}, stack="ibm")
    prepared = [preparation.prepare(project, stack) for stack in ("aws", "ibm", "local")]
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=120)

    results = render_command._render_all(prepared, console, show_progress=True, jobs=2)

    shown = buffer.getvalue()
    assert [r.prepared.loaded.name for r in results] == ["aws", "ibm", "local"]
    for result in results[1:]:  # aws has fewer gateways than the display's threshold
        name, gateways = result.prepared.loaded.name, len(result.gateways)
        assert f"rendering {name} ({gateways} gateways)" in shown
        assert f"{result.resources} resources" in shown
    assert "rendering aws" not in shown

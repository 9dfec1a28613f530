"""The render progress display (``gatewayctl.cli.progress``): drawn only on a terminal."""

from __future__ import annotations

import io

from rich.console import Console

from gatewayctl.cli.progress import RenderProgress
from gatewayctl.resolve import preparation
from tests.support import ROOT


def test_no_progress_display_into_a_pipe_or_a_file() -> None:
    # rich draws nothing there but the blank line its transient display leaves at the end.
    prepared = preparation.prepare(ROOT, "local")
    buffer = io.StringIO()
    progress = RenderProgress(Console(file=buffer), [prepared], min_gateways=1)
    progress.start("local", len(prepared.loaded.gateways))
    progress.advance("local", 5)
    progress.stop()
    assert (progress.wanted, buffer.getvalue()) == (False, "")
    shown = io.StringIO()
    drawn = RenderProgress(Console(file=shown, force_terminal=True), [prepared], min_gateways=1)
    assert drawn.wanted is True

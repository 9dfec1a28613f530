"""The one progress display of a render (``render``, ``render --all``): a line per stack of at
least ``min_gateways`` gateways, rendered in this process or in workers."""

from __future__ import annotations

import time
from collections.abc import Sequence

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from gatewayctl.engine import workers
from gatewayctl.resolve import preparation


class RenderProgress(workers.Reporter):
    """One progress display for every stack being rendered (in this process or in workers),
    a line per stack of at least ``min_gateways`` gateways; drawn by this thread alone
    (no refresh thread: workers are forked from this process)."""

    def __init__(
        self, console: Console, prepared: Sequence[preparation.Prepared], min_gateways: int
    ) -> None:
        self.console = console
        self.min_gateways = min_gateways
        # Only on a terminal: rich draws nothing into a pipe or a file but the blank line its
        # transient display leaves when it stops (rich.live.Live.stop), which broke the
        # one-line output of an interrupted run (tests/test_interrupts.py).
        self.wanted = console.is_terminal and any(
            len(p.loaded.gateways) >= min_gateways for p in prepared
        )
        self.display: Progress | None = None
        self.tasks: dict[str, TaskID] = {}
        self.drawn = 0.0

    def start(self, stack: str, gateways: int) -> None:
        if not self.wanted or gateways < self.min_gateways:
            return
        if self.display is None:
            # Resources register in waves across all gateways (each waits on the outputs it
            # uses), so a per-gateway count would sit at zero until the last wave: count
            # registrations instead.
            columns = (
                TextColumn("{task.description}"),
                BarColumn(),
                TextColumn("{task.completed} resources"),
                TimeElapsedColumn(),
            )
            self.display = Progress(
                *columns, console=self.console, transient=True, auto_refresh=False
            )
            self.display.start()
        self.tasks[stack] = self.display.add_task(
            f"rendering {stack} ({gateways} gateways)", total=None
        )
        self.tick()

    def advance(self, stack: str, registered: int) -> None:
        if self.display is not None and stack in self.tasks:
            self.display.advance(self.tasks[stack], registered)
            self.tick()

    def tick(self) -> None:
        now = time.monotonic()
        if self.display is not None and now - self.drawn >= workers.PROGRESS_EVERY:
            self.display.refresh()
            self.drawn = now

    def stop(self) -> None:
        if self.display is not None:
            self.display.stop()

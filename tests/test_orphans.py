"""A render's workers end with their parent, however it ends (issue 42, item 14).

SIGKILL (the OOM killer, ``kill -9``, a CI runner tearing a job down) gives the parent no
chance to stop its workers (``gatewayctl.engine.workers``): they rendered on, then blocked for
ever writing their result into a pipe nobody read, and, holding the parent's stdout, kept a
shell's ``out=$(gatewayctl render ...)`` open. Now the kernel ends them with the parent.

Where the run is is observed through ``/proc`` (as in tests/test_interrupts.py); the only clock
is a bound on how long the end may take, far above what it does take.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from gatewayctl.engine import shares
from tests.processes import alive, children
from tests.support import ROOT, render_bench

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/stat").is_file(),
    reason="watches the processes through /proc (Linux), where workers are forked",
)

GATEWAYS = 90
"""Gateways of the generated stack: with ``--jobs 2``, two shares, each a worker's."""
STARTED = 300.0
"""Seconds the run has to start its workers."""
BOUND = 30.0
"""Seconds the workers and the output have to end once the parent is killed."""


def within(seconds: float, condition: Callable[[], bool]) -> bool:
    """Whether ``condition`` holds within ``seconds`` (polled)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def ended(process: subprocess.Popen[bytes]) -> bool:
    return process.poll() is not None


@pytest.fixture(scope="module")
def large_stack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("large")
    render_bench().write_stack(root, GATEWAYS)
    return root


def test_killing_the_parent_ends_its_workers_and_closes_its_output(
    large_stack: Path, tmp_path: Path
) -> None:
    assert shares.share_counts([GATEWAYS], jobs=2) == [2]  # a split render
    out = tmp_path / "out"
    args = ["--root", str(large_stack), "render", render_bench().STACK, "--out", str(out)]
    with (tmp_path / "stderr").open("w") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "gatewayctl", *args, "--jobs", "2", "-q"],
            cwd=ROOT,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,  # as `out=$(...)` reads it: to its end
            stderr=err,
            start_new_session=True,
        )
    assert process.stdout is not None
    read = threading.Thread(target=process.stdout.read, daemon=True)
    read.start()
    workers: list[int] = []
    try:
        ready = within(STARTED, lambda: len(children(process.pid)) == 2 or ended(process))
        assert ready and not ended(process), (tmp_path / "stderr").read_text()
        workers = children(process.pid)
        process.kill()
        process.wait()

        assert within(BOUND, lambda: not any(alive(pid) for pid in workers)), "workers outlived it"
        read.join(BOUND)
        assert not read.is_alive(), "its stdout stayed open"
    finally:
        for pid in workers:  # what the fix is for, or the failing run would leave them behind
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        if process.poll() is None:
            process.kill()
            process.wait()
        read.join(BOUND)
        process.stdout.close()

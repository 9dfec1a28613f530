"""Worker processes (``gatewayctl.engine.workers``): what crosses from a worker to the parent.
The runs through workers are tests/test_parallel.py's."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from gatewayctl.engine import workers
from gatewayctl.errors import ToolError
from tests.processes import alive
from tests.support import ROOT

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="workers are forked on Linux only"
)


def test_an_error_that_cannot_cross_processes_keeps_its_name() -> None:
    class LocalError(Exception):  # not importable by name: cannot be unpickled
        pass

    portable = workers._portable(LocalError("oops"))
    assert type(portable) is RuntimeError
    assert str(portable) == "LocalError: oops"
    assert type(workers._portable(ToolError("x"))) is ToolError


def test_a_worker_whose_parent_is_already_gone_ends_at_once() -> None:
    # The parent died before the worker could ask to follow it: the worker sees it has another.
    fork = multiprocessing.get_context("fork")
    for parent, code in ((os.getpid(), 0), (-1, -signal.SIGKILL)):
        worker = fork.Process(target=workers._end_with, args=(parent,))
        worker.start()
        worker.join()
        assert worker.exitcode == code


_ORPHANED = """
import os, sys, time
from gatewayctl.engine import workers
if sys.argv[1] == "watch":
    workers._prctl = lambda: None  # as where there is no prctl(2)
parent = os.getpid()
child = os.fork()
if child == 0:
    workers._end_with(parent)
    print(os.getpid(), flush=True)
    time.sleep(300)
    os._exit(0)
os.waitpid(child, 0)  # until killed, unless the child ends first (an error)
"""


@pytest.mark.parametrize("how", ["prctl", "watch"])
def test_a_worker_ends_when_its_parent_is_killed(how: str) -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(_ORPHANED), how],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert parent.stdout is not None
    line = parent.stdout.readline()
    assert line, "the worker did not start"
    worker = int(line)
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 30  # a bound, far above the watcher's half second
    while alive(worker) and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        assert not alive(worker)
        assert parent.stdout.read() == ""  # its end closed the output it shared
    finally:
        if alive(worker):
            os.kill(worker, signal.SIGKILL)
        parent.stdout.close()

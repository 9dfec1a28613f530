"""Worker processes: one forked per task (spawned where the platform does not fork safely), at
most ``jobs`` at once, each sending its progress and its result to the parent through a pipe
(``gatewayctl.engine.parallel`` decides the tasks and what a worker does with one).

A worker starts from the parent's state, in which no program has run (``docs/design-notes.md``,
"Stacks render in forked workers", says why fork and not spawn, and what it costs in memory).
When a task fails, the other workers are stopped and the task's error is raised as if it had
been raised here (the traceback of the worker attached for ``--debug``). An interrupt of the
parent stops every worker before it undoes anything else (``gatewayctl.interrupts``); workers
ignore SIGINT, which a terminal sends to the whole process group, and leave the decision to the
parent. A parent that ends without a word (SIGKILL) takes its workers with it (``_end_with``).
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import os
import pickle
import resource
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.context import ForkContext, SpawnContext
from multiprocessing.process import BaseProcess
from typing import TYPE_CHECKING, Any

from gatewayctl import interrupts, lazy
from gatewayctl.errors import InvalidInputError, ToolError

if TYPE_CHECKING:
    from gatewayctl.engine.offline import RecordedResource

PROGRESS_EVERY = 0.1
"""Seconds between two progress messages of a worker."""
_BLOCKED = {signal.SIGINT, signal.SIGTERM}
PR_SET_PDEATHSIG = 1
"""prctl(2)'s option (``<linux/prctl.h>``)."""
WATCH_EVERY = 0.5
"""Seconds between two looks at its parent of a worker that has no prctl(2)."""


class Reporter:
    """Progress of a run: ``start`` when a stack's render begins, ``advance`` with the number
    of resources registered since the last call. The default reports nothing."""

    wanted: bool = False
    """Whether ``advance`` is wanted at all (else workers send no progress)."""

    def start(self, stack: str, gateways: int) -> None:
        """The render of ``stack``, of ``gateways`` gateways, begins."""

    def advance(self, stack: str, registered: int) -> None:
        """``registered`` more resources of ``stack`` were registered."""

    def tick(self) -> None:
        """Called in the parent's loop between messages (e.g. to redraw a display)."""


@dataclass(frozen=True, kw_only=True)
class Task:
    """One worker's work: what to do (``kind``) with ``payload`` for ``stack``."""

    stack: str
    kind: str
    payload: Any
    key: str
    """The key of its result (a stack, or a stack and a share of it)."""
    starts: int | None = None
    """The gateways of the stack whose render this task begins (``Reporter.start``), or None."""


OnRegister = Callable[["RecordedResource"], None]
Work = Callable[[Task, OnRegister | None], Any]
"""What a worker does with its task (a module-level function, so spawn can pickle it): the
result to send back, given the callback of every registration when progress is wanted."""


def _context() -> ForkContext | SpawnContext:
    """Fork where the platform forks safely (Linux); spawn elsewhere (macOS, Windows)."""
    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def _mask(how: int, signals: Iterable[int]) -> set[int]:
    """``signal.pthread_sigmask`` where there is one (POSIX); the previous mask."""
    if not hasattr(signal, "pthread_sigmask"):
        return set()
    return {int(signum) for signum in signal.pthread_sigmask(how, signals)}


@functools.cache
def _prctl() -> Callable[[int, int, int, int, int], int] | None:
    """libc's prctl(2) (Linux), or None; looked up in the parent, which its workers inherit."""
    if not sys.platform.startswith("linux"):
        return None

    try:
        prctl = lazy.ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    prctl.argtypes = [lazy.ctypes.c_int, *[lazy.ctypes.c_ulong] * 4]
    prctl.restype = lazy.ctypes.c_int
    return prctl


def _end_with(parent: int) -> None:
    """End this worker (SIGKILL) when ``parent``, the process that started it, ends: however it
    ends, SIGKILL included, which leaves the parent no chance to stop it (``Pool.stop``). Else
    the worker renders on, then blocks for ever writing its result into a pipe that nobody reads
    (its own copy of the reading end keeps the pipe open), and keeps the parent's stdout open.

    Linux: prctl(2), PR_SET_PDEATHSIG: "Set the parent-death signal of the calling process to
    arg2 [...]. This is the signal that the calling process will get when its parent dies."
    The parent is the thread that forked this process (``Pool.run``'s, which reaps every worker
    before it returns). A parent that died before the call is not signalled: this process was
    then reparented already, which ``os.getppid()`` tells. Elsewhere (or if prctl fails), a
    thread watches ``os.getppid()`` instead."""
    prctl = _prctl()
    if prctl is None or prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        lazy.threading.Thread(
            target=_watch, args=(parent,), name="parent-watch", daemon=True
        ).start()
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGKILL)


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCH_EVERY)
    os.kill(os.getpid(), signal.SIGKILL)


def peak_kib() -> int:
    """This process's peak resident set (``ru_maxrss``) in KiB."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak // 1024 if sys.platform == "darwin" else peak


def _portable(error: BaseException) -> BaseException:
    """``error`` as the parent can receive it (an exception that does not survive pickling
    becomes a RuntimeError naming its type)."""
    try:
        copy = pickle.loads(pickle.dumps(error))
    except Exception:
        copy = None
    if isinstance(copy, BaseException) and type(copy) is type(error):
        return error
    return RuntimeError(f"{type(error).__name__}: {error}")


def _work(writer: Connection, task: Task, report_progress: bool, work: Work, parent: int) -> None:
    """A worker's body: do one task, send progress and the result, exit."""
    _end_with(parent)
    # The terminal's Ctrl-C reaches the whole process group: the parent decides and stops us.
    # SIGTERM ends a worker at once (the parent's way to stop it). The parent's interrupt
    # steps and transactions are the parent's: never run here.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    interrupts.forget()
    _mask(signal.SIG_UNBLOCK, _BLOCKED)
    sent = [0, 0.0]  # registrations not yet reported, when last reported

    def on_register(_: RecordedResource) -> None:
        sent[0] += 1
        now = time.monotonic()
        if now - sent[1] >= PROGRESS_EVERY:
            writer.send(("progress", int(sent[0])))
            sent[0], sent[1] = 0, now

    try:
        result = work(task, on_register if report_progress else None)
        if sent[0]:
            writer.send(("progress", int(sent[0])))
        writer.send(("done", result))
    except InvalidInputError as error:
        writer.send(("invalid", error.problems, traceback.format_exc()))
    except BaseException as error:
        writer.send(("error", _portable(error), traceback.format_exc()))
    finally:
        writer.close()


class WorkerError(Exception):
    """The traceback of an error raised in a worker, attached as its cause (``--debug``)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return f"in the worker process:\n{self.text}"


@dataclass
class _Running:
    stack: str
    key: str
    process: BaseProcess
    reader: Connection


class Pool:
    """At most ``jobs`` workers at once, one per task, started in the order given; each does
    ``work`` with its task."""

    def __init__(self, tasks: Sequence[Task], jobs: int, reporter: Reporter, work: Work) -> None:
        self.waiting = list(tasks)
        self.jobs = jobs
        self.reporter = reporter
        self.work = work
        self.context = _context()
        _prctl()  # before any fork: the workers have it at once
        self.running: dict[Connection, _Running] = {}
        self.results: dict[str, Any] = {}

    def run(self) -> dict[str, Any]:
        """Every task's result by its ``key``; the first error raised as is (the others
        stopped)."""
        with interrupts.on_interrupt(self.stop), self._stopped_at_the_end():
            while self.waiting or self.running:
                while self.waiting and len(self.running) < self.jobs:
                    self._start(self.waiting.pop(0))
                for reader in wait(list(self.running), timeout=PROGRESS_EVERY):
                    assert isinstance(reader, Connection)
                    self._receive(self.running[reader])
                self.reporter.tick()
        return self.results

    @contextlib.contextmanager
    def _stopped_at_the_end(self) -> Iterator[None]:
        try:
            yield
        finally:
            self.stop()

    def _start(self, task: Task) -> None:
        reader, writer = self.context.Pipe(duplex=False)
        process = self.context.Process(
            target=_work,
            args=(writer, task, self.reporter.wanted, self.work, os.getpid()),
            name=f"gatewayctl-{task.kind}-{task.stack}",
            daemon=True,
        )
        # Signals are held back across the fork: a child must never run the parent's handler
        # (its undo steps), and the parent must know the child before it handles one.
        blocked = _mask(signal.SIG_BLOCK, _BLOCKED)
        try:
            process.start()
            self.running[reader] = _Running(task.stack, task.key, process, reader)
        finally:
            _mask(signal.SIG_SETMASK, blocked)
            writer.close()
        if task.starts is not None:
            self.reporter.start(task.stack, task.starts)

    def _receive(self, worker: _Running) -> None:
        try:
            message: tuple[Any, ...] = worker.reader.recv()
        except (EOFError, OSError):
            self._end(worker)
            code = worker.process.exitcode
            how = (
                f"was killed by {signal.Signals(-code).name}"
                if code is not None and code < 0 and -code in signal.valid_signals()
                else f"exited {code}"
            )
            raise ToolError(
                f"stack {worker.stack}: its worker process {how} before sending a result"
            ) from None
        kind = message[0]
        if kind == "progress":
            self.reporter.advance(worker.stack, message[1])
            return
        self._end(worker)
        if kind == "done":
            self.results[worker.key] = message[1]
            return
        error: BaseException = InvalidInputError(message[1]) if kind == "invalid" else message[1]
        raise error from WorkerError(message[2])

    def _end(self, worker: _Running) -> None:
        del self.running[worker.reader]
        worker.reader.close()
        worker.process.join()

    def stop(self) -> None:
        """Stop every running worker and reap it (also an interrupt step)."""
        running = list(self.running.values())
        self.running.clear()
        for worker in running:
            with contextlib.suppress(OSError, ValueError, AttributeError):
                if worker.process.pid is not None:
                    os.kill(worker.process.pid, signal.SIGKILL)
        for worker in running:
            with contextlib.suppress(OSError, ValueError, AssertionError):
                worker.process.join(timeout=5)
            with contextlib.suppress(OSError):
                worker.reader.close()

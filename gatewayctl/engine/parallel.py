"""Several stacks at once: each stack's render in a worker process of its own (``render --all``,
the working-tree side of ``diff --all``).

The offline engine keeps its state in the Pulumi SDK's module globals
(``gatewayctl.engine.offline``), so one process renders one stack at a time. A worker is a process
forked for one stack: it renders it, sends the result back to the parent and exits, so every stack
starts from the parent's state, in which no program has run (``docs/design-notes.md``, "Stacks
render in forked workers", says why fork and not spawn, and what it costs in memory). At most
``jobs`` workers run at once; ``jobs=1`` renders in this process, one stack after the other, as
before.

The parent alone prints and writes: workers send their progress (registrations so far) and
their result through a pipe, and the parent returns the results in the order it was given, so a
parallel run's output and summary are those of a serial one. When a stack fails, the other
workers are stopped, nothing is returned and the stack's error is raised as if it had been
raised here (the traceback of the worker attached for ``--debug``). An interrupt of the parent
stops every worker before it undoes anything else (``gatewayctl.interrupts``); workers ignore
SIGINT, which a terminal sends to the whole process group, and leave the decision to the parent.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import resource
import signal
import sys
import time
import traceback
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.context import ForkContext, SpawnContext
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gatewayctl import interrupts
from gatewayctl.errors import InvalidInputError, ToolError
from gatewayctl.resolve import preparation

if TYPE_CHECKING:
    # The program and its SDKs are imported where a stack renders (``_render``), not to
    # validate one (``prepare_stacks``: ``validate --all``).
    from gatewayctl.engine import render
    from gatewayctl.engine.offline import RecordedResource

PROGRESS_EVERY = 0.1
"""Seconds between two progress messages of a worker."""
_BLOCKED = {signal.SIGINT, signal.SIGTERM}


@dataclass(frozen=True, kw_only=True)
class StackRender:
    """One stack's render as the writer and the summary need it: what a worker sends back
    (the recording of every resource stays in the worker)."""

    prepared: preparation.Prepared
    files: dict[str, str]
    gateways: tuple[render.GatewaySummary, ...]
    resources: int
    peak_kib: int | None = None
    """The worker's peak resident set (``ru_maxrss``); None when rendered in this process."""

    @property
    def manifests(self) -> int:
        return sum(1 for path in self.files if path.startswith("manifests/"))


def light(rendered: render.Rendered, peak_kib: int | None = None) -> StackRender:
    return StackRender(
        prepared=rendered.prepared,
        files=rendered.files,
        gateways=rendered.gateways,
        resources=len(rendered.recording.resources),
        peak_kib=peak_kib,
    )


def available_cores() -> int:
    """Cores this process may run on (its affinity, where the platform tells)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def default_jobs(stacks: int) -> int:
    """As many workers as there are cores and stacks."""
    return max(1, min(available_cores(), stacks))


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


def render_stacks(
    prepared: Sequence[render.Prepared], *, jobs: int, reporter: Reporter | None = None
) -> list[StackRender]:
    """Render every validated stack, ``jobs`` at a time; the results in the order given."""
    # Imported here, before any worker is forked: the workers share the program and its SDKs
    # with this process (copy-on-write) instead of importing them each.
    from gatewayctl.engine import shares

    reporter = reporter or Reporter()
    # A large stack is split into shares of its gateways (gatewayctl.engine.shares), decided from
    # the work: small work stays in this process, as with jobs=1.
    counts = shares.share_counts([len(p.loaded.gateways) for p in prepared], jobs)
    if jobs <= 1 or sum(counts) <= 1:
        return [_in_process(item, reporter) for item in prepared]
    # The largest pieces of work first (by gateways): a large one started last would leave the
    # other cores idle while it finishes. The results keep the order given.
    tasks: list[Task] = []
    for item, count in sorted(
        zip(prepared, counts, strict=True),
        key=lambda pair: len(pair[0].loaded.gateways) / pair[1],
        reverse=True,
    ):
        stack = item.loaded.name
        if count == 1:
            tasks.append((stack, _RENDER, item))
            continue
        names = [g.name for g in item.loaded.gateways]
        tasks += [
            (stack, _SHARE, (item, index, part))
            for index, part in enumerate(shares.split(names, count))
        ]
    results = _Pool(tasks, jobs, reporter).run()
    rendered = []
    for item, count in zip(prepared, counts, strict=True):
        stack = item.loaded.name
        if count == 1:
            files, gateways, resources, peak = results[stack]
            rendered.append(
                StackRender(
                    prepared=item,
                    files=files,
                    gateways=gateways,
                    resources=resources,
                    peak_kib=peak,
                )
            )
            continue
        parts = [results[_share_key(stack, index)] for index in range(count)]
        merged = shares.merge(item, [share for share, _ in parts])
        rendered.append(
            StackRender(
                prepared=item,
                files=merged.files,
                gateways=merged.gateways,
                resources=merged.resources,
                peak_kib=max(peak for _, peak in parts),
            )
        )
    return rendered


Validated = preparation.Prepared | InvalidInputError
"""A stack validated, or its problems."""


def prepare_stacks(root: Path, stacks: Sequence[str], *, jobs: int) -> list[Validated]:
    """Validate every stack (``render.prepare``), ``jobs`` at a time; each stack's result or
    its problems, in the order given."""
    if jobs <= 1 or len(stacks) <= 1:
        return [_prepared(root, stack) for stack in stacks]
    results = _Pool([(stack, _PREPARE, root) for stack in stacks], jobs, Reporter()).run()
    return [_validated(results[stack]) for stack in stacks]


def _validated(result: Any) -> Validated:
    if isinstance(result, tuple) and result[0] == "invalid":
        return InvalidInputError(result[1])
    assert isinstance(result, preparation.Prepared)
    return result


def _prepared(root: Path, stack: str) -> Validated:
    try:
        return preparation.prepare(root, stack)
    except InvalidInputError as error:
        return error


def _in_process(prepared: render.Prepared, reporter: Reporter) -> StackRender:
    from gatewayctl.engine import render

    reporter.start(prepared.loaded.name, len(prepared.loaded.gateways))
    stack = prepared.loaded.name

    def on_register(_: RecordedResource) -> None:
        reporter.advance(stack, 1)

    return light(render.execute(prepared, on_register if reporter.wanted else None))


# --- the worker -------------------------------------------------------------------------------

_RENDER, _PREPARE, _SHARE = "render", "prepare", "share"
Task = tuple[str, str, Any]
"""(stack, what to do, its input): render a ``render.Prepared``, prepare from a root, or
render a share of a stack's gateways (``(prepared, index, names)``,
``gatewayctl.engine.shares``)."""


def _share_key(stack: str, index: int) -> str:
    return f"{stack}/{index}"  # a stack name holds no '/'


def _key(task: Task) -> str:
    """The key of a task's result: its stack, or its stack and share."""
    stack, kind, payload = task
    return _share_key(stack, payload[1]) if kind == _SHARE else stack


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


def _peak_kib() -> int:
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


def _work(writer: Connection, task: Task, report_progress: bool) -> None:
    """A worker's body: do one stack's task, send progress and the result, exit."""
    # The terminal's Ctrl-C reaches the whole process group: the parent decides and stops us.
    # SIGTERM ends a worker at once (the parent's way to stop it). The parent's interrupt
    # steps and transactions are the parent's: never run here.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    interrupts.forget()
    _mask(signal.SIG_UNBLOCK, _BLOCKED)
    stack, kind, payload = task
    sent = [0, 0.0]  # registrations not yet reported, when last reported

    def on_register(_: RecordedResource) -> None:
        sent[0] += 1
        now = time.monotonic()
        if now - sent[1] >= PROGRESS_EVERY:
            writer.send(("progress", int(sent[0])))
            sent[0], sent[1] = 0, now

    try:
        result: Any
        if kind == _PREPARE:
            result = _prepared(payload, stack)
            if isinstance(result, InvalidInputError):
                result = ("invalid", result.problems)
        elif kind == _SHARE:
            from gatewayctl.engine import shares

            prepared, _, names = payload
            share = shares.execute_share(prepared, names, on_register if report_progress else None)
            if sent[0]:
                writer.send(("progress", int(sent[0])))
            result = (share, _peak_kib())
        else:
            from gatewayctl.engine import render

            rendered = render.execute(payload, on_register if report_progress else None)
            if sent[0]:
                writer.send(("progress", int(sent[0])))
            done = light(rendered, _peak_kib())
            result = (done.files, done.gateways, done.resources, done.peak_kib)
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


class _Pool:
    """At most ``jobs`` workers at once, one per task, started in the order given."""

    def __init__(self, tasks: Sequence[Task], jobs: int, reporter: Reporter) -> None:
        self.waiting = list(tasks)
        self.jobs = jobs
        self.reporter = reporter
        self.context = _context()
        self.running: dict[Connection, _Running] = {}
        self.results: dict[str, Any] = {}

    def run(self) -> dict[str, Any]:
        """Every task's result by stack (by stack and share for a share: ``_key``); the first
        error raised as is (the others stopped)."""
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
        stack, kind, payload = task
        reader, writer = self.context.Pipe(duplex=False)
        process = self.context.Process(
            target=_work,
            args=(writer, task, self.reporter.wanted),
            name=f"gatewayctl-{kind}-{stack}",
            daemon=True,
        )
        # Signals are held back across the fork: a child must never run the parent's handler
        # (its undo steps), and the parent must know the child before it handles one.
        blocked = _mask(signal.SIG_BLOCK, _BLOCKED)
        try:
            process.start()
            self.running[reader] = _Running(stack, _key(task), process, reader)
        finally:
            _mask(signal.SIG_SETMASK, blocked)
            writer.close()
        if kind == _RENDER or (kind == _SHARE and payload[1] == 0):
            prepared = payload if kind == _RENDER else payload[0]
            self.reporter.start(stack, len(prepared.loaded.gateways))

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

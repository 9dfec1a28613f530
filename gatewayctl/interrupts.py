"""Interrupts: SIGINT (Ctrl-C) and SIGTERM (CI cancellation, ``timeout``) end a command with
exit 130 or 143, one line on stderr, and nothing left behind.

:func:`install` (called first thing in ``gatewayctl/__main__.py``, before the heavy imports)
replaces Python's ``KeyboardInterrupt`` with a handler that never raises into the running
code. Raising there is what went wrong before: an exception thrown into the middle of the
asyncio render is caught as a task's result, printed by a finaliser ("Task was destroyed but
it is pending!", "Exception ignored in ...") or swallowed, and the render went on to write
its output. Instead the handler unwinds what this module was told about, newest first, and
ends the process at once (``os._exit``: no finaliser, no asyncio dump, no partial write
flushed):

- :func:`on_interrupt` registers an undo step for the length of a block (remove a temporary
  directory, a git worktree, stop a progress display);
- :func:`run` runs a child process that an interrupt terminates (SIGTERM, then SIGKILL after
  :data:`CHILD_GRACE` seconds) and waits for before anything else is undone;
- :func:`deferred` holds an interrupt back across a few steps that must not be cut apart (a
  rename and its undo registration); it is handled at the end of the block;
- :func:`transaction` makes every output written inside it one all-or-nothing change: outputs
  move into place with :func:`undo` steps, and an interrupt (or an exception) before the end of
  the outermost transaction puts everything back; :func:`after` steps (removing the replaced
  trees) run once it is committed.

Without :func:`install` (the library used in process, as the tests do) an interrupt is
Python's ``KeyboardInterrupt`` as usual, and the same undo steps run as the exception passes
through :func:`transaction`.

A signal that arrives before ``gatewayctl/__main__.py`` runs (the first few tens of
milliseconds of interpreter start-up) is handled by Python itself.

This module imports only the standard library's lightest modules: it is imported before
anything else.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from types import FrameType
from typing import TYPE_CHECKING, ClassVar

from gatewayctl import lazy

if TYPE_CHECKING:  # imported where used: this module is imported before everything else
    import subprocess

SIGNALS = (signal.SIGINT, signal.SIGTERM)
EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}
"""128 + the signal number, as shells report a process ended by it."""
CHILD_GRACE = 10.0
"""Seconds a child process has to exit after SIGTERM before it is killed."""

Step = Callable[[], object]


class _State:
    """The process's interrupt state (one per process: signals are)."""

    installed: ClassVar[bool] = False
    exiting: ClassVar[bool] = False
    holding: ClassVar[int] = 0
    pending: ClassVar[int | None] = None
    committed: ClassVar[bool] = False
    steps: ClassVar[list[Step]] = []
    transactions: ClassVar[list[_Transaction]] = []


def install(early: Sequence[int] = ()) -> None:
    """Handle SIGINT and SIGTERM as this module describes (only in the main thread).

    ``early``: signals already received by a provisional handler, installed before this module
    was imported; the first one is handled now.
    """
    for signum in SIGNALS:
        signal.signal(signum, _handle)
    _State.installed = True
    if early:
        _exit(early[0])


def forget() -> None:
    """In a process forked from this one (a render worker, ``gatewayctl.engine.workers``): drop the
    parent's undo steps and transactions, which are the parent's to run, never the child's."""
    _State.installed = False
    _State.exiting = False
    _State.holding = 0
    _State.pending = None
    _State.committed = False
    _State.steps = []
    _State.transactions = []


def message(signum: int) -> str:
    """The one line printed for an interrupt by ``signum``."""
    name = signal.Signals(signum).name
    if _State.committed:
        return f"interrupted ({name}) after the output was written"
    return f"interrupted ({name}); nothing written"


def exit_code(signum: int) -> int:
    return EXIT_CODES.get(signal.Signals(signum), 128 + signum)


def _handle(signum: int, _frame: FrameType | None) -> None:
    if _State.exiting:
        return
    if _State.holding:
        if _State.pending is None:
            _State.pending = signum
        return
    _exit(signum)


def _exit(signum: int) -> None:
    """Undo every registered step, newest first, print one line and end the process."""
    _State.exiting = True
    for other in SIGNALS:  # a second Ctrl-C must not cut the clean-up short
        signal.signal(other, signal.SIG_IGN)
    for step in reversed(list(_State.steps)):
        with contextlib.suppress(BaseException):
            step()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BaseException):
            stream.flush()
    with contextlib.suppress(OSError):
        os.write(2, (message(signum) + "\n").encode())
    os._exit(exit_code(signum))


@contextlib.contextmanager
def on_interrupt(step: Step) -> Iterator[None]:
    """Run ``step`` if the process is interrupted inside the block (not when it ends)."""
    _State.steps.append(step)
    try:
        yield
    finally:
        _remove(step)


def _remove(step: Step) -> None:
    for index in range(len(_State.steps) - 1, -1, -1):
        if _State.steps[index] is step:
            del _State.steps[index]
            return


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Hold an interrupt back until the end of the block, then handle it."""
    _State.holding += 1
    try:
        yield
    finally:
        _State.holding -= 1
        if not _State.holding and _State.pending is not None and not _State.exiting:
            _exit(_State.pending)


# --- outputs: all or nothing ----------------------------------------------------------------


class _Transaction:
    def __init__(self) -> None:
        self.undo: list[Step] = []
        self.after: list[Step] = []

    # A step is dropped once done, not before: if an interrupt cuts one short, the handler
    # runs it again (the steps are renames and removals that may be repeated).

    def rollback(self) -> None:
        while self.undo:
            with contextlib.suppress(OSError):
                self.undo[-1]()
            self.undo.pop()

    def finish(self) -> None:
        while self.after:
            with contextlib.suppress(OSError):
                self.after[0]()
            self.after.pop(0)


@contextlib.contextmanager
def transaction() -> Iterator[None]:
    """Outputs written inside are all kept, or all undone on an interrupt or an exception.

    Nested transactions join the outermost one; its end is the commit point.
    """
    if _State.transactions:
        yield
        return
    current = _Transaction()
    _State.transactions.append(current)
    _State.committed = False
    try:
        with on_interrupt(current.rollback):
            try:
                yield
            except BaseException:
                with deferred():
                    current.rollback()
                raise
            with deferred():  # the commit point: an interrupt from here on keeps the output
                _State.committed = bool(current.undo)  # something was written
                current.undo.clear()
    finally:
        _State.transactions.remove(current)
    with on_interrupt(current.finish):
        current.finish()


def undo(step: Step) -> None:
    """Register how to take back a write just made (in the current transaction)."""
    if not _State.transactions:
        raise RuntimeError("undo() outside a transaction")
    _State.transactions[0].undo.append(step)


def after(step: Step) -> None:
    """Register a step to run once the current transaction is committed."""
    if not _State.transactions:
        raise RuntimeError("after() outside a transaction")
    _State.transactions[0].after.append(step)


# --- child processes ------------------------------------------------------------------------


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _stop(process: subprocess.Popen[str], grace: float = CHILD_GRACE) -> None:
    """Terminate ``process`` and its own children (its process group), reap it, and wait
    (boundedly) for the group to be gone. Without the Popen object's locks: the interrupted
    code may hold them.

    The group matters: ``git worktree add`` runs a checkout in a child of its own, which went on
    writing into ``.git/worktrees`` after its parent was stopped.
    """
    group = process.pid  # run() starts each child as the leader of a new group

    def signal_group(signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signum)

    reaped = process.returncode is not None

    def reap(flags: int) -> None:
        nonlocal reaped
        try:
            reaped = reaped or bool(os.waitpid(process.pid, flags)[0])
        except ChildProcessError:  # reaped elsewhere
            reaped = True

    signal_group(signal.SIGTERM)
    for signum, seconds in ((signal.SIGTERM, grace), (signal.SIGKILL, 2.0)):
        if signum == signal.SIGKILL:
            signal_group(signal.SIGKILL)
        deadline = time.monotonic() + seconds
        while True:
            reap(os.WNOHANG)
            if reaped and not _group_alive(group):
                return
            if time.monotonic() >= deadline:
                break
            time.sleep(0.02)
    if not reaped:
        reap(0)


def run(
    args: Sequence[str],
    *,
    timeout: float,
    cwd: str | os.PathLike[str] | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``subprocess.run(args, capture_output=True, text=True)``, the child (and its children)
    stopped and reaped first if the process is interrupted meanwhile. Raises OSError and
    TimeoutExpired."""
    with started(args, cwd=cwd, env=env) as child:
        return child.finish(timeout)


class Child:
    """A child process started by :func:`started`: :meth:`finish` waits for it."""

    def __init__(self, args: Sequence[str], process: subprocess.Popen[str]) -> None:
        self.args = args
        self.process = process

    def finish(self, timeout: float) -> lazy.subprocess.CompletedProcess[str]:
        """Wait for the child's end (at most ``timeout`` seconds from now: then it is stopped
        and TimeoutExpired raised); its output and exit code."""

        try:
            out, err = self.process.communicate(timeout=timeout)
        except BaseException:
            _stop(self.process, grace=0)
            raise
        return lazy.subprocess.CompletedProcess(self.args, self.process.returncode, out, err)


@contextlib.contextmanager
def started(
    args: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: dict[str, str] | None = None,
) -> Iterator[Child]:
    """A child process running while the block runs (capturing its output as text); stopped
    and reaped at the end of the block if :meth:`Child.finish` did not wait for it, and first
    thing if the process is interrupted meanwhile. Raises OSError."""

    with deferred():
        process = lazy.subprocess.Popen(
            args,
            cwd=cwd,
            env=env,
            stdin=lazy.subprocess.DEVNULL,
            stdout=lazy.subprocess.PIPE,
            stderr=lazy.subprocess.PIPE,
            text=True,
            process_group=0,  # stopped as a group; a terminal's Ctrl-C reaches this process only
        )

        def stop() -> None:
            _stop(process)

        _State.steps.append(stop)
    try:
        with process:
            try:
                yield Child(args, process)
            finally:
                if process.returncode is None:
                    _stop(process, grace=0)
    finally:
        _remove(stop)


@contextlib.contextmanager
def temporary_directory(
    prefix: str, directory: str | os.PathLike[str] | None = None
) -> Iterator[str]:
    """``tempfile.TemporaryDirectory`` (in ``directory``, else the system's), also removed when
    the process is interrupted."""

    with deferred():
        path = lazy.tempfile.mkdtemp(prefix=prefix, dir=directory)

        def remove() -> None:
            lazy.shutil.rmtree(path, ignore_errors=True)

        _State.steps.append(remove)
    try:
        yield path
    finally:
        try:
            remove()
        finally:
            _remove(remove)

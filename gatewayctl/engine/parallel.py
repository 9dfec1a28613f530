"""Several stacks at once: each stack's render in a worker process of its own (``render --all``,
the working-tree side of ``diff --all``).

The offline engine keeps its state in the Pulumi SDK's module globals
(``gatewayctl.engine.offline``), so one process renders one stack at a time. A worker is a process
(``gatewayctl.engine.workers``) forked for one stack: it renders it, sends the result back to the
parent and exits, so every stack starts from the parent's state. At most ``jobs`` workers run at
once; ``jobs=1`` renders in this process, one stack after the other, as before. This module
decides the tasks (a stack, or a share of a large one's gateways) and what a worker does with
one.

The parent alone prints: workers send their progress (registrations so far) and their result
through a pipe, and the parent returns the results in the order it was given, so a parallel
run's output and summary are those of a serial one. The files of a render go where the parent
says (``into``: a directory it made for each stack, moved into place by it once every stack has
rendered); a worker writes its own there and sends back their paths. When a stack fails, the other
workers are stopped, nothing is returned and the stack's error is raised as if it had been
raised here.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gatewayctl import lazy
from gatewayctl.engine.workers import OnRegister, Pool, Reporter, Task, peak_kib
from gatewayctl.errors import InvalidInputError
from gatewayctl.resolve import preparation

if TYPE_CHECKING:
    # The program and its SDKs are imported where a stack renders (``_render``), not to
    # validate one (``prepare_stacks``: ``validate --all``).
    from gatewayctl.engine import render
    from gatewayctl.engine.offline import RecordedResource
    from gatewayctl.resolve import preparation


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
    written: tuple[str, ...] = ()
    """The render's files already written (``render_stacks``' ``into``), not in ``files``."""

    @property
    def manifests(self) -> int:
        return sum(1 for path in (*self.files, *self.written) if path.startswith("manifests/"))


def light(
    rendered: render.Rendered, peak_kib: int | None = None, into: Path | None = None
) -> StackRender:
    """What the writer and the summary need of ``rendered``; with ``into``, its files written
    into that directory (``write_guard.write_files``) and only their paths kept."""
    files, written = _kept(rendered.files, into)
    return StackRender(
        prepared=rendered.prepared,
        files=files,
        gateways=rendered.gateways,
        resources=len(rendered.recording.resources),
        peak_kib=peak_kib,
        written=written,
    )


def _kept(files: dict[str, str], into: Path | None) -> tuple[dict[str, str], tuple[str, ...]]:
    if into is None:
        return files, ()

    lazy.write_guard.write_files(into, files)
    return {}, tuple(sorted(files))


def available_cores() -> int:
    """Cores this process may run on (its affinity, where the platform tells)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def default_jobs(stacks: int) -> int:
    """As many workers as there are cores and stacks."""
    return max(1, min(available_cores(), stacks))


def render_stacks(
    prepared: Sequence[preparation.Prepared],
    *,
    jobs: int,
    reporter: Reporter | None = None,
    into: Mapping[str, Path] | None = None,
) -> list[StackRender]:
    """Render every validated stack, ``jobs`` at a time; the results in the order given.

    ``into``: stack name → an empty directory (``write_guard.staging_tree``) that stack's files are
    written into where they are made, by the workers (spreading the writes over the cores, and
    sending the parent nothing but paths); its ``StackRender`` then holds the paths written."""
    into = into or {}
    # Imported here, before any worker is forked: the workers share the program and its SDKs
    # with this process (copy-on-write) instead of importing them each.

    lazy.program.load_ahead()

    reporter = reporter or Reporter()
    # A large stack is split into shares of its gateways (gatewayctl.engine.shares), decided from
    # the work: small work stays in this process, as with jobs=1.
    counts = lazy.shares.share_counts([len(p.loaded.gateways) for p in prepared], jobs)
    if jobs <= 1 or sum(counts) <= 1:
        return [_in_process(item, reporter, into.get(item.loaded.name)) for item in prepared]
    # The largest pieces of work first (by gateways): a large one started last would leave the
    # other cores idle while it finishes. The results keep the order given.
    tasks: list[Task] = []
    for item, count in sorted(
        zip(prepared, counts, strict=True),
        key=lambda pair: len(pair[0].loaded.gateways) / pair[1],
        reverse=True,
    ):
        stack = item.loaded.name
        gateways = len(item.loaded.gateways)
        directory = into.get(stack)
        if count == 1:
            tasks.append(
                Task(
                    stack=stack,
                    kind=_RENDER,
                    payload=(item, directory),
                    key=stack,
                    starts=gateways,
                )
            )
            continue
        names = [g.name for g in item.loaded.gateways]
        tasks += [
            Task(
                stack=stack,
                kind=_SHARE,
                payload=(item, index, part, directory),
                key=_share_key(stack, index),
                starts=gateways if index == 0 else None,
            )
            for index, part in enumerate(lazy.shares.split(names, count))
        ]
    results = Pool(tasks, jobs, reporter, _work).run()
    rendered = []
    for item, count in zip(prepared, counts, strict=True):
        stack = item.loaded.name
        if count == 1:
            files, written, gateways, resources, peak = results[stack]
            rendered.append(
                StackRender(
                    prepared=item,
                    files=files,
                    gateways=gateways,
                    resources=resources,
                    peak_kib=peak,
                    written=written,
                )
            )
            continue
        parts = [results[_share_key(stack, index)] for index in range(count)]
        merged = lazy.shares.merge(item, [share for share, _ in parts])
        # The stack-level manifests and plan.json, made here from the shares'.
        files, written = _kept(merged.files, into.get(stack))
        rendered.append(
            StackRender(
                prepared=item,
                files=files,
                gateways=merged.gateways,
                resources=merged.resources,
                peak_kib=max(peak for _, peak in parts),
                written=tuple(sorted((*written, *merged.written))),
            )
        )
    # What the workers sent stays until the process ends: out of the collector's reach, as a
    # run's own objects are (``offline._offline_runtime``), or the interpreter's last collection
    # traverses all of it (0.4 s of a 500-gateway stack's split render).
    gc.freeze()
    return rendered


Validated = preparation.Prepared | InvalidInputError
"""A stack validated, or its problems."""


def prepare_stacks(root: Path, stacks: Sequence[str], *, jobs: int) -> list[Validated]:
    """Validate every stack (``preparation.prepare``), ``jobs`` at a time; each stack's result or
    its problems, in the order given."""
    if jobs <= 1 or len(stacks) <= 1:
        return [_prepared(root, stack) for stack in stacks]
    tasks = [Task(stack=stack, kind=_PREPARE, payload=root, key=stack) for stack in stacks]
    results = Pool(tasks, jobs, Reporter(), _work).run()
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


def _in_process(
    prepared: preparation.Prepared, reporter: Reporter, into: Path | None
) -> StackRender:
    reporter.start(prepared.loaded.name, len(prepared.loaded.gateways))
    stack = prepared.loaded.name

    def on_register(_: RecordedResource) -> None:
        reporter.advance(stack, 1)

    return light(lazy.render.execute(prepared, on_register if reporter.wanted else None), into=into)


# --- what a worker does -----------------------------------------------------------------------

_RENDER, _PREPARE, _SHARE = "render", "prepare", "share"
"""A task's kind: render a stack (``(prepared, into)``), prepare from a root, or render a share
of a stack's gateways (``(prepared, index, names, into)``, ``gatewayctl.engine.shares``);
``into`` is the directory to write into, or None to send the files back."""


def _share_key(stack: str, index: int) -> str:
    return f"{stack}/{index}"  # a stack name holds no '/'


def _work(task: Task, on_register: OnRegister | None) -> Any:
    """One task's result, in its worker (``gatewayctl.engine.workers.Work``)."""
    result: Any
    if task.kind == _PREPARE:
        result = _prepared(task.payload, task.stack)
        if isinstance(result, InvalidInputError):
            result = ("invalid", result.problems)
        return result
    if task.kind == _SHARE:
        prepared, _, names, directory = task.payload
        share = lazy.shares.execute_share(prepared, names, on_register, directory)
        return (share, peak_kib())

    prepared, directory = task.payload
    done = light(lazy.render.execute(prepared, on_register), peak_kib(), directory)
    return (done.files, done.written, done.gateways, done.resources, done.peak_kib)

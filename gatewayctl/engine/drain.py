"""The end of a program run under the real engine in time linear in its Outputs.

When the program body returns, the SDK waits for what it started (``run_pulumi_func`` awaits
``wait_for_rpcs``, pulumi 3.272.0 ``pulumi/runtime/stack.py`` lines 125-225): first every
queued RPC, one by one, then every tracked Output (``SETTINGS.outputs``, which each Output
joins when made and leaves when it succeeds: ``pulumi/output.py``, ``Output._track``), in a
loop (stack.py lines 194-217, the loop pulumi/pulumi#22411 added):

    pending = list(SETTINGS.outputs); SETTINGS.outputs.clear()
    done, not_done = await asyncio.wait(pending, return_when=FIRST_COMPLETED)
    for task in done: await task
    SETTINGS.outputs.update(not_done)

Under the real engine the Outputs resolve one engine round trip at a time, so each pass finds
one or a few done: every pass copies the set, puts a callback on every pending Output
(``asyncio.wait``), takes them off again and puts the rest back. That is O(pending) per
completion and O(n²) for the run: 8,000 pending Outputs cost 9.1 CPU seconds against 0.03 s
awaited in turn (issue 39). The offline render never gets there with much pending (its
engine answers at once).

:func:`wait_for_rpcs` keeps the SDK's for the RPCs (it calls it with
``await_all_outstanding_tasks=False``) and drains the Outputs itself: one done-callback per
Output, which queues it when it finishes; each finished Output is awaited as it comes, so an
Output's exception surfaces as soon as it fails (as with ``FIRST_COMPLETED``, not after the
ones before it), and Outputs made meanwhile (``SETTINGS.outputs`` is read again after each
completion) are awaited too; then RPCs queued meanwhile send it round again, as the SDK's
outer loop does. O(1) per Output.

:func:`install` puts it in place of ``pulumi.runtime.stack.wait_for_rpcs`` (read by name from
the module's globals when ``run_pulumi_func`` reaches it, so installing it while the program
body runs is in time) only for the SDK version it was read from: any other version keeps the
SDK's and says why (``tests/test_drain.py`` fails when uv.lock pins another one, so an upgrade
means reading those lines again). ``__main__.py`` and the lane's program install it; the
offline render does not.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
from typing import Any

import pulumi.runtime.stack as sdk_stack
from pulumi.runtime import settings

from gatewayctl.engine.shortcuts import CHECKED_AGAINST

_sdk_wait_for_rpcs = sdk_stack.wait_for_rpcs


async def drain_outputs() -> None:
    """Await every tracked Output, those made while waiting included; raise the first failure
    (in the order they finish) as the SDK's loop does, leaving the rest to the caller's exit."""
    finished: asyncio.Queue[asyncio.Future[Any]] = asyncio.Queue()
    waiting = 0
    while True:
        with settings.SETTINGS.lock:
            taken = list(settings.SETTINGS.outputs)
            settings.SETTINGS.outputs.clear()
        for output in taken:
            output.add_done_callback(finished.put_nowait)
        waiting += len(taken)
        if waiting == 0:
            return
        done = await finished.get()
        waiting -= 1
        await done  # an Output's exception (or cancellation) is raised here


async def wait_for_rpcs(await_all_outstanding_tasks: bool = True) -> None:
    """``pulumi.runtime.stack.wait_for_rpcs`` with the Outputs drained by
    :func:`drain_outputs` (module docstring); the same order: RPCs, Outputs, again while
    draining queued more RPCs."""
    rpc_manager = settings._get_rpc_manager()  # as the SDK's: one manager for the run
    while True:
        await _sdk_wait_for_rpcs(await_all_outstanding_tasks=False)
        if not await_all_outstanding_tasks:
            return
        await drain_outputs()
        if not rpc_manager.rpcs:
            return


def install(version: str | None = None) -> str | None:
    """Put :func:`wait_for_rpcs` in the SDK's place; ``None`` when done (or already), else the
    reason it was not (another SDK version: ``version``, default the installed one)."""
    running = importlib.metadata.version("pulumi") if version is None else version
    if running not in CHECKED_AGAINST:
        return (
            f"pulumi SDK {running}: the linear output drain was read from"
            f" {', '.join(CHECKED_AGAINST)} and is not used (pulumi up may take time quadratic"
            " in the stack's outputs; gatewayctl/engine/drain.py)"
        )
    sdk_stack.wait_for_rpcs = wait_for_rpcs
    return None


def uninstall() -> None:
    """Put the SDK's own back."""
    sdk_stack.wait_for_rpcs = _sdk_wait_for_rpcs

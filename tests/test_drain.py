"""The linear output drain (gatewayctl/engine/drain.py) keeps the SDK's semantics at the end of
a run (an Output's failure surfaces while others still wait, Outputs and RPCs made while
draining are awaited) and puts one callback on each Output where the SDK's loop puts one on
every pending Output per completion; it replaces the SDK's only for the version it was read
from, and that is the version uv.lock pins."""

from __future__ import annotations

import asyncio
import tomllib
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pulumi
import pulumi.runtime.stack as sdk_stack
import pytest
from pulumi.runtime import settings

from gatewayctl.engine import drain
from gatewayctl.engine.offline import run_program
from gatewayctl.engine.shortcuts import CHECKED_AGAINST
from tests.support import ROOT

Drain = Callable[[], Awaitable[None]]
OURS: Drain = drain.wait_for_rpcs
THE_SDKS: Drain = drain._sdk_wait_for_rpcs


class CountingFuture(asyncio.Future[Any]):
    """A future that counts the callbacks put on it (``asyncio.wait`` puts one per call)."""

    added = 0

    def add_done_callback(self, fn: Any, *, context: Any = None) -> None:
        CountingFuture.added += 1
        super().add_done_callback(fn, context=context)


@pytest.fixture(autouse=True)
def _fresh_settings() -> Iterator[None]:
    settings.SETTINGS.outputs.clear()
    settings.SETTINGS.rpc_manager.clear()
    CountingFuture.added = 0
    yield
    settings.SETTINGS.outputs.clear()
    settings.SETTINGS.rpc_manager.clear()


def _track(future: asyncio.Future[Any]) -> None:
    with settings.SETTINGS.lock:
        settings.SETTINGS.outputs.add(future)


async def _settle() -> None:
    """Let the drain's loop take its next turn (several loop iterations)."""
    for _ in range(5):
        await asyncio.sleep(0)


def _one_at_a_time(drain_: Drain, n: int) -> int:
    """Drain ``n`` tracked futures finishing one at a time, as the engine's answers come;
    return the callbacks put on them."""

    async def run() -> None:
        futures = [CountingFuture() for _ in range(n)]
        for future in futures:
            _track(future)

        async def finish() -> None:
            for i, future in enumerate(futures):
                await _settle()
                future.set_result(i)

        finisher = asyncio.ensure_future(finish())
        await drain_()
        assert finisher.done()
        assert all(f.done() for f in futures)

    asyncio.run(run())
    return CountingFuture.added


def test_each_output_gets_one_callback_where_the_sdk_puts_one_per_completion() -> None:
    n = 200
    assert _one_at_a_time(OURS, n) == n
    CountingFuture.added = 0
    # The SDK's loop: asyncio.wait on every pending output after each completion.
    assert _one_at_a_time(THE_SDKS, n) == n * (n + 1) // 2


@pytest.mark.parametrize("drain_", [OURS, THE_SDKS], ids=["ours", "the-sdks"])
def test_a_failure_surfaces_while_another_output_still_waits(drain_: Drain) -> None:
    async def run() -> None:
        never: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        failing: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        _track(never)
        _track(failing)

        async def fail() -> None:
            await _settle()
            failing.set_exception(ValueError("the apply failed"))

        failer = asyncio.ensure_future(fail())
        # The guard only turns a hang into a failure: the drain returns once `failing` fails.
        try:
            await asyncio.wait_for(drain_(), timeout=60)
        finally:
            assert failer.done()

    with pytest.raises(ValueError, match="the apply failed"):
        asyncio.run(run())


Later = Callable[[str], Awaitable[str]]


def _when_the_first_output_finishes(drain_: Drain, then: Callable[[Later], Any]) -> list[str]:
    """Drain one tracked output whose completion calls ``then(later)``, which starts more work
    with ``later(what)`` (a coroutine that notes ``what`` when it ends); return the order in
    which that work and the drain ended."""
    order: list[str] = []
    kept: list[Any] = []

    async def later(what: str) -> str:
        await _settle()
        order.append(what)
        return what

    async def run() -> None:
        first: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        _track(first)
        first.add_done_callback(lambda _: kept.append(then(later)))

        async def finish() -> None:
            await _settle()
            first.set_result("first")

        finisher = asyncio.ensure_future(finish())
        await drain_()
        assert finisher.done()
        order.append("drained")

    asyncio.run(run())
    return order


@pytest.mark.parametrize("drain_", [OURS, THE_SDKS], ids=["ours", "the-sdks"])
def test_outputs_made_while_draining_are_awaited(drain_: Drain) -> None:
    def make_output(later: Later) -> Any:
        # An apply's callback making an Output: it joins SETTINGS.outputs as Output._track.
        output = asyncio.ensure_future(later("made while draining"))
        _track(output)
        return output

    order = _when_the_first_output_finishes(drain_, make_output)
    assert order == ["made while draining", "drained"]


@pytest.mark.parametrize("drain_", [OURS, THE_SDKS], ids=["ours", "the-sdks"])
def test_rpcs_queued_while_draining_are_awaited(drain_: Drain) -> None:
    def start_rpc(later: Later) -> Any:
        # The RPC queues itself in rpc_manager.rpcs when it starts.
        rpc = settings.SETTINGS.rpc_manager.do_rpc("register", lambda: later("rpc"))
        return asyncio.ensure_future(rpc())

    order = _when_the_first_output_finishes(drain_, start_rpc)
    assert order == ["rpc", "drained"]


def test_a_failed_rpc_is_raised_as_the_sdk_raises_it() -> None:
    async def run() -> None:
        async def broken() -> None:
            raise RuntimeError("the engine refused it")

        await settings.SETTINGS.rpc_manager.do_rpc("register", broken)()
        await OURS()

    with pytest.raises(RuntimeError, match="the engine refused it"):
        asyncio.run(run())


def test_installed_only_for_the_sdk_version_it_was_read_from() -> None:
    try:
        reason = drain.install("3.999.0")
        assert reason == (
            "pulumi SDK 3.999.0: the linear output drain was read from 3.272.0 and is not used "
            "(pulumi up may take time quadratic in the stack's outputs; "
            "gatewayctl/engine/drain.py)"
        )
        assert sdk_stack.wait_for_rpcs is THE_SDKS
        assert drain.install() is None
        assert sdk_stack.wait_for_rpcs is OURS
    finally:
        drain.uninstall()
    assert sdk_stack.wait_for_rpcs is THE_SDKS


def test_the_locked_sdk_is_the_version_the_drain_was_read_from() -> None:
    # Upgrading pulumi in uv.lock fails here until stack.py's wait_for_rpcs is read again.
    lock = tomllib.loads((ROOT / "uv.lock").read_text())
    (locked,) = [p["version"] for p in lock["package"] if p["name"] == "pulumi"]
    assert locked in CHECKED_AGAINST


def test_a_program_run_with_the_drain_registers_and_resolves_as_with_the_sdks() -> None:
    def program() -> Any:
        parent = pulumi.ComponentResource("test:index:Parent", "p")
        values: list[pulumi.Output[int]] = [
            pulumi.Output.from_input(i).apply(lambda v: pulumi.Output.from_input(v * 2))
            for i in range(50)
        ]
        for i in range(5):
            pulumi.ComponentResource(
                "test:index:Child", f"c{i}", opts=pulumi.ResourceOptions(parent=parent)
            )
        parent.register_outputs({f"v{i}": value for i, value in enumerate(values)})
        return pulumi.Output.all(*values)

    sdk_recording, sdk_result = run_program(program, project="p", stack="s")
    drain.install()
    try:
        recording, result = run_program(program, project="p", stack="s")
    finally:
        drain.uninstall()
    assert result == sdk_result == [2 * i for i in range(50)]
    assert list(recording.resources) == list(sdk_recording.resources)
    assert len(recording.resources) == 6  # the parent and five children (no stack offline)

"""The end of a run: the SDK's output drain against gatewayctl/engine/drain.py, CPU seconds.

N tracked futures finish one at a time (as the real engine's answers come: one round trip
each), and the end of the run waits for them, once with the SDK's ``wait_for_rpcs`` and once
with the linear drain. Prints a table; never a timed test (tests/test_drain.py checks the
callbacks counted, not times).

    .venv/bin/python bench/drain_bench.py [--sizes 1000,2000,4000,8000]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pulumi.runtime import settings  # noqa: E402

from gatewayctl.engine import drain  # noqa: E402


def cpu_seconds(wait: Callable[[], Awaitable[None]], n: int) -> float:
    """CPU seconds of draining ``n`` outputs finishing one per loop turn."""

    async def run() -> float:
        loop = asyncio.get_running_loop()
        futures: list[asyncio.Future[Any]] = [loop.create_future() for _ in range(n)]
        with settings.SETTINGS.lock:
            settings.SETTINGS.outputs.clear()
            settings.SETTINGS.outputs.update(futures)

        async def finish() -> None:
            for i, future in enumerate(futures):
                await asyncio.sleep(0)
                future.set_result(i)

        finisher = asyncio.ensure_future(finish())
        started = time.process_time()
        await wait()
        spent = time.process_time() - started
        await finisher
        return spent

    return asyncio.run(run())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,2000,4000,8000")
    args = parser.parse_args(argv)
    print("| outputs | the SDK's drain CPU s | linear drain CPU s | factor |")
    print("|---:|---:|---:|---:|")
    for n in (int(s) for s in args.sizes.split(",")):
        sdk = cpu_seconds(drain._sdk_wait_for_rpcs, n)
        ours = cpu_seconds(drain.wait_for_rpcs, n)
        print(f"| {n} | {sdk:.2f} | {ours:.3f} | {sdk / ours:.0f}x |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The engine bench's logic, not its timings: the growth exponent, the "before" column's
drain, and the tree sampler's memory, process count and CPU of the processes it is told to
watch (by name, or by how the name starts)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from types import ModuleType

import pulumi.runtime.stack as sdk_stack

from gatewayctl.engine import drain
from tests.support import bench_script


def _bench() -> ModuleType:
    return bench_script("engine_bench")


def _figures(size: int, command: str, wall: float, program: float) -> object:
    return _bench().Figures(
        size=size,
        column="after",
        command=command,
        wall=wall,
        program=program,
        cli_and_plugins=0.0,
        provider=0.0,
        servers={"kube-apiserver": 0.0, "etcd": 0.0},
        peak_tree_mib=0.0,
        peak_program_mib=0.0,
        plugin_processes=0,
    )


def test_the_growth_exponent_is_one_for_linear_and_two_for_quadratic() -> None:
    bench = _bench()
    rows = [
        _figures(10, "up", 2.0, 1.0),
        _figures(20, "up", 8.0, 2.0),
        _figures(40, "up", 32.0, 4.0),
        _figures(10, "preview", 1.0, 1.0),
    ]
    assert bench.exponent(rows, "up", lambda f: f.wall) == ["10->20: 2.00", "20->40: 2.00"]
    assert bench.exponent(rows, "up", lambda f: f.program) == ["10->20: 1.00", "20->40: 1.00"]
    assert bench.exponent(rows, "preview", lambda f: f.wall) == []


def test_the_before_column_ends_with_the_sdks_drain() -> None:
    ran: list[str] = []

    def program() -> None:
        drain.install()
        ran.append("program")

    try:
        _bench().before_program(program)()
        assert ran == ["program"]
        assert sdk_stack.wait_for_rpcs is drain._sdk_wait_for_rpcs
    finally:
        drain.uninstall()


def test_the_tree_sampler_sees_a_watched_child_and_ignores_the_rest() -> None:
    # The sampler watches this test's process and the children named "watched-child" (with
    # theirs); a child of another name is not counted.
    busy = textwrap.dedent(
        """
        import ctypes, sys
        # PR_SET_NAME (15): the process's comm, the name psutil reads.
        ctypes.CDLL(None).prctl(15, sys.argv[1].encode(), 0, 0, 0)
        block = bytearray(64 * 1024 * 1024)
        for i in range(0, len(block), 4096):
            block[i] = 1
        sys.stdout.write("ready\\n"); sys.stdout.flush()
        sys.stdin.readline()
        """
    )
    sampler = _bench().TreeSampler(under="watched-child", interval=0.05, prefix="sp-")
    children = []
    try:
        sampler.start()
        for name in ("watched-child", "other-child", "sp-a-stand-in"):
            child = subprocess.Popen(
                [sys.executable, "-c", busy, name],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            assert child.stdout is not None
            assert child.stdout.readline() == "ready\n"
            children.append(child)
        for _ in range(3):  # a few samples while both are alive
            report = sampler.stop()
    finally:
        for child in children:
            child.communicate("\n", timeout=30)
        sampler.close()
    names = set(report["most_processes"])
    assert "other-child" not in names
    assert report["most_processes"]["watched-child"] == 1
    assert report["peak_mib"]["watched-child"] >= 64
    # A child named with the prefix (a forked stand-in plugin) is counted, on its own.
    assert report["most_processes"]["sp-a-stand-in"] == 1
    assert report["peak_mib"]["sp-a-stand-in"] >= 64
    assert report["peak_tree_mib"] >= (
        report["peak_mib"]["watched-child"] + report["peak_mib"]["sp-a-stand-in"]
    )

"""Issue 23's figures in one run: what a large repository costs, each figure beside a floor.

Every figure is the wall time and peak memory of a real ``python -m gatewayctl`` process run by
``--code DIR``'s program (default: this repository), on stacks generated like
``render_bench.py``'s (two ROSA clusters, Keycloak sign-in, 51 resources per gateway):

- ``render --all`` of 10 stacks x 100 gateways, ``--jobs 1`` (serial) and the default;
- one 500-gateway stack, ``--jobs 1`` and the default;
- ``diff`` of a one-gateway change in a repository of one 1,000-gateway stack, the base's render
  cached (a first ``diff`` warms the cache, untimed);
- ``--help`` and ``validate local`` (the committed local stack).

Each ``--jobs 1`` and default pair runs alternated (serial, default, serial, ...), and its
speed-up is the median of the pairs'.

The floor of a render is a fresh interpreter registering as many bare resources as the render
did through the same offline engine (``render_bench.py --child floor``, wall time); the floor of
``--help`` and ``validate`` is a fresh interpreter doing nothing (``python -c pass``). The
ratio is the figure over its floor, both measured in this run, so it compares across machines
and across loads better than seconds do.

Run from the repository root (progress on stderr, the table on stdout)::

    .venv/bin/python bench/scale_bench.py [--code DIR] [--repeat 1] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import parallel_bench  # noqa: E402 (a script beside this one)
import render_bench  # noqa: E402

COPIED = parallel_bench.COPIED
ALL_STACKS = tuple(f"bench-{letter}" for letter in "abcdefghij")
ALL_GATEWAYS = 100
ONE_STACK_GATEWAYS = 500
DIFF_GATEWAYS = 1000


@dataclass(frozen=True)
class Figure:
    name: str
    seconds: float
    peak_mib: float
    """The largest process's peak resident set (``ru_maxrss``)."""
    tree_pss_mib: float
    """The largest sum of the process tree's PSS (workers included), sampled every 0.2 s."""
    floor_seconds: float
    target: str = ""
    speedup: float | None = None
    """Of a default-jobs render: the median speed-up over ``--jobs 1`` of the runs' pairs."""

    @property
    def ratio(self) -> float:
        return self.seconds / self.floor_seconds


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _run(command: Sequence[str], cwd: Path) -> tuple[float, float, float]:
    """(seconds, peak MiB of the largest process, peak MiB of the tree's summed PSS)."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    start = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    peak = [0]
    done = threading.Event()

    def sampler() -> None:
        while not done.is_set():
            tree = parallel_bench._tree(process.pid)
            peak[0] = max(peak[0], sum(parallel_bench._memory_kib(pid)[1] for pid in tree))
            done.wait(0.2)

    thread = threading.Thread(target=sampler, daemon=True)
    if Path("/proc/self/smaps_rollup").is_file():
        thread.start()
    assert process.stderr is not None
    err = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    done.set()
    if thread.is_alive():
        thread.join()
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 3):  # diff exits 3 when there are changes
        raise SystemExit(f"{' '.join(command)} exited {code}:\n{err}")
    return seconds, usage.ru_maxrss / 1024, peak[0] / 1024


def _median(runs: list[tuple[float, float, float]]) -> tuple[float, float, float]:
    return (
        statistics.median(r[0] for r in runs),
        max(r[1] for r in runs),
        max(r[2] for r in runs),
    )


def _reported(name: str, runs: list[tuple[float, float, float]]) -> tuple[float, float, float]:
    """The runs' :func:`_median`, printed as progress."""
    seconds, peak, pss = _median(runs)
    _progress(f"  {name}: {seconds:.2f}s, peak {peak:.0f} MiB, tree PSS {pss:.0f} MiB")
    return seconds, peak, pss


def _resources(out: Path) -> int:
    """Resources of the renders under ``out`` (each stack's plan.json)."""
    return sum(
        len(json.loads(plan.read_text())["resources"]) for plan in sorted(out.rglob("plan.json"))
    )


def write_repo(code: Path, repo: Path, gateways: int, stack: str) -> None:
    """A git repository holding ``code``'s program and one generated stack, committed as
    ``main``; the working tree then changes one declaration (a replica count)."""
    repo.mkdir(parents=True)
    for name in COPIED:
        source = code / name
        if source.is_dir():
            shutil.copytree(source, repo / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, repo / name)
    parallel_bench.write_stacks(repo, gateways, stacks=(stack,))
    (repo / ".gitignore").write_text("build/\n__pycache__/\n")
    git = ["git", "-C", str(repo), "-c", "user.name=bench", "-c", "user.email=b@example.invalid"]
    subprocess.run([*git, "init", "--quiet", "--initial-branch=main"], check=True)
    subprocess.run([*git, "add", "--all"], check=True)
    subprocess.run([*git, "commit", "--quiet", "--message", "base"], check=True)
    first = sorted((repo / "gateways" / stack).glob("*.yaml"))[0]
    document = yaml.safe_load(first.read_text())
    document["spec"]["replicas"] = 3
    first.write_text(yaml.safe_dump(document, sort_keys=False))


def measure(code: Path, repeat: int) -> list[Figure]:
    python = sys.executable
    cli = [python, "-m", "gatewayctl"]
    floors: dict[int, float] = {}

    def floor(count: int) -> float:
        if count not in floors:
            script = code / "bench" / "render_bench.py"
            runs = [
                _run([python, str(script), "--child", "floor", "--count", str(count)], code)
                for _ in range(repeat)
            ]
            floors[count] = _median(runs)[0]
            _progress(f"  floor of {count} resources: {floors[count]:.2f}s")
        return floors[count]

    def timed(name: str, command: list[str], cwd: Path, prepare: Callable[[], None]) -> Any:
        runs = []
        for _ in range(repeat):
            prepare()
            runs.append(_run(command, cwd))
        return _reported(name, runs)

    def paired(name: str, command: list[str], cwd: Path, prepare: Callable[[], None]) -> Any:
        """``command`` with ``--jobs 1`` and with the default, alternated (serial, default,
        serial, ...), so that a slow minute of the machine falls on both instead of on one:
        each one's medians, and the median of each pair's speed-up."""
        serial: list[tuple[float, float, float]] = []
        default: list[tuple[float, float, float]] = []
        for _ in range(repeat):
            prepare()
            serial.append(_run([*command, "--jobs", "1"], cwd))
            prepare()
            default.append(_run(command, cwd))
        speedup = statistics.median(s[0] / d[0] for s, d in zip(serial, default, strict=True))
        medians = _reported(f"{name} --jobs 1", serial), _reported(name, default)
        pairs = ", ".join(f"{s[0] / d[0]:.2f}x" for s, d in zip(serial, default, strict=True))
        _progress(f"  {name}: speed-up of each pair {pairs}")
        return *medians, speedup

    figures: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="scale-bench-") as tmp:
        base = Path(tmp)
        # --help and validate
        empty = _median([_run([python, "-c", "pass"], code) for _ in range(max(3, repeat))])[0]
        for name, args, target in (
            ("--help", ["--help"], "<= 0.3 s"),
            ("validate local", ["validate", "local"], "<= 1 s"),
        ):
            runs = [_run([*cli, *args], code) for _ in range(max(3, repeat))]
            seconds, peak, pss = _median(runs)
            _progress(f"  {name}: {seconds:.3f}s")
            figures.append(Figure(name, seconds, peak, pss, empty, target))

        # render --all of 10 x 100
        project = base / "all"
        project.mkdir()
        parallel_bench.write_stacks(project, ALL_GATEWAYS, stacks=ALL_STACKS)
        out = base / "all-out"

        def clear() -> None:
            shutil.rmtree(out, ignore_errors=True)

        render_all = [*cli, "--root", str(project), "render", "--all", "--out", str(out), "-q"]
        serial, default, speedup = paired("render --all", render_all, code, clear)
        count = _resources(out)
        label = f"render --all, {len(ALL_STACKS)} x {ALL_GATEWAYS} gateways"
        figures.append(Figure(f"{label}, --jobs 1", *serial, floor(count)))
        figures.append(Figure(f"{label}, default jobs", *default, floor(count), "<= 60 s", speedup))

        # one 500-gateway stack
        one = base / "one"
        one.mkdir()
        parallel_bench.write_stacks(one, ONE_STACK_GATEWAYS, stacks=("bench-a",))
        one_out = base / "one-out"

        def clear_one() -> None:
            shutil.rmtree(one_out, ignore_errors=True)

        render_one = [*cli, "--root", str(one), "render", "bench-a", "--out", str(one_out), "-q"]
        serial, default, speedup = paired("render 500", render_one, code, clear_one)
        count = _resources(one_out)
        label = f"render of one {ONE_STACK_GATEWAYS}-gateway stack"
        figures.append(Figure(f"{label}, --jobs 1", *serial, floor(count)))
        figures.append(Figure(f"{label}, default jobs", *default, floor(count), "", speedup))

        # diff of a one-gateway change, base cached
        repo = base / "repo"
        write_repo(code, repo, DIFF_GATEWAYS, "bench")
        diff = [*cli, "diff", "bench", "--base", "main"]
        _progress("  diff: warming the base cache")
        _run(diff, repo)
        result = timed("diff, base cached", diff, repo, lambda: None)
        # The floor: as many resources as the base render (the change adds none), read from
        # the cache the warm-up wrote rather than from one more render.
        count = _resources(repo / "build" / "diff-cache")
        figures.append(
            Figure(
                f"diff of a one-gateway change, {DIFF_GATEWAYS} gateways, base cached",
                *result,
                floor(count),
                "<= 15 s",
            )
        )
    return figures


def _speedups(figures: Sequence[Figure]) -> list[str]:
    by = {f.name: f for f in figures}
    lines = []
    for label in (
        f"render --all, {len(ALL_STACKS)} x {ALL_GATEWAYS} gateways",
        f"render of one {ONE_STACK_GATEWAYS}-gateway stack",
    ):
        serial, default = by[f"{label}, --jobs 1"], by[f"{label}, default jobs"]
        lines.append(
            f"{label}: default / --jobs 1 speed-up {default.speedup:.2f}x, the median of the"
            f" alternated pairs' (of the medians: {serial.seconds / default.seconds:.2f}x;"
            " target >= 1.6x)"
        )
    return lines


def report(figures: Sequence[Figure], code: Path) -> str:
    lines = [
        f"scale figures, program of {code}, {render_bench.machine()}",
        "",
        "| measurement | s | floor s | ratio | peak MiB (largest process) | peak PSS MiB (tree)"
        " | target |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    lines += [
        f"| {f.name} | {f.seconds:.2f} | {f.floor_seconds:.2f} | {f.ratio:.2f} | {f.peak_mib:.0f}"
        f" | {f.tree_pss_mib:.0f} | {f.target} |"
        for f in figures
    ]
    return "\n".join([*lines, "", *_speedups(figures)])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--code", type=Path, default=HERE.parent, help="the program to measure")
    parser.add_argument("--repeat", type=int, default=1, help="runs per measurement")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the figures here")
    args = parser.parse_args(argv)
    code = args.code.resolve()
    figures = measure(code, args.repeat)
    print(report(figures, code))
    if args.json is not None:
        args.json.write_text(json.dumps([asdict(f) for f in figures], indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What users wait for beyond one stack's render (issue 16): ``render --all`` serial against
parallel on three equal stacks, ``diff`` with the base render uncached against cached, and the
peak memory of the parallel run against the workers' single-stack peaks.

Every figure is the wall time of a real ``python -m gatewayctl`` process (start-up and imports
included, as a user waits for them), on stacks generated like ``render_bench.py``'s. Run through
``render_bench.py`` (one run prints every table); see ``bench/README.md``.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
STACKS = ("bench-a", "bench-b", "bench-c")
DIFF_STACK = "bench"
MIN_SPEEDUP = 1.6
MAX_CACHED_RATIO = 1.15
COPIED = ("gatewayctl", "components", "__main__.py", "Pulumi.yaml", "pyproject.toml", "uv.lock")
"""What of the repository a generated diff project needs: the program and its lock file."""


# --- generated projects ------------------------------------------------------------------------


def _bench() -> Any:
    """``render_bench`` (the synthetic stack), loaded as the script that runs this does."""
    if "render_bench" in sys.modules:
        return sys.modules["render_bench"]
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import render_bench

    return render_bench


def _renamed(config: dict[str, Any], suffix: str) -> dict[str, Any]:
    """The bench stack's config with clusters of its own: other contexts, domains, database
    servers (stacks of one repository never share a cluster's names by accident)."""
    text = yaml.safe_dump(config, sort_keys=False)
    for old in ("rosa-us-east-1", "rosa-us-west-2", "openshell-prod-use1", "openshell-prod-usw2"):
        text = text.replace(old, f"{old}-{suffix}")
    text = text.replace(".openshell.example.com", f".{suffix}.openshell.example.com")
    text = text.replace(".rds.amazonaws.com", f".{suffix}.rds.amazonaws.com")
    renamed = yaml.safe_load(text)
    assert isinstance(renamed, dict)
    return renamed


def write_stacks(root: Path, gateways: int, stacks: Sequence[str] = STACKS) -> None:
    """``Pulumi.<stack>.yaml`` and ``gateways/<stack>/`` for each of ``stacks``: equal stacks
    of ``gateways`` gateways each, on clusters of their own."""
    bench = _bench()
    for stack in stacks:
        scratch = root / f".{stack}"
        scratch.mkdir(parents=True)
        bench.write_stack(scratch, gateways)
        config = yaml.safe_load((scratch / f"Pulumi.{bench.STACK}.yaml").read_text())
        config = _renamed(config, stack.rsplit("-", 1)[-1])
        config["config"][f"{bench.PROJECT}:declarationsDir"] = f"gateways/{stack}"
        declarations = root / "gateways" / stack
        declarations.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(scratch / "gateways", declarations)
        for path in declarations.glob("*.yaml"):
            document = yaml.safe_load(path.read_text())
            cluster = document["spec"]["cluster"]
            document["spec"]["cluster"] = f"{cluster}-{stack.rsplit('-', 1)[-1]}"
            path.write_text(yaml.safe_dump(document, sort_keys=False))
        (root / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
        shutil.rmtree(scratch)


def write_diff_project(repo: Path, gateways: int) -> None:
    """A git repository holding this program and one generated stack (``bench``), committed
    as ``main``; the working tree then changes one declaration (a replica count)."""
    repo.mkdir(parents=True)
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, repo / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, repo / name)
    write_stacks(repo, gateways, stacks=(DIFF_STACK,))
    (repo / ".gitignore").write_text("build/\n__pycache__/\n")
    _git(repo, "init", "--quiet", "--initial-branch=main")
    _git(repo, "add", "--all")
    _git(repo, "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "commit",
         "--quiet", "--message", "base")  # fmt: skip
    first = sorted((repo / "gateways" / DIFF_STACK).glob("*.yaml"))[0]
    document = yaml.safe_load(first.read_text())
    document["spec"]["replicas"] = 3
    first.write_text(yaml.safe_dump(document, sort_keys=False))


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    )
    return done.stdout


# --- measuring a process ------------------------------------------------------------------------


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo += children.get(current, [])
    return found


def _memory_kib(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of one process in KiB; (0, 0) once it is gone."""
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return 0, 0
    values = {}
    for line in text.splitlines()[1:]:
        parts = line.split()
        if len(parts) >= 2 and parts[1].isdigit():
            values[parts[0].rstrip(":")] = int(parts[1])
    return values.get("Rss", 0), values.get("Pss", 0)


@dataclass(frozen=True)
class Run:
    """One process: its wall time, its own peak (``ru_maxrss``) and, when sampled, the peak of
    its whole process tree's summed RSS and PSS."""

    seconds: float
    code: int
    maxrss_kib: int
    tree_rss_kib: int = 0
    tree_pss_kib: int = 0
    err: str = ""


def run(args: Sequence[str], cwd: Path, *, sample: bool = False) -> Run:
    """Run ``python -m gatewayctl ARGS`` in ``cwd``; with ``sample``, read the process tree's
    memory from /proc every 50 ms while it runs (Linux; it costs CPU: not for a timed run)."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    start = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "gatewayctl", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    peaks = [0, 0]
    done = threading.Event()

    def sampler() -> None:
        while not done.is_set():
            totals = [_memory_kib(pid) for pid in _tree(process.pid)]
            peaks[0] = max(peaks[0], sum(r for r, _ in totals))
            peaks[1] = max(peaks[1], sum(p for _, p in totals))
            done.wait(0.05)

    thread = threading.Thread(target=sampler, daemon=True)
    if sample and Path("/proc/self/smaps_rollup").is_file():
        thread.start()
    assert process.stderr is not None
    err = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    done.set()
    if thread.is_alive():
        thread.join()
    process.returncode = os.waitstatus_to_exitcode(status)
    return Run(seconds, process.returncode, usage.ru_maxrss, peaks[0], peaks[1], err)


def _checked(result: Run, what: str, codes: Sequence[int] = (0,)) -> Run:
    if result.code not in codes:
        raise SystemExit(f"{what} exited {result.code}:\n{result.err}")
    return result


# --- the measurements ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Figures:
    """Medians of ``repeat`` runs (seconds), maxima of the peaks (MiB)."""

    gateways: int
    cores: int
    serial_s: float
    parallel_s: float
    one_per_stack_s: float
    head_render_s: float
    diff_uncached_s: float
    diff_cached_s: float
    single_peaks_mib: list[float]
    parallel_tree_rss_mib: float
    parallel_tree_pss_mib: float
    parallel_largest_process_mib: float
    one_per_stack_tree_pss_mib: float

    @property
    def speedup(self) -> float:
        return self.serial_s / self.parallel_s

    @property
    def cached_ratio(self) -> float:
        return self.diff_cached_s / self.head_render_s


def measure(gateways: int, repeat: int, progress: Callable[[str], None]) -> Figures:
    """Each round runs every measurement once, one after the other, so that a machine whose
    load changes during the run (a shared one) weighs on every figure alike; the medians are
    over the rounds."""
    with tempfile.TemporaryDirectory(prefix="parallel-bench-") as tmp:
        base = Path(tmp)
        project = base / "stacks"
        project.mkdir()
        write_stacks(project, gateways)
        repo = base / "repo"
        write_diff_project(repo, gateways)
        out = base / "out"
        jobs = min(_cores(), len(STACKS))  # the default

        def render_all(jobs: int, sample: bool = False) -> Run:
            args = ["--root", str(project), "render", "--all", "--out", str(out), "-q"]
            return _checked(run([*args, "--jobs", str(jobs)], ROOT, sample=sample), "render")

        diff = ["diff", DIFF_STACK, "--base", "main"]
        head = ["render", DIFF_STACK, "--out", str(base / "head"), "-q"]

        def uncached() -> Run:
            shutil.rmtree(repo / "build", ignore_errors=True)
            return _checked(run(diff, repo), "diff", (0, 3))

        measured: dict[str, Callable[[], Run]] = {
            "serial": lambda: render_all(1),
            "default": lambda: render_all(jobs),
            "per-stack": lambda: render_all(len(STACKS)),
            "head": lambda: _checked(run(head, repo), "render"),
            "uncached": uncached,
            "cached": lambda: _checked(run(diff, repo), "diff", (0, 3)),  # after uncached
        }
        runs: dict[str, list[Run]] = {}
        for round_ in range(1, repeat + 1):
            for name, measurement in measured.items():
                runs.setdefault(name, []).append(measurement())
            figures = ", ".join(f"{name} {runs[name][-1].seconds:.2f}s" for name in measured)
            progress(f"  round {round_}/{repeat} (3 x {gateways} gateways): {figures}")
        # Memory apart from the timed runs: reading /proc for it takes CPU from the render.
        sampled = {"default": render_all(jobs, sample=True)}
        sampled["per-stack"] = render_all(len(STACKS), sample=True)
        singles = []
        for stack in STACKS:
            args = ["--root", str(project), "render", stack, "--out", str(base / stack), "-q"]
            singles.append(_checked(run(args, ROOT), f"render {stack}").maxrss_kib / 1024)

    def median(name: str) -> float:
        return statistics.median(r.seconds for r in runs[name])

    return Figures(
        gateways=gateways,
        cores=_cores(),
        serial_s=median("serial"),
        parallel_s=median("default"),
        one_per_stack_s=median("per-stack"),
        head_render_s=median("head"),
        diff_uncached_s=median("uncached"),
        diff_cached_s=median("cached"),
        single_peaks_mib=singles,
        parallel_tree_rss_mib=sampled["default"].tree_rss_kib / 1024,
        parallel_tree_pss_mib=sampled["default"].tree_pss_kib / 1024,
        parallel_largest_process_mib=max(r.maxrss_kib for r in runs["default"]) / 1024,
        one_per_stack_tree_pss_mib=sampled["per-stack"].tree_pss_kib / 1024,
    )


def _cores() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


@dataclass(frozen=True)
class Verdict:
    name: str
    value: float
    limit: float
    passed: bool
    sense: str = "<="

    def line(self) -> str:
        word = "PASS" if self.passed else "FAIL"
        return f"{word}  {self.name}: {self.value:.2f} (target {self.sense} {self.limit:g})"


def verdicts(figures: Figures) -> list[Verdict]:
    within = sum(figures.single_peaks_mib)
    return [
        Verdict(
            "render --all speed-up, serial / parallel (default --jobs)",
            figures.speedup,
            MIN_SPEEDUP,
            figures.speedup >= MIN_SPEEDUP,
            ">=",
        ),
        Verdict(
            "diff with the base cached / one head render",
            figures.cached_ratio,
            MAX_CACHED_RATIO,
            figures.cached_ratio <= MAX_CACHED_RATIO,
        ),
        Verdict(
            "parallel peak (PSS of the process tree) / sum of single-stack peaks",
            figures.parallel_tree_pss_mib / within,
            1.0,
            figures.parallel_tree_pss_mib <= within,
        ),
    ]


def report(figures: Figures) -> str:
    singles = " + ".join(f"{peak:.1f}" for peak in figures.single_peaks_mib)
    lines = [
        f"render --all and diff, 3 stacks x {figures.gateways} gateways, {figures.cores} cores"
        " (wall time of `python -m gatewayctl`, imports included; medians)",
        "",
        "| measurement | s |",
        "|---|---:|",
        f"| render --all --jobs 1 (serial) | {figures.serial_s:.2f} |",
        f"| render --all (default: --jobs {min(figures.cores, 3)}) | {figures.parallel_s:.2f} |",
        f"| render --all --jobs 3 (a worker per stack) | {figures.one_per_stack_s:.2f} |",
        f"| render of one stack (the diff's working tree) | {figures.head_render_s:.2f} |",
        f"| diff, base render not cached | {figures.diff_uncached_s:.2f} |",
        f"| diff, base render cached | {figures.diff_cached_s:.2f} |",
        "",
        f"peak memory: parallel render --all, whole process tree: RSS"
        f" {figures.parallel_tree_rss_mib:.1f} MiB, PSS {figures.parallel_tree_pss_mib:.1f} MiB"
        f" (its largest process {figures.parallel_largest_process_mib:.1f} MiB);"
        f" each stack rendered alone: {singles} = {sum(figures.single_peaks_mib):.1f} MiB",
        "",
    ]
    lines += [verdict.line() for verdict in verdicts(figures)]
    lines.append(
        f"INFO  render --all --jobs 3: speed-up {figures.serial_s / figures.one_per_stack_s:.2f},"
        f" peak PSS {figures.one_per_stack_tree_pss_mib:.1f} MiB (no target: with fewer cores"
        " than stacks, the default leaves a core idle while the last stack renders)"
    )
    return "\n".join(lines)

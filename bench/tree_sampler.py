"""Sample a process tree's memory and its processes' CPU, in a process of its own.

Started by ``bench/engine_bench.py`` as its child: its own CPU and that of its sampling are
never in the bench's figures (the bench reads its own and its waited-for children's rusage;
this process is waited for only after the last measurement). It samples every ``--interval``
seconds the tree of ``--pid``: that process, every descendant named ``--under`` (the CLI)
with all of its own (the plugins), and every descendant whose name starts with ``--prefix``
(the stand-in plugins' fork server and the plugins it forks, ``e2e/providers/forkserver.py``).
Memory is each process's proportional set size (PSS, ``/proc/<pid>/smaps_rollup``): the forked
plugins share their server's pages, which a sum of RSS would count once per plugin.

Protocol, one line each on stdin: ``start`` forgets what was seen and answers ``started``;
``stop`` answers one JSON line: the peak PSS of the whole tree and of each executable name
(summed over its processes at one sample), the most processes of each name at one sample, and
the CPU seconds each name spent since ``start`` (a process's CPU as last seen alive: at most
one interval of a process that exits is missed). ``quit`` ends it.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading

import psutil

MIB = 1024 * 1024


class Sampler:
    def __init__(self, pid: int, interval: float, under: list[str], prefix: list[str]) -> None:
        self.root = psutil.Process(pid)
        self.under = frozenset(under)
        self.prefix = tuple(prefix)
        self.interval = interval
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        with self.lock:
            self.peak_total = 0
            self.peak_by_name: dict[str, int] = {}
            self.most_by_name: dict[str, int] = {}
            self.cpu_first: dict[int, float] = {}
            self.cpu_last: dict[int, tuple[str, float]] = {}
            self.first = True  # the sample taken at start: what is alive then counts from there
        self.sample()

    def processes(self) -> list[psutil.Process]:
        """The root, each descendant named ``--under`` with all of its own (the CLI and its
        plugins) and each named with a ``--prefix`` (the forked stand-ins): not the control
        plane the bench also started."""
        tree = {self.root.pid: self.root}
        try:
            for child in self.root.children(recursive=True):
                name = child.name()
                if name in self.under:
                    for proc in (child, *child.children(recursive=True)):
                        tree[proc.pid] = proc
                elif self.prefix and name.startswith(self.prefix):
                    tree[child.pid] = child
        except psutil.NoSuchProcess:
            pass
        return list(tree.values())

    def sample(self) -> None:
        total = 0
        rss: dict[str, int] = {}
        count: dict[str, int] = {}
        cpu: dict[int, tuple[str, float]] = {}
        for proc in self.processes():
            try:
                with proc.oneshot():
                    name = proc.name()
                    memory = proc.memory_full_info().pss
                    times = proc.cpu_times()
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
            total += memory
            rss[name] = rss.get(name, 0) + memory
            count[name] = count.get(name, 0) + 1
            cpu[proc.pid] = (name, times.user + times.system)
        with self.lock:
            at_start, self.first = self.first, False
            self.peak_total = max(self.peak_total, total)
            for name, value in rss.items():
                self.peak_by_name[name] = max(self.peak_by_name.get(name, 0), value)
            for name, value in count.items():
                self.most_by_name[name] = max(self.most_by_name.get(name, 0), value)
            for pid, (name, seconds) in cpu.items():
                # A process alive at start counts from there; one born later from zero.
                self.cpu_first.setdefault(pid, seconds if at_start else 0.0)
                self.cpu_last[pid] = (name, seconds)

    def report(self) -> dict[str, object]:
        self.sample()
        with self.lock:
            cpu: dict[str, float] = {}
            for pid, (name, seconds) in self.cpu_last.items():
                cpu[name] = cpu.get(name, 0.0) + seconds - self.cpu_first.get(pid, 0.0)
            return {
                "peak_tree_mib": round(self.peak_total / MIB, 1),
                "peak_mib": {k: round(v / MIB, 1) for k, v in sorted(self.peak_by_name.items())},
                "most_processes": dict(sorted(self.most_by_name.items())),
                "cpu_seconds": {k: round(v, 2) for k, v in sorted(cpu.items())},
            }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--interval", type=float, default=0.2)
    parser.add_argument("--under", action="append", default=[], help="a descendant's name")
    parser.add_argument(
        "--prefix", action="append", default=[], help="how a descendant's name starts"
    )
    args = parser.parse_args()
    sampler = Sampler(args.pid, args.interval, args.under, args.prefix)
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(args.interval):
            sampler.sample()

    threading.Thread(target=loop, daemon=True).start()
    for line in sys.stdin:
        word = line.strip()
        if word == "start":
            sampler.reset()
            print("started", flush=True)
        elif word == "stop":
            print(json.dumps(sampler.report()), flush=True)
        elif word == "quit":
            break
    stop.set()
    return 0


if __name__ == "__main__":
    sys.exit(main())

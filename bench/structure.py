"""Print the project's structure figures: largest modules and test files, the import graph
between the project's own modules (cycles, imports against the layering), and the test count.

    .venv/bin/python bench/structure.py [--top N]

The flow (docs/architecture.md, held as data in ``tests/architecture.py``): imports run from
the CLI down through the operations, the engine, resolve and inputs to the foundation, and
``components`` never imports the tooling package; an import against it, and an import cycle,
are reported with their modules. The ``duplicates`` tool (the workplace's, not a dependency)
gives the repeated-code pairs.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import architecture  # noqa: E402  (the flow, as the tests check it)


def line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top", type=int, default=8, help="how many of the largest files")
    args = parser.parse_args(argv)
    tooling = architecture.TOOL
    code = architecture.modules()
    tests = sorted((ROOT / "tests").glob("*.py"))
    graph = architecture.graph()

    print(f"tooling package: {tooling}/  ({len(code)} modules with components/)")
    print("\nlargest modules (lines):")
    for path in sorted(code.values(), key=line_count, reverse=True)[: args.top]:
        print(f"  {line_count(path):5d}  {path.relative_to(ROOT)}")
    print("\nlargest test files (lines):")
    for path in sorted(tests, key=lambda p: -line_count(p))[: args.top]:
        print(f"  {line_count(path):5d}  {path.relative_to(ROOT)}")

    against = [
        str(e) for e in architecture.against_the_flow(graph, architecture.component_resources())
    ]
    found_cycles = architecture.cycles(graph)
    edges = sum(len(targets) for targets in graph.values())
    print(f"\nimport graph: {len(graph)} modules, {edges} edges")
    print(f"  cycles: {len(found_cycles)}" + "".join(f"\n    {c}" for c in found_cycles))
    print(f"  against the flow: {len(against)}" + "".join(f"\n    {u}" for u in against))

    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    summary = [
        line for line in collected.stdout.splitlines() if "collected" in line or "tests" in line
    ]
    print(f"\ntests: {summary[-1] if summary else collected.stdout.strip()[-200:]}")
    return 1 if found_cycles or against else 0


if __name__ == "__main__":
    raise SystemExit(main())

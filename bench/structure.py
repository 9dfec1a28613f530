"""Print the project's structure figures: largest modules and test files, the import graph
between the project's own modules (cycles, imports against the layering), and the test count.

    .venv/bin/python bench/structure.py [--top N]

The layering (DESIGN §2): ``components`` never imports the tooling package; the tooling package
imports components. Within a package, an import cycle is reported with its modules. The
``duplicates`` tool (the workplace's, not a dependency) gives the repeated-code pairs.
"""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMPONENTS = "components"


def tooling_package() -> str:
    """The tooling package: the directory with ``__main__.py`` beside ``components``."""
    for candidate in sorted(ROOT.iterdir()):
        if (candidate / "__main__.py").is_file() and (candidate / "__init__.py").is_file():
            return candidate.name
    raise SystemExit("no tooling package found")


def modules(packages: Iterable[str]) -> dict[str, Path]:
    """Dotted module name → file, for every module of the given packages."""
    found: dict[str, Path] = {}
    for package in packages:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imports_of(path: Path, module: str, known: set[str]) -> set[str]:
    """The project modules ``path`` imports (``from x import y`` counts y when y is a module)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                prefix = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*prefix, base] if base else prefix)
            names = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name and name != module:
                found.add(name)
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    result: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                item = stack.pop()
                on_stack.discard(item)
                component.append(item)
                if item == node:
                    break
            if len(component) > 1:
                result.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return result


def line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top", type=int, default=8, help="how many of the largest files")
    args = parser.parse_args(argv)
    tooling = tooling_package()
    code = modules([COMPONENTS, tooling])
    tests = sorted((ROOT / "tests").glob("*.py"))
    graph = {name: imports_of(path, name, set(code)) for name, path in code.items()}

    print(f"tooling package: {tooling}/  ({len(code)} modules with components/)")
    print("\nlargest modules (lines):")
    for path in sorted(code.values(), key=line_count, reverse=True)[: args.top]:
        print(f"  {line_count(path):5d}  {path.relative_to(ROOT)}")
    print("\nlargest test files (lines):")
    for path in sorted(tests, key=lambda p: -line_count(p))[: args.top]:
        print(f"  {line_count(path):5d}  {path.relative_to(ROOT)}")

    upward = sorted(
        f"{source} -> {target}"
        for source, targets in graph.items()
        if source.startswith(COMPONENTS)
        for target in targets
        if not target.startswith(COMPONENTS)
    )
    found_cycles = cycles(graph)
    edges = sum(len(targets) for targets in graph.values())
    print(f"\nimport graph: {len(graph)} modules, {edges} edges")
    print(f"  cycles: {len(found_cycles)}" + "".join(f"\n    {c}" for c in found_cycles))
    print(
        f"  upward (components -> {tooling}): {len(upward)}" + "".join(f"\n    {u}" for u in upward)
    )

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
    return 1 if found_cycles or upward else 0


if __name__ == "__main__":
    raise SystemExit(main())

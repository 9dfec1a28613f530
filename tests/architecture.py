"""The tool's layout as data (docs/architecture.md): the phases, in the order data flows through
them, and the import graph of the project's own modules, for tests/test_architecture.py and
bench/structure.py.

Data flows one way: files → validated models (``inputs``) → the resolved stack (``resolve``) →
the program and its engines (``engine``) → what operators read and do (``diff``, ``status``,
``deploy``) → the command line (``cli``). A module imports only its own package and the phases
before it; ``components`` is the vocabulary every phase may name (its pure modules), and only
the engine registers its ComponentResources.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOOL = "gatewayctl"
COMPONENTS = "components"

FOUNDATION = ("errors", "typos", "interrupts", "printing", "reading", "ownership", "lazy")
"""Modules at the top of ``gatewayctl/`` that every phase may import; they import only each
other (and the package's ``ROOT``)."""

LAZY = f"{TOOL}.lazy"
"""The table of modules imported on first use: ``lazy.<name>`` in a module counts as that
module importing the table's module for ``name``; the table itself imports nothing."""

PHASES: tuple[tuple[str, ...], ...] = (
    ("inputs",),
    ("resolve",),
    ("engine",),
    ("diff", "status", "deploy"),
    ("cli",),
)
"""The packages of ``gatewayctl/``, in the order data flows; packages of one step do not import
each other."""

ENGINE = f"{TOOL}.engine"


@dataclass(frozen=True)
class Edge:
    source: str
    target: str

    def __str__(self) -> str:
        return f"{self.source} -> {self.target}"


def modules(packages: Iterable[str] = (TOOL, COMPONENTS)) -> dict[str, Path]:
    """Dotted module name → file, for every module of the given packages."""
    found: dict[str, Path] = {}
    for package in packages:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def lazy_table() -> dict[str, str]:
    """``gatewayctl/lazy.py``'s ``MODULES`` (name → module), read without importing it."""
    tree = ast.parse((ROOT / TOOL / "lazy.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == "MODULES"
            and node.value is not None
        ):
            table: dict[str, str] = ast.literal_eval(node.value)
            return table
    raise AssertionError("gatewayctl/lazy.py has no MODULES table")


def imports_of(path: Path, module: str, known: Iterable[str]) -> set[str]:
    """The project modules ``path`` imports anywhere in it (in functions and under
    ``TYPE_CHECKING`` too); ``from x import y`` counts ``x.y`` when that is a module, and
    ``lazy.<name>`` the module the lazy table names (the table's own imports count for none)."""
    if module == LAZY:
        return set()
    names = set(known)
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            candidates = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for name in candidates:
            while name and name not in names:
                name = name.rpartition(".")[0]
            if name and name != module:
                found.add(name)
    if LAZY in found:
        found.discard(LAZY)
        table = lazy_table()
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "lazy"
                and table.get(node.attr) in names
                and table[node.attr] != module
            ):
                found.add(table[node.attr])
    return found


def graph() -> dict[str, set[str]]:
    """Each project module → the project modules it imports."""
    found = modules()
    return {module: imports_of(path, module, found) for module, path in found.items()}


def step(module: str) -> int | None:
    """Where a ``gatewayctl`` module sits in the flow: 0 for the foundation, 1 for the first
    phase, …, one past the CLI for ``__main__``; None for a module no step holds."""
    parts = module.split(".")
    if parts[0] != TOOL:
        return None
    if len(parts) == 1 or parts[1] in FOUNDATION:
        return 0
    if parts[1] == "__main__":
        return len(PHASES) + 1
    for index, packages in enumerate(PHASES, start=1):
        if parts[1] in packages:
            return index
    return None


def _package(module: str) -> str:
    return ".".join(module.split(".")[:2])


def component_resources(found: Mapping[str, Path] | None = None) -> set[str]:
    """The ``components`` modules that define a ``ComponentResource`` (registered by the
    engine only); the others are plain vocabulary (names, types, pure builders)."""
    result = set()
    for module, path in (found or modules((COMPONENTS,))).items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and any(
                (isinstance(base, ast.Attribute) and base.attr == "ComponentResource")
                or (isinstance(base, ast.Name) and base.id == "ComponentResource")
                for base in node.bases
            ):
                result.add(module)
    return result


def against_the_flow(edges: Mapping[str, Iterable[str]], resources: set[str]) -> list[Edge]:
    """Every import that runs against the flow: a ``gatewayctl`` module importing a later step
    or a sibling package of its own step, a module no step holds, ``components`` importing
    ``gatewayctl``, or a module outside the engine importing a ComponentResource module."""
    wrong: list[Edge] = []
    for source, targets in sorted(edges.items()):
        for target in sorted(targets):
            edge = Edge(source, target)
            if source.startswith(COMPONENTS):
                if target.startswith(TOOL):
                    wrong.append(edge)
                continue
            if target in resources:
                if not source.startswith(ENGINE):
                    wrong.append(edge)
                continue
            if not target.startswith(TOOL):
                continue
            here, there = step(source), step(target)
            if (
                here is None
                or there is None
                or there > here
                or (
                    # Packages of one step are siblings; the foundation's modules import each other.
                    there == here and here != 0 and _package(source) != _package(target)
                )
            ):
                wrong.append(edge)
    return wrong


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
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

    # The recursion is at most one frame per module, far under Python's default limit, which
    # stays as it is: tests in the same process check that the render does not need more.
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return result

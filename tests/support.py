"""The committed project as tests see it: its root, its stacks and their render (computed once
per session), and the reference files it holds (``reference/``: schemas, upstream manifests)."""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from gatewayctl.engine import render
from gatewayctl.resolve import preparation

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "reference"
STACKS = ("aws", "ibm", "local")


@functools.cache
def rendered(stack: str) -> render.Rendered:
    """The in-memory render of a committed stack (the same code path as the CLI)."""
    return render.execute(preparation.prepare(ROOT, stack))


def bench_script(name: str) -> ModuleType:
    """``bench/<name>.py`` (a script, not a package), loaded once per test session."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


def render_bench() -> ModuleType:
    """``bench/render_bench.py``."""
    return bench_script("render_bench")


def parallel_bench() -> ModuleType:
    """``bench/parallel_bench.py`` (three equal generated stacks)."""
    render_bench()  # it imports this one by name
    return bench_script("parallel_bench")

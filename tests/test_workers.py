"""Worker processes (``gatewayctl.engine.workers``): what crosses from a worker to the parent.
The runs through workers are tests/test_parallel.py's."""

from __future__ import annotations

import sys

import pytest

from gatewayctl.engine import workers
from gatewayctl.errors import ToolError

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="workers are forked on Linux only"
)


def test_an_error_that_cannot_cross_processes_keeps_its_name() -> None:
    class LocalError(Exception):  # not importable by name: cannot be unpickled
        pass

    portable = workers._portable(LocalError("oops"))
    assert type(portable) is RuntimeError
    assert str(portable) == "LocalError: oops"
    assert type(workers._portable(ToolError("x"))) is ToolError

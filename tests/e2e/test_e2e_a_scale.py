"""What issue 39's changes rely on, shown by the real engine: a dry run persists nothing to the
``file://`` backend whether checkpoints are skipped or not (pulumi/pulumi v3.274.0
pkg/backend/diy/backend.go: a ``DiscardPersister`` for preview and ``--preview-only``), so the
lane and the workflows skip them on dry runs only (e2e/engine.py, ``SKIP_CHECKPOINTS``); and the
program run by the real engine ends through the linear output drain
(gatewayctl/engine/drain.py), installed by the program's own entry point."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pulumi.runtime.stack as sdk_stack
import pytest

from e2e.engine import Engine
from gatewayctl.engine import drain
from tests.e2e.lane import Deployed, figure, pulumi

STACK = "e2e-local"


def backend_files(backend: Path) -> dict[str, tuple[int, bytes]]:
    """Every file of the backend with its modification time and bytes."""
    return {
        str(path.relative_to(backend)): (path.stat().st_mtime_ns, path.read_bytes())
        for path in sorted(backend.rglob("*"))
        if path.is_file()
    }


@pytest.mark.parametrize("skipped", [True, False], ids=["checkpoints-skipped", "checkpoints-on"])
def test_a_dry_run_writes_nothing_to_the_backend(
    engine: Engine,
    deployed: dict[str, Deployed],
    kube_env: dict[str, str],
    skipped: bool,
) -> None:
    project = deployed[STACK].project
    before = backend_files(engine.backend)
    stacks = [name for name in before if name.endswith(f"/{STACK}.json")]
    assert len(stacks) == 1, sorted(before)  # the stack's state is there to be kept
    engine.skip_dry_run_checkpoints = skipped
    try:
        preview = pulumi(engine, project, kube_env, "preview", "--expect-no-changes")
        refresh = pulumi(
            engine, project, kube_env, "refresh", "--preview-only", program=False, check=False
        )
    finally:
        engine.skip_dry_run_checkpoints = True
    assert preview.returncode == 0
    assert refresh.returncode == 0, refresh.stderr[-2000:]
    after = backend_files(engine.backend)
    assert sorted(after) == sorted(before)
    changed = [name for name in before if after[name] != before[name]]
    assert changed == []
    figure(
        f"{STACK}: preview and refresh --preview-only with checkpoints "
        f"{'skipped' if skipped else 'on'}: {len(before)} backend files unchanged"
    )


def test_the_program_ends_through_the_linear_drain(
    engine: Engine,
    deployed: dict[str, Deployed],
    kube_env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = deployed[STACK].project
    calls: list[int] = []
    drained = drain.drain_outputs

    async def counted() -> Any:
        calls.append(1)
        return await drained()

    monkeypatch.setattr(drain, "drain_outputs", counted)
    drain.uninstall()  # the entry point installs it again for the run below
    preview = pulumi(engine, project, kube_env, "preview", "--expect-no-changes")
    assert preview.returncode == 0
    # RPCs queued while the outputs drain send the wait round again: at least one pass.
    assert len(calls) >= 1
    assert sdk_stack.wait_for_rpcs is drain.wait_for_rpcs
    figure(f"{STACK}: preview ended through the linear drain ({len(calls)} passes)")

"""The Pulumi CLI on one stack: the engine of ``gatewayctl rollout``
(:mod:`gatewayctl.status.progression`).

Each call is one ``pulumi`` process in the project directory, non-interactive: ``preview
--json``, ``stack export`` and ``refresh --preview-only --json`` written to files in a private
directory (the export holds the state's ciphertext, never plaintext: pulumi/pulumi v3.274.0
``pkg/cmd/pulumi/stack/stack_export.go`` decrypts only with ``--show-secrets``); the refresh
and ``up`` with one ``--target`` per URN (``pkg/cmd/pulumi/operations/up.go``: ``--target`` may
be repeated; a URN may also carry ``*`` and ``**`` globs, not used here). A command that fails
stops the rollout with its exit code and the end of what it wrote to stderr (the CLI masks
secrets in its own output).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gatewayctl.errors import ToolError

TAIL = 2000
"""The characters of a failed command's stderr that are shown."""


class CommandError(ToolError):
    """A ``pulumi`` command exited with an error."""


@dataclass(kw_only=True)
class PulumiCli:
    stack: str
    cwd: Path
    workdir: Path
    """Where ``observe`` writes its two files (mode 0700: the export is the state)."""
    env: Mapping[str, str] | None = None
    up_args: list[str] = field(default_factory=list)
    """Given to every ``up`` (the policy pack and its config)."""
    run: Callable[..., subprocess.CompletedProcess[Any]] = subprocess.run

    def _pulumi(self, *args: str, out: Path | None = None, dry: bool = False) -> None:
        command = ["pulumi", *args, "--stack", self.stack, "--non-interactive"]
        env = {**os.environ, **(self.env or {})}
        if dry:
            # A dry run persists nothing, yet serialises the snapshot after every step unless
            # checkpoints are skipped (pulumi/pulumi v3.274.0 pkg/backend/snapshot.go,
            # NewSnapshotManager), as the workflows' previews do. Never on a write.
            env["PULUMI_SKIP_CHECKPOINTS"] = "true"
        if out is None:
            done = self.run(command, cwd=self.cwd, env=env, capture_output=True, text=True)
        else:
            with out.open("w", encoding="utf-8") as sink:
                done = self.run(
                    command, cwd=self.cwd, env=env, stdout=sink, stderr=subprocess.PIPE, text=True
                )
        if done.returncode != 0:
            tail = (done.stderr or "")[-TAIL:].strip()
            shown = " ".join(command[:3]) + (" --target ..." if "--target" in command else "")
            raise CommandError(f"{shown} exited with code {done.returncode}: {tail}")

    def observe(self, refresh: Sequence[str]) -> Sequence[Path]:
        self.workdir.mkdir(mode=0o700, parents=True, exist_ok=True)
        preview, state = self.workdir / "preview.json", self.workdir / "state.json"
        self._pulumi("preview", "--json", out=preview, dry=True)
        self._pulumi("stack", "export", out=state)
        if not refresh:
            return (preview, state)
        live = self.workdir / "refresh.json"
        self._pulumi("refresh", "--preview-only", "--json", *_targets(refresh), out=live, dry=True)
        return (preview, state, live)

    def up(self, urns: Sequence[str]) -> None:
        self._pulumi("up", "--yes", "--skip-preview", *self.up_args, *_targets(urns))


def _targets(urns: Sequence[str]) -> list[str]:
    return [arg for urn in urns for arg in ("--target", urn)]

"""``gatewayctl history``: what each ``up`` of a stack applied (docs/history.md).

Recording (``history STACK --record FILE``, after the deploy workflow's rollout): the entry
of :mod:`gatewayctl.inputs.history_records` for the checkout as it is, the stack resolved offline
as the ``up`` resolved it: per gateway its release, images and the git blob of its declaration file
(``git hash-object``: in CI's clean checkout, ``git rev-parse HEAD:<file>``), with the
rollout's outcome per wave when ``--rollout`` gives its ``-o json``.

Reading: the entries newest first, each joined with the status records the drift check wrote
after it (:mod:`gatewayctl.inputs.status_records`) up to the next ``up``: per gateway (and for the
``up`` as a whole) since when it has been Synced and Healthy without a break, counted back from
the last record before the next ``up`` (or the newest record), or its last status when that
record shows it otherwise.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from gatewayctl import interrupts
from gatewayctl.deploy import soak
from gatewayctl.errors import InvalidInputError, Problem, UsageError
from gatewayctl.inputs.history_records import IMAGES, OUTCOMES, Entry, GatewayEntry
from gatewayctl.inputs.status_records import GatewayRecord, Record
from gatewayctl.reading import read_text
from gatewayctl.resolve.stack import load_stack

GIT_TIMEOUT = 60
ROLLOUT_LIMIT = 64 * 1024 * 1024
"""Bytes of a rollout -o json read (a few hundred bytes a gateway)."""
GOOD = ("Synced", "Healthy")


# --- recording ---------------------------------------------------------------------------------


def _git(root: Path, *args: str) -> str | None:
    """The output of a git command in ``root``; None when git is missing or fails."""
    try:
        done = interrupts.run(["git", "-C", str(root), *args], timeout=GIT_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def _waves(path: Path) -> tuple[dict[str, str], int | None]:
    """From ``rollout -o json``: each gateway's wave result, and the wave it stopped at."""
    display = str(path)
    try:
        document = json.loads(read_text(path, ROLLOUT_LIMIT))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise InvalidInputError([Problem(display, "", f"not rollout's JSON ({error})")]) from None
    waves = document.get("waves") if isinstance(document, dict) else None
    if not isinstance(waves, list):
        raise InvalidInputError([Problem(display, "waves", "expected rollout -o json's waves")])
    results: dict[str, str] = {}
    stopped = None
    for index, wave in enumerate(waves):
        good = (
            isinstance(wave, dict)
            and type(wave.get("wave")) is int
            and wave.get("result") in ("done", "stopped", "untouched")
            and isinstance(wave.get("gateways"), list)
            and all(isinstance(g, str) for g in wave["gateways"])
        )
        if not good:
            field = f"waves.{index}"
            raise InvalidInputError([Problem(display, field, "expected wave, result, gateways")])
        results.update({g: wave["result"] for g in wave["gateways"]})
        if wave["result"] == "stopped" and stopped is None:
            stopped = wave["wave"]
    return results, stopped


def entry(
    root: Path,
    stack: str,
    *,
    outcome: str,
    recorded: datetime,
    workflow: str,
    run: str | None,
    rollout: Path | None,
) -> Entry:
    """The entry of an ``up`` of ``stack`` from this checkout that ended at ``recorded``."""
    if outcome not in OUTCOMES:
        raise UsageError(f"--outcome takes {', '.join(OUTCOMES)}")
    waves, stopped = _waves(rollout) if rollout is not None else ({}, None)
    if outcome == "stopped" and stopped is None:
        raise UsageError("--outcome stopped needs --rollout FILE showing the wave it stopped at")
    if outcome != "stopped":
        stopped = None
    loaded = load_stack(root, stack)
    sources = [g.source for g in loaded.gateways]
    blobs = (_git(root, "hash-object", "--", *sources) or "").split() if sources else []
    if len(blobs) != len(sources):
        blobs = [""] * len(sources)
    commit = (_git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}") or "").strip()
    gateways = tuple(
        GatewayEntry(
            name=g.name,
            release=g.release,
            images={k: getattr(g.args.images, k) for k in IMAGES},
            declaration=blob or None,
            wave=waves.get(g.name) if rollout is not None else None,
        )
        for g, blob in zip(loaded.gateways, blobs, strict=True)
    )
    return Entry(
        recorded=recorded,
        stack=stack,
        workflow=workflow,
        run=run,
        commit=commit or None,
        outcome=outcome,
        stopped_at=stopped,
        gateways=gateways,
    )


# --- reading -----------------------------------------------------------------------------------


def sources(
    root: Path, stack: str, directory: Path | None, ref: str
) -> tuple[tuple[str | None, str, str], tuple[str | None, str, str]]:
    """(text, display, why missing) of the stack's history file and of its status records:
    ``DIR/history/<stack>.jsonl`` and ``DIR/records/<stack>.jsonl`` of a checkout of the
    records branch, else the same paths on ``ref`` in the git repository ``root`` is in."""
    if directory is not None:
        return (
            soak.read_file(directory / "history" / f"{stack}.jsonl"),
            soak.read_file(directory / "records" / f"{stack}.jsonl"),
        )
    return (
        soak.read_branch(root, f"history/{stack}.jsonl", "no up recorded it", ref),
        soak.read_branch(root, f"records/{stack}.jsonl", "no drift check recorded it", ref),
    )


@dataclass(frozen=True, kw_only=True)
class Health:
    """What the status records say after an ``up``, until the next one."""

    since: datetime | None = None
    """Synced and Healthy without a break since (None: not in the last record, or none)."""
    last: datetime | None = None
    """The last record's time (None: no record)."""
    sync: str | None = None
    health: str | None = None
    """The last record's sync and health (of the gateway; the worst, for a whole ``up``)."""

    def text(self, superseded: bool) -> str:
        if self.last is None:
            return "no status recorded" + (" before the next up" if superseded else " since")
        if self.since is not None:
            return f"healthy since {self.since.isoformat()}" + (
                f" (until the next up; last check {self.last.isoformat()})" if superseded else ""
            )
        return f"last status {self.sync}/{self.health} at {self.last.isoformat()}"

    def document(self) -> dict[str, Any]:
        return {
            "healthySince": self.since.isoformat() if self.since else None,
            "lastRecorded": self.last.isoformat() if self.last else None,
            "sync": self.sync,
            "health": self.health,
        }


RANK = {"Healthy": 0, "Progressing": 1, "Unknown": 2, "Missing": 3, "Degraded": 4}
SYNC_RANK = {"Synced": 0, "Unknown": 1, "OutOfSync": 2, "Missing": 3}


def health(window: Sequence[Record], names: Sequence[str]) -> Health:
    """The health of the gateways ``names`` in ``window`` (oldest first): a record counts when
    it shows at least one of them, and is good when each it shows is Synced and Healthy."""
    seen: list[tuple[datetime, list[GatewayRecord]]] = []
    for record in window:
        shown = [g for g in record.gateways if g.name in names]
        if shown:
            seen.append((record.recorded, shown))
    if not seen:
        return Health()
    since = None
    for at, shown in reversed(seen):
        if any((g.sync, g.health) != GOOD for g in shown):
            break
        since = at
    at, shown = seen[-1]
    sync = max((g.sync for g in shown), key=lambda s: SYNC_RANK.get(s, 9))
    worst = max((g.health for g in shown), key=lambda h: RANK.get(h, 9))
    return Health(since=since, last=at, sync=sync, health=worst)


@dataclass(frozen=True, kw_only=True)
class Shown:
    entry: Entry
    superseded: bool
    """A later ``up`` follows it."""
    health: Health
    gateways: tuple[tuple[GatewayEntry, Health], ...]


def join(
    entries: Sequence[Entry], records: Sequence[Record], gateway: str | None = None
) -> list[Shown]:
    """The entries newest first, each with what the records after it (up to the next entry)
    say; only those with ``gateway``, and only it, when given."""
    shown = []
    for index, current in enumerate(entries):
        following = entries[index + 1] if index + 1 < len(entries) else None
        window = [
            r
            for r in records
            if r.recorded >= current.recorded
            and (following is None or r.recorded < following.recorded)
        ]
        gateways = [g for g in current.gateways if gateway is None or g.name == gateway]
        if gateway is not None and not gateways:
            continue
        shown.append(
            Shown(
                entry=current,
                superseded=following is not None,
                health=health(window, [g.name for g in gateways]),
                gateways=tuple((g, health(window, [g.name])) for g in gateways),
            )
        )
    return list(reversed(shown))


def _short(sha: str | None) -> str:
    return sha[:12] if sha else "(none)"


def _outcome(entry: Entry) -> str:
    if entry.outcome == "stopped":
        return f"stopped at wave {entry.stopped_at}"
    return entry.outcome


def lines(stack: str, shown: Sequence[Shown]) -> list[str]:
    """The text ``history`` prints."""
    found = [f"history of {stack}: {len(shown)} up(s), newest first"]
    for item in shown:
        e = item.entry
        found.append(
            f"{e.recorded.isoformat()}  {e.workflow}  {_outcome(e)}  commit {_short(e.commit)}"
            f"  {item.health.text(item.superseded)}"
        )
        if e.run:
            found.append(f"  run {e.run}")
        width = max((len(g.name) for g, _ in item.gateways), default=0)
        for g, h in item.gateways:
            wave = f"  wave {g.wave}" if g.wave else ""
            found.append(
                f"  {g.name:<{width}}  {g.release or '(no release)'}  declaration"
                f" {_short(g.declaration)}{wave}  {h.text(item.superseded)}"
            )
    return found


def document(stack: str, shown: Sequence[Shown]) -> dict[str, Any]:
    """``history -o json|yaml``."""
    return {
        "stack": stack,
        "ups": [
            {
                "recorded": s.entry.recorded.isoformat(),
                "workflow": s.entry.workflow,
                "run": s.entry.run,
                "commit": s.entry.commit,
                "outcome": s.entry.outcome,
                "stoppedAt": s.entry.stopped_at,
                "superseded": s.superseded,
                **s.health.document(),
                "gateways": [
                    {
                        "name": g.name,
                        "release": g.release,
                        "images": dict(g.images),
                        "declaration": g.declaration,
                        "wave": g.wave,
                        **h.document(),
                    }
                    for g, h in s.gateways
                ],
            }
            for s in shown
        ],
    }

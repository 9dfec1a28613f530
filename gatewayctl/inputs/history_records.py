"""The deploy history: one JSON line per ``up`` of a stack (``gatewayctl history STACK --record
FILE``), appended by the deploy workflow (and the drift check's self-heal) to
``history/<stack>.jsonl`` on the branch ``hypershell-records``, beside the status records
(:mod:`gatewayctl.inputs.status_records`), and read back by ``gatewayctl history`` and
``gatewayctl rollback`` (docs/history.md).

A line holds when the ``up`` ended, the stack, the workflow and its run, the program commit,
the outcome (``succeeded``, ``failed``, or ``stopped`` at a wave), and per gateway its
release, its resolved images and the git blob of its declaration, and the result of its wave
(``done``, ``stopped``, ``untouched``; null without a rollout)::

    {"recorded":"2026-12-06T05:17:00+00:00","stack":"aws","workflow":"deploy",
     "run":"https://github.com/o/r/actions/runs/1","commit":"<40 hex>","outcome":"stopped",
     "stoppedAt":2,"gateways":[{"name":"audit","release":"openshell-0.0.110",
     "images":{"gateway":"...","supervisor":"...","sandbox":"..."},
     "declaration":"<40 hex>","wave":"done"}]}

(one line in the file). Appended as the status records are (one ``write`` with ``O_APPEND``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gatewayctl.errors import InvalidInputError, Problem
from gatewayctl.inputs import status_records

OUTCOMES = ("succeeded", "failed", "stopped")
WORKFLOWS = ("deploy", "drift", "manual")
WAVE_RESULTS = ("done", "stopped", "untouched")
IMAGES = ("gateway", "supervisor", "sandbox")
KEYS = ("recorded", "stack", "workflow", "run", "commit", "outcome", "stoppedAt", "gateways")
GATEWAY_KEYS = ("name", "release", "images", "declaration", "wave")
SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
"""A git object name (SHA-1, or SHA-256)."""
RUN_LONGEST = 1000


@dataclass(frozen=True, kw_only=True)
class GatewayEntry:
    name: str
    release: str | None
    images: Mapping[str, str]
    """gateway, supervisor and sandbox image references, as the program resolved them."""
    declaration: str | None
    """The git blob of ``gateways/<stack>/<name>.yaml`` as applied (None: not in git)."""
    wave: str | None = None
    """Its wave's result in the rollout (None: no rollout, a plain ``up``)."""


@dataclass(frozen=True, kw_only=True)
class Entry:
    recorded: datetime
    """An aware time, in UTC: when the ``up`` ended."""
    stack: str
    workflow: str
    run: str | None
    """The workflow run's URL (or id); None by hand."""
    commit: str | None
    """The program's commit (None: not a git checkout)."""
    outcome: str
    stopped_at: int | None
    """The wave the rollout stopped at (``outcome`` ``stopped``)."""
    gateways: tuple[GatewayEntry, ...]


def line(entry: Entry) -> str:
    """The entry as its line (no line break): keys in the documented order, ASCII only."""
    document = {
        "recorded": entry.recorded.astimezone(UTC).isoformat(),
        "stack": entry.stack,
        "workflow": entry.workflow,
        "run": entry.run,
        "commit": entry.commit,
        "outcome": entry.outcome,
        "stoppedAt": entry.stopped_at,
        "gateways": [
            {
                "name": g.name,
                "release": g.release,
                "images": {k: g.images[k] for k in IMAGES},
                "declaration": g.declaration,
                "wave": g.wave,
            }
            for g in sorted(entry.gateways, key=lambda g: g.name)
        ],
    }
    return json.dumps(document, ensure_ascii=True, separators=(",", ":"))


def append(path: Path, entry: Entry) -> None:
    """Append the entry's line to ``path`` as :func:`gatewayctl.inputs.status_records.append`
    does."""
    status_records.append_line(path, line(entry))


def parse(text: str, display: str, stack: str | None = None) -> list[Entry]:
    """Every line of ``text`` (the file ``display``) as an entry, oldest first; the strict
    reader of :func:`gatewayctl.inputs.status_records.parse` (file, line number and field of the
    first bad line, the numbers of the others)."""
    found = status_records.parse_lines(
        text, display, lambda item, problem: _entry(item, stack, problem)
    )
    return sorted(found, key=lambda e: e.recorded)


def _entry(value: dict[str, Any], stack: str | None, problem: Any) -> Entry | None:
    status_records.unknown_keys(value, "", KEYS, problem)
    recorded = status_records.aware_time(value.get("recorded"))
    if recorded is None:
        problem("recorded", "expected an ISO 8601 time with its UTC offset")
    name = value.get("stack")
    if not isinstance(name, str) or (stack is not None and name != stack):
        problem("stack", f"expected the stack's name ({stack})" if stack else "expected a name")
    if value.get("workflow") not in WORKFLOWS:
        problem("workflow", f"expected one of {', '.join(WORKFLOWS)}")
    run = value.get("run")
    if run is not None and (not isinstance(run, str) or not 0 < len(run) <= RUN_LONGEST):
        problem("run", "expected the run's URL or null")
    commit = value.get("commit")
    if commit is not None and (not isinstance(commit, str) or not SHA.match(commit)):
        problem("commit", "expected a git commit (40 or 64 hex digits) or null")
    outcome = value.get("outcome")
    if outcome not in OUTCOMES:
        problem("outcome", f"expected one of {', '.join(OUTCOMES)}")
    stopped = value.get("stoppedAt")
    if outcome == "stopped" and (type(stopped) is not int or stopped < 0):
        problem("stoppedAt", "expected the wave it stopped at (a number)")
    elif outcome != "stopped" and stopped is not None:
        problem("stoppedAt", "expected null: the outcome is not stopped")
    gateways = _gateways(value.get("gateways"), problem)
    if recorded is None or gateways is None or not isinstance(name, str):
        return None
    return Entry(
        recorded=recorded,
        stack=name,
        workflow=str(value.get("workflow")),
        run=run if isinstance(run, str) else None,
        commit=commit if isinstance(commit, str) else None,
        outcome=str(outcome),
        stopped_at=stopped if type(stopped) is int else None,
        gateways=gateways,
    )


def _gateways(value: Any, problem: Any) -> tuple[GatewayEntry, ...] | None:
    if not isinstance(value, list):
        problem("gateways", "expected a list of gateways")
        return None
    found = []
    for index, item in enumerate(value):
        field = f"gateways.{index}"
        if not isinstance(item, dict):
            problem(field, f"expected an object: {', '.join(GATEWAY_KEYS)}")
            continue
        status_records.unknown_keys(item, f"{field}.", GATEWAY_KEYS, problem)
        name, release, images = item.get("name"), item.get("release"), item.get("images")
        declaration, wave = item.get("declaration"), item.get("wave")
        good = True
        if not isinstance(name, str) or not name:
            problem(f"{field}.name", "expected a name")
            good = False
        if "release" not in item or (release is not None and not isinstance(release, str)):
            problem(f"{field}.release", "expected a release name or null")
            good = False
        if (
            not isinstance(images, dict)
            or sorted(images) != sorted(IMAGES)
            or not all(isinstance(v, str) and v for v in images.values())
        ):
            problem(f"{field}.images", f"expected an object of {', '.join(IMAGES)} references")
            good = False
        if declaration is not None and (
            not isinstance(declaration, str) or not SHA.match(declaration)
        ):
            problem(f"{field}.declaration", "expected a git blob (40 or 64 hex digits) or null")
            good = False
        if wave is not None and wave not in WAVE_RESULTS:
            problem(f"{field}.wave", f"expected one of {', '.join(WAVE_RESULTS)} or null")
            good = False
        if good:
            found.append(
                GatewayEntry(
                    name=str(name),
                    release=release,
                    images=dict(images),  # type: ignore[arg-type]
                    declaration=declaration,
                    wave=wave,
                )
            )
    return tuple(found)


def problems_of(display: str, why: str) -> InvalidInputError:
    """One problem of the history file as a whole (the file cannot be read)."""
    return InvalidInputError([Problem(display, "", why)])

"""Recorded status: one JSON line per check of a stack (``gatewayctl status --record FILE``),
appended by the drift workflow to ``records/<stack>.jsonl`` on the branch
``hypershell-records`` and read back by ``gatewayctl promote`` for the soak between
environments (docs/rollouts.md, "Soak between environments").

A line holds the time of the check, the stack, the overall state as ``status -o json`` names
it, and per gateway its name, release, sync and health; nothing else of the status (no
addresses, messages, paths or secrets)::

    {"recorded":"2026-12-06T05:17:00+00:00","stack":"aws","state":"synced","gateways":[
     {"name":"audit","release":"openshell-0.0.110","sync":"Synced","health":"Healthy"}]}

(one line in the file). A line is appended in one ``write`` of the whole line to a file
opened with ``O_APPEND``, so appends that run at once never interleave.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from gatewayctl.errors import InvalidInputError, Problem, ToolError, printable

STATES = ("synced", "out-of-sync", "degraded", "renewal-due")
SYNCS = ("Synced", "OutOfSync", "Missing", "Unknown")
HEALTHS = ("Healthy", "Progressing", "Missing", "Degraded", "Unknown")
KEYS = ("recorded", "stack", "state", "gateways")
GATEWAY_KEYS = ("name", "release", "sync", "health")
LINE_LIMIT = 4 * 1024 * 1024
"""Characters of one line (a stack of thousands of gateways fits many times)."""
OTHERS_SHOWN = 10
"""Numbers of further bad lines named after the first one's problems."""
T = TypeVar("T")


@dataclass(frozen=True, kw_only=True)
class GatewayRecord:
    name: str
    release: str | None
    sync: str
    health: str


@dataclass(frozen=True, kw_only=True)
class Record:
    recorded: datetime
    """An aware time, in UTC."""
    stack: str
    state: str
    gateways: tuple[GatewayRecord, ...]


def line(record: Record) -> str:
    """The record as its line (no line break): keys in the documented order, ASCII only."""
    document = {
        "recorded": record.recorded.astimezone(UTC).isoformat(),
        "stack": record.stack,
        "state": record.state,
        "gateways": [
            {"name": g.name, "release": g.release, "sync": g.sync, "health": g.health}
            for g in sorted(record.gateways, key=lambda g: g.name)
        ],
    }
    return json.dumps(document, ensure_ascii=True, separators=(",", ":"))


def append(path: Path, record: Record) -> None:
    """Append the record's line to ``path`` (created 0644 when missing) in one ``write`` with
    ``O_APPEND``; ToolError when it cannot (a directory, a symbolic link, a short write)."""
    append_line(path, line(record))


def append_line(path: Path, text: str) -> None:
    """Append ``text`` and a line break to ``path`` as :func:`append` does (also the deploy
    history's lines, :mod:`gatewayctl.inputs.history_records`)."""
    data = (text + "\n").encode("ascii")
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    shown = printable(str(path))
    try:
        handle = os.open(path, flags, 0o644)
    except OSError as error:
        raise ToolError(f"--record {shown}: {error.strerror or error}") from None
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            raise ToolError(f"--record {shown}: not a regular file")
        written = os.write(handle, data)
    except OSError as error:
        raise ToolError(f"--record {shown}: {error.strerror or error}") from None
    finally:
        os.close(handle)
    if written != len(data):
        raise ToolError(f"--record {shown}: wrote {written} of {len(data)} bytes")


def parse(text: str, display: str, stack: str | None = None) -> list[Record]:
    """Every line of ``text`` (the file ``display``) as a record, oldest first (sorted by
    time; lines of one time keep their order); InvalidInputError naming the file, the line
    number and each field of the first line that is not a record (of ``stack``, when given),
    and the numbers of the other such lines."""
    found = parse_lines(text, display, lambda value, problem: _record(value, stack, problem))
    return sorted(found, key=lambda r: r.recorded)


def parse_lines(
    text: str, display: str, read: Callable[[dict[str, Any], Callable[[str, str], None]], T | None]
) -> list[T]:
    """Each line of ``text`` as ``read`` makes it of its JSON object (``read`` reports each
    problem of a field through the callable it is given; a line with one is dropped), in the
    file's order; InvalidInputError as :func:`parse` says."""
    found: list[T] = []
    problems: list[Problem] = []
    others: list[int] = []
    for number, item in enumerate(text.split("\n"), start=1):
        if not item and number == text.count("\n") + 1:
            break  # after the last line break
        here: list[Problem] = []

        def problem(
            field: str, message: str, number: int = number, here: list[Problem] = here
        ) -> None:
            here.append(Problem(display, field, message, line=number))

        value = _object(item, problem)
        result = read(value, problem) if value is not None else None
        if here and problems:
            others.append(number)
        elif here:
            problems = here
        elif result is not None:
            found.append(result)
    if others:
        shown = ", ".join(map(str, others[:OTHERS_SHOWN])) + (
            " ..." if len(others) > OTHERS_SHOWN else ""
        )
        message = f"and {len(others)} more line(s) that are not records: {shown}"
        problems.append(Problem(display, "", message, line=others[0]))
    if problems:
        raise InvalidInputError(problems)
    return found


def _object(item: str, problem: Callable[[str, str], None]) -> dict[str, Any] | None:
    if len(item) > LINE_LIMIT:
        problem("", f"a line of more than {LINE_LIMIT:,} characters")
        return None
    try:
        value = json.loads(item)
    except (ValueError, RecursionError):
        value = None
    if not isinstance(value, dict):
        problem("", "not a JSON object (one record per line)")
        return None
    return value


def _record(value: dict[str, Any], stack: str | None, problem: Any) -> Record | None:
    unknown_keys(value, "", KEYS, problem)
    recorded = aware_time(value.get("recorded"))
    if recorded is None:
        problem("recorded", "expected an ISO 8601 time with its UTC offset")
    name = value.get("stack")
    if not isinstance(name, str) or (stack is not None and name != stack):
        problem("stack", f"expected the stack's name ({stack})" if stack else "expected a name")
    if value.get("state") not in STATES:
        problem("state", f"expected one of {', '.join(STATES)}")
    gateways = _gateways(value.get("gateways"), problem)
    if recorded is None or gateways is None or not isinstance(name, str):
        return None
    return Record(recorded=recorded, stack=name, state=str(value["state"]), gateways=gateways)


def unknown_keys(value: dict[str, Any], prefix: str, keys: Sequence[str], problem: Any) -> None:
    for key in value:
        if key not in keys:
            problem(f"{prefix}{key}", f"unknown key; expected one of {', '.join(keys)}")


def aware_time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed.astimezone(UTC) if parsed.tzinfo is not None else None


def _gateways(value: Any, problem: Any) -> tuple[GatewayRecord, ...] | None:
    if not isinstance(value, list):
        problem("gateways", "expected a list of gateways")
        return None
    found = []
    for index, item in enumerate(value):
        field = f"gateways.{index}"
        if not isinstance(item, dict):
            problem(field, "expected an object: name, release, sync, health")
            continue
        unknown_keys(item, f"{field}.", GATEWAY_KEYS, problem)
        name, release = item.get("name"), item.get("release")
        sync, health = item.get("sync"), item.get("health")
        if not isinstance(name, str) or not name:
            problem(f"{field}.name", "expected a name")
        if "release" not in item:
            problem(f"{field}.release", "missing (null when it runs no release)")
        elif release is not None and not isinstance(release, str):
            problem(f"{field}.release", "expected a release name or null")
        if sync not in SYNCS:
            problem(f"{field}.sync", f"expected one of {', '.join(SYNCS)}")
        if health not in HEALTHS:
            problem(f"{field}.health", f"expected one of {', '.join(HEALTHS)}")
        if isinstance(name, str) and (release is None or isinstance(release, str)):
            found.append(
                GatewayRecord(name=name, release=release, sync=str(sync), health=str(health))
            )
    return tuple(found)

"""Change windows: when CI may change a stack (``deploy/windows.yaml``), read by ``gatewayctl
window`` before a deploy, a self-heal or a certificate reissue.

As Argo CD's sync windows (https://argo-cd.readthedocs.io/en/stable/user-guide/sync_windows/):
each window is ``allow`` or ``deny``, opens at each time its cron ``schedule`` matches and lasts
``duration``; a stack with no window is always open; a ``deny`` window that is active closes it;
otherwise, when the stack has ``allow`` windows, one of them must be active. The schedule is
read in the stack's ``timeZone`` (IANA, default UTC) by cronsim, which follows Debian's cron,
daylight saving time included (https://pypi.org/project/cronsim/). An emergency change while
closed needs ``--override REASON``, which the workflows record in the run's summary.

The file::

    stacks:
      ibm:                        # a stack name, or a pattern with * (aws-* for its shards)
        timeZone: Europe/Amsterdam
        windows:
          - kind: deny
            schedule: "0 17 * * FRI"
            duration: 63h
            reason: weekend freeze
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from cronsim import CronSim, CronSimError

from gatewayctl.errors import InvalidInputError, Problem, printable
from gatewayctl.inputs.stackfile import all_stacks, per_stack, unknown_keys
from gatewayctl.inputs.yamlfile import read_yaml_mapping

SETTINGS = "deploy/windows.yaml"
_DURATION = re.compile(r"(?:(\d{1,4})d)?(?:(\d{1,6})h)?(?:(\d{1,8})m)?")
LONGEST = timedelta(days=31)
"""A window lasts at most this: a longer one is a typo for a permanent state."""
HORIZON = 400
"""Windows followed to find when a closed stack opens again (a year of daily windows)."""
WINDOW_KEYS = ("kind", "schedule", "duration", "reason")
STACK_KEYS = ("timeZone", "windows")


@dataclass(frozen=True, kw_only=True)
class Window:
    kind: Literal["allow", "deny"]
    schedule: str
    duration: timedelta
    reason: str = ""

    def active(self, at: datetime) -> datetime | None:
        """The start of this window's run that holds ``at``, or None."""
        start = next(CronSim(self.schedule, at + timedelta(seconds=1), reverse=True), None)
        # In UTC: two times of one zone compare by wall clock, ignoring `fold` (PEP 495).
        ends = self.end(start).astimezone(UTC) if start is not None else None
        return start if ends is not None and at.astimezone(UTC) < ends else None

    def end(self, start: datetime) -> datetime:
        """``duration`` after ``start`` in elapsed time (as Argo CD adds it), in its zone:
        wall-clock arithmetic in one zone ignores a clock change inside the window."""
        assert start.tzinfo is not None
        return (start.astimezone(UTC) + self.duration).astimezone(start.tzinfo)

    def describe(self) -> str:
        why = f" ({self.reason})" if self.reason else ""
        return f"{self.kind} window {self.schedule!r} for {duration_text(self.duration)}{why}"


@dataclass(frozen=True, kw_only=True)
class StackWindows:
    time_zone: str
    windows: tuple[Window, ...]


@dataclass(frozen=True, kw_only=True)
class Decision:
    open: bool
    why: str
    """Which window decides (closed), or why it is open."""
    until: datetime | None = None
    """When a closed stack opens again (None: not within :data:`HORIZON` windows)."""


def duration_text(duration: timedelta) -> str:
    """``1d2h``, ``19h17m``, ``0m``: days, hours and minutes (seconds dropped)."""
    minutes = int(duration.total_seconds()) // 60
    days, rest = divmod(minutes, 24 * 60)
    hours, minutes = divmod(rest, 60)
    parts = [
        f"{days}d" if days else "",
        f"{hours}h" if hours else "",
        f"{minutes}m" if minutes else "",
    ]
    return "".join(parts) or "0m"


def duration(text: Any) -> timedelta | None:
    """``63h``, ``1d12h``, ``90m``: more than nothing and at most :data:`LONGEST`, else None."""
    match = _DURATION.fullmatch(str(text)) if isinstance(text, str) and text else None
    if match is None:
        return None
    days, hours, minutes = (int(g or 0) for g in match.groups())
    value = timedelta(days=days, hours=hours, minutes=minutes)
    return value if timedelta(0) < value <= LONGEST else None


def read(root: Path) -> dict[str, StackWindows]:
    """Each stack's windows (a stack the file does not name has none); InvalidInputError naming
    the file and field of every problem."""
    path = root / SETTINGS
    if not path.exists() and not path.is_symlink():
        return {}
    document = read_yaml_mapping(path, SETTINGS)
    problems = [
        Problem(SETTINGS, str(k), "unknown key; the file holds 'stacks'", at_key=True)
        for k in document
        if k != "stacks"
    ]
    entries = document.get("stacks")
    if not isinstance(entries, dict) or not entries:
        problems.append(
            Problem(SETTINGS, "stacks", "expected a mapping of stack (or pattern) to its windows")
        )
        raise InvalidInputError(problems)
    found = per_stack(SETTINGS, entries, all_stacks(root), _stack, "windows", problems)
    if problems:
        raise InvalidInputError(problems)
    return found


@functools.cache
def _zones() -> frozenset[str]:
    """The tz database's names (``available_timezones`` walks the zoneinfo directories on each
    call: once per process here, for every stack entry and every ``pulumi up``)."""
    return frozenset(available_timezones()) | {"UTC"}


def _stack(entry: Any, field: str, problems: list[Problem]) -> StackWindows | None:
    if not isinstance(entry, dict):
        problems.append(Problem(SETTINGS, field, "expected a mapping with timeZone and windows"))
        return None
    before = len(problems)
    problems += unknown_keys(SETTINGS, entry, field, STACK_KEYS)
    zone = entry.get("timeZone", "UTC")
    try:
        # The tz database's names; not "localtime", whatever the host is set to.
        if str(zone) == "localtime" or str(zone) not in _zones():
            raise ValueError(zone)
        ZoneInfo(str(zone))
    except (ZoneInfoNotFoundError, ValueError, OSError):
        problems.append(
            Problem(
                SETTINGS,
                f"{field}.timeZone",
                f"{printable(str(zone))!r} is no IANA time zone (Europe/Amsterdam, UTC)",
            )
        )
    items = entry.get("windows")
    if not isinstance(items, list) or not items:
        problems.append(Problem(SETTINGS, f"{field}.windows", "expected a list of windows"))
        return None
    windows = [
        w for i, item in enumerate(items) if (w := _window(item, f"{field}.windows.{i}", problems))
    ]
    if len(problems) > before:
        return None
    return StackWindows(time_zone=str(zone), windows=tuple(windows))


def _window(item: Any, field: str, problems: list[Problem]) -> Window | None:
    if not isinstance(item, dict):
        problems.append(
            Problem(SETTINGS, field, "expected a mapping: kind, schedule, duration, reason")
        )
        return None
    before = len(problems)
    problems += unknown_keys(SETTINGS, item, field, WINDOW_KEYS)
    kind = item.get("kind")
    if kind not in ("allow", "deny"):
        problems.append(Problem(SETTINGS, f"{field}.kind", "expected allow or deny"))
    schedule = item.get("schedule")
    try:
        CronSim(str(schedule), datetime(2026, 1, 1))
        if not isinstance(schedule, str):
            raise CronSimError("not a string")
    except CronSimError as error:
        problems.append(
            Problem(
                SETTINGS,
                f"{field}.schedule",
                f"not a cron schedule (minute hour day month weekday): {error}",
            )
        )
    length = duration(item.get("duration"))
    if length is None:
        problems.append(
            Problem(
                SETTINGS,
                f"{field}.duration",
                f"expected a duration such as 63h, 1d12h or 90m, at most {LONGEST.days}d",
            )
        )
    reason = item.get("reason", "")
    if not isinstance(reason, str) or len(reason) > 200:
        problems.append(
            Problem(SETTINGS, f"{field}.reason", "expected text of at most 200 characters")
        )
    if len(problems) > before or length is None:
        return None
    return Window(
        kind="allow" if kind == "allow" else "deny",
        schedule=str(schedule),
        duration=length,
        reason=printable(reason),
    )


def decide(windows: StackWindows | None, at: datetime) -> Decision:
    """Whether the stack may be changed at ``at`` (an aware time), and until when it is closed."""
    if windows is None or not windows.windows:
        return Decision(open=True, why="no change window is set")
    zone = ZoneInfo(windows.time_zone)
    now = at.astimezone(zone)
    first = _closed_by(windows, now)
    if first is None:
        allow = [w for w in windows.windows if w.kind == "allow" and w.active(now)]
        return Decision(
            open=True, why=f"inside the {allow[0].describe()}" if allow else "no window denies it"
        )
    moment = now
    for _ in range(HORIZON):
        reason = _closed_by(windows, moment)
        if reason is None:
            return Decision(open=False, why=first[0], until=moment)
        moment = reason[1]
    return Decision(open=False, why=first[0])


def _closed_by(windows: StackWindows, at: datetime) -> tuple[str, datetime] | None:
    """Why the stack is closed at ``at`` and the next time to look again, or None (open)."""
    ends = [
        (w, w.end(start))
        for w in windows.windows
        if w.kind == "deny" and (start := w.active(at)) is not None
    ]
    if ends:
        window, end = max(ends, key=lambda pair: pair[1])
        return f"inside the {window.describe()}", end
    allows = [w for w in windows.windows if w.kind == "allow"]
    if not allows or any(w.active(at) for w in allows):
        return None
    starts = [s for w in allows if (s := next(CronSim(w.schedule, at), None)) is not None]
    if not starts:
        return "outside every allow window, and none opens again", at + LONGEST
    return f"outside every allow window ({'; '.join(w.describe() for w in allows)})", min(starts)

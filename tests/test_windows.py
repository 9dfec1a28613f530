"""Change windows (gatewayctl/deploy/windows.py, ``gatewayctl window``): allow and deny windows
per stack, read in the stack's time zone, deny first; the file's problems named."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml

from gatewayctl.errors import InvalidInputError
from gatewayctl.inputs import windows
from gatewayctl.inputs.windows import StackWindows, Window
from tests.builders import copy_project
from tests.hostile_helpers import run_cli

FREEZE = Window(kind="deny", schedule="0 17 * * FRI", duration=timedelta(hours=63))
OFFICE = Window(kind="allow", schedule="0 8 * * MON-FRI", duration=timedelta(hours=10))


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


def test_a_deny_window_closes_until_it_ends_in_the_stacks_time_zone() -> None:
    stack = StackWindows(time_zone="Europe/Amsterdam", windows=(FREEZE,))
    # Friday 2026-12-04 16:59 in Amsterdam (UTC+1) is 15:59 UTC: open.
    assert windows.decide(stack, at("2026-12-04T15:59:00+00:00")).open is True
    closed = windows.decide(stack, at("2026-12-04T16:00:00+00:00"))
    assert closed == windows.Decision(
        open=False,
        why="inside the deny window '0 17 * * FRI' for 2d15h",
        until=at("2026-12-07T08:00:00+01:00"),
    )
    assert windows.decide(stack, at("2026-12-07T07:00:00+00:00")).open is True


def test_allow_windows_close_the_rest_and_deny_wins_over_allow() -> None:
    stack = StackWindows(time_zone="UTC", windows=(OFFICE,))
    assert windows.decide(stack, at("2026-12-07T09:00:00+00:00")) == windows.Decision(
        open=True, why="inside the allow window '0 8 * * MON-FRI' for 10h"
    )
    evening = windows.decide(stack, at("2026-12-07T18:00:00+00:00"))
    assert (evening.open, evening.until) == (False, at("2026-12-08T08:00:00+00:00"))
    assert evening.why == "outside every allow window (allow window '0 8 * * MON-FRI' for 10h)"
    # A holiday deny window inside office hours: closed until it ends, then the office is open.
    holiday = Window(kind="deny", schedule="0 8 24 12 *", duration=timedelta(days=2), reason="x")
    both = StackWindows(time_zone="UTC", windows=(OFFICE, holiday))
    decision = windows.decide(both, at("2026-12-24T09:00:00+00:00"))
    assert (decision.open, decision.until) == (False, at("2026-12-28T08:00:00+00:00"))
    assert decision.why == "inside the deny window '0 8 24 12 *' for 2d (x)"


def test_no_windows_is_open() -> None:
    assert windows.decide(None, at("2026-12-04T16:00:00+00:00")) == windows.Decision(
        open=True, why="no change window is set"
    )


@pytest.mark.parametrize(
    ("text", "value"),
    [("63h", timedelta(hours=63)), ("1d12h", timedelta(hours=36)), ("90m", timedelta(minutes=90))],
)
def test_durations(text: str, value: timedelta) -> None:
    assert windows.duration(text) == value


@pytest.mark.parametrize("text", ["", "0h", "32d", "1h1d", "5", "h", 5, None])
def test_bad_durations(text: Any) -> None:
    assert windows.duration(text) is None


def write(root: Path, document: Any) -> None:
    (root / "deploy").mkdir(exist_ok=True)
    (root / windows.SETTINGS).write_text(yaml.safe_dump(document))


def test_the_file_is_read_per_stack_and_pattern(tmp_path: Path) -> None:
    root = copy_project(tmp_path / "p")
    write(
        root,
        {
            "stacks": {
                "ibm": {
                    "timeZone": "Europe/Amsterdam",
                    "windows": [{"kind": "deny", "schedule": "0 17 * * FRI", "duration": "63h"}],
                },
                "aw*": {"windows": [{"kind": "allow", "schedule": "0 8 * * *", "duration": "10h"}]},
            }
        },
    )
    read = windows.read(root)
    assert sorted(read) == ["aws", "ibm"]
    assert read["ibm"] == StackWindows(time_zone="Europe/Amsterdam", windows=(FREEZE,))
    assert read["aws"].time_zone == "UTC"


def test_every_problem_of_the_file_is_named(tmp_path: Path) -> None:
    root = copy_project(tmp_path / "p")
    write(
        root,
        {
            "stacks": {
                "ibm": {
                    "timeZone": "Mars/Olympus",
                    "windows": [
                        {"kind": "maybe", "schedule": "61 * * * *", "duration": "forever"},
                        {"kind": "deny", "schedule": "0 0 * * *", "duration": "1h", "when": 1},
                    ],
                },
                "nowhere": {
                    "windows": [{"kind": "deny", "schedule": "0 0 * * *", "duration": "1h"}]
                },
            },
            "extra": 1,
        },
    )
    with pytest.raises(InvalidInputError) as raised:
        windows.read(root)
    assert [(p.field, p.message) for p in raised.value.problems] == [
        ("extra", "unknown key; the file holds 'stacks'"),
        ("stacks.ibm.timeZone", "'Mars/Olympus' is no IANA time zone (Europe/Amsterdam, UTC)"),
        (
            "stacks.ibm.windows.0.duration",
            "expected a duration such as 63h, 1d12h or 90m, at most 31d",
        ),
        ("stacks.ibm.windows.0.kind", "expected allow or deny"),
        (
            "stacks.ibm.windows.0.schedule",
            "not a cron schedule (minute hour day month weekday): Bad minute",
        ),
        (
            "stacks.ibm.windows.1.when",
            "unknown key; expected one of kind, schedule, duration, reason",
        ),
        ("stacks.nowhere", "matches no stack; the stacks here are aws, ibm, local"),
    ]
    out = run_cli("--root", str(root), "validate", "ibm")
    assert out.code == 2
    assert out.err.splitlines()[-1] == "7 problem(s); nothing written"
    assert (
        "deploy/windows.yaml:" in out.err and "stacks.ibm.windows.0.kind: expected allow" in out.err
    )


def test_the_command_says_closed_until_when_and_takes_an_override(tmp_path: Path) -> None:
    root = copy_project(tmp_path / "p")
    write(
        root,
        {
            "stacks": {
                "ibm": {
                    "timeZone": "Europe/Amsterdam",
                    "windows": [
                        {
                            "kind": "deny",
                            "schedule": "0 17 * * FRI",
                            "duration": "63h",
                            "reason": "weekend freeze",
                        }
                    ],
                }
            }
        },
    )
    friday = "2026-12-04T18:00:00Z"
    out = run_cli("--root", str(root), "window", "ibm", "--at", friday)
    assert (out.code, out.out) == (
        6,
        "ibm: closed (inside the deny window '0 17 * * FRI' for 2d15h (weekend freeze)); opens"
        " again at 2026-12-07T08:00:00+01:00\n",
    )
    out = run_cli(
        "--root",
        str(root),
        "window",
        "ibm",
        "--at",
        friday,
        "--override",
        "INC-1: revoke",
        "-o",
        "json",
    )
    assert out.code == 0
    assert json.loads(out.out) == {
        "stack": "ibm",
        "at": "2026-12-04T18:00:00+00:00",
        "open": False,
        "why": "inside the deny window '0 17 * * FRI' for 2d15h (weekend freeze)",
        "until": "2026-12-07T08:00:00+01:00",
        "overridden": True,
        "overrideReason": "INC-1: revoke",
    }
    out = run_cli("--root", str(root), "window", "aws", "--at", friday)
    assert (out.code, out.out) == (0, "aws: open (no change window is set)\n")
    out = run_cli("--root", str(root), "window", "ibm", "--override", " ")
    assert out.code == 2 and "--override needs a reason of 1 to 200 characters" in out.err
    assert run_cli("--root", str(root), "window", "nope").code == 2


def test_a_window_lasts_its_duration_in_elapsed_time_across_a_clock_change() -> None:
    nightly = Window(kind="deny", schedule="30 1 * * *", duration=timedelta(hours=1))
    stack = StackWindows(time_zone="Europe/Amsterdam", windows=(nightly,))
    # 2026-10-25: 01:30 CEST is 23:30 UTC the day before; an hour later the window is over,
    # though the clock, turned back at 03:00 CEST, reads 02:10 CET an hour after that.
    closed = windows.decide(stack, at("2026-10-24T23:40:00+00:00"))
    assert (closed.open, closed.why) == (False, "inside the deny window '30 1 * * *' for 1h")
    # (as text: PEP 495 makes a time in the repeated hour unequal to any other zone's)
    assert closed.until is not None and closed.until.isoformat() == "2026-10-25T02:30:00+02:00"
    assert windows.decide(stack, at("2026-10-25T01:10:00+00:00")).open is True
    freeze = StackWindows(time_zone="America/New_York", windows=(FREEZE,))
    closed = windows.decide(freeze, at("2026-11-01T12:00:00+00:00"))
    assert closed.until == at("2026-11-02T07:00:00-05:00")  # 63 h after Friday 17:00 EDT


@pytest.mark.parametrize("text", ["99999999999d", "1" + "0" * 5000 + "m"])
def test_a_huge_duration_is_refused_not_a_crash(text: str) -> None:
    assert windows.duration(text) is None


@pytest.mark.parametrize("zone", ["Europe", "localtime", "../etc/passwd", 3])
def test_a_time_zone_must_be_an_iana_name(tmp_path: Path, zone: Any) -> None:
    root = copy_project(tmp_path / "p")
    rule = {"kind": "deny", "schedule": "0 0 * * *", "duration": "1h"}
    write(root, {"stacks": {"ibm": {"timeZone": zone, "windows": [rule]}}})
    with pytest.raises(InvalidInputError) as raised:
        windows.read(root)
    assert [p.field for p in raised.value.problems] == ["stacks.ibm.timeZone"]


def test_an_update_in_a_closed_window_is_refused_unless_a_reason_overrides_it(
    tmp_path: Path,
) -> None:
    import pulumi

    from gatewayctl.engine import program

    root = copy_project(tmp_path / "p")
    rule = {"kind": "deny", "schedule": "0 17 * * FRI", "duration": "63h"}
    write(root, {"stacks": {"ibm": {"timeZone": "Europe/Amsterdam", "windows": [rule]}}})
    friday = at("2026-12-04T18:00:00+00:00")
    with pytest.raises(pulumi.RunError) as raised:
        program.window_open(root, "ibm", friday, {})
    assert str(raised.value) == (
        "change window closed: inside the deny window '0 17 * * FRI' for 2d15h; opens again at"
        " 2026-12-07T08:00:00+01:00 (deploy/windows.yaml); an emergency update sets"
        " HYPERSHELL_WINDOW_OVERRIDE to its reason"
    )
    warned: list[str] = []
    override = {program.WINDOW_OVERRIDE: "INC-1: revoke"}
    program.window_open(root, "ibm", friday, override, warned.append)
    assert warned == [
        "change window closed (inside the deny window '0 17 * * FRI' for 2d15h); overridden:"
        " INC-1: revoke"
    ]
    program.window_open(root, "aws", friday, {})  # no window: open
    program.window_open(root, "ibm", at("2026-12-07T08:00:00+00:00"), {})  # Monday 09:00


def test_the_program_asks_only_for_an_update_not_a_preview(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gatewayctl.engine import drain, program, sdk_debug

    asked: list[str] = []
    monkeypatch.setattr(program, "window_open", lambda root, stack, now, env: asked.append(stack))
    monkeypatch.setattr(program, "main", lambda root: None)
    monkeypatch.setattr(drain, "install", lambda: None)
    monkeypatch.setattr(sdk_debug, "install", lambda: None)
    monkeypatch.setattr(pulumi, "get_stack", lambda: "ibm")
    for dry_run, expected in ((True, []), (False, ["ibm"])):
        asked.clear()
        monkeypatch.setattr(pulumi.runtime, "is_dry_run", lambda d=dry_run: d)
        program.run(tmp_path)
        assert asked == expected


def test_an_entry_that_is_no_stack_name_is_named_by_its_key(tmp_path: Path) -> None:
    root = copy_project(tmp_path / "p")
    rule = {"kind": "deny", "schedule": "0 0 * * *", "duration": "1h"}
    write(root, {"stacks": {"IBM": {"windows": [rule]}}})
    with pytest.raises(InvalidInputError) as raised:
        windows.read(root)
    assert [(p.field, p.message) for p in raised.value.problems] == [
        ("stacks.IBM", "is no stack name or pattern (a-z, 0-9, -, *)")
    ]

"""``gatewayctl status`` as ``argocd app list`` / ``argocd app get`` print it (issue 25 items 2
and 3): the state's age from the export's ``deployment.manifest.time``.

The fixtures are tests/fixtures/status (``tests.status_builders``) and, for what the real
engine wrote, tests/fixtures/engine."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from gatewayctl.status import age, inputs
from tests.hostile_helpers import Outcome, run_cli
from tests.status_builders import FIXTURES
from tests.support import ROOT

NOW = "2026-12-01T05:30:00Z"
DRIFT = str(FIXTURES / "refresh-drift.json")
STATE = str(FIXTURES / "state.json")
ENGINE = ROOT / "tests" / "fixtures" / "engine"


def status(*args: str, now: str = NOW) -> Outcome:
    return run_cli("status", "ibm", *args, "--now", now)


def _state_file(tmp_path: Path, edit: Any) -> str:
    document = json.loads(Path(STATE).read_text(encoding="utf-8"))
    edit(document)
    path = tmp_path / "state.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return str(path)


# --- the state's age -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("delta", "expected"),
    [
        (timedelta(seconds=-3), None),  # the state is newer than the clock
        (timedelta(seconds=-1), "0s"),  # within HumanDuration's tolerance
        (timedelta(0), "0s"),
        (timedelta(seconds=119), "119s"),
        (timedelta(minutes=2), "2m"),
        (timedelta(minutes=5, seconds=30), "5m30s"),
        (timedelta(minutes=179), "179m"),
        (timedelta(hours=3), "3h"),
        (timedelta(hours=5, minutes=10), "5h10m"),
        (timedelta(hours=47, minutes=59), "47h"),
        (timedelta(hours=48), "2d"),
        (timedelta(days=3, hours=4), "3d4h"),
        (timedelta(days=10, hours=20), "10d"),
        (timedelta(days=729), "729d"),
        (timedelta(days=730), "2y"),
        (timedelta(days=760), "2y30d"),
        (timedelta(days=365 * 8 + 100), "8y"),
    ],
)
def test_the_age_reads_as_kubectl_age(delta: timedelta, expected: str | None) -> None:
    assert age.human_duration(delta) == expected


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def test_the_documents_and_the_markdown_carry_the_states_time() -> None:
    document = json.loads(status("--format", "json", "--from", DRIFT, STATE).out)
    assert (document["stateTime"], document["stateAgeSeconds"]) == (
        "2026-11-20T09:00:00+00:00",
        10 * 86400 + 20 * 3600 + 30 * 60,
    )
    assert json.loads(status("--format", "json", "--from", DRIFT).out)["stateTime"] is None
    markdown = status("--format", "markdown", "--from", DRIFT, STATE).out
    assert "Checked 2026-12-01 05:30 UTC; state as of 2026-11-20 09:00 UTC (10d ago).\n" in (
        markdown
    )
    # Counted from the check's clock (--now); a state newer than it says so.
    markdown = status("--format", "markdown", "--from", STATE, now="2026-11-20T08:00:00Z").out
    assert (
        "state as of 2026-11-20 09:00 UTC (after the time of the check, 2026-11-20 08:00 UTC:"
        " check --now)." in markdown
    )


def test_the_real_engines_manifest_time_is_read_to_the_microsecond() -> None:
    read = inputs.read([ENGINE / "e2e-local-drift-state.json"])
    written = age.state_time(read.checkpoint)
    assert written == datetime(2026, 12, 1, 23, 29, 9, 70805, tzinfo=UTC)  # ...070805735Z
    assert age.describe(written, _utc("2026-12-02T00:00:00Z")) == "2026-12-01 23:29 UTC (30m ago)"


def test_a_manifest_time_that_is_no_time_is_bad_input_and_go_zero_is_none(
    tmp_path: Path,
) -> None:
    def bad(document: dict[str, Any]) -> None:
        document["deployment"]["manifest"]["time"] = "yesterday"

    path = _state_file(tmp_path, bad)
    out = status("--from", path)
    assert (out.code, out.out) == (2, "")
    assert out.err.splitlines()[0] == (
        f"error: {path}: deployment.manifest.time: Input should be a valid datetime or date,"
        " input is too short"
    )

    def zero(document: dict[str, Any]) -> None:
        document["deployment"]["manifest"]["time"] = "0001-01-01T00:00:00Z"

    out = status("--format", "json", "--from", _state_file(tmp_path, zero))
    assert json.loads(out.out)["stateTime"] is None

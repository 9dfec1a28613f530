"""Recorded status (``gatewayctl status --record FILE``, ``gatewayctl.inputs.status_records``): one
JSON line per check, appended whole; a reader that names the file and line of a bad one."""

from __future__ import annotations

import json
import multiprocessing
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gatewayctl.errors import InvalidInputError, ToolError
from gatewayctl.inputs import status_records
from gatewayctl.inputs.status_records import GatewayRecord, Record
from tests.hostile_helpers import run_cli
from tests.status_builders import FIXTURES

STATE = str(FIXTURES / "state.json")
AT = datetime(2026, 12, 6, 10, 0, tzinfo=UTC)


def record(at: datetime = AT, *gateways: GatewayRecord, stack: str = "aws") -> Record:
    return Record(recorded=at, stack=stack, state="synced", gateways=gateways)


AUDIT = GatewayRecord(name="audit", release="openshell-0.0.110", sync="Synced", health="Healthy")


def test_status_record_appends_names_releases_sync_and_health_only(tmp_path: Path) -> None:
    path = tmp_path / "ibm.jsonl"
    argv = ["status", "ibm", "--from", STATE, "--now", "2026-12-06T10:00:00.5Z", "-q"]
    first = run_cli(*argv, "--record", str(path))
    second = run_cli(*argv, "-o", "json", "--record", str(path))
    assert (first.code, second.code) == (5, 5)  # team-a's certificate is due
    assert json.loads(second.out)["state"] == "renewal-due"
    line = (
        '{"recorded":"2026-12-06T10:00:00+00:00","stack":"ibm","state":"renewal-due","gateways":['
        '{"name":"batch-jobs","release":"openshell-0.0.109","sync":"Synced","health":"Healthy"},'
        '{"name":"canary","release":"openshell-0.0.110","sync":"Synced","health":"Healthy"},'
        '{"name":"research","release":"openshell-0.0.109","sync":"Synced","health":"Healthy"},'
        '{"name":"team-a","release":"openshell-0.0.109","sync":"Synced","health":"Healthy"}]}\n'
    )
    assert path.read_text(encoding="ascii") == line + line
    assert status_records.parse(path.read_text(), str(path), "ibm")[0].gateways[1] == GatewayRecord(
        name="canary", release="openshell-0.0.110", sync="Synced", health="Healthy"
    )


def test_status_record_is_the_whole_stacks_not_one_gateways(tmp_path: Path) -> None:
    path = tmp_path / "ibm.jsonl"
    out = run_cli("status", "ibm", "team-a", "--from", STATE, "--record", str(path))
    assert (out.code, out.err) == (2, "error: --record records the whole stack; give no GATEWAY\n")
    assert not path.exists()


def test_a_record_cannot_go_into_a_directory_or_through_a_link(tmp_path: Path) -> None:
    (tmp_path / "target").write_text("")
    (tmp_path / "link").symlink_to(tmp_path / "target")
    with pytest.raises(ToolError, match="Is a directory"):
        status_records.append(tmp_path, record())
    with pytest.raises(ToolError, match="link"):
        status_records.append(tmp_path / "link", record())
    assert (tmp_path / "target").read_text() == ""


def _append_many(path: str, worker: int) -> None:
    many = tuple(
        GatewayRecord(name=f"w{worker}-{i:04d}", release="r", sync="Synced", health="Healthy")
        for i in range(400)
    )
    for _ in range(25):
        status_records.append(Path(path), record(AT, *many))


def test_appends_that_run_at_once_never_interleave(tmp_path: Path) -> None:
    path = tmp_path / "aws.jsonl"
    # Lines of about 30 kB, far above PIPE_BUF: one write each, with O_APPEND.
    workers = [
        multiprocessing.get_context("spawn").Process(target=_append_many, args=(str(path), w))
        for w in range(3)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    read = status_records.parse(path.read_text(encoding="ascii"), "aws.jsonl", "aws")
    assert sorted(r.gateways[0].name for r in read) == sorted(
        [f"w{w}-0000" for w in range(3) for _ in range(25)]
    )
    assert {len(r.gateways) for r in read} == {400}


def test_the_reader_sorts_by_time_and_names_each_bad_line() -> None:
    later = status_records.line(record(datetime(2026, 12, 7, tzinfo=UTC), AUDIT))
    earlier = status_records.line(record(AT, AUDIT))
    assert [r.recorded for r in status_records.parse(f"{later}\n{earlier}\n", "f", "aws")] == [
        AT,
        datetime(2026, 12, 7, tzinfo=UTC),
    ]
    assert status_records.parse("", "f") == []
    bad = [
        earlier,
        "not json",
        earlier.replace('"aws"', '"ibm"'),
        earlier.replace('"Synced"', '"Fine"').replace('"synced"', '"green"'),
        earlier.replace("2026-12-06T10:00:00+00:00", "2026-12-06T10:00:00"),
        earlier.replace('"release":"openshell-0.0.110",', '"address":"10.0.0.1",'),
        "",
        "[]",
    ]
    with pytest.raises(InvalidInputError) as raised:
        status_records.parse("\n".join(bad[:1] + bad[3:4]) + "\n", "records/aws.jsonl", "aws")
    assert [str(p) for p in raised.value.problems] == [
        "records/aws.jsonl:2: gateways.0.sync: expected one of Synced, OutOfSync, Missing, Unknown",
        "records/aws.jsonl:2: state: expected one of synced, out-of-sync, degraded, renewal-due",
    ]
    with pytest.raises(InvalidInputError) as raised:
        status_records.parse("\n".join(bad) + "\n", "records/aws.jsonl", "aws")
    assert [str(p) for p in raised.value.problems] == [
        "records/aws.jsonl:3: and 6 more line(s) that are not records: 3, 4, 5, 6, 7, 8",
        "records/aws.jsonl:2: not a JSON object (one record per line)",
    ]  # sorted by message, as every command's problems
    for index, problems in [
        (2, ["records/aws.jsonl:1: stack: expected the stack's name (aws)"]),
        (4, ["records/aws.jsonl:1: recorded: expected an ISO 8601 time with its UTC offset"]),
        (
            5,
            [
                "records/aws.jsonl:1: gateways.0.address: unknown key; expected one of name,"
                " release, sync, health",
                "records/aws.jsonl:1: gateways.0.release: missing (null when it runs no release)",
            ],
        ),
    ]:
        with pytest.raises(InvalidInputError) as raised:
            status_records.parse(bad[index], "records/aws.jsonl", "aws")
        assert [str(p) for p in raised.value.problems] == problems

"""The benchmark script's logic (not its timings): synthetic stack, floors, checks, report."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from tests.support import render_bench

bench = render_bench()


def _row(gateways: int, program: float, floor: float, typed: float, peak: float) -> Any:
    return bench.Row(
        gateways=gateways,
        resources=gateways * 42 + 8,
        resources_per_gateway=42.0,
        prepare_seconds=0.01,
        program_seconds=program,
        floor_seconds=floor,
        ratio=program / floor,
        typed_floor_seconds=typed,
        typed_ratio=program / typed,
        program_peak_mib=peak,
        floor_peak_mib=peak / 2,
        program_baseline_mib=100.0,
        program_runs=[program],
        floor_runs=[floor],
        typed_floor_runs=[typed],
    )


def test_checks_apply_the_issue_targets() -> None:
    rows = [_row(100, 5.0, 1.25, 2.5, 300.0), _row(500, 31.0, 6.2, 12.4, 1500.0)]

    results = bench.checks(rows)

    assert [(c.name, c.value, c.verdict) for c in results] == [
        ("ratio program/floor at N=500", 5.0, "FAIL"),
        ("time N=500 / N=100", 6.2, "FAIL"),
        ("peak memory N=500 / N=100", 5.0, "PASS"),
    ]


def test_checks_skip_sizes_that_were_not_measured() -> None:
    results = bench.checks([_row(10, 0.6, 0.4, 0.5, 150.0)])

    assert [c.verdict for c in results] == ["SKIP", "SKIP", "SKIP"]


def test_report_has_the_table_verdicts_and_the_typed_floor_line() -> None:
    rows = [_row(100, 5.0, 1.25, 2.5, 300.0), _row(500, 9.0, 6.0, 12.0, 1500.0)]

    text = bench.report(rows, bench.checks(rows), repeat=3)

    assert "| 500 |     21008 |        42.0 |     9.000 |   6.000 |  1.50 |" in text
    assert "PASS  ratio program/floor at N=500: 1.50 (target <= 1.5)" in text
    assert "INFO  typed floor / floor at N=500: 2.00" in text


def test_sizes_are_sorted_unique_and_positive() -> None:
    assert bench.parse_sizes("500,10,10") == [10, 500]
    with pytest.raises(argparse.ArgumentTypeError, match="sizes must be positive"):
        bench.parse_sizes("0,10")
    with pytest.raises(argparse.ArgumentTypeError, match="comma-separated integers"):
        bench.parse_sizes("ten")


def test_the_synthetic_stack_renders_every_gateway(tmp_path: Path) -> None:
    bench.write_stack(tmp_path, 4)

    sample = bench.child_program(tmp_path)

    assert sorted(p.stem for p in (tmp_path / "gateways").glob("*.yaml")) == [
        "tenant-0001",
        "tenant-0002",
        "tenant-0003",
        "tenant-0004",
    ]
    assert sample["gateways"] == 4
    # Everything outside the gateways is per cluster (providers, shared ClusterRoles).
    assert 0 < sample["resources"] - sample["gateway_resources"] < sample["gateway_resources"]


@pytest.mark.parametrize("kind", ["child_floor", "child_typed_floor"])
def test_each_floor_registers_exactly_the_count(kind: str) -> None:
    assert getattr(bench, kind)(25)["resources"] == 25

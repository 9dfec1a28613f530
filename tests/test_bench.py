"""The benchmark script's logic (not its timings): synthetic stack, floors, checks, report."""

from __future__ import annotations

import argparse
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from gatewayctl.cli import main as cli
from tests.support import parallel_bench, render_bench

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


# --- render --all and diff (bench/parallel_bench.py) ------------------------------------------


def _figures(**changes: Any) -> Any:
    figures = {
        "gateways": 100,
        "cores": 2,
        "serial_s": 30.0,
        "parallel_s": 20.0,
        "one_per_stack_s": 16.0,
        "head_render_s": 10.0,
        "diff_uncached_s": 14.0,
        "diff_cached_s": 11.0,
        "single_peaks_mib": [300.0, 300.0, 300.0],
        "parallel_tree_rss_mib": 950.0,
        "parallel_tree_pss_mib": 700.0,
        "parallel_largest_process_mib": 150.0,
        "one_per_stack_tree_pss_mib": 880.0,
    }
    return parallel_bench().Figures(**{**figures, **changes})


def test_parallel_verdicts_apply_the_issue_targets() -> None:
    verdicts = parallel_bench().verdicts(_figures())
    assert [(v.name, round(v.value, 3), v.passed) for v in verdicts] == [
        ("render --all speed-up, serial / parallel (default --jobs)", 1.5, False),
        ("diff with the base cached / one head render", 1.1, True),
        ("parallel peak (PSS of the process tree) / sum of single-stack peaks", 0.778, True),
    ]
    at_targets = _figures(parallel_s=18.75, diff_cached_s=11.5, parallel_tree_pss_mib=900.0)
    assert [v.passed for v in parallel_bench().verdicts(at_targets)] == [True, True, True]
    over = _figures(diff_cached_s=11.6, parallel_tree_pss_mib=900.1)
    assert [v.passed for v in parallel_bench().verdicts(over)][1:] == [False, False]


def test_parallel_report_prints_every_figure() -> None:
    text = parallel_bench().report(_figures())
    assert "| render --all --jobs 1 (serial) | 30.00 |" in text
    assert "| render --all (default: --jobs 2) | 20.00 |" in text
    assert "| render --all --jobs 3 (a worker per stack) | 16.00 |" in text
    assert "| diff, base render cached | 11.00 |" in text
    assert "RSS 950.0 MiB, PSS 700.0 MiB" in text
    assert "300.0 + 300.0 + 300.0 = 900.0 MiB" in text
    assert (
        "FAIL  render --all speed-up, serial / parallel (default --jobs): 1.50 (target >= 1.6)"
        in text
    )
    assert "INFO  render --all --jobs 3: speed-up 1.88" in text


def test_the_three_generated_stacks_are_valid_together(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parallel_bench().write_stacks(tmp_path, 3)
    assert cli.main(["--root", str(tmp_path), "validate", "--all", "--jobs", "1"]) == 0
    oks = [line for line in capsys.readouterr().out.splitlines() if ": ok (" in line]
    assert oks == [
        f"Pulumi.{stack}.yaml: ok (3 gateways, 2 clusters)"
        for stack in ("bench-a", "bench-b", "bench-c")
    ]


def test_the_diff_project_is_a_repository_with_one_change(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    parallel_bench().write_diff_project(repo, 2)
    status = subprocess.run(
        ["git", "-C", str(repo), "status", "--porcelain"], capture_output=True, text=True
    ).stdout
    assert status == " M gateways/bench/tenant-0001.yaml\n"
    assert (repo / "gatewayctl" / "__main__.py").is_file()


def test_the_memory_of_a_process_tree_is_read_from_proc() -> None:
    if not Path("/proc/self/smaps_rollup").is_file():
        pytest.skip("reads /proc/<pid>/smaps_rollup (Linux)")
    bench = parallel_bench()
    assert bench._tree(os.getpid())[0] == os.getpid()
    rss, pss = bench._memory_kib(os.getpid())
    assert 0 < pss <= rss
    assert bench._memory_kib(2**22 + 7) == (0, 0)  # no such process

"""The diff summary's releases section (``gatewayctl.diff.release_changes``): per gateway, release
A →
release B, from the two plans; and in the report, after a real promotion."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gatewayctl.deploy import promote
from gatewayctl.diff.compare import compare
from gatewayctl.diff.release_changes import ReleaseMove, release_moves, summary_lines
from gatewayctl.diff.report import build_report
from gatewayctl.diff.sides import Side
from gatewayctl.engine import render
from gatewayctl.resolve import preparation
from tests.builders import copy_project

CURRENT, NEXT = "openshell-0.0.109", "openshell-0.0.110"


def plan(*gateways: dict[str, Any]) -> dict[str, Any]:
    return {"stack": "s", "gateways": list(gateways), "resources": []}


def test_only_gateways_on_both_sides_whose_release_differs_are_listed() -> None:
    base = plan(
        {"name": "a", "release": "r1"},
        {"name": "b", "release": "r1"},
        {"name": "gone", "release": "r1"},
        {"name": "old"},  # rendered before releases existed
    )
    head = plan(
        {"name": "a", "release": "r2", "releasePinned": False},
        {"name": "b", "release": "r1"},
        {"name": "new", "release": "r2"},
        {"name": "old", "release": "r2", "releasePinned": True},
    )
    assert release_moves(base, head) == (
        ReleaseMove(gateway="a", before="r1", after="r2", pinned=False),
        ReleaseMove(gateway="old", before=None, after="r2", pinned=True),
    )
    assert release_moves(head, head) == ()
    assert release_moves({}, head) == ()
    assert release_moves({"gateways": "junk"}, head) == ()


def test_the_section_is_a_table_of_release_a_to_release_b() -> None:
    moves = (
        ReleaseMove(gateway="a", before="r1", after="r2", pinned=False),
        ReleaseMove(gateway="canary", before=None, after="r2", pinned=True),
        ReleaseMove(gateway="z", before="r1", after=None, pinned=False),
    )
    assert summary_lines(moves, rows=30) == [
        "**Releases:** 3 gateway(s) move",
        "",
        "| Gateway | Release |",
        "|---|---|",
        "| `a` | `r1` → `r2` |",
        "| `canary` | (none) → `r2` (pinned by the gateway) |",
        "| `z` | `r1` → (none) |",
        "",
    ]
    assert summary_lines(moves, rows=1)[-3:] == [
        "| `a` | `r1` → `r2` |",
        "| ... | 2 more gateway(s) |",
        "",
    ]
    assert summary_lines((), rows=30) == []


def test_the_report_of_a_promotion_shows_each_gateway_moving(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "p")
    before = render.execute(preparation.prepare(project, "ibm"))
    promote.write(project, promote.promote(project, NEXT, "ibm"))
    after = render.execute(preparation.prepare(project, "ibm"))

    diff = compare("ibm", Side(files=before.files), Side(files=after.files))
    report = build_report([diff], base_label="`main` (`0123456789ab`)", command="diff ibm")

    section = report[report.index("**Releases:**") : report.index("**Kubernetes objects:**")]
    assert section.splitlines() == [
        "**Releases:** 3 gateway(s) move",
        "",
        "| Gateway | Release |",
        "|---|---|",
        f"| `batch-jobs` | `{CURRENT}` → `{NEXT}` |",
        f"| `research` | `{CURRENT}` → `{NEXT}` |",
        f"| `team-a` | `{CURRENT}` → `{NEXT}` |",
        "",
    ]
    # The canary pinned the next release already: it neither moves nor changes.
    assert "`canary`" not in report
    assert report.index("**Gateways:**") < report.index("**Releases:**")

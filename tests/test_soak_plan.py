"""The promotion plan (``deploy/rollout.yaml``'s ``promotion``, ``gatewayctl.inputs.promotion``):
the order of environments and the soak; only its own key read; each problem with its line
through ``gatewayctl validate``."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from gatewayctl.errors import InvalidInputError
from gatewayctl.inputs import promotion
from tests.builders import copy_project
from tests.hostile_helpers import run_cli

DAY = timedelta(hours=24)


def test_the_plan_reads_only_its_key_and_names_each_problem_with_its_line(tmp_path: Path) -> None:
    root = copy_project(tmp_path / "p")
    assert promotion.read(root) is None
    (root / "deploy" / "rollout.yaml").write_text("stacks:\n  anything: [1]\n")
    assert promotion.read(root) is None  # no promotion key: no soak; `stacks` is not ours
    (root / "deploy" / "rollout.yaml").write_text(
        "stacks: {}\npromotion:\n  order: [local, aws, ibm]\n  soak: 1d12h\n"
    )
    plan = promotion.read(root)
    assert plan == promotion.Plan(
        order=("local", "aws", "ibm"),
        stacks=(("local",), ("aws",), ("ibm",)),
        soak=timedelta(hours=36),
    )
    assert (plan.previous("ibm"), plan.previous("local"), plan.previous("x")) == (
        ("aws", ("aws",)),
        None,
        None,
    )
    (root / "deploy" / "rollout.yaml").write_text(
        "# the plan\npromotion:\n  order:\n    - aws\n    - gcp-*\n    - a*\n"
        "  soak: 32d\n  after: x\n"
    )
    with pytest.raises(InvalidInputError):
        promotion.read(root)
    out = run_cli("--root", str(root), "validate", "local")
    assert out.code == 2
    assert out.err.splitlines() == [
        "error: deploy/rollout.yaml:8:3: promotion.after: unknown key; expected one of order, soak",
        "error: deploy/rollout.yaml:5:7: promotion.order.1: matches no stack; the stacks here"
        " are aws, ibm, local",
        "error: deploy/rollout.yaml:6:7: promotion.order.2: stack aws is in entry 0 already",
        "error: deploy/rollout.yaml:7:9: promotion.soak: expected a duration such as 24h, 1d12h"
        " or 90m, at most 31d",
        "4 problem(s); nothing written",
    ]


def test_the_committed_plan_validates() -> None:
    plan = promotion.read(Path(__file__).resolve().parent.parent)
    assert plan is not None
    assert (plan.order, plan.soak) == (("ibm", "aws"), DAY)


@pytest.mark.parametrize(
    ("text", "problems"),
    [
        ("promotion: null\n", [("promotion", "expected a mapping: order, soak")]),
        (
            "promotion:\n  order: [aws]\n  soak: 1h\n",
            [("promotion.order", "expected a list of two or more stacks or patterns (aws-*)")],
        ),
        (
            "promotion:\n  order: [aws, 7]\n",
            [
                ("promotion.order.1", "is no stack name or pattern (a-z, 0-9, -, *)"),
                (
                    "promotion.soak",
                    "expected a duration such as 24h, 1d12h or 90m, at most 31d",
                ),
            ],
        ),
    ],
)
def test_a_plan_that_cannot_be_read_is_refused(
    tmp_path: Path, text: str, problems: list[tuple[str, str]]
) -> None:
    root = copy_project(tmp_path / "p")
    (root / "deploy" / "rollout.yaml").write_text(text)
    with pytest.raises(InvalidInputError) as raised:
        promotion.read(root)
    assert [(p.field, p.message) for p in raised.value.problems] == problems

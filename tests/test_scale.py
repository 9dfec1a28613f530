"""Issue 23: a stack's size is limited by memory alone. Rendering many gateways keeps the stack
depth and each gateway's cost constant: no chain (an Output, an invoke, a nested await) grows
from one gateway to the next."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from types import FrameType

from components import tokens
from gatewayctl.engine import render
from gatewayctl.engine.offline import RecordedResource
from gatewayctl.resolve import preparation
from tests.scale_builders import STACK, research_stack


def _frames() -> int:
    frame: FrameType | None = sys._getframe()
    depth = 0
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    return depth


def _render(root: Path) -> tuple[render.Rendered, int]:
    """The stack's render and the deepest Python stack any of its registrations ran on."""
    deepest = [0]

    def on_register(_: RecordedResource) -> None:
        deepest[0] = max(deepest[0], _frames())

    return render.execute(preparation.prepare(root, STACK), on_register), deepest[0]


def _per_gateway(rendered: render.Rendered) -> Counter[int]:
    """How many gateways have each resource count (the component included)."""
    return Counter(summary.resources for summary in rendered.gateways)


def test_the_stack_depth_of_a_render_does_not_grow_with_its_gateways(tmp_path: Path) -> None:
    # Before issue 23 every lookup of a principal nested one more pump of the event loop
    # (the offline engine's invoke): 40 gateways ran about 400 frames deeper than 2.
    small, small_depth = _render(research_stack(tmp_path / "small", 2))
    large, large_depth = _render(research_stack(tmp_path / "large", 40))
    assert large_depth == small_depth
    (per_gateway,) = _per_gateway(small)
    assert _per_gateway(large) == Counter({per_gateway: 40})


def test_a_thousand_gateways_of_the_richest_sample_render_in_one_stack(tmp_path: Path) -> None:
    assert sys.getrecursionlimit() == 1000  # Python's default: the render does not raise it
    small, small_depth = _render(research_stack(tmp_path / "small", 1))
    rendered, depth = _render(research_stack(tmp_path / "large", 1000))
    assert sys.getrecursionlimit() == 1000
    assert depth == small_depth
    (per_gateway,) = _per_gateway(small)
    assert _per_gateway(rendered) == Counter({per_gateway: 1000})
    assert [g.name for g in rendered.gateways] == [f"research-{i:04d}" for i in range(1, 1001)]
    # Every gateway's lookups of the shared principals were answered and bound.
    roles = Counter(
        r.type
        for r in rendered.recording.resources.values()
        if r.type in {"keycloak:index/groupRoles:GroupRoles", "keycloak:index/userRoles:UserRoles"}
    )
    assert roles == {
        "keycloak:index/groupRoles:GroupRoles": 2000,
        "keycloak:index/userRoles:UserRoles": 1000,
    }
    gateways = Counter(
        rendered.recording.ancestor_name(r, tokens.GATEWAY)
        for r in rendered.recording.resources.values()
    )
    assert len(gateways) == 1001  # the 1,000 gateways and the stack-level resources (None)

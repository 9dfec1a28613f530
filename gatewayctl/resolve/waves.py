"""A stack's rollout waves, from its plan (``deploy/rollout.yaml``,
:mod:`gatewayctl.inputs.rollout`) and its declarations.

Wave 0 holds the stack's own resources (clusters, their providers: what several gateways
share); waves 1.. follow the plan in order, each gateway in the first wave that chooses it, a
wave choosing more than its cap cut into waves of at most that many (in name order); the
gateways no wave chooses make the last waves (``rest``), cut by the stack's cap. A wave that
chooses nobody is left out. Without a plan: wave 0, then every gateway in one wave.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from gatewayctl.errors import InvalidInputError, Problem
from gatewayctl.inputs.rollout import DEFAULT_DEADLINE, SETTINGS, StackPlan, WaveRule
from gatewayctl.resolve.resolved import LoadedStack, ResolvedGateway

SHARED = "shared"
REST = "rest"


@dataclass(frozen=True, kw_only=True)
class Wave:
    number: int
    """0: the stack's shared resources; 1..: gateways, the canary first."""
    name: str
    gateways: tuple[str, ...]
    deadline: timedelta

    @property
    def shared(self) -> bool:
        return self.number == 0

    def label(self) -> str:
        return f"wave {self.number} ({self.name})"


def _cut(name: str, gateways: Sequence[str], cap: int | None) -> list[tuple[str, tuple[str, ...]]]:
    ordered = sorted(gateways)
    if not ordered:
        return []
    if cap is None or len(ordered) <= cap:
        return [(name, tuple(ordered))]
    parts = [tuple(ordered[i : i + cap]) for i in range(0, len(ordered), cap)]
    return [(f"{name} {i}/{len(parts)}", part) for i, part in enumerate(parts, 1)]


def _unknown(rule: WaveRule, loaded: LoadedStack) -> list[Problem]:
    """Names the stack does not have: typos (only where the plan names this stack itself; a
    pattern's entry covers shards that each have their own gateways)."""
    names = {g.name for g in loaded.gateways}
    return [
        Problem(SETTINGS, f"{rule.field}.gateways.{i}", f"stack {loaded.name} has no gateway {g!r}")
        for i, g in enumerate(rule.gateways)
        if g not in names
    ] + [
        Problem(SETTINGS, f"{rule.field}.clusters.{i}", f"stack {loaded.name} has no cluster {c!r}")
        for i, c in enumerate(rule.clusters)
        if c not in loaded.config.clusters
    ]


def plan(loaded: LoadedStack, stack_plan: StackPlan | None) -> tuple[Wave, ...]:
    """The stack's waves in order; InvalidInputError for a gateway or cluster the plan names
    that the stack (named by the plan's own entry, not a pattern) does not have."""
    deadline = stack_plan.health_deadline if stack_plan else DEFAULT_DEADLINE
    waves = [Wave(number=0, name=SHARED, gateways=(), deadline=deadline)]
    left: dict[str, ResolvedGateway] = {g.name: g for g in loaded.gateways}
    parts: list[tuple[str, tuple[str, ...]]] = []
    if stack_plan is not None:
        if stack_plan.field == f"stacks.{loaded.name}":
            problems = [p for rule in stack_plan.waves for p in _unknown(rule, loaded)]
            if problems:
                raise InvalidInputError(problems)
        for rule in stack_plan.waves:
            chosen = [name for name, g in left.items() if rule.chooses(name, g.cluster, g.labels)]
            for name in chosen:
                del left[name]
            parts += _cut(rule.name, chosen, rule.max_gateways)
    parts += _cut(REST, list(left), stack_plan.max_gateways if stack_plan else None)
    waves += [
        Wave(number=i, name=name, gateways=gateways, deadline=deadline)
        for i, (name, gateways) in enumerate(parts, 1)
    ]
    return tuple(waves)


def wave_of(waves: Sequence[Wave], gateway: str | None) -> Wave | None:
    """The wave holding ``gateway`` (None: the shared wave); None for a gateway no wave holds
    (one the stack no longer declares)."""
    if gateway is None:
        return waves[0]
    return next((w for w in waves if gateway in w.gateways), None)


def lines(waves: Sequence[Wave], touched: set[str | None] | None = None) -> list[str]:
    """One line per wave and its gateways; ``touched``: the gateways a change reaches (None in
    it: the stack's shared resources), the others left out and a wave without any called
    unchanged."""
    shown = []
    for wave in waves:
        if wave.shared:
            if touched is None or None in touched:
                shown.append(f"{wave.label()}: the stack's shared resources, first")
            continue
        names = [g for g in wave.gateways if touched is None or g in touched]
        what = ", ".join(f"`{n}`" for n in names) if names else "unchanged"
        shown.append(f"{wave.label()}: {what}")
    return shown

"""The rollout plan: how a change reaches a stack's gateways (``deploy/rollout.yaml``, its
``stacks`` key; ``promotion`` is :mod:`gatewayctl.inputs.promotion`'s).

Per stack (or pattern such as ``aws-*`` for its shards), waves in order, each choosing gateways
by name, cluster or label (every selector given must hold), the first being the canary; a
wave that chooses more than its ``maxGateways`` is cut into waves of at most that many (in
name order), and the gateways no wave chooses go last, cut by the stack's own ``maxGateways``.
The stack's shared resources go first, in a wave of their own (:mod:`gatewayctl.resolve.waves`).
Each wave must be Healthy and synced within ``healthDeadline`` (default 10m) of its start::

    stacks:
      aws:
        healthDeadline: 15m
        maxGateways: 2
        waves:
          - name: canary
            gateways: [payments]
          - name: us-east
            clusters: [rosa-us-east-1]
          - name: gold
            labels: {tier: gold}
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from gatewayctl.errors import InvalidInputError, Problem, printable
from gatewayctl.inputs.stackfile import all_stacks, per_stack, unknown_keys
from gatewayctl.inputs.windows import duration
from gatewayctl.inputs.yamlfile import read_yaml_mapping

SETTINGS = "deploy/rollout.yaml"
TOP_KEYS = ("stacks", "promotion")
STACK_KEYS = ("healthDeadline", "maxGateways", "waves")
WAVE_KEYS = ("name", "gateways", "clusters", "labels", "maxGateways")
SELECTORS = ("gateways", "clusters", "labels")
DEFAULT_DEADLINE = timedelta(minutes=10)
_NAME = re.compile(r"[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?")


@dataclass(frozen=True, kw_only=True)
class WaveRule:
    name: str
    field: str
    """Where it is written (``stacks.aws.waves.0``), for problems."""
    gateways: tuple[str, ...] = ()
    clusters: tuple[str, ...] = ()
    labels: Mapping[str, str] = dataclasses.field(default_factory=dict)
    max_gateways: int | None = None

    def chooses(self, name: str, cluster: str, labels: Mapping[str, str]) -> bool:
        return (
            (not self.gateways or name in self.gateways)
            and (not self.clusters or cluster in self.clusters)
            and all(labels.get(k) == v for k, v in self.labels.items())
        )


@dataclass(frozen=True, kw_only=True)
class StackPlan:
    field: str
    waves: tuple[WaveRule, ...]
    health_deadline: timedelta = DEFAULT_DEADLINE
    max_gateways: int | None = None
    """The cap of the waves the gateways no wave chooses make (None: one wave)."""


def read(root: Path) -> dict[str, StackPlan]:
    """Each stack's plan (a stack the file does not name has none); InvalidInputError naming
    the file and field of every problem."""
    path = root / SETTINGS
    if not path.exists() and not path.is_symlink():
        return {}
    document = read_yaml_mapping(path, SETTINGS)
    problems = [
        Problem(
            SETTINGS, str(k), f"unknown key; expected one of {', '.join(TOP_KEYS)}", at_key=True
        )
        for k in document
        if k not in TOP_KEYS
    ]
    entries = document.get("stacks", {})
    if not isinstance(entries, dict):
        problems.append(Problem(SETTINGS, "stacks", "expected a mapping of stack to its plan"))
        raise InvalidInputError(problems)
    found = per_stack(SETTINGS, entries, all_stacks(root), _stack, "a plan", problems)
    if problems:
        raise InvalidInputError(problems)
    return found


def _cap(value: Any, where: str, problems: list[Problem]) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 10_000:
        problems.append(Problem(SETTINGS, where, "expected a whole number from 1 to 10000"))
        return None
    return value


def _stack(entry: Any, where: str, problems: list[Problem]) -> StackPlan | None:
    if not isinstance(entry, dict):
        problems.append(Problem(SETTINGS, where, "expected a mapping with waves"))
        return None
    before = len(problems)
    problems += unknown_keys(SETTINGS, entry, where, STACK_KEYS)
    deadline = DEFAULT_DEADLINE
    if "healthDeadline" in entry:
        parsed = duration(entry["healthDeadline"])
        if parsed is None:
            problems.append(
                Problem(
                    SETTINGS,
                    f"{where}.healthDeadline",
                    "expected a duration such as 10m, 1h30m (at most 31d)",
                )
            )
        deadline = parsed or deadline
    cap = _cap(entry.get("maxGateways"), f"{where}.maxGateways", problems)
    items = entry.get("waves")
    if not isinstance(items, list) or not items:
        problems.append(
            Problem(SETTINGS, f"{where}.waves", "expected a list of waves, the canary first")
        )
        return None
    waves = [w for i, x in enumerate(items) if (w := _wave(x, f"{where}.waves.{i}", problems))]
    seen: set[str] = set()
    for wave in waves:
        if wave.name not in seen:
            seen.add(wave.name)
        else:
            problems.append(
                Problem(SETTINGS, f"{wave.field}.name", f"wave {wave.name!r} is named twice")
            )
    if len(problems) > before:
        return None
    return StackPlan(field=where, waves=tuple(waves), health_deadline=deadline, max_gateways=cap)


def _strings(value: Any, where: str, problems: list[Problem]) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        problems.append(Problem(SETTINGS, where, "expected a list of names"))
        return ()
    return tuple(value)


def _wave(item: Any, where: str, problems: list[Problem]) -> WaveRule | None:
    if not isinstance(item, dict):
        problems.append(
            Problem(SETTINGS, where, "expected a mapping: name, gateways, clusters, labels")
        )
        return None
    before = len(problems)
    problems += unknown_keys(SETTINGS, item, where, WAVE_KEYS)
    name = item.get("name")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        shown = printable(str(name)) if name is not None else "nothing"
        problems.append(
            Problem(SETTINGS, f"{where}.name", f"{shown!r} is no wave name (a DNS label: canary)")
        )
    if not any(k in item for k in SELECTORS):
        problems.append(
            Problem(SETTINGS, where, "choose its gateways: gateways, clusters or labels")
        )
    gateways, clusters = (
        _strings(item[k], f"{where}.{k}", problems) if k in item else () for k in SELECTORS[:2]
    )
    labels = item.get("labels", {})
    if not isinstance(labels, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in labels.items()
    ):
        problems.append(Problem(SETTINGS, f"{where}.labels", "expected a mapping: label: value"))
        labels = {}
    cap = _cap(item.get("maxGateways"), f"{where}.maxGateways", problems)
    if len(problems) > before:
        return None
    assert isinstance(name, str)
    return WaveRule(
        name=name,
        field=where,
        gateways=gateways,
        clusters=clusters,
        labels=dict(labels),
        max_gateways=cap,
    )

"""The promotion plan: the order of environments a release goes through and how long it must
have been Healthy in one before ``gatewayctl promote`` binds it in the next (the soak,
docs/rollouts.md, "Soak between environments").

It is the ``promotion:`` key of ``deploy/rollout.yaml``; this module reads that key alone
(the file's other keys belong to the rollout's waves, ``gatewayctl.inputs.rollout``)::

    promotion:
      order: [aws, ibm]     # stacks or patterns (aws-* for an environment's shards), earliest first
      soak: 24h             # as a change window's duration: 63h, 1d12h, 90m; at most 31d

No file, or no ``promotion:`` key, means no soak: every promotion goes through.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from gatewayctl.errors import InvalidInputError, Problem
from gatewayctl.inputs import rollout
from gatewayctl.inputs.stackfile import all_stacks, stacks_matching, unknown_keys
from gatewayctl.inputs.windows import LONGEST, duration
from gatewayctl.inputs.yamlfile import read_yaml_mapping

SETTINGS = rollout.SETTINGS
KEY = "promotion"
KEYS = ("order", "soak")


@dataclass(frozen=True, kw_only=True)
class Plan:
    order: tuple[str, ...]
    """The entries as written (a stack, or a pattern), earliest first."""
    stacks: tuple[tuple[str, ...], ...]
    """The stacks each entry takes, sorted."""
    soak: timedelta

    def previous(self, stack: str) -> tuple[str, tuple[str, ...]] | None:
        """The entry before the one that takes ``stack`` and its stacks; None when ``stack``
        is in the first entry or in none (no soak asked)."""
        for index, taken in enumerate(self.stacks):
            if stack in taken:
                return (self.order[index - 1], self.stacks[index - 1]) if index else None
        return None


def read(root: Path) -> Plan | None:
    """The plan, or None (no file, or no ``promotion:`` key); InvalidInputError naming the
    file and field of every problem (its line is found from the field)."""
    path = root / SETTINGS
    if not path.exists() and not path.is_symlink():
        return None
    document = read_yaml_mapping(path, SETTINGS)
    if KEY not in document:
        return None
    section = document[KEY]
    if not isinstance(section, dict):
        raise InvalidInputError([Problem(SETTINGS, KEY, "expected a mapping: order, soak")])
    problems = unknown_keys(SETTINGS, section, KEY, KEYS)
    order, stacks = _order(section.get("order"), root, problems)
    soak = duration(section.get("soak"))
    if soak is None:
        problems.append(
            Problem(
                SETTINGS,
                f"{KEY}.soak",
                f"expected a duration such as 24h, 1d12h or 90m, at most {LONGEST.days}d",
            )
        )
    if problems or soak is None:
        raise InvalidInputError(problems)
    return Plan(order=order, stacks=stacks, soak=soak)


def _order(
    entries: Any, root: Path, problems: list[Problem]
) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    field = f"{KEY}.order"
    if not isinstance(entries, list) or len(entries) < 2:
        problems.append(
            Problem(SETTINGS, field, "expected a list of two or more stacks or patterns (aws-*)")
        )
        return (), ()
    known = all_stacks(root)
    taken: dict[str, int] = {}
    stacks = []
    for index, entry in enumerate(entries):
        matched, why = stacks_matching(entry, known)
        if why is not None:
            problems.append(Problem(SETTINGS, f"{field}.{index}", why))
        for stack in matched:
            if stack in taken:
                problems.append(
                    Problem(
                        SETTINGS,
                        f"{field}.{index}",
                        f"stack {stack} is in entry {taken[stack]} already",
                    )
                )
            taken.setdefault(stack, index)
        stacks.append(tuple(sorted(matched)))
    return tuple(str(e) for e in entries), tuple(stacks)

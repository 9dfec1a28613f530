"""Which stacks a change touches, from the offline diffs recorded for it: the pull-request
workflow previews, and the deploy workflow updates, only those (issue 39 point 4: the work of
a change proportional to the change, with one stack per shard).

A record is what ``gatewayctl diff --format json`` printed, for one stack or ``--all``, in a
file ``*.json`` of one directory (the pull request's diff jobs each upload theirs). A stack
changes when its offline render changes: its ``changed`` is true. A stack with no record is a
problem, never "unchanged": its diff did not complete, and skipping its preview or its ``up``
would hide what the change does to it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from gatewayctl.errors import InvalidInputError, Problem
from gatewayctl.reading import EXISTING_LIMIT, read_text

RECORD_GLOB = "*.json"


def recorded(directory: Path) -> dict[str, bool]:
    """Whether each stack recorded in ``directory`` changes, by stack. InvalidInputError for
    a directory that is not one, a record that is not the diff's JSON, or a stack recorded
    twice with different results."""
    where = str(directory)
    if not directory.is_dir():
        raise InvalidInputError([Problem(where, "", "not a directory of offline diff records")])
    found: dict[str, bool] = {}
    problems: list[Problem] = []
    for path in sorted(directory.glob(RECORD_GLOB)):
        display = str(path)
        try:
            document = json.loads(read_text(path, EXISTING_LIMIT))
        except (OSError, ValueError) as error:
            problems.append(Problem(display, "", f"not the JSON of `gatewayctl diff`: {error}"))
            continue
        stacks = document.get("stacks") if isinstance(document, dict) else None
        if not isinstance(stacks, list):
            problems.append(Problem(display, "stacks", "missing: not `gatewayctl diff` JSON"))
            continue
        for index, entry in enumerate(stacks):
            name = entry.get("stack") if isinstance(entry, dict) else None
            changed = entry.get("changed") if isinstance(entry, dict) else None
            if not isinstance(name, str) or not isinstance(changed, bool):
                problems.append(
                    Problem(display, f"stacks[{index}]", "expected a stack and its changed flag")
                )
            elif found.setdefault(name, changed) != changed:
                problems.append(
                    Problem(display, f"stacks[{index}]", f"stack {name!r} recorded twice, apart")
                )
    if problems:
        raise InvalidInputError(problems)
    return found


def changed_stacks(directory: Path, stacks: Iterable[str]) -> list[str]:
    """Those of ``stacks`` (in their order) whose recorded offline diff changes; a stack
    without a record is an InvalidInputError naming it."""
    records = recorded(directory)
    wanted = list(stacks)
    missing = [stack for stack in wanted if stack not in records]
    if missing:
        raise InvalidInputError(
            Problem(
                str(directory),
                "",
                f"no offline diff recorded for stack {stack!r}: its diff did not complete",
            )
            for stack in missing
        )
    return [stack for stack in wanted if records[stack]]

"""Shared inventories: several stacks reading one declarations directory (scale-out).

A large fleet does not fit one stack (previews slow down past about a thousand resources and a
gateway is about forty), so stacks split it: each selects, from a shared directory, the
gateways on its clusters whose labels match its ``selector``. Every declaration must be taken
by exactly one stack of its inventory; this module checks that across all stacks.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from stacks.errors import InvalidInputError, Problem
from stacks.loader import load_declarations, parse_stack_config, read_stack_config, selects
from stacks.models import StackConfig


def all_stacks(root: Path) -> list[str]:
    """Every stack with a ``Pulumi.<stack>.yaml`` in the project root, sorted."""
    return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in root.glob("Pulumi.*.yaml"))


def _configs(root: Path) -> dict[str, StackConfig]:
    configs = {}
    for stack in all_stacks(root):
        try:
            display, raw = read_stack_config(root, stack)
            configs[stack] = parse_stack_config(display, raw)
        except InvalidInputError:
            continue  # reported when that stack itself is validated
    return configs


def coverage_problems(root: Path, stacks: Iterable[str]) -> list[Problem]:
    """Declarations of a shared inventory taken by no stack, or by more than one.

    Only inventories read by one of ``stacks`` and by a stack with a selector are checked; a
    stack without a selector takes every declaration of its directory.
    """
    configs = _configs(root)
    groups: dict[str, list[str]] = {}
    for stack, config in configs.items():
        groups.setdefault(config.declarations_dir, []).append(stack)
    wanted = set(stacks)
    problems: list[Problem] = []
    for directory, members in sorted(groups.items()):
        if not wanted & set(members) or all(configs[m].selector is None for m in members):
            continue
        declarations, _ = load_declarations(root, directory, None)  # parse problems: per stack
        for source, declaration in declarations:
            takers = [
                m
                for m in members
                if configs[m].selector is None or selects(configs[m], declaration)
            ]
            if len(takers) == 1:
                continue
            message = (
                f"taken by no stack of the inventory {directory} (stacks: {', '.join(members)})"
                if not takers
                else f"taken by stacks {' and '.join(takers)}; a gateway belongs to exactly one"
            )
            problems.append(Problem(source, "metadata.labels", message))
    return problems

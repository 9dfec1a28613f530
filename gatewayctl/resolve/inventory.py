"""Rules across the stacks of a repository: shared inventories.

A large fleet does not fit one stack (previews slow down past about a thousand resources and a
gateway is about forty), so stacks split it: each selects, from a shared directory, the
gateways on its clusters whose labels match its ``selector``. Every declaration must be taken
by exactly one stack of its inventory; this module checks that across all stacks.

What stacks share besides declarations (clusters, database servers) is checked by
:mod:`gatewayctl.resolve.sharing`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from gatewayctl.errors import InvalidInputError, Problem
from gatewayctl.inputs.clusters import StackConfig
from gatewayctl.inputs.declarations import load_declarations, real_path
from gatewayctl.inputs.stackfile import (
    all_stacks,
    parse_stack_config,
    read_stack_config,
    stack_file,
)
from gatewayctl.resolve.resolved import LoadedStack
from gatewayctl.resolve.sharing import shared_problems
from gatewayctl.resolve.stack import selects


def _configs(root: Path) -> dict[str, StackConfig]:
    configs = {}
    for stack in all_stacks(root):
        try:
            display, raw = read_stack_config(root, stack)
            configs[stack] = parse_stack_config(display, raw)
        except InvalidInputError:
            continue  # reported when that stack itself is validated
    return configs


def _sharing_problems(configs: dict[str, StackConfig], members: list[str]) -> list[Problem]:
    """Stacks without a selector that share their declarations directory with another stack.

    Such a stack takes every declaration of the directory, so each one it shares is owned twice.
    """
    problems = []
    for stack in members:
        if configs[stack].selector is not None:
            continue
        others = [stack_file(m) for m in members if m != stack]
        read_by = " and ".join(filter(None, [", ".join(others[:-1]), others[-1]]))
        message = (
            f"{configs[stack].declarations_dir!r} is also read by {read_by}; stacks sharing"
            " declarations need a selector each (a shared inventory)"
        )
        problems.append(Problem(stack_file(stack), "declarationsDir", message))
    return problems


def coverage_problems(
    root: Path, stacks: Iterable[str], known: Mapping[str, LoadedStack] | None = None
) -> list[Problem]:
    """Every problem across stacks that concerns ``stacks``: the coverage of the shared
    inventories they read (``inventory_problems``) and what they share with every other stack
    of the repository (``shared_problems``). ``known``: stacks already loaded, by name."""
    wanted = list(stacks)
    return sorted(inventory_problems(root, wanted) + shared_problems(root, wanted, known))


def inventory_problems(root: Path, stacks: Iterable[str]) -> list[Problem]:
    """Declarations of a shared inventory taken by no stack, or by more than one.

    Only inventories read by one of ``stacks`` are checked. Stacks reading one directory
    (compared by resolved path) each need a selector: a stack without one takes every
    declaration of its directory, which is reported on its config file. When some stacks of
    the directory have a selector, each declaration is also checked to be taken by exactly one.
    """
    configs = _configs(root)
    groups: dict[Path, list[str]] = {}
    for stack, config in configs.items():
        groups.setdefault(real_path(root, config.declarations_dir), []).append(stack)
    wanted = set(stacks)
    problems: list[Problem] = []
    for members in groups.values():
        if not wanted & set(members):
            continue
        if len(members) > 1:
            problems += _sharing_problems(configs, members)
        if all(configs[m].selector is None for m in members):
            continue
        directory = configs[members[0]].declarations_dir
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
    return sorted(problems)

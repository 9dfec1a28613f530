"""Shared inventories: several stacks reading one declarations directory (scale-out).

A large fleet does not fit one stack (previews slow down past about a thousand resources and a
gateway is about forty), so stacks split it: each selects, from a shared directory, the
gateways on its clusters whose labels match its ``selector``. Every declaration must be taken
by exactly one stack of its inventory; this module checks that across all stacks.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from components import naming
from stacks.errors import InvalidInputError, Problem
from stacks.loader import load_declarations, parse_stack_config, read_stack_config, selects
from stacks.models import StackConfig

STACK_NAME_RULE = "a DNS-1123 label (lowercase a-z, 0-9, inner '-', at most 63)"


def stack_name_problems(stack: str) -> list[Problem]:
    """A stack name is a Kubernetes-style name: it names files, directories and objects."""
    if naming.is_dns1123_label(stack):
        return []
    message = f"stack name {stack!r} is not {STACK_NAME_RULE}"
    return [Problem(f"Pulumi.{stack}.yaml", "", message)]


def _stack_files(root: Path) -> list[str]:
    return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in root.glob("Pulumi.*.yaml"))


def all_stacks(root: Path) -> list[str]:
    """Every stack with a ``Pulumi.<stack>.yaml`` in the project root, sorted; only valid
    names (the others are :func:`stack_file_problems`)."""
    return [stack for stack in _stack_files(root) if naming.is_dns1123_label(stack)]


def stack_file_problems(root: Path) -> list[Problem]:
    """``Pulumi.<name>.yaml`` files whose name is no valid stack name (``Pulumi..yaml``)."""
    return [problem for stack in _stack_files(root) for problem in stack_name_problems(stack)]


def requested_stacks(root: Path, stack: str | None) -> list[str]:
    """The one ``stack`` named, or every stack when None; InvalidInputError when a name is
    not a stack here or, for every stack, when a stack file's name is no stack name."""
    known = all_stacks(root)
    problems = stack_name_problems(stack) if stack is not None else stack_file_problems(root)
    if not known and not problems:
        message = "no Pulumi.<stack>.yaml here; is --root the project?"
        problems = [Problem(str(root), "", message)]
    elif stack is not None and not problems and stack not in known:
        message = f"no such stack; the stacks here are {', '.join(known)}"
        problems = [Problem(f"Pulumi.{stack}.yaml", "", message)]
    if problems:
        raise InvalidInputError(problems)
    return known if stack is None else [stack]


def _configs(root: Path) -> dict[str, StackConfig]:
    configs = {}
    for stack in all_stacks(root):
        try:
            display, raw = read_stack_config(root, stack)
            configs[stack] = parse_stack_config(display, raw)
        except InvalidInputError:
            continue  # reported when that stack itself is validated
    return configs


def _resolved(root: Path, directory: str) -> Path:
    """Where a declarations directory really is: two spellings or a symlink are one inventory."""
    try:
        return (root / directory).resolve()
    except (OSError, RuntimeError):  # a symlink loop: compare as written
        return root / directory


def _sharing_problems(configs: dict[str, StackConfig], members: list[str]) -> list[Problem]:
    """Stacks without a selector that share their declarations directory with another stack.

    Such a stack takes every declaration of the directory, so each one it shares is owned twice.
    """
    problems = []
    for stack in members:
        if configs[stack].selector is not None:
            continue
        others = [f"Pulumi.{m}.yaml" for m in members if m != stack]
        read_by = " and ".join(filter(None, [", ".join(others[:-1]), others[-1]]))
        message = (
            f"{configs[stack].declarations_dir!r} is also read by {read_by}; stacks sharing"
            " declarations need a selector each (a shared inventory)"
        )
        problems.append(Problem(f"Pulumi.{stack}.yaml", "declarationsDir", message))
    return problems


def coverage_problems(root: Path, stacks: Iterable[str]) -> list[Problem]:
    """Declarations of a shared inventory taken by no stack, or by more than one.

    Only inventories read by one of ``stacks`` are checked. Stacks reading one directory
    (compared by resolved path) each need a selector: a stack without one takes every
    declaration of its directory, which is reported on its config file. When some stacks of
    the directory have a selector, each declaration is also checked to be taken by exactly one.
    """
    configs = _configs(root)
    groups: dict[Path, list[str]] = {}
    for stack, config in configs.items():
        groups.setdefault(_resolved(root, config.declarations_dir), []).append(stack)
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

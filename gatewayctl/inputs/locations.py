"""Where a problem is: the line and column of its field in its file (issue 25 item 4).

A problem names its file and its field as a dotted path (``spec.exposure.host``,
``hypershell-gateways:clusters.east.baseDomain``); :func:`locate` finds that path in the
file's YAML nodes, once the problems are known and before they are printed, so every rule
(the models', the rules across gateways and stacks) gets a place without carrying the file's
nodes around. The YAML reader's own problems already carry theirs.

The place is the value when it is a scalar or a flow collection written after its key, else
the key (a block mapping or list starts on the next line); the key for a problem of the key
itself (``Problem.at_key``: an unknown field). A field the file does not write (a default, a
missing field) is placed at its nearest parent that it does write; a problem no written key
leads to keeps no place. Only regular ``*.yaml``/``*.yml`` files inside the project are read,
with the strict reader's limits; nothing of them is quoted.
"""

from __future__ import annotations

import dataclasses
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from yaml.error import Mark
from yaml.nodes import CollectionNode, MappingNode, Node, ScalarNode, SequenceNode

from gatewayctl.errors import Problem
from gatewayctl.inputs.environment import KEY as ENVIRONMENT_KEY
from gatewayctl.inputs.environment import environment_file
from gatewayctl.inputs.stackfile import PROJECT
from gatewayctl.inputs.yamlfile import MAX_FILE_BYTES, compose_yaml

_SUFFIXES = (".yaml", ".yml")
_CONFIG = "config"
"""The stack file's top-level key above the config keys its problems name."""
_MERGE = "<<"


def locate(problems: Iterable[Problem], root: Path) -> list[Problem]:
    """``problems`` with the line and column of each field in its file, where it is found;
    each file is read once, and each of its mappings indexed once (:class:`Keys`), so that
    locating stays linear in the problems of one mapping (issue 42 item 15)."""
    trees: dict[str, tuple[Node, Keys] | None] = {}
    located = []
    for problem in problems:
        if problem.line is None and problem.field:
            if problem.path not in trees:
                tree = _tree(root, problem.path)
                trees[problem.path] = None if tree is None else (tree, Keys())
            read = trees[problem.path]
            mark = None
            if read is not None:
                field = problem.located_as or problem.field
                mark = find(read[0], field, at_key=problem.at_key, keys=read[1])
                if mark is None:
                    problem, mark = _in_environment(root, problem, read, trees)
            if mark is not None:
                problem = dataclasses.replace(problem, line=mark.line + 1, column=mark.column + 1)
        located.append(problem)
    return located


def _in_environment(
    root: Path,
    problem: Problem,
    read: tuple[Node, Keys],
    trees: dict[str, tuple[Node, Keys] | None],
) -> tuple[Problem, Mark | None]:
    """A stack file's problem of a key the environment it names holds (``gatewayctl.inputs.
    environment``): the problem moved to the environment's file, with its place there."""
    name = _config_value(read[0], ENVIRONMENT_KEY, read[1])
    if name is None:
        return problem, None
    path = environment_file(name)
    if path not in trees:
        tree = _tree(root, path)
        trees[path] = None if tree is None else (tree, Keys())
    env = trees[path]
    field = (problem.located_as or problem.field).removeprefix(f"{PROJECT}:")
    if env is None or _walk(env[0], field, problem.at_key, env[1]) is None:
        return problem, None
    mark = find(env[0], field, at_key=problem.at_key, keys=env[1])
    moved = dataclasses.replace(
        problem, path=path, field=problem.field.removeprefix(f"{PROJECT}:"), located_as=""
    )
    return moved, mark


def _config_value(tree: Node, key: str, keys: Keys) -> str | None:
    """The plain string a stack file's ``config.<project>:<key>`` holds, if any."""
    node: Node = tree
    for part in (_CONFIG, f"{PROJECT}:{key}"):
        if not isinstance(node, MappingNode):
            return None
        pair = keys.of(node)[0].get(part)
        if pair is None:
            return None
        node = pair[1]
    return node.value if isinstance(node, ScalarNode) and isinstance(node.value, str) else None


def _tree(root: Path, relative: str) -> Node | None:
    """The nodes of the project's YAML file ``relative``, or None for anything else."""
    if not relative.endswith(_SUFFIXES):
        return None
    try:
        base = root.resolve()
        path = (root / relative).resolve(strict=True)
        if not path.is_relative_to(base) or not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with path.open("rb") as stream:
            data = stream.read(MAX_FILE_BYTES + 1)
        text = data.decode("utf-8")
    except (OSError, RuntimeError, UnicodeDecodeError):  # RuntimeError: a loop of links
        return None
    return compose_yaml(text) if len(data) <= MAX_FILE_BYTES else None


def find(tree: Node, field: str, *, at_key: bool = False, keys: Keys | None = None) -> Mark | None:
    """Where ``field`` is written in ``tree``, or its nearest written parent; None when not
    even its first key is. A stack file's problems name config keys with or without the
    project's namespace: each spelling is tried under ``config`` too, the deepest found wins.
    ``keys``: the index of ``tree``'s mappings, kept across the fields of one tree."""
    keys = Keys() if keys is None else keys
    best: tuple[int, Mark] | None = None
    for prefix in ("", f"{_CONFIG}.", f"{_CONFIG}.{PROJECT}:"):
        found = _walk(tree, prefix + field, at_key, keys)
        # Only what the field itself leads to counts, not the prefix tried.
        if found is not None and found[0] > len(prefix) and (best is None or found[0] > best[0]):
            best = (found[0] - len(prefix), found[1])
    return best[1] if best is not None else None


def _walk(tree: Node, field: str, at_key: bool, keys: Keys) -> tuple[int, Mark] | None:
    """How many characters of ``field`` lead to a written key, and where that key (or its
    value) is. Keys may hold dots (a registry mirror's ``ghcr.io/acme``): at each mapping the
    longest key that ``field`` continues with is taken."""
    node, rest, consumed = tree, field, 0
    found: tuple[int, Mark] | None = None
    while rest:  # shorter at each step, also through an alias of a parent
        step = _step(node, rest, keys)
        if step is None:
            break
        key, value, length = step
        consumed += length
        rest = rest[length:].removeprefix(".")
        found = (consumed, _place(key, value, at_key and not rest))
        node = value
    return found


def _step(node: Node, rest: str, keys: Keys) -> tuple[Node, Node, int] | None:
    """The key (a list's item for an index) of ``node`` that ``rest`` starts with, its value
    and the key's length; keys merged in (``<<: *anchor``) after the mapping's own."""
    if isinstance(node, SequenceNode):
        index = rest.split(".", 1)[0]
        if index.isdigit() and int(index) < len(node.value):
            item = node.value[int(index)]
            return item, item, len(index)
        return None
    if not isinstance(node, MappingNode):
        return None
    pairs, lengths = keys.of(node)
    # The longest key first: ``rest`` whole, then up to each of its dots, right to left; only
    # the lengths some key has are looked up.
    end = len(rest)
    while end >= 0:
        if end in lengths:
            pair = pairs.get(rest[:end])
            if pair is not None:
                return pair[0], pair[1], end
        end = rest.rfind(".", 0, end)
    return None


class Keys:
    """Each mapping's keys by their text, the first written of each (its own before those
    merged in), and the lengths they have: built once per mapping, at its first lookup."""

    def __init__(self) -> None:
        self._index: dict[int, tuple[MappingNode, dict[str, tuple[Node, Node]], set[int]]] = {}

    def of(self, node: MappingNode) -> tuple[dict[str, tuple[Node, Node]], set[int]]:
        """``node``'s keys by their text, and the lengths of those texts."""
        known = self._index.get(id(node))
        if known is None or known[0] is not node:
            pairs: dict[str, tuple[Node, Node]] = {}
            for key, value in _pairs(node):
                text = key.value if isinstance(key, ScalarNode) else None
                if isinstance(text, str):
                    pairs.setdefault(text, (key, value))
            known = (node, pairs, {len(text) for text in pairs})
            self._index[id(node)] = known
        return known[1], known[2]


def _pairs(node: MappingNode) -> list[tuple[Node, Node]]:
    own = [(k, v) for k, v in node.value if not (isinstance(k, ScalarNode) and k.value == _MERGE)]
    merged: list[tuple[Node, Node]] = []
    for key, value in node.value:
        if isinstance(key, ScalarNode) and key.value == _MERGE:
            sources = value.value if isinstance(value, SequenceNode) else [value]
            merged += [p for s in sources if isinstance(s, MappingNode) for p in s.value]
    return own + merged


def _place(key: Node, value: Node, at_key: bool) -> Mark:
    """The value when it sits on its key's line (a scalar, a flow collection), else the key."""
    if key is value or at_key:
        return key.start_mark
    inline = isinstance(value, ScalarNode) or (
        isinstance(value, CollectionNode) and bool(value.flow_style)
    )
    return value.start_mark if inline else key.start_mark

"""What the strict YAML reader (:mod:`gatewayctl.inputs.yamlfile`) says when a file does not
read: the YAML library's problems reworded so that no token of the input is quoted, a value
that does not convert told by its tag, and the field path and line a problem is located at.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import yaml
from yaml.error import Mark
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from gatewayctl.errors import Problem

_YAML_TAG = "tag:yaml.org,2002:"
_TYPES = {
    "int": "an integer",
    "float": "a floating-point number",
    "bool": "a boolean",
    "null": "null",
    "timestamp": "a date or time",
    "binary": "base64 data",
}


# PyYAML's and libyaml's problems that name input, and what is said instead.
_MUST_QUOTE = "a value starting with '{}' must be quoted"
_NAMING_INPUT = (
    ("could not determine a constructor for the tag", "unknown tag: " + _MUST_QUOTE.format("!")),
    ("found undefined tag handle", "undefined tag handle: " + _MUST_QUOTE.format("!")),
    ("found duplicate tag handle", "duplicate %TAG handle"),
    ("found undefined alias", "undefined alias: " + _MUST_QUOTE.format("*")),
    ("found duplicate anchor", "duplicate anchor: " + _MUST_QUOTE.format("&")),
    ("found character", "found a character that cannot start any token: quote the value"),
    ("found unknown escape character", "unknown escape character in a double-quoted value"),
)
_FOUND = re.compile(r",? but (?:found|got) .*", re.DOTALL)
# Quoted text PyYAML's messages hold as literals, not as input.
_LITERALS = frozenset({",", "]", "}", ".", " ", ">", "!", ":", "<document start>"})
_QUOTED = re.compile(r"""'([^']*)'|"([^"]*)\"""")


def _safe_problem(problem: str) -> str:
    """A YAML library's problem without any token of the input."""
    if problem.startswith("could not determine a constructor") and problem.endswith(
        (f"{_YAML_TAG}merge'", f"{_YAML_TAG}value'")
    ):
        return "a value '<<' or '=' must be quoted"  # YAML 1.1 resolves them to merge, value
    for start, said in _NAMING_INPUT:
        if problem.startswith(start):
            return said
    problem = _FOUND.sub("", problem)
    return _QUOTED.sub(lambda m: m[0] if (m[1] or m[2] or "") in _LITERALS else "", problem)


def at(display: str, field: str, message: str, mark: Mark | None) -> Problem:
    """A problem located at ``mark`` (a line and column of the file), when there is one."""
    if mark is None:
        return Problem(display, field, message)
    return Problem(display, field, message, line=mark.line + 1, column=mark.column + 1)


def syntax_problem(display: str, error: yaml.YAMLError) -> Problem:
    """The problem of a file YAML cannot parse, at its line, without the offending input."""
    if isinstance(error, yaml.reader.ReaderError):
        code = error.character if isinstance(error.character, int) else ord(error.character)
        message = (
            f"invalid YAML: character U+{code:04X} at position {error.position} is not allowed"
        )
        return Problem(display, "", message)
    where = getattr(error, "problem_mark", None)
    # PyYAML's composer puts what is wrong with an anchor in the context.
    context = str(getattr(error, "context", None) or "")
    problem = str(getattr(error, "problem", None) or "cannot be parsed")
    reason = _safe_problem(context if context.startswith("found duplicate anchor") else problem)
    return at(display, "", f"invalid YAML: {reason}", where)


def conversion_problem(node: Node, *, explicit: bool) -> str:
    """What is wrong with a scalar whose tag's constructor failed; ``explicit`` when the tag is
    written in the file, not resolved from the value."""
    name = node.tag.removeprefix(_YAML_TAG)
    what = _TYPES.get(name, "a value of that tag")
    if explicit:
        reason = f"tagged !!{name} but is not {what}"
    else:
        reason = f"reads as {what} in YAML but is not a valid one; quote it to make it a string"
    return f"invalid value: {reason}"


def _key_text(node: Node) -> str:
    return node.value if isinstance(node, ScalarNode) else "?"


def path_to(root: Node, found: Callable[[Node], bool]) -> tuple[Node, list[str], bool] | None:
    """The first node ``found`` accepts, the keys and indexes from ``root`` to it, and whether
    it is a key. Aliases make the tree a graph: each node is visited once."""
    pending: list[tuple[Node, list[str]]] = [(root, [])]
    seen: set[int] = set()
    while pending:
        node, path = pending.pop()
        if found(node):
            return node, path, False
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, MappingNode):
            for key, value in node.value:
                if found(key):
                    return key, [*path, _key_text(key)], True
                pending.append((value, [*path, _key_text(key)]))
        elif isinstance(node, SequenceNode):
            pending += [(item, [*path, str(i)]) for i, item in enumerate(node.value)]
    return None

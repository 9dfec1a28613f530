"""A declaration restored by ``rollback``, edited as text as ``promote`` edits a stack file: its
comments, order and layout kept, the edit read back and compared with what it must be.

Two edits: the gateway's release pinned (``spec.release: <name>``, a line right under
``spec:``), and ``spec.rotation`` set to the counters the gateway has now (a rotation cannot be
rolled back: a lower counter rotates again).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode

from gatewayctl.errors import ToolError
from gatewayctl.inputs.yamlfile import parse_yaml_mapping

SPEC, ROTATION, RELEASE = "spec", "rotation", "release"


def _value(mapping: MappingNode, key: str) -> tuple[ScalarNode, Node] | None:
    for key_node, value in mapping.value:
        if isinstance(key_node, ScalarNode) and key_node.value == key:
            return key_node, value
    return None


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _spec(text: str, display: str) -> tuple[ScalarNode, MappingNode]:
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    found = _value(root, SPEC) if isinstance(root, MappingNode) else None
    if found is None or not isinstance(found[1], MappingNode) or found[1].flow_style:
        raise ToolError(f"{display}: spec is not a block mapping; restore it by hand")
    if not found[1].value or found[1].start_mark.index < found[0].end_mark.index:
        raise ToolError(f"{display}: spec is empty or an alias; restore it by hand")
    return found[0], found[1]


def _last_line(node: Node) -> int:
    """The last line (0-based) holding a part of ``node``."""
    if isinstance(node, MappingNode) and not node.flow_style and node.value:
        return max(_last_line(v) for _, v in node.value)
    end = node.end_mark
    return end.line - 1 if end.column == 0 and end.line > node.start_mark.line else end.line


def _insert_under_spec(text: str, display: str, block: list[str]) -> str:
    key, spec = _spec(text, display)
    indent = spec.value[0][0].start_mark.column
    lines = _lines(text)
    newline = "\r\n" if "\r\n" in text else "\n"
    at = key.end_mark.line + 1
    added = [f"{' ' * indent}{line}{newline}" for line in block]
    return "".join(lines[:at] + added + lines[at:])


def _without(text: str, display: str, key_name: str) -> str:
    _, spec = _spec(text, display)
    found = _value(spec, key_name)
    if found is None:
        return text
    key, value = found
    lines = _lines(text)
    return "".join(lines[: key.start_mark.line] + lines[_last_line(value) + 1 :])


def _checked(text: str, display: str, expected: dict[str, Any]) -> str:
    try:
        edited = parse_yaml_mapping(text, display)
    except Exception:
        edited = None
    if edited != expected:
        raise ToolError(f"{display}: the restored declaration could not be edited safely")
    return text


def pin_release(text: str, display: str, release: str) -> str:
    """``text`` with ``spec.release: <release>`` (the declaration pins none)."""
    document = parse_yaml_mapping(text, display)
    expected = {**document, SPEC: {RELEASE: release, **document[SPEC]}}
    scalar = release if yaml.safe_load(release) == release else f'"{release}"'
    edited = _insert_under_spec(text, display, [f"{RELEASE}: {scalar}"])
    return _checked(edited, display, expected)


def keep_rotation(text: str, display: str, counters: Mapping[str, int]) -> str:
    """``text`` whose ``spec.rotation`` holds ``counters`` (by their YAML names; the zero ones
    left out), every other byte kept."""
    document = parse_yaml_mapping(text, display)
    spec = dict(document.get(SPEC) or {})
    kept = {k: v for k, v in counters.items() if v}
    current = spec.get(ROTATION) or {}
    if {k: v for k, v in current.items() if v} == kept:
        return text
    spec.pop(ROTATION, None)
    if kept:
        spec = {ROTATION: kept, **spec}
    expected = {**document, SPEC: spec}
    edited = _without(text, display, ROTATION)
    if kept:
        block = [
            f"{ROTATION}:  # as now: a rotation cannot be rolled back",
            *[f"  {k}: {v}" for k, v in kept.items()],
        ]
        edited = _insert_under_spec(edited, display, block)
    return _checked(edited, display, expected)

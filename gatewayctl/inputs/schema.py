"""The declaration file's JSON Schema (issue 25 item 4), generated from the pydantic models.

``python -m gatewayctl schema`` prints it; the committed ``schemas/gateway.schema.json`` is its
output (a test keeps it current), and every sample declaration names it in a first-line
``# yaml-language-server: $schema=...`` comment so editors check and document the fields.
``python -m gatewayctl explain PATH`` reads one field's entry from the same schema.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator
from typing import Any

from gatewayctl import lazy
from gatewayctl.errors import UsageError

SCHEMA_FILE = "schemas/gateway.schema.json"
"""Where the generated schema is committed, relative to the project root."""
DIALECT = "https://json-schema.org/draft/2020-12/schema"

Node = dict[str, Any]


def declaration_schema() -> Node:
    """The JSON Schema of one declaration file (``gateways/<stack>/<name>.yaml``)."""

    generated = lazy.gateway_declaration.GatewayDeclaration.model_json_schema(
        by_alias=True, mode="validation"
    )
    return {
        "$schema": DIALECT,
        "title": "HyperShell Gateway declaration",
        **{key: value for key, value in generated.items() if key != "title"},
    }


def schema_text() -> str:
    """The schema as committed: indented, one trailing newline."""
    return json.dumps(declaration_schema(), indent=2, ensure_ascii=False) + "\n"


def resolved_node(schema: Node, node: Node) -> Node:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return {**schema["$defs"][ref.removeprefix("#/$defs/")], **node}
    return node


def object_node(schema: Node, node: Node) -> Node | None:
    """The object schema a field holds (its model), through ``$ref`` and ``X | None``."""
    for option in [node, *node.get("anyOf", [])]:
        resolved = resolved_node(schema, option)
        if "properties" in resolved:
            return resolved
    return None


def fields(schema: Node) -> Iterator[tuple[str, Node, bool]]:
    """Every field of the schema as (dotted path, its node, whether it is required), parents
    before their fields."""

    def walk(prefix: str, node: Node) -> Iterator[tuple[str, Node, bool]]:
        required = set(node.get("required", []))
        for name, field in node["properties"].items():
            path = f"{prefix}{name}"
            yield path, field, name in required
            inner = object_node(schema, field)
            if inner is not None:
                yield from walk(f"{path}.", inner)

    return walk("", schema)


def undescribed(schema: Node) -> list[str]:
    """The paths of the fields without a description."""
    return [path for path, node, _ in fields(schema) if not node.get("description")]


def type_name(schema: Node, node: Node) -> str:
    """A field's type in words: ``string``, ``integer``, ``object``, ``map of string to
    string``, ``array of string``, ``one of "a", "b"``, alternatives joined with ``or``."""
    if "anyOf" in node:
        return " or ".join(type_name(schema, option) for option in node["anyOf"])
    node = resolved_node(schema, node)
    if "const" in node:
        return f"the constant {json.dumps(node['const'])}"
    if "enum" in node:
        return "one of " + ", ".join(json.dumps(value) for value in node["enum"])
    kind = node.get("type", "any")
    if isinstance(kind, list):
        return " or ".join(kind)
    if kind == "array":
        return f"array of {type_name(schema, node.get('items', {}))}"
    if kind == "object" and "properties" not in node:
        values = node.get("additionalProperties")
        if isinstance(values, dict):
            keys = type_name(schema, node.get("propertyNames", {"type": "string"}))
            return f"map of {keys} to {type_name(schema, values)}"
    return str(kind)


def one_line(text: str) -> str:
    return " ".join(text.split())


def _default(node: Node, required: bool) -> str:
    if required:
        return "none (required)"
    if "default" not in node:
        return "none"
    if isinstance(node["default"], dict) and node["default"] and "$ref" in node:
        return "each of its fields' defaults"  # the whole object's, spelt out, is no help
    return json.dumps(node["default"], separators=(", ", ": "))


def explain(path: str) -> str:
    """What ``gatewayctl explain PATH`` prints: the field's description, type, default and
    its own fields. An unknown path is a UsageError naming the closest known paths."""
    schema = declaration_schema()
    known = {name: (node, required) for name, node, required in fields(schema)}
    if path not in known:
        close = difflib.get_close_matches(path, list(known), n=3, cutoff=0.75)
        hint = (
            f"; did you mean {' or '.join(repr(c) for c in close)}?"
            if close
            else f"; the top-level fields are {', '.join(schema['properties'])}"
        )
        raise UsageError(f"no field {path!r} in a gateway declaration{hint}")
    node, required = known[path]
    lines = [
        f"FIELD:       {path}",
        f"TYPE:        {type_name(schema, node)}",
        f"DEFAULT:     {_default(node, required)}",
        f"DESCRIPTION: {one_line(node['description'])}",
    ]
    inner = object_node(schema, node)
    if inner is not None:
        lines += ["", "FIELDS:"]
        needed = set(inner.get("required", []))
        for name, field in inner["properties"].items():
            if name in needed:
                mark = ", required"
            elif "default" in field and object_node(schema, field) is None:
                mark = f", default {_default(field, required=False)}"
            else:
                mark = ""
            lines.append(f"  {name} ({type_name(schema, field)}{mark})")
            lines.append(f"      {one_line(field['description'])}")
    return "\n".join(lines) + "\n"

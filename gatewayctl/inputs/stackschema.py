"""A stack's settings (issue 46 item 5): the keys ``Pulumi.<stack>.yaml`` holds in the project's
namespace, as a JSON Schema (``schemas/stack.schema.json``) and as a key reference
(``docs/stack-reference.md``), both generated from the models that read them.

``python -m gatewayctl schema --stack-file`` prints the schema, ``--stack-file --markdown`` the
reference; the committed files are their output (tests keep them current). Types and defaults
are worded as in the declaration's reference (``gatewayctl.inputs.reference``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Annotated, Any

from pydantic import Field
from pydantic.json_schema import GenerateJsonSchema
from pydantic_core import core_schema

from gatewayctl.inputs.clusters import StackConfig
from gatewayctl.inputs.environment import DIRECTORY, SHARED_KEYS
from gatewayctl.inputs.model import DnsLabel, KeysByPattern
from gatewayctl.inputs.reference import anchor, cell, default_text, model_description
from gatewayctl.inputs.schema import DIALECT, Node, object_node, one_line, resolved_node, type_name
from gatewayctl.inputs.secrets import ClusterSecrets
from gatewayctl.inputs.stackfile import PROJECT, stack_file

STACK_SCHEMA_FILE = "schemas/stack.schema.json"
"""Where the generated schema is committed, relative to the project root."""
STACK_REFERENCE_FILE = "docs/stack-reference.md"
"""Where the generated reference is committed, relative to the project root."""
EXAMPLE = "clusters.<cluster>.ingress.routerNamespace"
"""The key the reference spells out as YAML to show its notation."""
LONG_PATTERN = 60
"""A pattern longer than this is not shown in a cell: the schema file holds it."""


class StackSettings(StackConfig):
    """Every key of a stack's config in the project's namespace: the keys
    :class:`StackConfig` reads, the ``environment`` they may come from
    (``gatewayctl.inputs.environment``) and the ``clusterSecrets`` read apart from them
    (``gatewayctl.inputs.secrets``)."""

    environment: DnsLabel | None = None
    """The environment whose file, ``environments/<name>.yaml``, holds ``clusters`` and
    ``images`` for every stack naming it (docs/scale-out.md, "Shards"); a key is said in one of
    the two files."""
    cluster_secrets: Annotated[dict[DnsLabel, ClusterSecrets], KeysByPattern(key="cluster")] = (
        Field(alias="clusterSecrets")
    )
    """Each cluster's secrets, by the cluster's name: one entry per cluster of ``clusters``.
    Set each value with ``pulumi config set --stack <stack> --secret --path
    'clusterSecrets.<cluster>.<key>'``."""


class _FactoryDefaults(GenerateJsonSchema):
    """Also the default a factory makes (``default_factory=dict``: ``{}``), which pydantic
    leaves out: a key left out is as good as that value, and the reference says so."""

    def get_default_value(self, schema: core_schema.WithDefaultSchema) -> Any:
        factory = schema.get("default_factory")
        if factory is not None and not schema.get("default_factory_takes_data"):
            return factory()  # type: ignore[call-arg]
        return super().get_default_value(schema)


def stack_schema() -> Node:
    """The JSON Schema of a stack's settings: the mapping of its project keys, without the
    ``hypershell-gateways:`` namespace, as the models read it."""
    generated = StackSettings.model_json_schema(
        by_alias=True, mode="validation", schema_generator=_FactoryDefaults
    )
    return {
        "$schema": DIALECT,
        "title": f"HyperShell Gateways stack settings ({PROJECT}:<key> of {stack_file('<stack>')})",
        **{key: value for key, value in generated.items() if key != "title"},
    }


def schema_text() -> str:
    """The schema as committed: indented, one trailing newline."""
    return json.dumps(stack_schema(), indent=2, ensure_ascii=False) + "\n"


def _entries(schema: Node, node: Node) -> tuple[str, Node] | None:
    """For a map of objects (``clusters``): the word for its keys and the model of its values."""
    keys = node.get("propertyNames", {})
    values = node.get("additionalProperties")
    if not isinstance(values, dict):
        return None
    model = object_node(schema, values)
    return None if model is None else (f"<{keys.get('title', 'name')}>", model)


def keys(schema: Node) -> Iterator[tuple[str, Node, bool, Node | None]]:
    """Every key as (dotted path, its node, whether it is required, the model its value (or each
    entry of its map) holds), parents before their keys; a map's key is ``<word>``."""

    def walk(prefix: str, model: Node) -> Iterator[tuple[str, Node, bool, Node | None]]:
        required = set(model.get("required", []))
        for name, node in model["properties"].items():
            path = f"{prefix}{name}"
            inner = object_node(schema, node)
            entries = _entries(schema, node)
            if inner is not None:
                yield path, node, name in required, inner
                yield from walk(f"{path}.", inner)
            elif entries is not None:
                yield path, node, name in required, entries[1]
                yield from walk(f"{path}.{entries[0]}.", entries[1])
            else:
                yield path, node, name in required, None

    return walk("", schema)


def allowed(schema: Node, node: Node) -> str:
    """A value's limits in words, from the schema: range, lengths, pattern, entries, keys."""
    words: list[str] = []
    for option in node.get("anyOf", [node]):
        option = resolved_node(schema, option)
        if "minimum" in option and "maximum" in option:
            words.append(f"{option['minimum']} to {option['maximum']}")
        if option.get("minLength") == 1:
            words.append("not empty")
        if "maxLength" in option:
            words.append(f"at most {option['maxLength']} characters")
        pattern = option.get("pattern")
        if isinstance(pattern, str) and len(pattern) <= LONG_PATTERN:
            words.append(f"matching ``{pattern}``")
        elif isinstance(pattern, str):
            words.append(f"matching the pattern of {STACK_SCHEMA_FILE}")
        if "minProperties" in option:
            least = option["minProperties"]
            words.append("at least one entry" if least == 1 else f"at least {least} entries")
        names = option.get("propertyNames")
        if isinstance(names, dict) and (said := allowed(schema, names)):
            words.append(f"keys {said}")
        values = option.get("additionalProperties")
        # A map's values, unless they are objects (their keys have their own section).
        if not isinstance(values, dict) or not values or object_node(schema, values) is not None:
            values = None
        if values is not None and (said := allowed(schema, values)):
            words.append(f"values {said}")
        items = option.get("items")
        if isinstance(items, dict) and (said := allowed(schema, items)):
            words.append(f"each {said}")
    return ", ".join(words)


def _section(schema: Node, path: str, node: Node) -> list[str]:
    """The table of the keys below ``path`` (``""``: the top level), after the descriptions of
    the key ``node`` and of the model it holds."""
    heading = f"`{path}`" if path else "The stack's keys"
    lines = [f"## {heading}", ""]
    if path:
        values = node.get("additionalProperties")
        held = values if isinstance(values, dict) else node
        texts = [node.get("description"), model_description(schema, held)]
    else:
        shared = " and ".join(f"`{key}`" for key in SHARED_KEYS)
        texts = [
            f"In `config:`, each as `{PROJECT}:<key>`. {shared} may be in the environment file"
            f" (`{DIRECTORY}/<name>.yaml`, without the namespace) instead."
        ]
    for text in dict.fromkeys(texts):  # once each, in order
        if isinstance(text, str) and text:
            lines += [cell(one_line(text)), ""]
    lines += ["| Key | Type | Default | Allowed values | Description |", "|---|---|---|---|---|"]
    for full, field, required, inner in keys(schema):
        parent = full.rsplit(".", 1)[0] if "." in full else ""
        if parent != path:
            continue
        entries = _entries(schema, field)  # a map's link leads to its entries' section
        target = f"{full}.{entries[0]}" if entries is not None else full
        shown = f"[`{full}`](#{anchor(target)})" if inner is not None else f"`{full}`"
        row = [
            shown,
            cell(type_name(schema, field)),
            default_text(field, required, inner is not None, "keys"),
            cell(allowed(schema, field)),
            cell(one_line(field.get("description", ""))),
        ]
        lines.append("| " + " | ".join(row) + " |")
    return [*lines, ""]


def _example(schema: Node) -> list[str]:
    """:data:`EXAMPLE` as it is written in a stack file, with its default."""
    found = {path: node for path, node, _, _ in keys(schema)}
    parts = EXAMPLE.split(".")
    lines = ["```yaml", "config:"]
    for depth, part in enumerate(parts, start=1):
        name = f"{PROJECT}:{part}" if depth == 1 else part
        value = f" {found[EXAMPLE]['default']}" if depth == len(parts) else ""
        lines.append(f"{'  ' * depth}{name}:{value}")
    return [*lines, "```"]


def markdown(schema: Node) -> str:
    """The reference of ``schema``: the top-level keys, then one section per object, parents
    before their keys, in the schema's order."""
    command = f"python -m gatewayctl schema --stack-file --markdown > {STACK_REFERENCE_FILE}"
    lines = [
        f"<!-- Generated by `{command}`",
        f"     from {STACK_SCHEMA_FILE}; do not edit by hand (a test keeps it current). -->",
        "",
        "# Key reference: the stack file",
        "",
        f"A stack is one file, `{stack_file('<stack>')}`: Pulumi's, whose `config:` mapping holds",
        f"this project's settings as `{PROJECT}:<key>` (other namespaces are Pulumi's and the",
        "providers'). This page is generated from their JSON Schema,",
        f"`{STACK_SCHEMA_FILE}` (`gatewayctl schema --stack-file`), itself generated from the",
        f"models that read them. An unknown key in `{PROJECT}:` is an error; `gatewayctl",
        "validate` judges the keys with the rules across files too (releases, declarations).",
        "",
        "A key is written as its dotted path below the namespace, as `validate` names it in a",
        "problem and `pulumi config set --stack <stack> --path` takes it; `<cluster>` stands for",
        f"a cluster's name, which you choose. `{EXAMPLE}` is",
        "",
        *_example(schema),
        "",
        "A secret (`pulumi config set --stack <stack> --secret`) is written as its `secure:`",
        "ciphertext and read as the string it holds.",
        "",
        *_section(schema, "", schema),
    ]
    for path, node, _, inner in keys(schema):
        if inner is not None:
            entries = _entries(schema, node)
            lines += _section(schema, f"{path}.{entries[0]}" if entries else path, node)
    return "\n".join(lines).rstrip("\n") + "\n"

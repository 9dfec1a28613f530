"""Issue 25 item 7 (b): the field reference ``docs/reference.md``, generated from the committed
JSON Schema by ``gatewayctl schema --markdown``, committed and current."""

from __future__ import annotations

import json
import re
import typing
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from gatewayctl.cli import main as cli
from gatewayctl.inputs import reference, schema
from gatewayctl.inputs.gateway_declaration import GatewayDeclaration
from tests.support import ROOT


def committed_schema() -> schema.Node:
    node: schema.Node = json.loads((ROOT / schema.SCHEMA_FILE).read_text(encoding="utf-8"))
    return node


def committed_reference() -> str:
    return (ROOT / reference.REFERENCE_FILE).read_text(encoding="utf-8")


def test_the_committed_reference_is_generated_from_the_committed_schema() -> None:
    assert committed_reference() == reference.markdown(committed_schema()), (
        "run: python -m gatewayctl schema --markdown > docs/reference.md"
    )


def test_schema_markdown_prints_the_committed_reference(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["schema", "--markdown"]) == 0
    assert capsys.readouterr() == (committed_reference(), "")


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The model a field holds (alone or as ``Model | None``), or None."""
    for candidate in (annotation, *typing.get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def model_objects(model: type[BaseModel], prefix: str = "") -> Iterator[str]:
    """The path of every field of ``model`` that is a model itself, read from the models (not
    the schema the reference is made from): each before its own, in the fields' order."""
    for name, field in model.model_fields.items():
        path = f"{prefix}{field.alias or name}"
        inner = _model_of(field.annotation)
        if inner is not None:
            yield path
            yield from model_objects(inner, f"{path}.")


def test_one_section_per_object_parents_first() -> None:
    headings = re.findall(r"^## (.+)$", committed_reference(), flags=re.MULTILINE)
    objects = list(model_objects(GatewayDeclaration))
    assert headings == ["The declaration file", *(f"`{path}`" for path in objects)]
    # Parents first: a section's parent object (the file itself for a top-level one) is above it.
    paths = ["", *(heading.strip("`") for heading in headings[1:])]
    for index, path in enumerate(paths):
        assert paths.index(path.rpartition(".")[0]) < index or path == "", path


def test_every_field_is_one_row_of_field_type_default_description() -> None:
    text = committed_reference()
    rows = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line]
    rows = [row for row in rows if row != "| Field | Type | Default | Description |"]
    assert len(rows) == len(list(schema.fields(committed_schema())))
    assert "| `replicas` | integer | `1` | Gateway pods, 1-10. |" in rows
    assert "| `address` | string | required | Vault's http(s) URL. |" in rows
    assert (
        '| `deletionPolicy` | one of "Retain", "Delete" | `"Retain"` | `Retain` keeps the'
        " PostgreSQL role and database when the gateway is removed; `Delete` drops them (the"
        " data is lost). |"
    ) in rows
    assert (
        "| [`exposure`](#specexposure) | object | its fields' defaults | Whether and where the"
        " gateway is reachable from outside the cluster. |"
    ) in rows
    assert (
        "| `labels` | map of string to string | none | Free labels; a shared inventory selects"
        " gateways by them. |"
    ) in rows


def test_every_link_points_at_a_heading() -> None:
    text = committed_reference()
    sections = [reference.anchor(h.strip("`")) for h in re.findall(r"^## (.+)$", text, re.M)]
    links = re.findall(r"\]\(#([^)]+)\)", text)
    # Each object's section but the first (the declaration itself) is linked once, from its
    # parent's row.
    assert sorted(links) == sorted(sections[1:])


def test_a_section_shows_the_fields_description_and_its_models() -> None:
    assert (
        "## `spec.console`\n\nThe web console (off unless enabled).\n\n"
        "The gateway's web console (`components.console`); needs the cluster's Keycloak.\n\n"
        "| Field | Type | Default | Description |\n"
    ) in committed_reference()


def test_cells_escape_pipes_everywhere_and_markup_outside_code() -> None:
    assert reference.cell("a|b <x> *y* [z] \\ ``c|<d>``") == (
        "a\\|b &lt;x&gt; \\*y\\* \\[z\\] \\\\ `c\\|<d>`"
    )


def test_anchors_are_githubs() -> None:
    assert reference.anchor("spec.credentials.kubernetesSecrets") == (
        "speccredentialskubernetessecrets"
    )

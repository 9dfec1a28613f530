"""The strict YAML reader (``gatewayctl.inputs.yamlfile``): one mapping per file, problems with
their line, no duplicate keys, alias expansion within a budget, the same reading with or without
libyaml.

The loader reads every declaration and stack file through it: most cases build a small
project with ``tests.builders`` and load it; the parser cases call ``read_yaml_mapping``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gatewayctl.errors import InvalidInputError
from gatewayctl.inputs import yamlfile
from gatewayctl.inputs.yamlfile import MAX_DEPTH, MAX_NODES
from tests.builders import (
    API_VERSION,
    CONFIG_FILE,
    DECLARATIONS,
    EAST_DOMAIN,
    PREFIX,
    WEST_DOMAIN,
    head,
    write_declaration_text,
    write_gateway,
    write_stack,
    write_text,
)
from tests.helpers import load_problems, located_problems, only_gateway, where

IMPLICIT = "in YAML but is not a valid one; quote it to make it a string"
DEEP = 5_000


# --- one mapping per file -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("- team-a\n- team-b\n", "expected a YAML mapping, found list"),
        ("just a string\n", "expected a YAML mapping, found str"),
        ("42\n", "expected a YAML mapping, found int"),
        ("", "is empty; expected one YAML mapping"),
        ("# only a comment\n", "is empty; expected one YAML mapping"),
        ("---\n", "is empty; expected one YAML mapping"),
        (
            head("team-a") + "---\n" + head("team-a"),
            "holds several documents; expected one YAML mapping",
        ),
        (b"kind: Gateway\nname: \xff\xfe\x00\x81\n", "not UTF-8 text"),
    ],
    ids=["list", "scalar", "int", "empty", "comment", "empty-document", "two-documents", "binary"],
)
def test_file_that_is_not_one_mapping(tmp_path: Path, content: str | bytes, message: str) -> None:
    write_stack(tmp_path)
    source = write_declaration_text(tmp_path, "team-a.yaml", content)

    assert load_problems(tmp_path) == [(source, "", message)]


def test_several_documents_after_an_empty_one(tmp_path: Path) -> None:
    write_stack(tmp_path)
    source = write_declaration_text(tmp_path, "team-a.yaml", "---\n---\n" + head("team-a"))

    assert load_problems(tmp_path) == [
        (source, "", "holds several documents; expected one YAML mapping")
    ]


# --- duplicate and unhashable keys name their line ------------------------------------------


def test_duplicate_top_level_key(tmp_path: Path) -> None:
    write_stack(tmp_path)
    text = f"apiVersion: {API_VERSION}\nkind: Gateway\nkind: Gateway\nmetadata:\n  name: team-a\n"
    source = write_declaration_text(tmp_path, "team-a.yaml", text)

    assert located_problems(tmp_path) == [
        (f"{source}:3:1", "", "invalid YAML: duplicate key 'kind'")
    ]


def test_duplicate_nested_key(tmp_path: Path) -> None:
    # A plain YAML loader would silently keep the last value (replicas: 2).
    write_stack(tmp_path)
    text = head("team-a") + "spec:\n  replicas: 1\n  replicas: 2\n"
    source = write_declaration_text(tmp_path, "team-a.yaml", text)

    assert located_problems(tmp_path) == [
        (f"{source}:7:3", "", "invalid YAML: duplicate key 'replicas'")
    ]


def test_unhashable_key_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    write_stack(tmp_path)
    source = write_declaration_text(tmp_path, "team-a.yaml", head("team-a") + "? [a, b]\n: c\n")

    problems = located_problems(tmp_path)

    assert where(problems) == [(f"{source}:5:3", "")]
    assert problems[0][2].startswith("invalid YAML: ")


# --- merge keys and aliases -----------------------------------------------------------------


def test_yaml_merge_keys_are_accepted_in_the_stack_file(tmp_path: Path) -> None:
    text = f"""\
common: &common
  capabilities: {{openshift: true}}
  ingress: {{mode: route}}
  database: {{adminHost: db.example.com, adminUser: admin, host: db.example.com}}
config:
  {PREFIX}declarationsDir: {DECLARATIONS}
  {PREFIX}clusters:
    east:
      <<: *common
      baseDomain: {EAST_DOMAIN}
    west:
      <<: *common
      baseDomain: {WEST_DOMAIN}
"""
    write_text(tmp_path, CONFIG_FILE, text)
    write_gateway(tmp_path, "team-a", {"cluster": "west"})

    assert only_gateway(tmp_path).hostname == f"gw-openshell-team-a.{WEST_DOMAIN}"


def test_yaml_aliases_that_expand_beyond_the_budget_are_refused(tmp_path: Path) -> None:
    write_stack(tmp_path)
    bomb = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for level, previous in zip("bcdef", "abcde", strict=True):
        bomb.append(f"{level}: &{level} [" + ", ".join([f"*{previous}"] * 10) + "]")
    source = f"{DECLARATIONS}/bomb.yaml"
    write_text(tmp_path, source, "\n".join(bomb) + "\n")

    assert load_problems(tmp_path) == [
        (source, "", "expands to more than 100,000 values (YAML aliases?)")
    ]


def test_yaml_aliases_within_the_budget_are_read(tmp_path: Path) -> None:
    write_stack(tmp_path)
    write_text(
        tmp_path,
        f"{DECLARATIONS}/team-a.yaml",
        f"apiVersion: {API_VERSION}\nkind: Gateway\nmetadata:\n  name: team-a\n"
        "  labels: &labels {tier: gold}\nspec:\n  replicas: 2\n",
    )

    gateway = only_gateway(tmp_path)

    assert (gateway.name, gateway.args.settings.replicas) == ("team-a", 2)


# --- the reader without libyaml -------------------------------------------------------------

SAME_EITHER_WAY = {
    "a: !!int ten\n": "f.yaml:1:4: a: invalid value: tagged !!int but is not an integer",
    "a: 2026-02-30\n": f"f.yaml:1:4: a: invalid value: reads as a date or time {IMPLICIT}",
    "a: " + "[" * DEEP + "]" * DEEP + "\n": (
        f"f.yaml:1:{4 + MAX_DEPTH - 1}: nests deeper than {MAX_DEPTH} levels; not read further"
    ),
    "a: [" + "0," * MAX_NODES + "0]\n": (
        f"f.yaml:1:{2 * MAX_NODES - 1}: holds more than {MAX_NODES:,} values; not read further"
    ),
    "a: !Q7zx!pw\n": (
        "f.yaml:1:4: invalid YAML: undefined tag handle: a value starting with '!' must be quoted"
    ),
    "a: {b: 1, b: 2}\n": "f.yaml:1:11: invalid YAML: duplicate key 'b'",
}


@pytest.mark.parametrize("libyaml", [True, False], ids=["libyaml", "python"])
@pytest.mark.parametrize("text", list(SAME_EITHER_WAY), ids=range(len(SAME_EITHER_WAY)))
def test_the_python_parser_reads_the_same_where_libyaml_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, libyaml: bool, text: str
) -> None:
    if libyaml and not yamlfile.LIBYAML:
        pytest.skip("this PyYAML is built without libyaml")
    monkeypatch.setattr(yamlfile, "LIBYAML", libyaml)
    (tmp_path / "f.yaml").write_text(text)

    with pytest.raises(InvalidInputError) as caught:
        yamlfile.read_yaml_mapping(tmp_path / "f.yaml", "f.yaml")

    assert [str(p) for p in caught.value.problems] == [SAME_EITHER_WAY[text]]

"""Issue 25 item 4: the declaration file's JSON Schema (``gatewayctl schema``), committed and
current, a description for every field, named by every sample declaration; and ``explain``."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema  # in uv.lock already (kubernetes-validate's own dependency)
import pytest

from gatewayctl.cli import main as cli
from gatewayctl.inputs import schema
from gatewayctl.inputs.yamlfile import read_yaml_mapping
from tests.support import ROOT, STACKS

SAMPLES = sorted((ROOT / "gateways").glob("*/*.yaml"))
FIRST_LINE = "# yaml-language-server: $schema=../../schemas/gateway.schema.json\n"


def test_the_committed_schema_is_the_generated_one_byte_for_byte() -> None:
    committed = (ROOT / schema.SCHEMA_FILE).read_bytes()
    assert committed == schema.schema_text().encode("utf-8"), (
        "run: python -m gatewayctl schema > schemas/gateway.schema.json"
    )


def test_the_schema_command_prints_the_committed_schema(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["schema"]) == 0
    out, err = capsys.readouterr()
    assert out == (ROOT / schema.SCHEMA_FILE).read_text(encoding="utf-8")
    assert err == ""


def test_every_field_of_the_schema_has_a_description() -> None:
    generated = schema.declaration_schema()
    assert schema.undescribed(generated) == []
    # The walk reaches every field of every model, so none escapes the check above.
    models = [generated, *generated["$defs"].values()]
    assert len(list(schema.fields(generated))) == sum(len(m["properties"]) for m in models)


def test_undescribed_names_a_field_without_a_description() -> None:
    generated = schema.declaration_schema()
    del generated["$defs"]["VaultSpec"]["properties"]["role"]["description"]
    generated["properties"]["kind"]["description"] = ""
    assert schema.undescribed(generated) == ["kind", "spec.credentials.vault.role"]


def test_the_schema_is_a_valid_draft_2020_12_schema_that_forbids_unknown_fields() -> None:
    generated = schema.declaration_schema()
    assert generated["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(generated)
    assert generated["additionalProperties"] is False
    assert all(d["additionalProperties"] is False for d in generated["$defs"].values())


def test_every_stack_has_sample_declarations() -> None:
    """The checks of every sample below run on each stack's declarations."""
    assert {path.parent.name for path in SAMPLES} == set(STACKS)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_sample_declaration_names_the_schema_on_its_first_line(path: Path) -> None:
    with path.open(encoding="utf-8") as file:
        assert file.readline() == FIRST_LINE
    named = FIRST_LINE.strip().split("$schema=", 1)[1]
    assert (path.parent / named).resolve() == (ROOT / schema.SCHEMA_FILE).resolve()


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_sample_declaration_is_valid_against_the_committed_schema(path: Path) -> None:
    committed = json.loads((ROOT / schema.SCHEMA_FILE).read_text(encoding="utf-8"))
    document = read_yaml_mapping(path, path.name)
    errors = [e.message for e in jsonschema.Draft202012Validator(committed).iter_errors(document)]
    assert errors == []


def test_the_schema_reports_an_unknown_field_and_a_wrong_type() -> None:
    validator = jsonschema.Draft202012Validator(schema.declaration_schema())
    document = {
        "apiVersion": "hypershell.redhat.io/v1alpha1",
        "kind": "Gateway",
        "metadata": {"name": "team-a"},
        "spec": {"replica": 2, "deletionPolicy": "delete"},
    }
    errors = sorted(
        (".".join(str(p) for p in e.absolute_path), e.message)
        for e in validator.iter_errors(document)
    )
    assert errors == [
        ("spec", "Additional properties are not allowed ('replica' was unexpected)"),
        ("spec.deletionPolicy", "'delete' is not one of ['Retain', 'Delete']"),
    ]


# --- explain ----------------------------------------------------------------------------------

VAULT = """\
FIELD:       spec.credentials.vault
TYPE:        object or null
DEFAULT:     null
DESCRIPTION: Settings of the ``vault`` driver; required with it, and only with it.

FIELDS:
  address (string, required)
      Vault's http(s) URL.
  role (string, required)
      The Vault role the gateway logs in as (through the Kubernetes auth method).
  mount (string, default "secret")
      The KV mount path the credentials are kept under.
  authMethod (one of "kubernetes", default "kubernetes")
      How the gateway logs in to Vault: ``kubernetes`` only (its ServiceAccount token).
  kubernetesAuthMount (string, default "kubernetes")
      The path the Kubernetes auth method is mounted at.
  timeoutSeconds (integer, default 30)
      How long one request to Vault may take, 1-3600 seconds.
"""


def test_explain_prints_a_fields_description_type_default_and_fields(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["explain", "spec.credentials.vault"]) == 0
    assert capsys.readouterr() == (VAULT, "")


def test_explain_prints_a_leaf_field(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["explain", "spec.deletionPolicy"]) == 0
    assert capsys.readouterr().out == (
        "FIELD:       spec.deletionPolicy\n"
        'TYPE:        one of "Retain", "Delete"\n'
        'DEFAULT:     "Retain"\n'
        "DESCRIPTION: ``Retain`` keeps the PostgreSQL role and database when the gateway is"
        " removed; ``Delete`` drops them (the data is lost).\n"
    )


def test_explain_names_required_fields_maps_and_whole_object_defaults() -> None:
    assert schema.explain("metadata") == (
        "FIELD:       metadata\n"
        "TYPE:        object\n"
        "DEFAULT:     none (required)\n"
        "DESCRIPTION: The gateway's name and labels.\n"
        "\n"
        "FIELDS:\n"
        "  name (string, required)\n"
        "      The gateway's name and identity: a DNS-1123 label, the declaration's file name.\n"
        "  labels (map of string to string)\n"
        "      Free labels; a shared inventory selects gateways by them.\n"
    )
    assert schema.explain("spec.exposure").splitlines()[:3] == [
        "FIELD:       spec.exposure",
        "TYPE:        object",
        "DEFAULT:     each of its fields' defaults",
    ]
    assert schema.explain("spec.access.admins").splitlines()[1:3] == [
        "TYPE:        array of string",
        "DEFAULT:     none",
    ]


def test_explain_an_unknown_field_exits_2_with_the_closest_paths(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["explain", "spec.credentials.vualt"]) == 2
    assert capsys.readouterr() == (
        "",
        "error: no field 'spec.credentials.vualt' in a gateway declaration; did you mean"
        " 'spec.credentials.vault' or 'spec.credentials.vault.role' or 'spec.credentials'?\n",
    )


def test_explain_a_field_nothing_resembles_names_the_top_level_fields(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["explain", "zzz"]) == 2
    assert capsys.readouterr().err == (
        "error: no field 'zzz' in a gateway declaration; the top-level fields are apiVersion,"
        " kind, metadata, spec\n"
    )


def test_the_top_help_lists_schema_and_explain() -> None:
    text = cli.parser().format_help()
    assert "    schema            print the JSON Schema of a declaration file\n" in text
    explain = "    explain           describe one field of a declaration file: type, default,\n"
    assert explain in text

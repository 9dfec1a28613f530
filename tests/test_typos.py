"""A misspelt field (``gatewayctl.typos``): the unknown key names the field it most likely
meant, and the problems of that field, absent because of the typo, are not reported as well
(issue 25 item 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gatewayctl.inputs.clusters import StackConfig
from gatewayctl.inputs.gateway_declaration import GatewayDeclaration
from gatewayctl.typos import closest, field_names
from tests.builders import (
    API_VERSION,
    CONFIG_FILE,
    PREFIX,
    edited_config,
    head,
    write_declaration_text,
    write_gateway,
    write_stack,
)
from tests.helpers import load_problems
from tests.hostile_helpers import run_cli, unlocated


def test_a_misspelt_top_level_field_is_named_and_its_absence_not_reported(tmp_path: Path) -> None:
    write_stack(tmp_path)
    text = f"apiVersion: {API_VERSION}\nkind: Gateway\nmetdata:\n  name: team-a\n"
    source = write_declaration_text(tmp_path, "team-a.yaml", text)

    # Without the suggestion, also: metadata: required field is missing.
    assert load_problems(tmp_path) == [
        (source, "metdata", "unknown field; did you mean 'metadata'?")
    ]


def test_a_misspelt_block_is_named_and_the_rule_its_absence_breaks_is_not_reported(
    tmp_path: Path,
) -> None:
    write_stack(tmp_path)
    vault = {"address": "https://vault.example.com", "role": "r"}
    source = write_gateway(tmp_path, "team-a", {"credentials": {"driver": "vault", "vualt": vault}})

    # Without the suggestion, also: spec.credentials.vault: required with driver 'vault'.
    assert load_problems(tmp_path) == [
        (source, "spec.credentials.vualt", "unknown field; did you mean 'vault'?")
    ]


def test_a_field_already_written_is_not_suggested(tmp_path: Path) -> None:
    write_stack(tmp_path)
    source = write_gateway(tmp_path, "team-a", {"replicas": 1, "replica": 2})

    assert load_problems(tmp_path) == [(source, "spec.replica", "unknown field")]


def test_other_problems_of_the_file_are_still_reported(tmp_path: Path) -> None:
    write_stack(tmp_path)
    source = write_gateway(
        tmp_path, "team-a", {"replica": 2, "deletionPolicy": "Keep", "exposure": {"hots": "x"}}
    )

    assert load_problems(tmp_path) == [
        (source, "spec.deletionPolicy", "Input should be 'Retain' or 'Delete'"),
        (source, "spec.exposure.hots", "unknown field; did you mean 'host'?"),
        (source, "spec.replica", "unknown field; did you mean 'replicas'?"),
    ]


def test_the_cli_prints_the_suggestion_at_the_key_and_exits_2(tmp_path: Path) -> None:
    write_stack(tmp_path)
    text = head("team-a") + "spec:\n  signIn: none\n  deletion_policy: Delete\n"
    source = write_declaration_text(tmp_path, "team-a.yaml", text)

    outcome = run_cli("--root", str(tmp_path), "validate", "test")

    assert (outcome.code, outcome.out) == (2, "")
    assert outcome.err.splitlines() == [
        f"error: {source}:7:3: spec.deletion_policy: unknown field; did you mean 'deletionPolicy'?",
        "1 problem(s); nothing written",
    ]


# --- the stack file -------------------------------------------------------------------------


def test_a_misspelt_config_key_is_named_and_its_absence_not_reported(tmp_path: Path) -> None:
    write_stack(tmp_path)
    with edited_config(tmp_path, "test") as config:
        config[f"{PREFIX}clustres"] = config.pop(f"{PREFIX}clusters")

    # Without the suggestion, also: hypershell-gateways:clusters: required field is missing.
    assert load_problems(tmp_path) == [
        (CONFIG_FILE, f"{PREFIX}clustres", f"unknown config key; did you mean '{PREFIX}clusters'?")
    ]


def test_a_misspelt_cluster_field_is_named_and_its_absence_not_reported(tmp_path: Path) -> None:
    write_stack(tmp_path)
    with edited_config(tmp_path, "test") as config:
        database = config[f"{PREFIX}clusters"]["c1"]["database"]
        database["adminHots"] = database.pop("adminHost")

    assert load_problems(tmp_path) == [
        (
            CONFIG_FILE,
            f"{PREFIX}clusters.c1.database.adminHots",
            "unknown field; did you mean 'adminHost'?",
        )
    ]


def test_a_misspelt_secret_name_is_named_and_its_value_never_printed(tmp_path: Path) -> None:
    write_stack(tmp_path, secrets={"c1": {"dbAdminPasword": "Q7zx-secret"}})
    write_gateway(tmp_path, "team-a", {"signIn": "none"})

    outcome = run_cli("--root", str(tmp_path), "validate", "test")

    assert outcome.code == 2
    # Without the suggestion, also: ...c1.dbAdminPassword: required field is missing.
    assert unlocated(outcome.err).splitlines() == [
        f"error: {CONFIG_FILE}: {PREFIX}clusterSecrets.c1.dbAdminPasword: unknown field;"
        " did you mean 'dbAdminPassword'?",
        "1 problem(s); nothing written",
    ]
    assert "Q7zx" not in outcome.err


# --- the names --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "candidates", "suggested"),
    [
        ("replica", ["replicas", "release"], "replicas"),
        ("hots", ["host", "enabled"], "host"),
        ("DeletionPolicy", ["deletionPolicy"], "deletionPolicy"),
        ("kubernetes_secrets", ["kubernetesSecrets", "vault"], "kubernetesSecrets"),
        ("colour", ["cluster", "console"], None),  # 0.62 and 0.46: too far
        ("x", ["spec"], None),
    ],
)
def test_the_closest_name_is_suggested_only_when_close(
    key: str, candidates: list[str], suggested: str | None
) -> None:
    assert closest(key, candidates) == suggested


def test_field_names_are_the_models_yaml_names_at_any_depth() -> None:
    assert field_names(GatewayDeclaration, ()) == ["apiVersion", "kind", "metadata", "spec"]
    assert "kubernetesAuthMount" in field_names(
        GatewayDeclaration, ("spec", "credentials", "vault")
    )
    assert "adminHost" in field_names(StackConfig, ("clusters", "any-cluster", "database"))
    assert field_names(StackConfig, ("clusters",)) == []  # a mapping of names, not a model
    assert field_names(GatewayDeclaration, ("spec", "replicas")) == []

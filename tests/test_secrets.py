"""``gatewayctl.inputs.secrets``: plaintext ``clusterSecrets`` of a stack file
(``plaintext_leaves``), read with the strict YAML reader like every other file, and scrubbing free
text."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from gatewayctl.engine.redaction import scrub
from gatewayctl.inputs import secrets
from gatewayctl.inputs.secrets import SECURE_PLACEHOLDER, plaintext_leaves
from gatewayctl.resolve.preparation import Prepared, prepare
from tests.builders import (
    CONFIG_FILE,
    DECLARATIONS,
    DROP,
    PREFIX,
    STACK,
    two_clusters,
    write_gateway,
    write_stack,
)
from tests.helpers import problems_of, where
from tests.support import ROOT


def write(root: Path, text: str) -> None:
    (root / "Pulumi.s.yaml").write_text(text, encoding="utf-8")


def test_every_plaintext_value_by_its_path_and_no_secure_value(tmp_path: Path) -> None:
    write(
        tmp_path,
        f"""\
config:
  {PREFIX}clusterSecrets:
    east:
      dbAdminPassword: hunter2-plaintext
      kubeconfig:
        secure: v1:not-plaintext
      extra: [one, {{secure: x}}, 3]
    west:
      secure: v1:whole-cluster
    none: null
  {PREFIX}images: {{gateway: not-a-secret}}
""",
    )
    assert plaintext_leaves(tmp_path, "s") == [
        (("east", "dbAdminPassword"), "hunter2-plaintext"),
        (("east", "extra", "0"), "one"),
        (("east", "extra", "2"), 3),
        (("none",), None),
    ]


def test_secrets_of_one_secure_value_have_no_plaintext(tmp_path: Path) -> None:
    write(tmp_path, f"config:\n  {PREFIX}clusterSecrets:\n    secure: v1:all\n")
    assert plaintext_leaves(tmp_path, "s") == []


def test_a_file_the_strict_reader_refuses_gives_none(tmp_path: Path) -> None:
    # A duplicate key: PyYAML's own loader would keep the last value; the strict reader, which
    # validates the stack, refuses the file (the stack is invalid input for every command).
    write(
        tmp_path,
        f"config:\n  {PREFIX}clusterSecrets:\n    east: {{dbAdminPassword: first-value}}\n"
        "    east: {dbAdminPassword: second-value}\n",
    )
    assert plaintext_leaves(tmp_path, "s") == []


def test_no_file_no_config_or_no_secrets_give_none(tmp_path: Path) -> None:
    assert plaintext_leaves(tmp_path, "s") == []
    write(tmp_path, "secretsprovider: passphrase\n")
    assert plaintext_leaves(tmp_path, "s") == []
    write(tmp_path, "config: [a, b]\n")
    assert plaintext_leaves(tmp_path, "s") == []
    write(tmp_path, f"config:\n  {PREFIX}declarationsDir: gateways/s\n")
    assert plaintext_leaves(tmp_path, "s") == []


# --- secrets (gatewayctl.engine.preparation.prepare)
# ----------------------------------------------------


def prepared(root: Path) -> Prepared:
    return prepare(root, STACK)


def test_missing_cluster_secrets_entry_is_a_problem(tmp_path: Path) -> None:
    write_stack(
        tmp_path,
        clusters=two_clusters(),
        secrets={"east": {"dbAdminPassword": "pw"}},
    )

    assert problems_of(lambda: prepared(tmp_path)) == [
        (
            CONFIG_FILE,
            f"{PREFIX}clusterSecrets.west",
            "missing; set it with"
            " `pulumi config set --stack test --secret --path"
            " 'clusterSecrets.west.dbAdminPassword'`",
        )
    ]


def test_missing_cluster_secrets_key_names_every_cluster(tmp_path: Path) -> None:
    write_stack(tmp_path, clusters=two_clusters(), secrets=DROP)

    assert where(problems_of(lambda: prepared(tmp_path))) == [
        (CONFIG_FILE, f"{PREFIX}clusterSecrets.east"),
        (CONFIG_FILE, f"{PREFIX}clusterSecrets.west"),
    ]


def test_secrets_for_an_unknown_cluster_are_reported(tmp_path: Path) -> None:
    write_stack(tmp_path, secrets={"c1": {"dbAdminPassword": "x"}, "c9": {"dbAdminPassword": "y"}})
    write_gateway(tmp_path, "t1")
    assert problems_of(lambda: prepare(tmp_path, STACK)) == [
        (CONFIG_FILE, f"{PREFIX}clusterSecrets.c9", "no such cluster in this stack")
    ]


def test_cluster_secrets_that_are_not_a_mapping_are_one_problem(tmp_path: Path) -> None:
    write_stack(tmp_path, clusters=two_clusters(), secrets="somestring")

    assert problems_of(lambda: prepared(tmp_path)) == [
        (
            CONFIG_FILE,
            f"{PREFIX}clusterSecrets",
            "expected a mapping of cluster name to its secrets, found str",
        )
    ]


def test_secure_values_are_accepted_and_counted(tmp_path: Path) -> None:
    secure = {"secure": "v1:cmVwbGFjZS1tZQ=="}
    write_stack(
        tmp_path,
        clusters=two_clusters(),
        secrets={
            "east": {"dbAdminPassword": secure, "kubeconfig": secure},
            "west": {"dbAdminPassword": secure},
        },
    )

    result = prepared(tmp_path)

    assert result.secure_placeholders == 3
    assert json.loads(result.config[f"{PREFIX}clusterSecrets"]) == {
        "east": {"dbAdminPassword": SECURE_PLACEHOLDER, "kubeconfig": SECURE_PLACEHOLDER},
        "west": {"dbAdminPassword": SECURE_PLACEHOLDER},
    }


def test_whole_object_secure_secrets_render_with_placeholders(tmp_path: Path) -> None:
    write_stack(tmp_path, clusters=two_clusters(), secrets={"secure": "v1:AAAA"})
    write_gateway(tmp_path, "t1", {"cluster": "east"})
    prepared = prepare(tmp_path, STACK)
    assert prepared.secure_placeholders == 1
    assert json.loads(prepared.config[f"{PREFIX}clusterSecrets"]) == {
        "east": {"dbAdminPassword": SECURE_PLACEHOLDER},
        "west": {"dbAdminPassword": SECURE_PLACEHOLDER},
    }


def test_plaintext_password_is_accepted(tmp_path: Path) -> None:
    write_stack(tmp_path, secrets={"c1": {"dbAdminPassword": "local-development-only"}})
    write_gateway(tmp_path, "dev")

    result = prepared(tmp_path)

    assert result.secure_placeholders == 0
    assert json.loads(result.config[f"{PREFIX}clusterSecrets"]) == {
        "c1": {"dbAdminPassword": "local-development-only"}
    }
    assert result.config[f"{PREFIX}declarationsDir"] == DECLARATIONS
    assert [g.name for g in result.loaded.gateways] == ["dev"]


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        (
            {"dbAdminPassword": ""},
            [("dbAdminPassword", "String should have at least 1 character")],
        ),
        ({}, [("dbAdminPassword", "required field is missing")]),
        ({"dbAdminPassword": 1234}, [("dbAdminPassword", "Input should be a valid string")]),
        (
            {"dbAdminPassword": "pw", "kubeconfg": "x"},
            # A misspelt secret's name is named (a pasted secret is never that close to one:
            # tests/test_message_redaction.py hides those).
            [("kubeconfg", "unknown field; did you mean 'kubeconfig'?")],
        ),
    ],
    ids=["empty", "missing", "not-a-string", "unknown-field"],
)
def test_bad_cluster_secrets_entry(
    tmp_path: Path, entry: dict[str, Any], expected: list[tuple[str, str]]
) -> None:
    write_stack(tmp_path, secrets={"c1": entry})

    assert problems_of(lambda: prepared(tmp_path)) == [
        (CONFIG_FILE, f"{PREFIX}clusterSecrets.c1.{field}", message) for field, message in expected
    ]


def test_prepare_reports_declaration_and_secret_problems_together(tmp_path: Path) -> None:
    write_stack(tmp_path, secrets=DROP)
    source = write_gateway(tmp_path, "team-a", {"replicas": 0})

    assert where(problems_of(lambda: prepared(tmp_path))) == [
        (CONFIG_FILE, f"{PREFIX}clusterSecrets.c1"),
        (source, "spec.replicas"),
    ]


# --- scrubbing free text -------------------------------------------------------------------


def test_the_base_render_error_line_is_scrubbed_by_token() -> None:
    line = "error: admin_user 'admin' rejected for ConfigMap (admin)"
    assert scrub(line, {"admin", "Config"}) == (
        "error: admin_user '[secret]' rejected for ConfigMap ([secret])"
    )


# --- the Keycloak admin client secret (issue 12) -------------------------------------------

KEYCLOAK = {"keycloak": {"url": "https://sso.example.com", "realm": "r", "adminClientId": "a"}}


def test_a_keycloak_cluster_needs_its_admin_client_secret(tmp_path: Path) -> None:
    clusters = two_clusters()
    clusters["east"]["identity"] = KEYCLOAK
    write_stack(tmp_path, clusters=clusters)
    write_gateway(tmp_path, "t1", {"cluster": "east"})
    assert problems_of(lambda: prepare(tmp_path, STACK)) == [
        (
            CONFIG_FILE,
            f"{PREFIX}clusterSecrets.east.keycloakAdminClientSecret",
            "missing: the cluster has identity.keycloak; set the admin client's secret with"
            " `pulumi config set --stack test --secret --path"
            " 'clusterSecrets.east.keycloakAdminClientSecret'`",
        )
    ]


def test_whole_object_secure_secrets_give_keycloak_clusters_a_placeholder_too(
    tmp_path: Path,
) -> None:
    clusters = two_clusters()
    clusters["west"]["identity"] = KEYCLOAK
    write_stack(tmp_path, clusters=clusters, secrets={"secure": "v1:AAAA"})
    write_gateway(tmp_path, "t1", {"cluster": "west"})
    prepared = prepare(tmp_path, STACK)
    assert json.loads(prepared.config[f"{PREFIX}clusterSecrets"]) == {
        "east": {"dbAdminPassword": SECURE_PLACEHOLDER},
        "west": {
            "dbAdminPassword": SECURE_PLACEHOLDER,
            "keycloakAdminClientSecret": SECURE_PLACEHOLDER,
        },
    }


def test_an_empty_keycloak_secret_is_a_problem_that_does_not_print_it(tmp_path: Path) -> None:
    clusters = two_clusters()
    clusters["east"]["identity"] = KEYCLOAK
    write_stack(
        tmp_path,
        clusters=clusters,
        secrets={
            "east": {"dbAdminPassword": "pw", "keycloakAdminClientSecret": ""},
            "west": {"dbAdminPassword": "pw"},
        },
    )
    assert where(problems_of(lambda: prepare(tmp_path, STACK))) == [
        (CONFIG_FILE, f"{PREFIX}clusterSecrets.east.keycloakAdminClientSecret"),
    ]


CONFIG_SET = re.compile(r"pulumi config set(?! --stack )")


def test_every_hint_that_writes_config_names_its_stack() -> None:
    """``pulumi config set`` without ``--stack`` writes whichever stack is selected: every
    command the tool prints (``secrets.set_secret``), the README and the stack files show
    name theirs (issue 25 item 5)."""
    files = [*sorted((ROOT / "gatewayctl").rglob("*.py")), ROOT / "README.md"]
    files += sorted((ROOT / "docs").glob("*.md"))
    files += sorted(ROOT.glob("Pulumi.*.yaml"))
    unnamed = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in files
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if CONFIG_SET.search(line)
    ]
    assert unnamed == []
    assert secrets.set_secret("aws", "clusterSecrets.c1.kubeconfig") == (
        "`pulumi config set --stack aws --secret --path 'clusterSecrets.c1.kubeconfig'`"
    )

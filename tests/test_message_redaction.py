"""No message echoes a secret written where it does not belong (issue 42 item 3): a scheme-less
``user:password@host`` and a secret pasted as a key under ``clusterSecrets`` are hidden at the
one point every message passes (``gatewayctl.errors.safe``), so the lines on stderr, the
``-o json|yaml`` problems document and the GitHub annotations never hold them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from gatewayctl.errors import Problem, redact_userinfo, safe
from tests.builders import CONFIG_FILE, PREFIX, cluster, write_stack
from tests.hostile_helpers import run_cli

DIGEST = "sha256:" + "0123456789abcdef" * 4


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("'admin:hunter2@db.example.com'", "'[secret]@db.example.com'"),
        ("host admin:p@ss:w0rd@db.internal:5432 is bad", "host [secret]@db.internal:5432 is bad"),
        ("(admin:x@10.0.0.1)", "([secret]@10.0.0.1)"),
        ("https://alice:s3cret@sso.example.com", "https://[secret]@sso.example.com"),
        (f"busybox:1.36@{DIGEST}", f"busybox:1.36@{DIGEST}"),
        (f"quay.io/org/img:v1@{DIGEST}", f"quay.io/org/img:v1@{DIGEST}"),
        ("bob@example.com", "bob@example.com"),
        ("ssh://[user@]host", "ssh://[user@]host"),
    ],
)
def test_scheme_less_user_info_is_hidden(text: str, shown: str) -> None:
    assert safe(text) == shown


def test_redact_userinfo_leaves_text_without_an_at_sign_as_it_is() -> None:
    assert redact_userinfo("at 12:30: admin:pw") == "at 12:30: admin:pw"


@pytest.mark.parametrize(
    ("field", "shown"),
    [
        (
            f"{PREFIX}clusterSecrets.c1.dbAdminPassword",
            f"{PREFIX}clusterSecrets.c1.dbAdminPassword",
        ),
        (f"{PREFIX}clusterSecrets.c1", f"{PREFIX}clusterSecrets.c1"),
        (f"{PREFIX}clusterSecrets.c1.Tr0ub4dor&3", f"{PREFIX}clusterSecrets.c1.[secret]"),
        (f"{PREFIX}clusterSecrets.c1.two words.x", f"{PREFIX}clusterSecrets.c1.[secret]"),
        (f"{PREFIX}clusterSecrets.P@ss:w0rd!", f"{PREFIX}clusterSecrets.[secret]"),
        (
            f"{PREFIX}clusterSecrets.c1.kubeconfig.inner",
            f"{PREFIX}clusterSecrets.c1.kubeconfig.[secret]",
        ),
        ("spec.credentials.vault.address", "spec.credentials.vault.address"),
    ],
)
def test_keys_under_cluster_secrets_that_are_no_known_name_are_hidden(
    field: str, shown: str
) -> None:
    problem = Problem(CONFIG_FILE, field, "unknown field")
    assert problem.field == shown
    assert problem.located_as == ("" if shown == field else field)
    assert field not in repr(problem) or shown == field


def test_a_message_naming_a_secret_key_in_text_hides_it() -> None:
    assert safe("clusterSecrets.c1.s3cr3t-value: refused") == "clusterSecrets.c1.[secret]: refused"


PASSWORD = "Zq9-hunter2"
PASTED = "Kx7-pasted-key"
ODD_CLUSTER = "Wv3!pasted"
HOST_MESSAGE = (
    "database host '[secret]@db.example.com' is not a lowercase RFC 1123 DNS name (labels of"
    " a-z, 0-9 and inner '-', separated by single dots)"
)


@pytest.fixture
def in_actions(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    return tmp_path


def test_a_password_pasted_into_a_host_reaches_no_output(in_actions: Path) -> None:
    database = {"host": f"admin:{PASSWORD}@db.example.com"}
    write_stack(in_actions, clusters={"c1": cluster(database=database)})

    outcome = run_cli("--root", str(in_actions), "validate", "test", "-o", "json")

    assert outcome.code == 2
    field = f"{PREFIX}clusters.c1.database.host"
    assert json.loads(outcome.out) == {
        "problems": [
            {
                "path": CONFIG_FILE,
                "line": 14,
                "column": 15,
                "field": field,
                "message": HOST_MESSAGE,
                "text": f"{CONFIG_FILE}:14:15: {field}: {HOST_MESSAGE}",
            }
        ]
    }
    assert outcome.err.splitlines() == [
        f"error: {CONFIG_FILE}:14:15: {field}: {HOST_MESSAGE}",
        "1 problem(s); nothing written",
        f"::error file={CONFIG_FILE},line=14,col=15::{field}: {HOST_MESSAGE}",
    ]


def test_a_secret_pasted_as_a_key_is_hidden_and_still_placed(in_actions: Path) -> None:
    secrets = {"c1": {"dbAdminPassword": "pw", PASTED: "x"}, ODD_CLUSTER: {"dbAdminPassword": "y"}}
    write_stack(in_actions, secrets=secrets)

    outcome = run_cli("--root", str(in_actions), "validate", "test", "-o", "yaml")

    assert outcome.code == 2
    cluster_key = f"{PREFIX}clusterSecrets.[secret]"
    secret_key = f"{PREFIX}clusterSecrets.c1.[secret]"
    assert outcome.err.splitlines() == [
        f"error: {CONFIG_FILE}:19:5: {cluster_key}: no such cluster in this stack",
        f"error: {CONFIG_FILE}:18:7: {secret_key}: unknown field",
        "2 problem(s); nothing written",
        f"::error file={CONFIG_FILE},line=19,col=5::{cluster_key}: no such cluster in this stack",
        f"::error file={CONFIG_FILE},line=18,col=7::{secret_key}: unknown field",
    ]
    assert [p["field"] for p in yaml.safe_load(outcome.out)["problems"]] == [
        cluster_key,
        secret_key,
    ]
    assert [s for s in (PASTED, ODD_CLUSTER) if s in outcome.out + outcome.err] == []

"""In a GitHub Actions job (``GITHUB_ACTIONS=true``) every problem is also printed as an
annotation, ``::error file=F,line=L,col=C::field: problem``, which the pull request shows on
the file's line (issue 25 item 4). The plain lines stay as they are."""

from __future__ import annotations

from pathlib import Path

import pytest

from gatewayctl.errors import Problem, annotation
from tests.builders import CONFIG_FILE, DECLARATIONS, PREFIX, head, write_declaration_text
from tests.builders import write_stack as build_stack
from tests.hostile_helpers import run_cli


@pytest.fixture
def in_actions(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A job whose workspace (the checkout) is ``tmp_path``."""
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    return tmp_path


def broken(root: Path) -> str:
    build_stack(root, secrets={"c1": {"dbAdminPasword": "Q7zx-secret"}})
    text = head("team-a") + "spec:\n  signIn: none\n  replicas: ten\n"
    return write_declaration_text(root, "team-a.yaml", text)


def test_each_problem_is_also_an_annotation_on_its_line(in_actions: Path) -> None:
    source = broken(in_actions)
    out = in_actions / "out"

    outcome = run_cli("--root", str(in_actions), "render", "test", "--out", str(out), "-q")

    assert outcome.code == 2
    assert not out.exists()
    lines = outcome.err.splitlines()
    # A misspelt secret's name is named and placed (a pasted secret is hidden, still placed:
    # tests/test_message_redaction.py).
    secret = f"{PREFIX}clusterSecrets.c1.dbAdminPasword"
    assert lines[-2:] == [
        f"::error file={CONFIG_FILE},line=17,col=7::{secret}: unknown field; did you mean"
        " 'dbAdminPassword'?",
        f"::error file={source},line=7,col=13::spec.replicas: Input should be a valid integer",
    ]
    # The plain lines first, as outside Actions; no value of a secret anywhere.
    assert lines[:3] == [
        f"error: {CONFIG_FILE}:17:7: {secret}: unknown field; did you mean 'dbAdminPassword'?",
        f"error: {source}:7:13: spec.replicas: Input should be a valid integer",
        "2 problem(s); nothing written",
    ]
    assert "Q7zx" not in outcome.printed


def test_paths_are_the_workspaces(in_actions: Path) -> None:
    root = in_actions / "checkout" / "project"
    source = broken(root)

    outcome = run_cli("--root", str(root), "validate", "test")

    assert f"::error file=checkout/project/{source},line=7,col=13::spec.replicas:" in outcome.err


@pytest.mark.parametrize("value", [None, "false", "1"])
def test_outside_actions_there_is_no_annotation(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, value: str | None
) -> None:
    if value is not None:
        monkeypatch.setenv("GITHUB_ACTIONS", value)
    broken(tmp_path)

    outcome = run_cli("--root", str(tmp_path), "validate", "test")

    assert outcome.code == 2
    assert "::error" not in outcome.err


def test_a_problem_of_no_file_is_a_plain_annotation(in_actions: Path) -> None:
    build_stack(in_actions)

    outcome = run_cli("--root", str(in_actions), "validate", "nope")

    assert outcome.code == 2
    assert outcome.err.splitlines()[-1] == (
        "::error::Pulumi.nope.yaml: no such stack; the stacks here are test"
    )


def test_the_runners_characters_are_escaped() -> None:
    problem = Problem(f"{DECLARATIONS}/a,b:c.yaml", "spec.x", "100% sure", line=3, column=1)

    assert annotation(problem, problem.path) == (
        f"::error file={DECLARATIONS}/a%2Cb%3Ac.yaml,line=3,col=1::spec.x: 100%25 sure"
    )
    assert annotation(Problem("f.yaml", "", "a\nb: 5%"), None) == "::error::f.yaml: a\\nb: 5%25"

"""Issue 46 items 4 and 6: ``make fmt`` fixes what ``make lint`` checks, the pre-commit
configuration runs the fast checks, and its commit-msg hook refuses a subject over 72
characters (``scripts/commit_msg.py``; CONTRIBUTING.md)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from scripts import commit_msg

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent


def recipe(target: str) -> list[str]:
    """The commands of a Makefile target, as written."""
    text = (ROOT / "Makefile").read_text()
    match = re.search(rf"^{target}:.*\n((?:\t.*\n)+)", text, re.M)
    assert match is not None, target
    return [line.strip() for line in match.group(1).splitlines()]


def test_a_subject_of_72_characters_passes_and_73_is_refused() -> None:
    assert commit_msg.problems("A" * 72 + "\n\nWhy.\n") == []
    assert commit_msg.problems("A" * 73 + "\n\nWhy.\n") == [
        "the subject is 73 characters; at most 72: put the why, the figures and the tests in"
        " the body, after a blank line"
    ]


def test_the_body_must_follow_a_blank_line() -> None:
    assert commit_msg.problems("Add a thing\nwhy it matters\n") == [
        "the second line is not blank: a blank line separates subject and body"
    ]
    assert commit_msg.problems("Add a thing.\n") == ["the subject ends with a full stop"]
    assert commit_msg.problems("# only a comment\n\n") == ["the message is empty"]


def test_comments_and_the_scissors_are_not_the_message() -> None:
    text = (
        "# Please enter the commit message\n"
        "Add a thing\n\nWhy.\n"
        f"{commit_msg.SCISSORS}\n" + "x" * 200 + "\n"
    )
    assert commit_msg.message_lines(text) == ["Add a thing", "", "Why."]
    assert commit_msg.problems(text) == []


def test_the_hook_exits_1_naming_the_rule(tmp_path: Path) -> None:
    message = tmp_path / "COMMIT_EDITMSG"
    message.write_text("B" * 80 + "\n")
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "commit_msg.py"), str(message)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (run.returncode, run.stdout) == (1, "")
    assert run.stderr == (
        "commit message: the subject is 80 characters; at most 72: put the why, the figures"
        ' and the tests in the body, after a blank line (CONTRIBUTING.md, "Commit messages")\n'
    )
    message.write_text("Add a thing\n")
    assert (
        subprocess.run([sys.executable, "scripts/commit_msg.py", str(message)], cwd=ROOT).returncode
        == 0
    )


def test_the_configuration_runs_lint_s_checks_and_the_message_rule() -> None:
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    assert config["default_install_hook_types"] == ["pre-commit", "commit-msg", "pre-push"]
    (local,) = config["repos"]
    hooks = {h["id"]: h for h in local["hooks"]}
    assert sorted(hooks) == ["commit-message", "mypy", "ruff-check", "ruff-format"]
    # The same tools and checks as `make lint`, from the same venv.
    lint = [line.replace("$(VENV)", ".venv") for line in recipe("lint")]
    assert lint == [".venv/bin/ruff check .", ".venv/bin/ruff format --check .", ".venv/bin/mypy"]
    assert hooks["ruff-check"]["entry"].startswith(".venv/bin/ruff check")
    assert hooks["ruff-format"]["entry"].startswith(".venv/bin/ruff format --check")
    assert (hooks["mypy"]["entry"], hooks["mypy"]["stages"]) == (".venv/bin/mypy", ["pre-push"])
    message = hooks["commit-message"]
    assert (message["entry"], message["stages"]) == (
        ".venv/bin/python scripts/commit_msg.py",
        ["commit-msg"],
    )
    assert recipe("hooks") == ["$(VENV)/bin/pre-commit install"]


def test_mypy_checks_the_tests_and_the_lane_strictly() -> None:
    """`make lint` and the pre-push hook run mypy without arguments: its files are these."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert {"tests", "e2e"} <= set(config["files"])
    assert config["strict"] is True


@pytest.mark.skipif(shutil.which("git") is None, reason="git is needed by pre-commit")
def test_pre_commit_runs_the_message_hook_and_refuses_a_long_subject(tmp_path: Path) -> None:
    """The real pre-commit (uv.lock's dev group) in a repository holding this configuration."""
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / ".pre-commit-config.yaml", repo)
    shutil.copy(ROOT / "scripts" / "commit_msg.py", repo / "scripts")
    (repo / ".venv").symlink_to(VENV_BIN.parent)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", ".pre-commit-config.yaml", "scripts"], check=True)
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache")}
    results = {}
    for name, subject in (("long", "C" * 73), ("short", "Add the hook")):
        message = tmp_path / name
        message.write_text(subject + "\n")
        run = subprocess.run(
            [
                str(VENV_BIN / "pre-commit"),
                "run",
                "commit-message",
                "--hook-stage",
                "commit-msg",
                "--commit-msg-filename",
                str(message),
            ],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        results[name] = (run.returncode, "the subject is 73 characters" in run.stdout)
    assert results == {"long": (1, True), "short": (0, False)}


def test_make_fmt_fixes_what_lint_checks(tmp_path: Path) -> None:
    """An unsorted import and bad formatting: ``make fmt``'s commands fix both, and the lint's
    two ruff checks then pass."""
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    source = tmp_path / "messy.py"
    source.write_text("import sys\nimport os\nx=[1,2 ,3]\nprint(os.sep,sys.argv,x)\n")
    ruff = str(VENV_BIN / "ruff")

    def ok(*args: str) -> bool:
        return subprocess.run([ruff, *args], cwd=tmp_path, capture_output=True).returncode == 0

    assert (ok("check", "."), ok("format", "--check", ".")) == (False, False)
    fmt = [line.replace("$(VENV)/bin/ruff ", "") for line in recipe("fmt")]
    assert fmt == ["check --fix .", "format ."]
    for command in fmt:
        assert ok(*command.split())
    assert (ok("check", "."), ok("format", "--check", ".")) == (True, True)
    assert (
        source.read_text() == "import os\nimport sys\n\nx = [1, 2, 3]\nprint(os.sep, sys.argv, x)\n"
    )


def test_the_regeneration_commands_print_the_committed_files() -> None:
    """Each ``gatewayctl schema ... > FILE`` line of CONTRIBUTING.md prints FILE as committed."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    lines = re.findall(r"^\.venv/bin/python -m gatewayctl (schema[^>\n]*?) > (\S+)", text, re.M)
    assert {file for _, file in lines} == {
        "schemas/gateway.schema.json",
        "docs/reference.md",
        "schemas/stack.schema.json",
        "docs/stack-reference.md",
    }
    for words, file in lines:
        done = subprocess.run(
            [sys.executable, "-m", "gatewayctl", *words.split()],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        assert done.stdout == (ROOT / file).read_text(encoding="utf-8"), file

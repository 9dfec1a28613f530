"""The GitHub workflows: they parse, pin every action, use the README's commands, and their
shell steps treat exit codes as documented (run here with fake ``python``, ``pulumi``, ``gh``).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT

WORKFLOWS = ROOT / ".github" / "workflows"
README = ROOT / "README.md"
FILES = ("pull-request.yml", "deploy.yml", "drift.yml")
PIN = re.compile(r"^[\w.-]+/[\w.-]+(?:/[\w./-]+)?@(?:[0-9a-f]{40}|v\d+\.\d+\.\d+)$")
SHA_PIN = re.compile(r"@([0-9a-f]{40})\s+#\s*(v\d+\.\d+\.\d+)\s*$")
# Flags that only address the stack or silence prompts in CI; the README's commands run on a
# selected stack in a terminal.
CI_ONLY = {"--stack": 1, "-s": 1, "--non-interactive": 0, "--yes": 0, "-y": 0}

needs_bash = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def load(name: str) -> dict[Any, Any]:
    document = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    assert isinstance(document, dict)
    return document


def triggers(document: dict[Any, Any]) -> dict[str, Any]:
    # YAML 1.1 reads the bare key `on` as the boolean True.
    value = document.get("on", document.get(True))
    assert isinstance(value, dict)
    return value


def all_steps() -> Iterator[tuple[str, str, dict[str, Any]]]:
    for name in FILES:
        for job_name, job in load(name)["jobs"].items():
            for step in job["steps"]:
                yield name, job_name, step


def step(name: str, job: str, title_part: str) -> dict[str, Any]:
    found = [s for s in load(name)["jobs"][job]["steps"] if title_part in s.get("name", "")]
    assert len(found) == 1, f"{name}: one step named like {title_part!r} in {job}"
    assert isinstance(found[0], dict)
    return found[0]


def readme() -> str:
    return README.read_text(encoding="utf-8")


# --- shape ------------------------------------------------------------------------------------


def test_the_three_workflows_exist_and_parse() -> None:
    assert sorted(p.name for p in WORKFLOWS.glob("*.yml")) == sorted(FILES)
    for name in FILES:
        document = load(name)
        assert document["name"]
        assert triggers(document)
        for job in document["jobs"].values():
            assert job["runs-on"].startswith("ubuntu-")
            assert job["timeout-minutes"] > 0
            assert job["steps"]


def test_triggers() -> None:
    assert triggers(load("pull-request.yml"))["pull_request"]["branches"] == ["main"]
    assert triggers(load("deploy.yml"))["push"]["branches"] == ["main"]
    schedule = triggers(load("drift.yml"))["schedule"]
    assert len(schedule) == 1
    assert len(schedule[0]["cron"].split()) == 5


def test_permissions_are_least_privilege() -> None:
    assert load("pull-request.yml")["permissions"] == {"contents": "read"}
    assert load("pull-request.yml")["jobs"]["diff"]["permissions"] == {
        "contents": "read",
        "pull-requests": "write",
    }
    assert load("deploy.yml")["permissions"] == {"contents": "read"}
    assert load("drift.yml")["permissions"] == {"contents": "read", "issues": "write"}


# --- pinning ----------------------------------------------------------------------------------


def test_every_action_is_pinned_to_a_commit_or_an_exact_version() -> None:
    uses = [(name, s["uses"]) for name, _, s in all_steps() if "uses" in s]
    assert uses
    for name, ref in uses:
        assert PIN.match(ref), f"{name}: {ref} is not pinned to a full SHA or vX.Y.Z"


def test_commit_pins_name_their_version_and_agree_across_workflows() -> None:
    pins: dict[str, set[str]] = {}
    for name in FILES:
        for line in (WORKFLOWS / name).read_text(encoding="utf-8").splitlines():
            if "uses:" not in line:
                continue
            action = line.split("uses:", 1)[1].strip().split("@", 1)[0]
            if re.search(r"@[0-9a-f]{40}", line):
                match = SHA_PIN.search(line)
                assert match, f"{name}: {line.strip()} lacks a `# vX.Y.Z` comment"
                pins.setdefault(action, set()).add(f"{match[1]} {match[2]}")
    assert {action for action in pins} >= {
        "actions/checkout",
        "actions/setup-python",
        "marocchino/sticky-pull-request-comment",
        "pulumi/actions",
    }
    for action, versions in pins.items():
        assert len(versions) == 1, f"{action} is pinned differently: {sorted(versions)}"


# --- commands ---------------------------------------------------------------------------------


def _strip_ci_flags(words: list[str]) -> list[str]:
    kept, skip = [], 0
    for word in words:
        if skip:
            skip -= 1
        elif word in CI_ONLY:
            skip = CI_ONLY[word]
        else:
            kept.append(word)
    return kept


def commands() -> set[str]:
    """Every make, ``python -m stacks`` and pulumi command the workflows run, normalised."""
    found: set[str] = set()
    for _, _, s in all_steps():
        if "run" in s:
            for line in s["run"].splitlines():
                try:
                    words = shlex.split(line, comments=True)
                except ValueError:
                    continue
                if not words:
                    continue
                if words[0] == "make":
                    found.add(" ".join(words[:2]))
                elif words[0].endswith("python") and words[1:3] == ["-m", "stacks"]:
                    flags = [w for w in words[4:] if w.startswith("--")]
                    found.add(" ".join(["python -m stacks", words[3], *flags]))
                elif words[0] == "pulumi":
                    flags = [w for w in _strip_ci_flags(words[2:]) if w.startswith("-")]
                    found.add(" ".join(["pulumi", words[1], *flags]))
        elif s.get("uses", "").startswith("pulumi/actions@") and "command" in s.get("with", {}):
            inputs = s["with"]
            flags = [
                f"--{flag}"
                for flag in ("diff", "refresh", "expect-no-changes")
                if str(inputs.get(flag, "false")).lower() == "true"
            ]
            found.add(" ".join(["pulumi", inputs["command"], *flags]))
    return found


def test_the_workflows_run_the_expected_commands() -> None:
    assert commands() == {
        "make test",
        "make validate",
        "python -m stacks diff --base --output",
        "pulumi preview --diff",
        "pulumi up",
        "pulumi refresh --preview-only --expect-no-changes",
    }


def test_every_command_is_one_the_readme_documents() -> None:
    text = readme()
    for command in sorted(commands()):
        if command.startswith("python -m stacks "):
            name = " ".join(command.split()[:4])
            assert name in text, f"README does not document {name}"
            lines = [line for line in text.splitlines() if name in line]
            for flag in command.split()[4:]:
                assert any(flag in line for line in lines), f"README: {name} {flag}"
        else:
            assert command in text, f"README does not document `{command}`"
    assert "pulumi up --refresh" in text  # the drift remediation


def test_no_expression_is_expanded_inside_a_shell_script() -> None:
    # Values reach scripts through `env:`; `${{ }}` in a script is a script-injection risk.
    for name, job, s in all_steps():
        if "run" in s:
            assert "${{" not in s["run"], f"{name} {job}: {s.get('name')}"


def test_the_pulumi_token_only_reaches_pulumi_steps() -> None:
    for name, job, s in all_steps():
        env = s.get("env", {})
        if "PULUMI_ACCESS_TOKEN" in env:
            runs_pulumi = s.get("uses", "").startswith("pulumi/actions@") or "pulumi " in s.get(
                "run", ""
            )
            assert runs_pulumi, f"{name} {job}: {s.get('name')} gets the token"
    for name in FILES:
        for job in load(name)["jobs"].values():
            assert "PULUMI_ACCESS_TOKEN" not in job.get("env", {})


# --- pull requests ------------------------------------------------------------------------------


def test_pull_request_diff_job_per_stack_with_the_base_branch_fetched() -> None:
    job = load("pull-request.yml")["jobs"]["diff"]
    assert job["strategy"]["matrix"]["stack"] == ["ibm", "aws", "local"]
    assert job["strategy"]["fail-fast"] is False
    checkout = job["steps"][0]
    assert checkout["uses"].startswith("actions/checkout@")
    assert checkout["with"]["fetch-depth"] == 0
    assert job["env"]["BASE_REF"] == "${{ github.base_ref }}"
    assert (
        job["env"]["SAME_REPOSITORY"]
        == "${{ github.event.pull_request.head.repo.full_name == github.repository }}"
    )
    assert job["env"]["HAS_PULUMI_TOKEN"] == "${{ secrets.PULUMI_ACCESS_TOKEN != '' }}"


def test_pull_request_comment_is_sticky_per_stack_and_not_for_forks() -> None:
    comment = step("pull-request.yml", "diff", "Sticky pull request comment")
    assert comment["uses"].startswith("marocchino/sticky-pull-request-comment@")
    assert comment["with"] == {
        "header": "offline-diff-${{ matrix.stack }}",
        "path": "${{ env.REPORT }}",
    }
    assert "always()" in comment["if"]
    assert "env.SAME_REPOSITORY == 'true'" in comment["if"]


def test_pull_request_preview_only_with_credentials_and_never_for_forks() -> None:
    preview = step("pull-request.yml", "diff", "pulumi preview --diff")
    assert preview["uses"].startswith("pulumi/actions@")
    assert preview["with"]["command"] == "preview"
    assert preview["with"]["diff"] is True
    condition = preview["if"]
    assert "matrix.stack != 'local'" in condition
    assert "env.HAS_PULUMI_TOKEN == 'true'" in condition
    assert "env.SAME_REPOSITORY == 'true'" in condition
    assert preview["env"] == {"PULUMI_ACCESS_TOKEN": "${{ secrets.PULUMI_ACCESS_TOKEN }}"}


def fake(bin_dir: Path, name: str, script: str) -> None:
    bin_dir.mkdir(parents=True, exist_ok=True)
    path = bin_dir / name
    path.write_text("#!/usr/bin/env bash\n" + textwrap.dedent(script), encoding="utf-8")
    path.chmod(0o755)


def run_script(script: str, cwd: Path, env: dict[str, str]) -> tuple[int, dict[str, str]]:
    """Run a step's script as the runner does (``bash -e``); return its code and outputs."""
    output = cwd / "github-output"
    output.write_text("", encoding="utf-8")
    (cwd / "script.sh").write_text(script, encoding="utf-8")
    done = subprocess.run(
        ["bash", "-e", "script.sh"],
        cwd=cwd,
        env={**os.environ, **env, "GITHUB_OUTPUT": str(output)},
        capture_output=True,
        text=True,
        check=False,
    )
    pairs = [line.split("=", 1) for line in output.read_text(encoding="utf-8").splitlines()]
    return done.returncode, {k: v for k, v in pairs}


@needs_bash
@pytest.mark.parametrize(
    ("code", "step_code", "changes"),
    [(0, 0, "false"), (3, 0, "true"), (2, 1, None), (1, 1, None)],
)
def test_pull_request_diff_step_treats_3_as_changes_and_2_or_1_as_failures(
    tmp_path: Path, code: int, step_code: int, changes: str | None
) -> None:
    fake(
        tmp_path / ".venv" / "bin",
        "python",
        """\
        echo "$*" > python-args
        while [ $# -gt 0 ]; do
          if [ "$1" = "--output" ]; then printf 'the report\\n' > "$2"; fi
          shift
        done
        exit "$FAKE_CODE"
        """,
    )
    (tmp_path / "build").mkdir()
    script = step("pull-request.yml", "diff", "Offline diff")["run"]
    env = {
        "FAKE_CODE": str(code),
        "STACK": "ibm",
        "BASE_REF": "main",
        "REPORT": "build/report.md",
        "RUN_URL": "https://example.invalid/run/1",
    }
    result, outputs = run_script(script, tmp_path, env)
    assert result == step_code
    assert outputs["exit-code"] == str(code)
    assert outputs.get("changes") == changes
    args = (tmp_path / "python-args").read_text(encoding="utf-8").split()
    expected = ["-m", "stacks", "diff", "ibm", "--base", "origin/main", "--output"]
    assert args == [*expected, "build/report.md"]
    report = (tmp_path / "build/report.md").read_text(encoding="utf-8")
    if step_code == 0:
        assert report == "the report\n"
    else:
        assert report.startswith("## Offline diff: stack `ibm`\n")
        assert f"failed with exit code {code}" in report


# --- merge to main -----------------------------------------------------------------------------


def test_deploy_runs_pulumi_up_per_stack_in_its_environment() -> None:
    job = load("deploy.yml")["jobs"]["up"]
    assert job["strategy"]["matrix"]["stack"] == ["ibm", "aws"]  # local is not deployed
    assert job["environment"] == "${{ matrix.stack }}"
    assert job["concurrency"] == {
        "group": "pulumi-${{ matrix.stack }}",
        "cancel-in-progress": False,
    }
    up = step("deploy.yml", "up", "pulumi up")
    assert up["uses"].startswith("pulumi/actions@")
    assert up["with"]["command"] == "up"
    assert up["with"]["stack-name"] == "${{ env.PULUMI_STACK }}"


# --- drift --------------------------------------------------------------------------------------


def test_drift_runs_per_stack_in_its_environment_sharing_the_deploy_lock() -> None:
    job = load("drift.yml")["jobs"]["refresh"]
    assert job["strategy"]["matrix"]["stack"] == ["ibm", "aws"]
    assert job["environment"] == "${{ matrix.stack }}"
    assert job["concurrency"] == load("deploy.yml")["jobs"]["up"]["concurrency"]


@needs_bash
@pytest.mark.parametrize(
    ("code", "step_code", "drift"),
    [(0, 0, "false"), (7, 0, "true"), (1, 1, None), (2, 1, None), (255, 1, None)],
)
def test_drift_check_treats_7_as_drift_and_other_codes_as_errors(
    tmp_path: Path, code: int, step_code: int, drift: str | None
) -> None:
    fake(tmp_path / "bin", "pulumi", 'echo "$*" > pulumi-args\nexit "$FAKE_CODE"\n')
    script = step("drift.yml", "refresh", "Drift check")["run"]
    env = {
        "FAKE_CODE": str(code),
        "STACK": "aws",
        "PULUMI_STACK": "acme/aws",
        "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
    }
    result, outputs = run_script(script, tmp_path, env)
    assert result == step_code
    assert outputs.get("drift") == drift
    args = (tmp_path / "pulumi-args").read_text(encoding="utf-8").split()
    assert args == [
        "refresh",
        "--preview-only",
        "--expect-no-changes",
        "--stack",
        "acme/aws",
        "--non-interactive",
    ]


FAKE_GH = """\
echo "$*" >> gh-calls
if [ "$1 $2" = "issue list" ]; then printf '%s' "$FAKE_OPEN_ISSUE"; fi
"""


@needs_bash
@pytest.mark.parametrize(("open_issue", "call"), [("", "issue create"), ("42", "issue comment 42")])
def test_drift_opens_an_issue_or_comments_on_the_open_one(
    tmp_path: Path, open_issue: str, call: str
) -> None:
    report = step("drift.yml", "refresh", "Open or update the drift issue")
    assert report["if"] == "steps.refresh.outputs.drift == 'true'"
    assert report["env"] == {"GH_TOKEN": "${{ github.token }}"}
    fake(tmp_path / "bin", "gh", FAKE_GH)
    env = {
        "FAKE_OPEN_ISSUE": open_issue,
        "STACK": "ibm",
        "GITHUB_REPOSITORY": "acme/gateways",
        "RUN_URL": "https://example.invalid/run/7",
        "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
    }
    result, _ = run_script(report["run"], tmp_path, env)
    assert result == 0
    calls = (tmp_path / "gh-calls").read_text(encoding="utf-8").splitlines()
    assert calls[0].startswith("issue list --repo acme/gateways --state open")
    assert calls[1].startswith(call)
    if open_issue == "":
        assert "--title Drift detected in stack ibm" in calls[1]
    body = (tmp_path / "drift-issue.md").read_text(encoding="utf-8")
    assert "`pulumi refresh --preview-only --expect-no-changes` exited with code 7" in body
    assert "`pulumi up --refresh`" in body
    assert "https://example.invalid/run/7" in body


@needs_bash
@pytest.mark.parametrize(("open_issue", "calls"), [("", 1), ("42", 2)])
def test_a_clean_check_closes_the_open_drift_issue(
    tmp_path: Path, open_issue: str, calls: int
) -> None:
    close = step("drift.yml", "refresh", "Close the drift issue")
    assert close["if"] == "steps.refresh.outputs.drift == 'false'"
    fake(tmp_path / "bin", "gh", FAKE_GH)
    env = {
        "FAKE_OPEN_ISSUE": open_issue,
        "STACK": "ibm",
        "GITHUB_REPOSITORY": "acme/gateways",
        "RUN_URL": "https://example.invalid/run/8",
        "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
    }
    result, _ = run_script(close["run"], tmp_path, env)
    assert result == 0
    made = (tmp_path / "gh-calls").read_text(encoding="utf-8").splitlines()
    assert len(made) == calls
    if open_issue:
        assert made[1].startswith("issue close 42 --repo acme/gateways --comment")

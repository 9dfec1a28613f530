"""The pull-request workflow (``.github/workflows/pull-request.yml``): one offline diff job per
stack, its sticky comment, and previews of unmerged code in protected environments, never for
forks; its shell steps run with fake commands, its conditions evaluated as GitHub would."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from gatewayctl.cli import main as cli
from tests.gh_expressions import evaluate, interpolate
from tests.workflow_helpers import (
    CREDENTIAL_CASES,
    FILES,
    TOKEN,
    fake,
    index_of,
    load,
    needs_bash,
    run_script,
    step,
    steps_of,
)

# --- pull requests ------------------------------------------------------------------------------


def test_pull_request_diff_job_per_stack_with_the_base_branch_fetched() -> None:
    job = load("pull-request.yml")["jobs"]["diff"]
    # One job per stack the first job lists; none when it lists none.
    assert job["needs"] == "stacks"
    for listed, runs in (("[]", False), ('["aws"]', True), ('["aws","ibm","local"]', True)):
        context = {"needs": {"stacks": {"outputs": {"stacks": listed}}}}
        assert evaluate(job["if"], context) is runs
        assert evaluate(job["strategy"]["matrix"]["stack"], context) == json.loads(listed)
    assert job["strategy"]["fail-fast"] is False
    checkout = job["steps"][0]
    assert checkout["uses"].startswith("actions/checkout@")
    assert checkout["with"]["fetch-depth"] == 0
    assert job["env"]["BASE_REF"] == "${{ github.base_ref }}"
    assert (
        job["env"]["SAME_REPOSITORY"]
        == "${{ github.event.pull_request.head.repo.full_name == github.repository }}"
    )
    # The diff runs the pull request's code: it sees no secret, not even whether one exists.
    assert "secrets." not in yaml.safe_dump(job)


def test_pull_request_comment_is_sticky_per_stack_and_not_for_forks() -> None:
    comment = step("pull-request.yml", "diff", "Sticky pull request comment")
    assert comment["uses"].startswith("marocchino/sticky-pull-request-comment@")
    assert comment["with"] == {
        "header": "offline-diff-${{ matrix.stack }}",
        "path": "${{ env.REPORT }}",
    }
    assert "always()" in comment["if"]
    assert "env.SAME_REPOSITORY == 'true'" in comment["if"]


# --- pull requests: previews of unmerged code -------------------------------------------------

REPOSITORY = "acme/gateways"


def pr_context(
    *, fork: bool, secrets: dict[str, str], stack: str = "ibm", preview: str = '["ibm","aws"]'
) -> dict[str, Any]:
    head = "mallory/gateways" if fork else REPOSITORY
    return {
        "needs": {"changed": {"outputs": {"preview": preview}}},
        "github": {
            "repository": REPOSITORY,
            "event": {"pull_request": {"head": {"repo": {"full_name": head}}}},
        },
        "secrets": secrets,
        "vars": {},
        "matrix": {"stack": stack},
    }


def job_env(name: str, job: str, context: dict[str, Any]) -> dict[str, str]:
    """A job's ``env:`` as the runner sets it."""
    env = load(name)["jobs"][job].get("env", {})
    return {key: interpolate(str(value), context) for key, value in env.items()}


def test_the_preview_runs_only_in_its_protected_environment_and_never_for_forks() -> None:
    job = load("pull-request.yml")["jobs"]["preview"]
    assert job["needs"] == ["credentials", "changed"]
    for stack in ("ibm", "aws"):
        context = pr_context(fork=False, secrets={}, stack=stack)
        assert interpolate(job["environment"], context) == f"preview-{stack}"
    assert evaluate(job["if"], pr_context(fork=True, secrets={})) is False
    assert evaluate(job["if"], pr_context(fork=False, secrets={})) is True
    # Only the stacks whose offline render changes (the `changed` job), none: no job at all.
    for listed, runs in (("[]", False), ('["aws"]', True), ('["ibm","aws"]', True)):
        context = pr_context(fork=False, secrets={}, preview=listed)
        assert evaluate(job["if"], context) is runs
        assert evaluate(job["strategy"]["matrix"]["stack"], context) == json.loads(listed)


def secret_references(name: str) -> list[tuple[str, str, str]]:
    """(job, where, value) of every ``secrets.`` reference of a workflow."""
    found = []
    for job_name, job in load(name)["jobs"].items():
        for key, value in job.get("env", {}).items():
            if "secrets." in str(value):
                found.append((job_name, f"env.{key}", str(value)))
        for s in job["steps"]:
            for key, value in s.get("env", {}).items():
                if "secrets." in str(value):
                    found.append((job_name, f"{s.get('name', s.get('uses'))}: {key}", str(value)))
            assert "secrets." not in str(s.get("with", {})), f"{name} {job_name}"
    return found


HAS_TOKEN = "${{ secrets.PULUMI_ACCESS_TOKEN != '' }}"


def test_pull_requests_see_a_token_only_in_the_preview_environment() -> None:
    assert secret_references("pull-request.yml") == [
        ("credentials", "env.REPOSITORY_TOKEN", HAS_TOKEN),
        ("preview", "env.HAS_PULUMI_TOKEN", HAS_TOKEN),
        ("preview", "pulumi preview --diff (with the policy pack): PULUMI_ACCESS_TOKEN", TOKEN),
    ]


def test_a_token_value_is_only_handed_out_inside_an_environment() -> None:
    for name in FILES:
        for job_name, where, value in secret_references(name):
            if value == TOKEN:
                environment = load(name)["jobs"][job_name].get("environment")
                assert environment, f"{name} {job_name} {where}: token outside an environment"
                if name == "pull-request.yml":
                    assert environment.startswith("preview-")


@needs_bash
@pytest.mark.parametrize(
    ("fork", "secrets", "code"),
    [
        (False, {}, 0),
        (True, {}, 0),  # a fork's run sees no secret at all
        (False, {"PULUMI_ACCESS_TOKEN": "pul-123"}, 1),  # repository or organisation level
    ],
)
def test_a_repository_level_token_fails_the_pull_request(
    tmp_path: Path, fork: bool, secrets: dict[str, str], code: int
) -> None:
    job = load("pull-request.yml")["jobs"]["credentials"]
    assert "environment" not in job  # so only repository and organisation secrets resolve
    env = job_env("pull-request.yml", "credentials", pr_context(fork=fork, secrets=secrets))
    (only,) = job["steps"]
    result, _ = run_script(only["run"], tmp_path, env)
    assert result == code


@needs_bash
@pytest.mark.parametrize(("backend", "has_token", "ready"), CREDENTIAL_CASES)
def test_the_preview_needs_the_backends_credentials(
    tmp_path: Path, backend: str, has_token: str, ready: bool
) -> None:
    check = step("pull-request.yml", "preview", "Credentials for the backend")
    assert check["id"] == "credentials"
    env = {"STACK": "ibm", "HAS_PULUMI_TOKEN": has_token, "PULUMI_BACKEND_URL": backend}
    done = subprocess.run(
        ["bash", "-e", "-c", check["run"]],
        cwd=tmp_path,
        env={**os.environ, **env, "GITHUB_OUTPUT": str(tmp_path / "out")},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0
    assert (tmp_path / "out").read_text(encoding="utf-8") == f"ready={str(ready).lower()}\n"
    notice = "::notice::Environment preview-ibm has no PULUMI_ACCESS_TOKEN secret"
    assert (notice in done.stdout) == (not ready)


def test_every_preview_step_after_the_check_waits_for_credentials() -> None:
    steps = load("pull-request.yml")["jobs"]["preview"]["steps"]
    assert steps[0]["id"] == "credentials"
    for s in steps[1:]:
        condition = s["if"]
        for ready, expected in (("true", True), ("false", False)):
            context = {"steps": {"credentials": {"outputs": {"ready": ready}}}}
            assert evaluate(condition, context) is expected, s.get("name", s.get("uses"))


@needs_bash
@pytest.mark.parametrize(
    ("scenario", "fork", "repository_secrets", "environment_secrets", "outcome"),
    [
        ("fork", True, {}, {}, "offline diff only"),
        ("same-repository branch", False, {}, {"PULUMI_ACCESS_TOKEN": "t"}, "preview"),
        ("missing token", False, {}, {}, "no preview (notice)"),
        ("token at repository level", False, {"PULUMI_ACCESS_TOKEN": "t"}, {}, "failed"),
    ],
)
def test_pull_request_conditions_end_to_end(
    tmp_path: Path,
    scenario: str,
    fork: bool,
    repository_secrets: dict[str, str],
    environment_secrets: dict[str, str],
    outcome: str,
) -> None:
    """What each kind of pull request gets: the credentials job's script, the preview job's
    condition, its environment's secrets and its credentials step, chained as GitHub does
    (a job runs only when the jobs it needs succeeded)."""
    name = "pull-request.yml"
    outside = pr_context(fork=fork, secrets=repository_secrets)
    (check,) = load(name)["jobs"]["credentials"]["steps"]
    code, _ = run_script(check["run"], tmp_path, job_env(name, "credentials", outside))
    if code != 0:
        assert outcome == "failed", scenario
        return
    preview = load(name)["jobs"]["preview"]
    if not evaluate(preview["if"], outside):
        assert outcome == "offline diff only", scenario
        return
    # Inside the environment (after its reviewers approved): its secrets, then the repository's.
    inside = pr_context(fork=fork, secrets=repository_secrets | environment_secrets)
    env = job_env(name, "preview", inside)
    _, outputs = run_script(preview["steps"][0]["run"], tmp_path, env)
    runs = evaluate(preview["steps"][-1]["if"], {"steps": {"credentials": {"outputs": outputs}}})
    assert outcome == ("preview" if runs else "no preview (notice)"), scenario


def test_the_preview_step_gets_the_token_and_shows_the_diff() -> None:
    preview = step("pull-request.yml", "preview", "pulumi preview --diff")
    assert preview["uses"].startswith("pulumi/actions@")
    assert preview["with"]["command"] == "preview"
    assert preview["with"]["diff"] is True
    assert preview["env"] == {"PULUMI_ACCESS_TOKEN": TOKEN, "PULUMI_SKIP_CHECKPOINTS": "true"}


@needs_bash
@pytest.mark.parametrize(
    ("code", "step_code", "changes"),
    [(0, 0, "false"), (3, 0, "true"), (7, 1, None), (2, 1, None), (1, 1, None)],
)
def test_pull_request_diff_step_treats_3_as_changes_and_2_or_1_as_failures(
    tmp_path: Path, code: int, step_code: int, changes: str | None
) -> None:
    fake(
        tmp_path / ".venv" / "bin",
        "python",
        """\
        echo "$*" > python-args
        echo "the summary"
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
        "SUMMARY": "build/diff-summary/ibm.json",
        "RUN_URL": "https://example.invalid/run/1",
    }
    result, outputs = run_script(script, tmp_path, env)
    assert result == step_code
    assert outputs["exit-code"] == str(code)
    assert outputs.get("changes") == changes
    args = (tmp_path / "python-args").read_text(encoding="utf-8").split()
    expected = ["-m", "gatewayctl", "diff", "ibm", "--base", "origin/main", "--output"]
    assert args == [*expected, "build/report.md", "--format", "json"]
    # The summary (stdout) is the record the `changed` job reads.
    assert (tmp_path / "build/diff-summary/ibm.json").read_text() == "the summary\n"
    report = (tmp_path / "build/report.md").read_text(encoding="utf-8")
    if step_code == 0 or code == 7:  # 7: refused, the report says why (decommissioning.md)
        assert report == "the report\n"
    else:
        assert report.startswith("## Offline diff: stack `ibm`\n")
        assert f"failed with exit code {code}" in report


# --- pull requests: one diff job per stack ------------------------------------------------------


@needs_bash
def test_the_first_job_lists_the_stacks_as_json(tmp_path: Path) -> None:
    listing = step("pull-request.yml", "stacks", "python -m gatewayctl stacks")
    assert listing["id"] == "list"
    assert load("pull-request.yml")["jobs"]["stacks"]["outputs"] == {
        "stacks": "${{ steps.list.outputs.stacks }}"
    }
    fake(tmp_path / "bin", "make", 'echo "make $*" >> make-calls\n')
    fake(
        tmp_path / ".venv" / "bin",
        "python",
        'echo "$*" >> python-calls\nprintf \'["aws","ibm"]\\n\'\n',
    )
    env = {"PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    code, outputs = run_script(listing["run"], tmp_path, env)
    assert code == 0
    assert (tmp_path / "make-calls").read_text() == "make setup\n"
    assert (tmp_path / "python-calls").read_text() == "-m gatewayctl stacks\n"
    assert outputs == {"stacks": '["aws","ibm"]'}


def test_the_stacks_command_lists_every_committed_stack(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["stacks"]) == 0
    assert capsys.readouterr().out == '["aws","ibm","local"]\n'


def test_each_diff_job_keeps_the_base_render_in_the_actions_cache() -> None:
    from gatewayctl.diff import cache

    steps = steps_of("pull-request.yml", "diff")
    kept = steps[index_of(steps, "Base render cache")]
    assert kept["uses"].startswith("actions/cache@")
    assert kept["with"]["path"] == cache.DIRECTORY.as_posix()
    key = kept["with"]["key"]
    assert "${{ matrix.stack }}" in key
    assert "${{ github.event.pull_request.base.sha }}" in key
    assert "restore-keys" not in kept["with"]  # an entry of another base is never restored
    assert index_of(steps, "Base render cache") < index_of(steps, "Offline diff against")


@needs_bash
@pytest.mark.parametrize(
    ("listed", "diffs", "stacks", "code"),
    [
        ("success", "success", '["aws","ibm"]', 0),
        ("success", "failure", '["aws","ibm"]', 1),  # one stack's diff failed
        ("success", "cancelled", '["aws"]', 1),
        ("success", "skipped", "[]", 0),  # no stack: nothing to diff
        ("success", "skipped", '["aws"]', 1),
        ("failure", "skipped", "", 1),
    ],
)
def test_one_check_says_whether_every_stacks_diff_completed(
    tmp_path: Path, listed: str, diffs: str, stacks: str, code: int
) -> None:
    job = load("pull-request.yml")["jobs"]["diff-result"]
    assert job["needs"] == ["stacks", "diff"]
    assert job["if"] == "always()"  # also when a diff job failed: that is what it reports
    context = {"needs": {"stacks": {"outputs": {"stacks": stacks}, "result": listed}}}
    context["needs"]["diff"] = {"result": diffs}
    env = job_env("pull-request.yml", "diff-result", context)
    assert env == {"STACKS": stacks, "LISTED": listed, "DIFFS": diffs}
    (only,) = job["steps"]
    result, _ = run_script(only["run"], tmp_path, env)
    assert result == code


# --- pull requests: previews only for the stacks whose render changes ---------------------------


def test_each_diff_job_uploads_its_summary_for_the_previews() -> None:
    job = load("pull-request.yml")["jobs"]["diff"]
    assert job["env"]["SUMMARY"] == "build/diff-summary/${{ matrix.stack }}.json"
    upload = step("pull-request.yml", "diff", "Record whether the stack changes")
    assert upload["uses"].startswith(
        "actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02"
    )
    # Only after a diff that completed (no `if: always()`): a failed diff leaves no record,
    # and the `changed` job, which needs every diff job, does not run.
    assert "if" not in upload
    assert upload["with"] == {
        "name": "diff-summary-${{ matrix.stack }}",
        "path": "${{ env.SUMMARY }}",
        "if-no-files-found": "error",
        "retention-days": 1,
    }
    changed = load("pull-request.yml")["jobs"]["changed"]
    assert changed["needs"] == "diff"
    assert changed["outputs"] == {"preview": "${{ steps.list.outputs.preview }}"}
    download = step("pull-request.yml", "changed", "Every diff job's record")
    assert download["uses"].startswith(
        "actions/download-artifact@d3f86a106a0bac45b974a628896c90dbdf5c8093"
    )
    assert download["with"] == {
        "pattern": "diff-summary-*",
        "path": "build/diff-summary",
        "merge-multiple": True,
    }


@needs_bash
def test_the_changed_job_lists_the_deployed_stacks_whose_render_changes(tmp_path: Path) -> None:
    listing = step("pull-request.yml", "changed", "python -m gatewayctl stacks --changed")
    job = load("pull-request.yml")["jobs"]["changed"]
    assert "env" not in job  # the deployed stacks are deploy/stacks.yaml's, as deploy.yml's
    fake(tmp_path / "bin", "make", 'echo "make $*" >> make-calls\n')
    fake(
        tmp_path / ".venv" / "bin",
        "python",
        'echo "$*" >> python-calls\nprintf \'["aws"]\\n\'\n',
    )
    env = {"PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    code, outputs = run_script(listing["run"], tmp_path, env)
    assert code == 0
    assert (tmp_path / "make-calls").read_text() == "make setup\n"
    assert (tmp_path / "python-calls").read_text() == (
        "-m gatewayctl stacks --changed build/diff-summary --deployed\n"
    )
    assert outputs == {"preview": '["aws"]'}
    # A stack without a record fails the job (exit 2), so no preview runs blind.
    fake(tmp_path / ".venv" / "bin", "python", "exit 2\n")
    code, outputs = run_script(listing["run"], tmp_path, env)
    assert (code, outputs) == (2, {})

"""The GitHub workflows: they parse, pin every action, use the README's commands, and their
shell steps treat exit codes as documented (run here with fake ``python``, ``pulumi``, ``gh``);
their conditions are evaluated as GitHub would (``tests.gh_expressions``).
"""

from __future__ import annotations

import json
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

from gatewayctl.cli import main as cli
from tests.gh_expressions import evaluate, interpolate
from tests.support import ROOT

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
    """The README and the task pages it links (docs/): the documentation a reader follows."""
    pages = [README, *sorted((ROOT / "docs").glob("*.md"))]
    return "\n".join(page.read_text(encoding="utf-8") for page in pages)


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
    assert load("pull-request.yml")["jobs"]["preview"]["permissions"] == {
        "contents": "read",
        "pull-requests": "write",
    }
    for name in ("test", "credentials", "stacks", "diff-result"):
        assert "permissions" not in load("pull-request.yml")["jobs"][name]
    assert load("deploy.yml")["permissions"] == {"contents": "read"}
    assert load("drift.yml")["permissions"] == {"contents": "read", "issues": "write"}
    for name in FILES:
        for job in load(name)["jobs"].values():
            assert set(job.get("permissions", {}).values()) <= {"read", "write"}


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
    """Every make, ``python -m gatewayctl`` and pulumi command the workflows run, normalised."""
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
                # `name="$(command ...)"`: the command inside.
                captured = re.fullmatch(r"\w+=\$\((.*)\)", words[0]) if len(words) == 1 else None
                if captured:
                    words = shlex.split(captured[1])
                if words[0] == "make":
                    found.add(" ".join(words[:2]))
                elif words[0].endswith("python") and words[1:3] == ["-m", "gatewayctl"]:
                    flags = [w for w in words[4:] if w.startswith("--")]
                    found.add(" ".join(["python -m gatewayctl", words[3], *flags]))
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
        "make setup",
        "make test",
        "make validate",
        "python -m gatewayctl diff --base --output",
        "python -m gatewayctl driver --list",
        "python -m gatewayctl stacks",
        "python -m gatewayctl validate --deploy",
        "pulumi login",
        "pulumi preview",
        "pulumi preview --diff",
        "pulumi preview --refresh",
        "pulumi up",
        "pulumi up --refresh",
        "pulumi refresh --preview-only --json",
        "pulumi stack",  # `pulumi stack export`: the helper keeps the first word
        "python -m gatewayctl status --from --format",
    }


def test_every_command_is_one_the_readme_documents() -> None:
    text = readme()
    for command in sorted(commands()):
        if command.startswith("python -m gatewayctl "):
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


def pr_context(*, fork: bool, secrets: dict[str, str], stack: str = "ibm") -> dict[str, Any]:
    head = "mallory/gateways" if fork else REPOSITORY
    return {
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
    assert job["needs"] == ["credentials", "diff"]
    assert job["strategy"]["matrix"]["stack"] == ["ibm", "aws"]  # local is not deployed
    for stack in ("ibm", "aws"):
        context = pr_context(fork=False, secrets={}, stack=stack)
        assert interpolate(job["environment"], context) == f"preview-{stack}"
    assert evaluate(job["if"], pr_context(fork=True, secrets={})) is False
    assert evaluate(job["if"], pr_context(fork=False, secrets={})) is True


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


TOKEN = "${{ secrets.PULUMI_ACCESS_TOKEN }}"
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


CREDENTIAL_CASES = [
    ("", "true", True),
    ("", "false", False),
    ("https://api.pulumi.example.com", "true", True),
    ("https://api.pulumi.example.com", "false", False),
    ("s3://acme-pulumi-state", "false", True),  # a self-managed backend needs no Pulumi token
    ("azblob://state", "false", True),
]


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
    assert preview["env"] == {"PULUMI_ACCESS_TOKEN": TOKEN}


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
    expected = ["-m", "gatewayctl", "diff", "ibm", "--base", "origin/main", "--output"]
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
    # The stacks CI drives (deploy/operator.yaml): local is never a candidate.
    assert job["needs"] == "stacks"
    assert job["strategy"]["matrix"]["stack"] == "${{ fromJSON(needs.stacks.outputs.ci) }}"
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
    assert job["needs"] == "stacks"
    assert job["strategy"]["matrix"]["stack"] == "${{ fromJSON(needs.stacks.outputs.ci) }}"
    assert job["environment"] == "${{ matrix.stack }}"
    assert job["concurrency"] == load("deploy.yml")["jobs"]["up"]["concurrency"]


FAKE_STATUS_PULUMI = """\
echo "$*" >> pulumi-calls
case "$1" in
  refresh) echo '{"steps": []}'; exit "${FAKE_REFRESH:-0}" ;;
  stack) echo '{"version": 3, "deployment": {}}'; exit "${FAKE_EXPORT:-0}" ;;
esac
"""

FAKE_STATUS_PYTHON = """\
echo "$*" >> python-calls
case "$*" in
  *"--format json"*) printf '%s\\n' "$FAKE_JSON" ;;
  *"--format markdown"*) printf '## Status of stack `ibm`\\n' ;;
esac
exit "${FAKE_STATUS:-0}"
"""

STATUS_JSON = json.dumps(
    {
        "remedy": {
            "action": "reissue",
            "targets": ["urn:pulumi:ibm::p::t::a", "urn:pulumi:ibm::p::t::b"],
        }
    }
)


def status_env(tmp_path: Path, **fakes: str) -> dict[str, str]:
    fake(tmp_path / "bin", "pulumi", FAKE_STATUS_PULUMI)
    fake(tmp_path / ".venv" / "bin", "python", FAKE_STATUS_PYTHON)
    return {
        "STACK": "ibm",
        "PULUMI_STACK": "acme/ibm",
        "FAKE_JSON": STATUS_JSON,
        "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
        **fakes,
    }


@needs_bash
@pytest.mark.parametrize(
    ("status_code", "outcome"),
    [(0, "green"), (3, "drift"), (4, "degraded"), (5, "renewal")],
)
def test_the_status_step_turns_exit_codes_into_outcomes(
    tmp_path: Path, status_code: int, outcome: str
) -> None:
    script = step("drift.yml", "refresh", "Status (")["run"]
    env = status_env(tmp_path, FAKE_STATUS=str(status_code))
    result, outputs = run_script(script, tmp_path, env)
    assert result == 0
    assert outputs == {
        "outcome": outcome,
        "remedy": "reissue",
        "targets": "urn:pulumi:ibm::p::t::a;urn:pulumi:ibm::p::t::b",
    }
    assert (tmp_path / "pulumi-calls").read_text(encoding="utf-8").splitlines() == [
        "refresh --preview-only --json --stack acme/ibm --non-interactive",
        "stack export --stack acme/ibm",
    ]
    assert (tmp_path / "refresh.json").read_text(encoding="utf-8") == '{"steps": []}\n'
    calls = (tmp_path / "python-calls").read_text(encoding="utf-8").splitlines()
    sources = "--from refresh.json state.json"
    assert calls == [
        f"-m gatewayctl status ibm {sources} --format json",
        f"-m gatewayctl status ibm {sources} --format markdown",
    ]
    assert (tmp_path / "status.md").read_text(encoding="utf-8") == "## Status of stack `ibm`\n"


@needs_bash
@pytest.mark.parametrize(
    ("fakes", "reason"),
    [
        ({"FAKE_REFRESH": "255"}, "pulumi refresh --preview-only --json exited with code 255"),
        ({"FAKE_EXPORT": "1"}, "pulumi stack export exited with code 1"),
        ({"FAKE_STATUS": "2"}, "python -m gatewayctl status exited with code 2"),
        ({"FAKE_STATUS": "1"}, "python -m gatewayctl status exited with code 1"),
    ],
)
def test_a_failed_refresh_export_or_status_is_a_failed_run_not_drift(
    tmp_path: Path, fakes: dict[str, str], reason: str
) -> None:
    script = step("drift.yml", "refresh", "Status (")["run"]
    result, outputs = run_script(script, tmp_path, status_env(tmp_path, **fakes))
    assert result == 0  # recorded: the report runs first, the last step fails the job
    assert outputs == {"outcome": "failed"}
    assert (tmp_path / "failure.txt").read_text(encoding="utf-8") == reason + "\n"
    fail_step = step("drift.yml", "refresh", "Fail the job when the check failed")
    context = {"steps": {"status": {"outputs": outputs}}}
    assert evaluate(fail_step["if"], context) is True
    code, _ = run_script(fail_step["run"], tmp_path, {})
    assert code == 1


FAKE_GH = """\
echo "$*" >> gh-calls
if [ "$1 $2" = "issue list" ]; then printf '%s' "$FAKE_OPEN_ISSUE"; fi
"""

OUTCOMES = ("green", "drift", "degraded", "renewal", "failed")


def test_each_outcome_runs_its_steps() -> None:
    steps = {
        "report": step("drift.yml", "refresh", "Report in the stack's status issue"),
        "close": step("drift.yml", "refresh", "Close the status issue"),
        "fail": step("drift.yml", "refresh", "Fail the job when the check failed"),
    }
    runs = {
        outcome: {
            name: evaluate(s["if"], {"steps": {"status": {"outputs": {"outcome": outcome}}}})
            for name, s in steps.items()
        }
        for outcome in OUTCOMES
    }
    assert runs == {
        "green": {"report": False, "close": True, "fail": False},
        "drift": {"report": True, "close": False, "fail": False},
        "degraded": {"report": True, "close": False, "fail": False},
        "renewal": {"report": True, "close": False, "fail": False},
        "failed": {"report": True, "close": False, "fail": True},
    }
    # A status step that never ran (an earlier step failed) reports nothing.
    assert evaluate(steps["report"]["if"], {"steps": {"status": {"outputs": {}}}}) is False


@needs_bash
@pytest.mark.parametrize(
    ("outcome", "remedy", "summary", "heal"),
    [
        ("drift", "up-refresh", "**Drift: live resources", "runs `pulumi up --refresh`"),
        ("degraded", "none", "**Degraded: a gateway is not healthy", "Self-heal is off"),
        ("renewal", "reissue", "**Certificates are inside their renewal window", "are due"),
        ("failed", "", "**The check failed: pulumi stack export exited with code 1.", "off"),
    ],
)
@pytest.mark.parametrize(
    ("open_issue", "calls"), [("", ["issue create"]), ("42", ["issue edit 42", "issue comment 42"])]
)
def test_the_report_opens_or_updates_one_issue_per_stack(
    tmp_path: Path,
    outcome: str,
    remedy: str,
    summary: str,
    heal: str,
    open_issue: str,
    calls: list[str],
) -> None:
    report = step("drift.yml", "refresh", "Report in the stack's status issue")
    assert report["env"] == {
        "GH_TOKEN": "${{ github.token }}",
        "OUTCOME": "${{ steps.status.outputs.outcome }}",
        "REMEDY": "${{ steps.status.outputs.remedy }}",
    }
    fake(tmp_path / "bin", "gh", FAKE_GH)
    if outcome == "failed":
        (tmp_path / "failure.txt").write_text("pulumi stack export exited with code 1\n")
    else:
        (tmp_path / "status.md").write_text("## Status of stack `ibm`\n\n| Gateway |\n")
    env = {
        "FAKE_OPEN_ISSUE": open_issue,
        "STACK": "ibm",
        "OUTCOME": outcome,
        "REMEDY": remedy,
        "GITHUB_REPOSITORY": "acme/gateways",
        "RUN_URL": "https://example.invalid/run/7",
        "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
    }
    result, _ = run_script(report["run"], tmp_path, env)
    assert result == 0
    made = (tmp_path / "gh-calls").read_text(encoding="utf-8").splitlines()
    assert made[0].startswith("issue list --repo acme/gateways --state open")
    assert [
        " ".join(m.split()[:3]) if m.split()[2].isdigit() else " ".join(m.split()[:2])
        for m in made[1:]
    ] == calls
    if not open_issue:
        assert "--title Status of stack ibm" in made[1]
    body = (tmp_path / "status-issue.md").read_text(encoding="utf-8")
    assert body.startswith(summary)
    assert "https://example.invalid/run/7" in body.splitlines()[0]
    assert heal in body
    assert ("## Status of stack `ibm`" in body) is (outcome != "failed")
    assert "`pulumi up --refresh`" in body


@needs_bash
@pytest.mark.parametrize(("open_issue", "calls"), [("", 1), ("42", 2)])
def test_a_green_check_closes_the_open_status_issue(
    tmp_path: Path, open_issue: str, calls: int
) -> None:
    close = step("drift.yml", "refresh", "Close the status issue")
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
    assert (
        'select(.title == \\"Status of stack ibm\\")' in made[0] or "Status of stack ibm" in made[0]
    )
    if open_issue:
        assert made[1].startswith("issue close 42 --repo acme/gateways --comment")


def test_self_heal_and_reissue_run_only_for_their_remedy_after_the_report() -> None:
    steps = steps_of("drift.yml", "refresh")
    heal = steps[index_of(steps, "Self-heal (pulumi up --refresh")]
    reissue = steps[index_of(steps, "Reissue due certificates")]
    venv = steps[index_of(steps, "Policy pack virtualenv for self-heal")]
    order = [
        index_of(steps, part)
        for part in (
            "Status (",
            "Report in the stack",
            "Policy pack virtualenv",
            "Self-heal",
            "Reissue",
        )
    ]
    assert order == sorted(order)  # the report first, then any remedy
    # The self-heal lets git win a server-side apply conflict (a field `kubectl scale` took):
    # without it the real engine fails the up (tests/e2e/test_e2e_b_drift.py).
    assert heal["env"] == {"PULUMI_ACCESS_TOKEN": TOKEN, "PULUMI_K8S_ENABLE_PATCH_FORCE": "true"}
    assert reissue["env"] == {"PULUMI_ACCESS_TOKEN": TOKEN}
    for action in (heal, reissue):
        assert action["uses"].startswith("pulumi/actions@")
        assert action["with"]["command"] == "up"
        assert action["with"]["stack-name"] == "${{ env.PULUMI_STACK }}"
        assert action["with"]["policyPacks"] == "policy"
        assert action["with"]["policyPackConfigs"] == "policy/config/${{ matrix.stack }}.json"
    assert heal["with"]["refresh"] is True
    assert "target" not in heal["with"]
    assert reissue["with"]["target"] == "${{ steps.status.outputs.targets }}"
    assert reissue["with"]["target-dependents"] is True
    for remedy, expected in (
        ("up-refresh", (True, False, True)),
        ("reissue", (False, True, True)),
        ("none", (False, False, False)),
        ("", (False, False, False)),
    ):
        outputs = {"remedy": remedy, "targets": "urn:a;urn:b" if remedy == "reissue" else ""}
        context = {"steps": {"status": {"outputs": outputs}}}
        got = tuple(evaluate(s["if"], context) for s in (heal, reissue, venv))
        assert got == expected, remedy
    no_targets = {"steps": {"status": {"outputs": {"remedy": "reissue", "targets": ""}}}}
    assert evaluate(reissue["if"], no_targets) is False


def test_the_status_step_reaches_the_real_cli_with_the_committed_fixtures(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The exit codes the status step maps are the CLI's own (the fixtures: tests/status_builders).
    fixtures = ROOT / "tests" / "fixtures" / "status"
    cases = {"refresh-drift.json": 4, "refresh-clean.json": 5}
    for name, code in cases.items():
        argv = ["status", "ibm", "--from", str(fixtures / name), str(fixtures / "state.json")]
        assert cli.main([*argv, "--format", "json", "--now", "2026-12-01T05:30:00Z"]) == code
        document = json.loads(capsys.readouterr().out)
        assert set(document["remedy"]) == {"action", "targets"}
    # Green: the state before team-a's window (the refresh fixtures ran inside it).
    argv = ["status", "ibm", "--from", str(fixtures / "state.json")]
    assert cli.main([*argv, "--now", "2026-11-01T00:00:00Z", "--format", "json"]) == 0
    capsys.readouterr()


# --- one driver per stack -----------------------------------------------------------------------

FAKE_DRIVER = """\
echo "$*" >> python-calls
case "$*" in
  *"--list ci"*) printf '%s\\n' "$FAKE_CI" ;;
  *"--list operator"*) printf '%s\\n' "$FAKE_OPERATOR" ;;
esac
exit "${FAKE_CODE:-0}"
"""


def planning(name: str) -> dict[str, Any]:
    return step(name, "stacks", "(python -m gatewayctl driver)")


@needs_bash
@pytest.mark.parametrize("name", ["deploy.yml", "drift.yml"])
def test_the_workflows_ask_who_drives_each_stack(tmp_path: Path, name: str) -> None:
    driver = planning(name)
    assert driver["env"] == {"CANDIDATES": "ibm aws"}  # local (kind) is never deployed from CI
    fake(tmp_path / "bin", "make", 'echo "make $*" >> make-calls\n')
    fake(tmp_path / ".venv" / "bin", "python", FAKE_DRIVER)
    env = {
        **driver["env"],
        "FAKE_CI": '["ibm"]',
        "FAKE_OPERATOR": '["aws"]',
        "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
    }
    code, outputs = run_script(driver["run"], tmp_path, env)
    assert code == 0
    assert (tmp_path / "make-calls").read_text() == "make setup\n"
    calls = (tmp_path / "python-calls").read_text().splitlines()
    assert calls[0] == "-m gatewayctl driver --list ci ibm aws"
    assert outputs["ci"] == '["ibm"]'
    expected_outputs = {"ci": "${{ steps.driver.outputs.ci }}"}
    if name == "deploy.yml":
        assert calls[1] == "-m gatewayctl driver --list operator ibm aws"
        assert outputs["operator"] == '["aws"]'
        expected_outputs["operator"] = "${{ steps.driver.outputs.operator }}"
    assert load(name)["jobs"]["stacks"]["outputs"] == expected_outputs


@needs_bash
@pytest.mark.parametrize("name", ["deploy.yml", "drift.yml"])
def test_invalid_operator_settings_stop_the_workflow(tmp_path: Path, name: str) -> None:
    fake(tmp_path / "bin", "make", "true\n")
    fake(tmp_path / ".venv" / "bin", "python", FAKE_DRIVER)
    env = {
        "CANDIDATES": "ibm aws",
        "FAKE_CODE": "2",
        "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
    }
    code, outputs = run_script(planning(name)["run"], tmp_path, env)
    assert code == 2
    assert outputs == {}


@pytest.mark.parametrize(
    ("name", "job", "output"),
    [
        ("deploy.yml", "up", "ci"),
        ("drift.yml", "refresh", "ci"),
        ("deploy.yml", "operator-ready", "operator"),
    ],
)
def test_jobs_run_per_listed_stack_and_not_at_all_for_none(
    name: str, job: str, output: str
) -> None:
    definition = load(name)["jobs"][job]
    assert definition["needs"] == "stacks"
    for listed, runs in (("[]", False), ('["ibm"]', True), ('["ibm","aws"]', True)):
        context = {"needs": {"stacks": {"outputs": {output: listed}}}}
        assert evaluate(definition["if"], context) is runs
        assert evaluate(definition["strategy"]["matrix"]["stack"], context) == json.loads(listed)


def test_the_committed_settings_split_the_candidates(capsys: pytest.CaptureFixture[str]) -> None:
    candidates = planning("deploy.yml")["env"]["CANDIDATES"].split()
    assert planning("drift.yml")["env"]["CANDIDATES"].split() == candidates
    lists = {}
    for driver in ("ci", "operator"):
        assert cli.main(["driver", "--list", driver, *candidates]) == 0
        lists[driver] = json.loads(capsys.readouterr().out)
    assert lists == {"ci": ["ibm"], "operator": ["aws"]}  # deploy/operator.yaml: stacks [aws]


def test_the_operator_stacks_are_checked_for_readiness_on_every_push() -> None:
    job = load("deploy.yml")["jobs"]["operator-ready"]
    assert "environment" not in job  # no credential: validate --deploy needs none
    (check,) = [s for s in job["steps"] if "run" in s]
    assert check["run"].split("\n")[:2] == [
        "make setup",
        '.venv/bin/python -m gatewayctl validate "$STACK" --deploy',
    ]


# --- credentials and backends --------------------------------------------------------------------


@needs_bash
@pytest.mark.parametrize(("name", "job"), [("deploy.yml", "up"), ("drift.yml", "refresh")])
@pytest.mark.parametrize(("backend", "has_token", "ready"), CREDENTIAL_CASES)
def test_pulumi_cloud_needs_the_token_a_self_managed_backend_does_not(
    tmp_path: Path, name: str, job: str, backend: str, has_token: str, ready: bool
) -> None:
    check = step(name, job, "Require Pulumi credentials")
    assert load(name)["jobs"][job]["env"]["PULUMI_BACKEND_URL"] == "${{ vars.PULUMI_BACKEND_URL }}"
    env = {"STACK": "ibm", "HAS_PULUMI_TOKEN": has_token, "PULUMI_BACKEND_URL": backend}
    code, _ = run_script(check["run"], tmp_path, env)
    assert code == (0 if ready else 1)


def steps_of(name: str, job: str) -> list[dict[str, Any]]:
    found = load(name)["jobs"][job]["steps"]
    assert isinstance(found, list)
    return found


def index_of(steps: list[dict[str, Any]], part: str) -> int:
    (index,) = [i for i, s in enumerate(steps) if part in s.get("name", "")]
    return index


def test_drift_logs_in_between_installing_the_cli_and_refreshing() -> None:
    steps = steps_of("drift.yml", "refresh")
    install = steps[index_of(steps, "Install the Pulumi CLI")]
    # Install-only mode never logs in (pulumi/actions v7.0.0 src/main.ts, `installOnly`): a
    # cloud-url there would be ignored, and the token is not needed to download the CLI.
    assert "command" not in install["with"]
    assert "cloud-url" not in install["with"]
    assert "env" not in install
    login = steps[index_of(steps, "Log in to the backend")]
    assert login["env"] == {"PULUMI_ACCESS_TOKEN": TOKEN}
    order = [index_of(steps, part) for part in ("Install the Pulumi CLI", "Log in", "Status (")]
    assert order == sorted(order)


@needs_bash
@pytest.mark.parametrize(
    ("backend", "args"),
    [
        ("", "login --non-interactive"),
        (
            "s3://acme-pulumi-state?region=us-east-1",
            "login --non-interactive s3://acme-pulumi-state?region=us-east-1",
        ),
        (
            "https://api.pulumi.example.com",
            "login --non-interactive https://api.pulumi.example.com",
        ),
    ],
)
@pytest.mark.parametrize("login_code", [0, 255])
def test_drift_logs_in_to_the_configured_backend(
    tmp_path: Path, backend: str, args: str, login_code: int
) -> None:
    fake(tmp_path / "bin", "pulumi", 'echo "$*" > pulumi-args\nexit "$FAKE_CODE"\n')
    env = {
        "PULUMI_BACKEND_URL": backend,
        "FAKE_CODE": str(login_code),
        "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
    }
    code, _ = run_script(step("drift.yml", "refresh", "Log in")["run"], tmp_path, env)
    assert code == login_code  # a failed login fails the check before the refresh
    assert (tmp_path / "pulumi-args").read_text(encoding="utf-8") == args + "\n"


def test_every_pulumi_action_installs_the_declared_cli_version() -> None:
    actions = [s for _, _, s in all_steps() if s.get("uses", "").startswith("pulumi/actions@")]
    # The PR preview; deploy's preview and up; drift's install, and its previews and ups of the
    # self-heal and the reissue.
    assert len(actions) == 8
    for s in actions:
        assert s["with"]["pulumi-version-file"] == ".pulumi.version"
        assert "pulumi-version" not in s["with"]
    for name in FILES:
        assert "PULUMI_VERSION" not in load(name).get("env", {})
    assert (ROOT / ".pulumi.version").is_file()


# --- policy pack ---------------------------------------------------------------------------------

GATED = ("target", "target-dependents", "refresh", "stack-name", "cloud-url", "policyPacks")


def test_every_up_is_gated_by_a_preview_with_the_policy_pack() -> None:
    """pulumi/actions runs ``up`` through the Automation API with ``--skip-preview``
    (pulumi/pulumi sdk/nodejs/automation/stack.ts): the policy pack's stack policies would run
    only after every change. Each ``up`` step is right after a preview of the same operation
    (same stack, targets, refresh, condition) with the same pack and config."""
    ups = 0
    for name in FILES:
        for job_name, job in load(name)["jobs"].items():
            steps = job["steps"]
            for i, s in enumerate(steps):
                if not s.get("uses", "").startswith("pulumi/actions@"):
                    continue
                if s.get("with", {}).get("command") != "up":
                    continue
                ups += 1
                gate = steps[i - 1]
                where = f"{name} {job_name}: {s['name']}"
                assert gate.get("uses") == s["uses"], where
                assert gate["with"]["command"] == "preview", where
                assert gate.get("if") == s.get("if"), where
                assert gate.get("env") == s.get("env"), where
                for key in (*GATED, "policyPackConfigs"):
                    assert gate["with"].get(key) == s["with"].get(key), (where, key)
                assert gate["with"]["policyPacks"] == "policy", where
    assert ups == 3  # deploy's up, drift's self-heal and reissue


FAKE_VENV_PYTHON = """\
echo "$*" >> python-calls
if [ "$1 $2" = "-m venv" ]; then
  mkdir -p "$3/bin"
  printf '#!/usr/bin/env bash\\necho "$*" >> pip-calls\\n' > "$3/bin/pip"
  chmod +x "$3/bin/pip"
fi
"""


@pytest.mark.parametrize(
    ("name", "job", "title", "stacks"),
    [
        ("deploy.yml", "up", "pulumi up", ["ibm", "aws"]),
        ("pull-request.yml", "preview", "pulumi preview --diff", ["ibm", "aws"]),
    ],
)
def test_preview_and_up_run_the_policy_pack_with_the_stacks_config(
    name: str, job: str, title: str, stacks: list[str]
) -> None:
    steps = steps_of(name, job)
    action = steps[index_of(steps, title)]
    # The inputs of pulumi/actions v7.0.0 (action.yml: policyPacks, policyPackConfigs).
    assert action["with"]["policyPacks"] == "policy"
    assert action["with"]["policyPackConfigs"] == "policy/config/${{ matrix.stack }}.json"
    assert index_of(steps, "Policy pack virtualenv") < steps.index(action)
    assert (ROOT / "policy" / "PulumiPolicy.yaml").is_file()
    for stack in stacks:
        config = interpolate(action["with"]["policyPackConfigs"], {"matrix": {"stack": stack}})
        assert json.loads((ROOT / config).read_text(encoding="utf-8"))


@needs_bash
@pytest.mark.parametrize(("name", "job"), [("deploy.yml", "up"), ("pull-request.yml", "preview")])
def test_the_policy_pack_venv_is_created_from_its_requirements(
    tmp_path: Path, name: str, job: str
) -> None:
    venv = step(name, job, "Policy pack virtualenv")
    fake(tmp_path / "bin", "python", FAKE_VENV_PYTHON)
    env = {"PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    code, _ = run_script(venv["run"], tmp_path, env)
    assert code == 0
    assert (tmp_path / "python-calls").read_text() == "-m venv policy/venv\n"
    assert (tmp_path / "pip-calls").read_text() == (
        "install --quiet --disable-pip-version-check -r policy/requirements.txt\n"
    )
    # The virtualenv PulumiPolicy.yaml names.
    policy = yaml.safe_load((ROOT / "policy" / "PulumiPolicy.yaml").read_text(encoding="utf-8"))
    assert policy["runtime"]["options"]["virtualenv"] == "venv"


def test_the_policy_pack_venv_is_ignored_by_git() -> None:
    git = shutil.which("git")
    if git is None:
        pytest.skip("needs git")
    inside = subprocess.run(
        [git, "-C", str(ROOT), "rev-parse", "--is-inside-work-tree"],
        capture_output=True,
        text=True,
        check=False,
    )
    if inside.stdout.strip() != "true":
        pytest.skip(f"{ROOT} is not a git work tree")
    for path in ("policy/venv/bin/python", "policy/venv/pyvenv.cfg"):
        done = subprocess.run(
            [git, "-C", str(ROOT), "check-ignore", "--no-index", "-q", path], check=False
        )
        assert done.returncode == 0, f"{path} is not ignored"
    kept = subprocess.run(
        [git, "-C", str(ROOT), "check-ignore", "--no-index", "-q", "policy/requirements.txt"],
        check=False,
    )
    assert kept.returncode == 1


# --- the expression evaluator these tests rely on -------------------------------------------


def test_the_expression_evaluator_follows_githubs_rules() -> None:
    assert evaluate("secrets.MISSING != ''", {"secrets": {}}) is False
    assert evaluate("secrets.X != ''", {"secrets": {"X": "v"}}) is True
    assert evaluate("'Main' == 'main'", {}) is True
    assert evaluate("a == b", {"a": "acme/x", "b": "acme/y"}) is False
    org = "vars.ORG && format('{0}/{1}', vars.ORG, 'ibm') || 'ibm'"
    assert evaluate(org, {"vars": {"ORG": "acme"}}) == "acme/ibm"
    assert evaluate(org, {"vars": {}}) == "ibm"
    assert evaluate("!(a == 'x') && always()", {"a": "y"}) is True
    assert evaluate("fromJSON('[\"a\"]')", {}) == ["a"]
    assert evaluate("startsWith('HTTPS://x', 'https://')", {}) is True
    assert interpolate("preview-${{ matrix.stack }}", {"matrix": {"stack": "aws"}}) == "preview-aws"
    assert interpolate("${{ secrets.T != '' }}", {"secrets": {}}) == "false"


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

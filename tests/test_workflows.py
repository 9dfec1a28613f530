"""The GitHub workflows: they parse, pin every action, use the README's commands, and their
shell steps treat exit codes as documented (run here with fake ``python``, ``pulumi``, ``gh``);
their conditions are evaluated as GitHub would (``tests.gh_expressions``). Here: what every
workflow shares and the deploy on a merge to main; the pull-request workflow's own tests are in
tests/test_workflows_pull_request.py, drift's in tests/test_workflows_drift.py.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from gatewayctl.cli import main as cli
from tests.gh_expressions import evaluate, interpolate
from tests.support import ROOT
from tests.workflow_helpers import (
    CREDENTIAL_CASES,
    FILES,
    TOKEN,
    WORKFLOWS,
    fake,
    index_of,
    load,
    needs_bash,
    run_script,
    step,
    steps_of,
)

README = ROOT / "README.md"
PIN = re.compile(r"^[\w.-]+/[\w.-]+(?:/[\w./-]+)?@(?:[0-9a-f]{40}|v\d+\.\d+\.\d+)$")
SHA_PIN = re.compile(r"@([0-9a-f]{40})\s+#\s*(v\d+\.\d+\.\d+)\s*$")
# Flags that only address the stack or silence prompts in CI; the README's commands run on a
# selected stack in a terminal.
CI_ONLY = {"--stack": 1, "-s": 1, "--non-interactive": 0, "--yes": 0, "-y": 0}


def triggers(document: dict[Any, Any]) -> dict[str, Any]:
    # YAML 1.1 reads the bare key `on` as the boolean True.
    value = document.get("on", document.get(True))
    assert isinstance(value, dict)
    return value


def all_steps() -> Iterator[tuple[str, str, dict[str, Any]]]:
    for name in FILES:
        for job_name, job in load(name)["jobs"].items():
            for each in job["steps"]:
                yield name, job_name, each


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
    assert load("drift.yml")["permissions"] == {
        "contents": "read",
        "issues": "write",
        "statuses": "write",
    }
    # The check's job pushes the status record (the branch hypershell-records) and the
    # renewal's branch, and opens its pull request; no other job.
    assert load("drift.yml")["jobs"]["refresh"]["permissions"] == {
        "contents": "write",
        "issues": "write",
        "pull-requests": "write",
        "statuses": "write",
    }
    assert "permissions" not in load("drift.yml")["jobs"]["stacks"]
    # The deploy's up job pushes its history entry to the same branch.
    assert load("deploy.yml")["jobs"]["up"]["permissions"] == {
        "contents": "write",
        "statuses": "write",
    }
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
                # `NAME=value command ...`: the command (tests/test_workflows_scale.py).
                while len(words) > 1 and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", words[0]):
                    words = words[1:]
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
        "python -m gatewayctl diff --all --base --format",
        "python -m gatewayctl diff --base --output --format",
        "python -m gatewayctl driver --list --deployed",
        "python -m gatewayctl stacks",
        "python -m gatewayctl stacks --changed --deployed",
        "python -m gatewayctl validate --deploy",
        "pulumi login",
        "pulumi preview",
        "pulumi preview --diff",
        "pulumi preview --refresh",
        "pulumi up --refresh",
        "pulumi refresh --preview-only --json",
        "pulumi stack",  # `pulumi stack export`: the helper keeps the first word
        "python -m gatewayctl status --from --format",
        "python -m gatewayctl status --from --format --record",
        "python -m gatewayctl status --from --heal --format",
        "python -m gatewayctl window --format",
        "python -m gatewayctl rotate --stack --format",
        "python -m gatewayctl notify --event --workflow --run-url",
        "python -m gatewayctl rollout --pulumi-stack --policy-pack --policy-pack-config --format",
        "python -m gatewayctl history --record --outcome --workflow --run-url",
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
            run = s.get("run", "")
            # `gatewayctl rollout` runs the pulumi CLI itself (gatewayctl/deploy/pulumicli.py).
            runs_pulumi = s.get("uses", "").startswith("pulumi/actions@") or any(
                word in run for word in ("pulumi ", "gatewayctl rollout ")
            )
            assert runs_pulumi, f"{name} {job}: {s.get('name')} gets the token"
    for name in FILES:
        for job in load(name)["jobs"].values():
            assert "PULUMI_ACCESS_TOKEN" not in job.get("env", {})


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
    # Wave after wave (deploy/rollout.yaml), after the preview gate of the whole change, with
    # the same stack, condition, policy pack and config.
    steps = steps_of("deploy.yml", "up")
    gate = steps[index_of(steps, "pulumi preview with the policy pack")]
    up = steps[index_of(steps, "Roll out wave after wave")]
    assert steps.index(gate) < index_of(steps, "Log in to the backend") < steps.index(up)
    assert (up["id"], up["if"]) == ("up", gate["if"])
    assert gate["with"]["stack-name"] == "${{ env.PULUMI_STACK }}"
    assert (
        '.venv/bin/python -m gatewayctl rollout "$STACK" --pulumi-stack "$PULUMI_STACK"'
        ' --policy-pack policy --policy-pack-config "policy/config/$STACK.json" --format json'
        " > rollout.json"
    ) in up["run"]
    assert gate["with"]["policyPacks"] == "policy"
    assert gate["with"]["policyPackConfigs"] == "policy/config/${{ matrix.stack }}.json"
    assert up["env"] == {
        "PULUMI_ACCESS_TOKEN": TOKEN,
        "HYPERSHELL_WINDOW_OVERRIDE": "${{ inputs.override }}",
    }


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
    assert "CANDIDATES" not in driver.get("env", {})  # deploy/stacks.yaml says which
    fake(tmp_path / "bin", "make", 'echo "make $*" >> make-calls\n')
    fake(tmp_path / ".venv" / "bin", "python", FAKE_DRIVER)
    env = {
        "FAKE_CI": '["ibm"]',
        "FAKE_OPERATOR": '["aws"]',
        "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
    }
    code, outputs = run_script(driver["run"], tmp_path, env)
    assert code == 0
    assert (tmp_path / "make-calls").read_text() == "make setup\n"
    calls = (tmp_path / "python-calls").read_text().splitlines()
    assert calls[0] == "-m gatewayctl driver --list ci --deployed"
    assert outputs["ci"] == '["ibm"]'
    expected_outputs = {"ci": "${{ steps.driver.outputs.ci }}"}
    if name == "deploy.yml":
        assert calls[1] == "-m gatewayctl driver --list operator --deployed"
        assert outputs["operator"] == '["aws"]'
        expected_outputs["operator"] = "${{ steps.driver.outputs.operator }}"
    assert load(name)["jobs"]["stacks"]["outputs"] == expected_outputs


FAKE_PUSH_TOOLS = """\
echo "$*" >> python-calls
case "$*" in
  *"gatewayctl diff"*) echo '{"stacks": []}'; exit "$FAKE_DIFF" ;;
  *"--list ci"*) printf '%s\\n' "$FAKE_CI" ;;
  *"--list operator"*) printf '%s\\n' "$FAKE_OPERATOR" ;;
esac
"""
FAKE_GIT = """\
echo "git $*" >> git-calls
case "$1" in
  cat-file) exit "$FAKE_KNOWN" ;;
  diff) exit "$FAKE_PINS" ;;
esac
"""
BEFORE = "0123456789abcdef0123456789abcdef01234567"
LIST_CI = "-m gatewayctl driver --list ci --deployed"
LIST_CHANGED = "-m gatewayctl driver --list ci --changed build/diff-summary --deployed"
DIFF_ALL = f"-m gatewayctl diff --all --base {BEFORE} --format json"


@needs_bash
@pytest.mark.parametrize(
    ("event", "known", "pins", "diff", "calls"),
    [
        ("workflow_dispatch", "0", "0", "0", [LIST_CI]),
        ("push", "1", "0", "0", [LIST_CI]),
        ("push", "0", "1", "0", [LIST_CI]),
        ("push", "0", "0", "1", [DIFF_ALL, LIST_CI]),
        ("push", "0", "0", "4", [DIFF_ALL, LIST_CI]),
        ("push", "0", "0", "3", [DIFF_ALL, LIST_CHANGED]),
        ("push", "0", "0", "0", [DIFF_ALL, LIST_CHANGED]),
    ],
)
def test_a_push_deploys_only_the_stacks_it_changes(
    tmp_path: Path, event: str, known: str, pins: str, diff: str, calls: list[str]
) -> None:
    driver = planning("deploy.yml")
    assert driver["env"] == {
        "EVENT": "${{ github.event_name }}",
        "BEFORE": "${{ github.event.before }}",
    }
    (checkout,) = [s for s in steps_of("deploy.yml", "stacks") if "checkout" in s.get("uses", "")]
    assert checkout["with"]["fetch-depth"] == 0  # the commit before the push is there
    fake(tmp_path / "bin", "make", "true\n")
    fake(tmp_path / "bin", "git", FAKE_GIT)
    fake(tmp_path / ".venv" / "bin", "python", FAKE_PUSH_TOOLS)
    env = {
        "EVENT": event,
        "BEFORE": BEFORE,
        "FAKE_KNOWN": known,
        "FAKE_PINS": pins,
        "FAKE_DIFF": diff,
        "FAKE_CI": '["ibm"]',
        "FAKE_OPERATOR": '["aws"]',
        "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
    }
    code, outputs = run_script(driver["run"], tmp_path, env)
    assert code == 0
    made = (tmp_path / "python-calls").read_text().splitlines()
    assert made == [*calls, "-m gatewayctl driver --list operator --deployed"]
    assert outputs == {"ci": '["ibm"]', "operator": '["aws"]'}
    if DIFF_ALL in calls:
        assert (tmp_path / "build/diff-summary/push.json").read_text() == '{"stacks": []}\n'
        assert (tmp_path / "git-calls").read_text().splitlines() == [
            f"git cat-file -e {BEFORE}^{{commit}}",
            f"git diff --quiet {BEFORE} HEAD -- uv.lock .pulumi.version Pulumi.yaml",
        ]


@needs_bash
@pytest.mark.parametrize("diff", ["7", "2"])
def test_a_refused_removal_deploys_nothing(tmp_path: Path, diff: str) -> None:
    """Exit 7 (docs/decommissioning.md): a removal that loses the only key of a retained
    database, merged without its record, stops the deploy before any stack is listed; so does
    exit 2, input the diff refuses against the base (a lowered rotation counter), which is
    reported before any removal is weighed."""
    fake(tmp_path / "bin", "make", "true\n")
    fake(tmp_path / "bin", "git", FAKE_GIT)
    fake(tmp_path / ".venv" / "bin", "python", FAKE_PUSH_TOOLS)
    env = {
        "EVENT": "push",
        "BEFORE": BEFORE,
        "FAKE_KNOWN": "0",
        "FAKE_PINS": "0",
        "FAKE_DIFF": diff,
        "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
    }
    code, outputs = run_script(planning("deploy.yml")["run"], tmp_path, env)
    assert code == 1
    assert outputs == {}
    assert (tmp_path / "python-calls").read_text().splitlines() == [DIFF_ALL]


@needs_bash
@pytest.mark.parametrize("name", ["deploy.yml", "drift.yml"])
def test_invalid_operator_settings_stop_the_workflow(tmp_path: Path, name: str) -> None:
    fake(tmp_path / "bin", "make", "true\n")
    fake(tmp_path / ".venv" / "bin", "python", FAKE_DRIVER)
    env = {
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


def test_the_committed_settings_split_the_deployed_stacks(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # deploy/stacks.yaml: ibm and aws (local, kind, never); deploy/operator.yaml: stacks [aws].
    assert cli.main(["stacks", "--deployed"]) == 0
    assert json.loads(capsys.readouterr().out) == ["aws", "ibm"]
    lists = {}
    for driver in ("ci", "operator"):
        assert cli.main(["driver", "--list", driver, "--deployed"]) == 0
        lists[driver] = json.loads(capsys.readouterr().out)
    assert lists == {"ci": ["ibm"], "operator": ["aws"]}


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
    # The PR preview; deploy's preview (its rollout runs the CLI that preview installed);
    # drift's install, and the preview and up of its self-heal (the reissue is a pull request).
    assert len(actions) == 5
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
                before = [t for t in steps[:i] if t.get("uses", "").startswith("pulumi/actions@")]
                gate = before[-1]
                between = steps[steps.index(gate) + 1 : i]
                where = f"{name} {job_name}: {s['name']}"
                assert gate.get("uses") == s["uses"], where
                assert gate["with"]["command"] == "preview", where
                if between:  # drift's heal (kubectl) alone, after the gate, before its up
                    assert [b.get("id") for b in between] == ["heal"], where
                    assert s["if"] == (
                        f"always() && steps.{gate['id']}.outcome == 'success' && {gate['if']}"
                    ), where
                else:
                    assert gate.get("if") == s.get("if"), where
                # The preview, a dry run, alone skips checkpoints (test_workflows_scale).
                assert gate["env"].pop("PULUMI_SKIP_CHECKPOINTS") == "true", where
                assert gate.get("env") == s.get("env"), where
                for key in (*GATED, "policyPackConfigs"):
                    assert gate["with"].get(key) == s["with"].get(key), (where, key)
                assert gate["with"]["policyPacks"] == "policy", where
    assert ups == 1  # drift's self-heal (deploy's rollout: test_deploy_runs_...)


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
        ("deploy.yml", "up", "pulumi preview with the policy pack", ["ibm", "aws"]),
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

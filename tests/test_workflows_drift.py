"""The drift workflow (``.github/workflows/drift.yml``): per stack, in its environment, sharing
the deploy lock; the status step's exit codes become outcomes, each outcome runs its steps and
the report opens, updates or closes one issue per stack."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from gatewayctl.cli import main as cli
from tests.gh_expressions import evaluate
from tests.support import ROOT
from tests.workflow_helpers import (
    TOKEN,
    fake,
    index_of,
    load,
    needs_bash,
    run_script,
    step,
    steps_of,
)

# --- drift --------------------------------------------------------------------------------------


def test_drift_runs_per_stack_in_its_environment_sharing_the_deploy_lock() -> None:
    job = load("drift.yml")["jobs"]["refresh"]
    assert job["needs"] == "stacks"
    assert job["strategy"]["matrix"]["stack"] == "${{ fromJSON(needs.stacks.outputs.ci) }}"
    assert job["environment"] == "${{ matrix.stack }}"
    assert job["concurrency"] == load("deploy.yml")["jobs"]["up"]["concurrency"]


FAKE_STATUS_PULUMI = """\
echo "$*" >> pulumi-calls
case "$1 $2 $3" in
  "config get clusterSecrets")
    [ -n "$FAKE_CLUSTER_SECRETS" ] || { echo "configuration key not found" >&2; exit 255; }
    printf '%s\\n' "$FAKE_CLUSTER_SECRETS"; exit 0 ;;
  "config get --path") printf 'kubeconfig of %s\\n' "$4"; exit 0 ;;
esac
case "$1" in
  refresh) echo '{"steps": []}'; exit "${FAKE_REFRESH:-0}" ;;
  stack) echo '{"version": 3, "deployment": {}}'; exit "${FAKE_EXPORT:-0}" ;;
esac
"""

FAKE_STATUS_PYTHON = """\
echo "$*" >> python-calls
for arg in "$@"; do  # each kubeconfig given, as status would read it
  case "$arg" in *=/*) f="${arg#*=}"; { stat -c '%a' "$f"; cat "$f"; } >> kubeconfigs-read ;; esac
done
case "$*" in
  *"--heal"*)
    printf '{}\\n'; echo "done: remove from apps/Deployment ns/gw: spec.x" >&2
    exit "${FAKE_HEAL:-3}" ;;
  *"--format json"*) printf '%s\\n' "$FAKE_JSON" ;;
  *"--format markdown"*) printf '## Status of stack `ibm`\\n' ;;
esac
exit "${FAKE_STATUS:-0}"
"""

RENEWALS = [
    {
        "gateway": "team-a",
        "secrets": ["server-certificate", "client-certificate"],
        "certificates": [
            {"name": "team-a-pki-client-cert", "expires": "2026-12-20T00:00:00+00:00"},
            {"name": "team-a-pki-server-cert", "expires": "2026-12-21T00:00:00+00:00"},
        ],
        "command": "python -m gatewayctl rotate team-a server-certificate client-certificate"
        " --stack ibm",
    },
    {
        "gateway": "canary",
        "secrets": ["ca"],
        "certificates": [{"name": "canary-pki-ca", "expires": "2026-12-19T00:00:00+00:00"}],
        "command": "python -m gatewayctl rotate canary ca --stack ibm",
    },
]
STATUS_JSON = json.dumps({"remedy": {"action": "reissue", "renewals": RENEWALS}})


def status_env(tmp_path: Path, **fakes: str) -> dict[str, str]:
    fake(tmp_path / "bin", "pulumi", FAKE_STATUS_PULUMI)
    fake(tmp_path / ".venv" / "bin", "python", FAKE_STATUS_PYTHON)
    return {
        "STACK": "ibm",
        "PULUMI_STACK": "acme/ibm",
        "FAKE_JSON": STATUS_JSON,
        "PROCEED": "true",
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
    assert outputs == {"outcome": outcome, "remedy": "reissue"}
    assert (tmp_path / "pulumi-calls").read_text(encoding="utf-8").splitlines() == [
        "refresh --preview-only --json --stack acme/ibm --non-interactive",
        "stack export --stack acme/ibm",
        "config get clusterSecrets --json --stack acme/ibm",  # none held: no live read
    ]
    assert (tmp_path / "refresh.json").read_text(encoding="utf-8") == '{"steps": []}\n'
    calls = (tmp_path / "python-calls").read_text(encoding="utf-8").splitlines()
    sources = "--from refresh.json state.json"
    assert calls == [
        f"-m gatewayctl status ibm {sources} --format json --record status-record.jsonl",
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


@needs_bash
@pytest.mark.parametrize("proceed", ["true", "false"])
def test_a_heal_remedy_keeps_the_kubeconfigs_for_the_heal_step_only_when_it_may_run(
    tmp_path: Path, proceed: str
) -> None:
    script = step("drift.yml", "refresh", "Status (")["run"]
    env = status_env(
        tmp_path,
        FAKE_STATUS="3",
        PROCEED=proceed,
        RUNNER_TEMP=str(tmp_path / "runner"),
        FAKE_CLUSTER_SECRETS=json.dumps({"objectValue": {"east": {"kubeconfig": "x"}}}),
        FAKE_JSON=json.dumps({"remedy": {"action": "heal", "renewals": []}}),
    )
    (tmp_path / "runner").mkdir()
    result, outputs = run_script(script, tmp_path, env)
    assert (result, outputs["outcome"], outputs["remedy"]) == (0, "drift", "heal")
    calls = (tmp_path / "python-calls").read_text(encoding="utf-8").splitlines()
    assert [c for c in calls if "--heal" in c] == []  # the heal runs after the policy gate
    kept = tmp_path / "runner" / "kubeconfigs-ibm"
    if proceed == "false":  # a change window closes the stack: nothing kept
        assert not kept.exists()
        return
    assert (kept / "args").read_text().splitlines() == [
        "--live",
        "--kubeconfig",
        f"east={kept}/east",
    ]
    assert oct((kept / "east").stat().st_mode & 0o777) == "0o600"


@needs_bash
@pytest.mark.parametrize(("heal_code", "result"), [("3", 0), ("1", 1)])
def test_the_heal_step_reads_live_again_and_removes_the_kubeconfigs(
    tmp_path: Path, heal_code: str, result: int
) -> None:
    heal = step("drift.yml", "refresh", "Heal what other field managers added")
    assert heal["if"] == (
        "steps.status.outputs.remedy == 'heal' && steps.window.outputs.proceed == 'true'"
    )
    kept = tmp_path / "runner" / "kubeconfigs-ibm"
    kept.mkdir(parents=True)
    (kept / "east").write_text("kubeconfig")
    (kept / "args").write_text(f"--live\n--kubeconfig\neast={kept}/east\n")
    env = status_env(tmp_path, FAKE_HEAL=heal_code, RUNNER_TEMP=str(tmp_path / "runner"))
    env["GITHUB_STEP_SUMMARY"] = str(tmp_path / "summary.md")
    code, _ = run_script(heal["run"], tmp_path, env)
    assert code == result
    calls = (tmp_path / "python-calls").read_text(encoding="utf-8").splitlines()
    assert calls == [
        f"-m gatewayctl status ibm --live --kubeconfig east={kept}/east --from refresh.json"
        " state.json --heal --format json"
    ]
    assert (tmp_path / "summary.md").read_text() == (
        "done: remove from apps/Deployment ns/gw: spec.x\n"
    )
    assert not kept.exists()


FAKE_GH = """\
echo "$*" >> gh-calls
if [ "$1 $2" = "issue list" ]; then printf '%s' "$FAKE_OPEN_ISSUE"; fi
"""

OUTCOMES = ("green", "drift", "degraded", "renewal", "failed")


@needs_bash
def test_the_status_step_reads_live_with_each_kubeconfig_the_stack_holds(tmp_path: Path) -> None:
    script = step("drift.yml", "refresh", "Status (")["run"]
    secrets = {"objectValue": {"east": {"kubeconfig": "x", "dbAdminPassword": "y"}, "west": {}}}
    env = status_env(tmp_path, FAKE_STATUS="0", FAKE_CLUSTER_SECRETS=json.dumps(secrets))
    result, outputs = run_script(script, tmp_path, env)
    assert (result, outputs["outcome"]) == (0, "green")
    pulumi_calls = (tmp_path / "pulumi-calls").read_text(encoding="utf-8").splitlines()
    assert pulumi_calls[2:] == [
        "config get clusterSecrets --json --stack acme/ibm",
        "config get --path clusterSecrets.east.kubeconfig --stack acme/ibm",
    ]
    calls = (tmp_path / "python-calls").read_text(encoding="utf-8").splitlines()
    assert len(calls) == 2
    formats = ("json --record status-record.jsonl", "markdown")
    for call, fmt in zip(calls, formats, strict=True):
        head, _, rest = call.partition(" --kubeconfig east=")
        path, _, tail = rest.partition(" ")
        assert head == "-m gatewayctl status ibm --live"
        assert tail == f"--from refresh.json state.json --format {fmt}"
        assert not Path(path).exists()  # removed at the step's end
    # west holds no kubeconfig: not read (status says so); east's was private while read
    read = (tmp_path / "kubeconfigs-read").read_text(encoding="utf-8").splitlines()
    assert read == ["600", "kubeconfig of clusterSecrets.east.kubeconfig"] * 2


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
        ("drift", "heal", "**Drift: live resources", "removes what other field managers added"),
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
        "PROCEED": "${{ steps.window.outputs.proceed }}",
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
        "PROCEED": "true",
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


def test_self_heal_and_renewal_run_only_for_their_remedy_after_the_report() -> None:
    steps = steps_of("drift.yml", "refresh")
    heal = steps[index_of(steps, "Self-heal (pulumi up --refresh")]
    renew = steps[index_of(steps, "Renew due certificates by pull request")]
    venv = steps[index_of(steps, "Policy pack virtualenv for self-heal")]
    order = [
        index_of(steps, part)
        for part in (
            "Status (",
            "Report in the stack",
            "Policy pack virtualenv",
            "Self-heal",
            "Renew due certificates",
        )
    ]
    assert order == sorted(order)  # the report first, then any remedy
    # The self-heal lets git win a server-side apply conflict (a field `kubectl scale` took):
    # without it the real engine fails the up (tests/e2e/test_e2e_b_drift.py).
    assert heal["env"] == {"PULUMI_ACCESS_TOKEN": TOKEN, "PULUMI_K8S_ENABLE_PATCH_FORCE": "true"}
    assert heal["uses"].startswith("pulumi/actions@")
    assert heal["with"]["command"] == "up"
    assert heal["with"]["stack-name"] == "${{ env.PULUMI_STACK }}"
    assert heal["with"]["policyPacks"] == "policy"
    assert heal["with"]["policyPackConfigs"] == "policy/config/${{ matrix.stack }}.json"
    assert heal["with"]["refresh"] is True
    assert "target" not in heal["with"]
    # The renewal changes git, never the stack: no Pulumi token, no pulumi.
    assert renew["env"] == {
        "GH_TOKEN": "${{ secrets.RENEWAL_TOKEN || github.token }}",
        "RUN_ID": "${{ github.run_id }}",
    }
    assert "pulumi " not in renew["run"] and "uses" not in renew
    for remedy, expected in (
        ("up-refresh", (True, False, True)),
        ("heal", (True, False, True)),
        ("reissue", (False, True, False)),
        ("none", (False, False, False)),
        ("", (False, False, False)),
    ):
        for proceed in ("true", "false"):
            window = {"outputs": {"proceed": proceed}}
            steps_ = {"status": {"outputs": {"remedy": remedy}}, "window": window}
            context = {"steps": {**steps_, "gate": {"outcome": "success"}}}
            got = tuple(evaluate(s["if"], context) for s in (heal, renew, venv))
            # A change window that closes the stack holds every remedy back.
            assert got == (expected if proceed == "true" else (False, False, False)), remedy
    # The up runs after a heal that failed part-way, never after a failed gate.
    refused = {"remedy": "heal"}, {"proceed": "true"}
    for gate, runs in (("success", True), ("failure", False), ("skipped", False)):
        context = {
            "steps": {
                "status": {"outputs": refused[0]},
                "window": {"outputs": refused[1]},
                "gate": {"outcome": gate},
                "heal": {"outcome": "failure"},
            }
        }
        assert evaluate(heal["if"], context) is runs, gate


FAKE_RENEW_GH = """\
echo "$*" >> gh-calls
case "$1 $2" in
  "pr list") printf '%s\\n' "$FAKE_PULLS" ;;
  "pr create") cp "${@: -1}" pr-body.md; exit "${FAKE_CREATE:-0}" ;;
esac
"""

FAKE_ROTATE = """\
echo "$*" >> python-calls
file="gateways/ibm/$4.yaml"
echo "# rotated: $*" >> "$file"
printf '{"path": "%s"}\\n' "$file"
"""


def _git(cwd: Path, *argv: str) -> str:
    done = subprocess.run(["git", *argv], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


def _renewal_repository(tmp_path: Path) -> Path:
    """A checkout with an origin (a bare repository) and the two declarations."""
    origin, work = tmp_path / "origin.git", tmp_path / "work"
    _git(tmp_path, "init", "-q", "--bare", str(origin))
    _git(tmp_path, "init", "-q", "-b", "main", str(work))
    (work / "gateways" / "ibm").mkdir(parents=True)
    for name in ("team-a", "canary"):
        (work / "gateways" / "ibm" / f"{name}.yaml").write_text(f"name: {name}\n")
    (work / "status.json").write_text(STATUS_JSON)  # the status step's, never committed
    _git(work, "add", "gateways")
    ident = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    _git(work, *ident, "commit", "-q", "-m", "base")
    _git(work, "remote", "add", "origin", str(origin))
    _git(work, "push", "-q", "origin", "main")
    return work


def _renew(tmp_path: Path, pulls: list[dict[str, Any]], **extra: str) -> tuple[int, Path]:
    """drift.yml's renewal step run in a fresh checkout with gh and the tool faked: its exit
    code and the checkout (``gh-calls``, ``python-calls``, ``pr-body.md`` are written there)."""
    renew = step("drift.yml", "refresh", "Renew due certificates by pull request")
    work = _renewal_repository(tmp_path)
    fake(tmp_path / "bin", "gh", FAKE_RENEW_GH)
    fake(work / ".venv" / "bin", "python", FAKE_ROTATE)
    env = {
        "FAKE_PULLS": json.dumps(pulls),
        "STACK": "ibm",
        "RUN_ID": "4242",
        "GITHUB_REPOSITORY": "acme/gateways",
        "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
        **extra,
    }
    code, _ = run_script(renew["run"], work, env)
    return code, work


@needs_bash
@pytest.mark.skipif(shutil.which("git") is None or shutil.which("jq") is None, reason="git, jq")
def test_the_renewal_raises_the_counters_on_a_branch_and_opens_a_pull_request(
    tmp_path: Path,
) -> None:
    # Another stack's renewals, shard ibm-2's among them, do not hold this one's.
    pulls = [
        {"number": 7, "headRefName": "hypershell/renew-aws-1"},
        {"number": 8, "headRefName": "hypershell/renew-ibm-2-4000"},
    ]
    code, work = _renew(
        tmp_path,
        pulls,
        GH_TOKEN="t0ken",
        GITHUB_REF_NAME="main",
        RUN_URL="https://example.invalid/run/9",
    )
    assert code == 0
    assert (work / "python-calls").read_text().splitlines() == [
        "-m gatewayctl rotate team-a server-certificate client-certificate --stack ibm"
        " --format json",
        "-m gatewayctl rotate canary ca --stack ibm --format json",
    ]
    branch = "hypershell/renew-ibm-4242"
    title = "Renew the certificates due in ibm (the first expires 2026-12-19T00:00:00+00:00)"
    calls = (work / "gh-calls").read_text().splitlines()
    assert calls == [
        "pr list --repo acme/gateways --state open --limit 1000 --json number,headRefName",
        f"pr create --repo acme/gateways --base main --head {branch} --title {title}"
        " --body-file renewal.md",
    ]
    body = (work / "pr-body.md").read_text()
    assert body == (
        "Certificates of stack `ibm` are inside their renewal window (drift check:"
        " https://example.invalid/run/9).\n"
        "This raises the rotation counters that reissue them; the merge's deploy does.\n\n"
        "- `team-a`: team-a-pki-client-cert expires 2026-12-20T00:00:00+00:00,"
        " team-a-pki-server-cert expires 2026-12-21T00:00:00+00:00"
        f" (`{RENEWALS[0]['command']}`)\n"
        "- `canary`: canary-pki-ca expires 2026-12-19T00:00:00+00:00"
        f" (`{RENEWALS[1]['command']}`)\n"
    )
    # The branch on origin: one commit on main's, the two declarations and nothing else.
    pushed = tmp_path / "origin.git"
    assert _git(pushed, "log", "--format=%s", branch).splitlines() == [title, "base"]
    assert _git(pushed, "diff", "--name-only", "main", branch).splitlines() == [
        "gateways/ibm/canary.yaml",
        "gateways/ibm/team-a.yaml",
    ]
    assert _git(pushed, "show", f"{branch}:gateways/ibm/canary.yaml") == (
        "name: canary\n# rotated: -m gatewayctl rotate canary ca --stack ibm --format json\n"
    )
    assert "t0ken" not in (work / ".git" / "config").read_text()


@needs_bash
@pytest.mark.skipif(shutil.which("git") is None or shutil.which("jq") is None, reason="git, jq")
def test_a_renewal_whose_pull_request_cannot_be_opened_leaves_no_branch(tmp_path: Path) -> None:
    code, work = _renew(
        tmp_path,
        [],
        FAKE_CREATE="1",
        GH_TOKEN="t0ken",
        GITHUB_REF_NAME="main",
        RUN_URL="https://example.invalid/run/9",
    )
    assert code == 1
    assert [c.split(" --")[0] for c in (work / "gh-calls").read_text().splitlines()] == [
        "pr list",
        "pr create",
    ]
    # The next run finds no stray branch: the pushed one was deleted.
    assert _git(tmp_path / "origin.git", "branch", "--list").split() == ["main"]


@needs_bash
@pytest.mark.skipif(shutil.which("git") is None or shutil.which("jq") is None, reason="git, jq")
def test_while_a_renewal_pull_request_is_open_a_run_only_points_at_it(tmp_path: Path) -> None:
    pulls = [{"number": 7, "headRefName": "hypershell/renew-ibm-4000"}]
    code, work = _renew(tmp_path, pulls, GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"))
    assert code == 0
    assert (work / "gh-calls").read_text().splitlines() == [
        "pr list --repo acme/gateways --state open --limit 1000 --json number,headRefName"
    ]
    assert not (work / "python-calls").exists()
    assert (tmp_path / "summary.md").read_text() == (
        "Renewal of ibm: pull request #7 is open; merge it to reissue the certificates\n"
    )
    assert _git(tmp_path / "origin.git", "branch", "--list").split() == ["main"]


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
        assert set(document["remedy"]) == {"action", "renewals", "unrenewed", "heal", "manual"}
    # Green: the state before team-a's window (the refresh fixtures ran inside it).
    argv = ["status", "ibm", "--from", str(fixtures / "state.json")]
    assert cli.main([*argv, "--now", "2026-11-01T00:00:00Z", "--format", "json"]) == 0
    capsys.readouterr()

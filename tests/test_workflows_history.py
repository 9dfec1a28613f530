"""The history steps (docs/history.md): deploy.yml's "Record the up in the history" after the
rollout and drift.yml's after the self-heal run ``gatewayctl history --record`` with the
outcome the step saw and push the line to ``history/<stack>.jsonl`` on ``hypershell-records``
(the script the status records use). Run with a fake ``python`` and a real git against a bare
repository standing in for GitHub."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.gh_expressions import evaluate
from tests.support import ROOT
from tests.workflow_helpers import fake, index_of, needs_bash, run_script, step, steps_of

SCRIPT = ".github/scripts/append-to-records-branch.sh"
BRANCH = "hypershell-records"
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
FAKE_PYTHON = """\
echo "$*" >> python-calls
while [ "$#" -gt 0 ]; do
  if [ "$1" = --record ]; then echo '{"entry":1}' >> "$2"; fi
  shift
done
"""


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def test_the_deploy_records_every_up_that_ran_before_it_notifies() -> None:
    steps = steps_of("deploy.yml", "up")
    at = index_of(steps, "Record the up in the history")
    assert index_of(steps, "Roll out wave after wave") < at < index_of(steps, "Notify (")
    recorded = steps[at]
    for outcome, runs in [("success", True), ("failure", True), ("skipped", False)]:
        context = {"steps": {"up": {"outcome": outcome}}}
        assert evaluate(recorded["if"], context) is runs, outcome
    assert recorded["env"]["GH_TOKEN"] == "${{ github.token }}"


def test_the_drift_check_records_its_self_heal() -> None:
    steps = steps_of("drift.yml", "refresh")
    heal = index_of(steps, "Self-heal (pulumi up --refresh")
    assert steps[heal]["id"] == "selfheal"
    recorded = steps[heal + 1]
    assert recorded["name"].startswith("Record the self-heal in the history")
    for outcome, runs in [("success", True), ("failure", True), ("skipped", False)]:
        context = {"steps": {"selfheal": {"outcome": outcome}}}
        assert evaluate(recorded["if"], context) is runs, outcome


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    seed = tmp_path / "seed"
    git(tmp_path, "clone", "-q", str(bare), str(seed))
    git(seed, "commit", "-q", "--allow-empty", "-m", "main")
    git(seed, "push", "-q", "origin", "HEAD:refs/heads/main")
    return bare


def job(tmp_path: Path, origin: Path, name: str) -> Path:
    checkout = tmp_path / name
    git(tmp_path, "clone", "-q", str(origin), str(checkout))
    (checkout / SCRIPT).parent.mkdir(parents=True)
    shutil.copy(ROOT / SCRIPT, checkout / SCRIPT)
    fake(checkout / ".venv" / "bin", "python", FAKE_PYTHON)
    return checkout


@needs_bash
@needs_git
@pytest.mark.parametrize(
    ("up", "stopped", "rollout", "outcome"),
    [
        ("success", "", '{"waves":[]}', "succeeded"),
        ("failure", "true", '{"waves":[]}', "stopped"),
        ("failure", "", "", "failed"),
    ],
)
def test_the_deploy_pushes_the_entry_with_its_outcome(
    tmp_path: Path, origin: Path, up: str, stopped: str, rollout: str, outcome: str
) -> None:
    checkout = job(tmp_path, origin, "job")
    (checkout / "rollout.json").write_text(rollout)
    script = step("deploy.yml", "up", "Record the up in the history")["run"]
    env = {
        "STACK": "ibm",
        "UP": up,
        "STOPPED": stopped,
        "GH_TOKEN": "ghs_secret-token",
        "RUN_URL": "https://github.com/o/r/actions/runs/9",
        "RUNNER_TEMP": str(tmp_path / "runner"),
    }
    code, _ = run_script(script, checkout, env)
    assert code == 0
    given = " --rollout rollout.json" if rollout else ""
    assert (checkout / "python-calls").read_text() == (
        f"-m gatewayctl history ibm --record history-entry.jsonl --outcome {outcome} --workflow"
        f" deploy --run-url https://github.com/o/r/actions/runs/9{given}\n"
    )
    assert git(origin, "show", f"{BRANCH}:history/ibm.jsonl") == '{"entry":1}\n'
    assert git(origin, "log", "--format=%s", BRANCH) == f"Record the up of ibm ({outcome})\n"
    # A second up appends to the same file.
    again = job(tmp_path, origin, "again")
    assert run_script(script, again, env)[0] == 0
    assert git(origin, "show", f"{BRANCH}:history/ibm.jsonl") == '{"entry":1}\n' * 2
    for config in tmp_path.rglob("config"):
        assert "ghs_secret-token" not in config.read_text(errors="replace")

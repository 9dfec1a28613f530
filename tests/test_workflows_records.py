"""drift.yml's step "Record the status": the line ``status --record`` wrote goes to
``records/<stack>.jsonl`` on the branch ``hypershell-records`` (made on first use), pushed with
a rebase and another attempt when another stack's job pushed first. Run here with a real git
against a bare repository standing in for GitHub."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from tests.gh_expressions import evaluate
from tests.support import ROOT
from tests.workflow_helpers import fake, index_of, needs_bash, run_script, step, steps_of

GIT = shutil.which("git")
needs_git = pytest.mark.skipif(GIT is None, reason="needs git")
TITLE = "Record the status"
SCRIPT = ".github/scripts/append-to-records-branch.sh"
BRANCH = "hypershell-records"


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def line(stack: str, hour: int) -> str:
    return (
        f'{{"recorded":"2026-12-06T{hour:02d}:00:00+00:00","stack":"{stack}","state":"synced",'
        '"gateways":[]}\n'
    )


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    seed = tmp_path / "seed"
    git(tmp_path, "clone", "-q", str(bare), str(seed))
    git(seed, "commit", "-q", "--allow-empty", "-m", "main")
    git(seed, "push", "-q", "origin", "HEAD:refs/heads/main")
    return bare


def workspace(tmp_path: Path, origin: Path, stack: str, record: str) -> Path:
    """A job's checkout of main with the line status --record wrote."""
    checkout = tmp_path / f"job-{stack}"
    tmp_path.mkdir(parents=True, exist_ok=True)
    git(tmp_path, "clone", "-q", str(origin), str(checkout))
    (checkout / SCRIPT).parent.mkdir(parents=True)
    shutil.copy(ROOT / SCRIPT, checkout / SCRIPT)
    (checkout / "status-record.jsonl").write_text(record)
    return checkout


def run_step(checkout: Path, stack: str, **extra: str) -> tuple[int, dict[str, str]]:
    script = step("drift.yml", "refresh", TITLE)["run"]
    env = {
        "STACK": stack,
        "OUTCOME": "green",
        "GH_TOKEN": "ghs_secret-token",
        "RUNNER_TEMP": str(checkout.parent / f"runner-{stack}"),
        **extra,
    }
    return run_script(script, checkout, env)


def on_branch(origin: Path, stack: str) -> str:
    return git(origin, "show", f"{BRANCH}:records/{stack}.jsonl")


def test_the_record_step_follows_the_status_step_and_skips_a_failed_check() -> None:
    steps = steps_of("drift.yml", "refresh")
    assert index_of(steps, TITLE) == index_of(steps, "Status (") + 1
    recorded = step("drift.yml", "refresh", TITLE)
    assert recorded["env"] == {
        "GH_TOKEN": "${{ github.token }}",
        "OUTCOME": "${{ steps.status.outputs.outcome }}",
    }
    for outcome, runs in [("green", True), ("degraded", True), ("failed", False), ("", False)]:
        context = {"steps": {"status": {"outputs": {"outcome": outcome}}}}
        assert evaluate(recorded["if"], context) is runs, outcome
    status = step("drift.yml", "refresh", "Status (")["run"]
    assert "--format json --record status-record.jsonl > status.json" in status


@needs_bash
@needs_git
def test_the_first_record_makes_the_branch_and_the_next_appends(
    tmp_path: Path, origin: Path
) -> None:
    checkout = workspace(tmp_path, origin, "ibm", line("ibm", 5))
    code, _ = run_step(checkout, "ibm")
    assert code == 0
    assert on_branch(origin, "ibm") == line("ibm", 5)
    # The branch holds the records alone: no history of main.
    assert git(origin, "ls-tree", "-r", "--name-only", BRANCH) == "records/ibm.jsonl\n"
    assert git(origin, "log", "--format=%s", BRANCH) == "Record the status of ibm (green)\n"
    later = workspace(tmp_path / "later", origin, "ibm", line("ibm", 6))
    code, _ = run_step(later, "ibm", OUTCOME="drift")
    assert code == 0
    assert on_branch(origin, "ibm") == line("ibm", 5) + line("ibm", 6)
    assert git(origin, "log", "--format=%s", BRANCH).splitlines() == [
        "Record the status of ibm (drift)",
        "Record the status of ibm (green)",
    ]
    # The token was a header of those commands, never written into a config or a URL.
    for config in (tmp_path / "later").rglob("config"):
        assert "ghs_secret-token" not in config.read_text(errors="replace")
    assert git(origin, "ls-tree", "-r", "--name-only", "main") == ""  # main: untouched


RACE = """\
# The first push of this job: another stack's job pushes just before it.
if [ "$1 $2 $3" != "-C $RECORDS -c" ] || ! printf '%s ' "$@" | grep -q ' push '; then
  exec "$REAL_GIT" "$@"
fi
if [ ! -e "$RACED" ]; then
  touch "$RACED"
  (cd "$OTHER" && "$REAL_GIT" push -q origin "HEAD:refs/heads/hypershell-records") || exit 99
fi
exec "$REAL_GIT" "$@"
"""


@needs_bash
@needs_git
@pytest.mark.parametrize("exists", [False, True])
def test_a_push_another_job_beat_is_rebased_and_tried_again(
    tmp_path: Path, origin: Path, exists: bool
) -> None:
    if exists:  # the branch holds an older record of ibm
        first = workspace(tmp_path / "first", origin, "ibm", line("ibm", 4))
        assert run_step(first, "ibm")[0] == 0
    # Another job's commit to the branch, pushed between this job's fetch and its push.
    other = tmp_path / "other"
    git(tmp_path, "init", "-q", "-b", BRANCH, str(other))
    git(other, "remote", "add", "origin", str(origin))
    if exists:
        git(other, "fetch", "-q", "origin", BRANCH)
        git(other, "reset", "-q", "--hard", "FETCH_HEAD")
    (other / "records").mkdir(exist_ok=True)
    (other / "records" / "aws.jsonl").write_text(line("aws", 5))
    git(other, "add", "records/aws.jsonl")
    git(other, "commit", "-q", "-m", "Record the status of aws (green)")
    assert GIT is not None
    fake(tmp_path / "bin", "git", RACE)
    checkout = workspace(tmp_path, origin, "ibm", line("ibm", 5))
    code, _ = run_step(
        checkout,
        "ibm",
        PATH=f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
        REAL_GIT=GIT,
        RECORDS=str(tmp_path / "runner-ibm" / "records-ibm"),
        RACED=str(tmp_path / "raced"),
        OTHER=str(other),
    )
    assert code == 0
    assert (tmp_path / "raced").exists()
    assert on_branch(origin, "aws") == line("aws", 5)
    assert on_branch(origin, "ibm") == (line("ibm", 4) if exists else "") + line("ibm", 5)
    assert git(origin, "log", "--format=%s", BRANCH).splitlines()[:2] == [
        "Record the status of ibm (green)",
        "Record the status of aws (green)",
    ]


@needs_bash
@needs_git
def test_stacks_that_record_at_once_all_land(tmp_path: Path, origin: Path) -> None:
    stacks = ["aws", "ibm", "gcp"]
    checkouts = {s: workspace(tmp_path, origin, s, line(s, 5)) for s in stacks}
    codes: dict[str, int] = {}
    threads = [
        threading.Thread(target=lambda s=s: codes.__setitem__(s, run_step(checkouts[s], s)[0]))
        for s in stacks
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert codes == {s: 0 for s in stacks}
    for stack in stacks:
        assert on_branch(origin, stack) == line(stack, 5)


@needs_bash
def test_without_a_record_nothing_is_pushed(tmp_path: Path) -> None:
    (tmp_path / "status-record.jsonl").write_text("")
    fake(tmp_path / "bin", "git", 'echo "$*" >> git-calls\n')
    code, _ = run_step(tmp_path, "ibm", PATH=f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    assert code == 0
    assert not (tmp_path / "git-calls").exists()

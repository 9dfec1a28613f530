"""Interrupts (issue 10, classes 5 and 6): real signals sent to real ``python -m gatewayctl``
processes, at several points of their run.

Every interrupted run must end with exit 130 (SIGINT) or 143 (SIGTERM), exactly one line on
stderr (no traceback, no asyncio "Task was destroyed" dump), and nothing written: no output
directory created or replaced, no staging directory, git worktree or temporary directory left
behind, no child process still running. "Sometimes" was part of the bug (an interrupt
swallowed by the asyncio render, which then wrote its output), so each point is tried more
than once.

Where a run is in its course is observed from outside, never guessed from a clock alone: the
handlers are installed when ``/proc/<pid>/status`` shows SIGTERM caught; the render has
started when the notes printed just before it arrive on stderr (so those runs are not ``-q``,
which silences them); the diff's base worktree and base render
show up in ``git worktree list`` and in the temporary directory.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from gatewayctl import interrupts
from gatewayctl.engine import write_guard
from gatewayctl.engine.write_guard import MARKER, marker_text
from tests.builders import NOT_COPIED, git
from tests.processes import alive, children
from tests.support import ROOT, parallel_bench, render_bench

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/status").is_file(),
    reason="watches the child through /proc (Linux) to know where it is in its run",
)

PROGRESS_GATEWAYS = 90
"""Gateways of the generated stack: a render of several seconds, with the progress bar."""
DIFF_GATEWAYS = 40
"""Gateways of the generated stack the diff tests render twice."""
TIMEOUT = 300.0


@dataclass(frozen=True)
class Ended:
    code: int
    out: str
    err: str


def start(*args: str, env: dict[str, str] | None = None, cwd: Path = ROOT) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "gatewayctl", *args],
        cwd=cwd,
        env={**os.environ, **(env or {}), "PYTHONDONTWRITEBYTECODE": "1"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen[str]) -> Ended:
    out, err = process.communicate(timeout=TIMEOUT)
    return Ended(process.returncode, out, err)


def wait_for(condition: Callable[[], bool], what: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        if process.poll() is not None:
            pytest.fail(f"the process ended (exit {process.returncode}) before {what}")
        if time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.01)


def caught(pid: int) -> int:
    """The mask of signals that ``pid`` has handlers for."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return int(line.split()[1], 16)
    return 0


def handlers_installed(process: subprocess.Popen[str]) -> bool:
    """Python catches SIGINT from its start; SIGTERM is caught once ``gatewayctl`` takes over."""
    try:
        return bool(caught(process.pid) & (1 << (signal.SIGTERM - 1)))
    except OSError:
        return False


def send(process: subprocess.Popen[str], signum: int) -> None:
    assert process.poll() is None, "the process ended before the signal: the test saw nothing"
    process.send_signal(signum)


def assert_interrupted(ended: Ended, signum: int, *, notes: bool = False) -> None:
    """Exit 128+signal and one line on stderr; with ``notes`` (a run without ``-q``), the
    notes it printed on stderr before it was interrupted may precede that line."""
    code = {signal.SIGINT: 130, signal.SIGTERM: 143}[signal.Signals(signum)]
    name = signal.Signals(signum).name
    err = ended.err
    if notes:
        err = "".join(line for line in err.splitlines(True) if not line.startswith("note: "))
    assert (ended.code, err) == (code, f"interrupted ({name}); nothing written\n"), ended
    for dump in ("Traceback", "Task was destroyed", "Exception ignored", "KeyboardInterrupt"):
        assert dump not in ended.out + ended.err


def listing(directory: Path) -> dict[str, str]:
    """Relative path → content (or '/' for a directory) of everything under ``directory``."""
    return {
        p.relative_to(directory).as_posix(): "/" if p.is_dir() else p.read_text()
        for p in sorted(directory.rglob("*"))
    }


def processes_mentioning(text: str) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if text in cmdline:
            found.append(cmdline)
    return found


# --- start-up -------------------------------------------------------------------------------


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("delay", [0.0, 0.0, 0.05, 0.3])
def test_an_interrupt_during_start_up_is_one_line_and_nothing_written(
    tmp_path: Path, signum: int, delay: float
) -> None:
    # As soon as the handlers are in place (before the CLI and the SDKs are imported) and a
    # little later, while they are.
    out = tmp_path / "build" / "out"
    process = start("render", "local", "--out", str(out), "-q")
    wait_for(lambda: handlers_installed(process), "the handlers", process)
    time.sleep(delay)
    send(process, signum)
    assert_interrupted(finish(process), signum)
    assert list(tmp_path.iterdir()) == []


# --- during a render ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def large_stack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("large")
    render_bench().write_stack(root, PROGRESS_GATEWAYS)
    return root


def rendering(process: subprocess.Popen[str]) -> None:
    """Return once the render has started: the notes of the generated stack (plaintext
    secrets of a remote database) are printed on stderr just before it."""
    assert process.stderr is not None
    line = process.stderr.readline()
    assert line.startswith("note: "), line


def without_notes(ended: Ended) -> Ended:
    """``ended`` with the notes left on stderr after the first (:func:`rendering`) taken out."""
    kept = [line for line in ended.err.splitlines(True) if not line.startswith("note: ")]
    return Ended(ended.code, ended.out, "".join(kept))


def earlier_render(parent: Path) -> Path:
    """``parent/bench``: an earlier render, which a new one replaces."""
    out = parent / "bench"
    out.mkdir(parents=True)
    (out / MARKER).write_text(marker_text(["plan.json"]))
    (out / "plan.json").write_text('{"earlier": true}\n')
    return out


@pytest.mark.parametrize(
    ("delay", "document", "signum"),
    [
        (0.0, True, signal.SIGINT),
        (0.5, True, signal.SIGINT),
        (1.5, True, signal.SIGINT),
        (0.2, False, signal.SIGINT),  # the table's run
        (1.0, False, signal.SIGINT),
        (1.0, True, signal.SIGTERM),
    ],
)
def test_an_interrupt_during_a_render_keeps_the_old_output(
    large_stack: Path, tmp_path: Path, delay: float, document: bool, signum: int
) -> None:
    out = earlier_render(tmp_path / "build")
    before = listing(tmp_path)

    # Not -q: the notes tell when the render starts. Each run has the progress bar.
    process = start(
        "--root",
        str(large_stack),
        "render",
        "bench",
        "--out",
        str(out),
        *(["-o", "json"] * document),
    )
    rendering(process)
    time.sleep(delay)
    send(process, signum)
    ended = without_notes(finish(process))

    assert_interrupted(ended, signum)
    assert listing(tmp_path) == before


def test_the_large_render_does_replace_it_when_not_interrupted(
    large_stack: Path, tmp_path: Path
) -> None:
    # Left alone, the same run replaces the earlier render: the interrupts did interrupt.
    out = earlier_render(tmp_path / "build")
    ended = finish(start("--root", str(large_stack), "render", "bench", "--out", str(out), "-q"))
    assert ended.code == 0, ended.err
    assert ended.err == ""
    assert '"earlier"' not in (out / "plan.json").read_text()
    assert len(list((out / "manifests").rglob("*.yaml"))) > PROGRESS_GATEWAYS * 10
    assert [p.name for p in (tmp_path / "build").iterdir()] == ["bench"]


# --- while writing: all trees or none -------------------------------------------------------

WRITER = """
import os, shutil, signal, sys
from pathlib import Path

from gatewayctl import interrupts

interrupts.install()
from gatewayctl.engine import write_guard, render

parent, when, signum = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
first, second = parent / "first", parent / "new" / "second"
rename, write_text, rmtree = Path.rename, Path.write_text, shutil.rmtree


def interrupt(now: bool) -> None:
    if now:
        os.kill(os.getpid(), signum)


def patched_rename(self, target):
    interrupt(when == "commit" and Path(target) == second)
    return rename(self, target)


def patched_write_text(self, *args, **kwargs):
    interrupt(when == "staging" and self.name == "b.yaml" and "second" in self.parent.parent.name)
    return write_text(self, *args, **kwargs)


def patched_rmtree(path, *args, **kwargs):
    interrupt(when == "after" and "-replaced-" in str(path))
    return rmtree(path, *args, **kwargs)


Path.rename, Path.write_text, shutil.rmtree = patched_rename, patched_write_text, patched_rmtree
files = {"manifests/a.yaml": "new\\n", "manifests/b.yaml": "new\\n"}
with interrupts.transaction():
    write_guard.write_tree(first, files)
    write_guard.write_tree(second, files)
print("written")
"""


@pytest.fixture
def written_before(tmp_path: Path) -> Path:
    first = tmp_path / "first"
    (first / "manifests").mkdir(parents=True)
    (first / MARKER).write_text(marker_text(["manifests/a.yaml"]))
    (first / "manifests" / "a.yaml").write_text("old\n")
    return tmp_path


@pytest.mark.parametrize("when", ["staging", "commit"])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupt_while_writing_undoes_every_tree(
    written_before: Path, when: str, signum: int
) -> None:
    # The first tree is already in place when the second is interrupted (while its files are
    # written, or at the very rename that puts it in place): both are taken back.
    before = listing(written_before)
    process = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(written_before), when, str(int(signum))],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    ended = finish(process)
    assert_interrupted(ended, signum)
    assert listing(written_before) == before


def test_an_interrupt_after_the_commit_says_the_output_was_written(written_before: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(written_before), "after", str(int(signal.SIGINT))],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    ended = finish(process)
    assert (ended.code, ended.err) == (130, "interrupted (SIGINT) after the output was written\n")
    new = {".stacks-output": "/", "manifests": "/", "manifests/a.yaml": "new\n"}
    new |= {"manifests/b.yaml": "new\n"}
    expected = {f"first/{k}": v for k, v in new.items()} | {"first": "/", "new": "/"}
    expected |= {f"new/second/{k}": v for k, v in new.items()} | {"new/second": "/"}
    got = listing(written_before)
    marker = got.pop("first/.stacks-output"), got.pop("new/second/.stacks-output")
    assert all("Written by `python -m gatewayctl`" in text for text in marker)
    expected.pop("first/.stacks-output")
    expected.pop("new/second/.stacks-output")
    assert got == expected  # the replaced tree is gone too


# --- the diff: worktree, temporary directories, the base render -----------------------------


@pytest.fixture(scope="module")
def diff_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git repository holding this program and a generated stack ``bench``; the working
    tree adds a gateway."""
    repo = tmp_path_factory.mktemp("interrupted-diff") / "repo"
    shutil.copytree(ROOT, repo, ignore=NOT_COPIED)
    generated = repo.parent / "generated"
    generated.mkdir()
    render_bench().write_stack(generated, DIFF_GATEWAYS)  # gateways/ beside Pulumi.bench.yaml
    shutil.move(generated / "gateways", repo / "gateways" / "bench")  # as the others' are
    config = (generated / "Pulumi.bench.yaml").read_text()
    assert "declarationsDir: gateways\n" in config
    config = config.replace("declarationsDir: gateways\n", "declarationsDir: gateways/bench\n")
    (repo / "Pulumi.bench.yaml").write_text(config)
    git(repo, "init", "--quiet", "--initial-branch=main")
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "--message", "base")
    return repo


@dataclass(frozen=True)
class DiffRun:
    process: subprocess.Popen[str]
    temp: Path

    def worktrees(self, repo: Path) -> int:
        # Polled while the diff's own `git worktree add` writes the repository's worktree
        # records: a listing that fails in that moment (exit 128) counts as "not yet".
        try:
            return git(repo, "worktree", "list", "--porcelain").count("worktree ")
        except subprocess.CalledProcessError:
            return -1

    def base_rendering(self) -> bool:
        return any(p.name.startswith("stacks-diff-render-") for p in self.temp.iterdir())


def start_diff(repo: Path, tmp_path: Path) -> DiffRun:
    temp = tmp_path / "tmp"
    temp.mkdir(parents=True)
    process = start(
        "--root", str(repo), "diff", "bench", "--base", "main", env={"TMPDIR": str(temp)}
    )
    return DiffRun(process, temp)


@pytest.fixture
def clean_repo(diff_repo: Path) -> Iterator[Path]:
    # No base render cached by an earlier test: each renders the base (gatewayctl.diff.cache).
    shutil.rmtree(diff_repo / "build", ignore_errors=True)
    yield diff_repo
    # Whatever a test did, the next one starts from a repository with no extra worktree.
    listed = git(diff_repo, "worktree", "list", "--porcelain").splitlines()
    for line in listed[1:]:
        if line.startswith("worktree "):
            git(diff_repo, "worktree", "remove", "--force", "--force", line[len("worktree ") :])
    shutil.rmtree(diff_repo / ".git" / "worktrees", ignore_errors=True)


def assert_clean(repo: Path, run: DiffRun) -> None:
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert not (repo / ".git" / "worktrees").exists() or not any(
        (repo / ".git" / "worktrees").iterdir()
    )
    assert list(run.temp.iterdir()) == []
    assert processes_mentioning(str(run.temp)) == []  # the base render was stopped
    assert git(repo, "status", "--porcelain") == ""


@pytest.mark.parametrize(
    ("signum", "when"),
    [
        # As soon as git starts making it (`worktree add` runs a checkout of its own) ...
        (signal.SIGTERM, "made"),
        (signal.SIGTERM, "made"),
        (signal.SIGINT, "made"),
        # ... and once it is listed.
        (signal.SIGTERM, "listed"),
        (signal.SIGINT, "listed"),
    ],
)
def test_an_interrupt_once_the_worktree_exists_removes_it(
    clean_repo: Path, tmp_path: Path, signum: int, when: str
) -> None:
    admin = clean_repo / ".git" / "worktrees"
    run = start_diff(clean_repo, tmp_path)
    if when == "made":
        wait_for(lambda: admin.is_dir() and any(admin.iterdir()), "git's worktree", run.process)
    else:
        wait_for(lambda: run.worktrees(clean_repo) == 2, "the listed worktree", run.process)
    send(run.process, signum)
    ended = finish(run.process)
    assert_interrupted(ended, signum)
    assert ended.out == ""
    assert_clean(clean_repo, run)


@pytest.mark.parametrize("delay", [0.0, 1.0])
def test_an_interrupt_during_the_base_render_stops_it_and_cleans_up(
    clean_repo: Path, tmp_path: Path, delay: float
) -> None:
    run = start_diff(clean_repo, tmp_path)
    wait_for(run.base_rendering, "the base render", run.process)
    time.sleep(delay)
    send(run.process, signal.SIGTERM)
    ended = finish(run.process)
    assert_interrupted(ended, signal.SIGTERM)
    assert ended.out == ""
    assert_clean(clean_repo, run)


def test_an_interrupt_during_the_working_tree_render_cleans_up(
    clean_repo: Path, tmp_path: Path
) -> None:
    # The base and the working tree render at the same time; once the base render is cached,
    # the working tree's is all that runs after the worktree is made.
    first = start_diff(clean_repo, tmp_path / "first")
    assert finish(first.process).code == 0
    cached = listing(clean_repo / "build")
    assert any(name.endswith("cache-manifest.json") for name in cached)
    run = start_diff(clean_repo, tmp_path)
    wait_for(lambda: run.worktrees(clean_repo) == 2, "the listed worktree", run.process)
    time.sleep(0.3)
    assert not run.base_rendering()  # from the cache
    send(run.process, signal.SIGTERM)
    ended = finish(run.process)
    assert_interrupted(ended, signal.SIGTERM)
    assert ended.out == ""
    assert_clean(clean_repo, run)
    assert listing(clean_repo / "build") == cached


def test_the_diff_runs_to_its_end_when_not_interrupted(clean_repo: Path, tmp_path: Path) -> None:
    run = start_diff(clean_repo, tmp_path)
    ended = finish(run.process)
    assert ended.code == 0, ended.err
    assert "**No changes**" in ended.out
    assert_clean(clean_repo, run)


# --- the transaction, in process ------------------------------------------------------------


def test_the_message_says_written_only_once_something_was(tmp_path: Path) -> None:
    with interrupts.transaction():
        pass  # validate: nothing to write
    assert interrupts.message(signal.SIGINT) == "interrupted (SIGINT); nothing written"
    with interrupts.transaction():
        write_guard.write_file(tmp_path / "report.md", "report\n")
    assert interrupts.message(signal.SIGTERM) == (
        "interrupted (SIGTERM) after the output was written"
    )
    with interrupts.transaction():  # the next command starts afresh
        assert interrupts.message(signal.SIGINT) == "interrupted (SIGINT); nothing written"


def test_an_error_in_a_transaction_puts_files_and_trees_back(tmp_path: Path) -> None:
    report = tmp_path / "report.md"
    report.write_text("an earlier report\n")
    tree = earlier_render(tmp_path / "build")
    before = listing(tmp_path)
    with pytest.raises(RuntimeError, match="disk on fire"), interrupts.transaction():
        write_guard.write_file(report, "a new report\n")
        write_guard.write_tree(tree, {"plan.json": "{}\n"})
        write_guard.write_tree(tmp_path / "new" / "deeper" / "tree", {"plan.json": "{}\n"})
        assert report.read_text() == "a new report\n"  # in place until the end ...
        raise RuntimeError("disk on fire")
    assert listing(tmp_path) == before  # ... and taken back, created parents included


# --- render --all in worker processes ---------------------------------------------------------

WORKER_GATEWAYS = 40
"""Gateways of each of the three generated stacks: workers render for a few seconds."""


@pytest.fixture(scope="module")
def three_stacks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("three")
    parallel_bench().write_stacks(root, WORKER_GATEWAYS)
    return root


@pytest.mark.parametrize(
    ("signum", "group", "quiet"),
    [
        (signal.SIGINT, True, True),  # Ctrl-C in a terminal: the whole process group
        (signal.SIGINT, True, False),  # ... with the progress display
        (signal.SIGINT, False, True),
        (signal.SIGTERM, False, True),  # CI cancellation, `timeout`: the parent only
    ],
)
def test_an_interrupt_while_workers_render_stops_them_and_keeps_the_old_output(
    three_stacks: Path, tmp_path: Path, signum: int, group: bool, quiet: bool
) -> None:
    out = tmp_path / "build"
    for stack in parallel_bench().STACKS:
        earlier = earlier_render(out)
        earlier.rename(out / stack)
    before = listing(tmp_path)
    args = ["--root", str(three_stacks), "render", "--all", "--out", str(out), "--jobs", "2"]
    process = subprocess.Popen(
        [sys.executable, "-m", "gatewayctl", *args, *(["-q"] * quiet)],
        cwd=ROOT,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own group, as a shell gives a foreground job
    )
    wait_for(lambda: len(children(process.pid)) == 2, "two workers", process)
    workers = children(process.pid)
    time.sleep(0.3)
    if group:
        os.killpg(process.pid, signum)
    else:
        send(process, signum)
    ended = finish(process)

    assert_interrupted(ended, signum, notes=not quiet)
    assert listing(tmp_path) == before
    assert [pid for pid in workers if alive(pid)] == []

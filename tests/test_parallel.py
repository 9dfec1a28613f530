"""Stacks in worker processes (``gatewayctl.engine.parallel``): ``render --all`` and ``validate
--all`` with ``--jobs``. A parallel run writes what a serial one writes, byte for byte, prints the
same, fails the same way, and renders each stack in a process of its own.

Workers are forked from the test process (Linux), so a function patched here is patched in
them too: that is how a failure is injected into one stack's worker.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gatewayctl.cli import main as cli
from gatewayctl.engine import parallel, program, render, workers
from gatewayctl.errors import ToolError
from gatewayctl.inputs.stackfile import PROJECT
from gatewayctl.resolve import preparation
from gatewayctl.resolve.stack import load_stack
from tests.builders import copy_project, write_gateway
from tests.hostile_helpers import unlocated
from tests.support import ROOT, STACKS

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="workers are forked on Linux only"
)


def tree(directory: Path) -> dict[str, bytes]:
    """Relative path → bytes of every file under ``directory`` (the marker included)."""
    return {
        p.relative_to(directory).as_posix(): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def render_all(out: Path, jobs: int, *extra: str) -> int:
    return cli.main(["render", "--all", "--out", str(out), "--jobs", str(jobs), *extra])


# --- the same output --------------------------------------------------------------------------


def test_parallel_output_is_byte_identical_to_serial_with_the_same_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert render_all(tmp_path / "one", 1) == 0
    serial = capsys.readouterr()
    assert render_all(tmp_path / "many", 3) == 0
    par = capsys.readouterr()

    serial_tree, parallel_tree = tree(tmp_path / "one"), tree(tmp_path / "many")
    assert sorted(parallel_tree) == sorted(serial_tree)
    for name, data in serial_tree.items():
        assert parallel_tree[name] == data, name
    assert {name.split("/")[0] for name in serial_tree} == set(STACKS)
    assert (
        par.out.replace(f"{tmp_path}/many/", f"{tmp_path}/one/") == serial.out
    )  # summaries, in the same order
    assert par.err == serial.err  # the notes (stderr), in the same order
    assert all(line.startswith("note: ") for line in serial.err.splitlines())
    tables = [line.rstrip() for line in par.out.splitlines() if line.startswith("stack ")]
    assert tables == [f"stack {stack}" for stack in STACKS]


def test_validate_all_in_workers_prints_what_serial_prints(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["validate", "--all", "--jobs", "1"]) == 0
    serial = capsys.readouterr().out
    assert cli.main(["validate", "--all", "--jobs", "3"]) == 0
    assert capsys.readouterr().out == serial
    assert serial.splitlines()[-3:] == [
        "Pulumi.aws.yaml: ok (4 gateways, 2 clusters)",
        "Pulumi.ibm.yaml: ok (4 gateways, 1 cluster)",
        "Pulumi.local.yaml: ok (3 gateways, 1 cluster)",
    ]


@pytest.mark.parametrize("command", ["render", "validate"])
def test_invalid_input_in_one_stack_is_reported_as_serially(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    project = copy_project(tmp_path / "p")
    write_gateway(project, "broken", {"cluster": "nowhere", "replicas": "many"}, stack="aws")
    write_gateway(project, "broken", {"cluster": "nowhere"}, stack="local")
    errors = []
    for jobs in ("1", "2"):
        out = tmp_path / f"out-{jobs}"
        extra = ["--out", str(out)] if command == "render" else []
        args = ["--root", str(project), command, "--all", "--jobs", jobs, *extra]
        assert cli.main(args) == 2
        errors.append(capsys.readouterr().err)
        assert not out.exists()
    assert errors[0] == errors[1]
    printed = unlocated(errors[0])
    assert "error: gateways/aws/broken.yaml: spec.replicas: Input should be a valid" in printed
    assert "error: gateways/local/broken.yaml: spec.cluster: unknown cluster 'nowhere'" in printed
    assert errors[0].endswith("3 problem(s); nothing written\n")


# --- one process per stack ---------------------------------------------------------------------


def test_each_stack_renders_in_a_fresh_worker_and_serial_stays_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "pids"
    real = render.execute

    def recording(prepared: preparation.Prepared, *args: object) -> render.Rendered:
        with log.open("a") as stream:
            stream.write(f"{prepared.loaded.name} {os.getpid()}\n")
        return real(prepared, *args)  # type: ignore[arg-type]  # passed on as they came

    monkeypatch.setattr(render, "execute", recording)
    assert render_all(tmp_path / "parallel", 2, "-q") == 0
    lines = [line.split() for line in log.read_text().splitlines()]
    assert sorted(stack for stack, _ in lines) == sorted(STACKS)
    pids = {int(pid) for _, pid in lines}
    assert len(pids) == len(STACKS)  # a process of its own for each stack
    assert os.getpid() not in pids

    log.unlink()
    assert render_all(tmp_path / "serial", 1, "-q") == 0
    assert {line.split()[1] for line in log.read_text().splitlines()} == {str(os.getpid())}


_IMPORTED_BY_A_RENDER = """
import sys
from pathlib import Path
from gatewayctl.engine import program, render
from gatewayctl.resolve import preparation
program.load_ahead()
before = set(sys.modules)
for stack in sys.argv[2:]:
    render.execute(preparation.prepare(Path(sys.argv[1]), stack))
print(sorted(set(sys.modules) - before))
"""


def test_a_worker_forked_after_load_ahead_imports_nothing_more() -> None:
    """What a render imports on first use (the SDKs' lazy modules) is loaded in the parent before
    the workers are forked, or every worker would import it again. A fresh interpreter: the
    test process has imported everything already."""
    done = subprocess.run(
        [sys.executable, "-c", _IMPORTED_BY_A_RENDER, str(ROOT), *STACKS],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    assert done.stdout == "[]\n"


def test_the_render_reuses_the_stack_its_preparation_loaded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The program's own load of the stack (every declaration read and resolved again) is
    skipped when the config it reads is the one the preparation loaded the stack with; a
    different config is loaded, and rendered, as such."""
    prepared = preparation.prepare(ROOT, "ibm")
    loads: list[str] = []
    real = load_stack

    def counted(root: Path, stack: str, raw: Any = None) -> Any:
        loads.append(stack)
        return real(root, stack, raw)

    monkeypatch.setattr(program, "load_stack", counted)
    reused = render.execute(prepared)
    assert loads == []
    key = f"{PROJECT}:clusters"
    clusters = json.loads(prepared.config[key])
    clusters["roks-us-east"]["baseDomain"] = "other.example"
    changed = dataclasses.replace(prepared, config={**prepared.config, key: json.dumps(clusters)})
    loaded = render.execute(changed)
    assert loads == ["ibm"]
    hostnames = {
        g["name"]: g["hostname"] for g in json.loads(loaded.files["plan.json"])["gateways"]
    }
    assert hostnames["canary"] == "gw-openshell-canary.other.example"
    # The golden snapshots (tests/test_render.py) hold a reused render to the committed bytes.
    assert reused.files["plan.json"] != loaded.files["plan.json"]


def test_the_default_is_as_many_workers_as_cores_and_stacks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(parallel, "available_cores", lambda: 2)
    assert [parallel.default_jobs(n) for n in (0, 1, 2, 3, 10)] == [1, 1, 2, 2, 2]
    monkeypatch.setattr(parallel, "available_cores", lambda: 8)
    assert [parallel.default_jobs(n) for n in (1, 3, 10)] == [1, 3, 8]


@pytest.mark.parametrize("value", ["0", "-1", "two"])
def test_jobs_must_be_a_positive_whole_number(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(["render", "--all", "--jobs", value])
    assert exit_.value.code == 2
    assert "argument --jobs/-j" in capsys.readouterr().err


class Recorder(workers.Reporter):
    wanted = True

    def __init__(self) -> None:
        self.started: list[tuple[str, int]] = []
        self.registered: dict[str, int] = {}

    def start(self, stack: str, gateways: int) -> None:
        self.started.append((stack, gateways))

    def advance(self, stack: str, registered: int) -> None:
        self.registered[stack] = self.registered.get(stack, 0) + registered


@pytest.mark.parametrize("jobs", [1, 2])
def test_workers_report_every_registration_to_the_parent(jobs: int) -> None:
    prepared = [preparation.prepare(ROOT, stack) for stack in STACKS]
    recorder = Recorder()

    results = parallel.render_stacks(prepared, jobs=jobs, reporter=recorder)

    assert [r.prepared.loaded.name for r in results] == list(STACKS)
    assert recorder.started == [(p.loaded.name, len(p.loaded.gateways)) for p in prepared]
    assert recorder.registered == {r.prepared.loaded.name: r.resources for r in results}
    assert all(r.resources > 0 for r in results)
    assert all((r.peak_kib is not None) == (jobs > 1) for r in results)


# --- failures ----------------------------------------------------------------------------------


def earlier_renders(out: Path) -> dict[str, bytes]:
    """A first render of every stack under ``out`` (which a failed run must leave alone)."""
    assert render_all(out, 1, "-q") == 0
    return tree(out)


def failing_in(stack: str, error: BaseException) -> object:
    real = render.execute

    def execute(prepared: preparation.Prepared, *args: object) -> render.Rendered:
        if prepared.loaded.name == stack:
            raise error
        return real(prepared, *args)  # type: ignore[arg-type]  # passed on as they came

    return execute


@pytest.mark.parametrize(
    ("error", "line"),
    [
        (RuntimeError("two objects render to x"), "error: RuntimeError: two objects render to x"),
        (ToolError("the tool gave up"), "error: the tool gave up\n"),
    ],
)
def test_a_failing_stack_fails_the_run_as_serially_and_writes_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    error: Exception,
    line: str,
) -> None:
    out = tmp_path / "out"
    before = earlier_renders(out)
    capsys.readouterr()
    monkeypatch.setattr(render, "execute", failing_in("ibm", error))
    results = []
    for jobs in (1, 3):
        results.append((render_all(out, jobs, "-q"), capsys.readouterr()))
        assert tree(out) == before  # the other stacks' outputs are untouched
        assert sorted(p.name for p in out.iterdir()) == sorted(STACKS)  # no staging left
    (serial_code, serial), (parallel_code, par) = results
    assert serial_code == parallel_code == 1
    assert par.err == serial.err
    assert line in par.err


def test_with_debug_the_workers_traceback_is_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(render, "execute", failing_in("aws", KeyError("lost")))
    assert render_all(tmp_path / "out", 2, "-q", "--debug") == 1
    err = capsys.readouterr().err
    assert "in the worker process:" in err
    assert "raise error" in err  # the worker's frame
    assert err.rstrip().endswith("KeyError: 'lost'")


def test_a_worker_that_dies_fails_the_run_with_exit_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = render.execute

    def killed(prepared: preparation.Prepared, *args: object) -> render.Rendered:
        if prepared.loaded.name == "local":
            os.kill(os.getpid(), signal.SIGKILL)  # as the kernel's OOM killer does
        return real(prepared, *args)  # type: ignore[arg-type]  # passed on as they came

    monkeypatch.setattr(render, "execute", killed)
    assert render_all(tmp_path / "out", 2, "-q") == 1
    assert capsys.readouterr().err == (
        "error: stack local: its worker process was killed by SIGKILL before sending a result\n"
    )
    assert not (tmp_path / "out").exists()


def test_the_largest_stacks_start_first_and_results_keep_the_order_given() -> None:
    prepared = [preparation.prepare(ROOT, stack) for stack in ("local", "ibm", "aws")]
    assert [len(p.loaded.gateways) for p in prepared] == [3, 4, 4]
    recorder = Recorder()

    results = parallel.render_stacks(prepared, jobs=2, reporter=recorder)

    assert [stack for stack, _ in recorder.started] == ["ibm", "aws", "local"]
    assert [r.prepared.loaded.name for r in results] == ["local", "ibm", "aws"]

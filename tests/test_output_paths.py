"""Output paths and the files the tool reads but did not write (issue 42, item 13): a path under
a link to nothing, two outputs of one command on one path, and an existing file or a status
input too large to read are each a problem before anything is rendered or written (exit 2),
never a failure after the render, a lost report or a ``MemoryError``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gatewayctl import reading
from gatewayctl.engine import write_guard
from gatewayctl.status import inputs as status_inputs
from tests.builders import adopting_project
from tests.hostile_helpers import run_cli
from tests.status_builders import FIXTURES


def refused(*problems: str) -> str:
    lines = "".join(f"error: {problem}\n" for problem in problems)
    return f"{lines}{len(problems)} problem(s); nothing written\n"


def _listing(directory: Path) -> list[str]:
    return sorted(
        os.path.relpath(os.path.join(top, name), directory)
        for top, dirs, files in os.walk(directory)
        for name in dirs + files
    )


def test_the_limits() -> None:
    assert (reading.EXISTING_LIMIT, reading.STATUS_LIMIT) == (128 * 2**20, 512 * 2**20)
    assert [reading.size_text(n) for n in (512 * 2**20, 2048, 1000)] == [
        "512 MiB",
        "2 KiB",
        "1000 bytes",
    ]


@pytest.mark.parametrize(
    ("command", "leaf"),
    [(["render", "ibm", "-q"], "x"), (["import-file", "ibm"], "sub/ibm.json")],
)
def test_an_output_under_a_link_to_nothing_is_refused_before_the_render(
    tmp_path: Path, command: list[str], leaf: str
) -> None:
    root = adopting_project(tmp_path / "p")
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "nowhere")
    out = link / leaf
    before = _listing(tmp_path)
    ran = run_cli("--root", str(root), *command, "--out", str(out))
    problem = f"{out}: --out: {link} is a symbolic link to nothing"
    assert (ran.code, ran.out, ran.err) == (2, "", refused(problem))
    assert _listing(tmp_path) == before


def test_two_outputs_of_one_command_may_not_share_a_path(tmp_path: Path) -> None:
    root = adopting_project(tmp_path / "p")
    report = tmp_path / "report.md"
    same = ["--output", str(report), "--json", str(report)]
    ran = run_cli("--root", str(root), "diff", "ibm", "--base", "HEAD", *same)
    message = "give each output a path of its own"
    problem = f"{report}: --json: is also where --output writes (or holds it, or is inside it);"
    assert (ran.code, ran.out, ran.err) == (2, "", refused(f"{problem} {message}"))
    # Inside the diff cache, which the diff prunes; and a file inside the other output's path.
    cached = root / "build" / "diff-cache" / "report.md"
    inside = tmp_path / "report.md" / "steps.json"
    paths = ["--output", str(cached), "--json", str(inside)]
    ran = run_cli("--root", str(root), "diff", "ibm", "--base", "HEAD", *paths)
    assert (ran.code, ran.out) == (2, "")
    assert ran.err == refused(
        f"{cached}: --output: is also where the diff cache writes (or holds it, or is inside"
        f" it); {message}"
    )
    assert not report.exists() and not (root / "build").exists()
    # A path no check can use is its own check's problem, never a crash of this one.
    unusable = str(tmp_path / "a\0b")
    ran = run_cli("--root", str(root), "diff", "ibm", "--base", "HEAD", "--json", unusable)
    problem = f"{tmp_path}/a\\x00b: --json: is not a usable path (embedded null byte)"
    assert (ran.code, ran.out, ran.err) == (2, "", refused(problem))


def test_an_existing_file_too_large_to_check_is_never_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reading, "EXISTING_LIMIT", 1024)
    root = adopting_project(tmp_path / "p")
    out = tmp_path / "ibm.json"
    out.write_bytes(b" " * 1025)
    ran = run_cli("--root", str(root), "import-file", "ibm", "--out", str(out))
    problem = f"{out}: --out: is not a usable path (ibm.json is larger than the 1 KiB this reads)"
    assert (ran.code, ran.out, ran.err) == (2, "", refused(problem))
    assert out.read_bytes() == b" " * 1025
    # An output directory whose marker is as large.
    directory = tmp_path / "rendered"
    directory.mkdir()
    (directory / write_guard.MARKER).write_bytes(b"#" * 2048)
    ran = run_cli("--root", str(root), "render", "ibm", "--out", str(directory), "-q")
    problem = (
        f"{directory}: --out: is not a usable path ({write_guard.MARKER} is larger than the 1 KiB"
        " this reads)"
    )
    assert (ran.code, ran.out, ran.err) == (2, "", refused(problem))
    assert _listing(directory) == [write_guard.MARKER]


def test_a_status_input_too_large_is_a_problem_not_a_memory_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(status_inputs, "STATUS_LIMIT", 16 * 1024)
    big = tmp_path / "state.json"
    document = json.loads((FIXTURES / "state.json").read_text(encoding="utf-8"))
    big.write_text(json.dumps(document), encoding="utf-8")  # 60 KB
    expected = (
        "is larger than the 16 KiB this reads; expected the JSON of `pulumi preview --json`,"
        " `pulumi refresh --preview-only --json` or `pulumi stack export`"
    )
    for path in (big, Path("/dev/zero")):  # a device that never ends
        ran = run_cli("status", "ibm", "--from", str(path))
        assert (ran.code, ran.out, ran.err) == (2, "", refused(f"{path}: {path.name} {expected}"))

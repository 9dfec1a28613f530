"""Where the tool writes (``gatewayctl.engine.write_guard``): an output directory it wrote is
replaced
whole; paths that must not lose data are refused (what ``--out``/``--output`` may replace or
overwrite); stack names (docs/render.md, "Offline render and validation": the path rules).

Each refused case asserts the exact ``path: --out: problem`` line, exit 2 and that nothing on
disk changed (every file, directory and link, byte for byte).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from components import naming
from gatewayctl.cli import main as cli
from gatewayctl.deploy import adoption
from gatewayctl.diff.compare import compare
from gatewayctl.diff.report import build_report, is_report
from gatewayctl.diff.sides import Side
from gatewayctl.engine import render, write_guard
from gatewayctl.errors import Problem, printable
from gatewayctl.inputs import stackfile
from gatewayctl.resolve import preparation
from tests.builders import adopting_project, copy_project
from tests.helpers import written_files
from tests.strategies import DNS_LABELS, RELATIVE_PATHS
from tests.support import ROOT, rendered

NOT_WRITTEN = "it would be replaced whole: choose a new or empty directory"
NO_MARKER = (
    f"exists and was not written by this tool (no {write_guard.MARKER} in it); {NOT_WRITTEN}"
)
STACK_RULE = "is not a DNS-1123 label (lowercase a-z, 0-9, inner '-', at most 63)"
PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def snapshot(directory: Path) -> dict[str, str | bytes]:
    """Every entry under ``directory``: file bytes, ``dir`` or ``-> target`` for a link."""
    found: dict[str, str | bytes] = {}
    for top, dirs, files in os.walk(directory):
        for name in dirs + files:
            path = Path(top) / name
            key = path.relative_to(directory).as_posix()
            if path.is_symlink():
                found[key] = f"-> {os.readlink(path)}"
            elif path.is_dir():
                found[key] = "dir"
            else:
                found[key] = path.read_bytes()
    return found


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(list(argv))
    return code, out.getvalue(), err.getvalue()


def refused(problem: str) -> str:
    return f"error: {problem}\n1 problem(s); nothing written\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the project's stacks with a ``.git`` directory, as a checkout has."""
    # Ready: operator-manifests writes only stacks that are ready to deploy.
    root = copy_project(tmp_path / "p", ready=True)
    (root / ".git" / "refs").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return root


# --- the output directory is replaced whole -------------------------------------------------


def test_output_directory_is_replaced_whole(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "p")
    out = tmp_path / "ibm"
    args = ["--root", str(project), "render", "ibm", "--out", str(out), "-q"]
    assert cli.main(args) == 0
    gone = out / "manifests/roks-us-east/openshell-canary/deployment-openshell-gateway.yaml"
    assert gone.is_file()
    (project / "gateways/ibm/canary.yaml").unlink()  # a removed declaration
    assert cli.main(args) == 0
    assert not gone.exists() and not gone.parent.exists()
    assert written_files(out) == render.execute(preparation.prepare(project, "ibm")).files
    assert (out / write_guard.MARKER).read_text().splitlines()[2:] == sorted(written_files(out))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ibm", "p"]  # no staging left


def test_render_all_removes_the_outputs_of_removed_stacks_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert cli.main(["render", "local", "--out", str(out / "gone"), "-q"]) == 0
    (out / "notes").mkdir()
    (out / "notes" / "todo.txt").write_text("keep me\n")
    capsys.readouterr()

    assert cli.main(["render", "--all", "--out", str(out)]) == 0

    assert sorted(p.name for p in out.iterdir()) == ["aws", "ibm", "local", "notes"]
    # A note: on stderr (-q silences it).
    assert capsys.readouterr().err.endswith(f"removed {out / 'gone'} (no such stack any more)\n")


def test_render_all_again_replaces_each_stack_and_removes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Each replaced tree is set aside beside its stack's until the run ends: never a stale one.
    out = tmp_path / "out"
    assert cli.main(["render", "--all", "--out", str(out), "-q"]) == 0
    capsys.readouterr()

    assert cli.main(["render", "--all", "--out", str(out)]) == 0

    assert "removed" not in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["aws", "ibm", "local"]


def test_the_output_tree_is_readable_by_others(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    try:
        assert cli.main(["render", "local", "--out", str(tmp_path / "local"), "-q"]) == 0
    finally:
        os.umask(umask)
    assert (tmp_path / "local").stat().st_mode & 0o777 == 0o755


def test_every_output_is_checked_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "ibm").write_text("a file where a stack's directory would go\n")
    assert cli.main(["render", "--all", "--out", str(out), "-q"]) == 2
    assert sorted(p.name for p in out.iterdir()) == ["ibm"]
    assert f"error: {out / 'ibm'}: --out: exists and is not a directory" in (
        capsys.readouterr().err
    )


# --- directories the tool did not write -----------------------------------------------------


@pytest.fixture(scope="module")
def ready(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project, ready to deploy (operator-manifests refuses stacks that are not)."""
    return copy_project(tmp_path_factory.mktemp("ready"), ready=True)


LOOKS_LIKE_OURS = [
    {"manifests": None},
    {"plan.json": "{}\n"},
    {"manifests": None, "plan.json": "{}\n"},
    {"manifests/c/ns/deployment-x.yaml": "kind: Deployment\n", "plan.json": "{}\n"},
    {"stack-old.yaml": "kind: Stack\n"},
    {"stack-aws.yaml": "kind: Stack\n", "stack-ibm.yaml": "kind: Stack\n"},
]


def make(directory: Path, entries: dict[str, str | None]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in entries.items():
        path = directory / name
        if text is None:
            path.mkdir(parents=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)


def test_a_directory_it_did_not_write_is_never_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = tmp_path / "notes"
    mine.mkdir()
    (mine / "todo.txt").write_text("keep me\n")
    assert cli.main(["render", "local", "--out", str(mine), "-q"]) == 2
    assert (mine / "todo.txt").read_text() == "keep me\n"
    assert [p.name for p in mine.iterdir()] == ["todo.txt"]
    assert capsys.readouterr().err == (
        f"error: {mine}: --out: exists and was not written by this tool (no .stacks-output in"
        " it); it would be replaced whole: choose a new or empty directory\n"
        "1 problem(s); nothing written\n"
    )


@pytest.mark.parametrize("entries", LOOKS_LIKE_OURS)
@pytest.mark.parametrize("command", [["render", "local"], ["operator-manifests"]])
def test_a_directory_without_the_marker_is_never_replaced_whatever_it_holds(
    tmp_path: Path, ready: Path, entries: dict[str, str | None], command: list[str]
) -> None:
    out = tmp_path / "out"
    make(out, entries)
    before = snapshot(tmp_path)
    assert run("--root", str(ready), *command, "--out", str(out)) == (
        2,
        "",
        refused(f"{out}: --out: {NO_MARKER}"),
    )
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("command", [["render", "local", "-q"], ["operator-manifests"]])
def test_a_directory_the_tool_wrote_is_not_replaced_once_it_holds_a_users_file(
    tmp_path: Path, ready: Path, command: list[str]
) -> None:
    out = tmp_path / "out"
    assert run("--root", str(ready), *command, "--out", str(out))[0] == 0
    (out / "notes.txt").write_text("keep me\n")
    (out / "stack-prod.yaml").write_text("kind: Stack  # mine\n")
    (out / "sub").mkdir()
    (out / "sub" / "link").symlink_to(tmp_path)
    before = snapshot(tmp_path)
    message = (
        "holds files this tool did not write (notes.txt, stack-prod.yaml, sub/link); it would"
        " be replaced whole: move them out or choose a new or empty directory"
    )
    assert run("--root", str(ready), *command, "--out", str(out)) == (
        2,
        "",
        refused(f"{out}: --out: {message}"),
    )
    assert snapshot(tmp_path) == before


def test_render_all_never_removes_a_stale_render_holding_a_users_file(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run("render", "local", "--out", str(out / "gone"), "-q")[0] == 0
    (out / "gone" / "notes.txt").write_text("keep me\n")
    assert run("render", "--all", "--out", str(out), "-q")[0] == 0
    assert sorted(p.name for p in out.iterdir()) == ["aws", "gone", "ibm", "local"]
    assert (out / "gone" / "notes.txt").read_text() == "keep me\n"


@PROPERTY
@given(
    ours=st.sets(RELATIVE_PATHS, max_size=6),
    mine=st.sets(RELATIVE_PATHS, min_size=1, max_size=6),
)
def test_any_file_the_marker_does_not_list_keeps_the_directory(
    ours: set[str], mine: set[str]
) -> None:
    # Paths where one is a prefix directory of another cannot both be files.
    every = sorted(ours | mine)
    if any(b.startswith(a + "/") for a in every for b in every) or write_guard.MARKER in every:
        return
    mine -= ours
    with tempfile.TemporaryDirectory() as directory:
        base = Path(directory)
        out = base / "out"
        write_guard.write_tree(out, {name: f"ours {name}\n" for name in ours})
        assert write_guard.directory_problems(out, base) == []
        for name in mine:
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            (out / name).write_text("mine\n")
        problems = write_guard.directory_problems(out, base)
        if not mine:
            assert problems == []
            return
        shown = sorted(mine)
        listed = ", ".join(shown[:3]) + (f" and {len(shown) - 3} more" if len(shown) > 3 else "")
        assert problems == [
            Problem(
                str(out),
                "--out",
                f"holds files this tool did not write ({listed}); it would be replaced whole:"
                " move them out or choose a new or empty directory",
            )
        ]


@pytest.mark.parametrize("kind", ["link", "directory"])
def test_a_marker_that_is_a_link_or_a_directory_marks_nothing(tmp_path: Path, kind: str) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("")
    out = tmp_path / "out"
    make(out, {"plan.json": "{}\n"})
    if kind == "link":
        (out / write_guard.MARKER).symlink_to(elsewhere)
    else:
        (out / write_guard.MARKER).mkdir()
    before = snapshot(tmp_path)
    assert run("render", "local", "--out", str(out)) == (
        2,
        "",
        refused(f"{out}: --out: {NO_MARKER}"),
    )
    assert snapshot(tmp_path) == before


OLD_MARKER = (
    "Written by `python -m gatewayctl`. The next run replaces this directory whole:"
    " keep nothing else here.\n"
)


def test_a_render_marked_before_the_marker_listed_files_is_never_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Its files cannot be told from a user's added since: the allowance was the hole.
    out = tmp_path / "out"
    old = out / "local"
    make(old, {"plan.json": "{}\n", "manifests/old.yaml": "kind: X\n", "notes.txt": "mine\n"})
    (old / write_guard.MARKER).write_text(OLD_MARKER)
    before = snapshot(tmp_path)
    message = (
        f"was written by an older version of this tool whose {write_guard.MARKER} does not list its"
        " files, so files added since cannot be told apart; it is never replaced: empty or"
        " remove it once, or choose a new or empty directory"
    )
    assert run("render", "local", "--out", str(old), "-q") == (
        2,
        "",
        refused(f"{old}: --out: {message}"),
    )
    assert snapshot(tmp_path) == before
    # Nor is it removed as the render of a stack that no longer exists.
    old.rename(out / "gone")
    assert cli.main(["render", "--all", "--out", str(out)]) == 0
    assert (out / "gone" / "notes.txt").read_text() == "mine\n"
    assert "removed" not in capsys.readouterr().err


# --- paths that are never outputs -----------------------------------------------------------

PROTECTED = [
    (".git/out", "is inside a .git directory"),
    (".git", "is inside a .git directory"),
    ("gateways/local/out", "is inside a declarations directory (Pulumi.local.yaml"),
    ("gateways/local", "is inside a declarations directory (Pulumi.local.yaml"),
    ("gateways", "holds a declarations directory (Pulumi.aws.yaml gateways/aws)"),
    ("Pulumi.new.yaml", "is named like a Pulumi project or stack file; choose another name"),
    ("Pulumi.local.yaml", "is named like a Pulumi project or stack file; choose another name"),
    ("Pulumi.yaml", "is named like a Pulumi project or stack file; choose another name"),
]
LOCAL_DECLARATIONS = "Pulumi.local.yaml gateways/local)"


@pytest.mark.parametrize(("where", "problem"), PROTECTED)
@pytest.mark.parametrize(
    "command",
    [["render", "local", "-q"], ["operator-manifests"], ["import-file", "local"]],
)
def test_no_output_inside_git_or_declarations_or_over_project_files(
    project: Path, where: str, problem: str, command: list[str]
) -> None:
    out = project / where
    before = snapshot(project.parent)
    code, printed, err = run("--root", str(project), *command, "--out", str(out))
    problem = problem.replace("(Pulumi.local.yaml", f"({LOCAL_DECLARATIONS}")
    assert (code, printed, err) == (2, "", refused(f"{out}: --out: {problem}"))
    assert snapshot(project.parent) == before


def test_the_project_itself_is_never_an_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = copy_project(tmp_path / "p")
    before = written_files(project)
    for out in (project, tmp_path):
        args = ["--root", str(project), "render", "local", "--out", str(out), "-q"]
        assert cli.main(args) == 2
        assert (
            f"error: {out}: --out: holds the project itself; choose a directory of its own"
            in capsys.readouterr().err
        )
    assert written_files(project) == before


def test_an_out_through_a_link_into_git_is_refused(project: Path) -> None:
    (project.parent / "innocent").symlink_to(project / ".git")
    out = project.parent / "innocent" / "out"
    before = snapshot(project.parent)
    result = run("--root", str(project), "render", "local", "--out", str(out))
    assert result == (2, "", refused(f"{out}: --out: is inside a .git directory"))
    assert snapshot(project.parent) == before


def test_render_all_into_a_declarations_directory_is_refused(project: Path) -> None:
    base = project / "gateways" / "aws"
    before = snapshot(project)
    code, _, err = run("--root", str(project), "render", "--all", "--out", str(base), "-q")
    assert code == 2
    assert err.splitlines() == [
        f"error: {base / stack}: --out: is inside a declarations directory"
        f" (Pulumi.aws.yaml gateways/aws)"
        for stack in ("aws", "ibm", "local")
    ] + ["3 problem(s); nothing written"]
    assert snapshot(project) == before


def test_the_outputs_of_many_stacks_are_checked_reading_each_stack_file_once(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = project / "gateways" / "aws"
    outs = [base / stack for stack in ("aws", "ibm", "local")] + [project.parent / "fine"]
    one_by_one = [p for out in outs for p in write_guard.directory_problems(out, project)]
    read: list[str] = []

    def counted(root: Path, stack: str, *args: Any) -> Any:
        read.append(stack)
        return stackfile.read_stack_config(root, stack, *args)

    monkeypatch.setattr(write_guard, "read_stack_config", counted)
    together = write_guard.directories_problems(outs, project)

    assert together == one_by_one
    assert [p.path for p in together] == [str(out) for out in outs[:3]]
    assert sorted(read) == ["aws", "ibm", "local"]


@pytest.mark.parametrize(
    ("out", "problem"),
    [
        ("a\0b", "is not a usable path (embedded null byte)"),
        ("x" * 300 + "/y", "is not a usable path (File name too long)"),
    ],
)
def test_an_unusable_out_is_a_problem_not_a_crash(tmp_path: Path, out: str, problem: str) -> None:
    target = str(tmp_path / out)
    for command in (["render", "local", "-q"], ["import-file", "local"]):
        expected = refused(f"{printable(target)}: --out: {problem}")
        assert run(*command, "--out", target) == (2, "", expected)
    assert list(tmp_path.iterdir()) == []


# --- files: import-file --out, diff --output ------------------------------------------------


def test_import_file_never_overwrites_a_file_it_did_not_write(tmp_path: Path) -> None:
    root = adopting_project(tmp_path / "p")
    notes = tmp_path / "notes.json"
    notes.write_text('{"resources": []}\n')
    (tmp_path / "a-directory").mkdir()
    before = snapshot(tmp_path)
    for out, problem in (
        (
            notes,
            "exists and is not an import file this tool wrote; it is never overwritten:"
            " remove it or choose a new path",
        ),
        (
            root / "Pulumi.ibm.yaml",
            "is named like a Pulumi project or stack file; choose another name",
        ),
        (root / "gateways", "holds a declarations directory (Pulumi.ibm.yaml gateways/ibm)"),
        (tmp_path / "a-directory", "exists and is not a regular file"),
    ):
        result = run("--root", str(root), "import-file", "ibm", "--out", str(out))
        assert result == (2, "", refused(f"{out}: --out: {problem}"))
    assert snapshot(tmp_path) == before


def test_import_file_overwrites_its_own_file_whole(tmp_path: Path) -> None:
    root = adopting_project(tmp_path / "p")
    out = tmp_path / "out" / "ibm.json"
    assert run("--root", str(root), "import-file", "ibm", "--out", str(out))[0] == 0
    first = out.read_text()
    out.write_text(first.replace('"id"', '"id" ', 1))  # still an import file it wrote
    assert run("--root", str(root), "import-file", "ibm", "--out", str(out))[0] == 0
    assert out.read_text() == first
    assert [p.name for p in out.parent.iterdir()] == ["ibm.json"]  # no temporary file left
    assert out.stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_an_import_file_is_recognised_by_its_shape_only(tmp_path: Path) -> None:
    root = adopting_project(tmp_path / "p")
    written = adoption.import_file(render.execute(preparation.prepare(root, "ibm")))
    assert adoption.is_import_file(json.dumps(written, indent=2))
    for other in (
        "",
        "[]",
        "{" * 100_000,
        json.dumps({"resources": written["resources"]}),
        json.dumps({**written, "resources": []}),
        json.dumps({**written, "nameTable": {"k8s": next(iter(written["nameTable"]))}}),
        json.dumps(
            {
                **written,
                "resources": [{**r, "name": r["logicalName"]} for r in written["resources"]],
            }
        ),
    ):
        assert not adoption.is_import_file(other), other[:80]


def test_diff_output_never_overwrites_a_file_it_did_not_write(tmp_path: Path) -> None:
    mine = tmp_path / "notes.md"
    mine.write_text("# My notes\n")
    before = snapshot(tmp_path)
    args = ["diff", "local", "--base", "no-such-ref", "--output", str(mine)]
    problem = (
        "exists and is not a diff report this tool wrote; it is never overwritten: remove it"
        " or choose a new path"
    )
    assert run(*args) == (2, "", refused(f"{mine}: --output: {problem}"))
    pulumi_file = ROOT / "Pulumi.local.yaml"
    args[-1] = str(pulumi_file)
    problem = "is named like a Pulumi project or stack file; choose another name"
    assert run(*args) == (2, "", refused(f"{pulumi_file}: --output: {problem}"))
    assert snapshot(tmp_path) == before


def test_a_diff_report_is_recognised() -> None:
    files = rendered("local").files
    stack = compare("local", Side(files={}, note="has no stack `local`"), Side(files=files))
    for notes in ([], ["the base pins other dependencies"]):
        report = build_report([stack], base_label="b", command="c", notes=notes)
        assert is_report(report)
    assert not is_report("# My notes\n\n## Offline diff: stack `x`\n")
    assert not is_report("")


# --- stack names ----------------------------------------------------------------------------


@PROPERTY
@given(DNS_LABELS)
def test_every_dns_label_is_a_stack_name(stack: str) -> None:
    assert stackfile.stack_name_problems(stack) == []


@PROPERTY
@given(st.text(max_size=70).filter(lambda s: not naming.is_dns1123_label(s)))
def test_anything_else_is_not_a_stack_name(stack: str) -> None:
    assert stackfile.stack_name_problems(stack) == [
        Problem(f"Pulumi.{stack}.yaml", "", f"stack name {stack!r} {STACK_RULE}")
    ]


WALKS_OUT = ["../x", "../../escape", "a/b", "/tmp/abs", ".", "..", "UPPER", "x.", "a..b"]


@pytest.mark.parametrize("stack", WALKS_OUT)
def test_import_file_refuses_a_stack_name_that_is_no_label(project: Path, stack: str) -> None:
    before = snapshot(project.parent)
    code, printed, err = run("--root", str(project), "import-file", stack)
    assert (code, printed) == (2, "")
    assert err == refused(f"Pulumi.{stack}.yaml: stack name {stack!r} {STACK_RULE}")
    assert snapshot(project.parent) == before


@PROPERTY
@given(
    st.text(
        st.characters(blacklist_categories=["Cs"], blacklist_characters="\0"), max_size=40
    ).filter(lambda s: s and not s.startswith("-") and not naming.is_dns1123_label(s))
)
def test_no_command_accepts_a_stack_name_that_is_no_label(stack: str) -> None:
    for command in ("import-file", "render", "validate"):
        code, printed, err = run("--root", str(ROOT), command, stack)
        assert (code, printed) == (2, "")
        assert err.splitlines()[0].startswith("error: Pulumi.")
        assert err.endswith(f"{STACK_RULE}\n1 problem(s); nothing written\n")


@pytest.mark.parametrize("name", ["Pulumi..yaml", "Pulumi.Prod.yaml", "Pulumi.a.b.yaml"])
def test_a_stack_file_whose_name_is_no_stack_name_is_a_problem_for_all(
    project: Path, name: str
) -> None:
    shutil.copy(project / "Pulumi.local.yaml", project / name)
    stack = name[len("Pulumi.") : -len(".yaml")]
    out = project.parent / "out"
    before = snapshot(project.parent)
    for command in (["render", "--all", "--out", str(out), "-q"], ["validate", "--all"]):
        code, printed, err = run("--root", str(project), *command)
        assert (code, printed) == (2, "")
        assert err == refused(f"{name}: stack name {stack!r} {STACK_RULE}")
    assert snapshot(project.parent) == before
    code, _, err = run("--root", str(project), "render", "local", "--out", str(out), "-q")
    assert (code, err) == (0, "")  # a stack of its own is unaffected
    assert sorted(p.name for p in out.iterdir()) == [write_guard.MARKER, "manifests", "plan.json"]


def test_the_pull_request_workflows_placeholder_may_be_overwritten_by_the_report() -> None:
    # pull-request.yml writes a placeholder comment to the report file, then runs
    # `diff --output` on it: the placeholder must count as a report, or the diff exits 2.
    workflow = (ROOT / ".github/workflows/pull-request.yml").read_text()
    formats = re.findall(r"printf '(## Offline diff[^']*)'", workflow)
    assert len(formats) >= 1
    for template in formats:
        text = template.replace("%s", "local").replace("\\n", "\n")
        assert is_report(text), template

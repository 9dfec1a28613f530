"""The command line (``gatewayctl.cli.main``): exit codes, what ``validate`` prints, help texts,
the progress display."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from gatewayctl.cli import main as cli
from gatewayctl.cli.progress import RenderProgress
from gatewayctl.engine import outputs, render
from gatewayctl.inputs.releases import load_releases
from gatewayctl.resolve.releases import history_problems
from tests.builders import copy_project, write_gateway
from tests.support import ROOT

# --- exit codes -----------------------------------------------------------------------------


def test_no_stack_under_root_and_unknown_stacks_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["--root", str(tmp_path), "validate", "--all"]) == 2
    assert capsys.readouterr().err == (
        f"error: {tmp_path}: no Pulumi.<stack>.yaml here; is --root the project?\n"
        "1 problem(s); nothing written\n"
    )
    assert cli.main(["render", "gcp"]) == 2
    assert capsys.readouterr().err.startswith(
        "error: Pulumi.gcp.yaml: no such stack; the stacks here are aws, ibm, local\n"
    )


def test_unknown_stack_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["validate", "gcp"]) == 2
    assert (
        "error: Pulumi.gcp.yaml: no such stack; the stacks here are aws, ibm, local"
        in capsys.readouterr().err
    )


def test_invalid_input_exits_2_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = copy_project(tmp_path / "p")
    write_gateway(project, "broken", {"cluster": "rosa-eu-west-1", "replicas": "many"}, stack="aws")
    out = tmp_path / "out"
    code = cli.main(["--root", str(project), "render", "--all", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert not out.exists()
    # Each at its value in the file (tests/builders.py writes `spec:` on line 5).
    assert (
        "error: gateways/aws/broken.yaml:6:12: spec.cluster: unknown cluster 'rosa-eu-west-1'"
        in err
    )
    assert (
        "error: gateways/aws/broken.yaml:7:13: spec.replicas: Input should be a valid integer"
        in err
    )
    assert "2 problem(s); nothing written" in err


def test_unexpected_failure_exits_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    def boom(*_: object, **__: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(outputs, "write_tree", boom)
    assert cli.main(["render", "local", "--out", str(tmp_path / "x")]) == 1
    assert "error: RuntimeError: disk on fire" in capsys.readouterr().err


def test_an_interrupt_exits_130_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    def interrupted(*_: object, **__: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(render, "execute", interrupted)
    assert cli.main(["render", "local", "--out", str(tmp_path / "x")]) == 130
    assert capsys.readouterr().err == "interrupted (SIGINT); nothing written\n"
    assert not (tmp_path / "x").exists()


def test_an_error_after_a_first_tree_is_written_takes_it_back(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # render --all writes the stacks one after the other: a failure at the second leaves no
    # first either (and an interrupt is the same; see tests/test_interrupts.py).
    written = []
    real = outputs.write_tree

    def second_fails(out: Path, files: dict[str, str]) -> None:
        if written:
            raise OSError("disk full")
        real(out, files)
        written.append(out)

    monkeypatch.setattr(outputs, "write_tree", second_fails)
    assert cli.main(["render", "--all", "--out", str(tmp_path / "all")]) == 1
    assert "error: OSError: disk full" in capsys.readouterr().err
    assert written == [tmp_path / "all" / "aws"]
    assert list(tmp_path.iterdir()) == []


# --- validate -------------------------------------------------------------------------------


def test_validate_reports_each_stack(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["validate", "--all"]) == 0
    absent = " is not in the project directory; `pulumi up` needs it to verify the database"
    absent += " server (the offline render does not)"
    # What the checkout's history cannot tell of the releases (none in a full clone; a note in
    # a shallow one, as CI's test job clones): after the first stack's notes.
    history = [f"note: {n}" for n in history_problems(ROOT, load_releases(ROOT)[0])[1]]
    # The result on stdout, the notes on stderr (issue 25 item 3).
    printed = capsys.readouterr()
    assert printed.out.splitlines() == [
        "Pulumi.aws.yaml: ok (4 gateways, 2 clusters)",
        "Pulumi.ibm.yaml: ok (4 gateways, 1 cluster)",
        "Pulumi.local.yaml: ok (3 gateways, 1 cluster)",
    ]
    assert printed.err.splitlines() == [
        "note: Pulumi.aws.yaml: clusters.rosa-us-east-1.database.sslRootCert:"
        f" 'certs/aws-rds-global-bundle.pem'{absent}",
        "note: Pulumi.aws.yaml: clusters.rosa-us-west-2.database.sslRootCert:"
        f" 'certs/aws-rds-global-bundle.pem'{absent}",
        *history,
        "note: Pulumi.ibm.yaml: clusters.roks-us-east.database.sslRootCert:"
        f" 'certs/ibm-databases-for-postgresql-ca.pem'{absent}",
    ]


# --- help -----------------------------------------------------------------------------------


def test_help_documents_commands_and_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(["render", "--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    assert "--all" in text and "--out" in text
    assert "exit codes: 0 ok; 2 invalid input" in text


@pytest.mark.parametrize(
    ("command", "example"),
    [
        ("import-file", "python -m gatewayctl import-file ibm "),
        ("operator-manifests", "python -m gatewayctl operator-manifests "),
    ],
)
def test_each_command_help_shows_its_own_examples(
    capsys: pytest.CaptureFixture[str], command: str, example: str
) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main([command, "--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    assert example in text
    assert "python -m gatewayctl render" not in text


# --- progress -------------------------------------------------------------------------------


def test_progress_bar_for_many_gateways(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "p")
    for index in range(cli.PROGRESS_MIN_GATEWAYS):
        write_gateway(project, f"t{index:02}", stack="local")
    prepared = render.prepare(project, "local")
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=120)
    (result,) = cli._render_all([prepared], console, show_progress=True, jobs=1)
    gateways = cli.PROGRESS_MIN_GATEWAYS + 3
    assert f"rendering local ({gateways} gateways)" in buffer.getvalue()
    assert f"{result.resources} resources" in buffer.getvalue()
    assert len(result.gateways) == cli.PROGRESS_MIN_GATEWAYS + 3
    quiet = io.StringIO()
    cli._render_all([prepared], Console(file=quiet, force_terminal=True), False, jobs=1)
    assert quiet.getvalue() == ""


def test_one_progress_display_for_the_stacks_rendering_in_workers(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "p")
    for index in range(cli.PROGRESS_MIN_GATEWAYS):
        write_gateway(project, f"t{index:02}", stack="local")
        write_gateway(project, f"t{index:02}", {"cluster": "roks-us-east"}, stack="ibm")
    prepared = [render.prepare(project, stack) for stack in ("aws", "ibm", "local")]
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=120)

    results = cli._render_all(prepared, console, show_progress=True, jobs=2)

    shown = buffer.getvalue()
    assert [r.prepared.loaded.name for r in results] == ["aws", "ibm", "local"]
    for result in results[1:]:  # aws has fewer gateways than the display's threshold
        name, gateways = result.prepared.loaded.name, len(result.gateways)
        assert f"rendering {name} ({gateways} gateways)" in shown
        assert f"{result.resources} resources" in shown
    assert "rendering aws" not in shown


def test_no_progress_display_into_a_pipe_or_a_file() -> None:
    # rich draws nothing there but the blank line its transient display leaves at the end.
    prepared = render.prepare(ROOT, "local")
    buffer = io.StringIO()
    progress = RenderProgress(Console(file=buffer), [prepared], min_gateways=1)
    progress.start("local", len(prepared.loaded.gateways))
    progress.advance("local", 5)
    progress.stop()
    assert (progress.wanted, buffer.getvalue()) == (False, "")
    shown = io.StringIO()
    drawn = RenderProgress(Console(file=shown, force_terminal=True), [prepared], min_gateways=1)
    assert drawn.wanted is True

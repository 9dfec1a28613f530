"""The command line's top (``gatewayctl.cli.main``): the exit codes it gives errors, and the
help texts."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest

from gatewayctl.cli import main as cli
from gatewayctl.engine import render, write_guard
from tests.builders import copy_project, write_gateway

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

    monkeypatch.setattr(write_guard, "finish_tree", boom)
    assert cli.main(["render", "local", "--out", str(tmp_path / "x")]) == 1
    assert "error: RuntimeError: disk on fire" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # the staged tree removed


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
    # render --all moves the stacks' trees into place one after the other: a failure at the
    # second leaves no first either (and an interrupt is the same; see tests/test_interrupts.py).
    written: list[Path] = []
    real = write_guard.finish_tree

    def second_fails(out: Path, staging: Path, files: Iterable[str]) -> None:
        if written:
            raise OSError("disk full")
        real(out, staging, files)
        written.append(out)

    monkeypatch.setattr(write_guard, "finish_tree", second_fails)
    assert cli.main(["render", "--all", "--out", str(tmp_path / "all")]) == 1
    assert "error: OSError: disk full" in capsys.readouterr().err
    assert written == [tmp_path / "all" / "aws"]
    assert list(tmp_path.iterdir()) == []


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
        ("import-file", "  gatewayctl import-file ibm "),
        ("operator-manifests", "  gatewayctl operator-manifests "),
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
    assert "gatewayctl render" not in text and "python -m" not in text

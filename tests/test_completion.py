"""Issue 25 item 6: ``gatewayctl completion bash|zsh``, generated from the CLI's parser and
run here in a real bash."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from gatewayctl.cli import completion
from gatewayctl.cli import main as cli

BASH = shutil.which("bash")


def completions(*lines: str) -> list[str]:
    """What the generated bash completion offers for each command line (the word under the
    cursor is the last one, possibly empty)."""
    script = completion.script("bash", cli.parser())
    call = 'COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _gatewayctl; echo "${COMPREPLY[*]}"\n'
    driver = "".join(f"COMP_WORDS=({line}); {call}" for line in lines)
    assert BASH is not None
    done = subprocess.run(
        [BASH, "--norc", "--noprofile", "-c", f"{script}\n{driver}"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stderr == ""
    return done.stdout.splitlines()


@pytest.mark.skipif(BASH is None, reason="no bash here")
def test_bash_completes_commands_and_each_commands_options() -> None:
    assert completions(
        "gatewayctl ren",
        "gatewayctl s",
        "gatewayctl render --a",
        "gatewayctl --root /tmp/x val",
        "gatewayctl --debug diff --b",
        "gatewayctl status ibm --f",
        "gatewayctl schema --s",
        "gatewayctl ''",
    ) == [
        "render",
        "stacks status schema",
        "--all",
        "validate",
        "--base",
        "--from --format",
        "--stack-file",
        "-h --help --root --debug --version render validate diff import-file"
        " operator-manifests promote rotate move stacks driver status window rollout history"
        " rollback notify schema explain completion graph",
    ]


@pytest.mark.skipif(BASH is None, reason="no bash here")
def test_bash_completion_knows_every_command_of_the_parser() -> None:
    (offered,) = completions("gatewayctl ''")
    commands = set(completion._commands(cli.parser()))
    assert commands <= set(offered.split())
    assert "completion" in commands


def test_the_command_prints_the_script_and_zsh_runs_it_through_bashcompinit(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["completion", "bash"]) == 0
    bash = capsys.readouterr().out
    assert bash.endswith("complete -o default -F _gatewayctl gatewayctl\n")
    assert cli.main(["completion", "zsh"]) == 0
    zsh = capsys.readouterr().out
    assert zsh.splitlines()[0] == "#compdef gatewayctl"
    assert zsh == completion._ZSH + bash
    assert "autoload -U +X bashcompinit && bashcompinit\n" in zsh


def test_another_shell_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(["completion", "fish"])
    assert exited.value.code == 2
    assert capsys.readouterr().err == (
        "usage: gatewayctl completion [-h] [--debug] SHELL\n"
        "gatewayctl completion: error: argument SHELL: invalid choice: 'fish'"
        " (choose from 'bash', 'zsh')\n"
    )

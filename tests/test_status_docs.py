"""docs/status.md's commands run as written (issue 43 item 2): each ``$ gatewayctl ...`` (or
``.venv/bin/python -m gatewayctl ...``) of its console blocks runs from the repository's root
on the committed fixtures, exits with the code its ``$ echo $?`` shows, and prints the lines
shown (in order; ``...`` stands for lines left out)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass

import pytest

from tests.support import ROOT

PAGE = ROOT / "docs" / "status.md"
PREFIXES = ("gatewayctl ", ".venv/bin/python -m gatewayctl ", "python -m gatewayctl ")


@dataclass(frozen=True)
class Example:
    command: str
    shown: list[str]
    code: int | None


def examples(text: str) -> list[Example]:
    """The gatewayctl commands of the page's console blocks, each with the lines shown after
    it and the exit code the next ``$ echo $?`` shows."""
    found: list[Example] = []
    for block in re.findall(r"```console\n(.*?)```", text, re.S):
        steps: list[tuple[str, list[str]]] = []
        for line in block.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            elif steps:
                steps[-1][1].append(line)
        for index, (command, shown) in enumerate(steps):
            if not command.startswith(PREFIXES):
                continue
            after = steps[index + 1] if index + 1 < len(steps) else None
            code = int(after[1][0]) if after and after[0] == "echo $?" else None
            found.append(Example(command, shown, code))
    return found


def run(command: str) -> subprocess.CompletedProcess[str]:
    prefix = next(p for p in PREFIXES if command.startswith(p))
    argv = [sys.executable, "-m", "gatewayctl", *shlex.split(command.removeprefix(prefix))]
    return subprocess.run(
        argv,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "NO_COLOR": "1"},
    )


def in_order(shown: list[str], printed: list[str]) -> list[str]:
    """The lines shown that the output lacks, or holds out of order."""
    rest = iter(printed)
    return [line for line in shown if line != "..." and line not in rest]


PAGE_EXAMPLES = examples(PAGE.read_text(encoding="utf-8"))


def test_the_page_has_its_examples() -> None:
    assert len(PAGE_EXAMPLES) >= 3
    assert all(e.code is not None for e in PAGE_EXAMPLES)
    assert {e.command.split()[2] for e in PAGE_EXAMPLES} >= {"ibm", "local"}


@pytest.mark.parametrize("example", PAGE_EXAMPLES, ids=lambda e: " ".join(e.command.split()[:4]))
def test_each_command_of_the_page_runs_as_written(example: Example) -> None:
    done = run(example.command)
    assert done.returncode == example.code, done.stderr
    printed = [line.rstrip() for line in (done.stdout + done.stderr).splitlines()]
    assert in_order([line.rstrip() for line in example.shown], printed) == []


def test_a_command_on_files_that_do_not_exist_fails() -> None:
    (example,) = examples(
        "```console\n$ gatewayctl status ibm --from refresh.json state.json\nx\n$ echo $?\n0\n```"
    )
    assert example.code == 0
    assert run(example.command).returncode != 0

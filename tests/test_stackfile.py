"""The stack file's name (``gatewayctl.stackfile``): spelt by one function, listed by one."""

from __future__ import annotations

import re
from pathlib import Path

from gatewayctl import stackfile
from gatewayctl.stackfile import stack_file, stacks_with_files
from tests.support import ROOT

PACKAGE = ROOT / "gatewayctl"

# A stack file's name built from parts: an f-string or concatenation starting with "Pulumi.",
# its glob, or the length of its prefix.
SPELLING = re.compile(r"""f["']Pulumi\.\{|["']Pulumi\.["']\s*\+|["']Pulumi\.\*|len\(["']Pulumi\.""")

UNWIRED: dict[str, int] = {}
"""Modules allowed to spell the stack file themselves: none, every one goes through
``stack_file``."""


def test_the_stack_file_of_a_stack_and_its_pattern() -> None:
    assert stack_file("aws") == "Pulumi.aws.yaml"
    assert stack_file("aws", ".yml") == "Pulumi.aws.yml"
    assert stack_file("*") == "Pulumi.*.yaml"
    assert stackfile.STACK_FILE_SUFFIXES == (".yaml", ".yml")


def test_stacks_are_listed_from_their_files_whatever_their_names(tmp_path: Path) -> None:
    for name in ("Pulumi.b.yaml", "Pulumi.a-b.yaml", "Pulumi.a.yaml", "Pulumi..yaml"):
        (tmp_path / name).write_text("config: {}\n", encoding="utf-8")
    (tmp_path / "Pulumi.dir.yaml").mkdir()  # a glob match, as before the split
    for other in ("Pulumi.yaml", "Pulumi.c.yml", "pulumi.d.yaml", "Pulumi.e.yaml.bak"):
        (tmp_path / other).write_text("config: {}\n", encoding="utf-8")
    assert stacks_with_files(tmp_path) == ["", "a", "a-b", "b", "dir"]
    assert [stack_file(s) for s in stacks_with_files(tmp_path)] == [
        "Pulumi..yaml",
        "Pulumi.a.yaml",
        "Pulumi.a-b.yaml",
        "Pulumi.b.yaml",
        "Pulumi.dir.yaml",
    ]


def test_no_other_module_spells_the_stack_file() -> None:
    found: dict[str, int] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "stackfile.py":
            continue
        count = len(SPELLING.findall(path.read_text(encoding="utf-8")))
        if count:
            found[path.relative_to(PACKAGE).as_posix()] = count
    assert found == UNWIRED

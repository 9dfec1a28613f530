"""The report's "Not committed" risks (issue 42, item 6): for a project below its repository's
root they name its files (they were always empty: git's porcelain paths are the repository's),
and a file name is never Markdown (it could forge a heading, a link or HTML)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gatewayctl.diff import risks
from gatewayctl.diff.report import build_report
from tests.builders import git, write_text
from tests.test_diff_risks import diff_with, risk_section

TAIL = (
    "this report includes it as the working tree has it; the pull request does not until it is"
    " committed"
)


def _repository(top: Path, project: str) -> Path:
    """A repository at ``top`` whose project is ``top/project`` (``""``: the top itself), with
    one committed declaration and stack file, and a file outside the project."""
    root = top / project if project else top
    write_text(root, "gateways/test/kept.yaml", "a: 1\n")
    write_text(root, "gateways/test/edited.yaml", "a: 1\n")
    write_text(root, "Pulumi.test.yaml", "config: {}\n")
    write_text(top, "elsewhere/gateways/test/other.yaml", "a: 1\n")
    git(top, "init", "--quiet")
    git(top, "add", "--all")
    git(top, "commit", "--quiet", "-m", "base")
    write_text(root, "gateways/test/edited.yaml", "a: 2\n")
    write_text(root, "gateways/test/new.yaml", "a: 1\n")
    (root / "Pulumi.test.yaml").unlink()
    write_text(top, "elsewhere/gateways/test/other.yaml", "a: 2\n")  # another project's
    write_text(top, "Pulumi.top.yaml", "config: {}\n")  # not under the project
    return root


@pytest.mark.parametrize("project", ["", "infra/gateways-project"])
def test_the_uncommitted_files_are_the_projects_wherever_it_sits(
    tmp_path: Path, project: str
) -> None:
    root = _repository(tmp_path, project)
    found = risks.uncommitted(root)
    expected: tuple[risks.Uncommitted, ...] = (
        risks.Uncommitted(path="Pulumi.test.yaml", state="deleted"),
        risks.Uncommitted(path="gateways/test/edited.yaml", state="modified"),
        risks.Uncommitted(path="gateways/test/new.yaml", state="untracked"),
    )
    if not project:  # at the top, the repository's own stack file is the project's
        top = risks.Uncommitted(path="Pulumi.top.yaml", state="untracked")
        expected = tuple(sorted((top, *expected), key=lambda u: u.path))
    assert found == expected
    section = risk_section(
        build_report([diff_with()], base_label="b", command="c", uncommitted=found)
    )
    assert f"**Not committed** ({len(expected)}):" in section
    assert f"- `gateways/test/new.yaml` (untracked): {TAIL}\n" in section


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("plain.yaml", "`gateways/test/plain.yaml`"),
        ("a`b.yaml", "``gateways/test/a`b.yaml``"),
        ("x.yaml`", "`` gateways/test/x.yaml` ``"),
        (
            "``` [link](javascript:alert(1)).yaml",
            "````gateways/test/``` [link](javascript:alert(1)).yaml````",
        ),
        (
            "a\n## Forged heading\n<img src=x onerror=alert(1)>.yaml",
            "`gateways/test/a\\n## Forged heading\\n<img src=x onerror=alert(1)>.yaml`",
        ),
    ],
)
def test_a_file_name_is_one_code_span_whatever_it_holds(
    tmp_path: Path, name: str, shown: str
) -> None:
    root = _repository(tmp_path, "p")
    write_text(root, f"gateways/test/{name}", "a: 1\n")
    found = risks.uncommitted(root)
    assert risks.Uncommitted(path=f"gateways/test/{name}", state="untracked") in found
    section = risk_section(
        build_report([diff_with()], base_label="b", command="c", uncommitted=found)
    )
    assert f"\n- {shown} (untracked): {TAIL}\n" in section
    # No line of the section is a heading but its own, nor holds raw HTML.
    assert [line for line in section.splitlines() if line.startswith("#")] == ["## Risks"]
    assert "\n<img" not in section


def test_a_code_span_keeps_spaces_and_escapes_control_characters() -> None:
    assert [risks.code_span(t) for t in (" x ", "tab\there", "```")] == [
        "`  x  `",
        "`tab\\there`",
        "```` ``` ````",
    ]

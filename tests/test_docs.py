"""The newcomer's path (issue 25 item 7): the README is a short quickstart whose commands work,
the task pages under docs/ are reached from it, every link between the pages resolves, and every
page and section the tool's messages point at exists."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from tests.builders import NOT_COPIED, git
from tests.support import ROOT

README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
README_LINES = 200
"""The README is a quickstart: the runbooks live in docs/."""
QUICKSTART = "## Add a tenant in five minutes"

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
# A message's pointer: docs/<page>.md, "<section>" (or 'section').
POINTER = re.compile(r"docs/([a-z0-9-]+\.md),? [\"']([A-Z][^\"'\n]*)[\"']")


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lowercase, punctuation but `-` and `_` dropped, spaces to
    `-` (github/cmark-gfm's ``toc`` filter, as github.com renders it)."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def headings(path: Path) -> list[str]:
    found, fence = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence and re.match(r"#{1,6} ", line):
            found.append(line.split(" ", 1)[1])
    return found


def test_the_readme_is_a_short_quickstart_with_links_to_every_page() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_LINES
    assert [h for h in headings(README) if not h.startswith("HyperShell")] == [
        "The two commands",
        "Add a tenant in five minutes",
        "The fleet as a picture",
        "Performance",
        "Documentation",
    ]
    linked = {m for m in LINK.findall(text) if m.startswith("docs/")}
    assert linked == {f"docs/{page.name}" for page in PAGES}


def test_every_page_a_message_points_at_has_the_section() -> None:
    sources = [*sorted((ROOT / "gatewayctl").rglob("*.py")), *sorted((ROOT / "e2e").glob("*.py"))]
    sources += [*sorted((ROOT / "components").glob("*.py")), ROOT / "tests" / "e2e" / "lane.py"]
    pointers = {
        (page, section)
        for source in sources
        for page, section in POINTER.findall(source.read_text(encoding="utf-8"))
    }
    # CA bundles, decommissioning, CI, output formats, and design notes
    assert len(pointers) >= 6, sorted(pointers)
    missing = []
    for page, section in sorted(pointers):
        text = (DOCS / page).read_text(encoding="utf-8")
        # A heading the pointer names by its beginning, or a paragraph's bold lead.
        named = any(h.startswith(section) for h in headings(DOCS / page))
        if not named and f"**{section}.**" not in text:
            missing.append((page, section))
    assert missing == []


def quickstart_commands() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text[text.index(QUICKSTART) :]
    block = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert block is not None
    return [line.split("  #", 1)[0].strip() for line in block[1].splitlines() if line.strip()]


def test_the_quickstart_adds_a_tenant(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(ROOT, repo, ignore=NOT_COPIED)
    git(repo, "init", "--quiet", "--initial-branch=main")
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "--message", "base")

    codes, outputs = [], []
    for command in quickstart_commands():
        # The console script runs this checkout's package (the project is installed
        # editable); `python -m` in the copy runs the copy's, as the script does in a checkout.
        argv = shlex.split(command)
        if argv[0] == ".venv/bin/gatewayctl":
            argv = [sys.executable, "-m", "gatewayctl", *argv[1:]]
        done = subprocess.run(argv, cwd=repo, capture_output=True, text=True, check=False)
        codes.append(done.returncode)
        outputs.append(done.stdout)

    assert [c.split()[0] for c in quickstart_commands()] == [
        "cp",
        "sed",
        ".venv/bin/gatewayctl",
        ".venv/bin/gatewayctl",
        ".venv/bin/gatewayctl",
    ]
    assert codes == [0, 0, 0, 0, 3]
    plan = json.loads((repo / "build/rendered/local/plan.json").read_text(encoding="utf-8"))
    assert "team-b" in [g["name"] for g in plan["gateways"]]
    report = outputs[-1]
    assert report.startswith("## Risks\n\n")
    assert (
        "**Not committed** (1):\n\n- `gateways/local/team-b.yaml` (untracked): this report"
        " includes it as the working tree has it; the pull request does not until it is"
        " committed\n"
    ) in report
    assert "| `team-b` | added | cluster `kind`, namespace `openshell-team-b`" in report

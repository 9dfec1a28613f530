"""Every link and pointer in the repository resolves (issue 43 item 2): the Markdown links of
every tracked page (files and ``#anchors`` as GitHub slugs the headings), every path to a page
(``docs/<page>.md``, ``README.md``) named anywhere, and every ``<page>, "Section"`` pointer in
comments, workflows (``::error::`` messages included), samples, the Makefile and the messages
the tool prints: the page exists and the section is one of its headings (or a paragraph's bold
lead)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.support import ROOT
from tests.test_docs import LINK, headings, slug

SKIPPED = ("tests/golden/", "reference/", "uv.lock", "tests/test_pointers.py")
"""Generated output, upstream's files and the lock: nothing of ours points from them; and this
file, whose broken pointers are there to be found."""

POINTER = re.compile(
    r"""\b((?:[\w.-]+/)*(?:README|[\w-]+)\.md|README),?\s+(["'])([A-Z](?:(?!\2).)*?)\2"""
)
"""``README, "Section"``, ``docs/status.md, 'Section'``: a page, then a quoted section."""
PAGE_PATH = re.compile(
    r"(?<![\w/.-])((?:docs|policy|bench|reference)/[\w-]+\.md|README\.md)"
    r"(?:#([\w-]+))?"
)
"""A page named by its path, with its anchor if any."""
ELSEWHERE = {"docs/migration.md"}
"""Pages of another repository the text names as such (pulumi-kubernetes-operator's)."""
CONTINUED = re.compile(r"\n[ \t]*(?:#+|//)?[ \t]*")
"""A line break with the next line's indentation and comment marker: a pointer may span it."""


def tracked() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    names = [n for n in listed.split("\0") if n and not n.startswith(SKIPPED)]
    return [ROOT / n for n in names if (ROOT / n).is_file() and not (ROOT / n).is_symlink()]


def text_of(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return None


def page_of(name: str) -> Path:
    return ROOT / (name if name.endswith(".md") else f"{name}.md")


def has_section(page: Path, section: str) -> bool:
    """A heading the pointer names by its beginning, or a paragraph's bold lead."""
    return any(h.startswith(section) for h in headings(page)) or (
        f"**{section}.**" in page.read_text(encoding="utf-8")
    )


def pointers() -> list[tuple[str, str, str]]:
    """(file, page, section) for every pointer of every tracked text file."""
    found = []
    for path in tracked():
        text = text_of(path)
        if text is None:
            continue
        joined = CONTINUED.sub(" ", text)
        found += [
            (path.relative_to(ROOT).as_posix(), m.group(1), m.group(3))
            for m in POINTER.finditer(joined)
        ]
    return found


def test_every_quoted_section_is_a_heading_of_its_page() -> None:
    found = pointers()
    files = {f for f, _, _ in found}
    # The kinds of file the issue names all hold some.
    for name in ("Makefile", "Pulumi.yaml", "policy/README.md", ".github/workflows/drift.yml"):
        assert name in files, name
    assert any(f.startswith("gateways/") for f in files)
    assert any(f.startswith("releases/") for f in files)
    assert any(f.startswith("gatewayctl/") for f in files)
    broken = [
        (f, page, section)
        for f, page, section in found
        if not page_of(page).is_file() or not has_section(page_of(page), section)
    ]
    assert broken == []


def test_an_error_message_of_a_workflow_points_at_a_section() -> None:
    workflow = (ROOT / ".github" / "workflows" / "pull-request.yml").read_text(encoding="utf-8")
    errors = [line for line in workflow.splitlines() if "::error::" in line]
    pointed = [m.group(1, 3) for line in errors for m in POINTER.finditer(line)]
    assert ("docs/gitops.md", "Previews of unmerged code") in pointed


def test_every_page_path_named_anywhere_exists_with_its_anchor() -> None:
    broken, seen = [], 0
    for path in tracked():
        text = text_of(path)
        if text is None:
            continue
        for m in PAGE_PATH.finditer(text):
            seen += 1
            page, anchor = ROOT / m.group(1), m.group(2)
            if m.group(1) in ELSEWHERE:
                assert not page.exists() and "operator" in text
                continue
            if not page.is_file() or (anchor and anchor not in map(slug, headings(page))):
                broken.append((path.relative_to(ROOT).as_posix(), m.group(0)))
    assert seen > 100
    assert broken == []


CODE_SPAN = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)")
"""An inline code span, on one line: what it holds is no link (docs/stack-reference.md shows
patterns such as `^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?$`)."""


@pytest.mark.parametrize(
    "page",
    [p for p in tracked() if p.suffix == ".md"],
    ids=lambda p: p.relative_to(ROOT).as_posix(),
)
def test_every_markdown_link_resolves(page: Path) -> None:
    broken = []
    for target in LINK.findall(CODE_SPAN.sub("", page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.is_file() or (
            anchor and anchor not in {slug(h) for h in headings(resolved)}
        ):
            broken.append(target)
    assert broken == []


def test_a_broken_pointer_is_found() -> None:
    text = 'see (README, "No such section") and docs/status.md#no-such-anchor'
    ((page, _, section),) = [m.groups() for m in POINTER.finditer(text)]
    assert (page, section) == ("README", "No such section")
    assert not has_section(page_of(page), section)
    ((name, anchor),) = [m.groups() for m in PAGE_PATH.finditer(text)]
    assert (name, anchor) == ("docs/status.md", "no-such-anchor")
    assert anchor not in map(slug, headings(ROOT / name))

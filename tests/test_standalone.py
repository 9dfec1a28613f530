"""The repository stands alone (issue 43 item 1): what its tests and tools read is in it, with
its sources (``reference/SOURCES.md``), and no tracked file points beside the checkout."""

from __future__ import annotations

import re
import subprocess

from tests.support import REFERENCE, ROOT

BESIDE = "../" + "shared"
"""The folder beside the checkout the tests once read (spelled so this file does not name it)."""


def tracked() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    return [name for name in listed.split("\0") if name]


ELSEWHERE_DESIGN = re.compile("DESIGN" + r"(?:\.md)? ?§")
"""A citation of the design document beside the checkout (the word DESIGN, a section sign and
a number), which no clone has: the repository's own pages say the same
(docs/upstream-differences.md, "The rules, one by one"). Spelled so this file does not match
it."""


def lines_matching(found: object) -> list[str]:
    naming = []
    for name in tracked():
        path = ROOT / name
        if path.is_symlink() or not path.is_file():
            continue
        text = path.read_bytes().decode("utf-8", errors="replace")
        for n, line in enumerate(text.splitlines(), 1):
            if (BESIDE in line) if found is BESIDE else ELSEWHERE_DESIGN.search(line):
                naming.append(f"{name}:{n}")
    return naming


def test_no_tracked_file_names_the_folder_beside_the_checkout() -> None:
    files = tracked()
    assert "tests/schema_checks.py" in files and len(files) > 300
    assert lines_matching(BESIDE) == []


def test_no_tracked_file_cites_a_design_section_the_repository_lacks() -> None:
    assert ELSEWHERE_DESIGN.search("retained (DESIGN" + " §5.6)")
    assert ELSEWHERE_DESIGN.search("anatomy (DESIGN" + ".md §4)")
    assert lines_matching(ELSEWHERE_DESIGN) == []


def test_every_reference_file_is_listed_with_its_source() -> None:
    sources = (REFERENCE / "SOURCES.md").read_text(encoding="utf-8")
    files = sorted(
        p.relative_to(REFERENCE).as_posix()
        for p in REFERENCE.rglob("*")
        if p.is_file() and p.parent != REFERENCE and p.parent.name != "LICENSES"
    )
    # The three kinds: CRD and provider schemas (listed one by one), upstream manifests.
    assert {f.split("/")[0] for f in files} == {"crds", "pulumi", "upstream-manifests"}
    listed = set(re.findall(r"`((?:crds|pulumi)/[\w./-]+\.json)`", sources))
    manifests = [f for f in files if f.startswith("upstream-manifests/")]
    assert [f for f in files if f not in listed and f not in manifests] == []
    assert sorted(listed) == sorted(f for f in files if f not in manifests)
    assert "`upstream-manifests/`" in sources
    assert (REFERENCE / "LICENSES" / "Apache-2.0.txt").is_file()

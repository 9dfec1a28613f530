"""The base side's render cache (``gatewayctl.diff.cache``): a second diff against the same base
renders only the working tree; a stale or corrupt entry is rebuilt, never trusted; no entry
holds a secret value.

Base renders are counted where they start (``sides._start_render``, the subprocess running the
base's own program); working-tree renders where the working tree is rendered
(``render.execute``, in this process for one stack).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gatewayctl.diff import cache, sides
from gatewayctl.engine import render
from gatewayctl.resolve import preparation
from tests.builders import git, write_text
from tests.diff_helpers import BASE_SENTINEL, clone, declare, run_diff

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

CACHE = Path("build") / "diff-cache"


@dataclass
class Counts:
    base: list[list[str]]
    head: list[str]


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counts]:
    found = Counts(base=[], head=[])
    start, execute = sides._start_render, render.execute

    def counting_start(project: Path, package: str, target: Any, out: Path) -> Any:
        found.base.append(list(target))
        return start(project, package, target, out)

    def counting_execute(prepared: preparation.Prepared, *args: Any) -> render.Rendered:
        found.head.append(prepared.loaded.name)
        return execute(prepared, *args)

    monkeypatch.setattr(sides, "_start_render", counting_start)
    monkeypatch.setattr(render, "execute", counting_execute)
    yield found


def changed_repo(pristine: Path, where: Path) -> Path:
    repo = clone(pristine, where)
    declare(repo, "local", "team-b")
    return repo


def entries(repo: Path) -> list[Path]:
    directory = repo / CACHE
    return sorted(p for p in directory.iterdir() if not p.name.startswith("."))


# --- hits ---------------------------------------------------------------------------------------


def test_a_second_diff_against_the_same_base_renders_only_the_working_tree(
    pristine: Path, tmp_path: Path, counts: Counts
) -> None:
    repo = changed_repo(pristine, tmp_path / "repo")
    first = run_diff(repo, "local", "--base", "main")
    assert (first.code, counts.base, counts.head) == (3, [["local"]], ["local"]), first.err
    second = run_diff(repo, "local", "--base", "main")
    # Only a declaration changed: the working tree renders the new gateway alone, the others
    # come from the cached base render (gatewayctl.diff.incremental, tests/test_diff_incremental).
    assert (second.code, counts.base, counts.head) == (3, [["local"]], ["local"])
    assert second.out == first.out
    assert "team-b" in first.out
    assert len(entries(repo)) == 1
    assert git(repo, "status", "--porcelain") == "?? gateways/local/team-b.yaml"


def test_every_stack_from_the_cache_after_one_render_all(
    pristine: Path, tmp_path: Path, counts: Counts
) -> None:
    repo = changed_repo(pristine, tmp_path / "repo")
    first = run_diff(repo, "--all", "--base", "main")
    assert counts.base == [["--all"]], first.err
    second = run_diff(repo, "--all", "--base", "main")
    assert counts.base == [["--all"]]
    assert second.out == first.out
    assert len(entries(repo)) == 3  # one per stack


def test_a_new_base_commit_is_rendered_again(
    pristine: Path, tmp_path: Path, counts: Counts
) -> None:
    repo = changed_repo(pristine, tmp_path / "repo")
    run_diff(repo, "local", "--base", "main")
    declare(repo, "local", "team-c")
    git(repo, "add", "gateways/local/team-c.yaml")
    git(repo, "commit", "--quiet", "--message", "another gateway")
    again = run_diff(repo, "local", "--base", "main")
    assert counts.base == [["local"], ["local"]], again.err
    assert "team-c" not in again.out  # it is in the base now
    run_diff(repo, "local", "--base", "HEAD~1")  # the first base: still cached
    assert counts.base == [["local"], ["local"]]
    assert len(entries(repo)) == 2


# --- stale or corrupt entries ---------------------------------------------------------------


def _plan(entry: Path) -> Path:
    return entry / "plan.json"


def _manifest(entry: Path) -> Path:
    return entry / cache.MANIFEST


def _file_instead(entry: Path) -> None:
    shutil.rmtree(entry)
    entry.write_text("x")


CORRUPTIONS: dict[str, Callable[[Path], object]] = {
    "a file changed": lambda e: _plan(e).write_text(_plan(e).read_text() + " "),
    "a file missing": lambda e: _plan(e).unlink(),
    "an extra file": lambda e: (e / "manifests" / "extra.yaml").write_text("kind: X\n"),
    "no manifest (written last: the entry was cut short)": lambda e: _manifest(e).unlink(),
    "a manifest that is not JSON": lambda e: _manifest(e).write_text("{"),
    "a manifest of another key": lambda e: _manifest(e).write_text(
        json.dumps({**json.loads(_manifest(e).read_text()), "key": "0" * 64})
    ),
    "a manifest with an unknown outcome": lambda e: _manifest(e).write_text(
        json.dumps({**json.loads(_manifest(e).read_text()), "outcome": "maybe"})
    ),
    "a file instead of the entry": _file_instead,
    "a file replaced by a link to the same bytes": lambda e: _linked(_plan(e)),
    "a link to a directory added": lambda e: (e / "manifests" / "more").symlink_to(
        e / "manifests", target_is_directory=True
    ),
}


def _linked(file: Path) -> None:
    """``file`` becomes a symbolic link to a copy of itself outside the cache (its digest still
    matches: only being a link makes it stale)."""
    copy = file.parent.parent.parent / f"linked-{file.name}"
    shutil.copy2(file, copy)
    file.unlink()
    file.symlink_to(copy)


@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
def test_a_corrupt_entry_is_rebuilt_never_trusted(
    pristine: Path, tmp_path: Path, counts: Counts, corruption: str
) -> None:
    repo = changed_repo(pristine, tmp_path / "repo")
    first = run_diff(repo, "local", "--base", "main")
    (entry,) = entries(repo)
    CORRUPTIONS[corruption](entry)

    rebuilt = run_diff(repo, "local", "--base", "main")

    assert counts.base == [["local"], ["local"]], rebuilt.err
    assert rebuilt.out == first.out
    assert entries(repo) == [entry]
    assert cache.Cache(repo).get(entry.name) is not None  # whole again
    run_diff(repo, "local", "--base", "main")
    assert len(counts.base) == 2


def test_an_invalid_base_is_cached_as_invalid(
    pristine: Path, tmp_path: Path, counts: Counts
) -> None:
    repo = clone(pristine, tmp_path / "repo")
    declare(repo, "local", "broken", "  replicas: many")
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "--message", "broken base")
    (repo / "gateways/local/broken.yaml").unlink()
    first = run_diff(repo, "local", "--base", "main")
    second = run_diff(repo, "local", "--base", "main")
    assert counts.base == [["local"]], first.err
    assert "has invalid input for stack `local`" in first.out
    assert second.out == first.out


# --- the key -----------------------------------------------------------------------------------


def test_the_key_covers_tree_project_stack_lock_and_interpreter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    facts: dict[str, Any] = {"tree": "a" * 40, "prefix": "", "stack": "local", "lock": b"x"}
    first = cache.key(**facts)
    assert cache.key(**facts) == first
    for name, other in (("tree", "b" * 40), ("prefix", "infra/"), ("stack", "aws")):
        assert cache.key(**{**facts, name: other}) != first, name
    assert cache.key(**{**facts, "lock": b"y"}) != first
    assert cache.key(**{**facts, "lock": None}) != first
    monkeypatch.setattr(sys, "version", sys.version + " (another build)")
    assert cache.key(**facts) != first
    monkeypatch.undo()
    monkeypatch.setattr(sys, "executable", "/elsewhere/bin/python")
    assert cache.key(**facts) != first
    monkeypatch.undo()
    monkeypatch.setattr(cache, "FORMAT", cache.FORMAT + 1)
    assert cache.key(**facts) != first


def test_another_lock_file_in_the_working_tree_renders_the_base_again(
    pristine: Path, tmp_path: Path, counts: Counts
) -> None:
    # The base runs in this interpreter, with the packages the working tree's lock installs.
    repo = changed_repo(pristine, tmp_path / "repo")
    run_diff(repo, "local", "--base", "main")
    (repo / "uv.lock").write_text((repo / "uv.lock").read_text() + "\n# another pin\n")
    run_diff(repo, "local", "--base", "main")
    assert counts.base == [["local"], ["local"]]


# --- secrets ------------------------------------------------------------------------------------

LEAK = """
import json as _json


def _leaky(prepared, on_register=None):
    rendered = _execute(prepared, on_register)
    secrets = _json.loads(prepared.config["hypershell-gateways:clusterSecrets"])
    password = next(iter(secrets.values()))["dbAdminPassword"]
    leaked = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "leak"},
              "data": {"pw": password}}
    rendered.files["manifests/kind/_cluster/configmap-leak.yaml"] = dump_yaml(leaked)
    plan = _json.loads(rendered.files["plan.json"])
    plan["leak"] = password
    rendered.files["plan.json"] = _json.dumps(plan, indent=2, sort_keys=True) + "\\n"
    return rendered


_execute, execute = execute, _leaky
"""


def test_the_cache_never_holds_a_secret_even_when_the_base_leaks_one(
    pristine: Path, tmp_path: Path
) -> None:
    # A base whose program writes the plaintext password into a manifest and the plan.
    repo = clone(pristine, tmp_path / "repo")
    program = repo / "gatewayctl" / "engine" / "render.py"
    honest = program.read_text()
    program.write_text(honest + LEAK)
    git(repo, "commit", "--quiet", "--all", "--message", "a leaky base")
    program.write_text(honest)

    for _ in range(2):  # rendered, then from the cache
        run = run_diff(repo, "local", "--base", "main")
        assert run.code == 3, run.err
        assert BASE_SENTINEL not in run.out + run.err
        assert "configmap-leak" in run.out  # the leak was rendered (and removed at head)

    (entry,) = entries(repo)
    stored = {p: p.read_bytes() for p in (repo / "build").rglob("*") if p.is_file()}
    assert stored
    assert all(BASE_SENTINEL.encode() not in data for data in stored.values())
    leaked = entry / "manifests/kind/_cluster/configmap-leak.yaml"
    assert "pw: '[secret]'" in leaked.read_text()
    assert json.loads((entry / "plan.json").read_text())["leak"] == "[secret]"


# --- the cache is a directory this tool made; it prunes only its own entries (issue 21, 2) ---


def _entry(index: int) -> tuple[str, cache.Entry]:
    name = cache.key(tree=f"{index:040x}", prefix="", stack="local", lock=None)
    return name, cache.Entry(cache.RENDERED, {"plan.json": f"{index}\n"})


def _someone_elses(directory: Path, count: int) -> dict[str, bytes]:
    """``count`` directories of someone else's, each with a file, as a person keeps them."""
    for index in range(count):
        write_text(directory, f"project-{index:02d}/notes.txt", f"keep {index}\n")
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in directory.rglob("*.txt")}


def _kept(directory: Path) -> dict[str, bytes]:
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in directory.rglob("*.txt")}


def test_a_linked_cache_is_refused_and_what_it_leads_to_is_left_alone(
    pristine: Path, tmp_path: Path, counts: Counts
) -> None:
    repo = changed_repo(pristine, tmp_path / "repo")
    elsewhere = tmp_path / "elsewhere"
    before = _someone_elses(elsewhere, cache.KEEP + 4)
    (repo / "build").mkdir(exist_ok=True)
    (repo / CACHE).symlink_to(elsewhere, target_is_directory=True)

    run = run_diff(repo, "local", "--base", "main")

    assert (run.code, run.out, counts.base) == (2, "", [])
    assert run.err.splitlines() == [
        "error: build/diff-cache: diff cache: is a symbolic link; the diff cache is a directory"
        " this tool creates itself (it removes old entries there): remove the link",
        "1 problem(s); nothing written",
    ]
    assert _kept(elsewhere) == before
    assert sorted(p.name for p in elsewhere.iterdir()) == sorted(
        f"project-{i:02d}" for i in range(cache.KEEP + 4)
    )
    # The library refuses it too: nothing read, nothing written, nothing pruned.
    name, entry = _entry(0)
    assert cache.Cache(repo).put(name, entry, frozenset()) == entry.files
    assert cache.Cache(repo).get(name) is None
    assert sorted(p.name for p in elsewhere.iterdir()) == sorted(
        f"project-{i:02d}" for i in range(cache.KEEP + 4)
    )


def test_a_directory_the_tool_did_not_create_is_refused(
    pristine: Path, tmp_path: Path, counts: Counts
) -> None:
    repo = changed_repo(pristine, tmp_path / "repo")
    before = _someone_elses(repo / CACHE, 3)

    run = run_diff(repo, "local", "--base", "main")

    assert (run.code, counts.base) == (2, [])
    assert run.err.splitlines() == [
        "error: build/diff-cache: diff cache: exists and was not created by this tool (no"
        f" {cache.OWNED} in it), and the cache removes old entries there: move it away or"
        " choose another place for it",
        "1 problem(s); nothing written",
    ]
    assert _kept(repo / CACHE) == before
    assert not (repo / CACHE / cache.OWNED).exists()


def test_pruning_removes_only_entries_the_tool_wrote(tmp_path: Path) -> None:
    store = cache.Cache(tmp_path)
    names = []
    for index in range(cache.KEEP):
        name, entry = _entry(index)
        store.put(name, entry, frozenset())
        os.utime(tmp_path / CACHE / name / cache.MANIFEST, (index, index))  # oldest first
        names.append(name)
    assert (tmp_path / CACHE / cache.OWNED).is_file()
    # Beside the entries: a person's files, and directories named like entries that are not
    # (no manifest; a manifest of another key).
    before = _someone_elses(tmp_path / CACHE, 2)
    write_text(tmp_path / CACHE, f"{'a' * 64}/notes.txt", "no manifest\n")
    write_text(tmp_path / CACHE, f"{'b' * 64}/{cache.MANIFEST}", json.dumps({"key": "c" * 64}))
    write_text(tmp_path / CACHE, f"{'b' * 64}/notes.txt", "another key\n")
    kept = _kept(tmp_path / CACHE)

    newest, entry = _entry(cache.KEEP)
    store.put(newest, entry, frozenset())

    assert sorted(p.name for p in (tmp_path / CACHE).iterdir()) == sorted(
        [cache.OWNED, "a" * 64, "b" * 64, "project-00", "project-01", newest, *names[1:]]
    )
    assert _kept(tmp_path / CACHE) == kept and set(before) <= set(kept)


def test_a_cache_written_before_the_marker_is_taken_over(tmp_path: Path) -> None:
    store = cache.Cache(tmp_path)
    name, entry = _entry(1)
    store.put(name, entry, frozenset())
    (tmp_path / CACHE / cache.OWNED).unlink()  # as an older version left it: entries only
    assert cache.problems(tmp_path) == []
    assert store.get(name) == entry
    other, second = _entry(2)
    store.put(other, second, frozenset())
    assert (tmp_path / CACHE / cache.OWNED).is_file()
    assert store.get(other) == second

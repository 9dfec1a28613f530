"""Issue 23: the working tree's side of a diff in proportion to the change. With the base's
render cached, a change to some declarations renders only those gateways; every other one comes
from the cached base render, checked, and the result is the full render's byte for byte. A
change to the stack's config or to the program renders everything."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gatewayctl.diff import incremental
from gatewayctl.engine import render, shares
from gatewayctl.resolve import preparation
from tests.builders import git
from tests.diff_helpers import clone, declare, run_diff

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

STACK = "local"


@dataclass
class Renders:
    whole: list[str]
    """Stacks rendered whole (``render.execute``)."""
    shares: list[list[str]]
    """The gateways of each share run (``shares.execute_share``)."""


@pytest.fixture
def renders(monkeypatch: pytest.MonkeyPatch) -> Iterator[Renders]:
    found = Renders(whole=[], shares=[])
    execute, execute_share = render.execute, shares.execute_share

    def counting_execute(prepared: preparation.Prepared, *args: Any) -> render.Rendered:
        found.whole.append(prepared.loaded.name)
        return execute(prepared, *args)

    def counting_share(prepared: preparation.Prepared, names: frozenset[str], *args: Any) -> Any:
        found.shares.append(sorted(names))
        return execute_share(prepared, names, *args)

    monkeypatch.setattr(render, "execute", counting_execute)
    monkeypatch.setattr(shares, "execute_share", counting_share)
    yield found


def _change_dev(repo: Path) -> None:
    declare(repo, STACK, "dev", spec="  replicas: 3")  # dev.yaml, declared anew


@pytest.fixture
def dev_repo(pristine: Path, tmp_path: Path) -> Path:
    """A clone of the base with dev's declaration changed."""
    repo = clone(pristine, tmp_path / "repo")
    _change_dev(repo)
    return repo


@dataclass
class DevChanged:
    base: dict[str, str]
    """The base's render (a copy: a test may tamper with it)."""
    prepared: preparation.Prepared
    """:func:`dev_repo`, prepared."""


@pytest.fixture
def dev_changed(pristine: Path, dev_repo: Path) -> DevChanged:
    base = dict(render.execute(preparation.prepare(pristine, STACK)).files)
    return DevChanged(base=base, prepared=preparation.prepare(dev_repo, STACK))


def _offline_object(base: dict[str, str]) -> str:
    """The first file of the offline gateway's objects in ``base``."""
    return next(p for p in sorted(base) if "/openshell-offline/" in p)


def test_only_the_changed_declarations_render_and_the_result_is_the_full_render(
    pristine: Path, tmp_path: Path
) -> None:
    base = render.execute(preparation.prepare(pristine, STACK)).files
    repo = clone(pristine, tmp_path / "repo")
    _change_dev(repo)  # changed
    declare(repo, STACK, "team-b")  # added
    (repo / "gateways" / STACK / "offline.yaml").unlink()  # removed
    prepared = preparation.prepare(repo, STACK)
    names = incremental.affected(prepared, incremental.changed_paths(repo, "main"))
    assert names == frozenset({"dev", "team-b"})
    head = incremental.head_render(prepared, base, names)
    full = render.execute(prepared)
    assert head.files == full.files  # every manifest and plan.json, byte for byte
    assert head.gateways == full.gateways
    assert head.resources == len(full.recording.resources)


def test_a_second_diff_renders_only_the_changed_gateway(dev_repo: Path, renders: Renders) -> None:
    repo = dev_repo
    first = run_diff(repo, STACK, "--base", "main")  # the base is rendered and cached
    assert (first.code, renders.whole, renders.shares) == (3, [STACK], []), first.err
    second = run_diff(repo, STACK, "--base", "main")
    assert (second.code, renders.whole, renders.shares) == (3, [STACK], [["dev"]]), second.err
    assert second.out == first.out


@pytest.mark.parametrize(
    "change",
    [
        "the stack's config",
        "the program",
        "the lock file",
        "a release",
    ],
)
def test_a_change_beyond_the_declarations_renders_everything(
    dev_repo: Path, renders: Renders, change: str
) -> None:
    repo = dev_repo
    run_diff(repo, STACK, "--base", "main")  # warms the cache
    path = {
        "the stack's config": f"Pulumi.{STACK}.yaml",
        "the program": "components/naming.py",
        "the lock file": "uv.lock",
        "a release": sorted((repo / "releases").glob("*.yaml"))[0].relative_to(repo).as_posix(),
    }[change]
    with (repo / path).open("a", encoding="utf-8") as handle:
        handle.write("\n# changed\n")
    again = run_diff(repo, STACK, "--base", "main")
    assert again.code == 3, again.err
    assert (renders.whole, renders.shares) == ([STACK, STACK], [])


def test_a_change_no_render_reads_keeps_the_reuse(dev_repo: Path) -> None:
    repo = dev_repo
    (repo / "docs" / "notes.md").write_text("a note\n", encoding="utf-8")
    (repo / "README.md").write_text("changed\n", encoding="utf-8")
    git(repo, "add", "--all")  # staged, or not: the working tree is what renders
    prepared = preparation.prepare(repo, STACK)
    names = incremental.affected(prepared, incremental.changed_paths(repo, "main"))
    assert names == frozenset({"dev"})


def test_a_cached_render_that_does_not_match_its_plan_is_not_reused(
    dev_changed: DevChanged,
) -> None:
    base, prepared = dev_changed.base, dev_changed.prepared
    path = _offline_object(base)
    base[path] += "# tampered\n"
    with pytest.raises(incremental.NotReusableError, match="is not what its plan entry renders"):
        incremental.head_render(prepared, base, frozenset({"dev"}))


def test_a_cached_render_without_an_object_s_file_is_not_reused(
    dev_changed: DevChanged,
) -> None:
    base, prepared = dev_changed.base, dev_changed.prepared
    path = _offline_object(base)
    del base[path]
    with pytest.raises(incremental.NotReusableError, match=f"the cached render has no {path}"):
        incremental.head_render(prepared, base, frozenset({"dev"}))


def test_the_spot_check_writes_again_the_first_reused_gateways_only(
    dev_changed: DevChanged, monkeypatch: pytest.MonkeyPatch
) -> None:
    base, prepared = dev_changed.base, dev_changed.prepared
    written: list[str] = []
    original = incremental._manifest_text

    def spy(entry: dict[str, object]) -> str:
        written.append(str(entry["name"]))
        return original(entry)

    monkeypatch.setattr(incremental, "_manifest_text", spy)
    monkeypatch.setattr(incremental, "SPOT_CHECKED", 1)
    incremental.head_render(prepared, base, frozenset({"dev"}))
    # Reused: dev-build and offline; checked: dev-build, the first by name, every object of it.
    assert written and all(name.startswith("dev-build-") for name in written)
    objects = [p for p in base if p.startswith("manifests/") and "/openshell-dev-build/" in p]
    assert len(written) >= len(objects) > 0


def test_a_plan_text_is_decoded_once_for_both_its_readers(monkeypatch: pytest.MonkeyPatch) -> None:
    """The base's plan.json is read for the reused gateways and again for the comparison: the
    second read gets the first's value (the diff package never writes to a plan)."""
    from gatewayctl.diff import plan

    decodes: list[str] = []
    loads = json.loads

    def counted(text: str) -> Any:
        decodes.append(text)
        return loads(text)

    monkeypatch.setattr(json, "loads", counted)
    base = '{"stack": "local", "resources": [{"name": "a"}]}'
    first = plan.decoded(base)
    assert plan.decoded(base) is first
    assert plan.decoded("".join(base)) is first  # an equal text, another object
    head = '{"stack": "local", "resources": []}'
    assert plan.decoded(head) == {"stack": "local", "resources": []}
    assert plan.decoded(base) == first and plan.decoded(base) is not first  # only the last kept
    assert decodes == [base, head, base]

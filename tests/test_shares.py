"""Issue 23: one stack's gateways split over worker processes (``gatewayctl.engine.shares``) render
the same files, summary and resource count as one run of the whole stack, byte for byte."""

from __future__ import annotations

import gc
import json
import re
from pathlib import Path

import pytest

from gatewayctl.engine import parallel, render, shares
from gatewayctl.resolve import preparation
from tests.scale_builders import STACK, research_stack
from tests.support import ROOT, STACKS, rendered


def _serial(prepared: preparation.Prepared) -> parallel.StackRender:
    return parallel.light(render.execute(prepared))


def _same(split: parallel.StackRender, whole: parallel.StackRender) -> None:
    assert split.files == whole.files  # the manifests and plan.json, byte for byte
    assert split.gateways == whole.gateways
    assert split.resources == whole.resources


def test_the_work_decides_how_many_shares_a_stack_renders_in() -> None:
    # The committed samples (at most 4 gateways a stack) render in one piece: never slower
    # than --jobs 1.
    sizes = [len(rendered(stack).gateways) for stack in STACKS]
    assert max(sizes) < shares.MIN_SHARE
    assert shares.share_counts(sizes, jobs=2) == [1, 1, 1]
    assert shares.share_counts([500], jobs=2) == [4]
    assert shares.share_counts([500], jobs=1) == [1]
    assert shares.share_counts([100] * 10, jobs=2) == [1] * 10  # the stacks keep 2 cores busy
    assert shares.share_counts([100, 100, 100], jobs=2) == [2, 2, 2]
    assert shares.share_counts([1000, 10], jobs=4) == [8, 1]
    assert shares.share_counts([79], jobs=2) == [1]  # two shares of 40 at least
    assert shares.share_counts([80], jobs=2) == [2]


def test_split_keeps_the_order_and_sizes_within_one() -> None:
    names = [f"g{i}" for i in range(10)]
    parts = shares.split(names, 3)
    assert [sorted(p, key=names.index) for p in parts] == [
        names[0:4],
        names[4:7],
        names[7:10],
    ]


def test_shares_of_the_committed_stacks_merge_into_their_serial_render() -> None:
    for stack in STACKS:
        prepared = preparation.prepare(ROOT, stack)
        names = [g.name for g in prepared.loaded.gateways]
        parts = [shares.execute_share(prepared, part) for part in shares.split(names, 3)]
        merged = shares.merge(prepared, parts)
        whole = _serial(prepared)
        assert merged.files == whole.files
        assert merged.gateways == whole.gateways
        assert merged.resources == whole.resources


def test_a_stack_split_over_worker_processes_renders_as_one_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The richest sample's shape (console, Vault, access to shared principals), 6 gateways in
    # 3 shares (small shares allowed for the test) over 2 workers.
    monkeypatch.setattr(shares, "MIN_SHARE", 1)
    prepared = preparation.prepare(research_stack(tmp_path, 6), STACK)
    assert shares.share_counts([6], jobs=2) == [3]
    gc.unfreeze()
    (split,) = parallel.render_stacks([prepared], jobs=2)
    assert split.peak_kib is not None  # rendered in workers
    # What the workers sent is frozen, as a run's own objects are: no collection (the
    # interpreter's last one included) traverses it again.
    assert gc.is_tracked(split.gateways[0])
    assert not any(obj is split.gateways[0] for obj in gc.get_objects())
    _same(split, _serial(prepared))


def test_render_all_splits_stacks_and_keeps_every_stacks_output(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(shares, "MIN_SHARE", 1)
    prepared = [preparation.prepare(ROOT, stack) for stack in STACKS]
    assert shares.share_counts([len(p.loaded.gateways) for p in prepared], jobs=2) == [2, 2, 1]
    results = parallel.render_stacks(prepared, jobs=2)
    assert [r.prepared.loaded.name for r in results] == list(STACKS)
    for result, item in zip(results, prepared, strict=True):
        _same(result, _serial(item))


def _tree(directory: Path) -> dict[str, str]:
    return {
        path.relative_to(directory).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


@pytest.mark.parametrize("jobs", [1, 2])
def test_stacks_written_where_they_render_are_their_serial_render(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    # With jobs=2: aws and ibm in two shares each, local whole (each in a worker); with
    # jobs=1: in this process.
    monkeypatch.setattr(shares, "MIN_SHARE", 1)
    prepared = [preparation.prepare(ROOT, stack) for stack in STACKS]
    into = {stack: tmp_path / stack for stack in STACKS}
    for directory in into.values():
        directory.mkdir()
    results = parallel.render_stacks(prepared, jobs=jobs, into=into)
    for result, item in zip(results, prepared, strict=True):
        whole = _serial(item)
        assert result.files == {}  # nothing sent back but paths
        assert result.written == tuple(sorted(whole.files))
        assert _tree(into[item.loaded.name]) == whole.files
        assert (result.manifests, result.resources) == (whole.manifests, whole.resources)
        assert result.gateways == whole.gateways


def test_a_share_writing_its_manifests_sends_back_only_the_stack_level_ones(
    tmp_path: Path,
) -> None:
    prepared = preparation.prepare(ROOT, "local")
    first = frozenset([prepared.loaded.gateways[0].name])
    kept = shares.execute_share(prepared, first)
    sent = shares.execute_share(prepared, first, into=tmp_path)
    assert sent.written and sent.manifests
    assert set(sent.manifests).isdisjoint(sent.written)
    assert {**sent.manifests, **_tree(tmp_path)} == kept.manifests
    assert list(_tree(tmp_path)) == list(sent.written)
    # Every share renders the stack-level objects: the same paths, compared by the merge.
    other = frozenset([prepared.loaded.gateways[1].name])
    assert set(shares.execute_share(prepared, other, into=tmp_path / "b").manifests) == set(
        sent.manifests
    )


def test_the_merge_refuses_two_shares_that_wrote_one_path(tmp_path: Path) -> None:
    prepared = preparation.prepare(ROOT, "local")
    names = [g.name for g in prepared.loaded.gateways]
    parts = [
        shares.execute_share(prepared, part, into=tmp_path / str(index))
        for index, part in enumerate(shares.split(names, 2))
    ]
    twice = parts[0].written[0]
    clash = shares.Share(**{**vars(parts[1]), "written": (*parts[1].written, twice)})
    with pytest.raises(RuntimeError, match=f"^two objects render to {twice}$"):
        shares.merge(prepared, [parts[0], clash])
    assert shares.merge(prepared, parts).written == tuple(
        sorted(parts[0].written + parts[1].written)
    )


@pytest.mark.parametrize("stack", STACKS)
def test_plan_json_joined_from_the_workers_entry_texts_is_the_same_bytes(stack: str) -> None:
    prepared = preparation.prepare(ROOT, stack)
    names = [g.name for g in prepared.loaded.gateways]
    parts = [shares.execute_share(prepared, part) for part in shares.split(names, 2)]
    whole = render.execute(prepared).files["plan.json"]
    # Each share sends its resources as their plan.json texts, encoded where it ran.
    entries = [_canonical(e) for e in json.loads(whole)["resources"]]
    for part in parts:
        assert part.resources
        assert {_canonical(json.loads(t)) for t in part.resources.values()} <= set(entries)
    merged = shares.merge(prepared, parts)
    assert merged.files["plan.json"] == whole
    assert merged.resources == len(entries)


def _canonical(entry: object) -> str:
    return json.dumps(entry, sort_keys=True)


def test_the_merge_refuses_two_shares_that_disagree_on_a_resource() -> None:
    prepared = preparation.prepare(ROOT, "local")
    names = [g.name for g in prepared.loaded.gateways]
    parts = [shares.execute_share(prepared, part) for part in shares.split(names, 2)]
    # Both run the stack-level resources: a difference in one of them is refused.
    urn = sorted(set(parts[0].resources) & set(parts[1].resources))[0]
    other = {**parts[1].resources, urn: parts[1].resources[urn].replace('"', "'", 1)}
    with pytest.raises(
        RuntimeError, match=f"^two shares of the render disagree on the resource {re.escape(urn)}$"
    ):
        shares.merge(prepared, [parts[0], shares.Share(**{**vars(parts[1]), "resources": other})])


def test_plan_text_of_no_resources_keeps_the_empty_list() -> None:
    plan = {"stack": "s", "gateways": [], "resources": []}
    assert render.plan_text(plan, {}) == render.plan_text(plan)

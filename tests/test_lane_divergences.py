"""The lane names where its kubernetes provider differs from the pinned one
(``e2e/divergences.py``), the tests that depend on each difference say so, and every ``up`` is
checked for a create that took an existing object over (``e2e/engine.py``, ``takeovers``)."""

from __future__ import annotations

import datetime
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from e2e import divergences
from e2e.engine import takeovers

ROOT = Path(__file__).resolve().parent.parent
MARKED = re.compile(r'@pytest\.mark\.provider_behaviour\("([^"]+)"\)')


def marked_keys() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / "tests" / "e2e").glob("test_*.py")):
        for key in MARKED.findall(path.read_text()):
            found.setdefault(key, []).append(path.name)
    return found


def test_the_two_versions_are_the_lanes_build_and_the_lock_files_pin() -> None:
    versions = tomllib.loads((ROOT / "e2e" / "versions.toml").read_text())
    assert divergences.lane_version() == versions["kubernetes_provider"]["plugin_version"]
    pinned = re.search(r'"pulumi-kubernetes==([^"]+)"', (ROOT / "pyproject.toml").read_text())
    assert pinned is not None and divergences.pinned_version() == pinned.group(1)
    assert (divergences.lane_version(), divergences.pinned_version()) == ("4.25.0", "4.34.2")


def test_every_divergence_is_marked_on_a_test_and_every_mark_names_one() -> None:
    marked = marked_keys()
    keys = {d.key for d in divergences.DIVERGENCES}
    assert set(marked) == keys
    assert marked["create-takes-over"] == ["test_e2e_b_drift.py"]
    with pytest.raises(KeyError, match="no provider divergence 'nothing'"):
        divergences.by_key("nothing")


def test_the_docs_and_the_lane_header_name_each_divergence_with_both_versions() -> None:
    page = (ROOT / "docs" / "real-engine.md").read_text()
    header = "\n".join(divergences.header())
    for divergence in divergences.DIVERGENCES:
        assert f"`{divergence.key}`" in page
        assert f"{divergence.key}: 4.25.0: {divergence.lane}; 4.34.2: {divergence.pinned}" in header
    assert header.startswith(
        "kubernetes provider: the lane runs 4.25.0, the program is pinned to 4.34.2;"
    )


STARTED = datetime.datetime(2026, 12, 6, 10, 0, 0, 400000, tzinfo=datetime.UTC).timestamp()


def created(kind: str, name: str, stamp: str, op: str = "create") -> dict[str, Any]:
    return {
        "resOutputsEvent": {
            "metadata": {
                "op": op,
                "type": kind,
                "urn": f"urn:pulumi:s::p::{kind}::{name}",
                "new": {"outputs": {"metadata": {"creationTimestamp": stamp}}},
            }
        }
    }


def test_a_create_of_an_object_older_than_the_up_is_a_takeover() -> None:
    events = [
        created("kubernetes:core/v1:ConfigMap", "old", "2026-12-06T09:59:58Z"),
        created(
            "kubernetes:networking.k8s.io/v1:NetworkPolicy",
            "same",
            "2026-12-06T09:00:00Z",
            op="create-replacement",
        ),
    ]
    assert takeovers(events, STARTED) == [
        "kubernetes:core/v1:ConfigMap old (made 2026-12-06T09:59:58Z)",
        "kubernetes:networking.k8s.io/v1:NetworkPolicy same (made 2026-12-06T09:00:00Z)",
    ]


def test_new_objects_patches_updates_and_other_packages_are_no_takeover() -> None:
    events = [
        # Made in the second the up started in: its whole-second stamp is before the start.
        created("kubernetes:core/v1:ConfigMap", "new", "2026-12-06T10:00:00Z"),
        created(
            "kubernetes:rbac.authorization.k8s.io/v1:ClusterRolePatch", "p", "2020-01-01T00:00:00Z"
        ),
        created("kubernetes:core/v1:Secret", "kept", "2020-01-01T00:00:00Z", op="update"),
        created("tls:index/privateKey:PrivateKey", "k", "2020-01-01T00:00:00Z"),
        {"summaryEvent": {"resourceChanges": {"create": 1}}},
    ]
    assert takeovers(events, STARTED) == []

"""Where the lane's kubernetes provider behaves otherwise than the one the program is pinned to.

The Go module proxy serves pulumi-kubernetes' provider module only at the tag commits of
v4.18.1 and v4.25.0 (``e2e/versions.toml``), so the lane runs 4.25.0 while uv.lock pins the
Python SDK, and with it the plugin an operator's ``pulumi`` installs, at 4.34.2. Each behaviour
the program or a lane test meets that differs between the two is one :class:`Divergence` here:
the lane prints them in its header (``tests/e2e/conftest.py``), every test whose outcome
depends on one carries ``@pytest.mark.provider_behaviour("<key>")`` and the lane's summary
lists them under the version they prove, and ``docs/real-engine.md`` names each key
(``tests/test_lane_divergences.py`` holds the three together).
"""

from __future__ import annotations

import importlib.resources
import json
import tomllib
from dataclasses import dataclass
from pathlib import Path

VERSIONS = Path(__file__).resolve().parent / "versions.toml"
MARKER = "provider_behaviour"


@dataclass(frozen=True)
class Divergence:
    key: str
    lane: str
    """What the lane's provider (4.25.0) does."""
    pinned: str
    """What the pinned provider (4.34.2) does instead."""
    source: str
    """Where the change is recorded upstream."""


DIVERGENCES = (
    Divergence(
        key="create-takes-over",
        lane=(
            "a create is a server-side apply: it takes over an object that already exists "
            "(and a replacement created before its delete is the same object, so the delete "
            "then removes it)"
        ),
        pinned=(
            "a create is client-side and fails with AlreadyExists on an existing object; "
            "only Patch resources and imports take one over"
        ),
        source="pulumi-kubernetes CHANGELOG 4.29.0, #2926 (provider/pkg/await/await.go Creation)",
    ),
)


def lane_version() -> str:
    """The kubernetes plugin version the lane builds and runs."""
    versions = tomllib.loads(VERSIONS.read_text())
    return str(versions["kubernetes_provider"]["plugin_version"])


def pinned_version() -> str:
    """The kubernetes plugin version uv.lock pins (the SDK package's ``pulumi-plugin.json``)."""
    text = importlib.resources.files("pulumi_kubernetes").joinpath("pulumi-plugin.json")
    return str(json.loads(text.read_text())["version"])


def by_key(key: str) -> Divergence:
    for divergence in DIVERGENCES:
        if divergence.key == key:
            return divergence
    raise KeyError(f"no provider divergence {key!r} (e2e/divergences.py)")


def header() -> list[str]:
    """The lane's header lines: the two versions and each divergence."""
    lines = [
        f"kubernetes provider: the lane runs {lane_version()}, the program is pinned to "
        f"{pinned_version()}; where they differ (tests marked {MARKER}):"
    ]
    for d in DIVERGENCES:
        lines.append(f"  {d.key}: {lane_version()}: {d.lane}; {pinned_version()}: {d.pinned}")
    return lines

"""One stack's render split over worker processes (issue 23): a stack's gateways are
independent components, so each worker runs the real program on a share of them
(``program.main(only=...)``) plus, as every run does, the stack-level resources (clusters,
providers, the shared ClusterRoles); the shares merge into the files a serial render writes,
byte for byte.

What a share's resources are does not depend on the other shares: a resource's inputs come from
its own gateway's resources and the stack-level ones, and the offline engine's placeholders and
ids are derived from each resource's own name (``gatewayctl.engine.offline``). The stack-level
resources are registered by every share alike; the merge keeps one and refuses a difference.

How many shares: ``share_counts`` decides from the work alone, so a small stack (the committed
samples) renders in one piece, as with ``--jobs 1``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gatewayctl.engine import render, write_guard
from gatewayctl.engine.offline import OnRegister
from gatewayctl.resolve.preparation import Prepared

MIN_SHARE = 40
"""Gateways a share has at least: below it, a worker's start (fork, the stack's validation,
the stack-level resources) costs more than the share saves."""
SHARES_PER_JOB = 2
"""Shares per worker when one stack is the work: the last shares to finish keep the other
workers busy instead of leaving them idle."""


def share_counts(gateways: Sequence[int], jobs: int) -> list[int]:
    """How many shares each stack of ``gateways`` (gateways per stack) renders in, for ``jobs``
    workers: one each when there is one worker, or when the stacks alone keep the workers busy
    (every stack no larger than its part of the work); otherwise shares of at least
    ``MIN_SHARE`` gateways, about ``SHARES_PER_JOB`` per worker over the whole work."""
    if jobs <= 1:
        return [1 for _ in gateways]
    total = sum(gateways)
    target = max(MIN_SHARE, math.ceil(total / (jobs * SHARES_PER_JOB)))
    return [max(1, min(math.ceil(count / target), count // MIN_SHARE)) for count in gateways]


def split(names: Sequence[str], shares: int) -> list[frozenset[str]]:
    """``names`` in ``shares`` parts of sizes that differ by at most one, in order."""
    size, extra = divmod(len(names), shares)
    parts, start = [], 0
    for index in range(shares):
        end = start + size + (1 if index < extra else 0)
        parts.append(frozenset(names[start:end]))
        start = end
    return parts


@dataclass(frozen=True, kw_only=True)
class Share:
    """What one worker rendered of a stack: its share's gateways and the stack-level
    resources (plain data, sent back through a pipe)."""

    manifests: dict[str, str]
    """Path → YAML text of every Kubernetes object of the run."""
    resources: dict[str, str]
    """URN → the resource's ``plan.json`` entry as text (``render.entry_text``), encoded where
    the share ran: the text, not the entry, is what the merge needs, and a few times cheaper to
    send through the pipe."""
    facts: dict[str, Any]
    """Gateway name → what the plan and the summary read of its outputs."""
    counts: dict[str | None, int]
    """Gateway name → its resources (``render.resource_counts``)."""
    written: tuple[str, ...] = ()
    """The paths of the manifests the worker wrote itself (not in ``manifests``)."""


def execute_share(
    prepared: Prepared,
    names: frozenset[str],
    on_register: OnRegister | None = None,
    into: Path | None = None,
) -> Share:
    """Run the stack's real program on the gateways ``names`` only. With ``into``, the share's
    own manifests (its gateways') are written into that directory instead of sent back: the
    stack-level ones, which every share renders, are sent for the merge to compare."""
    recording, facts = render._run(prepared, on_register, only=names)
    manifests = render.manifest_files(recording)
    written: tuple[str, ...] = ()
    if into is not None:
        shared = render.stack_level_paths(recording)
        own = {path: text for path, text in manifests.items() if path not in shared}
        write_guard.write_files(into, own)
        manifests = {path: manifests[path] for path in sorted(shared)}
        written = tuple(sorted(own))
    return Share(
        manifests=manifests,
        written=written,
        resources={
            urn: render.entry_text(render.plan_entry(r)) for urn, r in recording.resources.items()
        },
        facts=dict(facts),
        counts=dict(render.resource_counts(recording)),
    )


@dataclass(frozen=True, kw_only=True)
class Merged:
    files: dict[str, str]
    gateways: tuple[render.GatewaySummary, ...]
    resources: int
    written: tuple[str, ...] = ()
    """The paths the shares wrote themselves (``execute_share``'s ``into``)."""


def _union(parts: Sequence[Mapping[str, Any]], what: str) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for part in parts:
        for key, value in part.items():
            if key in merged and merged[key] != value:
                raise RuntimeError(f"two shares of the render disagree on {what} {key}")
            merged[key] = value
    return merged


def merge(prepared: Prepared, shares: Sequence[Share]) -> Merged:
    """The files and summary of the whole stack, as ``render.execute`` makes them."""
    loaded = prepared.loaded
    files = _union([s.manifests for s in shares], "the manifest")
    written = [path for share in shares for path in share.written]
    if len(set(written)) != len(written) or not files.keys().isdisjoint(written):
        twice = sorted({p for p in written if written.count(p) > 1} | (files.keys() & written))
        raise RuntimeError(f"two objects render to {twice[0]}")
    resources = _union([s.resources for s in shares], "the resource")
    facts = _union([s.facts for s in shares], "the gateway")
    counts: Counter[str | None] = Counter()
    for share in shares:
        counts.update({name: n for name, n in share.counts.items() if name is not None})
    # The resources' part of plan.json joined from their texts (render.plan_text).
    files["plan.json"] = render.plan_text(render.plan_of(loaded, facts, {}), resources)
    return Merged(
        files=files,
        gateways=render.summarise(loaded, counts, facts),
        resources=len(resources),
        written=tuple(sorted(written)),
    )

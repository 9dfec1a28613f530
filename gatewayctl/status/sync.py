"""Sync: which resources differ, from the steps of the digests, with the property paths that
differ (never a value).

- A refresh's ``update`` step: the live object differs from the state (drift); its paths are
  the detailed diff's keys (``PreviewStep.detailedDiff``), else ``diffReasons``.
- A refresh's ``update`` of a certificate's ``readyForRenewal`` alone: its renewal window is
  open (the provider's ``Read`` sets it, :mod:`.certificates`), not drift; the certificate is
  reported due instead. With other paths, those are the drift.
- A refresh's ``delete`` step: the live object is gone (Missing).
- A preview's steps other than ``same``: git differs from the state (an undeployed change),
  with the op the engine would take (create, update, replace, delete, ...).

Component resources (no provider of their own: ``custom`` false) change nothing by
themselves and are not listed; the stack resource neither.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gatewayctl.errors import printable
from gatewayctl.status.certificates import RENEWAL_PATH
from gatewayctl.status.certificates import TYPES as CERTIFICATE_TYPES
from gatewayctl.status.models import (
    OP_CREATE,
    OP_DELETE,
    OP_UPDATE,
    UNCHANGED_OPS,
    PreviewDigest,
    PreviewStep,
)
from gatewayctl.status.tree import STACK_TYPE, name_of, type_of

Sync = Literal["Synced", "OutOfSync", "Missing", "Unknown"]
Source = Literal["live", "git"]
OP_ADDITION = "addition"
"""Changed or added by another manager, seen in the live object (:mod:`.tampering`)."""
OP_UNMANAGED = "unmanaged"
"""An object in a gateway's namespace the program does not declare (:mod:`.live`)."""
PATHS_SHOWN = 12
"""Property paths listed per changed resource before the rest is counted."""


@dataclass(frozen=True, kw_only=True)
class Change:
    urn: str
    type: str
    name: str
    op: str
    """The engine's op; ``missing`` for a live object that is gone; ``addition`` for what
    another manager changed or added that neither refresh nor up may see (:mod:`.tampering`);
    ``unmanaged`` for an object nobody declared (:mod:`.live`; no URN)."""
    paths: tuple[str, ...]
    source: Source
    """``live``: found by the refresh (drift); ``git``: found by the preview (undeployed)."""

    @property
    def missing(self) -> bool:
        return self.op == "missing"


def paths_text(change: Change) -> str:
    """The changed paths, printable, at most :data:`PATHS_SHOWN` and a count of the rest."""
    shown = [printable(p) for p in change.paths[:PATHS_SHOWN]]
    more = len(change.paths) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more else "")


def _paths(step: PreviewStep) -> tuple[str, ...]:
    if step.detailed_diff:
        return tuple(sorted(step.detailed_diff))
    return tuple(sorted(set(step.diff_reasons or ()) | set(step.replace_reasons or ())))


def _renewal(path: str) -> bool:
    return path == RENEWAL_PATH or path.startswith((RENEWAL_PATH + ".", RENEWAL_PATH + "["))


def _custom(step: PreviewStep) -> bool:
    state = step.state
    if state is not None:
        return state.custom
    # No state in the step: a provider reference says it is a custom resource.
    return bool(step.provider)


def changes(digest: PreviewDigest, source: Source) -> list[Change]:
    found: list[Change] = []
    for step in digest.steps:
        if step.op in UNCHANGED_OPS or type_of(step.urn) == STACK_TYPE or not _custom(step):
            continue
        op = step.op
        type_ = type_of(step.urn)
        if source == "live" and op == OP_DELETE:
            op = "missing"
        paths = () if op in {"missing", OP_CREATE, OP_DELETE} else _paths(step)
        if source == "live" and op == OP_UPDATE and type_ in CERTIFICATE_TYPES:
            paths = tuple(p for p in paths if not _renewal(p))
            if not paths:
                continue  # the renewal window, not drift
        found.append(
            Change(
                urn=step.urn,
                type=type_,
                name=name_of(step.urn),
                op=op,
                paths=paths,
                source=source,
            )
        )
    return found

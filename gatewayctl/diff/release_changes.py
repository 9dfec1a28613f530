"""The diff summary's releases section: per gateway, release A → release B.

Read from the ``release`` and ``releasePinned`` fields of the two plans' gateway entries
(``gatewayctl.engine.render.plan``). A side rendered before releases existed has no such field: its
gateways ran no release, shown as ``(none)``. Gateways added or removed are in the gateways
table already; this section lists the gateways of both sides whose release differs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

NONE = "(none)"


@dataclass(frozen=True, kw_only=True)
class ReleaseMove:
    gateway: str
    before: str | None
    after: str | None
    pinned: bool
    """The gateway pins ``after`` itself (``spec.release``, a canary)."""


def _entries(plan: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    gateways = plan.get("gateways", [])
    if not isinstance(gateways, list):
        return {}
    return {str(g.get("name")): g for g in gateways if isinstance(g, dict)}


def _release(entry: Mapping[str, Any]) -> str | None:
    value = entry.get("release")
    return value if isinstance(value, str) else None


def release_moves(base: Mapping[str, Any], head: Mapping[str, Any]) -> tuple[ReleaseMove, ...]:
    """The gateways on both sides whose release differs, by name."""
    old, new = _entries(base), _entries(head)
    return tuple(
        ReleaseMove(
            gateway=name,
            before=_release(old[name]),
            after=_release(new[name]),
            pinned=new[name].get("releasePinned") is True,
        )
        for name in sorted(old.keys() & new.keys())
        if _release(old[name]) != _release(new[name])
    )


def summary_lines(moves: Sequence[ReleaseMove], rows: int) -> list[str]:
    """The Markdown lines of the section (none when no release moves), ``rows`` at most."""
    if not moves:
        return []
    lines = [
        f"**Releases:** {len(moves)} gateway(s) move",
        "",
        "| Gateway | Release |",
        "|---|---|",
    ]
    for move in moves[:rows]:
        before = f"`{move.before}`" if move.before else NONE
        after = f"`{move.after}`" if move.after else NONE
        pinned = " (pinned by the gateway)" if move.pinned else ""
        lines.append(f"| `{move.gateway}` | {before} → {after}{pinned} |")
    if len(moves) > rows:
        lines.append(f"| ... | {len(moves) - rows} more gateway(s) |")
    return [*lines, ""]

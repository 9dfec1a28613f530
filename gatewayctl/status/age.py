"""How old the state is: the time of the update that wrote it, and that time's age.

``pulumi stack export`` writes the state with its manifest: ``deployment.manifest.time`` is
the "Time of the update" (pulumi/pulumi ``sdk/go/common/apitype/core.go``, ``DeploymentV3``
``Manifest`` → ``ManifestV1.Time``), the last ``up``, ``refresh`` or ``import`` that wrote it.
Health read from the state alone is as old as that. The age is counted from the status's own
clock (``--now``, else the time of the check), never read here, so it can be tested.

The age reads as ``kubectl get``'s AGE column: k8s.io/apimachinery ``pkg/util/duration``
``HumanDuration`` (``90s``, ``5m30s``, ``75m``, ``5h10m``, ``20h``, ``3d4h``, ``10d``,
``2y30d``), with its two seconds of tolerance for clocks that disagree.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from gatewayctl.status.models import DeploymentV3

GO_ZERO = datetime(1, 1, 1, tzinfo=UTC)
"""Go's zero ``time.Time`` (``0001-01-01T00:00:00Z``): a manifest that holds no time."""
SKEW = timedelta(seconds=2)
"""A state up to this much newer than the clock is "now" (``HumanDuration``'s tolerance)."""


def state_time(checkpoint: DeploymentV3 | None) -> datetime | None:
    """The time of the update that wrote the state; None without a state or a time."""
    manifest = checkpoint.manifest if checkpoint is not None else None
    when = manifest.time if manifest is not None else None
    if when is None or when == GO_ZERO:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def human_duration(delta: timedelta) -> str | None:
    """``HumanDuration`` of ``delta``; None when it is negative beyond the tolerance (the state
    is newer than the clock: kubectl prints ``<invalid>``)."""
    seconds = int(delta.total_seconds())
    if delta <= -SKEW:
        return None
    if seconds < 0:
        return "0s"
    if seconds < 60 * 2:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        rest = seconds % 60
        return f"{minutes}m{rest}s" if rest else f"{minutes}m"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h{rest}m" if rest else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d{rest}h" if rest else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return f"{hours // 24 // 365}y{days}d" if days else f"{hours // 24 // 365}y"
    return f"{hours // 24 // 365}y"


def _time(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def describe(written: datetime | None, now: datetime, *, exported: bool = True) -> str:
    """The state's time and age, for people: ``2026-11-20 09:00 UTC (10d ago)``;
    ``exported``: a stack export was given."""
    if written is None:
        return "unknown (the export holds no time)" if exported else "unknown (no stack export)"
    age = human_duration(now - written)
    if age is None:
        return f"{_time(written)} (after the time of the check, {_time(now)}: check --now)"
    return f"{_time(written)} ({age} ago)"

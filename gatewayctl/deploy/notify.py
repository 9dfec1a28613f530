"""Notifications of a deploy or a drift check: a Slack-compatible webhook message and a GitHub
commit status per stack, built from what the run knows (its outcome, its link, the status
document ``gatewayctl status --format json`` wrote), never from a secret.

What goes out is chosen, not copied: the stack, the event, the run's link, counts, and the
names of at most :data:`NAMES_SHOWN` gateways with their sync and health. A gateway's address,
console, changes, messages and every other field of the status document stay out; each name is
made printable and escaped for Slack's mrkdwn (``&``, ``<``, ``>``: Slack's "Formatting text
for app surfaces", "Escaping text"). The commit status follows GitHub's REST API ("Create a
commit status": ``state`` error, failure, pending or success; ``description`` at most 140
characters; ``context``; ``target_url``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from gatewayctl.errors import printable

Event = Literal["deployed", "failed", "degraded", "drift", "renewal", "green", "held"]
EVENTS: tuple[Event, ...] = ("deployed", "failed", "degraded", "drift", "renewal", "green", "held")
STATES: dict[Event, str] = {
    "deployed": "success",
    "green": "success",
    "held": "pending",
    "renewal": "success",
    "drift": "failure",
    "degraded": "failure",
    "failed": "error",
}
"""The commit status each event sets (certificates due is no failure: the reissue follows)."""
HEADLINES: dict[Event, str] = {
    "deployed": "deployed",
    "failed": "failed",
    "degraded": "degraded: a gateway is not healthy",
    "drift": "drift: live resources differ from the stack's state",
    "renewal": "certificates inside their renewal window",
    "green": "synced and healthy",
    "held": "held back by a change window",
}
NAMES_SHOWN = 10
DESCRIPTION_LONGEST = 140


SYNCS = frozenset({"Synced", "OutOfSync", "Missing", "Unknown"})
HEALTHS = frozenset({"Healthy", "Progressing", "Degraded", "Missing", "Unknown"})
"""The values status writes (``gatewayctl.status.sync``, ``.health``); anything else in a
hand-made file goes out as ``?``."""


def escape(text: str) -> str:
    """Printable, and safe in Slack's mrkdwn: ``&``, ``<`` and ``>`` as entities, and no
    backtick (it would close the code span a name is shown in)."""
    safe = printable(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return safe.replace("`", "'")


def _known(value: Any, allowed: frozenset[str]) -> str:
    return value if isinstance(value, str) and value in allowed else "?"


def _counts(status: Mapping[str, Any] | None) -> tuple[int, list[Mapping[str, Any]], int]:
    """Gateways, those not Synced or not Healthy, certificates due."""
    if status is None:
        return 0, [], 0
    gateways = [g for g in status.get("gateways") or [] if isinstance(g, Mapping)]
    off = [g for g in gateways if g.get("sync") != "Synced" or g.get("health") != "Healthy"]
    due = status.get("certificatesDue") or []
    return len(gateways), off, len(due) if isinstance(due, list) else 0


def summary(stack: str, event: Event, status: Mapping[str, Any] | None) -> str:
    """One line: the stack, what happened, and the counts the status document gives."""
    total, off, due = _counts(status)
    line = f"{printable(stack)}: {HEADLINES[event]}"
    if status is not None:
        line += f"; {len(off)} of {total} gateway(s) not synced and healthy"
        if due:
            line += f", {due} certificate(s) due"
    return line


def webhook(
    stack: str, event: Event, run_url: str, status: Mapping[str, Any] | None, workflow: str
) -> dict[str, Any]:
    """The Slack-compatible message: ``text`` (what every webhook reads) and ``blocks``."""
    _, off, _ = _counts(status)
    text = f"{escape(summary(stack, event, status))} (<{escape(run_url)}|{escape(workflow)} run>)"
    lines = [
        f"• `{escape(str(g.get('name', '')))}` {_known(g.get('sync'), SYNCS)},"
        f" {_known(g.get('health'), HEALTHS)}"
        for g in off[:NAMES_SHOWN]
    ]
    if len(off) > NAMES_SHOWN:
        lines.append(f"• and {len(off) - NAMES_SHOWN} more")
    blocks: list[dict[str, Any]] = [{"type": "section", "text": {"type": "mrkdwn", "text": text}}]
    if lines:
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": "\n".join(lines)}})
    return {"text": text, "blocks": blocks}


def commit_status(
    stack: str, event: Event, run_url: str, status: Mapping[str, Any] | None, workflow: str
) -> dict[str, str]:
    """The body of GitHub's "create a commit status" for this stack and workflow."""
    description = summary(stack, event, status)
    if len(description) > DESCRIPTION_LONGEST:
        description = description[: DESCRIPTION_LONGEST - 3] + "..."
    return {
        "state": STATES[event],
        "context": f"hypershell/{printable(workflow)}/{printable(stack)}",
        "description": description,
        "target_url": run_url,
    }


WAVE_STATES = {"done": "success", "stopped": "failure", "untouched": "pending"}
"""The commit status of each wave of a rollout (``gatewayctl rollout --format json``)."""


def wave_statuses(
    stack: str, run_url: str, rollout: Mapping[str, Any], workflow: str
) -> list[dict[str, str]]:
    """One commit status per wave of gateways, context ``hypershell/<workflow>/<stack>/wave-N``:
    its number, name, result and how many gateways it holds (no message: a stop's reason
    names parts and their messages, which stay in the run's summary)."""
    found = []
    for wave in rollout.get("waves", []):
        number = wave.get("wave") if isinstance(wave, Mapping) else None
        if not isinstance(number, int) or isinstance(number, bool) or number < 1:
            continue  # wave 0 (the shared resources) has the stack's own status
        result = wave.get("result")
        state = WAVE_STATES.get(result, "error") if isinstance(result, str) else "error"
        gateways = wave.get("gateways")
        count = len(gateways) if isinstance(gateways, list) else 0
        name = printable(str(wave.get("name", "")))[:40]
        shown = result if isinstance(result, str) and result in WAVE_STATES else "?"
        found.append(
            {
                "state": state,
                "context": f"hypershell/{printable(workflow)}/{printable(stack)}/wave-{number}",
                "description": f"wave {number} ({name}): {shown}, {count} gateway(s)",
                "target_url": run_url,
            }
        )
    return found


def payloads(
    stack: str,
    event: Event,
    run_url: str,
    status: Mapping[str, Any] | None,
    workflow: str,
    rollout: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Both, as ``gatewayctl notify`` prints them; with a rollout, a status per wave too."""
    document: dict[str, Any] = {
        "commitStatus": commit_status(stack, event, run_url, status, workflow),
        "webhook": webhook(stack, event, run_url, status, workflow),
    }
    if rollout is not None:
        document["waveStatuses"] = wave_statuses(stack, run_url, rollout, workflow)
    return document

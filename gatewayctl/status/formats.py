"""The status as Markdown (an issue or a comment) and as a document, JSON or YAML (for
workflows), and the lines both share with the terminal's view (:mod:`.view`). Values of
properties are never shown, only their paths; names and messages that come from the inputs
are made printable (:func:`gatewayctl.errors.printable`) and, in Markdown, kept out of
markup."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gatewayctl import printing
from gatewayctl.errors import printable
from gatewayctl.status import age, heal
from gatewayctl.status.certificates import Certificate
from gatewayctl.status.core import GatewayStatus, StackStatus
from gatewayctl.status.resource_tree import ResourceStatus, kind
from gatewayctl.status.selfheal import Remedy
from gatewayctl.status.sync import OP_ADDITION, OP_UNMANAGED, Change, paths_text

MARKDOWN_LIMIT = 60_000
"""Characters of the Markdown report (an issue body holds 65,536)."""


def _time(value: Any) -> str:
    return str(value.strftime("%Y-%m-%d %H:%M UTC"))


def certificate_cell(gateway: GatewayStatus) -> str:
    cert = gateway.earliest
    if cert is None:
        return "-"
    days = f"{cert.days_left} days" if cert.days_left >= 0 else "expired"
    flag = ", renewal due" if gateway.due else ""
    return f"{days} ({printable(cert.name)}){flag}"


def change_line(change: Change) -> str:
    where = "live" if change.source == "live" else "git"
    what = "live object missing" if change.missing else change.op
    if change.op == OP_ADDITION:
        what = "added by another manager (up leaves it: self-heal removes it, or the command below)"
    elif change.op == OP_UNMANAGED:
        what = "not declared by the program (deleted only by self-heal with selfHealUnmanaged)"
    paths = f": {paths_text(change)}" if change.paths else ""
    return f"{printable(change.type)} {printable(change.name)} ({where}) {what}{paths}"


def heal_lines(remedy: Remedy) -> list[str]:
    """What self-heal does before its ``up`` (or, when it does not, the command for each), and
    what it leaves to a person, with the command (:mod:`.heal`)."""
    doing = remedy.action == "heal"
    lines = [
        f"self-heal will {heal.describe(s)}"
        if doing
        else f"to heal: {heal.describe(s)}: `{s.command()}`"
        for s in remedy.plan.steps
    ]
    lines += [
        f"left to a person: {m.type} {m.name}: {m.why}: `{m.command}`" for m in remedy.plan.manual
    ]
    return [printable(line) for line in lines]


def renewal_lines(remedy: Remedy) -> list[str]:
    """Each gateway's certificates due and the command whose pull request reissues them
    (:func:`.selfheal.renewals`); those no rotation reissues."""
    lines = [
        f"to renew {', '.join(printable(c.name) for c in r.certificates)} (expires"
        f" {_time(min(c.expires for c in r.certificates))}): `{r.command()}`"
        for r in remedy.renewals
    ]
    lines += [
        f"not renewed by a rotation: {printable(c.name)} (expires {_time(c.expires)}): its"
        " gateway is not declared, or the program does not make it"
        for c in remedy.unrenewed
    ]
    return lines


def _renewal_document(remedy: Remedy) -> dict[str, Any]:
    return {
        "renewals": [
            {
                "gateway": r.gateway,
                "secrets": [s.name for s in r.secrets],
                "fields": [s.field for s in r.secrets],
                "certificates": [_certificate(c) for c in r.certificates],
                "command": r.command(),
            }
            for r in remedy.renewals
        ],
        "unrenewed": [_certificate(c) for c in remedy.unrenewed],
    }


def _heal_document(remedy: Remedy) -> dict[str, Any]:
    return {
        "heal": [
            {
                "action": s.action,
                "type": s.type,
                "name": s.name,
                "gateway": s.gateway,
                "paths": list(s.paths),
                "command": s.command(),
            }
            for s in remedy.plan.steps
        ],
        "manual": [
            {
                "type": m.type,
                "name": m.name,
                "gateway": m.gateway,
                "why": m.why,
                "command": m.command,
            }
            for m in remedy.plan.manual
        ],
    }


def headline(status: StackStatus) -> str:
    parts = [f"{len(status.gateways)} gateway(s)"]
    for label, count in (
        ("out of sync", sum(g.sync != "Synced" for g in status.gateways)),
        ("not healthy", sum(g.health != "Healthy" for g in status.gateways)),
        ("with certificates due", sum(bool(g.due) for g in status.gateways)),
    ):
        parts.append(f"{count} {label}")
    return ", ".join(parts)


def live_note(status: StackStatus) -> str:
    note = {
        "refresh": "health from the refreshed live state",
        "state": "health from the state as of the last up or refresh (no refresh given)",
        "none": "health unknown (no refresh and no stack export given)",
    }[status.live]
    read = status.objects_read
    if read is not None:
        note += (
            f"; {len(read.items)} live objects of {len(read.namespaces)} namespace(s) read with"
            f" kubectl at {_time(read.read_at)} (context {printable(read.context)})"
        )
        if read.unread:
            note += f"; not read (no kubeconfig given): {printable(', '.join(read.unread))}"
    return note


def detail_lines(status: StackStatus) -> list[str]:
    lines: list[str] = []
    for g in status.gateways:
        lines += [f"{g.name}: {change_line(c)}" for c in g.changes]
        lines += [
            f"{g.name}: {printable(p.type)} {printable(p.name)} {p.health}: {printable(p.message)}"
            for p in g.parts
            if p.health != "Healthy"
        ]
        lines += [f"{g.name}: {_due(c)}" for c in g.due]
    lines += [f"outside any gateway: {change_line(c)}" for c in status.other_changes]
    return lines


def _due(cert: Certificate) -> str:
    return (
        f"certificate {cert.name} expires {_time(cert.expires)}, inside its renewal window"
        f" since {_time(cert.renews_from)}"
    )


def _state(status: StackStatus) -> str:
    return age.describe(status.state_time, status.now, exported="checkpoint" in status.inputs)


def _md(text: str) -> str:
    """Text from the inputs inside a Markdown code span."""
    return "`" + printable(text).replace("`", "'") + "`"


def markdown(status: StackStatus, remedy: Remedy, limit: int = MARKDOWN_LIMIT) -> str:
    head = [
        f"## Status of stack `{status.stack}`",
        "",
        f"{headline(status)}; {live_note(status)}. Checked {_time(status.now)}; state as of"
        f" {_state(status)}.",
        "",
        "| Gateway | Sync | Health | Certificates | Address |",
        "|---|---|---|---|---|",
    ]
    head += [
        f"| {_md(g.name)} | {g.sync} | {g.health} | {certificate_cell(g)} |"
        f" {_md(g.address) if g.address else '-'} |"
        for g in status.gateways
    ]
    head.append("")
    if remedy.action != "none":
        head += [f"Self-heal: **{remedy.action}**.", ""]
    if remedy.plan.steps or remedy.plan.manual:
        head += [f"- {_md(line)}" for line in heal_lines(remedy)] + [""]
    if remedy.renewals or remedy.unrenewed:
        head += [f"- {_md(line)}" for line in renewal_lines(remedy)] + [""]
    sections: list[tuple[str, list[str]]] = [
        (
            "### What differs",
            [f"- {_md(g.name)}: {_md(change_line(c))}" for g in status.gateways for c in g.changes]
            + [f"- outside any gateway: {_md(change_line(c))}" for c in status.other_changes],
        ),
        (
            "### Health",
            [
                f"- {_md(g.name)}: {_md(p.type)} {_md(p.name)} **{p.health}**: {_md(p.message)}"
                for g in status.gateways
                for p in g.parts
                if p.health != "Healthy"
            ],
        ),
        (
            "### Certificates inside their renewal window",
            [f"- {_md(g.name)}: {_md(_due(c))}" for g in status.gateways for c in g.due],
        ),
    ]
    text = "\n".join(head) + "\n"
    omitted = 0
    reserve = 200
    for title, lines in sections:
        if not lines:
            continue
        block = f"{title}\n\n"
        if len(text) + len(block) + reserve > limit:
            omitted += len(lines)
            continue
        text += block
        for line in lines:
            if len(text) + len(line) + 1 + reserve > limit:
                omitted += 1
                continue
            text += line + "\n"
        text += "\n"
    if omitted:
        text += (
            f"> **Note:** {omitted} detail line(s) omitted to stay under {limit:,} characters;"
            f" the table above is complete. Run `python -m gatewayctl status {status.stack}`"
            " with the same files for all of them.\n"
        )
    return text


def _change(change: Change) -> dict[str, Any]:
    return {
        "urn": change.urn or None,
        "type": change.type,
        "name": change.name,
        "op": change.op,
        "source": change.source,
        "paths": list(change.paths),
    }


def _certificate(cert: Certificate) -> dict[str, Any]:
    return {
        "urn": cert.urn,
        "name": cert.name,
        "expires": cert.expires.isoformat(),
        "renewsFrom": cert.renews_from.isoformat(),
        "daysLeft": cert.days_left,
        "due": cert.due,
    }


def _gateway(
    g: GatewayStatus, release: tuple[str, bool] | None, tree: bool = False
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": g.name,
        "sync": g.sync,
        "health": g.health,
        "address": g.address,
        "console": g.console,
        "release": release[0] if release else None,
        "releasePinned": release[1] if release else False,
        "changes": [_change(c) for c in g.changes],
        "parts": [
            {"type": p.type, "name": p.name, "health": p.health, "message": p.message}
            for p in g.parts
        ],
        "certificates": [_certificate(c) for c in g.certificates],
    }
    if tree:
        entry["resources"] = [_resource(r) for r in g.resources]
    return entry


def _resource(r: ResourceStatus) -> dict[str, Any]:
    return {
        "urn": r.urn or None,
        "type": r.type,
        "kind": kind(r.type),
        "name": r.name,
        "parent": r.parent,
        "id": r.id,
        "sync": r.sync,
        "health": r.health,
        "message": r.message,
    }


Releases = Mapping[str, tuple[str, bool]]
"""Per declared gateway, the release git binds it to and whether it pins it itself."""


def _head(status: StackStatus, state: str) -> dict[str, Any]:
    written = status.state_time
    return {
        "stack": status.stack,
        "checkedAt": status.now.isoformat(),
        "stateTime": written.isoformat() if written is not None else None,
        "stateAgeSeconds": int((status.now - written).total_seconds()) if written else None,
        "liveState": status.live,
        "liveObjects": _objects(status),
        "state": state,
    }


def _objects(status: StackStatus) -> dict[str, Any] | None:
    """When and where ``--live`` read the live objects; None without it."""
    read = status.objects_read
    if read is None:
        return None
    return {
        "readAt": read.read_at.isoformat(),
        "context": read.context,
        "namespaces": list(read.namespaces),
        "kinds": list(read.kinds),
        "objects": len(read.items),
        "unreadClusters": list(read.unread),
    }


def document(
    status: StackStatus, remedy: Remedy, state: str, self_heal: bool, releases: Releases
) -> dict[str, Any]:
    """The whole stack (``-o json``/``yaml``): the state, every gateway, the remedy."""

    def gateways(items: Iterable[GatewayStatus]) -> list[dict[str, Any]]:
        return [_gateway(g, releases.get(g.name)) for g in items]

    return {
        **_head(status, state),
        "selfHeal": self_heal,
        "remedy": {
            "action": remedy.action,
            **_renewal_document(remedy),
            **_heal_document(remedy),
        },
        "gateways": gateways(status.gateways),
        "otherChanges": [_change(c) for c in status.other_changes],
        "certificatesDue": [_certificate(c) for c in status.due],
    }


def gateway_document(
    status: StackStatus, gateway: GatewayStatus, state: str, releases: Releases
) -> dict[str, Any]:
    """One gateway with its resource tree (``status <stack> <gateway> -o json``/``yaml``);
    ``state``: the gateway's own."""
    return {**_head(status, state), "gateway": _gateway(gateway, releases.get(gateway.name), True)}


def json_text(document: Mapping[str, Any]) -> str:
    """The document as every command prints one (``gatewayctl.printing``: keys sorted)."""
    return printing.json_text(document)


def as_json(
    status: StackStatus,
    remedy: Remedy,
    state: str,
    self_heal: bool,
    releases: Releases | None = None,
) -> str:
    """The whole stack's :func:`document` as JSON."""
    return json_text(document(status, remedy, state, self_heal, releases or {}))


def yaml_text(document: Mapping[str, Any]) -> str:
    """The same document as YAML (keys sorted; block style; no tags)."""
    return printing.yaml_text(dict(document))

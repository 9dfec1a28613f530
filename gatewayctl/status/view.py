"""The status for a terminal, as ``argocd app list`` and ``argocd app get`` print it.

- The list: one row per gateway, its cells never folded or cut (columns padded like Go's
  ``tabwriter``, the way ``kubectl get`` and ``argocd`` write them: a long cell widens its
  column, a line longer than the terminal is the terminal's to wrap). ``wide`` adds the long
  columns: address, console, release.
- A gateway's tree (``status <stack> <gateway>``): its summary, then every resource with kind,
  name, sync, health and message (:mod:`.resources`); ``wide`` adds the live object's ID.
- Colour for sync and health only, and only where the console has colour: rich gives none
  when stdout is not a terminal or ``NO_COLOR`` is set (https://no-color.org), so the text is
  the same either way.
- The result goes to stdout; notes (the counts, where health was read, the details of what
  differs, self-heal) to stderr, where ``-q`` silences them (:func:`notes`).

Every cell is text, not markup, made printable (names and messages come from the inputs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from rich.text import Text

from gatewayctl.errors import printable
from gatewayctl.printing import (
    columns,
    text_of,
)
from gatewayctl.status import age
from gatewayctl.status.core import GatewayStatus, StackStatus
from gatewayctl.status.formats import (
    certificate_cell,
    detail_lines,
    headline,
    heal_lines,
    live_note,
    renewal_lines,
)
from gatewayctl.status.resource_tree import ResourceStatus, kind
from gatewayctl.status.selfheal import Remedy

if TYPE_CHECKING:
    from gatewayctl.printing import Cell

STYLES = {
    "Synced": "green",
    "Healthy": "green",
    "OutOfSync": "yellow",
    "Missing": "yellow",
    "Progressing": "blue",
    "Degraded": "red",
    "Unknown": "magenta",
}
"""Argo CD's colours for sync and health (its UI: green, yellow, blue, red; Unknown apart)."""


def state_cell(value: str | None) -> Text:
    """A sync or health value, coloured where the console has colour."""
    return Text(value or "", style=STYLES.get(value or "", ""))


def certificates_cell(gateway: GatewayStatus) -> str:
    cert = gateway.earliest
    if cert is None:
        return "-"
    days = f"{cert.days_left} days" if cert.days_left >= 0 else "expired"
    return f"{days}, renewal due" if gateway.due else days


def list_lines(
    status: StackStatus, *, wide: bool, releases: Mapping[str, str] | None = None
) -> list[Text]:
    """The list: NAME, SYNC, HEALTH, CERTIFICATES; ``wide`` adds ADDRESS, CONSOLE, RELEASE."""
    header = ["NAME", "SYNC", "HEALTH", "CERTIFICATES"]
    if wide:
        header += ["ADDRESS", "CONSOLE", "RELEASE"]
    rows: list[list[Cell]] = []
    for g in status.gateways:
        row: list[Cell] = [g.name, state_cell(g.sync), state_cell(g.health), certificates_cell(g)]
        if wide:
            release = (releases or {}).get(g.name)
            row += [g.address or "-", g.console or "-", release or "-"]
        rows.append(row)
    return columns(header, rows)


def _branch(last: tuple[bool, ...]) -> str:
    """The tree's drawing before a kind: ``│ `` or two spaces per level above, then ``├─`` or
    ``└─`` (argocd ``app get -o tree``)."""
    if not last:
        return ""
    above = "".join("  " if end else "│ " for end in last[:-1])
    return above + ("└─" if last[-1] else "├─")


def tree_lines(rows: Sequence[ResourceStatus], *, wide: bool) -> list[Text]:
    header = ["KIND", "NAME", "SYNC", "HEALTH", "MESSAGE"]
    if wide:
        header.insert(2, "ID")
    table: list[list[Cell]] = []
    for r in rows:
        row: list[Cell] = [
            _branch(r.last) + printable(kind(r.type)),
            r.name,
            state_cell(r.sync),
            state_cell(r.health),
            r.message,
        ]
        if wide:
            row.insert(2, r.id or "-")
        table.append(row)
    return columns(header, table)


def summary_lines(status: StackStatus, gateway: GatewayStatus, release: str | None) -> list[Text]:
    """The head of a gateway's tree, ``argocd app get``'s ``Name:``, ``Sync Status:``, ..."""
    exported = "checkpoint" in status.inputs
    fields: list[tuple[str, Cell]] = [
        ("Stack", status.stack),
        ("Gateway", gateway.name),
        ("Address", gateway.address or "-"),
        ("Console", gateway.console or "-"),
        ("Release", release or "-"),
        ("State", age.describe(status.state_time, status.now, exported=exported)),
        ("Sync Status", state_cell(gateway.sync)),
        ("Health Status", state_cell(gateway.health)),
        ("Certificates", certificate_cell(gateway)),
    ]
    width = max(len(label) for label, _ in fields) + 2
    lines = []
    for label, value in fields:
        line = Text(f"{label}:".ljust(width))
        line.append_text(text_of(value))
        lines.append(line)
    return lines


def state_note(status: StackStatus) -> str:
    exported = "checkpoint" in status.inputs
    return f"state: {age.describe(status.state_time, status.now, exported=exported)}"


def notes(status: StackStatus, remedy: Remedy) -> list[str]:
    """What the list's reader may want besides the table (stderr; ``-q`` drops them)."""
    lines = [f"{headline(status)}; {live_note(status)}", state_note(status)]
    lines += detail_lines(status)
    if remedy.action != "none":
        lines.append(f"self-heal: {remedy.action}")
    return lines + heal_lines(remedy) + renewal_lines(remedy)

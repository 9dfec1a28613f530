"""The Markdown report of the diff, for a pull-request comment, within :data:`REPORT_LIMIT`.

It leads with the risks of the whole change (:mod:`.risks`: what is destroyed, replaced,
flipped to Delete, granted, adopted, not committed), then a summary per stack; both are always
kept. The summary's counts are in the open; the per-gateway table and the other resources sit
in collapsible ``<details>`` sections, as does each object's unified diff. Object diffs that
do not fit are counted in a note under the summaries: changed objects are kept first, then
removed ones, then added ones (a new object's YAML is the least a reviewer needs); ``limit=0``
(``diff --no-limit``) keeps them all. A secret value that differs between the sides is only
said to have changed (:data:`SECRETS_CHANGED`).
"""

from __future__ import annotations

import difflib
import html
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from gatewayctl.diff import operations as ops
from gatewayctl.diff import orphaned_credentials, release_changes, risks
from gatewayctl.diff.access import access_lines
from gatewayctl.diff.compare import STATUSES, GatewayChange, ObjectChange, StackDiff, Status
from gatewayctl.inputs.yamlfile import SECRETS_KEY

REPORT_LIMIT = 60_000
"""Characters of the whole report (a GitHub comment holds 65,536)."""
GATEWAY_ROWS = 30
"""Gateway rows in the summary before the rest is counted."""
RESOURCE_LINES = 30
"""Lines of the other-resources section before the rest is counted."""
NAMES_LISTED = 8
"""Resource names listed per group of added or removed resources."""

_NOTE_RESERVE = 600
SECRETS_CHANGED = f"{SECRETS_KEY} values changed (not shown)"
"""Summary line of a stack whose secret values (plaintext, or the ciphertext of ``secure:``
values) differ between the sides."""


def base_label(ref: str, commit: str) -> str:
    """The base as the summary names it: the ref and its abbreviated commit."""
    return f"`{ref}` (`{commit[:12]}`)"


def dependencies_note(ref: str, lock_file: str) -> str:
    """The note for a base whose ``lock_file`` differs from the working tree's.

    Both sides run on this tree's virtualenv, so a render change that comes from a dependency
    update itself (a provider SDK's defaults, say) is in neither side and not in the report.
    """
    return (
        f"`{lock_file}` at `{ref}` differs from this working tree's. Both sides were rendered"
        " with this tree's dependencies, so what the dependency update itself changes in the"
        " render is not shown here."
    )


def gateway_detail(change: GatewayChange) -> str:
    """The details cell of a gateway's row: what changed, or where it is (added, removed)."""
    if change.status != "changed":
        return (
            f"cluster `{change.cluster}`, namespace `{change.namespace}`,"
            f" address `{change.address or '-'}`"
        )
    parts = ["plan: " + ", ".join(f"`{f}`" for f in change.fields)] if change.fields else []
    if change.resources:
        shown = [f"{kind} `{name}`" for kind, name in change.resources[:NAMES_LISTED]]
        more = len(change.resources) - len(shown)
        parts.append(
            f"{len(change.resources)} resource(s): "
            + ", ".join(shown)
            + (f" and {more} more" if more else "")
        )
    return "; ".join(parts)


def _counts(items: Iterable[Any]) -> Counter[str]:
    return Counter(item.status for item in items)


def _totals(counts: Counter[str]) -> str:
    return ", ".join(f"{counts[s]} {s}" for s in STATUSES)


def gateway_change(change: GatewayChange) -> str:
    """The change a gateway's row names: ``adopts`` for an added gateway that adopts the
    upstream controller's namespace, else its status."""
    return "adopts" if change.status == "added" and change.adopted else change.status


def _gateway_totals(gateways: Sequence[GatewayChange]) -> str:
    counts = Counter(gateway_change(g) for g in gateways)
    order = ("added", "adopts", "changed", "removed") if counts["adopts"] else STATUSES
    return ", ".join(f"{counts[s]} {s}" for s in order)


def details(summary: str, body: Sequence[str]) -> list[str]:
    """A collapsible section: ``summary`` is HTML-escaped, ``body`` Markdown lines (a blank line
    around them, which GitHub needs to render Markdown inside)."""
    return [
        f"<details><summary>{html.escape(summary, quote=False)}</summary>",
        "",
        *body,
        "",
        "</details>",
        "",
    ]


def _summary(diff: StackDiff, base_label: str) -> str:
    lines = [f"## Offline diff: stack `{diff.stack}`", ""]
    lines.append(f"Base {base_label} -> this working tree.")
    for side, note in (("The base", diff.base_note), ("The working tree", diff.head_note)):
        if note:
            lines.append(f"{side} {note}; its side is treated as empty.")
    lines.append("")
    if diff.secrets_changed:
        lines += [SECRETS_CHANGED, ""]
    if not diff.rendered_changed and diff.operations:
        lines += [
            "The rendered manifests and plan are the same; resources are replaced on request.",
            "",
        ]
    elif not diff.rendered_changed:
        lines += [
            "**No changes**: the rendered manifests and plan are the same."
            if not diff.secrets_changed
            else "The rendered manifests and plan are the same (the render redacts secrets).",
            "",
        ]
        return "\n".join(lines) + "\n"

    lines += [f"**Gateways:** {_gateway_totals(diff.gateways)}", ""]
    if diff.gateways:
        table = ["| Gateway | Change | Details |", "|---|---|---|"]
        table += [
            f"| `{g.name}` | {gateway_change(g)} | {gateway_detail(g)} |"
            for g in diff.gateways[:GATEWAY_ROWS]
        ]
        table += _more_gateways(diff.gateways[GATEWAY_ROWS:])
        lines += details(f"Per gateway ({len(diff.gateways)})", table)
    lines += release_changes.summary_lines(diff.releases, GATEWAY_ROWS)
    lines += orphaned_credentials.summary_lines(diff)
    lines += access_lines(diff.access, diff.sign_in)
    if diff.waves:
        lines += ["**Rollout** (deploy/rollout.yaml), wave after wave, each Healthy first:", ""]
        lines += [f"- {line}" for line in diff.waves] + [""]

    lines += [f"**Kubernetes objects:** {_totals(_counts(diff.objects))}", ""]
    if diff.objects:
        per_kind: dict[str, Counter[str]] = {}
        for obj in diff.objects:
            per_kind.setdefault(obj.kind, Counter())[obj.status] += 1
        lines += ["| Kind | Added | Changed | Removed |", "|---|---:|---:|---:|"]
        lines += [
            f"| {kind} | " + " | ".join(str(per_kind[kind][s]) for s in STATUSES) + " |"
            for kind in sorted(per_kind)
        ]
        lines.append("")

    lines += [
        f"**Other resources** (tls, postgresql, random, keycloak, providers):"
        f" {_totals(_counts(diff.resources))}",
        "",
    ]
    lines += ops.summary_lines(diff.operations, diff.hazards)
    return "\n".join(lines) + "\n"


def _more_gateways(rest: Sequence[GatewayChange]) -> list[str]:
    """Every gateway past the rows, by name, one row per status: the summary names them all."""
    rows = []
    for status in STATUSES:
        names = [g.name for g in rest if g.status == status]
        if names:
            listed = ", ".join(f"`{n}`" for n in names)
            rows.append(f"| ... | {status} | {len(names)} more: {listed} |")
    return rows


def _resource_section(diff: StackDiff) -> str:
    if not diff.resources:
        return ""
    lines: list[str] = []
    groups: dict[tuple[Status, str], list[str]] = {}
    predicted = {(o.type, o.name): o.label for o in diff.operations}
    for res in diff.resources:
        if res.status == "changed":
            fields = ", ".join(f"`{f}`" for f in res.fields)
            label = predicted.get((res.type, res.name))
            fields += f" ({label})" if label else ""
            lines.append(f"- changed `{res.type}` `{res.name}`: {fields}")
        else:
            groups.setdefault((res.status, res.type), []).append(res.name)
    for (status, type_), names in sorted(groups.items()):
        shown = ", ".join(f"`{n}`" for n in names[:NAMES_LISTED])
        more = f" and {len(names) - NAMES_LISTED} more" if len(names) > NAMES_LISTED else ""
        lines.append(f"- {status} {len(names)} `{type_}`: {shown}{more}")
    if len(lines) > RESOURCE_LINES:
        lines = [*lines[:RESOURCE_LINES], f"- ... {len(lines) - RESOURCE_LINES} more line(s)"]
    title = f"### Other resources: stack `{diff.stack}`"
    body = details(f"{len(diff.resources)} resource(s) added, changed or removed", lines)
    return "\n".join([title, "", *body]) + "\n"


def _fence(body: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    return "`" * max(3, longest + 1)


def _lines(text: str) -> list[str]:
    return [line if line.endswith("\n") else line + "\n" for line in text.splitlines(True)]


def object_diff(change: ObjectChange, operation: str | None = None) -> str:
    """A unified diff of one object file, fenced for Markdown; ``operation``: what the provider
    will do with it (:mod:`gatewayctl.diff.operations`)."""
    before = "/dev/null" if change.status == "added" else f"a/{change.path}"
    after = "/dev/null" if change.status == "removed" else f"b/{change.path}"
    body = "".join(
        difflib.unified_diff(
            _lines(change.old), _lines(change.new), fromfile=before, tofile=after, n=3
        )
    )
    fence = _fence(body)
    title = object_title(change.status, change.kind, change.path, operation)
    return "\n".join(details(title, [f"{fence}diff\n{body}{fence}"])) + "\n"


def object_title(status: str, kind: str, path: str, operation: str | None = None) -> str:
    """The summary line of one object's diff: ``changed Deployment: <path> (update in place)``."""
    return f"{status} {kind}: {path}" + (f" ({operation})" if operation else "")


_RANK: dict[str, int] = {"changed": 0, "removed": 1, "added": 2}
"""The order object diffs are kept in when the bound cuts: added objects' YAML goes first."""


def build_report(
    diffs: Sequence[StackDiff],
    *,
    base_label: str,
    command: str,
    limit: int | None = None,
    notes: Sequence[str] = (),
    uncommitted: Sequence[risks.Uncommitted] = (),
) -> str:
    """The Markdown report, at most ``limit`` (default :data:`REPORT_LIMIT`; 0: no bound)
    characters.

    The risks come first (with the working tree's ``uncommitted`` declarations), then ``notes``
    (about the whole diff), then the summaries: all three are always kept. Object diffs follow,
    each whole or not at all: changed objects first (what a reviewer most needs), then removed,
    then added; those that do not fit are counted in a note under the summaries, which names
    the command that prints them all (``command`` with ``--no-limit``).
    """
    limit = REPORT_LIMIT if limit is None else limit
    unbounded = limit == 0
    kept = risks.section(diffs, uncommitted)
    kept += "".join(f"> **Note:** {note}\n\n" for note in notes)
    kept += "".join(_summary(d, base_label) for d in diffs)
    kept += "".join(_resource_section(d) for d in diffs)
    candidates = sorted(
        ((_RANK[obj.status], index, obj.path), obj)
        for index, d in enumerate(diffs)
        for obj in d.objects
    )
    predicted = {
        (index, o.manifest): o.label
        for index, d in enumerate(diffs)
        for o in d.operations
        if o.manifest
    }
    budget = limit - len(kept) - _NOTE_RESERVE
    chosen: dict[int, list[tuple[tuple[int, int, str], str]]] = {}
    omitted: Counter[str] = Counter()
    for key, obj in candidates:
        index = key[1]
        block = object_diff(obj, predicted.get((index, obj.path)))
        heading = 0 if index in chosen else len(_heading(diffs[index].stack))
        if unbounded or len(block) + heading <= budget:
            chosen.setdefault(index, []).append((key, block))
            budget -= len(block) + heading
        else:
            omitted[obj.status] += 1
    body = "".join(
        _heading(diffs[index].stack) + "".join(block for _, block in sorted(blocks))
        for index, blocks in sorted(chosen.items())
    )
    note = ""
    if omitted:
        parts = ", ".join(f"{omitted[s]} {s}" for s in STATUSES if omitted[s])
        note = (
            f"> **Note:** {sum(omitted.values())} of {len(candidates)} object diffs omitted"
            f" ({parts}) to keep this report under {limit:,} characters; the summary above"
            f" is complete. Run `{command} --no-limit` to see them all.\n\n"
        )
    report = kept + note + body
    if not unbounded and len(report) > limit:  # the summaries alone are too long: cut, and say so
        cut = f"\n\n> **Note:** report cut at {limit:,} characters.\n"
        report = report[: max(0, limit - len(cut))] + cut
    return report


def _heading(stack: str) -> str:
    return f"### Object diffs: stack `{stack}`\n\n"


_REPORT_HEADING = "## Offline diff: stack `"


def is_report(text: str) -> bool:
    """True for a report as :func:`build_report` writes it: the risks, notes or a stack summary
    first. ``--output`` overwrites only such a file."""
    starts = text.startswith((_REPORT_HEADING, "## Risks\n", "> **Note:** "))
    return starts and any(line.startswith(_REPORT_HEADING) for line in text.splitlines())

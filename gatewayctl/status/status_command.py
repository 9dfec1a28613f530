"""``gatewayctl status <stack> [<gateway>]``: read the files, build the status, print it.

Without a gateway, the list (:func:`.view.list_lines`, or the stack's document, or Markdown);
with one, its resource tree (:func:`.view.tree_lines`, or its document). The result goes to
stdout, notes to stderr (``-q``: none). The overall state it returns is the whole stack's, or
with a gateway that gateway's alone (``gatewayctl.cli.status`` turns it into the exit code).
"""

from __future__ import annotations

import argparse
import dataclasses
from datetime import UTC, datetime

from rich.console import Console
from rich.text import Text

from gatewayctl import lazy, printing
from gatewayctl.errors import ToolError, UsageError, printable
from gatewayctl.inputs import status_records
from gatewayctl.inputs.status_records import GatewayRecord, Record
from gatewayctl.resolve.resolved import LoadedStack
from gatewayctl.status import core, formats, heal, inputs, live, selfheal, view
from gatewayctl.status.core import State, state

NAMES_SHOWN = 20
"""Gateways named in the message for an unknown one."""


def _release(release: str, pinned: bool) -> str:
    return f"{release} (pinned)" if pinned else release


def run(args: argparse.Namespace, console: Console) -> State:
    if args.heal and (not args.live or args.gateway is not None):
        raise UsageError("--heal needs --live (it heals what kubectl read) and no GATEWAY")
    if args.record is not None and args.gateway is not None:
        raise UsageError("--record records the whole stack; give no GATEWAY")
    self_heal = selfheal.enabled(args.root, args.stack)
    files = [path for group in args.sources for path in group]
    read = inputs.read(files, stack=args.stack, project=lazy.stackfile.PROJECT)
    now = args.now or datetime.now(UTC)
    # The gateways the stack declares, too: a preview lists only what it changes.
    loaded = lazy.stack.load_stack(args.root, args.stack)
    declared = [g.name for g in loaded.gateways]
    releases = {g.name: (g.release, g.release_pinned) for g in loaded.gateways if g.release}
    objects, namespaces, kubectl = _live(args, loaded, now) if args.live else (None, None, {})
    result = core.build(
        args.stack,
        read,
        now,
        declared,
        detail=args.gateway,
        objects=objects,
        namespaces=namespaces,
        ignored=loaded.config.unmanaged_ignore,
    )
    notes = Console(stderr=True, highlight=False, emoji=False)
    if args.gateway is not None:
        return _gateway(args, result, releases, console, notes)
    plan = heal.plan(result, loaded.config.self_heal_unmanaged)
    remedy = selfheal.remedy(result, self_heal, plan, declared)
    overall = state(result)
    if args.record is not None:
        status_records.append(args.record, _record(result, overall, releases))
    if args.heal:
        _heal(remedy, kubectl, notes)
    if args.format in {"table", "wide"}:
        shown = {name: _release(*release) for name, release in releases.items()}
        printing.show(console, view.list_lines(result, wide=args.format == "wide", releases=shown))
        if not args.quiet:
            for line in view.notes(result, remedy):
                notes.print(printing.inert_text(line), markup=False, soft_wrap=True)
        return overall
    if args.format == "markdown":
        text = formats.markdown(result, remedy)
    else:
        document = formats.document(result, remedy, overall, self_heal, releases)
        text = formats.json_text(document) if args.format == "json" else formats.yaml_text(document)
    printing.write(text)  # raw: rich would read `[x]` as markup
    return overall


def _record(result: core.StackStatus, overall: State, releases: formats.Releases) -> Record:
    """What ``--record`` appends: names, releases, sync and health, nothing else."""
    return Record(
        recorded=result.now.astimezone(UTC).replace(microsecond=0),
        stack=result.stack,
        state=overall,
        gateways=tuple(
            GatewayRecord(
                name=g.name,
                release=releases[g.name][0] if g.name in releases else None,
                sync=g.sync,
                health=g.health,
            )
            for g in result.gateways
        ),
    )


def kubeconfigs(entries: list[str], clusters: list[str]) -> dict[str, str | None]:
    """Each cluster's ``--kubeconfig`` (``None``: kubectl's default); a cluster left out when
    some are named and it is not. ``CLUSTER=FILE`` names one (UsageError for a cluster the
    stack does not have); anything else is a file for every cluster."""
    named: dict[str, str] = {}
    default: str | None = None
    for entry in entries:
        cluster, sep, path = entry.partition("=")
        if sep and "/" not in cluster and cluster:
            if cluster not in clusters:
                raise UsageError(
                    f"--kubeconfig: the stack has no cluster {printable(cluster)!r};"
                    f" its clusters: {', '.join(clusters) or 'none'}"
                )
            if not path:
                raise UsageError(f"--kubeconfig {printable(entry)!r}: no file after '='")
            named[cluster] = path
        else:
            default = entry
    if named and default is None:
        return dict(named)
    return {c: named.get(c, default) for c in clusters}


def _heal(remedy: selfheal.Remedy, kubectl: dict[str | None, list[str]], notes: Console) -> None:
    """``--heal``: carry out the remedy's heal steps (:mod:`.heal`), a line on stderr each."""
    if remedy.action != "heal":
        why = "nothing to heal" if not remedy.plan.steps else f"the remedy is {remedy.action}"
        notes.print(f"--heal: {why}; nothing changed", markup=False, soft_wrap=True)
        return
    try:
        for line in heal.run(remedy.plan.steps, kubectl):
            notes.print(printing.inert_text(line), markup=False, soft_wrap=True)
    except heal.HealError as error:
        raise ToolError(f"--heal: {printable(str(error))}") from None


def _live(
    args: argparse.Namespace, loaded: LoadedStack, now: datetime
) -> tuple[live.LiveObjects, dict[str, str], dict[str | None, list[str]]]:
    """The live objects of the gateways' namespaces, cluster by cluster (:mod:`.live`), and
    each gateway's kubectl command line (its cluster's kubeconfig and context)."""
    namespaces = {g.namespace: g.name for g in loaded.gateways}
    by_cluster: dict[str, list[str]] = {}
    for gateway in loaded.gateways:
        by_cluster.setdefault(gateway.cluster, []).append(gateway.namespace)
    given = kubeconfigs(args.kubeconfig, sorted(loaded.config.clusters))
    read: list[live.LiveObjects] = []
    kubectl: dict[str | None, list[str]] = {}
    for cluster, names in sorted(by_cluster.items()):
        if cluster not in given:
            read.append(live.unread(cluster, now))
            continue
        context = loaded.cluster(cluster).kubeconfig_context
        line = ["kubectl", *([f"--kubeconfig={given[cluster]}"] if given[cluster] else [])]
        line += [f"--context={context}"] if context else []
        kubectl.update({g.name: line for g in loaded.gateways if g.cluster == cluster})
        try:
            read.append(live.read(names, kubeconfig=given[cluster], context=context, now=now))
        except (live.LiveReadError, OSError) as error:
            raise ToolError(f"--live: cluster {cluster}: {error}") from None
    return live.merged(read, now), namespaces, kubectl


def _gateway(
    args: argparse.Namespace,
    result: core.StackStatus,
    releases: formats.Releases,
    console: Console,
    notes: Console,
) -> State:
    found = [g for g in result.gateways if g.name == args.gateway]
    if not found:
        names = [g.name for g in result.gateways]
        listed = ", ".join(names[:NAMES_SHOWN]) + (" ..." if len(names) > NAMES_SHOWN else "")
        raise UsageError(
            f"stack {args.stack} has no gateway {printable(args.gateway)!r} (declared or in the"
            f" files); its gateways: {listed or 'none'}"
        )
    if args.format == "markdown":
        raise UsageError("-o markdown is the whole stack's report; give no gateway")
    (gateway,) = found
    # The gateway's own state: the stack's other gateways and resources do not count.
    own = state(dataclasses.replace(result, gateways=(gateway,), other_changes=()))
    if args.format in {"table", "wide"}:
        release = releases.get(gateway.name)
        lines = view.summary_lines(result, gateway, _release(*release) if release else None)
        lines += [Text(""), *view.tree_lines(gateway.resources, wide=args.format == "wide")]
        printing.show(console, lines)
        if not args.quiet:
            notes.print(
                printing.inert_text(formats.live_note(result)), markup=False, soft_wrap=True
            )
        return own
    document = formats.gateway_document(result, gateway, own, releases)
    text = formats.json_text(document) if args.format == "json" else formats.yaml_text(document)
    printing.write(text)
    return own

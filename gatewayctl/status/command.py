"""``gatewayctl status <stack>``: read the files, build the status, print it.

The list (:func:`.view.list_lines`), or the stack's document, or Markdown. The result goes to
stdout, notes to stderr (``-q``: none). It returns the stack's overall state
(``gatewayctl.cli`` turns it into the exit code).
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime

from rich.console import Console

from gatewayctl.status import State, core, formats, inputs, selfheal, state, view


def _release(release: str, pinned: bool) -> str:
    return f"{release} (pinned)" if pinned else release


def run(args: argparse.Namespace, console: Console) -> State:
    from gatewayctl.resolve import load_stack
    from gatewayctl.stackfile import PROJECT

    self_heal = selfheal.enabled(args.root, args.stack)
    files = [path for group in args.sources for path in group]
    read = inputs.read(files, stack=args.stack, project=PROJECT)
    now = args.now or datetime.now(UTC)
    # The gateways the stack declares, too: a preview lists only what it changes.
    loaded = load_stack(args.root, args.stack)
    declared = [g.name for g in loaded.gateways]
    releases = {g.name: (g.release, g.release_pinned) for g in loaded.gateways if g.release}
    result = core.build(args.stack, read, now, declared)
    notes = Console(stderr=True, highlight=False, emoji=False)
    remedy = selfheal.remedy(result, self_heal)
    overall = state(result)
    if args.format in {"table", "wide"}:
        shown = {name: _release(*release) for name, release in releases.items()}
        view.show(console, view.list_lines(result, wide=args.format == "wide", releases=shown))
        if not args.quiet:
            for line in view.notes(result, remedy):
                notes.print(line, markup=False, soft_wrap=True)
        return overall
    if args.format == "markdown":
        text = formats.markdown(result, remedy)
    else:
        document = formats.document(result, remedy, overall, self_heal, releases)
        text = formats.json_text(document) if args.format == "json" else formats.yaml_text(document)
    sys.stdout.write(text)  # raw: rich would read `[x]` as markup
    sys.stdout.flush()
    return overall

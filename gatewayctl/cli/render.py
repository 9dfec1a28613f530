"""``gatewayctl render``: run the program offline for the stacks and write each one's manifests
and plan.json, with a progress display for large stacks and a summary table per stack.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, assert_never

from gatewayctl import interrupts, lazy
from gatewayctl.cli import arguments
from gatewayctl.cli.exits import EXIT_OK
from gatewayctl.cli.prepared import _prepare_all, warn

if TYPE_CHECKING:
    from rich.console import Console

    from gatewayctl.engine import parallel
    from gatewayctl.resolve import preparation
    from gatewayctl.resolve.resolved import SignIn

DEFAULT_OUT = Path("build/rendered")
PROGRESS_MIN_GATEWAYS = 25


def sign_in_shown(sign_in: SignIn) -> str:
    """The summary's sign-in column: whether, and how, people sign in to each gateway."""
    match sign_in:
        case "keycloak":
            return "keycloak"
        case "oidc":
            return "own issuer"
        case "none":
            return "none (declared)"
        case "unset":
            return "NOT CONFIGURED"
        case _:
            assert_never(sign_in)


def add(commands: arguments.Commands) -> None:
    rend = commands.add_parser(
        "render",
        help="run the program offline and write manifests and plan.json",
        description="Run the real program under Pulumi's mock runtime and write one YAML file"
        " per Kubernetes object (manifests/<cluster>/<namespace>/<kind>-<name>.yaml) and"
        " plan.json (every resource with its inputs; secrets redacted). The output directory"
        " is replaced whole.",
        epilog=arguments.EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    arguments.stack_arguments(rend, "render every Pulumi.*.yaml stack")
    arguments.output_argument(
        rend,
        "--out",
        help="output directory (default build/rendered/<stack>; with --all, DIR/<stack>)",
    )
    lazy.printing.format_option(
        rend,
        ["table", "wide", "json", "yaml"],
        help="the summary: table (default: one row per gateway), wide (also address, console"
        " and release), json or yaml (every stack, gateway and note;"
        " docs/render.md, 'Output formats')",
    )
    arguments.quiet_argument(rend, "no table, progress or notes (errors only)")
    arguments.jobs_argument(rend, "render")
    rend.set_defaults(func=cmd_render)


def cmd_render(args: argparse.Namespace, console: Console) -> int:
    root = args.root
    stacks = arguments.stacks(args, root)
    # Not capped by the stacks: one large stack's gateways are split over the workers, and
    # gatewayctl.engine.shares decides from the work how many run (small work stays in this
    # process).
    jobs = args.jobs if args.jobs is not None else lazy.parallel.available_cores()
    prepared = _prepare_all(root, stacks, jobs)
    base = args.out if args.out is not None else root / DEFAULT_OUT
    outs = {
        p.loaded.name: base / p.loaded.name if args.all or args.out is None else base
        for p in prepared
    }
    arguments.check_directories(root, outs.values())
    # The notes once the input is known to be usable: a run that exits 2 prints its problems.
    notes = lazy.printing.Notes(args.quiet)
    if placeholders := sum(p.secure_placeholders for p in prepared):
        notes(
            f"{placeholders} `secure:` config values cannot be decrypted offline; rendered"
            " with placeholders (redacted in the output like every secret)"
        )
    warn(notes, root, prepared)
    # Every stack's new tree is staged beside its output and written where it is rendered (by
    # the workers); all of them move into place once every stack has rendered, or none does.
    with interrupts.transaction():
        staging = {stack: lazy.write_guard.staging_tree(out) for stack, out in outs.items()}
        rendered = _render_all(prepared, notes.console, not args.quiet, jobs, staging)
        written = []
        for item in rendered:
            stack = item.prepared.loaded.name
            lazy.write_guard.finish_tree(outs[stack], staging[stack], item.written)
            written.append((item, outs[stack]))
    removed = (
        list(lazy.write_guard.remove_stale_outputs(base, keep=outs.keys())) if args.all else []
    )
    for gone in removed:
        notes.line(f"removed {gone} (no such stack any more)")
    if lazy.printing.is_document(args):
        lazy.printing.print_document(_render_document(written, notes.shown, removed), args.format)
    elif not args.quiet:
        for item, out in written:
            _summary(console, item, out, wide=args.format == "wide")
    return EXIT_OK


def _render_all(
    prepared: Sequence[preparation.Prepared],
    console: Console,
    show_progress: bool,
    jobs: int,
    into: Mapping[str, Path] | None = None,
) -> list[lazy.parallel.StackRender]:
    if not show_progress:
        return lazy.parallel.render_stacks(prepared, jobs=jobs, into=into)
    progress = lazy.cli_progress.RenderProgress(console, prepared, PROGRESS_MIN_GATEWAYS)
    with interrupts.on_interrupt(progress.stop):  # the terminal gets its cursor back
        try:
            return lazy.parallel.render_stacks(prepared, jobs=jobs, reporter=progress, into=into)
        finally:
            progress.stop()


def _summary(
    console: Console, rendered: parallel.StackRender, out: Path | None, *, wide: bool
) -> None:
    """One stack's summary: its name, one row per gateway (never folded; ``wide`` adds the
    long columns: address, console, release), and the totals."""

    header = ["NAME", "CLUSTER", "MODE", "SIGN-IN", "OVERRIDES", "RESOURCES"]
    if wide:
        header += ["ADDRESS", "CONSOLE", "RELEASE"]
    rows = []
    for gw in rendered.gateways:
        release, overrides = lazy.release_bindings.summary_cells(
            gw.release, gw.release_pinned, gw.image_overrides
        )
        row = [
            gw.name,
            gw.cluster,
            gw.mode,
            sign_in_shown(gw.sign_in),
            overrides,
            str(gw.resources),
        ]
        if wide:
            row += [gw.address or "-", gw.console or "-", release]
        rows.append(row)
    where = f" → {out}" if out is not None else ""
    lazy.printing.show(
        console,
        [
            f"stack {rendered.prepared.loaded.name}",
            *lazy.printing.columns(header, rows),
            f"{len(rendered.gateways)} gateways, {rendered.resources} resources,"
            f" {rendered.manifests} manifests{where}",
        ],
    )


def _render_document(
    rendered: Sequence[tuple[parallel.StackRender, Path]],
    notes: Sequence[str],
    removed: Sequence[Path],
) -> dict[str, Any]:
    """``render -o json|yaml``: per stack where it was written, its totals and its gateways
    (as the table's cells, by plan.json's names); the notes; the outputs of removed stacks."""
    return {
        "stacks": [
            {
                "stack": item.prepared.loaded.name,
                "out": str(out),
                "resources": item.resources,
                "manifests": item.manifests,
                "gateways": [
                    {
                        "name": gw.name,
                        "cluster": gw.cluster,
                        "mode": gw.mode,
                        "address": gw.address,
                        "console": gw.console,
                        "signIn": gw.sign_in,
                        "release": gw.release,
                        "releasePinned": gw.release_pinned,
                        "imageOverrides": list(gw.image_overrides),
                        "resources": gw.resources,
                    }
                    for gw in item.gateways
                ],
            }
            for item, out in rendered
        ],
        "notes": list(notes),
        "removed": [str(path) for path in removed],
    }

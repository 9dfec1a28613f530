"""``gatewayctl diff``: render the stacks at a git ref and in the working tree and print the
Markdown report of what changes (``gatewayctl.diff``), optionally also into files.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from gatewayctl import lazy
from gatewayctl.cli import arguments
from gatewayctl.cli.exits import EXIT_CHANGES, EXIT_OK, EXIT_REFUSED
from gatewayctl.cli.prepared import _prepare_all
from gatewayctl.errors import InvalidInputError

if TYPE_CHECKING:
    from rich.console import Console

DIFF_EPILOG = """\
exit codes: 0 no changes; 3 changes; 7 refused: a removed gateway's database is retained
while the only copy of its key, the KEK Secret, goes with its namespace, and
deploy/decommissions.yaml has no record for it (the report is written all the same; record
`kek: exported` with `exportedTo:`, or `data: discard`: docs/decommissioning.md); 2 invalid
input (the working tree's problems listed as `path: field: problem`, deploy/decommissions.yaml's
too, or an unknown --base ref); 1 any other error (git, the base render).

The base ref is checked out into a temporary git worktree and rendered by its own program (its
own `gatewayctl render`, by this interpreter); a ref without the stack or without an offline
render is an empty side. Needs no Pulumi CLI, backend, cluster or credentials. The working tree
renders while the base does; the base's render is kept in build/diff-cache/ (checked before
each use, never holding a secret), so the next diff against the same base renders only the
working tree.

examples:
  gatewayctl diff local --base main
  gatewayctl diff --all --base origin/main --output build/diff.md
  gatewayctl diff local --base main --no-limit --output build/diff-full.md
  gatewayctl diff local --base main --replace dev-pki-ca-key
"""


def _diff_description() -> str:
    return (
        "Render the stack at --base (from a temporary git worktree, with that"
        " ref's own program) and in this working tree, and print a Markdown report: the risks"
        " first (what is destroyed, replaced, flipped to Delete, granted, adopted, not"
        " committed), a summary (gateways, Kubernetes objects per kind, other resources),"
        " then per-object unified diffs in collapsible sections, at most"
        f" {lazy.report.REPORT_LIMIT:,} characters (--no-limit: all of them). Secrets never appear."
    )


def add(commands: arguments.Commands) -> None:
    dif = commands.add_parser(
        "diff",
        help="Markdown report of what changes against a git ref (for PR comments)",
        describe=_diff_description,
        epilog=DIFF_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    arguments.stack_arguments(dif, "diff every stack of the working tree or the base")
    dif.add_argument(
        "--base", required=True, metavar="REF", help="git ref to compare against (origin/main)"
    )
    arguments.output_argument(dif, "--output", metavar="FILE", help="also write the report to FILE")
    dif.add_argument(
        "--no-limit",
        action="store_true",
        help="keep every object diff (the report is otherwise cut to fit a GitHub comment)",
    )
    dif.add_argument(
        "--replace",
        action="append",
        default=[],
        metavar="URN_OR_NAME",
        help="predict as `pulumi up --replace` would: the resource (its URN, or its logical"
        " name) is replaced, and what uses its new outputs changes too (repeatable)",
    )
    arguments.output_argument(
        dif,
        "--json",
        metavar="FILE",
        help="also write the predicted step of every resource (by URN) and the changed"
        " objects to FILE as JSON",
    )
    lazy.printing.format_option(
        dif,
        ["markdown", "json", "yaml"],
        short=False,  # --output names the report's file here
        help="what stdout gets: markdown (default: the report), json or yaml (the summary as"
        " data; --output still writes the Markdown)",
    )
    dif.set_defaults(func=cmd_diff)


def cmd_diff(args: argparse.Namespace, console: Console) -> int:
    root = args.root
    prepared = _prepare_all(root, arguments.stacks(args, root))
    # Every output path before anything is rendered: the report, and the base renders' cache.
    problems = lazy.cache.problems(root)
    if args.output is not None:
        problems += lazy.write_guard.file_problems(
            args.output, root, ours=lazy.report.is_report, kind="a diff report", flag="--output"
        )
    if args.json is not None:
        problems += lazy.write_guard.file_problems(
            args.json, root, ours=lazy.steps.is_document, kind="a diff steps file", flag="--json"
        )
    cache = ("the diff cache", root / lazy.cache.DIRECTORY)
    problems += arguments.distinct_problems(
        [cache, ("--output", args.output), ("--json", args.json)]
    )
    if problems:
        raise InvalidInputError(problems)
    limit = 0 if args.no_limit else None
    result = lazy.diff_command.run(
        root, prepared, args.base, every_stack=args.all, limit=limit, replace=args.replace
    )
    if lazy.printing.is_document(args):
        lazy.printing.print_document(lazy.summary.document(result, args.base), args.format)
    else:
        lazy.printing.write(result.report)  # raw: rich would read `[secret]` as markup
    if args.output is not None:
        lazy.write_guard.write_file(args.output, result.report)
    if args.json is not None:
        text = json.dumps(lazy.steps.document(result.diffs), indent=2, sort_keys=True) + "\n"
        lazy.write_guard.write_file(args.json, text)
    if result.refused:
        for refusal in result.refused:  # names and paths only: nothing secret
            sys.stderr.write(lazy.printing.inert(f"gatewayctl diff: {refusal.message()}") + "\n")
        sys.stderr.flush()
        return EXIT_REFUSED
    return EXIT_CHANGES if result.changed else EXIT_OK

"""``gatewayctl history``: record an ``up`` of a stack, or show what each ``up`` applied and
how healthy it has been since (``gatewayctl.deploy.deploy_history``; docs/history.md).
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from gatewayctl import lazy
from gatewayctl.cli.exits import EXIT_OK
from gatewayctl.cli.notify import URL
from gatewayctl.cli.status import utc

if TYPE_CHECKING:
    from rich.console import Console

    from gatewayctl.cli import arguments

HISTORY_EPILOG = """\
exit codes: 0 ok (also when no up is recorded: it says so); 2 invalid input (a bad line in the
history or records file: its path, line and field; an unknown STACK or --gateway; --outcome
stopped without --rollout showing where it stopped); 1 any other error (the records branch not
fetched: how to fetch it).

Recording (--record FILE): appends one JSON line for the up that just ended, from this
checkout: the time, the workflow and its run, the program commit (git rev-parse HEAD), the
outcome, and per gateway its release, its resolved images and the git blob of its
declaration (git hash-object of gateways/<stack>/<name>.yaml, as applied); with --rollout, the
result of each gateway's wave and where it stopped. The deploy workflow appends it to
history/<stack>.jsonl on the branch hypershell-records.

Reading: the ups newest first (from history/<stack>.jsonl and records/<stack>.jsonl of
origin/hypershell-records, --ref REF, or a checkout of that branch: --records DIR), each
with its gateways, joined with the drift check's status records between it and the next up:
"healthy since T" (Synced and Healthy in every record since T) or the last status recorded.

examples:
  git fetch origin hypershell-records
  gatewayctl history aws                       # every up of aws, newest first
  gatewayctl history aws --gateway audit -o json
  gatewayctl history aws --records ../records  # a checkout of the branch
  gatewayctl history aws --record history.jsonl --outcome succeeded --workflow deploy \\
      --run-url "$RUN_URL" --rollout rollout.json
  gatewayctl rollback aws --to <commit> --gateway audit --branch rollback-audit
"""


def add(commands: arguments.Commands) -> None:
    his = commands.add_parser(
        "history",
        help="what each up of a stack applied (commit, releases, declarations) and its health",
        description="Show, newest first, each recorded up of STACK: when, the program commit,"
        " the outcome and per gateway its release and declaration, with since when the drift"
        " check has seen it Healthy; or, with --record, append the entry of the up that just"
        " ran from this checkout.",
        epilog=HISTORY_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    his.add_argument("stack", help="the stack (Pulumi.<stack>.yaml)")
    his.add_argument("--gateway", metavar="NAME", help="only this gateway's entries")
    his.add_argument(
        "--records",
        type=Path,
        metavar="DIR",
        help="a checkout of the branch hypershell-records: DIR/history/<stack>.jsonl and"
        " DIR/records/<stack>.jsonl",
    )
    his.add_argument(
        "--ref",
        default=None,
        metavar="REF",
        help="read the files from this git ref (default origin/hypershell-records)",
    )
    his.add_argument(
        "--record", type=Path, metavar="FILE", help="append this up's entry to FILE; show nothing"
    )
    his.add_argument(
        "--outcome",
        choices=["succeeded", "failed", "stopped"],
        help="with --record: how the up ended (stopped: at a wave, from --rollout)",
    )
    his.add_argument(
        "--rollout", type=Path, metavar="FILE", help="with --record: `rollout -o json`'s output"
    )
    his.add_argument(
        "--workflow",
        choices=["deploy", "drift", "manual"],
        default="manual",
        help="with --record: what ran the up (default manual)",
    )
    his.add_argument("--run-url", metavar="URL", help="with --record: the workflow run")
    his.add_argument(
        "--now", type=utc, metavar="TIME", help="with --record: when the up ended (default now)"
    )
    lazy.printing.format_option(his, ["text", "json", "yaml"], help="text (default), json or yaml")
    his.set_defaults(func=cmd_history)


def cmd_history(args: argparse.Namespace, console: Console) -> int:
    lazy.cli_driver.known_stacks(args.root, [args.stack])
    recording = [f for f in ("outcome", "rollout", "run_url", "now") if getattr(args, f)]
    if args.record is None:
        if recording:
            flags = ", ".join(f"--{f.replace('_', '-')}" for f in recording)
            raise lazy.errors.UsageError(f"{flags}: only with --record FILE")
    else:
        if args.outcome is None:
            raise lazy.errors.UsageError("--record needs --outcome succeeded|failed|stopped")
        if args.gateway or args.records or args.ref:
            raise lazy.errors.UsageError("--record takes no --gateway, --records or --ref")
        if args.run_url is not None and not URL.fullmatch(args.run_url):
            raise lazy.errors.UsageError(
                f"--run-url {lazy.errors.printable(args.run_url)!r}: expected one http(s) address"
            )
        made = lazy.deploy_history.entry(
            args.root,
            args.stack,
            outcome=args.outcome,
            recorded=args.now or datetime.now(UTC),
            workflow=args.workflow,
            run=args.run_url,
            rollout=args.rollout,
        )
        lazy.history_records.append(args.record, made)
        return EXIT_OK
    (text, display, missing), (status, shown, _) = lazy.deploy_history.sources(
        args.root, args.stack, args.records, args.ref or lazy.soak.REF
    )
    if text is None and "does not exist" not in missing:
        raise lazy.errors.ToolError(missing)
    found = lazy.history_records.parse(text, display, args.stack) if text is not None else []
    checks = lazy.status_records.parse(status, shown, args.stack) if status is not None else []
    named = {g.name for e in found for g in e.gateways}
    if args.gateway and found and args.gateway not in named:
        raise lazy.errors.InvalidInputError(
            [
                lazy.errors.Problem(
                    display, "gateways", f"no up of gateway {args.gateway!r} is recorded"
                )
            ]
        )
    joined = lazy.deploy_history.join(found, checks, args.gateway)
    if lazy.printing.is_document(args):
        lazy.printing.print_document(lazy.deploy_history.document(args.stack, joined), args.format)
        return EXIT_OK
    lines = lazy.deploy_history.lines(args.stack, joined)
    if text is None:
        lines = [f"history of {args.stack}: {missing}"]
    for line in lines:
        console.print(line, markup=False, soft_wrap=True, highlight=False)
    return EXIT_OK

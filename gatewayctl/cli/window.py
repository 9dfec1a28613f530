"""``gatewayctl window``: whether CI may change a stack now (``deploy/windows.yaml``,
``gatewayctl.inputs.windows``); the workflows ask before a deploy, a self-heal and a
certificate reissue."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from gatewayctl import lazy
from gatewayctl.cli import arguments
from gatewayctl.cli.exits import EXIT_CLOSED, EXIT_OK
from gatewayctl.cli.status import utc
from gatewayctl.errors import UsageError, printable

if TYPE_CHECKING:
    from rich.console import Console

OVERRIDE_LONGEST = 200

WINDOW_EPILOG = """\
exit codes: 0 open (or closed and overridden with --override); 6 closed: a deny window is
active, or the stack has allow windows and none is; 2 invalid input (deploy/windows.yaml:
every problem as `path: field: problem`, an unknown STACK, an empty --override); 1 any other
error.

A stack deploy/windows.yaml does not name is always open. Deny windows win over allow
windows, as in Argo CD's sync windows; each schedule is a cron expression read in the stack's
timeZone, and a window lasts its duration from each time the schedule matches.

examples:
  gatewayctl window ibm                          # ibm: open (no window denies it)
  gatewayctl window ibm --at 2026-12-05T10:00Z   # closed ... until 2026-12-07T08:00:00+01:00
  gatewayctl window ibm --override "INC-4521: revoke a leaked key" -o json
"""


def add(commands: arguments.Commands) -> None:
    win = commands.add_parser(
        "window",
        help="whether CI may change a stack now: its allow and deny windows (deploy/windows.yaml)",
        description="Say whether the stack's change windows let CI change it now (or at"
        " --at), and when a closed stack opens again; exit 6 when closed.",
        epilog=WINDOW_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    win.add_argument("stack", help=arguments.STACK_HELP)
    win.add_argument("--at", type=utc, metavar="TIME", help="ISO 8601 time (default: now)")
    win.add_argument(
        "--override",
        metavar="REASON",
        help="an emergency change while closed: exit 0, the reason in the output (the"
        " workflows write it into the run's summary)",
    )
    lazy.printing.format_option(win, ["text", "json", "yaml"], help="text (default), json or yaml")
    win.set_defaults(func=cmd_window)


def cmd_window(args: argparse.Namespace, console: Console) -> int:
    reason = args.override
    if reason is not None and (not reason.strip() or len(reason) > OVERRIDE_LONGEST):
        raise UsageError(f"--override needs a reason of 1 to {OVERRIDE_LONGEST} characters")
    lazy.cli_driver.known_stacks(args.root, [args.stack])
    at = args.at or datetime.now(UTC)
    settings = lazy.windows.read(args.root).get(args.stack)
    try:
        decision = lazy.windows.decide(settings, at)
    except OverflowError:
        raise UsageError(f"--at {at.isoformat()}: too near the end of the calendar") from None
    overridden = not decision.open and reason is not None
    document = {
        "stack": args.stack,
        "at": at.isoformat(),
        "open": decision.open,
        "why": decision.why,
        "until": decision.until.isoformat() if decision.until else None,
        "overridden": overridden,
        "overrideReason": printable(reason) if overridden else None,
    }
    if lazy.printing.is_document(args):
        lazy.printing.print_document(document, args.format)
    else:
        state = "open" if decision.open else "closed"
        line = f"{args.stack}: {state} ({decision.why})"
        if not decision.open:
            line += (
                f"; opens again at {document['until']}" if decision.until else "; no opening found"
            )
        if overridden:
            line += f"; overridden: {document['overrideReason']}"
        console.print(line, markup=False, soft_wrap=True)
    return EXIT_OK if decision.open or overridden else EXIT_CLOSED

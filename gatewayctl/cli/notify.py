"""``gatewayctl notify``: the commit status and the webhook message of a deploy or a drift
check (``gatewayctl.deploy.notify``), printed as JSON for the workflow to send."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gatewayctl import lazy
from gatewayctl.cli import arguments
from gatewayctl.cli.exits import EXIT_OK
from gatewayctl.errors import InvalidInputError, Problem, UsageError, printable

if TYPE_CHECKING:
    from rich.console import Console

URL = re.compile(r"https?://[!#-;=?-\[\]-_a-z~]+")
"""Printable ASCII without space, ``"``, ``<``, ``>``, ``\\``, backtick, ``{``, ``|``, ``}``."""
WORKFLOW = re.compile(r"[a-z][-a-z0-9]{0,30}")

NOTIFY_EPILOG = """\
exit codes: 0 printed; 2 invalid input (an unknown STACK or event, a run URL that is not one
http(s) address, a --status or --rollout file that is not what status or rollout prints); 1
any other error.

Prints {"commitStatus": ..., "webhook": ...}: the body of GitHub's "create a commit status"
(state, context hypershell/<workflow>/<stack>, description, target_url) and a Slack-compatible
message (text and blocks); with --rollout also "waveStatuses", one commit status per wave
(context hypershell/<workflow>/<stack>/wave-N: done success, stopped failure, untouched
pending). Only the stack, the event, the run's link, counts and the names,
sync and health of at most 10 gateways go out; nothing else of the status document.

examples:
  gatewayctl notify ibm --event deployed --workflow deploy --run-url "$RUN_URL"
  gatewayctl notify ibm --event drift --workflow drift --run-url "$RUN_URL" --status status.json
  gatewayctl notify aws --event failed --workflow deploy --run-url "$RUN_URL" --rollout rollout.json
"""


def add(commands: arguments.Commands) -> None:
    ntf = commands.add_parser(
        "notify",
        help="the commit status and webhook message of a deploy or drift check, as JSON",
        description="Print the GitHub commit status and the Slack-compatible webhook message"
        " for a stack's deploy or drift check; the workflows send them.",
        epilog=NOTIFY_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ntf.add_argument("stack", help=arguments.STACK_HELP)
    ntf.add_argument("--event", required=True, choices=lazy.notify.EVENTS, help="what happened")
    ntf.add_argument("--run-url", required=True, metavar="URL", help="the run's address")
    ntf.add_argument(
        "--workflow", required=True, metavar="NAME", help="deploy or drift: the status context"
    )
    ntf.add_argument(
        "--status",
        type=Path,
        metavar="FILE",
        help="what `gatewayctl status --format json` printed: counts and gateways not green",
    )
    ntf.add_argument(
        "--rollout",
        type=Path,
        metavar="FILE",
        help="what `gatewayctl rollout --format json` printed: a commit status per wave",
    )
    ntf.set_defaults(func=cmd_notify)


def cmd_notify(args: argparse.Namespace, console: Console) -> int:
    if not URL.fullmatch(args.run_url):
        raise UsageError(f"--run-url {printable(args.run_url)!r}: expected one http(s) address")
    if not WORKFLOW.fullmatch(args.workflow):
        raise UsageError(f"--workflow {printable(args.workflow)!r}: expected a name (a-z, 0-9, -)")
    lazy.cli_driver.known_stacks(args.root, [args.stack])
    status = _status(args.status, "gateways") if args.status is not None else None
    rollout = _status(args.rollout, "waves") if args.rollout is not None else None
    document = lazy.notify.payloads(
        args.stack, args.event, args.run_url, status, args.workflow, rollout
    )
    lazy.printing.write(lazy.printing.json_text(document))
    return EXIT_OK


def _status(path: Path, key: str) -> dict[str, Any]:
    shown = printable(str(path))
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InvalidInputError([Problem(shown, "", f"not readable JSON: {error}")]) from None
    if not isinstance(document, dict) or not isinstance(document.get(key), list):
        command = "status" if key == "gateways" else "rollout"
        why = f"not the document `gatewayctl {command} --format json` prints"
        raise InvalidInputError([Problem(shown, key, why)])
    return document

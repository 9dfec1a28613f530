"""``gatewayctl move GATEWAY --from STACK --to STACK``: check a gateway's move between two stacks
of one cluster and print the state move that keeps its tenant (``gatewayctl.deploy.move``)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from gatewayctl import lazy
from gatewayctl.cli import arguments
from gatewayctl.cli.exits import EXIT_OK

if TYPE_CHECKING:
    from rich.console import Console

MOVE_EPILOG = """\
exit codes: 0 ok; 2 invalid input (a stack or declaration problem, the destination does not
take the gateway or the source still does, the cluster, database server or realm differs
between the stacks: every problem listed as `path: field: problem`); 1 any other error.

examples:
  gatewayctl move team-a --from aws-1 --to aws-2          # the procedure and its commands
  gatewayctl move team-a --from aws-1 --to aws-2 -o json  # the plan as data
"""


def add(commands: arguments.Commands) -> None:
    mov = commands.add_parser(
        "move",
        help="move a gateway to another stack of its cluster, keeping the tenant (state move)",
        description="Rebalance shards: check that the working tree gives GATEWAY to the"
        " --to stack and no longer to the --from stack, on the same cluster, database server"
        " and realm, then print the `pulumi state move` of its Gateway component (its every"
        " resource moves with it; nothing is deleted or created) and the previews that prove"
        " it. Nothing is run or written.",
        epilog=MOVE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    mov.add_argument("gateway", help="the gateway's name (metadata.name)")
    mov.add_argument("--from", dest="source", required=True, metavar="STACK", help="its stack now")
    mov.add_argument("--to", dest="dest", required=True, metavar="STACK", help="its new stack")
    lazy.printing.format_option(
        mov, ["text", "json", "yaml"], help="text (default: the procedure), json or yaml"
    )
    mov.set_defaults(func=cmd_move)


def cmd_move(args: argparse.Namespace, console: Console) -> int:
    for stack in (args.source, args.dest):
        lazy.stackfile.requested_stacks(args.root, stack)
    plan = lazy.move.plan_move(args.root, args.gateway, args.source, args.dest)
    if lazy.printing.is_document(args):
        lazy.printing.print_document(plan.document(), args.format)
    else:
        for line in lazy.move.procedure(plan):
            console.print(line, markup=False, soft_wrap=True)
    return EXIT_OK

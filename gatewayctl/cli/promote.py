"""``gatewayctl promote``: bind a release to a stack's clusters, or one cluster, editing only
that value of its Pulumi.<stack>.yaml (``gatewayctl.deploy.promote``), and report who rolls.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from gatewayctl.cli.exits import EXIT_OK

if TYPE_CHECKING:
    from rich.console import Console

    from gatewayctl.cli import arguments

PROMOTE_EPILOG = """\
exit codes: 0 ok (also when the target already runs the release: nothing is written); 2 invalid
input (an unknown release, stack or cluster, or a stack that would not validate with the new
binding: every problem listed as `path: field: problem`, nothing written); 1 any other error.

examples:
  gatewayctl promote openshell-0.0.110 --to local
  gatewayctl promote openshell-0.0.110 --to aws/rosa-us-east-1
  gatewayctl promote openshell-0.0.110 --to aws --dry-run
"""


def add(commands: arguments.Commands) -> None:
    from gatewayctl import printing

    pro = commands.add_parser(
        "promote",
        help="bind a release to a stack's clusters (or one cluster), keeping the file's layout",
        description="Set clusters.<cluster>.release to RELEASE in Pulumi.<stack>.yaml, for"
        " every cluster of the stack or the one named, editing only that value (comments and"
        " layout are kept), after checking that the stack validates with it; then print which"
        " gateways will roll (their images change) and which stay (a canary pinning its own"
        " release, overrides). Commit the change and open a pull request: its offline diff"
        " shows each gateway's release A → release B.",
        epilog=PROMOTE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    pro.add_argument("release", help="release name, as in releases/<release>.yaml")
    pro.add_argument(
        "--to", required=True, metavar="STACK[/CLUSTER]", help="the stack, or one of its clusters"
    )
    pro.add_argument("--dry-run", action="store_true", help="check and report; write nothing")
    printing.format_option(
        pro,
        ["text", "json", "yaml"],
        help="text (default), json or yaml (each binding moved and each gateway's images)",
    )
    pro.set_defaults(func=cmd_promote)


def cmd_promote(args: argparse.Namespace, console: Console) -> int:
    from gatewayctl import printing
    from gatewayctl.deploy import promote

    promotion = promote.promote(args.root, args.release, args.to)
    if not args.dry_run:
        promote.write(args.root, promotion)
    if printing.is_document(args):
        printing.print_document(promote.document(promotion, dry_run=args.dry_run), args.format)
        return EXIT_OK
    for line in promote.report(promotion):
        console.print(line, markup=False, soft_wrap=True)
    if args.dry_run and promotion.changed:
        console.print(f"dry run: {promotion.path} not written", markup=False, soft_wrap=True)
    return EXIT_OK

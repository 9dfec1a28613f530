"""``gatewayctl rotate GATEWAY SECRET...``: raise the declaration's rotation counters by one,
editing only those values (``gatewayctl.deploy.rotate``), for a pull request to carry out."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from gatewayctl import lazy
from gatewayctl.cli import arguments
from gatewayctl.cli.exits import EXIT_OK

if TYPE_CHECKING:
    from rich.console import Console

ROTATE_EPILOG = """\
exit codes: 0 ok (the counters raised, or with --dry-run checked and shown); 2 invalid input
(an unknown gateway, stack or secret, a gateway declared in several stacks without --stack,
kek without --accept-credential-loss or on a driver with no KEK, console-cookie without a
console, a stack that does not validate: every problem listed as `path: field: problem`,
nothing written); 1 any other error.

secrets (spec.rotation's counters; docs/running.md, "Rotating keys"): database-password
(databasePassword), server-certificate (serverCertificate), client-certificate
(clientCertificate), ca (ca: clients must trust the new CA), kek (kek: the stored credentials
are lost), console-cookie (consoleCookie).

examples:
  gatewayctl rotate team-a database-password
  gatewayctl rotate team-a server-certificate client-certificate --stack ibm --dry-run
  gatewayctl rotate dev kek --accept-credential-loss
  gatewayctl rotate team-a ca -o json
"""


def add(commands: arguments.Commands) -> None:
    rot = commands.add_parser(
        "rotate",
        help="ask for new secrets of a gateway: raise its spec.rotation counters (a PR)",
        description="Raise spec.rotation.<secret> by one in the gateway's declaration"
        " (gateways/<stack>/<gateway>.yaml), editing only those values (comments and layout"
        " are kept; rotation: and spec: are added when absent), after checking that it"
        " validates; print what each rotation replaces and what clients must do. Commit the"
        " change and open a pull request: its offline diff previews the replacement, and the"
        " merge's pulumi up carries it out.",
        epilog=ROTATE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    rot.add_argument("gateway", help="the gateway's name (metadata.name)")
    rot.add_argument(
        "secrets",
        nargs="+",
        choices=list(lazy.rotation_secrets.BY_NAME),
        metavar="SECRET",
        help=f"what to rotate: {', '.join(lazy.rotation_secrets.BY_NAME)}",
    )
    rot.add_argument(
        "--stack", metavar="STACK", help="the gateway's stack (default: the one declaring it)"
    )
    rot.add_argument(
        "--dry-run", action="store_true", help="check and show the diff; write nothing"
    )
    rot.add_argument(
        "--accept-credential-loss",
        action="store_true",
        help="required with kek: the credentials the gateway's users stored are lost",
    )
    lazy.printing.format_option(rot, ["text", "json", "yaml"], help="text (default), json or yaml")
    rot.set_defaults(func=cmd_rotate)


def cmd_rotate(args: argparse.Namespace, console: Console) -> int:
    rotation = lazy.rotate.rotate(
        args.root,
        args.gateway,
        args.secrets,
        args.stack,
        accept_loss=args.accept_credential_loss,
    )
    if not args.dry_run:
        lazy.rotate.write(args.root, rotation)
    if lazy.printing.is_document(args):
        document = lazy.rotate.document(rotation, dry_run=args.dry_run)
        lazy.printing.print_document(document, args.format)
        return EXIT_OK
    lines = lazy.rotate.report(rotation)
    if args.dry_run:
        lines += [*lazy.rotate.diff(rotation).splitlines(), f"dry run: {rotation.path} not written"]
    else:
        lines.append(lazy.rotate.NEXT.format(path=rotation.path, stack=rotation.stack))
    for line in lines:
        console.print(line, markup=False, soft_wrap=True, highlight=False)
    return EXIT_OK

"""``gatewayctl import-file``: the ``pulumi import --file`` file for the gateways a stack adopts
from the upstream controller (``gatewayctl.deploy.adoption``), and the commands to run.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from gatewayctl import lazy
from gatewayctl.cli import arguments
from gatewayctl.cli.exits import EXIT_OK
from gatewayctl.cli.prepared import _prepare_all

if TYPE_CHECKING:
    from rich.console import Console

IMPORT_EPILOG = """\
exit codes: 0 ok (also when no declaration adopts a namespace: nothing is written); 2 invalid
input (every problem listed as `path: field: problem`); 1 any other error.

examples:
  gatewayctl import-file ibm       # → build/import/ibm.json, and the commands to run
  gatewayctl import-file ibm --out /tmp/ibm-import.json
"""


def add(commands: arguments.Commands) -> None:
    imp = commands.add_parser(
        "import-file",
        help="pulumi import file for gateways adopted from the upstream controller",
        description="Write a `pulumi import --file` file mapping every object the upstream"
        " controller created for the stack's adopted gateways (declarations with"
        " spec.namespace) and their PostgreSQL role and database to"
        " their existing IDs. See docs/adoption.md.",
        epilog=IMPORT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    imp.add_argument("stack", help=arguments.STACK_HELP)
    arguments.output_argument(
        imp, "--out", metavar="FILE", help="default build/import/<stack>.json"
    )
    lazy.printing.format_option(
        imp,
        ["text", "json", "yaml"],
        help="text (default: the file and the commands to run), json or yaml",
    )
    imp.set_defaults(func=cmd_import_file)


def cmd_import_file(args: argparse.Namespace, console: Console) -> int:
    (prepared,) = _prepare_all(args.root, lazy.stackfile.requested_stacks(args.root, args.stack))
    out = args.out or args.root / "build" / "import" / f"{args.stack}.json"
    arguments.check_file(out, args.root, ours=lazy.adoption.is_import_file, kind="an import file")
    document = lazy.adoption.import_file(lazy.render.execute(prepared))
    imported = sum(1 for r in document["resources"] if "id" in r)
    commands: list[str] = []
    if document["resources"]:
        lazy.write_guard.write_file(out, json.dumps(document, indent=2) + "\n")
        targets = lazy.adoption.targets(document)
        # The program declares them already; code generated from URN-keyed entries would
        # not bind.
        commands = [
            "pulumi up " + " ".join(f"--target '{urn}'" for urn in targets),
            f"pulumi import --file {out} --protect=false --generate-code=false",
        ]
    if lazy.printing.is_document(args):
        written = bool(document["resources"])
        made = {
            "stack": args.stack,
            "file": str(out) if written else None,
            "resources": imported,
            "targets": lazy.adoption.targets(document) if written else [],
            "commands": commands,
        }
        lazy.printing.print_document(made, args.format)
    elif not commands:
        console.print(
            f"stack {args.stack}: no declaration adopts an existing namespace (spec.namespace);"
            " nothing written",
            markup=False,
            soft_wrap=True,
        )
    else:
        console.print(f"{imported} resources to import → {out}", markup=False, soft_wrap=True)
        console.print("create the parents and providers it refers to first, then import:")
        for command in commands:
            console.print(f"  {command}", markup=False, soft_wrap=True)
    return EXIT_OK

"""The lists the workflows build their matrices from: ``gatewayctl stacks`` (every stack) and
``gatewayctl driver`` (who deploys each stack: the operator or CI, ``gatewayctl.deploy.operator``).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from gatewayctl.cli import arguments
from gatewayctl.cli.exits import EXIT_OK
from gatewayctl.errors import InvalidInputError, Problem

if TYPE_CHECKING:
    from rich.console import Console

DRIVER_EPILOG = """\
exit codes: 0 ok; 2 invalid input (an unknown stack, or deploy/operator.yaml: every problem
listed as `path: field: problem`); 1 any other error.

examples:
  gatewayctl driver ibm aws              # ibm: ci / aws: operator
  gatewayctl driver --list ci ibm aws    # ["ibm"]: the stacks the workflows deploy
"""


STACKS_EPILOG = """\
exit codes: 0 ok; 2 invalid input (a stack file whose name is no stack name, or no stack file
at all: every problem listed as `path: field: problem`); 1 any other error.

examples:
  gatewayctl stacks             # ["aws","ibm","local"]: one diff job per stack
  gatewayctl stacks -o yaml     # the same list in YAML
"""


def _driver_description() -> str:

    from gatewayctl.inputs import operator_settings

    return (
        f"Print who runs `pulumi up`, refresh and drift correction for each STACK:"
        f" `operator` for the stacks {operator_settings.SETTINGS} gives the operator, `ci` for the"
        " others (all of them without that file). The workflows skip the operator's stacks."
    )


def add(commands: arguments.Commands) -> None:
    """``stacks``, then ``driver``."""
    from gatewayctl import printing

    lst = commands.add_parser(
        "stacks",
        help="print every stack (Pulumi.<stack>.yaml) as a JSON list, for a workflow matrix",
        description="Print every stack of the project as a JSON list, sorted: the pull-request"
        " workflow runs one diff job per stack from it. Exit 2 when a stack file's name is no"
        " stack name or there is none.",
        epilog=STACKS_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    printing.format_option(lst, ["json", "yaml"], help="json (default: a list on one line) or yaml")
    lst.set_defaults(func=cmd_stacks)

    drv = commands.add_parser(
        "driver",
        help="who deploys each stack: the operator (deploy/operator.yaml stacks) or CI",
        describe=_driver_description,
        epilog=DRIVER_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    drv.add_argument("stacks", nargs="+", metavar="STACK", help=arguments.STACKS_HELP)
    drv.add_argument(
        "--list",
        choices=["ci", "operator"],
        help="print only a JSON list of the STACKs with this driver (a workflow matrix)",
    )
    printing.format_option(
        drv,
        ["text", "json", "yaml"],
        help="text (default: `stack: driver` lines), json or yaml ({drivers: {stack: driver}});"
        " with --list, json (one line) or yaml",
    )
    drv.set_defaults(func=cmd_driver)


def cmd_stacks(args: argparse.Namespace, console: Console) -> int:
    """Every stack here, as a JSON list (a workflow matrix: one job per stack)."""
    from gatewayctl.inputs import stackfile

    _list(stackfile.requested_stacks(args.root, None), args.format)
    return EXIT_OK


def cmd_driver(args: argparse.Namespace, console: Console) -> int:
    from gatewayctl import printing
    from gatewayctl.inputs import operator_settings, stackfile
    from gatewayctl.inputs.stackfile import stack_file

    known = stackfile.all_stacks(args.root)
    unknown = [
        Problem(stack_file(stack), "", f"no such stack; the stacks here are {', '.join(known)}")
        for stack in args.stacks
        if stack not in known
    ]
    if unknown:
        raise InvalidInputError(unknown)
    drivers = operator_settings.drivers(args.root, args.stacks)
    if args.list is not None:
        listed = [stack for stack in drivers if drivers[stack] == args.list]
        _list(listed, args.format)
    elif printing.is_document(args):
        printing.print_document({"drivers": drivers}, args.format)
    else:
        for stack, driver in drivers.items():
            console.print(f"{stack}: {driver}", markup=False, soft_wrap=True)
    return EXIT_OK


def _list(items: Sequence[str], format: str) -> None:
    """A list for a workflow matrix: JSON on one line (``$GITHUB_OUTPUT`` takes one), or
    YAML."""
    from gatewayctl import printing

    if format == "yaml":
        printing.print_document(list(items), format)
    else:
        printing.write(json.dumps(list(items), separators=(",", ":")) + "\n")

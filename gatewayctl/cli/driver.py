"""The lists the workflows build their matrices from: ``gatewayctl stacks`` (every stack) and
``gatewayctl driver`` (who deploys each stack: the operator or CI, ``gatewayctl.deploy.operator``).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from gatewayctl import lazy
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
  gatewayctl driver --deployed           # the same for every stack of deploy/stacks.yaml
  gatewayctl driver --list ci ibm aws    # ["ibm"]: the stacks the workflows deploy
  gatewayctl driver --list ci --changed build/diff-summary ibm aws
                                         # [] when the push leaves ibm's render unchanged
"""


STACKS_EPILOG = """\
exit codes: 0 ok; 2 invalid input (a stack file whose name is no stack name, no stack file at
all, an unknown STACK, a problem of deploy/stacks.yaml with --deployed; with --changed, a
stack whose diff is not recorded in DIR or a record that is not the diff's JSON: every problem
listed as `path: field: problem`); 1 any other error.

examples:
  gatewayctl stacks             # ["aws","ibm","local"]: one diff job per stack
  gatewayctl stacks -o yaml     # the same list in YAML
  gatewayctl stacks --deployed  # ["aws","ibm"]: the stacks CI deploys (deploy/stacks.yaml)
  gatewayctl stacks --changed build/diff-summary --deployed
                                # ["aws"]: of those, the ones whose recorded offline diff
                                # changes (the pull request's previews)
"""


def _driver_description() -> str:
    return (
        f"Print who runs `pulumi up`, refresh and drift correction for each STACK:"
        f" `operator` for the stacks {lazy.operator_settings.SETTINGS} gives the operator,"
        " `ci` for the others (all of them without that file). The workflows skip the"
        " operator's stacks."
    )


def add(commands: arguments.Commands) -> None:
    """``stacks``, then ``driver``."""

    lst = commands.add_parser(
        "stacks",
        help="print every stack (Pulumi.<stack>.yaml) as a JSON list, for a workflow matrix",
        description="Print every stack of the project as a JSON list, sorted: the pull-request"
        " workflow runs one diff job per stack from it. Exit 2 when a stack file's name is no"
        " stack name or there is none.",
        epilog=STACKS_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    lst.add_argument(
        "stacks",
        nargs="*",
        metavar="STACK",
        help="only these stacks (default: every stack of the project)",
    )
    _deployed_option(lst)
    _changed_option(lst)
    lazy.printing.format_option(
        lst, ["json", "yaml"], help="json (default: a list on one line) or yaml"
    )
    lst.set_defaults(func=cmd_stacks)

    drv = commands.add_parser(
        "driver",
        help="who deploys each stack: the operator (deploy/operator.yaml stacks) or CI",
        describe=_driver_description,
        epilog=DRIVER_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    drv.add_argument("stacks", nargs="*", metavar="STACK", help=arguments.STACKS_HELP)
    _deployed_option(drv)
    drv.add_argument(
        "--list",
        choices=["ci", "operator"],
        help="print only a JSON list of the STACKs with this driver (a workflow matrix)",
    )
    _changed_option(drv)
    lazy.printing.format_option(
        drv,
        ["text", "json", "yaml"],
        help="text (default: `stack: driver` lines), json or yaml ({drivers: {stack: driver}});"
        " with --list, json (one line) or yaml",
    )
    drv.set_defaults(func=cmd_driver)


def _deployed_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--deployed",
        action="store_true",
        help="the stacks CI deploys (deploy/stacks.yaml `deployed`: names and patterns such as"
        " aws-*), instead of STACKs",
    )


def _chosen(args: argparse.Namespace, everything: Sequence[str] | None) -> list[str]:
    """The STACKs named, the deployed ones (``--deployed``), else ``everything`` (None: one
    of the two is required)."""

    if args.deployed and args.stacks:
        raise InvalidInputError([Problem("--deployed", "", "takes the place of STACKs: not both")])
    if args.deployed:
        return lazy.deployed.deployed_stacks(args.root)
    if args.stacks:
        known_stacks(args.root, args.stacks)
        return list(dict.fromkeys(args.stacks))
    if everything is None:
        raise InvalidInputError([Problem("STACK", "", "name the stacks, or give --deployed")])
    return list(everything)


def _changed_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--changed",
        metavar="DIR",
        type=Path,
        help="keep only the stacks whose offline diff recorded in DIR changes their render"
        " (DIR/*.json: what `gatewayctl diff --format json` printed); a stack with no record"
        " there is an error (exit 2), never unchanged",
    )


def cmd_stacks(args: argparse.Namespace, console: Console) -> int:
    """Every stack here (or those named), as a JSON list (a workflow matrix: one job per
    stack); with ``--changed``, those whose recorded offline diff changes."""

    stacks = _chosen(args, lazy.stackfile.requested_stacks(args.root, None))
    _list(_only_changed(args, stacks), args.format)
    return EXIT_OK


def known_stacks(root: Path, stacks: Sequence[str]) -> None:
    known = lazy.stackfile.all_stacks(root)
    unknown = [
        Problem(
            lazy.stackfile.stack_file(stack),
            "",
            f"no such stack; the stacks here are {', '.join(known)}",
        )
        for stack in stacks
        if stack not in known
    ]
    if unknown:
        raise InvalidInputError(unknown)


def _only_changed(args: argparse.Namespace, stacks: Sequence[str]) -> list[str]:
    if args.changed is None:
        return list(stacks)

    directory = args.changed if args.changed.is_absolute() else Path.cwd() / args.changed
    return lazy.changed.changed_stacks(directory, stacks)


def cmd_driver(args: argparse.Namespace, console: Console) -> int:
    drivers = lazy.operator_settings.drivers(args.root, _chosen(args, None))
    if args.changed is not None and args.list is None:
        raise InvalidInputError(
            [Problem("--changed", "", "filters a list: use it with --list ci or --list operator")]
        )
    if args.list is not None:
        listed = [stack for stack in drivers if drivers[stack] == args.list]
        _list(_only_changed(args, listed), args.format)
    elif lazy.printing.is_document(args):
        lazy.printing.print_document({"drivers": drivers}, args.format)
    else:
        for stack, driver in drivers.items():
            console.print(f"{stack}: {driver}", markup=False, soft_wrap=True)
    return EXIT_OK


def _list(items: Sequence[str], format: str) -> None:
    """A list for a workflow matrix: JSON on one line (``$GITHUB_OUTPUT`` takes one), or
    YAML."""

    if format == "yaml":
        lazy.printing.print_document(list(items), format)
    else:
        lazy.printing.write(json.dumps(list(items), separators=(",", ":")) + "\n")

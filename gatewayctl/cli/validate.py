"""``gatewayctl validate``: check the stacks' config and declarations (with ``--deploy``, also
what ``pulumi up`` needs) and print one line per stack; nothing is written.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from gatewayctl import lazy
from gatewayctl.cli import arguments
from gatewayctl.cli.exits import EXIT_OK
from gatewayctl.cli.prepared import _prepare_all, warn

T = TypeVar("T")

if TYPE_CHECKING:
    from rich.console import Console

    from gatewayctl.resolve import preparation

DEPLOY_HELP = (
    "also check what `pulumi up` needs and the offline render does not: every"
    " database.sslRootCert is a PEM bundle in the project, no `secure:` value is a placeholder"
    " (see docs/running.md), each cluster has its clusterSecrets entry"
)


def add(commands: arguments.Commands) -> None:
    val = commands.add_parser(
        "validate",
        help="check config and declarations only (fast; for pre-commit and PR checks)",
        description="Validate Pulumi.<stack>.yaml and its declarations, and the deploy/ files"
        " (windows.yaml, rollout.yaml, decommissions.yaml: a record of a gateway still declared"
        " is a problem); nothing is written.",
        epilog=arguments.EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    arguments.stack_arguments(val, "validate every Pulumi.*.yaml stack")
    val.add_argument("--deploy", action="store_true", help=DEPLOY_HELP)
    lazy.printing.format_option(
        val,
        ["text", "json", "yaml"],
        help="text (default: one line per stack), json or yaml (each stack's gateways and"
        " clusters, and the notes)",
    )
    arguments.quiet_argument(val)
    arguments.jobs_argument(val, "validate")
    val.set_defaults(func=cmd_validate)


def cmd_validate(args: argparse.Namespace, console: Console) -> int:
    names = arguments.stacks(args, args.root)
    jobs = arguments.jobs(args, len(names))
    # deploy/windows.yaml, deploy/rollout.yaml (waves, promotion) and deploy/decommissions.yaml:
    # every problem, exit 2.
    problems = []

    def read(reader: Callable[[Path], T]) -> T | None:
        try:
            return reader(args.root)
        except lazy.errors.InvalidInputError as error:
            problems.extend(error.problems)
            return None

    read(lazy.windows.read)
    read(lazy.promotion.read)
    plans = read(lazy.rollout.read) or {}
    records = read(lazy.decommissions.read) or {}
    if problems:
        raise lazy.errors.InvalidInputError(problems)

    def prepare_all(root: Path, stacks: Sequence[str]) -> list[preparation.Prepared]:
        return _prepare_all(root, stacks, jobs)

    if args.deploy:
        stacks = lazy.readiness.check(args.root, names, prepare_all)
    else:
        stacks = prepare_all(args.root, names)
    for item in stacks:  # the gateways and clusters the plan names are the stack's
        lazy.waves.plan(item.loaded, plans.get(item.loaded.name))
    declared = {i.loaded.name: [g.name for g in i.loaded.gateways] for i in stacks}
    if stale := lazy.decommissions.declared_problems(records, declared):
        raise lazy.errors.InvalidInputError(stale)
    notes = lazy.printing.Notes(args.quiet)  # once valid: a run that exits 2 prints its problems
    warn(notes, args.root, stacks)
    if lazy.printing.is_document(args):
        document = {
            "deploy": args.deploy,
            "notes": notes.shown,
            "stacks": [
                {
                    "stack": item.loaded.name,
                    "config": str(item.loaded.config_path),
                    "gateways": sorted(g.name for g in item.loaded.gateways),
                    "clusters": sorted(item.loaded.config.clusters),
                }
                for item in stacks
            ],
        }
        lazy.printing.print_document(document, args.format)
        return EXIT_OK
    for prepared in stacks:
        loaded = prepared.loaded
        console.print(
            f"{loaded.config_path}: ok ({_count(len(loaded.gateways), 'gateway')},"
            f" {_count(len(loaded.config.clusters), 'cluster')})",
            markup=False,
            soft_wrap=True,
        )
    return EXIT_OK


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"

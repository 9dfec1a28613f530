"""``gatewayctl rollout``: apply a stack wave after wave, each Healthy before the next
(``deploy/rollout.yaml``; :mod:`gatewayctl.resolve.waves`, :mod:`.status.progression`).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gatewayctl import lazy
from gatewayctl.cli import arguments
from gatewayctl.cli.exits import EXIT_DEGRADED, EXIT_OK

if TYPE_CHECKING:
    from rich.console import Console

    from gatewayctl.resolve.waves import Wave
    from gatewayctl.status.progression import Outcome

ROLLOUT_EPILOG = """\
exit codes: 0 every wave synced and Healthy (or --plan); 4 stopped: a gateway of the wave
Degraded, or not Healthy by the wave's healthDeadline (the later waves untouched; run it again
after the fix: it goes on where it stopped); 2 invalid input (deploy/rollout.yaml: every problem
as `path: field: problem`; an unknown STACK); 1 any other error (a pulumi command that failed,
with its exit code).

Each round runs `pulumi preview --json` and `pulumi stack export` in the project directory;
a wave whose gateways the preview changes gets `pulumi up --target` of exactly those resources,
then `pulumi refresh --target` of its gateways' resources until each is Healthy. Wave 0 holds
the stack's shared resources (clusters, providers); a stack the plan does not name has wave 0
and one wave of every gateway. Progress goes to stderr.

examples:
  gatewayctl rollout aws --plan                 # the waves, nothing run
  gatewayctl rollout aws                        # wave after wave, on the stack's pulumi login
  gatewayctl rollout aws --poll 30 -o json
  gatewayctl rollout aws --pulumi-stack acme/aws --policy-pack policy
"""


def add(commands: arguments.Commands) -> None:
    rol = commands.add_parser(
        "rollout",
        help="apply a stack wave after wave (deploy/rollout.yaml), each Healthy before the next",
        description="Run `pulumi up` on the stack one wave at a time: the stack's shared"
        " resources first, then each wave of gateways the plan chooses (by name, cluster or"
        " label; the canary first), each targeting only the resources its gateways change,"
        " then waiting until every gateway of the wave is synced and Healthy; stop on Degraded"
        " or at the wave's health deadline, leaving the later waves untouched.",
        epilog=ROLLOUT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    rol.add_argument("stack", help=arguments.STACK_HELP)
    rol.add_argument("--plan", action="store_true", help="print the waves; run nothing")
    rol.add_argument(
        "--poll",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="how long to wait between health checks of a wave (default 10)",
    )
    rol.add_argument(
        "--pulumi-stack",
        metavar="NAME",
        help="the stack as pulumi names it (org/stack on Pulumi Cloud; default STACK)",
    )
    rol.add_argument("--policy-pack", metavar="DIR", help="given to every pulumi up")
    rol.add_argument("--policy-pack-config", metavar="FILE", help="given to every pulumi up")
    lazy.printing.format_option(rol, ["text", "json", "yaml"], help="text (default), json or yaml")
    rol.set_defaults(func=cmd_rollout)


def _waves(waves: tuple[Wave, ...]) -> list[dict[str, Any]]:
    return [
        {
            "wave": w.number,
            "name": w.name,
            "gateways": list(w.gateways),
            "healthDeadline": int(w.deadline.total_seconds()),
        }
        for w in waves
    ]


def _document(outcome: Outcome) -> dict[str, Any]:
    return {
        "stack": outcome.stack,
        "completed": outcome.stopped is None,
        "summary": outcome.summary(),
        "waves": [
            {
                "wave": o.wave.number,
                "name": o.wave.name,
                "gateways": list(o.wave.gateways),
                "result": o.result,
                "updated": o.updated,
                "why": o.why or None,
            }
            for o in outcome.waves
        ],
    }


def cmd_rollout(args: argparse.Namespace, console: Console) -> int:
    if not 0 < args.poll <= 3600:
        raise lazy.errors.UsageError("--poll takes 1 to 3600 seconds")
    lazy.cli_driver.known_stacks(args.root, [args.stack])
    loaded = lazy.stack.load_stack(args.root, args.stack)
    planned = lazy.waves.plan(loaded, lazy.rollout.read(args.root).get(args.stack))
    if args.plan:
        if lazy.printing.is_document(args):
            lazy.printing.print_document(
                {"stack": args.stack, "waves": _waves(planned)}, args.format
            )
        else:
            for wave in planned:
                what = ", ".join(wave.gateways) or "the stack's shared resources"
                console.print(f"{wave.label()}: {what}", markup=False, soft_wrap=True)
        return EXIT_OK
    notes = lazy.rich_console.Console(stderr=True, highlight=False, emoji=False)

    def log(line: str) -> None:
        notes.print(f"{args.stack}: {line}", markup=False, soft_wrap=True)

    with tempfile.TemporaryDirectory(prefix="gatewayctl-rollout-") as work:
        policy = [
            ("--policy-pack", args.policy_pack),
            ("--policy-pack-config", args.policy_pack_config),
        ]
        engine = lazy.pulumicli.PulumiCli(
            stack=args.pulumi_stack or args.stack,
            cwd=args.root,
            workdir=Path(work) / "run",
            up_args=[arg for flag, value in policy if value for arg in (flag, value)],
        )
        outcome = lazy.progression.run(
            args.stack,
            planned,
            engine,
            [g.name for g in loaded.gateways],
            log=log,
            poll=args.poll,
        )
    if lazy.printing.is_document(args):
        lazy.printing.print_document(_document(outcome), args.format)
    else:
        console.print(outcome.summary(), markup=False, soft_wrap=True)
    return EXIT_OK if outcome.stopped is None else EXIT_DEGRADED

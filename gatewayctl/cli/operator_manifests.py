"""``gatewayctl operator-manifests``: the Pulumi Kubernetes Operator's Stack objects, one per
stack the operator owns (``gatewayctl.deploy.operator``), written to one directory.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from gatewayctl import lazy
from gatewayctl.cli import arguments
from gatewayctl.cli.exits import EXIT_OK
from gatewayctl.cli.prepared import _prepare_all

if TYPE_CHECKING:
    from rich.console import Console

OPERATOR_EPILOG = """\
exit codes: 0 ok; 2 invalid input (the settings file, the CLI version file, or a stack the
operator owns that is not valid or not ready to deploy as `validate --deploy` checks; every
problem listed as `path: field: problem`, nothing written); 1 any other error.

examples:
  gatewayctl operator-manifests    # → build/operator/stack-<stack>.yaml
  gatewayctl operator-manifests --out /tmp/operator
"""


def _operator_description() -> str:
    return (
        f"Write one pulumi.com/v1 Stack per stack the operator owns in"
        f" {lazy.operator_settings.SETTINGS} (git source, refresh, resync, Secret references, the"
        f" workspace image pinned to {lazy.operator_settings.PULUMI_VERSION_FILE}), so each stack"
        " runs in its own workspace pod, and the workspaces' ServiceAccount with its"
        " system:auth-delegator binding. Each owned stack must pass `validate --deploy` first."
        " The output directory is replaced whole."
    )


def add(commands: arguments.Commands) -> None:
    opm = commands.add_parser(
        "operator-manifests",
        help="Pulumi Kubernetes Operator Stack objects, one per stack the operator owns",
        describe=_operator_description,
        epilog=OPERATOR_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    arguments.output_argument(opm, "--out", metavar="DIR", help="default build/operator")
    opm.set_defaults(func=cmd_operator_manifests)


def cmd_operator_manifests(args: argparse.Namespace, console: Console) -> int:
    files = lazy.operator.operator_manifests(args.root, _prepare_all)
    out = args.out or args.root / "build" / "operator"
    arguments.check_directories(args.root, [out])
    lazy.write_guard.write_tree(out, files)
    for name in sorted(files):
        console.print(f"{out / name}", markup=False, soft_wrap=True)
    return EXIT_OK

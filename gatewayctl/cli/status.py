"""``gatewayctl status``: each gateway's sync, health, certificates and address, read from the
Pulumi CLI's JSON (``gatewayctl.status``), and the overall state as the exit code.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from gatewayctl import lazy
from gatewayctl.cli import arguments
from gatewayctl.cli.exits import EXIT_CHANGES, EXIT_DEGRADED, EXIT_OK, EXIT_RENEWAL

if TYPE_CHECKING:
    from rich.console import Console

STATUS_EPILOG = """\
exit codes: 0 synced and healthy, no certificate due; 3 out of sync (a resource differs from
the state, or its live object is missing: drift, or a change git has not deployed); 4 degraded
(a gateway Degraded or Progressing; before 3); 5 certificates inside their renewal window
(otherwise synced and healthy); 2 invalid input (a file that is empty, truncated, nested too
deeply or not one of the CLI's JSON documents, a file of another stack or project, a
certificate whose expiry cannot be read, every problem as `path: field: problem`; selfHeal on
a stack the operator owns; an unknown GATEWAY); 1 any other error. With a GATEWAY, the
codes are that gateway's alone.

Each FILE is told by its shape: `pulumi refresh --preview-only --json` (drift, and the live
state for health), `pulumi preview --json` (what git would change), `pulumi stack export`
(the state: certificates, health when no refresh is given, and the state's age). With
--live, the live objects of the gateway namespaces too, read by `kubectl get`: what another
field manager changed or added that no refresh shows (an extra container, env entry or volume,
a narrowed selector, privileged or host settings, a NodePort...), and objects nobody declared
(a RoleBinding, a ClusterRoleBinding to a namespace's accounts, a planted pod). The gateways
are those the files mention and those the stack declares (Missing when not in the state).
Property values are never shown, only their paths. The table goes to stdout, notes (counts,
the state's age, what differs) to stderr; colour only on a terminal, never with NO_COLOR.

examples:
  pulumi refresh --preview-only --json > refresh.json && pulumi stack export > state.json
  gatewayctl status ibm --from refresh.json --from state.json
  gatewayctl status ibm -o wide --from refresh.json state.json
  gatewayctl status ibm team-a --from refresh.json state.json   # its resource tree
  gatewayctl status ibm --from refresh.json state.json --format markdown
  gatewayctl status ibm --live --from refresh.json state.json   # and what kubectl reads
  gatewayctl status ibm --live --heal --from refresh.json state.json && pulumi up --refresh
  gatewayctl status ibm --from refresh.json state.json -o json --record records/ibm.jsonl
"""


def add(commands: arguments.Commands) -> None:
    sta = commands.add_parser(
        "status",
        help="per-gateway sync, health, certificates and address from the Pulumi CLI's JSON",
        description="Read what the Pulumi CLI writes (refresh/preview --json, stack export)"
        " and print, per gateway, like Argo CD: sync (Synced, OutOfSync with each changed"
        " resource and the property paths that differ, Missing), health (Healthy,"
        " Progressing, Degraded, Missing) from the live state, days until the earliest"
        " certificate expires (flagged inside its renewal window), and the address.",
        epilog=STATUS_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sta.add_argument("stack", help=arguments.STACK_HELP)
    sta.add_argument(
        "gateway",
        nargs="?",
        help="one gateway: its resources as a tree (kind, name, sync, health, message), and"
        " the exit code is its own (name it before --from, which takes every name after it)",
    )
    sta.add_argument(
        "--from",
        dest="sources",
        action="append",
        nargs="+",
        type=Path,
        required=True,
        metavar="FILE",
        help="a JSON file the CLI wrote; repeat, or give several",
    )
    lazy.printing.format_option(
        sta,
        ["table", "wide", "json", "yaml", "markdown"],
        help="table (default: one row per gateway), wide (also address, console and release),"
        " json or yaml (the whole status), markdown (the stack's report, for an issue)",
    )
    arguments.quiet_argument(sta)
    sta.add_argument(
        "--live",
        action="store_true",
        help="also read the gateway namespaces' live objects with kubectl (get only: nothing"
        " is written): every field another manager changed or added, and the objects nobody"
        " declared (each cluster's kubeconfigContext, else the current context)",
    )
    sta.add_argument(
        "--kubeconfig",
        action="append",
        default=[],
        metavar="[CLUSTER=]FILE",
        help="with --live: the kubeconfig kubectl reads (default: KUBECONFIG, ~/.kube/config);"
        " CLUSTER=FILE for one cluster of the stack (repeat): then a cluster given none is"
        " not read, and the report says so",
    )
    sta.add_argument(
        "--heal",
        action="store_true",
        help="with --live, when the remedy is heal (the stack's selfHeal on, nothing from git"
        " pending): remove what other field managers added to the program's objects, delete"
        " a Secret or ConfigMap changed where no refresh sees it and, with selfHealUnmanaged,"
        " the objects nobody declared (kubectl, each against the object as read); then run"
        " `pulumi up --refresh`. Prints what it did; what it leaves, the report names with"
        " the command",
    )
    sta.add_argument(
        "--record",
        type=Path,
        metavar="FILE",
        help="also append one JSON line to FILE (created when missing): the time (--now),"
        " the stack, the overall state and each gateway's name, release, sync and health;"
        " what promote's soak reads (docs/rollouts.md). Not with a GATEWAY",
    )
    sta.add_argument(
        "--now",
        type=utc,
        metavar="TIME",
        help="ISO 8601 time to count certificate days from (default: now)",
    )
    sta.set_defaults(func=cmd_status)


def cmd_status(args: argparse.Namespace, console: Console) -> int:
    return {
        "degraded": EXIT_DEGRADED,
        "out-of-sync": EXIT_CHANGES,
        "renewal-due": EXIT_RENEWAL,
        "synced": EXIT_OK,
    }[lazy.status_command.run(args, console)]


def utc(value: str) -> datetime:
    """An ISO 8601 time as an aware UTC time (naive: UTC), for ``--now`` and ``--at``."""
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        return parsed.astimezone(UTC) if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
    except (ValueError, OverflowError):
        raise argparse.ArgumentTypeError(
            f"{value!r} is not an ISO 8601 time of the years 1 to 9999 in UTC"
        ) from None

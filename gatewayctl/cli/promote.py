"""``gatewayctl promote``: bind a release to a stack's clusters, or one cluster, editing only
that value of its Pulumi.<stack>.yaml (``gatewayctl.deploy.promote``), and report who rolls.
"""

from __future__ import annotations

import argparse
import dataclasses
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from gatewayctl import lazy
from gatewayctl.cli.exits import EXIT_CLOSED, EXIT_OK
from gatewayctl.cli.status import utc
from gatewayctl.errors import UsageError, printable

if TYPE_CHECKING:
    from rich.console import Console

    from gatewayctl.cli import arguments
    from gatewayctl.deploy.promote import Promotion
    from gatewayctl.deploy.soak import Gate

OVERRIDE_LONGEST = 200

PROMOTE_EPILOG = """\
exit codes: 0 ok (also when the target already runs the release: nothing is written); 6 not
allowed yet: the soak deploy/rollout.yaml asks before the stack is not met (the release has not
been Healthy long enough in the previous environment, by its recorded status): nothing is
written, and it says until when; 2 invalid input (an unknown release, stack or cluster, or a
stack that would not validate with the new binding, a bad line in a record file, an empty
--override-soak: every problem listed as `path: field: problem`, nothing written); 1 any other
error.

The soak (docs/rollouts.md, "Soak between environments"): promotion.order lists the
environments, earliest first; before a stack of entry i > 0, every deployed stack of entry
i - 1 must have records (`status --record`, on the branch hypershell-records, or --records
DIR) showing the release Synced and Healthy on every gateway that runs it for promotion.soak.
--override-soak REASON lets it through and writes the reason as a comment above the binding.

examples:
  gatewayctl promote openshell-0.0.110 --to local
  gatewayctl promote openshell-0.0.110 --to aws/rosa-us-east-1
  gatewayctl promote openshell-0.0.110 --to aws --dry-run
  gatewayctl promote openshell-0.0.110 --to ibm --records build/records   # exit 6: until when
  gatewayctl promote openshell-0.0.110 --to ibm --override-soak "INC-4521: CVE fix"
"""


def add(commands: arguments.Commands) -> None:
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
    pro.add_argument(
        "--records",
        type=Path,
        metavar="DIR",
        help="the soak's recorded status: DIR/<stack>.jsonl (default: records/<stack>.jsonl"
        " of origin/hypershell-records in the git repository)",
    )
    pro.add_argument(
        "--override-soak",
        metavar="REASON",
        help="promote although the soak is not met: the reason (one line) goes into a comment"
        " above the binding, and so into the commit",
    )
    pro.add_argument(
        "--now", type=utc, metavar="TIME", help="ISO 8601 time of the override (default: now)"
    )
    lazy.printing.format_option(
        pro,
        ["text", "json", "yaml"],
        help="text (default), json or yaml (each binding moved and each gateway's images)",
    )
    pro.set_defaults(func=cmd_promote)


def _reason(reason: str | None) -> str | None:
    if reason is not None and (
        not reason.strip() or printable(reason) != reason or len(reason) > OVERRIDE_LONGEST
    ):
        raise UsageError(
            f"--override-soak needs a reason of 1 to {OVERRIDE_LONGEST} printable characters"
            " on one line"
        )
    return reason


def cmd_promote(args: argparse.Namespace, console: Console) -> int:
    reason = _reason(args.override_soak)
    steps = lazy.promotion.read(args.root)  # deploy/rollout.yaml's promotion: problems exit 2
    promotion = lazy.promote.promote(args.root, args.release, args.to)
    gate = lazy.soak.NO_SOAK
    if promotion.changed:
        gate = lazy.soak.gate(args.root, steps, promotion.stack, args.release, args.records)
    lines = lazy.soak.refusal(gate) if gate.required else []
    if not gate.met:
        if reason is None:
            return _refused(args, promotion, gate, lines, console)
        gate = dataclasses.replace(gate, override=reason)
        note = lazy.soak.comment(gate, reason, args.now or datetime.now(UTC))
        promotion = lazy.promote.promote(args.root, args.release, args.to, note)
        lines.append(f"soak not met; overridden, in {promotion.path}: {note}")
    elif gate.required:
        lines.append("soak met")
    if not args.dry_run:
        lazy.promote.write(args.root, promotion)
    if lazy.printing.is_document(args):
        document = lazy.promote.document(promotion, dry_run=args.dry_run)
        lazy.printing.print_document({**document, "soak": lazy.soak.document(gate)}, args.format)
        return EXIT_OK
    for line in [*lines, *lazy.promote.report(promotion)]:
        console.print(line, markup=False, soft_wrap=True)
    if args.dry_run and promotion.changed:
        console.print(f"dry run: {promotion.path} not written", markup=False, soft_wrap=True)
    return EXIT_OK


def _refused(
    args: argparse.Namespace,
    promotion: Promotion,
    gate: Gate,
    lines: list[str],
    console: Console,
) -> int:
    """The soak is not met and not overridden: nothing is written (exit 6)."""

    if lazy.printing.is_document(args):
        document = {**lazy.promote.document(promotion, dry_run=args.dry_run), "written": False}
        lazy.printing.print_document({**document, "soak": lazy.soak.document(gate)}, args.format)
        return EXIT_CLOSED
    lines.append(
        f"refused: the soak is not met; {promotion.path} not written (a reason with"
        " --override-soak REASON lets it through)"
    )
    for line in lines:
        console.print(line, markup=False, soft_wrap=True)
    return EXIT_CLOSED

"""``gatewayctl rollback``: the git change that returns gateways to their declaration and
release as of a commit, as a new branch or a patch (``gatewayctl.deploy.rollback``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gatewayctl import lazy
from gatewayctl.cli.exits import EXIT_OK

if TYPE_CHECKING:
    from rich.console import Console

    from gatewayctl.cli import arguments
    from gatewayctl.deploy.rollback import Rollback

PATCH_MARK = "gatewayctl rollback"
"""In the commit message, so in the patch: a file this command wrote (it may overwrite it)."""

ROLLBACK_EPILOG = """\
exit codes: 0 ok (the branch or patch written; or nothing to roll back: already as at COMMIT,
nothing written; or, without --branch and --patch, the change reported and nothing written);
2 refused or invalid input, nothing written: a gateway that cannot be rolled back, each named
with why (its database dropped since: removed with deletionPolicy Delete; absent now; absent
at COMMIT; its namespace, cluster or database name changed since; its credential store
changed since, such as back to kek after the KEK Secret was deleted; the release it ran no
longer in releases/), a stack that would not validate, an unknown STACK, gateway, wave or
COMMIT, a branch that exists; 1 any other error (git failed).

What changes: each chosen gateway's declaration gets its content at COMMIT; when COMMIT's
release differs from today's and that declaration did not pin one, the restored file pins it
(spec.release); a whole stack whose cluster binding moved since gets the binding moved back
instead. spec.rotation keeps today's counters: a rotation cannot be rolled back (a lower
counter rotates again). HEAD is the base (not uncommitted changes); the checkout, its index
and its branch are never touched: the commit is made with a temporary index. Review it as any
change: open a pull request from the branch (its offline diff shows each gateway's release
A -> release B), or apply the patch with `git am`.

COMMIT: a program commit from `gatewayctl history STACK`, or any git ref.

examples:
  gatewayctl history aws                                  # find the commit
  gatewayctl rollback aws --to 1a2b3c4d --gateway audit   # report only
  gatewayctl rollback aws --to 1a2b3c4d --gateway audit --branch rollback-audit
  gatewayctl rollback aws --to 1a2b3c4d --wave 1 --patch rollback.patch
  gatewayctl rollback aws --to main~3 --branch rollback-aws -o json   # the whole stack
"""


def add(commands: arguments.Commands) -> None:
    rol = commands.add_parser(
        "rollback",
        help="the git change returning gateways (or a wave, or a stack) to a commit's"
        " declaration and release, as a branch or patch",
        description="Make the change that returns the chosen gateways of STACK to their"
        " declaration and release as of COMMIT, as one commit on a new branch (--branch) or a"
        " patch file (--patch), for a pull request; refuse, naming each gateway and why, what"
        " cannot be rolled back (a dropped database, a deleted KEK).",
        epilog=ROLLBACK_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    rol.add_argument("stack", help="the stack (Pulumi.<stack>.yaml)")
    rol.add_argument("--to", required=True, metavar="COMMIT", help="the commit to return to")
    which = rol.add_mutually_exclusive_group()
    which.add_argument(
        "--gateway",
        action="append",
        default=[],
        metavar="NAME",
        help="a gateway to roll back (repeat for more; default: the whole stack)",
    )
    which.add_argument(
        "--wave", type=int, metavar="N", help="the gateways of wave N (deploy/rollout.yaml)"
    )
    out = rol.add_mutually_exclusive_group()
    out.add_argument("--branch", metavar="NAME", help="write the commit as this new branch")
    out.add_argument("--patch", type=Path, metavar="FILE", help="write the commit as a patch")
    lazy.printing.format_option(rol, ["text", "json", "yaml"], help="text (default), json or yaml")
    rol.set_defaults(func=cmd_rollback)


def _document(rollback: Rollback, written: dict[str, Any]) -> dict[str, Any]:
    return {
        "stack": rollback.stack,
        "to": rollback.commit,
        "head": rollback.head,
        "changed": rollback.changed,
        "files": sorted(rollback.files),
        "bindings": [
            {"cluster": c, "before": before, "after": after}
            for c, before, after in rollback.bindings
        ],
        "gateways": [
            {
                "name": g.name,
                "path": g.path,
                "before": g.release_before,
                "after": g.release_after,
                "pinned": g.pinned,
                "images": list(g.images),
                "rotationKept": g.rotation_kept,
                "restored": g.restored,
            }
            for g in rollback.gateways
        ],
        "notes": list(rollback.notes),
        **written,
    }


def cmd_rollback(args: argparse.Namespace, console: Console) -> int:
    lazy.cli_driver.known_stacks(args.root, [args.stack])
    repo = lazy.gitrepo.Repository(args.root)
    if args.branch is not None:
        repo.check_branch_name(args.branch)
    if args.patch is not None:
        lazy.cli_arguments.check_file(
            args.patch,
            args.root,
            ours=lambda text: PATCH_MARK in text,
            kind="a patch",
            flag="--patch",
        )
    made = lazy.rollback.plan(args.root, args.stack, args.to, args.gateway, args.wave)
    written: dict[str, Any] = {"branch": None, "patch": None, "commit": None}
    lines = lazy.rollback.report(made)
    if made.changed and (args.branch or args.patch):
        commit = repo.make_commit(made.head, made.files, made.message())
        written["commit"] = commit
        if args.branch:
            repo.create_branch(args.branch, commit)
            written["branch"] = args.branch
            lines.append(
                f"branch {args.branch}: commit {commit[:12]}; review it in a pull request"
                f" (gatewayctl diff {args.stack} --base <its base> on the branch)"
            )
        else:
            lazy.write_guard.write_file(args.patch, repo.patch(commit))
            written["patch"] = str(args.patch)
            lines.append(f"patch {args.patch}: apply it with `git am {args.patch}`")
    elif made.changed:
        lines.append("nothing written: give --branch NAME or --patch FILE")
    if lazy.printing.is_document(args):
        lazy.printing.print_document(_document(made, written), args.format)
    else:
        for line in lines:
            console.print(line, markup=False, soft_wrap=True, highlight=False)
    return EXIT_OK

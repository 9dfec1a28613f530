"""The repository the diff reads: ``git`` run the diff's one way, the ``--base`` ref resolved to
a commit, that commit checked out into a temporary ``git worktree`` (removed afterwards, also
when the process is interrupted: see ``gatewayctl.interrupts``), and whether the two sides pin
other dependencies; the errors of each."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

from gatewayctl import interrupts
from gatewayctl.errors import ToolError, UsageError


class DiffError(ToolError):
    """git or the base render failed: exit 1, with a message that holds no secret."""


class BaseRefError(UsageError):
    """The ``--base`` ref does not name a commit here: invalid input, exit 2."""


def git(root: Path, *args: str, strip: bool = True) -> str:
    """``git -C root args`` in the diff's one way (timeout, interrupts, DiffError); its output
    stripped unless ``strip`` is false (``git status --porcelain`` starts with a space)."""
    try:
        done = interrupts.run(["git", "-C", str(root), *args], timeout=120)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise DiffError(f"git {args[0]}: {error}") from None
    if done.returncode != 0:
        message = done.stderr.strip().splitlines()
        raise DiffError(f"git {args[0]} failed: {message[-1] if message else done.returncode}")
    return done.stdout.strip() if strip else done.stdout


def resolve_base(root: Path, ref: str) -> str:
    """The full commit id of ``ref``; BaseRefError if it names no commit in ``root``'s repo."""
    git(root, "rev-parse", "--show-toplevel")  # not a repository: DiffError (exit 1)
    if ref.startswith("-"):
        raise BaseRefError(f"--base: {ref!r} is not a git ref")
    try:
        return git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except DiffError:
        raise BaseRefError(
            f"--base: {ref!r} names no commit in this repository"
            " (in CI, fetch the base branch: actions/checkout with fetch-depth: 0)"
        ) from None


@contextlib.contextmanager
def base_checkout(root: Path, commit: str) -> Iterator[Path]:
    """The project root as of ``commit``, in a temporary worktree removed afterwards, also
    when the process is interrupted (see ``gatewayctl.interrupts``)."""
    prefix = git(root, "rev-parse", "--show-prefix")  # the project inside its repository
    common = root / git(root, "rev-parse", "--git-common-dir")  # absolute stays absolute
    with interrupts.temporary_directory("stacks-diff-") as scratch:
        # Named after the temporary directory: git names its administrative directory
        # (.git/worktrees/<name>) after it, so that one is known to be ours.
        tree = Path(scratch) / Path(scratch).name

        def remove() -> None:
            # Twice forced: also a worktree still locked by an interrupted `worktree add`;
            # one whose directory is already gone is unregistered all the same. What an
            # interrupted `worktree add` left half made is not a worktree to git: removed here.
            with contextlib.suppress(DiffError):
                git(root, "worktree", "remove", "--force", "--force", str(tree))
            admin = common / "worktrees" / tree.name
            shutil.rmtree(admin, ignore_errors=True)
            with contextlib.suppress(OSError):
                admin.parent.rmdir()  # if empty, as git leaves it

        with interrupts.on_interrupt(remove):
            try:
                git(root, "worktree", "add", "--detach", "--quiet", str(tree), commit)
                yield tree / prefix
            finally:
                remove()


def lock_differs(base_root: Path, head_root: Path, lock_file: str) -> bool:
    """Whether the two roots pin other dependencies (``lock_file`` differs, or one lacks it)."""

    def pins(root: Path) -> bytes | None:
        path = root / lock_file
        return path.read_bytes() if path.is_file() else None

    return pins(base_root) != pins(head_root)

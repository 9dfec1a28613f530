"""The two sides of the diff: the base ref in a temporary ``git worktree`` rendered by its own
program in a subprocess, and this working tree rendered in process.

A side is the rendered files of one stack, with the secrets of its stack file
(``Pulumi.<stack>.yaml``, read with the strict YAML reader through :mod:`gatewayctl.secrets`):
the plaintext ``clusterSecrets`` values to scrub, and a fingerprint of every secret value to
tell that one changed. A ref without the stack, or without an offline render at all, is an
empty side with a note saying why.

An interrupt (SIGINT, SIGTERM) stops the base render and the git commands first, then removes
the worktree and the temporary directories (see ``gatewayctl.interrupts``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gatewayctl import interrupts, outputs, render
from gatewayctl.errors import ToolError, UsageError
from gatewayctl.inventory import all_stacks
from gatewayctl.secrets import SecretPath, is_secure, plaintext_leaves, scrub, secure_leaves
from gatewayctl.stackfile import PROJECT, stack_file
from gatewayctl.yamlfile import SECRETS_KEY

RENDER_TIMEOUT = 900
"""Seconds the base render may take."""


class DiffError(ToolError):
    """git or the base render failed: exit 1, with a message that holds no secret."""


class BaseRefError(UsageError):
    """The ``--base`` ref does not name a commit here: invalid input, exit 2."""


@dataclass(frozen=True, kw_only=True)
class Side:
    """One side's rendered files (relative path → text); empty with ``note`` saying why.

    ``secrets`` are the plaintext ``clusterSecrets`` values to scrub from the report;
    ``secret_digests`` fingerprint each plaintext ``clusterSecrets`` value and each ``secure:``
    value of the stack's config by its path in the config, so a changed value (or ciphertext)
    is noticed though the render redacts it (see ``compare.secrets_changed``).
    """

    files: Mapping[str, str]
    note: str | None = None
    secrets: frozenset[str] = frozenset()
    secret_digests: Mapping[SecretPath, str] = field(default_factory=dict)


# --- git ------------------------------------------------------------------------------------


def _git(root: Path, *args: str) -> str:
    try:
        done = interrupts.run(["git", "-C", str(root), *args], timeout=120)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise DiffError(f"git {args[0]}: {error}") from None
    if done.returncode != 0:
        message = done.stderr.strip().splitlines()
        raise DiffError(f"git {args[0]} failed: {message[-1] if message else done.returncode}")
    return done.stdout.strip()


def resolve_base(root: Path, ref: str) -> str:
    """The full commit id of ``ref``; BaseRefError if it names no commit in ``root``'s repo."""
    _git(root, "rev-parse", "--show-toplevel")  # not a repository: DiffError (exit 1)
    if ref.startswith("-"):
        raise BaseRefError(f"--base: {ref!r} is not a git ref")
    try:
        return _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except DiffError:
        raise BaseRefError(
            f"--base: {ref!r} names no commit in this repository"
            " (in CI, fetch the base branch: actions/checkout with fetch-depth: 0)"
        ) from None


@contextlib.contextmanager
def base_checkout(root: Path, commit: str) -> Iterator[Path]:
    """The project root as of ``commit``, in a temporary worktree removed afterwards, also
    when the process is interrupted (see ``gatewayctl.interrupts``)."""
    prefix = _git(root, "rev-parse", "--show-prefix")  # the project inside its repository
    common = root / _git(root, "rev-parse", "--git-common-dir")  # absolute stays absolute
    with interrupts.temporary_directory("stacks-diff-") as scratch:
        # Named after the temporary directory: git names its administrative directory
        # (.git/worktrees/<name>) after it, so that one is known to be ours.
        tree = Path(scratch) / Path(scratch).name

        def remove() -> None:
            # Twice forced: also a worktree still locked by an interrupted `worktree add`;
            # one whose directory is already gone is unregistered all the same. What an
            # interrupted `worktree add` left half made is not a worktree to git: removed here.
            with contextlib.suppress(DiffError):
                _git(root, "worktree", "remove", "--force", "--force", str(tree))
            admin = common / "worktrees" / tree.name
            shutil.rmtree(admin, ignore_errors=True)
            with contextlib.suppress(OSError):
                admin.parent.rmdir()  # if empty, as git leaves it

        with interrupts.on_interrupt(remove):
            try:
                _git(root, "worktree", "add", "--detach", "--quiet", str(tree), commit)
                yield tree / prefix
            finally:
                remove()


def lock_differs(base_root: Path, head_root: Path, lock_file: str) -> bool:
    """Whether the two roots pin other dependencies (``lock_file`` differs, or one lacks it)."""

    def pins(root: Path) -> bytes | None:
        path = root / lock_file
        return path.read_bytes() if path.is_file() else None

    return pins(base_root) != pins(head_root)


# --- secrets of a side ----------------------------------------------------------------------


def read_tree(directory: Path) -> dict[str, str]:
    """Relative POSIX path → text of every file under ``directory`` (the marker aside)."""
    return {
        p.relative_to(directory).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(directory.rglob("*"))
        if p.is_file() and p.relative_to(directory).as_posix() != outputs.MARKER
    }


def _plaintext(leaves: Sequence[tuple[SecretPath, Any]]) -> frozenset[str]:
    """The plaintext values worth scrubbing: not null, not a boolean, not blank."""
    return frozenset(
        str(value)
        for _, value in leaves
        if value is not None and not isinstance(value, bool) and str(value).strip()
    )


def stack_secrets(project: Path, stack: str) -> frozenset[str]:
    """Plaintext values under ``clusterSecrets`` of ``Pulumi.<stack>.yaml`` (best effort: an
    unreadable file or no secrets gives none).

    Only used to scrub them from the report; never printed.
    """
    return _plaintext(plaintext_leaves(project, stack))


def _digest(value: Any) -> str:
    return hashlib.sha256(repr(value).encode("utf-8", "surrogatepass")).hexdigest()


def _digests(
    plaintext: Sequence[tuple[SecretPath, Any]], secure: Sequence[tuple[SecretPath, Any]]
) -> dict[SecretPath, str]:
    """Config path → SHA-256 of every plaintext ``clusterSecrets`` value and of every
    ``secure:`` value (its ciphertext) anywhere in the stack's config.

    Only compared between the two sides, never printed: enough to tell that a value changed.
    A new ciphertext may hold the same value (Pulumi encrypts with a fresh nonce each time);
    offline there is no telling, so it counts as a change.
    """
    secrets_key = f"{PROJECT}:{SECRETS_KEY}"
    digests = {(secrets_key, *path): _digest(value) for path, value in plaintext}
    digests |= {
        path: _digest(("secure", value["secure"])) for path, value in secure if is_secure(value)
    }
    return digests


def stack_side(
    project: Path, stack: str, files: Mapping[str, str], note: str | None = None
) -> Side:
    """A side of ``stack`` with the secrets of its ``Pulumi.<stack>.yaml`` in ``project``."""
    plaintext = plaintext_leaves(project, stack)
    return Side(
        files=files,
        note=note,
        secrets=_plaintext(plaintext),
        secret_digests=_digests(plaintext, secure_leaves(project, stack)),
    )


# --- rendering ------------------------------------------------------------------------------


PACKAGES = ("gatewayctl", "stacks")
"""The tool's package at a base ref, newest name first: before the data/code split the package
was ``stacks`` (with the declarations inside it), and a pull request's base may predate it."""


def _base_package(project: Path) -> str | None:
    return next((p for p in PACKAGES if (project / p / "__main__.py").is_file()), None)


def _render_process(
    project: Path, package: str, target: Sequence[str], out: Path
) -> tuple[int, str]:
    """``python -m PACKAGE render TARGET --out OUT -q`` in ``project``, with this interpreter."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSAFEPATH"}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    try:
        done = interrupts.run(
            [sys.executable, "-m", package, "render", *target, "--out", str(out), "-q"],
            cwd=project,
            env=env,
            timeout=RENDER_TIMEOUT,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise DiffError(f"base render of {' '.join(target)}: {type(error).__name__}") from None
    return done.returncode, done.stderr


def render_base(project: Path, stacks: Sequence[str]) -> dict[str, Side]:
    """Render ``stacks`` with the base checkout's own program, in a subprocess.

    Several stacks that all exist at the base are rendered by one ``render --all`` (one
    interpreter start); if that reports invalid input, each stack is rendered on its own so
    only the invalid ones become empty sides.
    """
    package = _base_package(project)
    if package is None:
        note = "has no offline render (`python -m gatewayctl`)"
        return {s: stack_side(project, s, {}, note) for s in stacks}
    sides = {
        s: stack_side(project, s, {}, f"has no stack `{s}`")
        for s in stacks
        if not (project / stack_file(s)).is_file()
    }
    present = [s for s in stacks if s not in sides]
    with interrupts.temporary_directory("stacks-diff-render-") as scratch:
        out = Path(scratch)
        if len(present) > 1 and set(present) == set(all_stacks(project)):
            code, _ = _render_process(project, package, ["--all"], out / "all")
            if code == 0:
                for stack in present:
                    sides[stack] = stack_side(project, stack, read_tree(out / "all" / stack))
                return sides
        for stack in present:
            code, stderr = _render_process(project, package, [stack], out / stack)
            if code == 2:
                note = f"has invalid input for stack `{stack}` (its render exits 2)"
                sides[stack] = stack_side(project, stack, {}, note)
            elif code != 0:
                lines = scrub(stderr, stack_secrets(project, stack)).strip().splitlines()
                last = f": {lines[-1]}" if lines else ""
                raise DiffError(f"base render of {stack} exited {code}{last}")
            else:
                sides[stack] = stack_side(project, stack, read_tree(out / stack))
    return sides


def render_head(prepared: render.Prepared) -> Side:
    """Render a validated working-tree stack in process."""
    stack = prepared.loaded.name
    return stack_side(prepared.root, stack, render.execute(prepared).files)


def missing_head(stack: str) -> Side:
    """The working-tree side of a stack that exists only at the base."""
    return Side(files={}, note=f"has no stack `{stack}`")

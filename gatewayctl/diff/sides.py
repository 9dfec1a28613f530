"""The two sides of the diff: the base ref in a temporary ``git worktree`` rendered by its own
program in a subprocess, and this working tree rendered in process. The worktree and the other
git commands are :mod:`gatewayctl.diff.repository`'s.

A side is the rendered files of one stack, with the secrets of its stack file
(``Pulumi.<stack>.yaml``, read with the strict YAML reader through
:mod:`gatewayctl.inputs.secrets`): the plaintext ``clusterSecrets`` values to scrub, and a
fingerprint of every secret value to tell that one changed. A ref without the stack, or without an
offline render at all, is an empty side with a note saying why.

An interrupt (SIGINT, SIGTERM) stops the base render and the git commands first, then removes
the worktree and the temporary directories (see ``gatewayctl.interrupts``).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gatewayctl import interrupts, lazy
from gatewayctl.diff.cache import INVALID, RENDERED, Cache, Entry
from gatewayctl.diff.cache import key as entry_key
from gatewayctl.diff.repository import DiffError, git
from gatewayctl.engine import write_guard
from gatewayctl.engine.redaction import scrub
from gatewayctl.inputs.secrets import SecretPath, is_secure, plaintext_leaves, secure_leaves
from gatewayctl.inputs.stackfile import PROJECT, all_stacks, stack_file
from gatewayctl.inputs.yamlfile import SECRETS_KEY

if TYPE_CHECKING:
    from gatewayctl.engine import parallel
    from gatewayctl.resolve import preparation

RENDER_TIMEOUT = 900
"""Seconds the base render may take."""


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


# --- secrets of a side ----------------------------------------------------------------------


def read_tree(directory: Path) -> dict[str, str]:
    """Relative POSIX path → text of every file under ``directory`` (the marker aside)."""
    return {
        p.relative_to(directory).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(directory.rglob("*"))
        if p.is_file() and p.relative_to(directory).as_posix() != write_guard.MARKER
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


def _command(package: str, target: Sequence[str], out: Path) -> list[str]:
    """``python -m PACKAGE render TARGET --out OUT -q``, with this interpreter."""
    return [sys.executable, "-m", package, "render", *target, "--out", str(out), "-q"]


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSAFEPATH"}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _start_render(
    project: Path, package: str, target: Sequence[str], out: Path
) -> contextlib.AbstractContextManager[interrupts.Child]:
    """The base render of ``target`` in ``project``, started (see :func:`_command`)."""
    try:
        return interrupts.started(_command(package, target, out), cwd=project, env=_environment())
    except OSError as error:
        raise DiffError(f"base render of {' '.join(target)}: {type(error).__name__}") from None


def _finish(child: interrupts.Child, target: Sequence[str]) -> tuple[int, str]:
    try:
        done = child.finish(RENDER_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise DiffError(f"base render of {' '.join(target)}: {type(error).__name__}") from None
    return done.returncode, done.stderr


def _render_process(
    project: Path, package: str, target: Sequence[str], out: Path
) -> tuple[int, str]:
    """The base render of ``target``, waited for."""
    with _start_render(project, package, target, out) as child:
        return _finish(child, target)


@dataclass(frozen=True)
class CacheKey:
    """What keys the base render besides the stack (``gatewayctl.diff.cache.key``)."""

    tree: str
    prefix: str
    lock: bytes | None


def cache_key(root: Path, commit: str, lock_file: str) -> CacheKey:
    """The base commit's tree, where the project is in the repository, this tree's lock."""
    lock = root / lock_file
    return CacheKey(
        tree=git(root, "rev-parse", "--verify", f"{commit}^{{tree}}"),
        prefix=git(root, "rev-parse", "--show-prefix"),
        lock=lock.read_bytes() if lock.is_file() else None,
    )


Store = Callable[[str, str, Mapping[str, str]], Mapping[str, str]]
"""Keeps a stack's base render (its outcome and files); returns the files as kept."""


def _no_store(stack: str, outcome: str, files: Mapping[str, str]) -> Mapping[str, str]:
    return files


def _invalid_note(stack: str) -> str:
    return f"has invalid input for stack `{stack}` (its render exits 2)"


class PendingBase:
    """The base side while it renders: :meth:`result` waits for it."""

    def __init__(
        self,
        project: Path,
        package: str,
        sides: dict[str, Side],
        todo: Sequence[str],
        scratch: Path,
        store: Store,
    ) -> None:
        self.project = project
        self.package = package
        self.sides = sides
        self.todo = list(todo)
        self.scratch = scratch
        self.store = store
        self.started: tuple[list[str], interrupts.Child] | None = None

    def cached(self) -> dict[str, Mapping[str, str]]:
        """The files of each stack whose base render came from the cache (before ``result``:
        nothing rendered yet)."""
        return {
            stack: side.files
            for stack, side in self.sides.items()
            if stack not in self.todo and side.note is None
        }

    def result(self) -> dict[str, Side]:
        """Every stack's base side (DiffError if the base render fails)."""
        if self.started is not None:
            target, child = self.started
            self.started = None
            code, stderr = _finish(child, target)
            if target != ["--all"]:
                self._outcome(target[0], code, stderr, self.scratch / target[0])
            elif code == 0:
                for stack in self.todo:
                    self._outcome(stack, code, stderr, self.scratch / "all" / stack)
            # else: invalid input somewhere; each stack on its own below
        for stack in self.todo:
            if stack not in self.sides:
                out = self.scratch / stack
                code, stderr = _render_process(self.project, self.package, [stack], out)
                self._outcome(stack, code, stderr, out)
        return self.sides

    def _outcome(self, stack: str, code: int, stderr: str, out: Path) -> None:
        project = self.project
        if code == 2:
            self.store(stack, INVALID, {})
            self.sides[stack] = stack_side(project, stack, {}, _invalid_note(stack))
        elif code != 0:
            lines = scrub(stderr, stack_secrets(project, stack)).strip().splitlines()
            last = f": {lines[-1]}" if lines else ""
            raise DiffError(f"base render of {stack} exited {code}{last}")
        else:
            files = self.store(stack, RENDERED, read_tree(out))
            self.sides[stack] = stack_side(project, stack, files)


def _cached(
    project: Path, key: CacheKey, root: Path
) -> tuple[Callable[[str], Entry | None], Store]:
    """Look-up and store of the base renders in ``root``'s cache; what is stored is scrubbed
    of every plaintext ``clusterSecrets`` value of every stack at the base."""
    entries = Cache(root)

    def name(stack: str) -> str:
        return entry_key(tree=key.tree, prefix=key.prefix, stack=stack, lock=key.lock)

    def lookup(stack: str) -> Entry | None:
        return entries.get(name(stack))

    @functools.cache
    def secrets() -> frozenset[str]:
        stacks = {*all_stacks(project)}
        return frozenset[str]().union(*(stack_secrets(project, s) for s in sorted(stacks)))

    def store(stack: str, outcome: str, files: Mapping[str, str]) -> Mapping[str, str]:
        entry = Entry(outcome, dict(files))
        return entries.put(name(stack), entry, secrets() | stack_secrets(project, stack))

    return lookup, store


@contextlib.contextmanager
def rendering_base(
    project: Path, stacks: Sequence[str], key: CacheKey | None = None, root: Path | None = None
) -> Iterator[PendingBase]:
    """Render ``stacks`` with the base checkout ``project``'s own program, in a subprocess
    that runs while the block does; :meth:`PendingBase.result` waits for it.

    With ``key``, each stack's render is first looked up in the cache of the working tree
    ``root`` (``gatewayctl.diff.cache``), and stored there once rendered. Several stacks that
    all exist at the base and are not cached are rendered by one ``render --all`` (one
    interpreter start); if that reports invalid input, each stack is rendered on its own so
    only the invalid ones become empty sides.
    """
    package = _base_package(project)
    if package is None:
        note = "has no offline render (`python -m gatewayctl`)"
        sides = {s: stack_side(project, s, {}, note) for s in stacks}
        yield PendingBase(project, "", sides, [], project, _no_store)
        return
    sides = {
        s: stack_side(project, s, {}, f"has no stack `{s}`")
        for s in stacks
        if not (project / stack_file(s)).is_file()
    }
    store: Store = _no_store
    if key is not None and root is not None:
        lookup, store = _cached(project, key, root)
        for stack in stacks:
            if stack not in sides and (entry := lookup(stack)) is not None:
                invalid = entry.outcome == INVALID
                sides[stack] = stack_side(
                    project, stack, entry.files, _invalid_note(stack) if invalid else None
                )
    todo = [s for s in stacks if s not in sides]
    with contextlib.ExitStack() as running:
        # Made only for a render: an interrupt removes it (and stops the render) first.
        scratch = "" if not todo else running.enter_context(temporary_directory())
        out = Path(scratch)
        pending = PendingBase(project, package, sides, todo, out, store)
        target = (
            ["--all"]
            if len(todo) > 1 and set(todo) == set(all_stacks(project))
            else todo[:1]
            if len(todo) == 1
            else []
        )
        if target:
            where = out / ("all" if target == ["--all"] else target[0])
            child = running.enter_context(_start_render(project, package, target, where))
            pending.started = (target, child)
        yield pending


def temporary_directory() -> contextlib.AbstractContextManager[str]:
    return interrupts.temporary_directory("stacks-diff-render-")


def render_base(project: Path, stacks: Sequence[str]) -> dict[str, Side]:
    """Render ``stacks`` with the base checkout's own program (see :func:`rendering_base`)."""
    with rendering_base(project, stacks) as pending:
        return pending.result()


def render_head(prepared: preparation.Prepared) -> Side:
    """Render a validated working-tree stack in process."""
    # the program and its SDKs: only when a side renders

    stack = prepared.loaded.name
    return stack_side(prepared.root, stack, lazy.render.execute(prepared).files)


def head_side(rendered: parallel.StackRender) -> Side:
    """The working-tree side of a stack rendered (in process or in a worker)."""
    prepared = rendered.prepared
    return stack_side(prepared.root, prepared.loaded.name, rendered.files)


def missing_head(stack: str) -> Side:
    """The working-tree side of a stack that exists only at the base."""
    return Side(files={}, note=f"has no stack `{stack}`")

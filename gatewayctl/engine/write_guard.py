"""Where the CLI may write: never over what it did not write (docs/render.md).

Output directories (``render``, ``operator-manifests``) are replaced whole, so only a new path,
an empty directory or a directory this tool wrote is replaced: its :data:`MARKER` lists every
file the tool put there, and a file it does not list (a user's) keeps the directory from being
replaced. Output files (``import-file``, ``diff --output``) are written to a new path or over a
file of the same kind this tool wrote, never over anything else.

No output may be the project or a directory holding it, be inside a ``.git`` directory or a
stack's declarations directory (or hold one), or be named like a Pulumi project or stack file
in the project (``Pulumi.<stack>.yaml`` there would be a stack). Every rule is checked before
anything is rendered or written; each problem is ``<path>: --out: <problem>``.
"""

from __future__ import annotations

import functools
import os
import secrets
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from gatewayctl import interrupts, reading
from gatewayctl.errors import InvalidInputError, Problem
from gatewayctl.inputs.stackfile import (
    STACK_FILE_SUFFIXES,
    read_stack_config,
    stack_file,
    stacks_with_files,
)

MARKER = ".stacks-output"
"""Written into every output directory; lists the files the tool wrote there."""
_HEADER = (
    "# Written by `python -m gatewayctl`. The next run replaces this directory whole, and only\n"
    "# while it holds nothing but the files listed below: keep nothing else here.\n"
)
_UNLISTED_MARKER = (
    "Written by `python -m gatewayctl`. The next run replaces this directory whole:"
    " keep nothing else here.\n"
)
"""The marker before it listed its files. Files added to such a directory since cannot be told
from the tool's own, so it is never replaced: the operator empties it once."""
_SHOWN = 3
_PROJECT_FILES = ("Pulumi.yaml", "Pulumi.yml")
_STACK_FILES = tuple(stack_file("*", suffix) for suffix in STACK_FILE_SUFFIXES)


def marker_text(files: Iterable[str]) -> str:
    """The marker of a directory holding exactly ``files`` (relative POSIX paths)."""
    return _HEADER + "".join(f"{name}\n" for name in sorted(files))


def _marker_text(directory: Path) -> str:
    return reading.read_text(directory / MARKER, reading.EXISTING_LIMIT)


def _listed(directory: Path) -> set[str]:
    """The files the marker lists (none for a marker from before the list)."""
    text = _marker_text(directory)
    if text == _UNLISTED_MARKER:
        return set()
    return {line for line in text.splitlines() if line and not line.startswith("#")}


def _marked(directory: Path) -> bool:
    marker = directory / MARKER
    return marker.is_file() and not marker.is_symlink()


def unlisted(directory: Path) -> list[str]:
    """Files (and links) under a marked ``directory`` that its marker does not list, sorted."""
    listed = _listed(directory)
    found: list[str] = []

    def fail(error: OSError) -> None:
        raise error

    for top, dirs, files in os.walk(directory, onerror=fail):
        here = Path(top).relative_to(directory)
        # A link to a directory is an entry of its own: the tool never writes one.
        names = files + [d for d in dirs if (Path(top) / d).is_symlink()]
        found += [
            name
            for name in ((here / n).as_posix() for n in names)
            if name != MARKER and name not in listed
        ]
    return sorted(found)


def _inside(path: Path, directory: Path) -> bool:
    return path == directory or directory in path.parents


def _declarations(root: Path) -> list[tuple[Path, str]]:
    """Every stack file's declarations directory (resolved), and how that file names it."""
    found = []
    # The stack files this tool reads, in file-name order (the first match names the file).
    for stack in sorted(stacks_with_files(root), key=stack_file):
        try:
            _, raw = read_stack_config(root, stack)
            directory = raw.get("declarationsDir")
            if isinstance(directory, str) and directory:
                found.append(((root / directory).resolve(), f"{stack_file(stack)} {directory}"))
        except (InvalidInputError, OSError, ValueError, RuntimeError):
            continue  # that stack's own problem, reported when it is validated
    return found


Declared = Callable[[Path], list[tuple[Path, str]]]
"""``_declarations``, or the same answer kept for several outputs (:func:`directories_problems`)."""


def _protected(out: Path, root: Path, declared: Declared = _declarations) -> str | None:
    """Why ``out`` may never be written, whatever it holds, if so."""
    target, project = out.resolve(), root.resolve()
    if target == project or target in project.parents:
        return "holds the project itself; choose a directory of its own"
    if ".git" in target.parts:
        return "is inside a .git directory"
    for directory, named in declared(root):
        if _inside(target, directory):
            return f"is inside a declarations directory ({named})"
        if target in directory.parents:
            return f"holds a declarations directory ({named})"
    if target.parent == project and any(
        target.match(pattern) for pattern in (*_PROJECT_FILES, *_STACK_FILES)
    ):
        return "is named like a Pulumi project or stack file; choose another name"
    return None


def _writable(out: Path) -> str | None:
    ancestor = out.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        if ancestor.is_symlink():  # a link to nothing: its directory can never be made
            return f"{ancestor} is a symbolic link to nothing"
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        return f"{ancestor} is not a directory"
    if not os.access(ancestor, os.W_OK | os.X_OK):
        return f"cannot write in {ancestor}"
    return None


def _shown(names: list[str]) -> str:
    more = f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else ""
    return ", ".join(names[:_SHOWN]) + more


def _directory_problem(out: Path, root: Path, declared: Declared) -> str | None:
    if (reason := _protected(out, root, declared)) is not None:
        return reason
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        return "exists and is not a directory"
    if out.is_dir() and any(out.iterdir()):
        if not _marked(out):
            return (
                f"exists and was not written by this tool (no {MARKER} in it); it would be"
                " replaced whole: choose a new or empty directory"
            )
        if _marker_text(out) == _UNLISTED_MARKER:
            return (
                f"was written by an older version of this tool whose {MARKER} does not list"
                " its files, so files added since cannot be told apart; it is never replaced:"
                " empty or remove it once, or choose a new or empty directory"
            )
        if mine := unlisted(out):
            return (
                f"holds files this tool did not write ({_shown(mine)}); it would be replaced"
                " whole: move them out or choose a new or empty directory"
            )
    return _writable(out)


def directory_problems(
    out: Path, root: Path, flag: str = "--out", declared: Declared = _declarations
) -> list[Problem]:
    """Why the directory ``out`` may not be replaced whole (it would be deleted) or written."""
    try:
        reason = _directory_problem(out, root, declared)
    except (OSError, ValueError, RuntimeError) as error:
        reason = f"is not a usable path ({_error(error)})"
    return [] if reason is None else [Problem(str(out), flag, reason)]


def directories_problems(outs: Iterable[Path], root: Path, flag: str = "--out") -> list[Problem]:
    """:func:`directory_problems` of each of ``outs``, the stack files read once for all (not
    once per output: ``render --all`` of many stacks)."""
    declared = functools.cache(_declarations)  # an error is not kept: raised for each output
    return [problem for out in outs for problem in directory_problems(out, root, flag, declared)]


def _file_problem(out: Path, root: Path, ours: Callable[[str], bool], kind: str) -> str | None:
    if (reason := _protected(out, root)) is not None:
        return reason
    if out.is_symlink() or (out.exists() and not out.is_file()):
        return "exists and is not a regular file"
    if out.exists():
        text = reading.read_text(out, reading.EXISTING_LIMIT)
        if not ours(text):
            return (
                f"exists and is not {kind} this tool wrote; it is never overwritten: remove"
                " it or choose a new path"
            )
    return _writable(out)


def file_problems(
    out: Path, root: Path, *, ours: Callable[[str], bool], kind: str, flag: str = "--out"
) -> list[Problem]:
    """Why the file ``out`` may not be written: ``ours`` tells whether an existing file is
    ``kind`` (e.g. "an import file") as this tool writes it, which may be overwritten."""
    try:
        reason = _file_problem(out, root, ours, kind)
    except (OSError, ValueError, RuntimeError) as error:
        reason = f"is not a usable path ({_error(error)})"
    return [] if reason is None else [Problem(str(out), flag, reason)]


def _error(error: BaseException) -> str:
    return error.strerror if isinstance(error, OSError) and error.strerror else str(error)


def write_file(out: Path, text: str) -> None:
    """Write ``out`` whole or not at all (a temporary file renamed over it), as part of the
    current :func:`interrupts.transaction` (one of its own if there is none): the old file is
    put back if the transaction is not committed."""
    with interrupts.transaction():
        make_parents(out.parent)
        with interrupts.deferred():
            handle, name = tempfile.mkstemp(prefix=f".{out.name}-", dir=out.parent)
            temporary = Path(name)
            interrupts.undo(lambda: temporary.unlink(missing_ok=True))
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        umask = os.umask(0)
        os.umask(umask)
        temporary.chmod(0o666 & ~umask)  # mkstemp's file is private (0600)
        replace_file(temporary, out)


def replace_file(temporary: Path, out: Path) -> None:
    """Put the file ``temporary`` at ``out`` in one rename (``rename(2)`` replaces the target
    atomically): at every moment, a kill included, ``out`` is the old file or the new one,
    never neither. As part of the current :func:`interrupts.transaction`: until it is
    committed the old file is kept under a second name (a hard link, or a copy where the file
    system has none), and an undo puts it back, again in one rename."""
    with interrupts.deferred():
        kept: Path | None = None
        if out.exists() and not out.is_symlink():
            kept = out.parent / f".{out.name}-replaced-{secrets.token_hex(8)}"
            try:
                os.link(out, kept)
            except OSError:
                shutil.copy2(out, kept)
            interrupts.undo(lambda: kept.unlink(missing_ok=True))
            interrupts.after(lambda: kept.unlink(missing_ok=True))
        os.replace(temporary, out)
        if kept is not None:
            interrupts.undo(lambda: os.replace(kept, out))
        else:
            interrupts.undo(lambda: out.unlink(missing_ok=True))


def set_aside(path: Path) -> None:
    """Move ``path`` (a directory or a file) out of the way, to be deleted once the current
    :func:`interrupts.transaction` is committed, or moved back if it is not."""
    with interrupts.deferred():
        prefix = f".{path.name}-replaced-"
        directory = path.is_dir() and not path.is_symlink()
        if directory:
            aside = Path(tempfile.mkdtemp(prefix=prefix, dir=path.parent))
        else:
            handle, name = tempfile.mkstemp(prefix=prefix, dir=path.parent)
            os.close(handle)
            aside = Path(name)
        path.rename(aside)  # over the empty directory or file just made for it

        def put_back() -> None:
            aside.rename(path)

        def delete() -> None:
            if directory:
                shutil.rmtree(aside, ignore_errors=True)
            else:
                aside.unlink(missing_ok=True)

        interrupts.undo(put_back)
        interrupts.after(delete)


def make_parents(directory: Path) -> None:
    """``directory.mkdir(parents=True)`` in the current :func:`interrupts.transaction`: the
    directories it creates are removed again (if still empty) when that is undone."""
    missing = []
    current = directory
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    for path in reversed(missing):
        with interrupts.deferred():
            try:
                path.mkdir()
            except FileExistsError:
                continue
            interrupts.undo(path.rmdir)


# --- writing and removing whole trees ------------------------------------------------------


def _only_ours(directory: Path) -> bool:
    try:
        return not unlisted(directory)
    except OSError:
        return False  # what cannot be read is not removed


def remove_stale_outputs(base: Path, keep: Iterable[str]) -> list[Path]:
    """Remove the output directories under ``base`` of stacks that no longer exist (``render
    --all``): only renders (:data:`MARKER`, a ``plan.json`` and nothing the marker does not
    list) not named in ``keep``.

    Part of the current :func:`interrupts.transaction`: an interrupt before its end puts them
    back."""
    kept = set(keep)
    stale = sorted(
        child
        for child in base.iterdir()
        if child.name not in kept
        # Stack names are DNS labels: a dot-name is no render but, for one, a tree this very
        # transaction set aside (``outputs.set_aside``), deleted or restored at its end.
        and not child.name.startswith(".")
        and not child.is_symlink()
        and child.is_dir()
        and (child / MARKER).is_file()
        and (child / "plan.json").is_file()
        and _only_ours(child)
    )
    with interrupts.transaction():
        for child in stale:
            set_aside(child)
    return stale


def write_tree(out: Path, files: Mapping[str, str]) -> None:
    """Replace ``out`` whole with exactly ``files`` (and :data:`MARKER`, which lists them); on
    failure or an interrupt the old tree stays. Check :func:`directory_problems`
    first.

    Part of the current :func:`interrupts.transaction` (one of its own if there is none): the
    new tree is built beside ``out`` and moved into place; the old one is deleted only once
    the transaction is committed, and put back if it is not."""
    with interrupts.transaction():
        staging = staging_tree(out)
        write_files(staging, files)
        finish_tree(out, staging, files)


def staging_tree(out: Path) -> Path:
    """A new empty directory beside ``out`` for :func:`finish_tree` to move into place; removed
    again when the current :func:`interrupts.transaction` is not committed. Its files may be
    written by other processes (``render``'s workers: :func:`write_files`)."""
    make_parents(out.parent)
    with interrupts.deferred():
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
        interrupts.undo(lambda: shutil.rmtree(staging, ignore_errors=True))
    # mkdtemp makes it private (0700); the tree is for reviewers and scanners too.
    umask = os.umask(0)
    os.umask(umask)
    staging.chmod(0o777 & ~umask)
    return staging


def write_files(directory: Path, files: Mapping[str, str]) -> None:
    """Write ``files`` (relative path → text) into ``directory``, in path order."""
    for relative, text in sorted(files.items()):
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def finish_tree(out: Path, staging: Path, files: Iterable[str]) -> None:
    """Replace ``out`` whole with the tree ``staging`` (:func:`staging_tree`), whose files are
    exactly ``files``, and :data:`MARKER` listing them."""
    (staging / MARKER).write_text(marker_text(files), encoding="utf-8")
    with interrupts.deferred():
        if out.exists():
            set_aside(out)
        staging.rename(out)
        interrupts.undo(lambda: out.rename(staging))

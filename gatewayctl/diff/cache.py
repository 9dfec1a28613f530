"""The base side's render, kept under ``build/diff-cache/`` so that a second diff against the
same base renders only the working tree (every push to a pull request diffs the same base).

An entry is one stack's base render, keyed by everything that determines it:

- the base commit's whole tree (``git rev-parse <commit>^{tree}``): the program, the
  declarations, the stack files and the lock file of the ref, and anything else the render
  could read from the repository, as they are at that commit;
- where the project is inside the repository, and the stack;
- what runs the base's program: this interpreter (implementation, version, executable: the
  virtualenv) and the packages installed in it, named by this working tree's ``uv.lock``
  (``make setup`` installs exactly that);
- :data:`FORMAT`, the version of this module's layout and of how the base render is run.

An entry is trusted only when whole: its :data:`MANIFEST` is written last and names the key,
the outcome and the SHA-256 of every file; on reading, a manifest that is missing, unreadable,
for another key, or that disagrees with a file (missing, extra, changed) makes the entry
stale: it is removed and the base rendered again. Entries are written beside the cache and
renamed into place, so a reader never sees half of one.

The cache is a directory this tool creates (it holds :data:`OWNED`): a symbolic link there, or
a directory the tool did not create, is refused before the diff starts (:func:`problems`), and
pruning (:data:`KEEP`) removes only entries the tool wrote, whatever else the directory holds.

The cache never holds a secret value: the render redacts secrets already, and every file is
scrubbed again (:class:`gatewayctl.engine.redaction.Scrubber`, by value) with the plaintext
``clusterSecrets`` of every stack of the base before it is written. The secrets themselves,
and their fingerprints, are read from the base checkout on every run and never cached.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gatewayctl import interrupts
from gatewayctl.engine.redaction import MANIFESTS, Scrubber
from gatewayctl.errors import Problem

FORMAT = 1
"""Bumped whenever the layout of an entry, or how the base is rendered, changes."""
DIRECTORY = Path("build") / "diff-cache"
MANIFEST = "cache-manifest.json"
KEEP = 16
"""Entries kept (the newest by use); older ones are removed when a new one is written."""
RENDERED, INVALID = "rendered", "invalid"
"""Outcomes: the files of the base render, or the stack's input is invalid at the base."""


@dataclass(frozen=True)
class Entry:
    outcome: str
    files: dict[str, str]


def key(*, tree: str, prefix: str, stack: str, lock: bytes | None) -> str:
    """The key of one stack's base render (see the module docstring)."""
    facts = {
        "format": FORMAT,
        "tree": tree,
        "prefix": prefix,
        "stack": stack,
        "lock": hashlib.sha256(lock).hexdigest() if lock is not None else None,
        "implementation": sys.implementation.name,
        "version": sys.version,
        "executable": sys.executable,
    }
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


OWNED = ".gatewayctl-diff-cache"
"""Written into the cache directory when this tool creates it: only such a directory is used,
and only its entries are ever removed."""
_OWNED_TEXT = (
    "Written by `python -m gatewayctl diff`: the base renders it keeps. `rm -rf` of this"
    " directory is always safe.\n"
)
_ENTRY_NAME = re.compile(r"[0-9a-f]{64}")
"""An entry is named by its key (:func:`key`, a SHA-256)."""


def _is_entry(path: Path) -> bool:
    """``path`` is an entry this tool wrote: a directory (not a link) named by a key, whose
    manifest names that key. Nothing else is ever pruned."""
    if not _ENTRY_NAME.fullmatch(path.name) or path.is_symlink() or not path.is_dir():
        return False
    try:
        manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return False
    return isinstance(manifest, dict) and manifest.get("key") == path.name


def _owned_problem(directory: Path) -> str | None:
    """Why the tool may not keep its cache in ``directory``, or None (see :func:`problems`)."""
    if directory.is_symlink():
        return (
            "is a symbolic link; the diff cache is a directory this tool creates itself (it"
            " removes old entries there): remove the link"
        )
    if not directory.exists():
        return None
    if not directory.is_dir():
        return "exists and is not a directory; the diff cache is a directory: remove it"
    marker = directory / OWNED
    if marker.is_file() and not marker.is_symlink():
        return None
    children = list(directory.iterdir())
    # Before the marker, the tool wrote entries only (and its own scratch, ``.writing-*``).
    if all(_is_entry(c) or (c.name.startswith(".writing-") and c.is_dir()) for c in children):
        return None
    return (
        f"exists and was not created by this tool (no {OWNED} in it), and the cache removes"
        " old entries there: move it away or choose another place for it"
    )


def problems(root: Path) -> list[Problem]:
    """Why the diff may not keep its base renders in ``root/build/diff-cache``: a symbolic link
    (pruning would remove directories wherever it leads), or a directory this tool did not
    create (it holds no :data:`OWNED`; an empty one, or one holding only entries, is taken).
    Checked before anything is rendered, as every output path is."""
    directory = root / DIRECTORY
    try:
        reason = _owned_problem(directory)
    except OSError as error:
        reason = f"is not a usable path ({error.strerror or error})"
    return [] if reason is None else [Problem(DIRECTORY.as_posix(), "diff cache", reason)]


class Cache:
    """The entries under ``root/build/diff-cache``: used only when :func:`problems` has none
    (checked again here), and pruned of its own entries only."""

    def __init__(self, root: Path) -> None:
        self.directory = root / DIRECTORY

    def _path(self, name: str) -> Path:
        return self.directory / name

    def _usable(self) -> bool:
        try:
            return _owned_problem(self.directory) is None
        except OSError:
            return False

    def get(self, name: str) -> Entry | None:
        """The entry ``name`` if it is whole and its own; a stale or corrupt one is removed."""
        path = self._path(name)
        if not _ENTRY_NAME.fullmatch(name) or not self._usable():
            return None
        if not path.exists() and not path.is_symlink():
            return None
        entry = _read(path, name)
        if entry is None:
            _remove(path)
            return None
        with contextlib.suppress(OSError):
            os.utime(path / MANIFEST)  # used: kept longest
        return entry

    def put(self, name: str, entry: Entry, secrets: frozenset[str]) -> dict[str, str]:
        """Write the entry ``name``, every file scrubbed of ``secrets`` first; the files as
        written. Best effort: a cache that cannot be written costs the next run a render."""
        files = scrub(entry.files, secrets)
        if not _ENTRY_NAME.fullmatch(name) or not self._usable():
            return files
        with contextlib.suppress(OSError):
            self._own()
            with interrupts.temporary_directory(".writing-", self.directory) as scratch:
                staging = Path(scratch)
                for relative, text in files.items():
                    target = staging / relative
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(text.encode("utf-8"))
                manifest = {
                    "key": name,
                    "outcome": entry.outcome,
                    "files": {
                        relative: _digest(text.encode("utf-8"))
                        for relative, text in sorted(files.items())
                    },
                }
                (staging / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True))
                path = self._path(name)
                _remove(path)  # a stale entry (get() removed it) or another writer's
                with contextlib.suppress(OSError):
                    staging.rename(path)
            self._prune()
        return files

    def _own(self) -> None:
        """Create the directory, or take an empty one or one holding only entries, with its
        marker."""
        self.directory.mkdir(parents=True, exist_ok=True)
        marker = self.directory / OWNED
        if not marker.is_file():
            marker.write_text(_OWNED_TEXT, encoding="utf-8")

    def _prune(self) -> None:
        entries = []
        for child in self.directory.iterdir():
            if not _is_entry(child):
                continue  # not one this tool wrote: never removed
            try:
                entries.append(((child / MANIFEST).stat().st_mtime, child))
            except OSError:
                continue
        for _, child in sorted(entries, reverse=True)[KEEP:]:
            _remove(child)


def _read(path: Path, name: str) -> Entry | None:
    """The entry at ``path`` if whole and for ``name``, else None. Read through ``os`` rather
    than ``pathlib``: an entry of 1,000 gateways holds 23,000 files, and pathlib's objects were
    two thirds of reading them."""
    try:
        if path.is_symlink() or not path.is_dir():
            return None
        top = os.fspath(path)
        with open(os.path.join(top, MANIFEST), encoding="utf-8") as handle:
            manifest = json.load(handle)
        if not isinstance(manifest, dict) or manifest.get("key") != name:
            return None
        listed = manifest.get("files")
        outcome = manifest.get("outcome")
        if outcome not in {RENDERED, INVALID} or not isinstance(listed, dict):
            return None
        found = _tree(top)
        if found is None or found != {*listed, MANIFEST}:
            return None
        files = {}
        for relative, digest in listed.items():
            with open(os.path.join(top, relative), "rb") as handle:
                data = handle.read()
            if _digest(data) != digest:
                return None
            files[relative] = data.decode("utf-8")
        return Entry(outcome, files)
    except (OSError, ValueError, UnicodeDecodeError):
        return None


def _tree(top: str) -> set[str] | None:
    """The paths (relative, ``/``-separated) of everything under ``top`` but its directories;
    None when a symbolic link is among them (an entry never holds one)."""
    found: set[str] = set()
    pending = [("", top)]
    while pending:
        prefix, directory = pending.pop()
        with os.scandir(directory) as children:
            for child in children:
                if child.is_symlink():
                    return None
                if child.is_dir():
                    pending.append((f"{prefix}{child.name}/", child.path))
                else:
                    found.add(prefix + child.name)
    return found


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        with contextlib.suppress(OSError):
            path.unlink()
    else:
        shutil.rmtree(path, ignore_errors=True)


def scrub(files: Mapping[str, str], secrets: frozenset[str]) -> dict[str, str]:
    """``files`` of a render with every value equal to one of ``secrets`` replaced: manifests
    as the diff scrubs them, ``plan.json`` parsed and written again as the render writes it."""
    scrubber = Scrubber(secrets)
    if not scrubber:
        return dict(files)
    scrubbed = scrubber.files(files)
    for relative, text in files.items():
        if relative.startswith(MANIFESTS) or not scrubber.might_hold(text):
            continue
        try:
            document: Any = json.loads(text)
        except ValueError:
            scrubbed[relative] = scrubber.free_text(text)
            continue
        cleaned = scrubber.value(document)
        if cleaned != document:
            scrubbed[relative] = json.dumps(cleaned, indent=2, sort_keys=True) + "\n"
    return scrubbed

"""Releases as decisions: which release a stack's clusters bind and what a production stack
refuses (:func:`binding_problems`, :func:`override_problems`), whether each release is still the
content it was first committed with (:func:`history_problems`), and the render summary's cells.
The release files themselves are read by ``gatewayctl.inputs.release_files``.

A cluster binds a release in its stack file (``clusters.<name>.release``), a gateway may pin
another (``spec.release``, a canary); ``python -m gatewayctl promote`` moves a binding.

Rules, each a problem ``path: field: problem`` (exit 2): a binding names a release there is; and
a release's content is the content it was first committed with (:func:`history_problems`:
compared with the commit that added the file, in git). Outside a git checkout, in a shallow
clone that lacks that commit, or for a release not committed yet, the history cannot say: a
note says so, and the release is checked once it is committed (the pull-request workflow clones
the whole history).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from components.images import parse_image
from gatewayctl import interrupts
from gatewayctl.errors import InvalidInputError, Problem
from gatewayctl.inputs.clusters import ImageDefaults, StackConfig
from gatewayctl.inputs.release_files import RELEASE_SUFFIXES, RELEASES_DIR, ReleaseFile, known
from gatewayctl.inputs.stackfile import PROJECT
from gatewayctl.inputs.yamlfile import parse_yaml_mapping

IMAGES = ("gateway", "supervisor", "sandbox")
GIT_TIMEOUT = 60


# --- bindings ----------------------------------------------------------------------------------


def _images_set(images: ImageDefaults) -> bool:
    return any(getattr(images, which) is not None for which in IMAGES)


def binding_problems(
    display: str, config: StackConfig, releases: Mapping[str, ReleaseFile]
) -> list[Problem]:
    """The stack file's bindings: each names a release there is; a production stack binds one
    on every cluster; a stack takes its images from releases or from ``images``, not both."""
    problems = []
    for name, cluster in sorted(config.clusters.items()):
        field = f"{PROJECT}:clusters.{name}.release"
        if cluster.release is None:
            if config.production:
                problems.append(
                    Problem(
                        display,
                        field,
                        f"required: the stack is production ({PROJECT}:production) and runs"
                        " only releases, pinned by digest",
                    )
                )
        elif cluster.release not in releases:
            problems.append(
                Problem(display, field, f"unknown release {cluster.release!r}; {known(releases)}")
            )
    bound = any(cluster.release is not None for cluster in config.clusters.values())
    if _images_set(config.images) and (bound or config.production):
        why = "is production" if config.production else "binds releases on its clusters"
        problems.append(
            Problem(
                display,
                f"{PROJECT}:images",
                f"the stack {why}: its images come from the releases; remove the stack"
                " defaults (a gateway may still override its own image)",
            )
        )
    return problems


def override_problems(
    source: str, overrides: Mapping[str, str | None], config_path: str, production: bool
) -> list[Problem]:
    """A production stack refuses a per-gateway image without a digest (a tag can move)."""
    if not production:
        return []
    return [
        Problem(
            source,
            f"spec.images.{which}",
            f"{image!r} has no digest: the stack is production ({config_path}:"
            f" {PROJECT}:production), so a per-gateway image must be pinned by digest"
            " (@sha256:...), or the gateway pins a release (spec.release)",
        )
        for which, image in sorted(overrides.items())
        if image is not None and parse_image(image).digest is None
    ]


# --- history -----------------------------------------------------------------------------------


class _NoHistoryError(Exception):
    """git cannot answer here (not installed, not a checkout): the reason, for a note."""


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    try:
        return interrupts.run(["git", "-C", str(root), *args], timeout=GIT_TIMEOUT)
    except FileNotFoundError:
        raise _NoHistoryError("git is not installed") from None
    except (OSError, subprocess.TimeoutExpired) as error:
        raise _NoHistoryError(f"git {args[0]} failed: {error}") from None


def _shallow_boundary(root: Path) -> set[str]:
    """The commits whose parents a shallow clone lacks (none in a full clone)."""
    done = _git(root, "rev-parse", "--is-shallow-repository", "--git-path", "shallow")
    lines = done.stdout.splitlines()
    if done.returncode != 0 or len(lines) != 2 or lines[0] != "true":
        return set()
    path = Path(lines[1]) if Path(lines[1]).is_absolute() else root / lines[1]
    try:
        return set(path.read_text(encoding="ascii").split())
    except OSError:
        return set()


def _differences(old: Any, new: Any, path: str = "") -> Iterator[str]:
    """The dotted paths at which two parsed documents differ (values, added or removed keys)."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new), key=str):
            dotted = f"{path}.{key}" if path else str(key)
            if key not in old or key not in new:
                yield dotted
            else:
                yield from _differences(old[key], new[key], dotted)
    elif old != new or type(old) is not type(new):
        yield path


def _first_added(root: Path, name: str) -> tuple[str, str] | None:
    """The oldest commit that added a file of the release ``name`` (``releases/<name>.yaml`` or
    ``.yml``: a release is its name, whatever its file), and that file, relative to ``root``;
    None when no commit did."""
    spellings = [f"./{RELEASES_DIR}/{name}{suffix}" for suffix in RELEASE_SUFFIXES]
    log = _git(
        root,
        "log",
        "--diff-filter=A",
        "--no-renames",
        "--relative",
        "--name-only",
        "--format=%x00%H",
        "--",
        *spellings,
    )
    if log.returncode != 0:
        return None
    commits = [block.split("\n", 1) for block in log.stdout.split("\0") if block.strip()]
    if not commits:
        return None
    commit, names = commits[-1][0], commits[-1][1:]
    added = sorted(line for text in names for line in text.splitlines() if line)
    return (commit, added[0]) if added else None


def history_problems(
    root: Path, releases: Mapping[str, ReleaseFile]
) -> tuple[list[Problem], list[str]]:
    """Each release compared with the version of its file that was first committed: a release
    is immutable once committed. Returns the problems and the notes (what could not be checked).

    Immutability is per release name, whatever the file: the first version is the one of the
    oldest commit that added a file of that name, ``releases/<name>.yaml`` or ``.yml``
    (``git log --diff-filter=A --no-renames``, from HEAD), so renaming ``x.yaml`` to ``x.yml``
    with new content is a change of release ``x``, refused like an edit. It is read with ``git
    show`` and the strict reader, and compared as parsed YAML: comments and layout may change,
    content may not. The working tree is compared, so an uncommitted edit is refused as well.
    """
    if not releases:
        return [], []
    try:
        top = _git(root, "rev-parse", "--show-toplevel")
        if top.returncode != 0:
            raise _NoHistoryError("the project is not a git checkout")
        boundary = _shallow_boundary(root)
    except _NoHistoryError as reason:
        return [], [
            f"{RELEASES_DIR}/: {reason}: whether each release is still what was first committed"
            " is not checked here (it is in a full clone, as pull requests run)"
        ]
    problems: list[Problem] = []
    notes: list[str] = []
    for name in sorted(releases):
        item = releases[name]
        found = _first_added(root, name)
        if found is None:
            notes.append(
                f"{item.path}: not committed yet; once committed, its content may not change"
            )
            continue
        commit, first_path = found
        if commit in boundary:
            notes.append(
                f"{item.path}: this clone is shallow and lacks the commit that added it;"
                " immutability is not checked here (fetch the whole history to check it)"
            )
            continue
        shown = _git(root, "show", f"{commit}:./{first_path}")
        if shown.returncode != 0:
            notes.append(f"{item.path}: its first version ({commit[:12]}) cannot be read by git")
            continue
        label = f"{first_path} as first committed ({commit[:12]})"
        try:
            first = parse_yaml_mapping(shown.stdout, label)
        except InvalidInputError:
            problems.append(
                Problem(
                    item.path,
                    "",
                    f"its first committed version ({commit[:12]}) is not a YAML mapping, so"
                    " it never was a release; commit the release under a new name",
                )
            )
            continue
        problems += [
            Problem(
                item.path,
                field or "",
                f"changed since the release was first committed ({commit[:12]}); a release"
                " is immutable: put the change in a new release (a new file) and promote it",
            )
            for field in _differences(first, item.document)
        ]
    return problems, notes


# --- reports -----------------------------------------------------------------------------------


def summary_cells(release: str | None, pinned: bool, overrides: tuple[str, ...]) -> tuple[str, str]:
    """The render summary's release and overrides cells of one gateway."""
    shown = "-" if release is None else f"{release} (pinned)" if pinned else release
    return shown, ", ".join(overrides) or "-"

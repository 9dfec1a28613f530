"""Releases: immutable, named sets of the gateway, supervisor and sandbox images, by digest.

A release is one file ``releases/<name>.yaml``, shaped like the declarations::

    apiVersion: hypershell.redhat.io/v1alpha1
    kind: Release
    metadata:
      name: openshell-0.0.109
    spec:
      note: Gateway and supervisor 0.0.109 ...
      images:
        gateway: ghcr.io/nvidia/openshell/gateway:0.0.109@sha256:<64 lowercase hex>
        supervisor: ...
        sandbox: ...

Every image carries a digest (``@sha256:`` and exactly 64 lowercase hex characters, as
upstream's ValidateImageReference accepts: ``../shared/reference/upstream-gateway-anatomy.md``
§5); the tag before it is for people (the container runtime pulls by the digest). A cluster
binds a release in its stack file (``clusters.<name>.release``), a gateway may pin another
(``spec.release``, a canary); ``python -m gatewayctl promote`` moves a binding.

Rules, each a problem ``path: field: problem`` (exit 2): the file is read by the strict YAML
reader and parsed into :class:`Release` (unknown fields, a malformed digest, a tag without a
digest); its name is its file name, so two files cannot hold one release (``x.yaml`` and
``x.yml``); and its content is the content it was first committed with
(:func:`history_problems`: compared with the commit that added the file, in git). Outside a
git checkout, in a shallow clone that lacks that commit, or for a release not committed yet,
the history cannot say: a note says so, and the release is checked once it is committed (the
pull-request workflow clones the whole history).
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, ValidationError

from components.images import ImageReferenceError, parse_image
from gatewayctl import interrupts
from gatewayctl.errors import InvalidInputError, Problem, from_validation_error
from gatewayctl.inputs.clusters import ImageDefaults, StackConfig
from gatewayctl.inputs.model import Model, ReleaseName
from gatewayctl.inputs.stackfile import PROJECT
from gatewayctl.inputs.yamlfile import parse_yaml_mapping, read_yaml_mapping

RELEASES_DIR = "releases"
"""The releases of the project, one file each, relative to its root."""
RELEASE_SUFFIXES = (".yaml", ".yml")
IMAGES = ("gateway", "supervisor", "sandbox")
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
"""The digest upstream's gateway accepts (ValidateImageReference: ``@sha256:`` and exactly 64
lowercase hex characters); the OCI grammar's sha512 is not among them."""
GIT_TIMEOUT = 60


def digest_problem(reference: str) -> str | None:
    """What is wrong with the digest of ``reference``, or None when it is pinned by one."""
    if "@" not in reference:
        return (
            f"{reference!r} has no digest: a release pins every image by digest"
            " (@sha256: and 64 lowercase hex characters; a tag may come before it, for people)"
        )
    digest = reference.rsplit("@", 1)[1]
    algorithm, colon, hexes = digest.partition(":")
    if not colon or algorithm != "sha256":
        return (
            f"digest {digest!r} is not sha256:<64 lowercase hex characters> (the only digest"
            " the gateway accepts)"
        )
    if not DIGEST.fullmatch(digest):
        if not re.fullmatch(r"[0-9a-fA-F]*", hexes):
            wrong = "characters that are not hexadecimal"
        elif hexes.lower() != hexes:
            wrong = "uppercase letters"
        else:
            wrong = f"{len(hexes)} characters"
        return (
            f"digest {digest!r} must be sha256: and exactly 64 lowercase hex characters;"
            f" it has {wrong}"
        )
    return None


def _pinned_image(value: object) -> object:
    if not isinstance(value, str):
        return value  # the str type reports it
    problem = digest_problem(value)
    if problem is not None:
        raise ValueError(problem)
    try:
        parse_image(value)
    except ImageReferenceError as error:
        raise ValueError(str(error)) from None
    return value


PinnedImage = Annotated[str, BeforeValidator(_pinned_image)]


class ReleaseImages(Model):
    gateway: PinnedImage
    """The gateway's image (also its Deployment's)."""
    supervisor: PinnedImage
    """gateway.toml's ``supervisor_image``."""
    sandbox: PinnedImage
    """gateway.toml's ``default_image``, the sandboxes' base."""
    console: PinnedImage | None = None
    """The web console's dashboard (optional: releases cut before the console have none,
    and their gateways' consoles run the built-in default; ``gatewayctl.resolve.console``)."""
    oauth2_proxy: PinnedImage | None = Field(None, alias="oauth2Proxy")
    """The web console's oauth2-proxy sidecar (optional, as ``console``)."""


class ReleaseSpec(Model):
    note: str = Field(min_length=1, max_length=2000)
    """What the release is and how its digests were taken, for the reviewer."""
    images: ReleaseImages


class ReleaseMetadata(Model):
    name: ReleaseName


class Release(Model):
    api_version: Literal["hypershell.redhat.io/v1alpha1"] = Field(alias="apiVersion")
    kind: Literal["Release"]
    metadata: ReleaseMetadata
    spec: ReleaseSpec

    @property
    def name(self) -> str:
        return self.metadata.name

    def console_image(self, which: str) -> str | None:
        """The release's ``console`` or ``oauth2Proxy`` image, None when it has none."""
        images = self.spec.images
        return {"dashboard": images.console, "oauth2Proxy": images.oauth2_proxy}[which]

    def image(self, which: str) -> str:
        images = self.spec.images
        return {
            "gateway": images.gateway,
            "supervisor": images.supervisor,
            "sandbox": images.sandbox,
        }[which]


@dataclass(frozen=True, kw_only=True)
class ReleaseFile:
    """A release as read from its file."""

    path: str
    """The file, relative to the project root, as problems name it."""
    release: Release
    document: dict[str, Any]
    """The parsed file, compared with its first committed version."""


# --- reading -----------------------------------------------------------------------------------


def _entry_problem(path: Path) -> str | None:
    """Why an entry of releases/ is not read as a release, or None."""
    if path.is_symlink():
        return (
            "is a symbolic link; a release is a regular file (git keeps a link's target, not"
            " the content it leads to, so the content would not be immutable)"
        )
    if path.is_dir():
        return "is a directory; releases are not read from subdirectories"
    if path.suffix not in RELEASE_SUFFIXES:
        return (
            "only *.yaml and *.yml files are releases (names starting with '.' or README are"
            " ignored)"
        )
    if not path.is_file():
        return "not a regular file"
    return None


def load_releases(root: Path) -> tuple[dict[str, ReleaseFile], list[Problem]]:
    """Every release of ``root/releases``, by name, and the problems of the files that are not
    one. No directory: no release."""
    directory = root / RELEASES_DIR
    if not directory.exists() and not directory.is_symlink():
        return {}, []
    if directory.is_symlink() or not directory.is_dir():
        return {}, [
            Problem(RELEASES_DIR, "", "must be a directory of the project (not a symbolic link)")
        ]
    try:
        entries = sorted(directory.iterdir())
    except OSError as error:
        return {}, [Problem(RELEASES_DIR, "", f"cannot be read: {error.strerror}")]
    releases: dict[str, ReleaseFile] = {}
    problems: list[Problem] = []
    for path in entries:
        if path.name.startswith((".", "README")):
            continue
        display = f"{RELEASES_DIR}/{path.name}"
        unread = _entry_problem(path)
        if unread is not None:
            problems.append(Problem(display, "", unread))
            continue
        try:
            document = read_yaml_mapping(path, display)
            release = Release.model_validate(document, by_alias=True)
        except InvalidInputError as error:
            problems += error.problems
            continue
        except ValidationError as error:
            problems += from_validation_error(display, error, model=Release, document=document)
            continue
        if release.name != path.stem:
            problems.append(
                Problem(
                    display,
                    "metadata.name",
                    f"{release.name!r} must match the file name {path.stem!r}",
                )
            )
            continue
        if release.name in releases:
            problems.append(
                Problem(
                    display,
                    "metadata.name",
                    f"release {release.name!r} is already defined in {releases[release.name].path}",
                )
            )
            continue
        releases[release.name] = ReleaseFile(path=display, release=release, document=document)
    return releases, problems


def known(releases: Mapping[str, ReleaseFile]) -> str:
    """The releases there are, for a message."""
    if not releases:
        return f"there is no release in {RELEASES_DIR}/"
    return f"{RELEASES_DIR}/ holds {', '.join(sorted(releases))}"


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

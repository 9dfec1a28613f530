"""Release files: immutable, named sets of the gateway, supervisor and sandbox images, by
digest, read from ``releases/`` and validated into :class:`Release`.

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
upstream's ValidateImageReference accepts: ``openshift-online/hypershell`` at ``3811224``,
``components/control-plane/internal/gateway/validation.go``); the tag before it is for people
(the container runtime pulls by the digest).

Rules, each a problem ``path: field: problem`` (exit 2): the file is read by the strict YAML
reader and parsed into :class:`Release` (unknown fields, a malformed digest, a tag without a
digest); its name is its file name, so two files cannot hold one release (``x.yaml`` and
``x.yml``). Which release a gateway runs, and that a release's content is the content it was
first committed with, are decided in ``gatewayctl.resolve.release_bindings``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, ValidationError

from components.images import ImageReferenceError, parse_image
from gatewayctl.errors import InvalidInputError, Problem, from_validation_error
from gatewayctl.inputs.model import Model, ReleaseName
from gatewayctl.inputs.yamlfile import read_yaml_mapping

RELEASES_DIR = "releases"
"""The releases of the project, one file each, relative to its root."""
RELEASE_SUFFIXES = (".yaml", ".yml")
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
"""The digest upstream's gateway accepts (ValidateImageReference: ``@sha256:`` and exactly 64
lowercase hex characters); the OCI grammar's sha512 is not among them."""


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
    and their gateways' consoles run the built-in default; ``gatewayctl.resolve.console_plan``)."""
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

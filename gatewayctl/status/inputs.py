"""Read the files ``status --from`` names: each is the JSON of ``pulumi preview --json``,
``pulumi refresh --preview-only --json`` (a preview digest) or ``pulumi stack export`` (an
untyped deployment); which one is told by its shape (:mod:`.models` cites the formats).

Every problem is ``path: field: problem`` (exit 2): an empty or truncated file, JSON of
another shape, a field of the wrong type. Nothing of a file's values is quoted: a checkpoint
holds secrets (ciphertext) and live objects.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from gatewayctl.errors import InvalidInputError, Problem, from_validation_error
from gatewayctl.status.models import (
    DEPLOYMENT_VERSION,
    DeploymentV3,
    PreviewDigest,
    UntypedDeployment,
)

EXPECTED = (
    "expected the JSON of `pulumi preview --json`, `pulumi refresh --preview-only --json`"
    " or `pulumi stack export`"
)


@dataclass(frozen=True, kw_only=True)
class Inputs:
    """The parsed files: at most one checkpoint, one refresh digest, one preview digest."""

    checkpoint: DeploymentV3 | None = None
    refresh: PreviewDigest | None = None
    preview: PreviewDigest | None = None
    paths: dict[str, str] = field(default_factory=dict)
    """Which file each came from (``checkpoint``/``refresh``/``preview`` → path)."""


def _problem(path: str, message: str, field_: str = "") -> InvalidInputError:
    return InvalidInputError([Problem(path, field_, message)])


def read_one(path: Path, display: str) -> tuple[str, DeploymentV3 | PreviewDigest]:
    """The kind (``checkpoint``, ``refresh`` or ``preview``) and content of one file."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise _problem(display, "no such file") from None
    except IsADirectoryError:
        raise _problem(display, "is a directory; " + EXPECTED) from None
    except OSError as error:
        raise _problem(display, f"cannot be read ({error.strerror})") from None
    text = raw.decode("utf-8", errors="replace")
    if not text.strip():
        raise _problem(display, "empty file; " + EXPECTED)
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        # Position only: the message of json quotes no input, but keep it to the position.
        where = f"line {error.lineno} column {error.colno}"
        truncated = error.pos >= len(text.rstrip())
        what = "truncated JSON (it ends" if truncated else f"not valid JSON ({error.msg},"
        raise _problem(display, f"{what} at {where}); " + EXPECTED) from None
    if not isinstance(document, dict):
        kind = type(document).__name__
        raise _problem(display, f"a JSON {kind}, not an object; " + EXPECTED)
    try:
        if "deployment" in document or "version" in document:
            export = UntypedDeployment.model_validate(document)
            if export.version != DEPLOYMENT_VERSION:
                raise _problem(
                    display,
                    f"deployment version {export.version}; this reads version"
                    f" {DEPLOYMENT_VERSION} (`pulumi stack export` of CLI 3.x)",
                    "version",
                )
            return "checkpoint", export.deployment
        if "steps" in document or "changeSummary" in document:
            digest = PreviewDigest.model_validate(document)
            return ("refresh" if digest.is_refresh else "preview"), digest
    except ValidationError as error:
        raise InvalidInputError(from_validation_error(display, error)) from None
    raise _problem(display, "neither `steps` nor `deployment` at the top; " + EXPECTED)


def read(paths: Sequence[Path], displays: Sequence[str] | None = None) -> Inputs:
    """Read every file; all problems are reported together. Two files of the same kind are a
    problem (which one would be the truth?)."""
    problems: list[Problem] = []
    found: dict[str, DeploymentV3 | PreviewDigest] = {}
    where: dict[str, str] = {}
    for index, path in enumerate(paths):
        display = displays[index] if displays is not None else str(path)
        try:
            kind, content = read_one(path, display)
        except InvalidInputError as error:
            problems += error.problems
            continue
        if kind in found:
            problems.append(
                Problem(display, "", f"a second {kind} (the first is {where[kind]}); give one")
            )
            continue
        found[kind], where[kind] = content, display
    if problems:
        raise InvalidInputError(problems)
    checkpoint = found.get("checkpoint")
    refresh, preview = found.get("refresh"), found.get("preview")
    return Inputs(
        checkpoint=checkpoint if isinstance(checkpoint, DeploymentV3) else None,
        refresh=refresh if isinstance(refresh, PreviewDigest) else None,
        preview=preview if isinstance(preview, PreviewDigest) else None,
        paths=where,
    )

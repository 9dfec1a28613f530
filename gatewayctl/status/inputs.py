"""Read the files ``status --from`` names: each is the JSON of ``pulumi preview --json``,
``pulumi refresh --preview-only --json`` (a preview digest) or ``pulumi stack export`` (an
untyped deployment); which one is told by its shape (:mod:`.models` cites the formats).

Every problem is ``path: field: problem`` (exit 2): an empty or truncated file, JSON of
another shape or nested deeper than the JSON reader holds, a field of the wrong type, a file
of another stack or project, and a file the CLI cannot have written (a parent cycle, a live
resource twice: :func:`.tree.integrity_problems`). Nothing of a file's values is quoted: a
checkpoint holds secrets (ciphertext) and live objects.

A file is this stack's when every URN in it is: ``urn:pulumi:<stack>::<project>::...``
(pulumi/pulumi ``sdk/go/common/resource/urn.go``, ``NewURN``: the stack's name without its
organisation, and the project's). The status of stack ``ibm`` from another stack's refresh, or
a refresh of one stack merged with the state of another, would be a lie; each is refused.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from gatewayctl.errors import InvalidInputError, Problem, from_validation_error, printable
from gatewayctl.reading import STATUS_LIMIT, TooLargeError, read_bounded
from gatewayctl.status.models import (
    DEPLOYMENT_VERSIONS,
    FEATURES,
    DeploymentV3,
    PreviewDigest,
    UntypedDeployment,
)
from gatewayctl.status.tree import integrity_problems

URN_PREFIX = "urn:pulumi:"

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


INTEGER_DIGITS = 4_300
"""Digits of a JSON integer read as an ``int``: Python's default limit of a conversion
(``sys.get_int_max_str_digits``), beyond which ``int`` raises (and below which it is fast)."""


def _integer(digits: str) -> int | float:
    """A JSON integer; one of more than :data:`INTEGER_DIGITS` digits is read as the float it
    is closest to, an infinity: no field the status reads takes it, and one that would names
    itself as bad input (the Pulumi CLI never writes such a number: its numbers are
    ``float64``)."""
    if len(digits.lstrip("-")) > INTEGER_DIGITS:
        return float(digits)
    return int(digits)


def _problem(path: str, message: str, field_: str = "") -> InvalidInputError:
    return InvalidInputError([Problem(path, field_, message)])


def read_one(path: Path, display: str) -> tuple[str, DeploymentV3 | PreviewDigest]:
    """The kind (``checkpoint``, ``refresh`` or ``preview``) and content of one file."""
    try:
        raw = read_bounded(path, STATUS_LIMIT)
    except TooLargeError as error:
        raise _problem(display, f"{error}; {EXPECTED}") from None
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
        document = json.loads(text, parse_int=_integer)
    except RecursionError:
        # The C scanner counts its nesting against the interpreter's recursion limit.
        raise _problem(display, "JSON nested too deeply to read; " + EXPECTED) from None
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
            if export.version not in DEPLOYMENT_VERSIONS:
                raise _problem(
                    display,
                    f"deployment version {export.version}; this reads versions"
                    f" {' and '.join(map(str, DEPLOYMENT_VERSIONS))}"
                    " (`pulumi stack export` of CLI 3.x)",
                    "version",
                )
            unknown = sorted({f for f in export.features if f not in FEATURES})
            if export.version >= 4 and unknown:
                names = ", ".join(repr(printable(f)[:64]) for f in unknown[:8])
                raise _problem(
                    display,
                    f"the deployment uses feature(s) this reader does not know: {names}"
                    " (a newer CLI wrote it)",
                    "features",
                )
            return "checkpoint", export.deployment
        if "steps" in document or "changeSummary" in document:
            digest = PreviewDigest.model_validate(document)
            return ("refresh" if digest.is_refresh else "preview"), digest
    except ValidationError as error:
        raise InvalidInputError(from_validation_error(display, error)) from None
    except RecursionError:
        raise _problem(display, "JSON nested too deeply to read; " + EXPECTED) from None
    raise _problem(display, "neither `steps` nor `deployment` at the top; " + EXPECTED)


def _urns(content: DeploymentV3 | PreviewDigest) -> list[tuple[str, str]]:
    """Each URN of a file with the field that holds it."""
    if isinstance(content, DeploymentV3):
        return [(f"deployment.resources.{i}.urn", r.urn) for i, r in enumerate(content.resources)]
    return [(f"steps.{i}.urn", s.urn) for i, s in enumerate(content.steps)]


def identity_problems(
    display: str, content: DeploymentV3 | PreviewDigest, stack: str, project: str
) -> list[Problem]:
    """The first URN of another stack or project (and how many more there are), or that is not
    a Pulumi URN at all: one problem each, not one per resource."""
    found: dict[str, tuple[str, str, int]] = {}
    for field_, urn in _urns(content):
        parts = urn.split("::", 3)
        if len(parts) != 4 or not parts[0].startswith(URN_PREFIX):
            what, message = "urn", "not a Pulumi URN (urn:pulumi:<stack>::<project>::...)"
        elif parts[0][len(URN_PREFIX) :] != stack:
            what = "stack"
            other = printable(parts[0][len(URN_PREFIX) :])[:128]
            message = (
                f"a resource of stack {other!r}, not of stack {stack!r}: this file is another"
                " stack's; give this stack's"
            )
        elif parts[1] != project:
            what = "project"
            message = (
                f"a resource of project {printable(parts[1])[:128]!r}, not {project!r}: this"
                " file is another project's"
            )
        else:
            continue
        first = found.get(what)
        found[what] = (first[0], first[1], first[2] + 1) if first else (field_, message, 1)
    problems: list[Problem] = []
    for field_, message, count in found.values():
        more = f" ({count - 1} more like it)" if count > 1 else ""
        problems.append(Problem(display, field_, message + more))
    return problems


def read(
    paths: Sequence[Path],
    displays: Sequence[str] | None = None,
    *,
    stack: str | None = None,
    project: str | None = None,
) -> Inputs:
    """Read every file; all problems are reported together. Two files of the same kind are a
    problem (which one would be the truth?), and so is a file of another ``stack`` or
    ``project`` (when given)."""
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
        if stack is not None and project is not None:
            wrong = identity_problems(display, content, stack, project)
            if wrong:
                problems += wrong
                continue
        corrupt = integrity_problems(display, content)
        if corrupt:
            problems += corrupt
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

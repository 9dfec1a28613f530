"""The tool's errors, in one hierarchy, and input problems reported all at once as
``path: field: problem``.

``GatewayctlError`` is the base of every error the tool reports itself; ``gatewayctl.cli.main``
is the one place each kind becomes an exit code:

- ``InvalidInputError``: declarations, stack config or an output path that cannot be used,
  every problem listed; exit 2, nothing written.
- ``UsageError``: a command line that cannot be used as given (arguments that conflict, a
  ``--base`` ref that names no commit); exit 2, the message on one line.
- ``ToolError``: the tool could not finish for a reason it names (git, the base render of a
  diff); exit 1, the message on one line.

Any other exception is one the tool did not expect: exit 1, one line naming its type, and the
traceback with ``--debug`` (or ``GATEWAYCTL_DEBUG=1``) for a bug report.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError


@dataclass(frozen=True, order=True, slots=True)
class Problem:
    """One thing wrong with one field of one file.

    Field and message are shortened on the way in (``shorten``): they quote input, and a
    value of megabytes must not be echoed whole.
    """

    path: str
    field: str
    message: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "field", shorten(self.field))
        object.__setattr__(self, "message", shorten(self.message))

    def __str__(self) -> str:
        parts = [self.path, self.field, self.message] if self.field else [self.path, self.message]
        return ": ".join(printable(part) for part in parts)


def printable(text: str) -> str:
    """Non-printable characters as escapes: keys and file names come from input, and a newline
    or an escape sequence must not forge another "error:" line or reach the terminal."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


QUOTED_LIMIT = 128
"""Characters of a quoted value kept in a message, then an ellipsis: enough for an image
reference with its digest, not for a value of megabytes."""
RUN_LIMIT = 200
"""Characters kept of an unquoted run without whitespace (a field path, an unquoted value)."""
TEXT_LIMIT = 2_000
"""Characters kept of a whole field or message."""
ELLIPSIS = "\u2026"

# A value quoted by repr(): opens after a non-word character (so the apostrophe of "stack's"
# opens nothing) and closes at the next unescaped quote of the same kind, or at the end of a
# text already cut.
_QUOTED = re.compile(
    r"""(?<!\w)(?P<q>['"])(?P<body>(?:(?!(?P=q))[^\\]|\\.)*)(?P<close>(?P=q)|\\?\Z)""",
    re.DOTALL,
)
_RUN = re.compile(rf"\S{{{RUN_LIMIT + 1},}}")


def shorten(text: str) -> str:
    """``text`` with every quoted value cut to ``QUOTED_LIMIT`` characters, every other run
    without whitespace to ``RUN_LIMIT`` and the whole to ``TEXT_LIMIT``, each cut marked with
    an ellipsis. Text within the limits is returned unchanged."""
    if len(text) <= QUOTED_LIMIT:
        return text
    # Bound the cost of the patterns below; the end is cut anyway.
    text = text[: 4 * TEXT_LIMIT]

    def quoted(match: re.Match[str]) -> str:
        body = match["body"]
        if len(body) <= QUOTED_LIMIT:
            return match[0]
        return match["q"] + body[:QUOTED_LIMIT] + ELLIPSIS + match["q"]

    text = _QUOTED.sub(quoted, text)
    text = _RUN.sub(lambda match: match[0][:RUN_LIMIT] + ELLIPSIS, text)
    return text if len(text) <= TEXT_LIMIT else text[:TEXT_LIMIT] + ELLIPSIS


class GatewayctlError(Exception):
    """An error the tool reports itself (see the module docstring for the kinds)."""


class InvalidInputError(GatewayctlError):
    """Declarations or stack config that cannot be used; carries every problem found."""

    def __init__(self, problems: Iterable[Problem]):
        self.problems = sorted(set(problems))
        super().__init__("\n".join(str(p) for p in self.problems))


class UsageError(GatewayctlError):
    """The command line cannot be used as given; the message says why, on one line."""


class ToolError(GatewayctlError):
    """The tool could not finish for a reason it names; the message holds no secret."""


def from_validation_error(path: str, error: ValidationError, prefix: str = "") -> list[Problem]:
    """Turn pydantic's errors into problems whose field is the dotted YAML path."""
    problems = []
    for item in error.errors(include_url=False):
        parts = [prefix] if prefix else []
        parts += [str(part) for part in item["loc"] if part not in {"__root__", "[key]"}]
        field = ".".join(parts)
        message = item["msg"].removeprefix("Value error, ")
        if "[key]" in item["loc"]:
            message = f"key: {message}"
        if item["type"] in {"missing", "extra_forbidden"}:
            message = {"missing": "required field is missing", "extra_forbidden": "unknown field"}[
                item["type"]
            ]
        problems.append(Problem(path, field, message))
    return problems

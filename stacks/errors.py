"""Input problems, reported all at once as ``path: field: problem``."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pydantic import ValidationError


@dataclass(frozen=True, order=True, slots=True)
class Problem:
    """One thing wrong with one field of one file."""

    path: str
    field: str
    message: str

    def __str__(self) -> str:
        parts = [self.path, self.field, self.message] if self.field else [self.path, self.message]
        return ": ".join(printable(part) for part in parts)


def printable(text: str) -> str:
    """Non-printable characters as escapes: keys and file names come from input, and a newline
    or an escape sequence must not forge another "error:" line or reach the terminal."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


class InvalidInputError(Exception):
    """Declarations or stack config that cannot be used; carries every problem found."""

    def __init__(self, problems: Iterable[Problem]):
        self.problems = sorted(set(problems))
        super().__init__("\n".join(str(p) for p in self.problems))


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

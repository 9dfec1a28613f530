"""Helpers for the hostile-input, leak and deletion tests: run the real CLI in-process, read
what it printed and wrote, walk what a render recorded, find secrets in any text (projects are
built with ``tests.builders``)."""

from __future__ import annotations

import base64
import contextlib
import io
import json
import re
import unicodedata
import urllib.parse
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from gatewayctl.cli import main as cli
from gatewayctl.engine.offline import RecordedResource, Recording
from gatewayctl.errors import printable
from tests.builders import STACK

SUMMARY = re.compile(r"(?P<count>[0-9]+) problem\(s\); nothing written")


@dataclass(frozen=True)
class Outcome:
    """What one CLI run returned and printed."""

    code: int
    out: str
    err: str

    @property
    def printed(self) -> str:
        return self.out + self.err


def run_cli(*argv: str) -> Outcome:
    """``python -m gatewayctl ARGV`` in-process, with stdout and stderr captured."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(list(argv))
    return Outcome(code, out.getvalue(), err.getvalue())


def render_cli(root: Path, out: Path, *, stack: str = STACK, quiet: bool = True) -> Outcome:
    return run_cli("--root", str(root), "render", stack, "--out", str(out), *(["-q"] * quiet))


def validate_cli(root: Path, *, stack: str = STACK) -> Outcome:
    return run_cli("--root", str(root), "validate", stack)


@dataclass(frozen=True)
class Reported:
    """One ``error: <path>[:<line>:<column>]: <rest>`` line, split on the known path."""

    path: str
    rest: str
    """``<field>: <message>``, or ``<message>`` for a problem of the whole file."""
    location: str = ""
    """``:<line>:<column>`` when the line names where in the file, else empty."""

    def names(self, path: str, field: str, fragment: str = "") -> bool:
        """This line is about ``field`` of ``path`` (the whole file when ``field`` is empty)."""
        path, field, fragment = printable(path), printable(field), printable(fragment)
        if self.path != path or fragment not in self.rest:
            return False
        return self.rest.startswith(f"{field}: ") if field else True


_LOCATION = re.compile(r"(\.ya?ml):[0-9]+:[0-9]+: ")


def unlocated(text: str) -> str:
    """``text`` (printed problems) without the ``:<line>:<column>`` after each YAML file's
    path: for tests of what a problem says, not of where it is (``tests/test_locations.py``)."""
    return _LOCATION.sub(r"\1: ", text)


def control_characters(text: str) -> list[str]:
    """Characters other than the line feed that a terminal would interpret, not show."""
    return sorted({c for c in text if c != "\n" and unicodedata.category(c) in {"Cc", "Cf"}})


def reported_problems(err: str, paths: Iterable[str]) -> list[Reported]:
    """Parse the stderr of an exit-2 run; assert its shape on the way.

    Every line but the last is ``error: <path>: <field>: <message>`` (``error: <path>:
    <message>`` for a problem of the whole file; ``<path>:<line>:<column>`` where the place is
    known) with ``<path>`` one of ``paths``; the last is ``N problem(s); nothing written`` with
    N the number of problem lines.
    """
    assert "Traceback" not in err
    assert control_characters(err) == [], "stderr carries control characters"
    assert err.endswith("\n"), err
    *lines, last = err[:-1].split("\n")
    summary = SUMMARY.fullmatch(last)
    assert summary is not None, f"last stderr line is {last!r}"
    assert int(summary["count"]) == len(lines) >= 1, err
    # Longest first: a path that is a prefix of another must not steal its lines.
    known = sorted(set(paths), key=len, reverse=True)
    problems = []
    for line in lines:
        assert line.startswith("error: "), f"stderr line {line!r} is not a problem"
        rest = line.removeprefix("error: ")
        found = next(((p, m) for p in known if (m := _printed(p).match(rest)) is not None), None)
        assert found is not None, f"stderr line {line!r} names none of {known}"
        path, match = found
        problems.append(Reported(path, rest[match.end() :], match["location"] or ""))
    return problems


def _printed(path: str) -> re.Pattern[str]:
    """``path`` followed by ': ' as printed, with a ``:<line>:<column>`` between where known: a
    control character in it may be escaped any way."""
    return re.compile(
        "".join(
            r"[^:\s]{1,12}" if c in control_characters(c) or c == "\n" else re.escape(c)
            for c in path
        )
        + r"(?P<location>:[0-9]+:[0-9]+)?: "
    )


def tree(directory: Path) -> dict[str, bytes]:
    """Relative path → bytes of every file under ``directory``."""
    return {
        p.relative_to(directory).as_posix(): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def descendants(recording: Recording, urn: str) -> set[str]:
    """URNs of every resource registered (transitively) under ``urn``, itself excluded."""
    children: dict[str, list[str]] = {}
    for resource in recording.resources.values():
        if resource.parent is not None:
            children.setdefault(resource.parent, []).append(resource.urn)
    found: set[str] = set()
    pending = list(children.get(urn, []))
    while pending:
        current = pending.pop()
        found.add(current)
        pending += children.get(current, [])
    return found


def one_of_type(recording: Recording, type_: str, name: str) -> RecordedResource:
    found = [r for r in recording.resources.values() if r.type == type_ and r.name == name]
    assert len(found) == 1, f"expected one {type_} {name}, found {len(found)}"
    return found[0]


def facts(resource: RecordedResource) -> tuple[object, ...]:
    """Everything the engine is told about a resource (outputs follow from these)."""
    return (
        resource.type,
        resource.name,
        resource.parent,
        resource.provider,
        resource.custom,
        resource.inputs,
        resource.retain_on_delete,
        resource.protect,
        resource.secret_outputs,
    )


def forms(value: str) -> list[str]:
    """``value`` as it could appear in output: raw, JSON-escaped, URL-quoted, base64."""
    return sorted(
        {
            value,
            json.dumps(value)[1:-1],
            urllib.parse.quote(value, safe=""),
            base64.b64encode(value.encode()).decode().rstrip("="),
        }
    )


def leaks(texts: Sequence[str | bytes], secrets: Iterable[str]) -> list[str]:
    """The secrets (in any of their ``forms``) found in any of ``texts``."""
    blobs = [t if isinstance(t, bytes) else t.encode("utf-8", "surrogateescape") for t in texts]
    return sorted(
        {
            secret
            for secret in secrets
            for form in forms(secret)
            if any(form.encode() in blob for blob in blobs)
        }
    )

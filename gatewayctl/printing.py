"""What the commands print, the same way in each: the result on stdout, notes on stderr.

- One option picks the result's format (:func:`format_option`): ``-o``/``--output``/
  ``--format`` where ``-o`` and ``--output`` name no file, ``--format`` alone where they do
  (``diff --output FILE``, ``graph -o FILE``). ``json`` and ``yaml`` print one document with
  its keys sorted (:func:`document_text`), the human default a table or lines.
- Tables are padded columns, one row per item, never folded or cut (:func:`columns`): a long
  cell widens its column; the long columns are the ``wide`` format's.
- Notes (what the reader may want besides the result) go to stderr, and ``-q`` silences them
  (:class:`Notes`).
- On invalid input (exit 2) a json or yaml run also prints the problems as a document on
  stdout (:func:`problems_document`), beside the usual lines on stderr.

Every cell is text, not markup, made printable: names and messages come from the inputs.
No line printed reads as a GitHub Actions workflow command (:func:`inert`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from gatewayctl import lazy
from gatewayctl.errors import Problem, printable

if TYPE_CHECKING:  # rich loads when something is printed: ``--help`` builds the options only
    from rich.console import Console
    from rich.text import Text

    Cell = str | Text

DOCUMENT_FORMATS = frozenset({"json", "yaml"})
"""The formats that print a document (and, on invalid input, the problems as one)."""
PADDING = 2
"""Spaces between columns (argocd's ``tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)``)."""


def format_option(
    command: argparse.ArgumentParser,
    choices: Sequence[str],
    *,
    help: str,
    short: bool = True,
) -> None:
    """``-o``/``--output``/``--format FORMAT`` (``dest="format"``, the first choice the
    default); ``short=False``: ``--format`` alone, for a command whose ``-o``/``--output``
    names a file."""
    flags = ["-o", "--output", "--format"] if short else ["--format"]
    command.add_argument(
        *flags, dest="format", choices=list(choices), default=choices[0], help=help
    )


def is_document(args: argparse.Namespace) -> bool:
    return getattr(args, "format", None) in DOCUMENT_FORMATS


def json_text(document: Any) -> str:
    """The document as JSON: indented, keys sorted, ASCII only, one newline at the end."""
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


def yaml_text(document: Any) -> str:
    """The same document as YAML (keys sorted; block style; no tags)."""
    # only when asked for: ``--help`` loads no YAML library (tests/test_startup.py)

    return lazy.yaml.safe_dump(
        document, sort_keys=True, default_flow_style=False, allow_unicode=True, width=1000
    )


def document_text(document: Any, format: str) -> str:
    return yaml_text(document) if format == "yaml" else json_text(document)


def inert(line: str) -> str:
    """``line`` as a GitHub Actions runner reads no workflow command from it: the runner takes
    a line whose text after leading white space starts with ``::`` as one (``::error::``,
    ``::add-mask::``, ``::stop-commands::``; actions/runner ``ActionCommand.TryParseV2``), and
    a name from the state or the inputs may start so. Its first ``:`` is escaped as the
    runner's own escaping writes it (``%3A``); every other line is returned as it is."""
    stripped = line.lstrip()
    if not stripped.startswith("::"):
        return line
    at = len(line) - len(stripped)
    return line[:at] + "%3A" + line[at + 1 :]


def inert_text(text: str) -> str:
    """Every line of ``text`` :func:`inert`."""
    if "::" not in text:
        return text
    return "".join(inert(line) for line in text.splitlines(keepends=True))


def write(text: str) -> None:
    """``text`` to stdout as it is (rich would read ``[x]`` as markup), each line
    :func:`inert`."""
    sys.stdout.write(inert_text(text))
    sys.stdout.flush()


def print_document(document: Any, format: str) -> None:
    write(document_text(document, format))


def problems_document(problems: Iterable[Problem]) -> dict[str, Any]:
    """``{"problems": [...]}``: each problem's path, line and column (null when not known),
    field (empty: the whole file), message, and ``text``, the line stderr shows after
    ``error: ``."""
    return {
        "problems": [
            {
                "path": p.path,
                "line": p.line,
                "column": p.column,
                "field": p.field,
                "message": p.message,
                "text": str(p),
            }
            for p in problems
        ]
    }


def usage_document(message: str) -> dict[str, Any]:
    """A command line the tool cannot use (a usage error), as :func:`problems_document` has
    it: one problem of no file (``path`` null, ``field`` empty)."""
    problem = {"path": None, "line": None, "column": None, "field": "", "message": message}
    return {"problems": [{**problem, "text": message}]}


def requested_format(argv: Sequence[str]) -> str | None:
    """The document format a command line asks for (``-o``/``--output``/``--format`` ``json``
    or ``yaml``, the last one given), read from the words themselves: for a command line the
    parser refused, which has no parsed format."""
    found = None
    for index, word in enumerate(argv):
        flag, equals, value = word.partition("=")
        if not equals:
            if word.startswith("-o") and len(word) > 2 and not word.startswith("--"):
                flag, value = "-o", word[2:]
            elif index + 1 < len(argv):
                value = argv[index + 1]
        if flag in {"-o", "--output", "--format"} and value in DOCUMENT_FORMATS:
            found = value
    return found


class Notes:
    """Notes on stderr, unless ``quiet``. ``shown`` keeps each note's text (without the
    ``note: `` it is printed with), for a document that lists them."""

    def __init__(self, quiet: bool = False) -> None:
        self.quiet = quiet
        self.console = lazy.rich_console.Console(stderr=True, highlight=False, emoji=False)
        self.shown: list[str] = []

    def __call__(self, text: str) -> None:
        """``note: <text>``."""
        self.shown.append(text)
        self.line(f"note: {text}")

    def line(self, text: str) -> None:
        """A line as it is (not kept in ``shown``)."""
        if not self.quiet:
            self.console.print(inert_text(text), markup=False, soft_wrap=True)


def text_of(cell: Cell) -> lazy.rich_text.Text:
    """A cell as text: a ``Text`` as it is, a string made printable."""

    return cell if isinstance(cell, lazy.rich_text.Text) else lazy.rich_text.Text(printable(cell))


def columns(header: Sequence[str], rows: Sequence[Sequence[Cell]]) -> list[lazy.rich_text.Text]:
    """Lines of padded columns; the last column is not padded, no line ends in spaces."""

    lines = [[lazy.rich_text.Text(h) for h in header], *[[text_of(c) for c in row] for row in rows]]
    widths = [
        max(lazy.rich_cells.cell_len(line[i].plain) for line in lines) for i in range(len(header))
    ]
    result: list[lazy.rich_text.Text] = []
    for line in lines:
        out = lazy.rich_text.Text()
        for i, cell in enumerate(line):
            out.append_text(cell)
            if i < len(line) - 1:
                out.append(" " * (widths[i] - lazy.rich_cells.cell_len(cell.plain) + PADDING))
        out.rstrip()
        result.append(out)
    return result


def show(console: Console, lines: Iterable[lazy.rich_text.Text | str]) -> None:
    """Each line whole: no wrapping, no cropping, whatever the console's width."""

    for line in lines:
        shown = line if isinstance(line, lazy.rich_text.Text) else lazy.rich_text.Text(line)
        if inert(shown.plain) != shown.plain:  # escaped where it starts, styles kept
            at = len(shown.plain) - len(shown.plain.lstrip())
            shown = shown[:at] + lazy.rich_text.Text("%3A") + shown[at + 1 :]
        console.print(shown, soft_wrap=True, crop=False, overflow="ignore")

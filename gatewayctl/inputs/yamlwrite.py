"""YAML as the render writes it (the manifests, the diff's scrubbed ones): PyYAML's bytes with
keys sorted, block style and multi-line strings as literal blocks, written directly for what a
manifest holds and by PyYAML for anything else (:func:`dump_yaml`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

# libyaml's emitter when PyYAML was built with it (six times faster; same bytes).
_BaseDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Dumper(_BaseDumper):  # type: ignore[valid-type,misc]
    """Multi-line strings (gateway.toml, PEM blocks) as literal blocks, readable in review."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def dump_yaml(obj: Mapping[str, Any]) -> str:
    """YAML as the render writes it: keys sorted, block style, multi-line strings literal.

    PyYAML's bytes (``yaml.dump`` with :class:`_Dumper`), written directly where the document is
    made of what a manifest holds (:func:`_written`); PyYAML writes the rest itself."""
    document = dict(obj)
    try:
        return _written(document)
    except _NotDirectError:
        return _pyyaml(document)


def _pyyaml(obj: Any) -> str:
    text: str = yaml.dump(obj, Dumper=_Dumper, sort_keys=True, default_flow_style=False, width=1000)
    return text


class _NotDirectError(Exception):
    """A document :func:`_written` leaves to PyYAML."""


_CACHED_CHARS = 256
"""Scalars up to this length keep their written form (a manifest repeats its keys and most of
its values); longer ones (PEM blocks, gateway.toml) are asked of PyYAML each time."""
_CACHED_ENTRIES = 65_536
_LONGEST_LINE = 512
"""PyYAML folds a quoted or plain scalar at a space past ``width`` columns: one that long, whose
fold would depend on its column, is left to PyYAML with its document."""
_DEEPEST = 256
"""Columns of indentation written directly: with a key of at most 128 characters and a line of
at most ``_LONGEST_LINE``, no line reaches ``width`` (1,000), where PyYAML would fold it."""
_values: dict[str, tuple[str, tuple[str, ...] | None]] = {}
_keys: dict[str, str] = {}


def _written(document: dict[str, Any]) -> str:
    """``_pyyaml(document)``'s text for a non-empty mapping of mappings, lists, ``str``, ``int``,
    ``bool`` and None (those exact types), with string keys and no container met twice (PyYAML
    writes an anchor for that); :class:`_NotDirectError` otherwise.

    The layout is PyYAML's block style: a mapping's keys sorted, each nested mapping two spaces
    in, a list in a mapping not indented (``- `` under the key), a list in a list two spaces
    in, empty collections as ``{}`` and ``[]``. How each key and string is written (plain or
    quoted, escaped, a literal block and its indicator) is PyYAML's own answer for a one-entry
    document (:func:`_scalar`, :func:`_key`), kept per string: libyaml chooses a scalar's style
    from its text and its context alone, and in block context a mapping value and a list item
    are the same context. ``tests/test_yaml_writer.py`` compares both writers on generated
    documents and on every golden manifest."""
    if not document:
        raise _NotDirectError
    out: list[str] = []
    _mapping(document, 0, "", out, set())
    return "".join(out)


def _mapping(
    value: dict[Any, Any], column: int, first: str, out: list[str], seen: set[int]
) -> None:
    """``value``'s entries, keys at ``column``; the first entry's line starts with ``first``
    instead of spaces when given (a list item's mapping starts on its dash's line)."""
    _once(value, seen)
    if column > _DEEPEST:
        raise _NotDirectError
    for key in value:
        if type(key) is not str:
            raise _NotDirectError
    pad = " " * column
    for number, key in enumerate(sorted(value)):
        out.append((first if first and number == 0 else pad) + _key(key) + ":")
        _node(value[key], column, False, out, seen)


def _sequence(value: list[Any], column: int, first: str, out: list[str], seen: set[int]) -> None:
    """``value``'s items, dashes at ``column``; the first item as in :func:`_mapping`."""
    _once(value, seen)
    pad = " " * column
    for number, item in enumerate(value):
        out.append((first if first and number == 0 else pad) + "-")
        _node(item, column, True, out, seen)


def _node(value: Any, column: int, item: bool, out: list[str], seen: set[int]) -> None:
    """One value after the colon of a key at ``column`` or after the dash of a list ``item``
    there: a scalar on the same line (a literal block's lines at ``column`` + 2); a mapping's
    keys at ``column`` + 2, on the lines below (a list item's first one on the dash's line); a
    list in a mapping on the lines below, its dashes at ``column`` (PyYAML does not indent it),
    a list in a list on the dash's line, its dashes at ``column`` + 2."""
    kind = type(value)
    if kind is str:
        text, block = _scalar(value)
        out.append(" " + text + "\n")
        if block is not None:
            pad = " " * (column + 2)
            out.extend(pad + line + "\n" if line else "\n" for line in block)
    elif kind is bool:
        out.append(" true\n" if value else " false\n")
    elif kind is int:
        out.append(f" {value}\n")
    elif value is None:
        out.append(" null\n")
    elif kind is dict or kind is list:
        mapping = kind is dict
        if not value:
            _once(value, seen)
            out.append(" {}\n" if mapping else " []\n")
            return
        write = _mapping if mapping else _sequence
        if item:
            write(value, column + 2, " ", out, seen)
        else:
            out.append("\n")
            write(value, column + 2 if mapping else column, "", out, seen)
    else:
        raise _NotDirectError


def _once(container: Any, seen: set[int]) -> None:
    """PyYAML writes a mapping or list met a second time as an alias of the first: left to it."""
    if id(container) in seen:
        raise _NotDirectError
    seen.add(id(container))


def _scalar(text: str) -> tuple[str, tuple[str, ...] | None]:
    """How PyYAML writes ``text`` as a value in block context: the line's text and, for a
    literal block (``|``, ``|-``, ``|+``, with an indentation indicator where the text starts
    with a space), the block's lines without their indentation ("" for an empty line)."""
    known = _values.get(text)
    if known is not None:
        return known
    written = _pyyaml({"k": text})
    if not written.startswith("k: "):
        raise _NotDirectError
    head, _, rest = written[3:].partition("\n")
    if not rest:  # one line
        if len(written) > _LONGEST_LINE:
            raise _NotDirectError
        known = (head, None)
    elif head.startswith("|"):
        lines = rest.split("\n")
        if lines.pop() != "":
            raise _NotDirectError
        if any(line and not line.startswith("  ") for line in lines):
            raise _NotDirectError
        known = (head, tuple(line[2:] for line in lines))
    else:  # a folded quoted scalar
        raise _NotDirectError
    if len(text) <= _CACHED_CHARS:
        if len(_values) >= _CACHED_ENTRIES:
            _values.clear()
        _values[text] = known
    return known


def _key(text: str) -> str:
    """How PyYAML writes ``text`` as a simple mapping key (a longer or multi-line key, which it
    writes as ``? `` and the key below, is left to it)."""
    known = _keys.get(text)
    if known is not None:
        return known
    written = _pyyaml({text: 0})
    if not written.endswith(": 0\n") or written.startswith("?") or written.count("\n") != 1:
        raise _NotDirectError
    known = written[: -len(": 0\n")]
    if len(text) <= _CACHED_CHARS:
        if len(_keys) >= _CACHED_ENTRIES:
            _keys.clear()
        _keys[text] = known
    return known

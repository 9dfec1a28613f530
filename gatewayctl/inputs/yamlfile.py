"""Read one YAML file of the project (a stack file, a declaration, the operator settings).

The reader is the edge hostile input meets first, so every cost is bounded before it is paid
and every failure is a ``Problem`` (exit 2), never an exception of the YAML library:

- size: at most ``MAX_FILE_BYTES`` are read; a larger file is refused unparsed;
- shape: nesting deeper than ``MAX_DEPTH`` or more than ``MAX_NODES`` nodes stop the parse
  where they occur (libyaml scans and parses, so a long scalar costs milliseconds; nodes are
  composed here, one at a time, so the limits hold before anything is built); aliases may
  not expand to more than ``MAX_VALUES`` values;
- values: a scalar that YAML resolves to a type but that does not convert (``!!int ten``,
  ``2026-02-30``, ``0x_``, ``!!binary`` that is not base64) is a problem of its field, with
  its line.

No message quotes the input, except a duplicate key outside secrets: a stack file holds
secrets, and a syntax error cannot tell whether its line is one. Below ``clusterSecrets``
field paths stop at the secret's name (``clusterSecrets.<cluster>.<name>``): deeper keys are
part of the value. The library's problems are reworded, and located, by
:mod:`gatewayctl.inputs.yamlproblems`.

Written YAML (the render's manifests, the diff's scrubbed ones) comes from :func:`dump_yaml`.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.error import MarkedYAMLError
from yaml.events import Event
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import BaseResolver, Resolver

from gatewayctl.errors import InvalidInputError, Problem
from gatewayctl.inputs.yamlproblems import at, conversion_problem, path_to, syntax_problem

try:
    from yaml._yaml import CParser

    LIBYAML = True
except ImportError:  # PyYAML built without libyaml: the same events, parsed in Python
    LIBYAML = False

MAX_FILE_BYTES = 1024 * 1024
"""A declaration or a stack file is a few kilobytes; 1 MiB is read at most."""
MAX_DEPTH = 32
"""Nesting levels (each mapping or list a value sits in counts one); the deepest committed
file, ``Pulumi.aws.yaml``, uses 7."""
MAX_NODES = 20_000
"""Scalars, mappings, lists and aliases of one file: ``Pulumi.aws.yaml`` holds 97 for two
clusters, so a stack of a hundred clusters about 5,000."""
MAX_VALUES = 100_000
"""Values a file may expand to: aliases can make a few lines stand for billions."""

SECRETS_KEY = "clusterSecrets"
"""Config key whose values are secrets two levels down: ``<cluster>.<name>: <secret>``."""
_SECURE = "secure"
"""Key of a ``secure:`` (encrypted) config value."""

_MERGE_TAG = "tag:yaml.org,2002:merge"


class _LimitError(MarkedYAMLError):
    """A limit reached while composing: the message is ours, without input."""


class _Unconvertible(yaml.YAMLError):
    """A node whose tag's constructor failed (``int('ten')``, ``date(2026, 2, 30)``)."""

    def __init__(self, node: Node):
        super().__init__()
        self.node = node


class _DuplicateKey(yaml.YAMLError):
    def __init__(self, node: Node, key: Hashable):
        super().__init__()
        self.node = node
        self.key = key


class _PythonParser(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser):
    def __init__(self, text: str):
        yaml.reader.Reader.__init__(self, text)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)


class _Reader(Composer, SafeConstructor, Resolver):
    """libyaml's events, composed here under the limits, constructed with SafeConstructor.

    Duplicate mapping keys are refused instead of keeping the last one. Merge keys (``<<:
    *anchor``) keep their YAML meaning: merged keys may be overridden by the mapping's own
    keys, as the Pulumi CLI reads them.
    """

    def __init__(self, text: str):
        self._events: Any = CParser(text) if LIBYAML else _PythonParser(text)
        Composer.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)
        self._depth = 0
        self._nodes = 0
        self.explicit: set[int] = set()
        """Nodes (by id) whose tag is written in the file, not resolved from the value."""

    def check_event(self, *choices: type[Event]) -> bool:
        return bool(self._events.check_event(*choices))

    def peek_event(self) -> Event:
        event: Event = self._events.peek_event()
        return event

    def get_event(self) -> Event:
        event: Event = self._events.get_event()
        return event

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        mark: Any = self.peek_event().start_mark
        self._nodes += 1
        if self._nodes > MAX_NODES:
            raise _LimitError(None, None, f"holds more than {MAX_NODES:,} values", mark)
        if self._depth >= MAX_DEPTH:
            raise _LimitError(None, None, f"nests deeper than {MAX_DEPTH} levels", mark)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def compose_scalar_node(self, anchor: Any) -> ScalarNode:
        tag = self.peek_event().tag  # type: ignore[attr-defined]
        node = super().compose_scalar_node(anchor)
        if tag not in (None, "!"):
            self.explicit.add(id(node))
        return node

    def construct_object(self, node: Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except yaml.YAMLError:
            raise
        except (ValueError, TypeError, LookupError, AttributeError, ArithmeticError):
            # SafeConstructor lets the conversion's own error out, quoting the value.
            raise _Unconvertible(node) from None


def _construct_mapping(loader: _Reader, node: Node) -> dict[Any, Any]:
    if not isinstance(node, MappingNode):
        found = "sequence" if isinstance(node, SequenceNode) else "scalar"
        raise ConstructorError(None, None, f"expected a mapping, found a {found}", node.start_mark)
    seen: set[Any] = set()
    for key_node, _ in node.value:
        if key_node.tag == _MERGE_TAG:
            continue
        if not isinstance(key_node, ScalarNode):
            raise ConstructorError(
                None, None, "mapping keys must be plain scalars", key_node.start_mark
            )
        key = loader.construct_object(key_node)
        if key in seen:
            raise _DuplicateKey(key_node, key)
        seen.add(key)
    return loader.construct_mapping(node)


_Reader.add_constructor(BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)  # type: ignore[type-var]


# --- problems of a document that does not build ---------------------------------------------


def _secret_depth(path: list[str]) -> int | None:
    """How many components of ``path`` may be shown when it leads into a secret, else None."""
    for i, key in enumerate(path):
        if key.lower().endswith(SECRETS_KEY.lower()):
            return i + 3  # clusterSecrets.<cluster>.<name>
        if key == _SECURE:
            return i + 1
    return None


def _field(path: list[str]) -> str:
    shown = _secret_depth(path)
    return ".".join(path if shown is None else path[:shown])


def _construction_problem(
    loader: _Reader, root: Node, display: str, error: yaml.YAMLError
) -> Problem:
    """A document that could not be built. A value that does not convert is a problem of its
    field, with its line; anything else is invalid YAML, as a syntax error is."""
    if isinstance(error, _Unconvertible | _DuplicateKey):
        wanted = error.node
        located = path_to(root, lambda node: node is wanted)
    elif str(getattr(error, "problem", "")).startswith("failed to "):  # !!binary, not base64
        mark = getattr(error, "problem_mark", None)
        located = path_to(root, lambda node: node.start_mark is mark)
    else:
        located = None
    if located is None:
        return syntax_problem(display, error)
    node, path, is_key = located
    if isinstance(error, _DuplicateKey):
        shown = _secret_depth(path)
        key = "" if shown is not None and len(path) > shown else f" {error.key!r}"
        return at(display, "", f"invalid YAML: duplicate key{key}", node.start_mark)
    message = conversion_problem(node, explicit=id(node) in loader.explicit)
    if is_key:
        message = message.replace("invalid value:", "invalid key:", 1)
        path = path[:-1]
    return at(display, _field(path), message, node.start_mark)


def _expands_beyond(value: Any, budget: int) -> bool:
    """True when ``value``, with every alias expanded, holds more than ``budget`` values."""
    stack, seen = [value], 0
    while stack:
        item = stack.pop()
        seen += 1
        if seen > budget:
            return True
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


# --- reading --------------------------------------------------------------------------------


def _read_text(path: Path, display: str) -> str:
    try:
        with path.open("rb") as stream:
            data = stream.read(MAX_FILE_BYTES + 1)
    except OSError as error:
        raise InvalidInputError([Problem(display, "", f"cannot read: {error.strerror}")]) from None
    if len(data) > MAX_FILE_BYTES:
        raise InvalidInputError(
            [
                Problem(
                    display,
                    "",
                    f"is larger than {MAX_FILE_BYTES:,} bytes (1 MiB), the most a declaration"
                    " or a stack file may hold; it is not read",
                )
            ]
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInputError([Problem(display, "", "not UTF-8 text")]) from None


def read_yaml_mapping(path: Path, display: str) -> dict[str, Any]:
    """Parse a YAML file that must hold one mapping; problems raise InvalidInputError.

    A problem of a value names its field as the dotted path from the top of the file.
    """
    return parse_yaml_mapping(_read_text(path, display), display)


def parse_yaml_mapping(text: str, display: str) -> dict[str, Any]:
    """:func:`read_yaml_mapping` for text already read (a file of an older git commit, a stack
    file edited in memory): the same limits, the same problems, named after ``display``."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_FILE_BYTES:
        raise InvalidInputError(
            [Problem(display, "", f"is larger than {MAX_FILE_BYTES:,} bytes (1 MiB); not read")]
        )
    loader = _Reader(text)
    try:
        roots: list[Node] = []
        while loader.check_node():
            root = loader.get_node()
            if root is not None:
                roots.append(root)
    except yaml.YAMLError as error:
        if isinstance(error, _LimitError):
            message = f"{error.problem}; not read further"
            raise InvalidInputError([at(display, "", message, error.problem_mark)]) from None
        raise InvalidInputError([syntax_problem(display, error)]) from None
    if len(roots) > 1:
        raise InvalidInputError(
            [Problem(display, "", "holds several documents; expected one YAML mapping")]
        )
    try:
        document = loader.construct_document(roots[0]) if roots else None
    except yaml.YAMLError as error:
        raise InvalidInputError([_construction_problem(loader, roots[0], display, error)]) from None
    if document is None:
        raise InvalidInputError([Problem(display, "", "is empty; expected one YAML mapping")])
    if not isinstance(document, dict):
        kind = type(document).__name__
        raise InvalidInputError([Problem(display, "", f"expected a YAML mapping, found {kind}")])
    if _expands_beyond(document, MAX_VALUES):
        raise InvalidInputError(
            [Problem(display, "", f"expands to more than {MAX_VALUES:,} values (YAML aliases?)")]
        )
    return document


def compose_yaml(text: str) -> Node | None:
    """The node tree of ``text`` (its one document), composed under the same limits as
    :func:`parse_yaml_mapping`, for finding where a field is written
    (:mod:`gatewayctl.inputs.locations`); None when the text is not one YAML document."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_FILE_BYTES:
        return None
    try:
        loader = _Reader(text)
        root = loader.get_single_node()
    except yaml.YAMLError:
        return None
    return root


# --- writing ----------------------------------------------------------------------------------


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
    elif kind is dict:
        if not value:
            _once(value, seen)
            out.append(" {}\n")
        elif item:
            _mapping(value, column + 2, " ", out, seen)
        else:
            out.append("\n")
            _mapping(value, column + 2, "", out, seen)
    elif kind is list:
        if not value:
            _once(value, seen)
            out.append(" []\n")
        elif item:
            _sequence(value, column + 2, " ", out, seen)
        else:
            out.append("\n")
            _sequence(value, column, "", out, seen)
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

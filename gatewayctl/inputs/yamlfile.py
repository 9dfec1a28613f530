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

Written YAML (the render's manifests, the diff's scrubbed ones) comes from
:func:`gatewayctl.inputs.yamlwrite.dump_yaml`.
"""

from __future__ import annotations

from collections.abc import Hashable
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

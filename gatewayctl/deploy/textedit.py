"""Files in git edited as text, not re-serialised, so comments, key order, quoting and layout
stay byte for byte: where a key sits is read from PyYAML's node marks (``yaml.compose``) after
the strict reader has accepted the file, and the edited file replaces the old one in one rename
(:func:`replace`), never half-written. ``promote`` edits a stack file's bindings so, ``rotate``
a declaration's counters."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from yaml.nodes import MappingNode, Node, ScalarNode

from gatewayctl import interrupts
from gatewayctl.engine import write_guard
from gatewayctl.errors import InvalidInputError, Problem


def value(mapping: MappingNode, key: str) -> tuple[ScalarNode, Node] | None:
    """The key's node and its value's, or None when ``mapping`` has no such key."""
    for key_node, found in mapping.value:
        if isinstance(key_node, ScalarNode) and key_node.value == key:
            return key_node, found
    return None


def is_alias(key: Node, found: Node) -> bool:
    """A value that does not follow its key in the text is an alias (``*name``) of a node
    written elsewhere: editing it would change every place that uses it."""
    return found.start_mark.index < key.end_mark.index


def line_offset(text: str, line: int) -> int:
    """The index where ``line`` (0-based) starts; the end of the text past its last line."""
    offset = 0
    for _ in range(line):
        found = text.find("\n", offset)
        if found < 0:
            return len(text)
        offset = found + 1
    return offset


def newline(text: str) -> str:
    """The file's own line ending."""
    return "\r\n" if "\r\n" in text else "\n"


def replace(root: Path, display: str, text: str, by_hand: str) -> None:
    """Replace the file ``display`` with ``text`` in one rename: a reader sees the old file or
    the new one, never a part; an error or an interrupt before the rename leaves the old file
    and no temporary one. The file keeps its permissions (a stack file may hold plaintext
    secrets). A symbolic link is refused (``by_hand``: what to edit instead)."""
    path = root / display
    if path.is_symlink():
        raise InvalidInputError([Problem(display, "", f"is a symbolic link; {by_hand}")])
    mode = stat.S_IMODE(path.stat().st_mode)
    # As write_guard.write_file, but keeping the file's mode: a temporary file beside it, renamed
    # over the old one in one rename (undone if the command fails later).
    with interrupts.transaction():
        with interrupts.deferred():
            handle, name = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
            temporary = Path(name)
            interrupts.undo(lambda: temporary.unlink(missing_ok=True))
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        temporary.chmod(mode)
        write_guard.replace_file(temporary, path)

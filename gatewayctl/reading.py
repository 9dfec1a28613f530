"""Files the tool reads but did not write, read to a bound: an existing output it checks before
overwriting it, a directory's marker, a file ``status --from`` names. A file of gigabytes (or
a device that never ends, ``/dev/zero``) is a clear problem, never a ``MemoryError``: at most
``limit`` bytes and one more are read, whatever the file's size says.
"""

from __future__ import annotations

from pathlib import Path

MIB = 1024 * 1024
EXISTING_LIMIT = 128 * MIB
"""An existing file an output would replace, or an output directory's marker: none the tool
writes comes near it (a diff report is cut to 60,000 characters unless ``--no-limit``)."""
STATUS_LIMIT = 512 * MIB
"""A file ``status --from`` names: the test state's resources average 1.5 KB (40,000 of them
57 MiB); a cluster's live objects are larger, hence the margin."""


class TooLargeError(ValueError):
    """A file larger than ``limit`` bytes (a ``ValueError``: the output checks report it as a
    path they cannot use)."""

    def __init__(self, path: Path, limit: int):
        super().__init__(f"{path.name} is larger than the {size_text(limit)} this reads")
        self.limit = limit


def size_text(size: int) -> str:
    """``size`` bytes for people: ``512 MiB``, ``64 KiB``, ``100 bytes``."""
    if size >= MIB and size % MIB == 0:
        return f"{size // MIB} MiB"
    if size >= 1024 and size % 1024 == 0:
        return f"{size // 1024} KiB"
    return f"{size} bytes"


def read_bounded(path: Path, limit: int) -> bytes:
    """The bytes of ``path``, at most ``limit``; :class:`TooLargeError` beyond (its size is
    not trusted: a file may grow, a device has none). ``OSError`` as ``open`` raises it."""
    with path.open("rb") as file:
        data = file.read(limit + 1)
    if len(data) > limit:
        raise TooLargeError(path, limit)
    return data


def read_text(path: Path, limit: int) -> str:
    """:func:`read_bounded` as text (UTF-8, an undecodable byte replaced)."""
    return read_bounded(path, limit).decode("utf-8", errors="replace")

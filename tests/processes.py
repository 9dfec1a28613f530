"""Processes as ``/proc`` shows them (Linux): the tests of workers and interrupts watch their
own children there (psutil is a benchmark's dependency, not the tests')."""

from __future__ import annotations

from pathlib import Path


def _stat(entry: Path) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command's name (state, parent, ...)."""
    try:
        return (entry / "stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def children(pid: int) -> list[int]:
    """The live (not zombie) processes whose parent is ``pid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat(entry)
            if fields is not None and int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not)."""
    fields = _stat(Path(f"/proc/{pid}"))
    return fields is not None and fields[0] != "Z"

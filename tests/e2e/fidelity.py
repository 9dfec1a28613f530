"""Render fidelity's comparison of one rendered object with the live one (issue 42 item 11).

Three rules beyond "every rendered field is live with its value":
- **typed**: a value matches only a live value of the same JSON type (``"1"`` is not ``1``,
  ``true`` is not ``1``); quantities are compared by amount only where Kubernetes stores a
  quantity canonically (under ``resources``: ``1000m`` is ``1``);
- **empties**: an empty map or list the render sets is a field, and the live one must be empty
  too (``podSelector: {}`` narrowed to a label is a mismatch, not a skipped field);
- **both ways**: a list the render sets has no more entries live, and a map of the names the
  render owns (labels, selectors, data) has no more keys live, except the ones the API server
  itself adds (:data:`SERVER_ADDED`, each with its source).

A redacted value (a Secret's key the render does not print) is still a field: live, the key
must be there and hold something.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

Path = tuple[Any, ...]

# Maps whose every key the render owns: a key added live is someone else's.
OWNED_MAPS = frozenset({"labels", "matchLabels", "podSelector", "data", "stringData", "selector"})

# (kind, map name) → keys the API server adds itself.
SERVER_ADDED: dict[tuple[str, str], frozenset[str]] = {
    # kubernetes/kubernetes pkg/registry/core/namespace/strategy.go, PrepareForCreate: the
    # NamespaceDefaultLabelName label, kubernetes.io/metadata.name, set to the name.
    ("Namespace", "labels"): frozenset({"kubernetes.io/metadata.name"}),
}

QUANTITY_PARENTS = frozenset({"limits", "requests"})


def leaves(value: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Every scalar of ``value`` with its path (lists by index), and every empty map or list
    as a value of its own."""
    if isinstance(value, Mapping):
        if not value:
            yield path, {}
        for key, item in value.items():
            yield from leaves(item, (*path, key))
    elif isinstance(value, list):
        if not value:
            yield path, []
        for index, item in enumerate(value):
            yield from leaves(item, (*path, index))
    else:
        yield path, value


def same(path: Path, rendered: Any, live: Any) -> bool:
    """The typed comparison (module docstring)."""
    if type(rendered) is type(live) and rendered == live:
        return True
    if len(path) >= 2 and path[-2] in QUANTITY_PARENTS:
        amount = quantity(rendered)
        return amount is not None and amount == quantity(live)
    return False


def quantity(value: Any) -> float | None:
    """The amount of a Kubernetes quantity (``"500m"``, ``"1Gi"``, ``2``), None if not one."""
    suffixes = {"m": 1e-3, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "k": 1e3, "M": 1e6, "G": 1e9}
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    text = str(value)
    for suffix in sorted(suffixes, key=len, reverse=True):
        if text.endswith(suffix):
            text, scale = text[: -len(suffix)], suffixes[suffix]
            break
    else:
        scale = 1
    try:
        return float(text) * scale
    except ValueError:
        return None


def extras(kind: str, rendered: Any, live: Any, path: Path = ()) -> Iterator[str]:
    """What the live object holds beyond the render in the lists it sets and the maps it owns
    (module docstring), one line per finding."""
    if isinstance(rendered, Mapping) and isinstance(live, Mapping):
        name = path[-1] if path else None
        if name in OWNED_MAPS:
            allowed = set(rendered) | SERVER_ADDED.get((kind, str(name)), frozenset())
            if kind == "Secret" and name == "data":
                return  # compared with stringData and data together by the caller
            for key in sorted(set(live) - allowed):
                yield f"{'.'.join(map(str, (*path, key)))}: added live"
        for key, item in rendered.items():
            if key in live:
                yield from extras(kind, item, live[key], (*path, key))
    elif isinstance(rendered, list) and isinstance(live, list):
        if len(live) > len(rendered):
            yield (
                f"{'.'.join(map(str, path))}: {len(live) - len(rendered)} more entries live"
                f" ({len(rendered)} rendered)"
            )
        for index, item in enumerate(rendered[: len(live)]):
            yield from extras(kind, item, live[index], (*path, index))


def secret_keys(rendered: Mapping[str, Any], live: Mapping[str, Any]) -> list[str]:
    """A Secret's keys live beyond the ones the render sets in ``data`` and ``stringData``."""
    declared = set(rendered.get("data") or {}) | set(rendered.get("stringData") or {})
    return [f"data.{key}: added live" for key in sorted(set(live.get("data") or {}) - declared)]

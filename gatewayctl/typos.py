"""Unknown fields: the known one a typo most likely meant, and the problems the typo caused
(issue 25 item 4).

A misspelt key is two problems to pydantic: the key is unknown, and the field it meant is
missing (``metdata`` leaves ``metadata`` out) or, with ``validate_default``, its default is
wrong (``vualt`` leaves ``vault`` unset while the driver needs it). :func:`meant` names the
closest field of the model at that place that the mapping does not already hold, and
``gatewayctl.errors.from_validation_error`` drops every problem of that absent field: the
"did you mean" says it.

Names are compared by :func:`difflib.get_close_matches` with the cutoff of ``gatewayctl
explain`` (0.75), case and ``_``/``-`` aside (``deletion_policy``, ``DeletionPolicy``).
"""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

CUTOFF = 0.75
"""How close a name must be (difflib's ratio) to be suggested: ``replica`` → ``replicas``,
``hots`` → ``host``, but ``colour`` suggests nothing (``cluster`` is 0.62)."""

Loc = tuple[str | int, ...]


def meant(model: type, loc: Loc, document: object) -> str | None:
    """The field of ``model`` at ``loc``'s parent that the unknown key at ``loc`` most likely
    meant, among those its mapping in ``document`` does not already hold; None when no field
    is close enough. For the unknown keys of one document, :class:`Suggestions`."""
    return Suggestions(model, document).meant(loc)


class Suggestions:
    """:func:`meant` for the unknown keys of one ``document`` validated as ``model``: each
    mapping's candidates (the fields it does not hold) are found once, so that each key costs
    a comparison with the few field names, however many keys its mapping holds (issue 42
    item 15)."""

    def __init__(self, model: type, document: object) -> None:
        self._model = model
        self._document = document
        self._candidates: dict[Loc, dict[str, str]] = {}

    def meant(self, loc: Loc) -> str | None:
        """The field the unknown key at ``loc`` most likely meant (:func:`meant`)."""
        *parent, key = loc
        if not isinstance(key, str):
            return None
        return _closest_folded(key, self._candidates_at(tuple(parent)))

    def _candidates_at(self, parent: Loc) -> dict[str, str]:
        """The fields of the mapping at ``parent`` it does not hold, by folded name."""
        found = self._candidates.get(parent)
        if found is None:
            names = field_names(self._model, parent)
            written = _mapping_at(self._document, parent) if names else set()
            found = _folded([name for name in names if name not in written])
            self._candidates[parent] = found
        return found


def closest(key: str, candidates: Sequence[str]) -> str | None:
    """The candidate closest to ``key`` (case, ``_`` and ``-`` aside), if close enough."""
    return _closest_folded(key, _folded(candidates))


def _folded(candidates: Sequence[str]) -> dict[str, str]:
    """Each candidate by its folded name, the first of those that fold alike."""
    folded: dict[str, str] = {}
    for name in candidates:
        folded.setdefault(_fold(name), name)
    return folded


def _closest_folded(key: str, folded: Mapping[str, str]) -> str | None:
    if not folded:
        return None
    if _fold(key) in folded:
        return folded[_fold(key)]
    found = difflib.get_close_matches(_fold(key), list(folded), n=1, cutoff=CUTOFF)
    return folded[found[0]] if found else None


def _fold(name: str) -> str:
    return name.replace("_", "").replace("-", "").casefold()


def field_names(model: type, loc: Loc) -> list[str]:
    """The YAML names (aliases) of the fields of the model at ``loc`` under ``model``, or []
    when no model is there (a free mapping, a list of strings)."""
    current: list[Any] = [model]
    for part in loc:
        current = [inner for kind in current for inner in _inside(kind, part)]
    models = [kind for kind in current for kind in _leaves(kind) if _is_model(kind)]
    if not models:
        return []
    fields = models[0].model_fields
    return [info.alias or name for name, info in fields.items()]


def _inside(kind: Any, part: str | int) -> Iterator[Any]:
    """What a value of ``kind`` holds at ``part``: a model's field, a mapping's value, a list's
    item."""
    for leaf in _leaves(kind):
        if _is_model(leaf) and isinstance(part, str):
            for name, info in leaf.model_fields.items():
                if part in (info.alias, name):
                    yield info.annotation
        origin, args = typing.get_origin(leaf), typing.get_args(leaf)
        if origin in (dict, Mapping) and len(args) == 2 and isinstance(part, str):
            yield args[1]
        elif origin in (list, tuple, Sequence) and args and isinstance(part, int):
            yield args[0]


def _leaves(kind: Any) -> Iterator[Any]:
    """``kind`` without ``Annotated`` and with each member of a union (``X | None``)."""
    origin = typing.get_origin(kind)
    if origin is typing.Annotated:
        yield from _leaves(typing.get_args(kind)[0])
    elif origin in (typing.Union, types.UnionType):
        for member in typing.get_args(kind):
            yield from _leaves(member)
    else:
        yield kind


def _is_model(kind: Any) -> bool:
    return isinstance(kind, type) and hasattr(kind, "model_fields")


def _mapping_at(document: object, loc: Loc) -> set[str]:
    """The keys of the mapping at ``loc`` in ``document`` (empty when there is none)."""
    current = document
    for part in loc:
        found = isinstance(current, Mapping) and part in current
        indexed = isinstance(current, list) and isinstance(part, int) and part < len(current)
        if not (found or indexed):
            return set()
        current = current[part]  # type: ignore[index]
    return {str(key) for key in current} if isinstance(current, Mapping) else set()

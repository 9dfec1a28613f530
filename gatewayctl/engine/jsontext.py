"""``plan.json``'s JSON text, encoded in C.

``json.dumps(value, indent=2, sort_keys=True)`` is what the render has always written, but with
``indent`` CPython's ``json`` leaves its C encoder for a pure-Python one: 3.3 s of a 57 MB plan
(1,000 gateways), a sixth of a cached one-gateway diff. orjson writes the same layout in C
(0.1 s): two-space indentation, one item per line ending in a bare comma, ``": "`` between a
key and its value, ``[]`` and ``{}`` for empty containers, keys sorted. Its tokens can differ
from ``json``'s: non-ASCII text (``json`` escapes it, ``ensure_ascii``), floats (``1e-05`` and
``1e+16`` there, ``1e-5`` and ``1e16`` here), NaN (``NaN`` there, ``null`` here), integers
beyond 64 bits (refused here). So each call also encodes ``value`` compactly with both,
``json``'s C encoder with ``allow_nan=False``: equal bytes mean every token is written alike,
and the indented text is then ``json``'s too; otherwise (or when either refuses the value) the
text is ``json``'s own. ``tests/test_jsontext.py`` holds both to ``json.dumps`` on the golden
plans, on each kind of difference and on generated values.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

_INDENTED = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS
_COMPACT = orjson.OPT_SORT_KEYS


def indented(value: Any) -> str:
    """``json.dumps(value, indent=2, sort_keys=True)``, byte for byte (see the module)."""
    try:
        same = orjson.dumps(value, option=_COMPACT) == json.dumps(
            value, sort_keys=True, separators=(",", ":"), allow_nan=False
        ).encode("ascii")
    except (TypeError, ValueError):  # orjson.JSONEncodeError is a TypeError
        same = False
    if not same:
        return json.dumps(value, indent=2, sort_keys=True)
    return orjson.dumps(value, option=_INDENTED).decode("ascii")

"""plan.json's text is json.dumps(indent=2, sort_keys=True)'s byte for byte, whoever encodes it
(gatewayctl/engine/jsontext.py): orjson where every token is written alike, json otherwise."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gatewayctl.engine import jsontext

GOLDEN = Path(__file__).parent / "golden"
_DUMPS = json.dumps
"""json's own, before a test records the calls of the module's."""


def _reference(value: Any) -> str:
    return _DUMPS(value, indent=2, sort_keys=True)


@pytest.fixture
def slow_path(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The values ``indented`` gave to json's pure-Python (indented) encoder."""
    seen: list[Any] = []

    def dumps(value: Any, **kwargs: Any) -> str:
        if kwargs.get("indent") is not None:
            seen.append(value)
        return _DUMPS(value, **kwargs)

    monkeypatch.setattr(json, "dumps", dumps)
    return seen


@pytest.mark.parametrize("stack", ["aws", "ibm", "local"])
def test_a_golden_plan_is_written_alike_and_in_c(stack: str, slow_path: list[Any]) -> None:
    text = (GOLDEN / stack / "plan.json").read_text(encoding="utf-8")
    plan = json.loads(text)
    assert jsontext.indented(plan) + "\n" == text
    assert slow_path == []


def test_nested_empty_containers_keep_json_s_layout(slow_path: list[Any]) -> None:
    value = {"b": [[], {}, [{}], {"x": []}], "a": {"": None, "t": True, "f": False}, "n": -3}
    assert jsontext.indented(value) == _reference(value)
    assert jsontext.indented([]) == "[]"
    assert jsontext.indented({}) == "{}"
    assert slow_path == []


@pytest.mark.parametrize(
    "value",
    [
        {"name": "café"},  # json escapes non-ASCII (ensure_ascii); orjson writes UTF-8
        {"del": "\x7f"},  # json escapes DEL too
        {"small": 1e-05, "big": 1e16},  # exponents: 1e-05 / 1e+16 there, 1e-5 / 1e16 in orjson
        {"nan": float("nan")},  # NaN there, null in orjson
        {"inf": [float("inf")]},
        {"big": 2**70},  # orjson refuses integers beyond 64 bits
        {1: "a"},  # json writes a non-string key as a string; orjson refuses it
    ],
    ids=["non-ascii", "del", "exponent", "nan", "infinity", "big-int", "int-key"],
)
def test_each_kind_of_difference_falls_back_to_json(value: Any, slow_path: list[Any]) -> None:
    assert jsontext.indented(value) == _reference(value)
    assert slow_path == [value]


def test_what_json_refuses_is_refused_alike() -> None:
    with pytest.raises(TypeError):
        jsontext.indented({"when": object()})
    with pytest.raises(TypeError):
        jsontext.indented({"a": 1, 2: "b"})  # keys json cannot sort


_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
)
_values = st.recursive(
    _scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(_values)
def test_any_json_value_is_written_as_json_writes_it(value: Any) -> None:
    assert jsontext.indented(value) == _reference(value)

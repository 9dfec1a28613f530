"""A mapping with many unknown keys (issue 42 item 15): each problem is given its "did you
mean" at a cost that does not grow with the number of keys of its mapping: suggesting looks
each mapping up once (``gatewayctl.typos.Suggestions``).

No timing: the number of times a mapping is read is counted; it was one read per problem
(8,000 unknown keys: minutes)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from gatewayctl import typos
from gatewayctl.errors import from_validation_error
from gatewayctl.inputs.gateway import GatewayDeclaration
from tests.builders import declaration


def _unknown(count: int) -> dict[str, int]:
    """``count`` keys no field is close to (each costs one comparison with the fields)."""
    return {f"unknownkey{i:05d}": i for i in range(count)}


def _counted(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> list[int]:
    """Replace ``module.name`` by itself counting its calls, in the one-item list returned."""
    calls = [0]
    original = getattr(module, name)

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counting)
    return calls


def test_a_suggestion_compares_each_unknown_key_with_the_few_fields_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    document = declaration("big", {**_unknown(200), "replica": 2, "hots": "h"})
    compared: list[int] = []
    original = typos.difflib.get_close_matches

    def counting(word: str, possibilities: list[str], *args: Any, **kwargs: Any) -> list[str]:
        compared.append(len(possibilities))
        return original(word, possibilities, *args, **kwargs)

    mappings_read = _counted(monkeypatch, typos, "_mapping_at")
    monkeypatch.setattr(typos.difflib, "get_close_matches", counting)
    with pytest.raises(ValidationError) as caught:
        GatewayDeclaration.model_validate(document, by_alias=True)
    problems = from_validation_error(
        "big.yaml", caught.value, model=GatewayDeclaration, document=document
    )

    assert mappings_read == [1]  # the one mapping, spec, for its 202 unknown keys
    assert len(compared) == 202
    assert max(compared) <= len(typos.field_names(GatewayDeclaration, ("spec",)))
    by_field = {p.field: p.message for p in problems}
    assert by_field["spec.replica"] == "unknown field; did you mean 'replicas'?"
    assert by_field["spec.unknownkey00199"] == "unknown field"
    assert len([p for p in problems if p.message.startswith("unknown field")]) == 202

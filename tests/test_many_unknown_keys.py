"""A mapping with many unknown keys (issue 42 item 15): each problem is located and given its
"did you mean" at a cost that does not grow with the number of keys of its mapping. Locating
reads each mapping's keys once (``gatewayctl.inputs.locations``), suggesting looks each
mapping up once (``gatewayctl.typos.Suggestions``), in declarations and stack files alike.

No timing: the number of times a mapping is read is counted, for two sizes of one input, and
must be the same; it was one read per problem (8,000 unknown keys: minutes)."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from gatewayctl import typos
from gatewayctl.errors import from_validation_error
from gatewayctl.inputs import locations
from gatewayctl.inputs.gateway_declaration import GatewayDeclaration
from gatewayctl.inputs.yamlfile import compose_yaml
from tests.builders import (
    CONFIG_FILE,
    PREFIX,
    cluster,
    declaration,
    write_gateway,
    write_stack,
)
from tests.hostile_helpers import reported_problems, validate_cli

SIZES = (40, 120)


def _unknown(count: int) -> dict[str, int]:
    """``count`` keys no field is close to (each costs one comparison with the fields)."""
    return {f"unknownkey{i:05d}": i for i in range(count)}


def _declaration(root: Path, count: int) -> tuple[str, str]:
    write_stack(root)
    return write_gateway(root, "big", _unknown(count)), "spec.unknownkey"


def _stack_keys(root: Path, count: int) -> tuple[str, str]:
    extra = {PREFIX + key: value for key, value in _unknown(count).items()}
    write_stack(root, extra=extra)
    return CONFIG_FILE, f"{PREFIX}unknownkey"


def _cluster_keys(root: Path, count: int) -> tuple[str, str]:
    write_stack(root, clusters={"east": cluster(**_unknown(count))})
    return CONFIG_FILE, f"{PREFIX}clusters.east.unknownkey"


INPUTS: dict[str, Callable[[Path, int], tuple[str, str]]] = {
    "declaration spec": _declaration,
    "stack file config": _stack_keys,
    "stack file cluster": _cluster_keys,
}


def _counted(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> list[int]:
    """Replace ``module.name`` by itself counting its calls, in the one-item list returned."""
    calls = [0]
    original = getattr(module, name)

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counting)
    return calls


@pytest.mark.parametrize("kind", list(INPUTS))
def test_each_mapping_is_read_once_however_many_unknown_keys_it_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    reads: dict[int, tuple[int, int]] = {}
    for count in SIZES:
        root = tmp_path / str(count)
        path, field = INPUTS[kind](root, count)
        with monkeypatch.context() as patched:
            keys_read = _counted(patched, locations, "_pairs")
            mappings_read = _counted(patched, typos, "_mapping_at")
            outcome = validate_cli(root)
        assert outcome.code == 2, outcome
        problems = reported_problems(outcome.err, [path])
        # Every key is reported, at its own line, one after the other, in the key's column.
        assert [p.rest for p in problems] == [
            f"{field}{i:05d}: unknown {'config key' if 'config' in kind else 'field'}"
            for i in range(count)
        ]
        places = [tuple(map(int, p.location.split(":")[1:])) for p in problems]
        first_line, column = places[0]
        assert places == [(first_line + i, column) for i in range(count)]
        reads[count] = (keys_read[0], mappings_read[0])
    # Before: one read of the mapping's keys per problem located and per suggestion.
    assert reads[SIZES[0]] == reads[SIZES[1]], reads


def test_a_suggestion_compares_each_unknown_key_with_the_few_fields_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    document = declaration("big", {**_unknown(200), "replica": 2, "hots": "h"})
    compared: list[int] = []
    original = difflib.get_close_matches

    def counting(word: str, possibilities: list[str], *args: Any, **kwargs: Any) -> list[str]:
        compared.append(len(possibilities))
        return original(word, possibilities, *args, **kwargs)

    mappings_read = _counted(monkeypatch, typos, "_mapping_at")
    monkeypatch.setattr(difflib, "get_close_matches", counting)
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


def test_the_longest_key_a_field_continues_with_is_found_through_the_index() -> None:
    text = "m:\n  a: 1\n  a.b: 2\n  a.b.c:\n    d: 3\n  <<: {e.f: 4, a: 5}\n"
    tree = compose_yaml(text)
    assert tree is not None
    keys = locations.Keys()

    def at(field: str) -> tuple[int, int] | None:
        mark = locations.find(tree, field, keys=keys)
        return None if mark is None else (mark.line + 1, mark.column + 1)

    assert at("m.a") == (2, 6)  # the mapping's own key before the one merged in
    assert at("m.a.b") == (3, 8)
    assert at("m.a.b.c.d") == (5, 8)
    assert at("m.a.b.x") == (3, 8)  # the nearest written parent
    assert at("m.e.f") == (6, 13)
    assert at("m.e") == (1, 1)

"""The SDK's per-value work on properties answered directly (gatewayctl/engine/properties.py)
gives the SDK's answers: Structs read in one pass, plain values serialised as they are,
unknowns found without recursion, a property's Output resolved from one future, outputs typed
back."""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Callable, Mapping
from typing import Any, cast

import pulumi
import pytest
from google.protobuf import struct_pb2
from hypothesis import given, settings
from hypothesis import strategies as st
from pulumi.output import Unknown
from pulumi.runtime import rpc
from pulumi.runtime import settings as settings_

from gatewayctl.engine import offline, properties
from gatewayctl.engine.offline import run_program
from tests.helpers import typed_program

# --- properties read from a Struct in one pass -------------------------------------------------

_SIG, _SECRET = rpc._special_sig_key, rpc._special_secret_sig
_SDK_DESERIALIZE = properties._sdk_deserialize_properties


def _struct(value: dict[str, Any]) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(value)
    return struct


def _exactly(value: Any) -> Any:
    """``value`` compared with its types and every map's key order (``==`` sees neither 1.0
    against 1 nor the order of keys)."""
    if isinstance(value, dict):
        return ("dict", [(key, _exactly(item)) for key, item in value.items()])
    if isinstance(value, list):
        return ("list", [_exactly(item) for item in value])
    if isinstance(value, (str, float, bool)) or value is None:
        return (type(value).__name__, value)
    return (type(value).__name__, _exactly(vars(value)))  # Unknown, assets, archives


_KEYS = st.sampled_from(["a", "b", "metadata", "__internal", "__provider", "value", "path"])
_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(allow_nan=False),
    st.text(max_size=5),
    st.just(rpc.UNKNOWN),
)


def _wrapped(children: Any) -> Any:
    return st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(_KEYS, children, max_size=4),
        st.builds(lambda inner: {_SIG: _SECRET, "value": inner}, children),
        st.builds(lambda text: {_SIG: rpc._special_asset_sig, "text": text}, st.text(max_size=3)),
    )


_VALUES = st.recursive(_LEAVES, _wrapped, max_leaves=25)


@settings(max_examples=300, deadline=None)
@given(
    given_properties=st.dictionaries(_KEYS, _VALUES, max_size=5),
    keep_unknowns=st.sampled_from([None, False, True]),
    keep_internal=st.sampled_from([None, False, True]),
    dry_run=st.booleans(),
)
def test_properties_read_in_one_pass_are_what_the_sdk_reads(
    given_properties: dict[str, Any], keep_unknowns: Any, keep_internal: Any, dry_run: bool
) -> None:
    struct = _struct(given_properties)
    saved = settings_.is_dry_run
    settings_.is_dry_run = lambda: dry_run  # read by both at call time
    try:
        ours = properties.deserialize_properties(struct, keep_unknowns, keep_internal)
        sdks = _SDK_DESERIALIZE(struct, keep_unknowns, keep_internal)
    finally:
        settings_.is_dry_run = saved
    assert _exactly(ours) == _exactly(sdks)


def test_properties_read_in_one_pass_follow_the_sdks_rules() -> None:
    struct = _struct(
        {
            "port": 8080,
            "gone": None,
            "later": rpc.UNKNOWN,
            "list": [1, None, rpc.UNKNOWN, {_SIG: _SECRET, "value": "s"}],
            "map": {"token": {_SIG: _SECRET, "value": "t"}, "plain": "p"},
            "__internal": True,
            "__provider": "x",
            "file": {_SIG: rpc._special_asset_sig, "text": "hello"},
        }
    )

    kept = properties.deserialize_properties(struct, keep_unknowns=True, keep_internal=False)

    assert set(kept) == {"port", "later", "list", "map", "__provider", "file"}
    assert kept["port"] == 8080.0 and isinstance(kept["port"], float)
    assert isinstance(kept["later"], pulumi.output.Unknown)
    # A secret inside a list or map makes the whole list or map the secret; lists keep None.
    assert kept["list"][_SIG] == _SECRET
    assert kept["list"]["value"][:2] == [1.0, None]
    assert isinstance(kept["list"]["value"][2], pulumi.output.Unknown)
    assert kept["list"]["value"][3] == "s"
    assert kept["map"] == {_SIG: _SECRET, "value": {"token": "t", "plain": "p"}}
    assert isinstance(kept["file"], pulumi.StringAsset) and kept["file"].text == "hello"
    # Unknowns not kept read as None, and so are left out (in a list: None).
    plain = properties.deserialize_properties(struct)
    assert "later" not in plain
    assert plain["list"]["value"][2] is None
    assert plain["__internal"] is True


def test_a_registration_reads_its_properties_in_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine's read of the request and the SDK's read of the response both take the
    shortcut during a run, and record what the SDK's own reading records."""
    calls: list[Any] = []
    one_pass = properties.deserialize_properties

    def counted(props_struct: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(props_struct)
        return one_pass(props_struct, *args, **kwargs)

    monkeypatch.setattr(properties, "deserialize_properties", counted)
    recording, _ = run_program(typed_program, project="p", stack="s")
    read = {urn: (r.inputs, r.outputs) for urn, r in recording.resources.items()}
    registrations = len(recording.resources)
    assert len(calls) >= 2 * registrations  # request and response, nested maps besides

    monkeypatch.setattr(properties, "deserialize_properties", _SDK_DESERIALIZE)
    recording, _ = run_program(typed_program, project="p", stack="s")
    assert {urn: (r.inputs, r.outputs) for urn, r in recording.resources.items()} == read


# --- plain values serialised as they are; unknowns looked for without recursion ----------------

_SDK_SERIALIZE = properties._sdk_serialize_property
_SDK_CONTAINS = properties._sdk_contains_unknowns


class _Colour(enum.StrEnum):
    RED = "red"


@pytest.mark.parametrize("value", ["text", "", 8080, 2**70, 0.5, True, False, None])
def test_a_plain_value_is_serialised_as_the_sdk_serialises_it(value: Any) -> None:
    ours = offline._finish(properties.serialize_property(value, [], "key"))
    sdks = offline._finish(_SDK_SERIALIZE(value, [], "key"))
    assert ours is value and sdks is value


def test_other_values_and_protobuf_values_go_to_the_sdks_serialiser(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[Any] = []

    async def sdk(value: Any, *args: Any, **kwargs: Any) -> Any:
        asked.append(value)
        return await _SDK_SERIALIZE(value, *args, **kwargs)

    monkeypatch.setattr(properties, "_sdk_serialize_property", sdk)
    positional = [None, None, None, False, False, True]  # resource_obj ... return_protobuf_value
    answers = [
        offline._finish(properties.serialize_property(_Colour.RED, [], "colour")),
        offline._finish(properties.serialize_property({"a": [1, "b"]}, [], "spec")),
        offline._finish(properties.serialize_property(7, [], "n", return_protobuf_value=True)),
        offline._finish(properties.serialize_property("x", [], "s", *positional)),
    ]

    assert asked == [_Colour.RED, {"a": [1, "b"]}, 7, "x"]
    assert answers[:2] == ["red", {"a": [1, "b"]}]
    assert answers[2] == struct_pb2.Value(number_value=7.0)
    assert answers[3] == struct_pb2.Value(string_value="x")


def _with_unknowns(draw: Any) -> Any:
    leaves = st.one_of(
        st.none(), st.booleans(), st.integers(), st.text(max_size=3), st.builds(Unknown)
    )
    return draw(
        st.recursive(
            leaves,
            lambda children: st.one_of(
                st.lists(children, max_size=3),
                st.dictionaries(st.text(max_size=2), children, max_size=3),
                st.tuples(children),  # neither looks inside a tuple
            ),
            max_leaves=12,
        )
    )


@settings(max_examples=300, deadline=None)
@given(data=st.data(), share=st.booleans(), cycle=st.booleans())
def test_unknowns_are_found_as_the_sdk_finds_them(data: Any, share: bool, cycle: bool) -> None:
    value = data.draw(st.composite(_with_unknowns)())
    if share:  # one object reached twice
        value = [value, {"again": value}]
    if cycle:  # a list holding itself
        loop: list[Any] = [value]
        loop.append(loop)
        value = loop
    assert properties.contains_unknowns(value) is _SDK_CONTAINS(value)


def _unknown() -> Unknown:
    """A new unknown value, as the SDK makes one."""
    return Unknown()  # type: ignore[no-untyped-call]  # the SDK's Unknown() is not annotated


def test_unknowns_are_found_at_any_depth_but_not_in_tuples() -> None:
    deep: Any = _unknown()
    for _ in range(50):
        deep = {"next": [deep]}
    assert properties.contains_unknowns(deep) is True
    assert properties.contains_unknowns({"a": (_unknown(),)}) is False
    assert properties.contains_unknowns({"a": [1, "x", None, {"b": {}}]}) is False


# --- a property's Output from one future -------------------------------------------------------

# Called with a stand-in for the resource (_Res), as the program's own transfer_properties is.
_SDK_TRANSFER: Callable[[Any, Any, bool], dict[str, Any]] = properties._sdk_transfer_properties


class _Res:
    """A stand-in for the resource a property belongs to (hashable, as a Resource is)."""


async def _data(output: pulumi.Output[Any], res: Any) -> Any:
    """An Output's value, known- and secretness and resources (``res`` named "self"), or the
    exception it fails with."""
    try:
        data = await output._data
    except Exception as failure:  # the failure is the fact compared
        return ("failed", failure)
    # The resources are the dependency names the cases give, as strings, and ``res``.
    resources = sorted("self" if r is res else cast(str, r) for r in data.resources)
    return data.value, data.is_known, data.is_secret, resources


@pytest.mark.parametrize("custom", [True, False])
def test_a_property_resolves_as_the_sdks_does(custom: bool) -> None:
    failure = RuntimeError("provider failed")
    cases: list[tuple[Any, bool, bool, Any, Exception | None]] = [
        ("value", True, False, set(), None),
        ({"a": [_unknown()]}, True, False, None, None),  # unknown inside: not known
        ("hidden", True, True, {"dep-1", "dep-2"}, None),
        (None, False, False, {"dep-1"}, None),
        (None, False, False, set(), failure),
    ]
    props = {"urn": None, "id": None, "spec": None, "status": None}

    async def both() -> list[tuple[list[str], list[str], Any, Any]]:
        facts = []
        for case in cases:
            sdk_res, our_res = _Res(), _Res()
            sdk = _SDK_TRANSFER(sdk_res, props, custom)
            ours = properties.transfer_properties(our_res, props, custom)
            for resolvers in (sdk, ours):
                resolvers["spec"](*case)
                resolvers["status"]("other", True, False, set(), None)
            facts.append(
                (
                    sorted(sdk),
                    sorted(ours),
                    await _data(vars(sdk_res)["spec"], sdk_res),
                    await _data(vars(our_res)["spec"], our_res),
                )
            )
        return facts

    loop = asyncio.new_event_loop()
    try:
        facts = loop.run_until_complete(both())
    finally:
        loop.close()
    names = ["spec", "status"] if custom else ["id", "spec", "status"]
    assert [(sdk, ours) for sdk, ours, _, _ in facts] == [(names, names)] * len(cases)
    assert [sdk for _, _, sdk, _ in facts] == [ours for _, _, _, ours in facts]
    assert [ours for _, _, _, ours in facts] == [
        ("value", True, False, ["self"]),
        ({"a": [facts[1][3][0]["a"][0]]}, False, False, ["self"]),
        ("hidden", True, True, ["dep-1", "dep-2", "self"]),
        (None, False, False, ["dep-1", "self"]),
        ("failed", failure),
    ]
    assert isinstance(facts[1][3][0]["a"][0], Unknown)


# --- outputs typed back -------------------------------------------------------------------------

_SDK_TRANSLATE = properties._sdk_translate


_TARGETS: list[Any] = [
    None, Any, str, int, float, bool, str | None, int | None, _Colour, Mapping[str, str],
    list[str], list[int] | None, dict,
]  # fmt: skip
_OUTPUTS = st.recursive(
    st.one_of(
        st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=False),
        st.text(max_size=3), st.sampled_from(["red", 2.0]),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["a", "bB", "c_d"]), inner, max_size=3),
        inner.map(rpc.wrap_rpc_secret),
    ),
    max_leaves=10,
)  # fmt: skip


def _translated(function: Any, output: Any, typ: Any) -> Any:
    try:
        return function(output, lambda key: key.upper(), typ)
    except Exception as failure:  # the failure is the fact compared
        return ("raised", type(failure), str(failure))


@settings(max_examples=400, deadline=None)
@given(output=_OUTPUTS, typ=st.sampled_from(_TARGETS))
def test_outputs_are_typed_back_as_the_sdk_types_them(output: Any, typ: Any) -> None:
    ours = _translated(properties.translate_output_properties, output, typ)
    sdks = _translated(_SDK_TRANSLATE, output, typ)
    assert ours == sdks
    assert type(ours) is type(sdks)


def test_plain_values_are_converted_only_where_the_sdk_converts_them() -> None:
    translate = properties.translate_output_properties
    assert translate(2.0, str, int) == 2 and type(translate(2.0, str, int)) is int
    assert type(translate(2.0, str, int | None)) is int
    assert type(translate(2.0, str, float)) is float
    assert translate("red", str, _Colour) is _Colour.RED
    assert translate({"aB": [1.0, {"c": "x"}]}, str.upper, None) == {"AB": [1.0, {"C": "x"}]}


def test_a_typed_resources_outputs_are_the_sdks(monkeypatch: pytest.MonkeyPatch) -> None:
    import pulumi_kubernetes as k8s

    def program() -> Any:
        config = k8s.core.v1.ConfigMap(
            "config",
            metadata=k8s.meta.v1.ObjectMetaArgs(name="config", labels={"a": "b"}),
            data={"key": "value"},
        )
        # The output type's instance, read where the program sees it.
        metadata = config.metadata.apply(lambda m: [type(m).__name__, m.name, m.labels])
        return pulumi.Output.all(metadata, config.data, config.immutable)

    def resolved() -> Any:
        _, result = run_program(program, project="p", stack="s")
        return result

    shortened = resolved()
    monkeypatch.setattr(properties, "translate_output_properties", _SDK_TRANSLATE)
    assert resolved() == shortened
    assert shortened == [["ObjectMeta", "config", {"a": "b"}], {"key": "value"}, None]

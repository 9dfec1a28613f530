"""What the offline engine leaves out of the SDK's per-resource work
(gatewayctl/engine/shortcuts.py) changes nothing a run produces: the mock URN has the SDK's
value, known- and secretness and resources; debug messages still reach a logger that asks for
them."""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import Mapping
from typing import Any

import pulumi
import pytest
from google.protobuf import struct_pb2
from hypothesis import given, settings
from hypothesis import strategies as st
from pulumi.output import Unknown
from pulumi.resource_hooks import ResourceHookBinding
from pulumi.runtime import mocks, rpc
from pulumi.runtime import settings as settings_
from pulumi.runtime.proto import engine_pb2

from gatewayctl.engine import offline, shortcuts
from gatewayctl.engine.offline import run_program

_SDK_UNWRAP = shortcuts._sdk_unwrap_type
_SDK_ANNOTATIONS = shortcuts._sdk_types_from_annotations


def _facts(output: pulumi.Output[str]) -> pulumi.Output[Any]:
    """An Output's value with its known- and secretness and the URNs of its resources."""

    async def resources() -> list[str]:
        found = await output.resources()
        return sorted([await r.urn.future() for r in found])  # type: ignore[misc]

    return pulumi.Output.all(
        output,
        pulumi.Output.from_input(output.is_known()),
        pulumi.Output.from_input(output.is_secret()),
        pulumi.Output.from_input(resources()),
    )


def test_the_mock_urn_is_the_sdks_in_every_case() -> None:
    def program() -> Any:
        parent = pulumi.ComponentResource("test:index:Outer", "outer")
        secret_parent = pulumi.Output.secret("urn:pulumi:s::p::test:index:Hidden::hidden")
        cases: list[tuple[Any, Any, Any]] = [
            ("leaf", "test:index:Leaf", None),
            ("leaf", "test:index:Leaf", "urn:pulumi:s::p::test:index:Outer::outer"),
            ("leaf", "test:index:Leaf", parent),
            ("leaf", "test:index:Leaf", secret_parent),
            (pulumi.Output.from_input("named"), "test:index:Leaf", parent),
        ]
        return pulumi.Output.all(
            *[
                pulumi.Output.all(
                    _facts(shortcuts.create_urn(*case)), _facts(shortcuts._sdk_create_urn(*case))
                )
                for case in cases
            ]
        )

    _, pairs = run_program(program, project="p", stack="s")

    assert [ours for ours, _ in pairs] == [sdks for _, sdks in pairs]
    assert [ours[0] for ours, _ in pairs] == [
        "urn:pulumi:s::p::test:index:Leaf::leaf",
        "urn:pulumi:s::p::test:index:Outer$test:index:Leaf::leaf",
        "urn:pulumi:s::p::test:index:Outer$test:index:Leaf::leaf",
        "urn:pulumi:s::p::test:index:Hidden$test:index:Leaf::leaf",
        "urn:pulumi:s::p::test:index:Outer$test:index:Leaf::named",
    ]
    outer = "urn:pulumi:s::p::test:index:Outer::outer"
    assert [ours[1:] for ours, _ in pairs] == [
        [True, False, []],
        [True, False, []],
        [True, False, [outer]],
        [True, True, []],
        [True, False, [outer]],
    ]


def test_every_registration_takes_its_mock_urn_from_the_shortcut(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[tuple[Any, ...]] = []

    def counted(*args: Any) -> pulumi.Output[str]:
        calls.append(args)
        return shortcuts._sdk_create_urn(*args)

    monkeypatch.setattr(shortcuts, "create_urn", counted)

    def program() -> None:
        outer = pulumi.ComponentResource("test:index:Outer", "outer")
        pulumi.CustomResource(
            "test:index:Leaf", "leaf", {}, opts=pulumi.ResourceOptions(parent=outer)
        )

    recording, _ = run_program(program, project="p", stack="s")

    assert len(recording.resources) == 2
    # The root stack's registration too; each with the parent as the URN string it resolved.
    assert [(name, type_) for name, type_, *_ in calls] == [
        ("p-s", "pulumi:pulumi:Stack"),
        ("outer", "test:index:Outer"),
        ("leaf", "test:index:Leaf"),
    ]
    assert calls[2][2] == "urn:pulumi:s::p::test:index:Outer::outer"


def _logged(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The debug messages the mock engine receives (``MockEngine.Log``)."""
    sent: list[str] = []
    log = mocks.MockEngine.Log

    def counted(self: mocks.MockEngine, request: Any) -> None:
        if request.severity == engine_pb2.DEBUG:
            sent.append(request.message)
        log(self, request)

    monkeypatch.setattr(mocks.MockEngine, "Log", counted)
    return sent


def _leaf() -> None:
    pulumi.CustomResource("test:index:Leaf", "leaf", {})


def test_debug_messages_are_not_sent_while_no_logger_wants_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sent = _logged(monkeypatch)
    monkeypatch.setattr(logging.getLogger(), "level", logging.WARNING)

    run_program(_leaf, project="p", stack="s")

    assert sent == []


def test_debug_messages_reach_a_logger_that_wants_them(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    sent = _logged(monkeypatch)

    with caplog.at_level(logging.DEBUG):
        run_program(_leaf, project="p", stack="s")

    registering = "registering resource: ty=test:index:Leaf, name=leaf, custom=True, remote=False"
    prepared = "resource registration prepared: ty=test:index:Leaf, name=leaf"
    assert {registering, prepared} <= set(sent)
    assert {registering, prepared} <= set(caplog.messages)


def _typed_program() -> None:
    """Three resources of one class whose args are typed (input types: unwrap_type is asked
    for their properties) and one of another."""
    import pulumi_kubernetes as k8s

    for index in range(3):
        k8s.core.v1.ConfigMap(
            f"config-{index}",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=f"config-{index}", labels={"a": "b"}),
            data={"key": f"value-{index}"},
        )
    k8s.core.v1.Namespace("tenant", metadata={"name": "tenant"})


def test_type_introspection_is_done_once_per_type(monkeypatch: pytest.MonkeyPatch) -> None:
    unwrapped: list[Any] = []
    annotated: list[type] = []

    def unwrap(val: Any) -> Any:
        unwrapped.append(val)
        return _SDK_UNWRAP(val)

    def annotations(cls: type) -> Any:
        annotated.append(cls)
        return _SDK_ANNOTATIONS(cls)

    named: list[tuple[str, type]] = []

    def counted(name: str, function: Any) -> Any:
        def names(cls: type) -> Any:
            named.append((name, cls))
            return function(cls)

        return names

    monkeypatch.setattr(shortcuts, "_sdk_unwrap_type", unwrap)
    monkeypatch.setattr(shortcuts, "_sdk_types_from_annotations", annotations)
    monkeypatch.setattr(
        shortcuts,
        "_sdk_names",
        {name: counted(name, function) for name, function in shortcuts._sdk_names.items()},
    )
    import pulumi_kubernetes as k8s

    run_program(_typed_program, project="p", stack="s")

    assert annotated.count(k8s.core.v1.ConfigMap) == 1  # three registrations, one answer
    assert annotated.count(k8s.core.v1.Namespace) == 1
    # Each name map asked once per class (the SDK asked it once per registration).
    assert sorted(named, key=repr) == sorted(set(named), key=repr)
    assert ("_pulumi_to_py_names_from_annotations", k8s.core.v1.ConfigMap) in named
    assert len(unwrapped) > 0
    assert len({id(hint) for hint in unwrapped}) == len(unwrapped)


def test_a_run_answered_once_per_type_registers_what_the_sdk_registers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def recorded() -> dict[str, tuple[Any, Any]]:
        recording, _ = run_program(_typed_program, project="p", stack="s")
        return {urn: (r.inputs, r.outputs) for urn, r in recording.resources.items()}

    shortened = recorded()
    monkeypatch.setattr(shortcuts, "once_per_object", lambda function: function)
    assert recorded() == shortened
    assert shortened["urn:pulumi:s::p::kubernetes:core/v1:ConfigMap::config-2"][0] == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "config-2", "labels": {"a": "b"}},
        "data": {"key": "value-2"},
    }


def test_once_per_object_keys_by_identity_and_keeps_the_object() -> None:
    seen: list[Any] = []
    answer = shortcuts.once_per_object(lambda value: seen.append(value) or len(seen))
    first, equal = [1], [1]
    assert (answer(first), answer(first), answer(equal), answer(first)) == (1, 1, 2, 1)
    assert seen == [first, equal]


# --- properties read from a Struct in one pass -------------------------------------------------

_SIG, _SECRET = rpc._special_sig_key, rpc._special_secret_sig
_SDK_DESERIALIZE = shortcuts._sdk_deserialize_properties


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
    properties=st.dictionaries(_KEYS, _VALUES, max_size=5),
    keep_unknowns=st.sampled_from([None, False, True]),
    keep_internal=st.sampled_from([None, False, True]),
    dry_run=st.booleans(),
)
def test_properties_read_in_one_pass_are_what_the_sdk_reads(
    properties: dict[str, Any], keep_unknowns: Any, keep_internal: Any, dry_run: bool
) -> None:
    struct = _struct(properties)
    saved = settings_.is_dry_run
    settings_.is_dry_run = lambda: dry_run  # read by both at call time
    try:
        ours = shortcuts.deserialize_properties(struct, keep_unknowns, keep_internal)
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

    kept = shortcuts.deserialize_properties(struct, keep_unknowns=True, keep_internal=False)

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
    plain = shortcuts.deserialize_properties(struct)
    assert "later" not in plain
    assert plain["list"]["value"][2] is None
    assert plain["__internal"] is True


def test_a_registration_reads_its_properties_in_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine's read of the request and the SDK's read of the response both take the
    shortcut during a run, and record what the SDK's own reading records."""
    calls: list[Any] = []
    one_pass = shortcuts.deserialize_properties

    def counted(props_struct: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(props_struct)
        return one_pass(props_struct, *args, **kwargs)

    monkeypatch.setattr(shortcuts, "deserialize_properties", counted)
    recording, _ = run_program(_typed_program, project="p", stack="s")
    read = {urn: (r.inputs, r.outputs) for urn, r in recording.resources.items()}
    registrations = len(recording.resources)
    assert len(calls) >= 2 * registrations  # request and response, nested maps besides

    monkeypatch.setattr(shortcuts, "deserialize_properties", _SDK_DESERIALIZE)
    recording, _ = run_program(_typed_program, project="p", stack="s")
    assert {urn: (r.inputs, r.outputs) for urn, r in recording.resources.items()} == read


# --- plain values serialised as they are; unknowns looked for without recursion ----------------

_SDK_SERIALIZE = shortcuts._sdk_serialize_property
_SDK_CONTAINS = shortcuts._sdk_contains_unknowns


class _Colour(enum.StrEnum):
    RED = "red"


@pytest.mark.parametrize("value", ["text", "", 8080, 2**70, 0.5, True, False, None])
def test_a_plain_value_is_serialised_as_the_sdk_serialises_it(value: Any) -> None:
    ours = offline._finish(shortcuts.serialize_property(value, [], "key"))
    sdks = offline._finish(_SDK_SERIALIZE(value, [], "key"))
    assert ours is value and sdks is value


def test_other_values_and_protobuf_values_go_to_the_sdks_serialiser(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[Any] = []

    async def sdk(value: Any, *args: Any, **kwargs: Any) -> Any:
        asked.append(value)
        return await _SDK_SERIALIZE(value, *args, **kwargs)

    monkeypatch.setattr(shortcuts, "_sdk_serialize_property", sdk)
    positional = [None, None, None, False, False, True]  # resource_obj ... return_protobuf_value
    answers = [
        offline._finish(shortcuts.serialize_property(_Colour.RED, [], "colour")),
        offline._finish(shortcuts.serialize_property({"a": [1, "b"]}, [], "spec")),
        offline._finish(shortcuts.serialize_property(7, [], "n", return_protobuf_value=True)),
        offline._finish(shortcuts.serialize_property("x", [], "s", *positional)),
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
    assert shortcuts.contains_unknowns(value) is _SDK_CONTAINS(value)


def test_unknowns_are_found_at_any_depth_but_not_in_tuples() -> None:
    deep: Any = Unknown()
    for _ in range(50):
        deep = {"next": [deep]}
    assert shortcuts.contains_unknowns(deep) is True
    assert shortcuts.contains_unknowns({"a": (Unknown(),)}) is False
    assert shortcuts.contains_unknowns({"a": [1, "x", None, {"b": {}}]}) is False


# --- options copied and hooks merged directly ---------------------------------------------------

_SDK_COPY_OPTIONS = shortcuts._sdk_copy_options
_SDK_MERGE_HOOKS = shortcuts._sdk_merge_hooks.__func__


def _hook(args: Any) -> None:
    return None


class _Bindings(ResourceHookBinding):
    """A subclass: the SDK's merge keeps its class, so the shortcut leaves it to the SDK."""


class _Options(pulumi.ResourceOptions):
    pass


def _bindings_cases() -> list[Any]:
    return [
        None,
        ResourceHookBinding(),
        ResourceHookBinding(before_create=[_hook]),
        ResourceHookBinding(on_error=[]),  # an empty list is not None: merged by the SDK
        _Bindings(),
    ]


def _state(value: Any) -> Any:
    """What a binding or options object holds, by value (its class and attributes)."""
    if isinstance(value, (ResourceHookBinding, pulumi.ResourceOptions)):
        return type(value), {key: _state(item) for key, item in vars(value).items()}
    return value


@pytest.mark.parametrize("first", range(5))
@pytest.mark.parametrize("second", range(5))
def test_hooks_merge_as_the_sdk_merges_them(first: int, second: int) -> None:
    one, two = _bindings_cases()[first], _bindings_cases()[second]
    merged = shortcuts.merge_hooks(ResourceHookBinding, one, two)
    assert _state(merged) == _state(_SDK_MERGE_HOOKS(ResourceHookBinding, one, two))
    assert merged is not one and merged is not two


def test_hooks_that_are_not_bindings_are_refused_as_the_sdk_refuses_them() -> None:
    with pytest.raises(TypeError, match="Expected bindings2 to be a ResourceHookBinding"):
        shortcuts.merge_hooks(ResourceHookBinding, None, "hooks")  # type: ignore[arg-type]


def _options_cases() -> list[pulumi.ResourceOptions]:
    parent = pulumi.ComponentResource("test:index:Outer", "outer")
    return [
        pulumi.ResourceOptions(),
        pulumi.ResourceOptions(version="4.0.0", plugin_download_url="https://example.invalid"),
        pulumi.ResourceOptions(parent=parent, depends_on=[parent], protect=True),
        pulumi.ResourceOptions(
            aliases=[pulumi.Alias(type_="kubernetes:core/v1:Secret")],
            ignore_changes=["data"],
            hooks=ResourceHookBinding(after_create=[_hook]),
        ),
        _Options(retain_on_delete=True),
    ]


def test_options_are_copied_and_merged_as_the_sdk_does_it() -> None:
    def program() -> None:
        cases = _options_cases()
        for options in cases:
            copied = shortcuts.copy_options(options)
            assert copied is not options
            assert _state(copied) == _state(_SDK_COPY_OPTIONS(options))
        expected = []
        for one in cases:
            for two in cases:
                expected.append(_state(pulumi.ResourceOptions.merge(one, two)))
        with shortcuts.applied():
            assert pulumi.ResourceOptions._copy is not _SDK_COPY_OPTIONS
            shortened = [
                _state(pulumi.ResourceOptions.merge(one, two)) for one in cases for two in cases
            ]
        assert shortened == expected
        assert len(expected) == 25

    run_program(program, project="p", stack="s")
    # Put back as they were: the classmethod itself, not a method bound to the class.
    assert vars(ResourceHookBinding)["merge"] is shortcuts._sdk_merge_hooks
    assert vars(pulumi.ResourceOptions)["_copy"] is _SDK_COPY_OPTIONS


def test_a_run_with_options_copied_directly_registers_what_the_sdk_registers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def recorded() -> dict[str, Any]:
        recording, _ = run_program(_typed_program, project="p", stack="s")
        return {
            urn: (r.inputs, r.outputs, r.dependencies) for urn, r in recording.resources.items()
        }

    shortened = recorded()
    monkeypatch.setattr(shortcuts, "copy_options", _SDK_COPY_OPTIONS)
    monkeypatch.setattr(shortcuts, "merge_hooks", _SDK_MERGE_HOOKS)
    assert recorded() == shortened
    assert len(shortened) == 4


# --- a property's Output from one future; an alias's URN directly ------------------------------

_SDK_TRANSFER = shortcuts._sdk_transfer_properties
_SDK_ALIAS = shortcuts._sdk_collapse_alias


class _Res:
    """A stand-in for the resource a property belongs to (hashable, as a Resource is)."""


async def _data(output: pulumi.Output[Any], res: Any) -> Any:
    """An Output's value, known- and secretness and resources (``res`` named "self"), or the
    exception it fails with."""
    try:
        data = await output._data
    except Exception as failure:  # the failure is the fact compared
        return ("failed", failure)
    resources = sorted("self" if r is res else r for r in data.resources)
    return data.value, data.is_known, data.is_secret, resources


@pytest.mark.parametrize("custom", [True, False])
def test_a_property_resolves_as_the_sdks_does(custom: bool) -> None:
    failure = RuntimeError("provider failed")
    cases: list[tuple[Any, bool, bool, Any, Exception | None]] = [
        ("value", True, False, set(), None),
        ({"a": [Unknown()]}, True, False, None, None),  # unknown inside: not known
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
            ours = shortcuts.transfer_properties(our_res, props, custom)
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


def test_an_aliass_urn_is_the_sdks_in_every_case() -> None:
    def program() -> Any:
        parent = pulumi.ComponentResource("test:index:Outer", "outer")
        cases: list[tuple[Any, Any]] = [
            ("urn:pulumi:s::p::test:index:Old::old", None),
            (pulumi.Alias(type_="test:index:Former"), None),
            (pulumi.Alias(name="former"), parent),
            (pulumi.Alias(parent=parent), None),
            (pulumi.Alias(parent="urn:pulumi:s::p::test:index:Outer::outer"), None),
            (pulumi.Alias(parent=None), parent),
            (pulumi.Alias(project="other", stack="prod"), None),
            (pulumi.Alias(stack=pulumi.Output.from_input("prod")), None),  # to the SDK
            (pulumi.Alias(parent=pulumi.Output.from_input("urn:pulumi:s::p::a:b:C::c")), None),
        ]
        return pulumi.Output.all(
            *[
                pulumi.Output.all(
                    _facts(shortcuts.collapse_alias_to_urn(alias, "leaf", "test:index:Leaf", at)),
                    _facts(_SDK_ALIAS(alias, "leaf", "test:index:Leaf", at)),
                )
                for alias, at in cases
            ]
        )

    _, pairs = run_program(program, project="p", stack="s")

    assert [ours for ours, _ in pairs] == [sdks for _, sdks in pairs]
    outer = "urn:pulumi:s::p::test:index:Outer::outer"
    assert [ours for ours, _ in pairs] == [
        ["urn:pulumi:s::p::test:index:Old::old", True, False, []],
        ["urn:pulumi:s::p::test:index:Former::leaf", True, False, []],
        ["urn:pulumi:s::p::test:index:Outer$test:index:Leaf::former", True, False, [outer]],
        ["urn:pulumi:s::p::test:index:Outer$test:index:Leaf::leaf", True, False, [outer]],
        ["urn:pulumi:s::p::test:index:Outer$test:index:Leaf::leaf", True, False, []],
        ["urn:pulumi:s::p::test:index:Leaf::leaf", True, False, []],
        ["urn:pulumi:prod::other::test:index:Leaf::leaf", True, False, []],
        ["urn:pulumi:prod::p::test:index:Leaf::leaf", True, False, []],
        ["urn:pulumi:s::p::a:b:C$test:index:Leaf::leaf", True, False, []],
    ]


def test_a_run_with_properties_and_aliases_shortened_registers_what_the_sdk_registers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def recorded() -> dict[str, Any]:
        recording, _ = run_program(_typed_program, project="p", stack="s")
        return {
            urn: (r.inputs, r.outputs, r.dependencies) for urn, r in recording.resources.items()
        }

    shortened = recorded()
    monkeypatch.setattr(shortcuts, "transfer_properties", _SDK_TRANSFER)
    monkeypatch.setattr(shortcuts, "collapse_alias_to_urn", _SDK_ALIAS)
    assert recorded() == shortened
    assert shortened["urn:pulumi:s::p::kubernetes:core/v1:Namespace::tenant"][0] == {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "tenant"},
    }


# --- outputs typed back -------------------------------------------------------------------------

_SDK_TRANSLATE = shortcuts._sdk_translate


class _Colour(enum.StrEnum):
    RED = "red"


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
    ours = _translated(shortcuts.translate_output_properties, output, typ)
    sdks = _translated(_SDK_TRANSLATE, output, typ)
    assert ours == sdks
    assert type(ours) is type(sdks)


def test_plain_values_are_converted_only_where_the_sdk_converts_them() -> None:
    translate = shortcuts.translate_output_properties
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
    monkeypatch.setattr(shortcuts, "translate_output_properties", _SDK_TRANSLATE)
    assert resolved() == shortened
    assert shortened == [["ObjectMeta", "config", {"a": "b"}], {"key": "value"}, None]

"""What the offline engine leaves out of the SDK's per-resource work
(gatewayctl/engine/shortcuts.py) changes nothing a run produces: the mock URN and an alias's
URN have the SDK's value, known- and secretness and resources; debug messages still reach a
logger that asks for them; options and hooks merge as the SDK merges them. The per-value
shortcuts are tests/test_properties.py's."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pulumi
import pytest
from pulumi.resource_hooks import ResourceHookBinding
from pulumi.runtime import mocks
from pulumi.runtime import settings as settings_
from pulumi.runtime.proto import engine_pb2

from gatewayctl.engine import properties, shortcuts
from gatewayctl.engine.offline import run_program
from tests.helpers import typed_program

_SDK_UNWRAP = shortcuts._sdk_unwrap_type
_SDK_ANNOTATIONS = shortcuts._sdk_types_from_annotations


def _facts(output: pulumi.Output[str]) -> pulumi.Output[Any]:
    """An Output's value with its known- and secretness and the URNs of its resources."""

    async def resources() -> list[str]:
        found = await output.resources()
        # A registered resource's URN is known: future() is typed str | None for any Output.
        return sorted([await r.urn.future() for r in found])  # type: ignore[misc]

    known: pulumi.Output[bool] = pulumi.Output.from_input(output.is_known())
    secret: pulumi.Output[bool] = pulumi.Output.from_input(output.is_secret())
    urns: pulumi.Output[list[str]] = pulumi.Output.from_input(resources())
    return pulumi.Output.all(output, known, secret, urns)


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
    log: Callable[[mocks.MockEngine, Any], None] = mocks.MockEngine.Log

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

    run_program(typed_program, project="p", stack="s")

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
        recording, _ = run_program(typed_program, project="p", stack="s")
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

    def count(value: Any) -> int:
        seen.append(value)
        return len(seen)

    answer = shortcuts.once_per_object(count)
    first, equal = [1], [1]
    assert (answer(first), answer(first), answer(equal), answer(first)) == (1, 1, 2, 1)
    assert seen == [first, equal]


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
        # A string where a binding belongs is the point of the test.
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


def _registrations() -> dict[str, Any]:
    recording, _ = run_program(typed_program, project="p", stack="s")
    return {urn: (r.inputs, r.outputs, r.dependencies) for urn, r in recording.resources.items()}


def test_a_run_with_options_copied_directly_registers_what_the_sdk_registers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shortened = _registrations()
    monkeypatch.setattr(shortcuts, "copy_options", _SDK_COPY_OPTIONS)
    monkeypatch.setattr(shortcuts, "merge_hooks", _SDK_MERGE_HOOKS)
    assert _registrations() == shortened
    assert len(shortened) == 4


# --- a property's Output from one future; an alias's URN directly ------------------------------

_SDK_ALIAS = shortcuts._sdk_collapse_alias


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
    shortened = _registrations()
    monkeypatch.setattr(properties, "transfer_properties", properties._sdk_transfer_properties)
    monkeypatch.setattr(shortcuts, "collapse_alias_to_urn", _SDK_ALIAS)
    assert _registrations() == shortened
    assert shortened["urn:pulumi:s::p::kubernetes:core/v1:Namespace::tenant"][0] == {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "tenant"},
    }


# --- settings read in one call ------------------------------------------------------------------


def test_settings_are_read_as_the_sdk_reads_them() -> None:
    from pulumi import _utils

    def program() -> Any:
        holder = type(settings_.SETTINGS)
        names = [n for n, v in vars(holder).items() if isinstance(v, _utils.ContextProperty)]
        assert len(names) >= 10
        for name in names:
            prop = vars(holder)[name]
            ours = shortcuts.context_get(prop, settings_.SETTINGS, holder)
            assert ours is shortcuts._sdk_context_get(prop, settings_.SETTINGS, holder), name
            assert shortcuts.context_get(prop, None, holder) is prop
        return names

    _, names = run_program(program, project="p", stack="s")
    assert "project" in names and "outputs" in names

    mapping = _utils.ContextProperty(name="mapping", default={"a": 1})
    plain = _utils.ContextProperty(name="plain", default="value")
    for prop in (mapping, plain):
        assert shortcuts.context_get(prop, object(), None) is shortcuts._sdk_context_get(
            prop, object(), None
        )
    assert shortcuts.context_get(mapping, object(), None) is mapping  # a dict: the property
    assert shortcuts.context_get(plain, object(), None) == "value"

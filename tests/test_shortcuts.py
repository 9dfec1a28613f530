"""What the offline engine leaves out of the SDK's per-resource work
(gatewayctl/engine/shortcuts.py) changes nothing a run produces: the mock URN and an alias's
URN have the SDK's value, known- and secretness and resources; debug messages still reach a
logger that asks for them; types are unwrapped as the SDK unwraps them. The replacements apply
only on the SDK versions they were checked against. The per-value replacements are
tests/test_properties.py's."""

from __future__ import annotations

import logging
import tomllib
from collections.abc import Callable
from typing import Any

import pulumi
import pytest
from pulumi import _types
from pulumi.runtime import mocks, rpc
from pulumi.runtime import resource as sdk_resource
from pulumi.runtime.proto import engine_pb2

from gatewayctl.engine import shortcuts
from gatewayctl.engine.offline import run_program
from tests.helpers import typed_program
from tests.support import ROOT

_SDK_UNWRAP = shortcuts._sdk_unwrap_type


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


def test_types_are_unwrapped_once_per_type(monkeypatch: pytest.MonkeyPatch) -> None:
    unwrapped: list[Any] = []

    def unwrap(val: Any) -> Any:
        unwrapped.append(val)
        return _SDK_UNWRAP(val)

    monkeypatch.setattr(shortcuts, "_sdk_unwrap_type", unwrap)

    run_program(typed_program, project="p", stack="s")

    # Three ConfigMaps and a Namespace: each type hint asked about once, not once per value.
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


def _registrations() -> dict[str, Any]:
    recording, _ = run_program(typed_program, project="p", stack="s")
    return {urn: (r.inputs, r.outputs, r.dependencies) for urn, r in recording.resources.items()}


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
    monkeypatch.setattr(shortcuts, "transfer_properties", shortcuts._sdk_transfer_properties)
    monkeypatch.setattr(shortcuts, "collapse_alias_to_urn", _SDK_ALIAS)
    assert _registrations() == shortened
    assert shortened["urn:pulumi:s::p::kubernetes:core/v1:Namespace::tenant"][0] == {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "tenant"},
    }


# --- the version guard ------------------------------------------------------------------------


def _in_place() -> dict[str, Any]:
    """What the SDK's modules hold, by the name each replacement takes."""
    return {
        "_get_stack_trace": sdk_resource._get_stack_trace,
        "create_urn": sdk_resource.create_urn,
        "collapse_alias_to_urn": vars(pulumi.resource)["collapse_alias_to_urn"],
        "debug": pulumi.log.debug,
        "unwrap_type": _types.unwrap_type,
        "deserialize_properties": rpc.deserialize_properties,
        "serialize_property": rpc.serialize_property,
        "contains_unknowns": rpc.contains_unknowns,
        "transfer_properties": rpc.transfer_properties,
        "translate_output_properties": rpc.translate_output_properties,
    }


def test_on_an_sdk_version_not_checked_the_sdks_own_functions_stay(
    caplog: pytest.LogCaptureFixture,
) -> None:
    sdks = _in_place()
    logger = "gatewayctl.engine.shortcuts"
    with caplog.at_level(logging.DEBUG, logger=logger), shortcuts.applied("3.999.0"):
        during = _in_place()
    assert all(during[name] is sdks[name] for name in sdks)
    assert len(sdks) == 10
    assert caplog.messages == [
        "pulumi SDK 3.999.0: the offline render's SDK replacements were checked against "
        "3.272.0 and are not applied (the same render, slower; gatewayctl/engine/shortcuts.py)"
    ]


def test_on_a_checked_sdk_version_every_replacement_is_in_place_and_put_back() -> None:
    sdks = _in_place()
    with shortcuts.applied("3.272.0"):
        during = _in_place()
    assert [name for name in sdks if during[name] is sdks[name]] == []
    assert during["create_urn"] is shortcuts.create_urn
    assert during["deserialize_properties"] is shortcuts.deserialize_properties
    assert all(_in_place()[name] is sdks[name] for name in sdks)


def test_a_run_on_an_sdk_version_not_checked_registers_what_a_shortened_run_registers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shortened = _registrations()
    monkeypatch.setattr(shortcuts, "CHECKED_AGAINST", ("3.999.0",))
    assert _registrations() == shortened
    assert len(shortened) == 4


def test_the_locked_sdk_is_one_the_replacements_were_checked_against() -> None:
    # Moving pulumi in uv.lock fails here until the files the module docstring names are read
    # again against the new version, and the version is added to CHECKED_AGAINST.
    lock = tomllib.loads((ROOT / "uv.lock").read_text(encoding="utf-8"))
    (locked,) = [p["version"] for p in lock["package"] if p["name"] == "pulumi"]
    assert locked in shortcuts.CHECKED_AGAINST
    assert shortcuts.installed_version() == locked

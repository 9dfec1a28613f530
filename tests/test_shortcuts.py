"""What the offline engine leaves out of the SDK's per-resource work
(gatewayctl/engine/shortcuts.py) changes nothing a run produces: the mock URN has the SDK's
value, known- and secretness and resources; debug messages still reach a logger that asks for
them."""

from __future__ import annotations

import logging
from typing import Any

import pulumi
import pytest
from pulumi.runtime import mocks
from pulumi.runtime.proto import engine_pb2

from gatewayctl.engine import shortcuts
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

    monkeypatch.setattr(shortcuts, "_sdk_unwrap_type", unwrap)
    monkeypatch.setattr(shortcuts, "_sdk_types_from_annotations", annotations)
    import pulumi_kubernetes as k8s

    run_program(_typed_program, project="p", stack="s")

    assert annotated.count(k8s.core.v1.ConfigMap) == 1  # three registrations, one answer
    assert annotated.count(k8s.core.v1.Namespace) == 1
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

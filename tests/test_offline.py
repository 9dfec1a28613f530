"""The offline engine's runtime: what it changes in the SDK for a run, and that it puts it back."""

from __future__ import annotations

import gc
import threading
from typing import Any

import pulumi
import pytest
from pulumi.runtime import resource as sdk_resource
from pulumi.runtime.proto import source_pb2

from gatewayctl.offline import RecordedResource, is_secret, run_program, secret


def _chain(count: int) -> Any:
    """``count`` resources, each taking its predecessor's output ``name`` as input ``after``."""
    previous: pulumi.CustomResource | None = None
    for index in range(count):
        after = previous.name if previous is not None else "start"  # type: ignore[attr-defined]
        previous = pulumi.CustomResource(
            "test:index:Link", f"link-{index}", {"name": f"link-{index}", "after": after}
        )
    return previous.name if previous is not None else None  # type: ignore[attr-defined]


def test_engine_calls_run_on_the_calling_thread() -> None:
    threads: list[int] = []

    def on_register(_: RecordedResource) -> None:
        threads.append(threading.get_ident())

    recording, last = run_program(
        lambda: _chain(5), project="p", stack="s", on_register=on_register
    )

    assert threads == [threading.get_ident()] * 5
    assert last == "link-4"
    assert [r.inputs["after"] for r in recording.resources.values()] == [
        "start",
        "link-0",
        "link-1",
        "link-2",
        "link-3",
    ]


def test_outputs_are_the_inputs_with_declared_secret_outputs_marked() -> None:
    def program() -> Any:
        source = pulumi.CustomResource(
            "test:index:Source",
            "source",
            {"token": "t0ken", "spec": {"ports": [8080, 9090], "labels": {"a": "b"}}},
            opts=pulumi.ResourceOptions(additional_secret_outputs=["token"]),
        )
        pulumi.CustomResource(
            "test:index:Sink",
            "sink",
            {"token": source.token, "spec": source.spec},  # type: ignore[attr-defined]
        )

    recording, _ = run_program(program, project="p", stack="s")

    source, sink = recording.resources.values()
    assert source.inputs["token"] == "t0ken"
    assert source.outputs["token"] == secret("t0ken")
    assert source.outputs["spec"] == {"ports": [8080.0, 9090.0], "labels": {"a": "b"}}
    assert is_secret(sink.inputs["token"])
    assert sink.inputs["token"]["value"] == "t0ken"
    assert sink.inputs["spec"] == source.outputs["spec"]


def test_no_call_stack_is_captured_during_a_run() -> None:
    capture = sdk_resource._get_stack_trace
    in_run: list[Any] = []

    def program() -> Any:
        in_run.append(sdk_resource._get_stack_trace)
        return _chain(1)

    run_program(program, project="p", stack="s")

    assert in_run[0] is not capture
    assert in_run[0]() == source_pb2.StackTrace()


def test_the_sdk_runtime_is_restored_after_a_run() -> None:
    capture = sdk_resource._get_stack_trace
    assert gc.isenabled()

    run_program(lambda: _chain(3), project="p", stack="s")

    assert sdk_resource._get_stack_trace is capture
    assert gc.isenabled()


def test_the_sdk_runtime_is_restored_when_the_program_fails() -> None:
    capture = sdk_resource._get_stack_trace

    def program() -> None:
        _chain(2)
        raise ValueError("declaration broke")

    with pytest.raises(ValueError, match="declaration broke"):
        run_program(program, project="p", stack="s")

    assert sdk_resource._get_stack_trace is capture
    assert gc.isenabled()


def test_a_run_frees_what_the_previous_run_left_frozen() -> None:
    run_program(lambda: _chain(200), project="p", stack="s")
    after_first = gc.get_freeze_count()
    run_program(lambda: _chain(200), project="p", stack="s")
    after_second = gc.get_freeze_count()

    assert after_first > 200 * 10  # the run's objects were frozen, not left young
    # Cumulative freezing would give about twice the first count.
    assert after_second < after_first * 1.25


def test_urns_carry_the_parents_whole_type_chain_as_the_engine_does() -> None:
    # pulumi/pulumi pkg/resource/deploy/deployment.go, generateURN: the parent's full qualified
    # type, and nothing for the root stack (the stock mock keeps only the parent's own type).
    def program() -> None:
        outer = pulumi.ComponentResource("test:index:Outer", "outer")
        inner = pulumi.ComponentResource(
            "test:index:Inner", "inner", opts=pulumi.ResourceOptions(parent=outer)
        )
        pulumi.CustomResource(
            "test:index:Leaf", "leaf", {}, opts=pulumi.ResourceOptions(parent=inner)
        )

    recording, _ = run_program(program, project="p", stack="s")

    prefix = "urn:pulumi:s::p::"
    assert sorted(recording.resources) == [
        f"{prefix}test:index:Outer$test:index:Inner$test:index:Leaf::leaf",
        f"{prefix}test:index:Outer$test:index:Inner::inner",
        f"{prefix}test:index:Outer::outer",
    ]
    leaf = recording.resources[f"{prefix}test:index:Outer$test:index:Inner$test:index:Leaf::leaf"]
    assert leaf.parent == f"{prefix}test:index:Outer$test:index:Inner::inner"

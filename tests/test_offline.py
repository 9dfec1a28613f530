"""The offline engine's runtime: what it changes in the SDK for a run, and that it puts it back."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import gc
import importlib
import inspect
import logging
import re
import threading
import types
from collections.abc import Iterator
from typing import Any

import pulumi
import pytest
from pulumi import _types
from pulumi.runtime import mocks, rpc, settings, stack, sync_await
from pulumi.runtime import resource as sdk_resource
from pulumi.runtime.proto import provider_pb2, resource_pb2, source_pb2

from gatewayctl.engine import offline, properties, render, shortcuts
from gatewayctl.engine.offline import RecordedResource, is_secret, run_program, secret
from gatewayctl.resolve import preparation
from tests.support import ROOT


def _chain(count: int) -> Any:
    """``count`` resources, each taking its predecessor's output ``name`` as input ``after``."""
    previous: pulumi.CustomResource | None = None
    for index in range(count):
        # A CustomResource's outputs are attributes the engine sets at registration.
        after = previous.name if previous is not None else "start"  # type: ignore[attr-defined]
        previous = pulumi.CustomResource(
            "test:index:Link", f"link-{index}", {"name": f"link-{index}", "after": after}
        )
    # (the same: an output attribute)
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


def test_an_engine_call_is_made_at_once_and_its_future_returned_done() -> None:
    loop = offline._OfflineLoop()
    calls: list[tuple[Any, int]] = []

    def call(value: Any) -> Any:
        calls.append((value, threading.get_ident()))
        if value == "fail":
            raise RuntimeError("engine said no")
        return f"answer to {value}"

    try:
        answered = loop.run_in_executor(None, call, "ask")
        failed = loop.run_in_executor(None, call, "fail")
        assert calls == [("ask", threading.get_ident()), ("fail", threading.get_ident())]
        assert answered.done() and answered.result() == "answer to ask"
        assert failed.done() and str(failed.exception()) == "engine said no"
        # An executor of the caller's own is used as asyncio uses it.
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            threaded = loop.run_in_executor(pool, call, "elsewhere")
            assert loop.run_until_complete(threaded) == "answer to elsewhere"
        assert calls[-1][1] != threading.get_ident()
    finally:
        loop.close()


class _AsyncioLoop(asyncio.SelectorEventLoop):
    """The offline loop on asyncio's own loop (as on Windows, where uvloop is not built)."""

    run_in_executor = offline._OfflineLoop.run_in_executor


def test_the_offline_loop_is_uvloops_where_it_is_built() -> None:
    uvloop = pytest.importorskip("uvloop", reason="uvloop is not built for this platform")
    loops: list[type] = []
    run_program(lambda: loops.append(type(asyncio.get_event_loop())), project="p", stack="s")
    assert loops == [offline._OfflineLoop]
    assert issubclass(offline._OfflineLoop, uvloop.Loop)


@pytest.mark.parametrize("stack", ["local", "ibm"])
def test_a_stack_registers_the_same_in_the_same_order_on_either_loop(
    stack: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    prepared = preparation.prepare(ROOT, stack)
    on_uvloop = render.execute(prepared)
    monkeypatch.setattr(offline, "_OfflineLoop", _AsyncioLoop)
    on_asyncio = render.execute(prepared)

    assert list(on_uvloop.recording.resources) == list(on_asyncio.recording.resources)
    assert [
        (r.inputs, r.outputs, r.dependencies) for r in on_uvloop.recording.resources.values()
    ] == [(r.inputs, r.outputs, r.dependencies) for r in on_asyncio.recording.resources.values()]
    assert on_uvloop.files == on_asyncio.files
    assert len(on_uvloop.recording.resources) > 40


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
            # A CustomResource's outputs are attributes the engine sets at registration.
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


def _assert_the_sdks_own() -> None:
    """Every function and method the shortcuts replace is the SDK's again."""
    import pulumi.resource
    from pulumi import _utils
    from pulumi.resource_hooks import ResourceHookBinding

    assert sdk_resource.create_urn is shortcuts._sdk_create_urn
    assert pulumi.log.debug is shortcuts._sdk_debug
    assert _types.unwrap_type is shortcuts._sdk_unwrap_type
    assert _types._types_from_annotations is shortcuts._sdk_types_from_annotations
    for name, function in shortcuts._sdk_names.items():
        assert vars(_types)[name] is function
    assert vars(pulumi.resource)["collapse_alias_to_urn"] is shortcuts._sdk_collapse_alias
    assert vars(pulumi.ResourceOptions)["_copy"] is shortcuts._sdk_copy_options
    assert vars(ResourceHookBinding)["merge"] is shortcuts._sdk_merge_hooks
    assert vars(_utils.ContextProperty)["__get__"] is shortcuts._sdk_context_get
    assert rpc.deserialize_properties is properties._sdk_deserialize_properties
    assert rpc.serialize_property is properties._sdk_serialize_property
    assert rpc.contains_unknowns is properties._sdk_contains_unknowns
    assert rpc.transfer_properties is properties._sdk_transfer_properties
    assert rpc.translate_output_properties is properties._sdk_translate


def test_the_sdk_runtime_is_restored_after_a_run() -> None:
    capture = sdk_resource._get_stack_trace
    assert gc.isenabled()

    run_program(lambda: _chain(3), project="p", stack="s")

    assert sdk_resource._get_stack_trace is capture
    _assert_the_sdks_own()
    assert gc.isenabled()


def test_the_sdk_runtime_is_restored_when_the_program_fails() -> None:
    capture = sdk_resource._get_stack_trace

    def program() -> None:
        _chain(2)
        raise ValueError("declaration broke")

    with pytest.raises(ValueError, match="declaration broke"):
        run_program(program, project="p", stack="s")

    assert sdk_resource._get_stack_trace is capture
    _assert_the_sdks_own()
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


# --- the SDK internals the offline engine relies on (the pulumi pin in pyproject.toml) ---------


def _parameters(function: Any) -> list[str]:
    return list(inspect.signature(function).parameters)


def _nested(code: types.CodeType) -> Iterator[types.CodeType]:
    """The code objects defined in ``code`` (its functions, comprehensions), at any depth."""
    for const in code.co_consts:
        if inspect.iscode(const):
            yield const
            yield from _nested(const)


def _codes(module: Any) -> Iterator[types.CodeType]:
    """Every code object of ``module``'s functions, nested ones included."""
    for value in vars(module).values():
        if inspect.isfunction(value):
            yield value.__code__
            yield from _nested(value.__code__)


def test_the_sdk_internals_the_offline_engine_relies_on_are_as_it_expects() -> None:
    """Fails on a pulumi upgrade that moves, renames or reshapes what gatewayctl/engine/offline.py
    uses beyond the SDK's public API; read offline.py against the new SDK before changing it."""
    # The wire form of a secret (private constants of pulumi.runtime.rpc).
    assert (rpc._special_sig_key, rpc._special_secret_sig) == (
        "4dabf18193072939515e22adb298388d",
        "1b47061264138c4ac30d75fd1eb44270",
    )
    assert offline.SECRET_SIG_KEY is rpc._special_sig_key
    assert offline.SECRET_SIG is rpc._special_secret_sig
    # Replaced for the length of a run (gatewayctl/engine/shortcuts.py); the SDK must look each
    # up by name when it registers, and the mock URN must be what only the no-monitor branch
    # reads.
    assert _parameters(sdk_resource._get_stack_trace) == []
    assert "_get_stack_trace" in sdk_resource.register_resource.__code__.co_names
    assert "debug" in sdk_resource.register_resource.__code__.co_names
    assert _parameters(sdk_resource.create_urn) == ["name", "type_", "parent", "project", "stack"]
    assert _parameters(pulumi.log.debug) == ["msg", "resource", "stream_id", "ephemeral"]
    (do_register,) = [
        code
        for code in sdk_resource.register_resource.__code__.co_consts
        if inspect.iscode(code) and code.co_name == "do_register"
    ]
    assert "create_urn" in do_register.co_names
    assert "mock_urn" in do_register.co_cellvars
    (do_rpc_call,) = [
        code
        for code in do_register.co_consts
        if inspect.iscode(code) and code.co_name == "do_rpc_call"
    ]
    assert "mock_urn" in do_rpc_call.co_freevars
    assert isinstance(mocks.MockEngine(None).logger, logging.Logger)
    # Answered once per type: looked up in pulumi._types at each call, never imported by name.
    assert _parameters(_types.unwrap_type) == ["val"]
    assert _parameters(_types._types_from_annotations) == ["cls"]
    assert {"_types", "unwrap_type"} <= set(rpc.serialize_property.__code__.co_names)
    assert "_types_from_annotations" in _types.resource_types.__code__.co_names
    assert {"_types", "resource_types"} <= set(rpc.resolve_outputs.__code__.co_names)
    for module in (rpc, sdk_resource):
        assert "unwrap_type" not in vars(module)
        assert "_types_from_annotations" not in vars(module)
    # The stock mock monitor, subclassed: its URN rule, its registration call and its store.
    assert _parameters(mocks.MockMonitor.make_urn) == ["self", "parent", "type_", "name"]
    assert _parameters(mocks.MockMonitor.RegisterResource) == ["self", "request"]
    assert mocks.MockMonitor.ResourceRegistration._fields == ("urn", "id", "state")
    monitor = mocks.MockMonitor(offline.RecordingMocks())
    assert monitor.resources == {}
    assert isinstance(monitor.mocks, offline.RecordingMocks)
    assert {"mocks", "project", "stack", "preview", "monitor"} <= set(
        _parameters(pulumi.runtime.set_mocks)
    )
    # The runtime state reset before each run, and the calls that run the program.
    assert isinstance(settings.ROOT, contextvars.ContextVar)
    assert callable(settings.SETTINGS.rpc_manager.clear)
    assert isinstance(settings.SETTINGS.outputs, set)
    assert _parameters(stack.run_pulumi_func) == ["func"]
    assert _parameters(sync_await._sync_await) == ["awaitable"]
    # Serialisation: a coroutine (run to its end by offline._finish) and its inverse.
    assert inspect.iscoroutinefunction(rpc.serialize_properties)
    assert _parameters(rpc.serialize_properties)[:2] == ["inputs", "property_deps"]
    assert _parameters(rpc.deserialize_properties) == [
        "props_struct",
        "keep_unknowns",
        "keep_internal",
    ]
    # Read in one pass (properties.deserialize_properties): looked up in rpc at each call; the
    # SDK's reading of a value (its rules, which the shortcut repeats) as read from 3.272.0.
    assert "deserialize_properties" in rpc.resolve_outputs.__code__.co_names
    assert "deserialize_properties" in rpc.deserialize_property.__code__.co_names
    assert "deserialize_properties" in mocks.MockMonitor.Invoke.__code__.co_names
    assert _parameters(rpc.deserialize_property) == ["value", "keep_unknowns", "keep_internal"]
    read_value = rpc.deserialize_property.__code__
    names = {name for code in (read_value, *_nested(read_value)) for name in code.co_names}
    assert {"UNKNOWN", "is_dry_run", "is_rpc_secret", "wrap_rpc_secret"} <= names
    assert rpc.UNKNOWN == "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
    # Plain values (properties.serialize_property): looked up in rpc for every nested value;
    # its parameters, and the type checks a plain value fails, as read from 3.272.0.
    assert _parameters(rpc.serialize_property) == [
        "value",
        "deps",
        "property_key",
        "resource_obj",
        "input_transformer",
        "typ",
        "keep_output_values",
        "exclude_resource_refs_from_deps",
        "return_protobuf_value",
    ]
    assert "serialize_property" in rpc.serialize_property.__code__.co_names
    assert "serialize_property" in rpc.serialize_properties.__code__.co_names
    assert {"isLegalProtobufValue", "is_output", "is_input_type"} <= set(
        rpc.serialize_property.__code__.co_names
    )
    assert all(rpc.isLegalProtobufValue(v) for v in ("s", 1, 1.5, True, None))
    # Unknowns (properties.contains_unknowns): Output data and serialize_property ask rpc's.
    assert _parameters(rpc.contains_unknowns) == ["val"]
    assert "contains_unknowns" in rpc.serialize_property.__code__.co_names
    output_module = importlib.import_module("pulumi.output")
    assert "rpc" in output_module.contains_unknowns.__code__.co_names
    assert "contains_unknowns" in output_module._OutputData.__post_init__.__code__.co_names
    # Engine calls are the loop's default executor's (offline._OfflineLoop).
    for module in (sdk_resource, importlib.import_module("pulumi.runtime.invoke")):
        assert "run_in_executor" in {name for code in _codes(module) for name in code.co_names}
    # The registration request's fields RecordingMonitor.RegisterResource reads.
    fields = resource_pb2.RegisterResourceRequest.DESCRIPTOR.fields_by_name
    read = {"parent", "type", "name", "object", "provider", "custom", "dependencies"}
    read |= {"additionalSecretOutputs", "ignoreChanges", "retainOnDelete", "protect"}
    assert read <= set(fields)
    assert fields["retainOnDelete"].has_presence
    assert fields["protect"].has_presence
    # RecordingMonitor.Invoke: the invoke request and response fields, the mock's call.
    invoke = resource_pb2.ResourceInvokeRequest.DESCRIPTOR.fields_by_name
    assert {"tok", "args", "provider"} <= set(invoke)
    answer = resource_pb2.ResourceInvokeResponse.DESCRIPTOR.fields_by_name
    assert {"failures", "return"} <= set(answer)
    assert {"property", "reason"} <= set(provider_pb2.CheckFailure.DESCRIPTOR.fields_by_name)
    assert _parameters(mocks.MockMonitor.Invoke) == ["self", "request"]
    assert _parameters(pulumi.runtime.MockCallArgs) == ["token", "args", "provider"]


def test_every_registration_asks_the_offline_engine_for_its_stack_trace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The stack-trace patch is not dead: the SDK calls the replacement, once per registration
    (the root stack's included), and none other."""
    calls: list[Any] = []

    def counted() -> Any:
        calls.append(None)
        return source_pb2.StackTrace()

    monkeypatch.setattr(shortcuts, "_no_stack_trace", counted)
    recording, _ = run_program(lambda: _chain(3), project="p", stack="s")

    assert len(recording.resources) == 3
    assert len(calls) == len(recording.resources) + 1


def test_the_note_beside_the_pulumi_pin_names_tests_that_exist() -> None:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    pin = text.index('"pulumi==')
    note = text[text.rindex("dependencies = [", 0, pin) : pin]
    named = re.findall(r"\b(test_\w+)\b(?!\.)", note)
    sources = "".join(
        (ROOT / "tests" / name).read_text(encoding="utf-8")
        for name in ("test_offline.py", "test_render.py")
    )
    assert "gatewayctl/engine/offline.py" in note
    assert "test_the_sdk_internals_the_offline_engine_relies_on_are_as_it_expects" in named
    assert [name for name in named if f"\ndef {name}(" not in sources] == []

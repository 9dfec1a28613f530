"""The SDK's per-resource work that only a remote engine needs, left out of an offline run
(``gatewayctl.engine.offline`` applies :func:`applied` for the length of one run; everything is
put back at its end). None changes what is registered or what an Output resolves to
(``tests/test_shortcuts.py``). What they save: ``docs/performance.md``, "Scale (issue 23)".
Read from pulumi 3.272.0, ``pulumi/runtime/resource.py``, ``pulumi/log.py``, ``pulumi/_types.py``
and ``pulumi/runtime/rpc.py``:

- **No call-stack capture** (``_get_stack_trace``): the engine turns it into source positions for
  its diagnostics; the offline engine records none (about 15% of a render).
- **The mock URN made directly** (``create_urn``): ``register_resource``'s ``do_register``
  computes ``mock_urn = await create_urn(name, ty, resolver.parent_urn).future()`` for every
  resource, though only its no-monitor branch (``if monitor is None``) uses it; the offline
  engine is a monitor. The SDK builds it from four Outputs (``Output.from_input`` of the
  prefix, ``Output.all`` of three, two ``apply``); here it is one, with the same value, known-
  and secretness and resources: a plain ``str`` parent (what ``do_register`` passes) is known,
  not secret and depends on nothing, so its URN is a plain value too.
- **Debug messages dropped unread** (``log.debug``): the SDK logs three or more per resource;
  under mocks they reach ``MockEngine.Log`` (``pulumi/runtime/mocks.py``), which passes them to
  the root ``logging`` logger at DEBUG, disabled unless someone enables it. They are built into
  a ``LogRequest`` only when it is enabled.
- **Type introspection done once per type** (``pulumi/_types.py``): ``unwrap_type`` (the ``T``
  of ``Input[T]``, ``Optional[T]``...; ``rpc.serialize_property`` asks it for every property of
  every resource, and it imports ``Output`` each time) and ``_types_from_annotations`` (a
  resource class's annotated output types: ``rpc.resolve_outputs`` asks ``resource_types`` for
  every registration, which builds a class and evaluates its type hints each time) are pure
  functions of the type they are given, as the SDK's own ``functools.cache`` on their
  neighbours (``_py_properties``, ``_raw_return_hints``, ``_types_from_py_properties``) takes
  them to be. Here each answer is kept per type object (by identity: the SDK passes the same
  objects again) for the length of the run, and shared as the SDK shares its cached ones.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pulumi
import pulumi.log
from pulumi import _types
from pulumi.runtime import resource as sdk_resource
from pulumi.runtime import settings
from pulumi.runtime.proto import source_pb2

_T = TypeVar("_T")
_R = TypeVar("_R")


def _no_stack_trace() -> Any:
    return source_pb2.StackTrace()


_sdk_create_urn = sdk_resource.create_urn
_sdk_debug = pulumi.log.debug
_sdk_unwrap_type = _types.unwrap_type
_sdk_types_from_annotations = _types._types_from_annotations


def create_urn(
    name: Any,
    type_: Any,
    parent: Any = None,
    project: str | None = None,
    stack: str | None = None,
) -> pulumi.Output[str]:
    """``pulumi.runtime.resource.create_urn``'s value in one Output (the SDK's own for the
    cases not shortened: a name or type that is an Output)."""
    if not (isinstance(name, str) and isinstance(type_, str)):
        return _sdk_create_urn(name, type_, parent, project, stack)
    if parent is None:
        stack = settings.get_stack() if stack is None else stack
        project = settings.get_project() if project is None else project
        return pulumi.Output.from_input(f"urn:pulumi:{stack}::{project}::{type_}::{name}")
    if isinstance(parent, str):
        return pulumi.Output.from_input(f"{parent[: parent.rfind('::')]}${type_}::{name}")
    parent_urn = (
        parent.urn if isinstance(parent, pulumi.Resource) else pulumi.Output.from_input(parent)
    )
    return parent_urn.apply(lambda urn: f"{urn[: urn.rfind('::')]}${type_}::{name}")


def debug(msg: str, *args: Any, **kwargs: Any) -> None:
    """``pulumi.log.debug`` when the mock engine's logger would write it; nothing otherwise."""
    if logging.getLogger().isEnabledFor(logging.DEBUG):
        _sdk_debug(msg, *args, **kwargs)


def once_per_object(function: Callable[[_T], _R]) -> Callable[[_T], _R]:
    """``function`` answering once for each object it is given (by identity; the object is kept
    with its answer, so its id is never reused meanwhile)."""
    answers: dict[int, tuple[_T, _R]] = {}

    def answer(value: _T) -> _R:
        known = answers.get(id(value))
        if known is None:
            known = answers[id(value)] = (value, function(value))
        return known[1]

    return answer


@contextlib.contextmanager
def applied() -> Iterator[None]:
    """The shortcuts in place for the ``with`` block."""
    saved = sdk_resource._get_stack_trace, sdk_resource.create_urn, pulumi.log.debug
    # The functions of pulumi._types answered once per type (read here, so a test can wrap them).
    once = {"unwrap_type": _sdk_unwrap_type, "_types_from_annotations": _sdk_types_from_annotations}
    introspection = {name: getattr(_types, name) for name in once}
    sdk_resource._get_stack_trace = _no_stack_trace
    sdk_resource.create_urn = create_urn
    pulumi.log.debug = debug
    for name, function in once.items():
        setattr(_types, name, once_per_object(function))
    try:
        yield
    finally:
        sdk_resource._get_stack_trace, sdk_resource.create_urn, pulumi.log.debug = saved
        for name, function in introspection.items():
            setattr(_types, name, function)

"""The SDK's per-resource work that only a remote engine needs, left out of an offline run
(``gatewayctl.engine.offline`` applies :func:`applied` for the length of one run; everything is
put back at its end). None changes what is registered or what an Output resolves to
(``tests/test_shortcuts.py``). What they save: ``docs/performance.md``, "Scale (issue 23)".
Read from pulumi 3.272.0, ``pulumi/runtime/resource.py`` and ``pulumi/log.py``:

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
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

import pulumi
import pulumi.log
from pulumi.runtime import resource as sdk_resource
from pulumi.runtime import settings
from pulumi.runtime.proto import source_pb2


def _no_stack_trace() -> Any:
    return source_pb2.StackTrace()


_sdk_create_urn = sdk_resource.create_urn
_sdk_debug = pulumi.log.debug


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


@contextlib.contextmanager
def applied() -> Iterator[None]:
    """The shortcuts in place for the ``with`` block."""
    saved = sdk_resource._get_stack_trace, sdk_resource.create_urn, pulumi.log.debug
    sdk_resource._get_stack_trace = _no_stack_trace
    sdk_resource.create_urn = create_urn
    pulumi.log.debug = debug
    try:
        yield
    finally:
        sdk_resource._get_stack_trace, sdk_resource.create_urn, pulumi.log.debug = saved

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
- **Properties read from a protobuf Struct in one pass** (``rpc.deserialize_properties``): every
  registration's properties are read twice (the offline engine reads the request, the SDK the
  response). The SDK reads each value through the Python ``Struct`` wrappers of protobuf
  (``items()`` builds a list of pairs, each value looked up again; ``deserialize_property``
  runs an import statement per value); :func:`deserialize_properties` reads the same map and
  oneofs directly, with the SDK's rules: a string that is ``rpc.UNKNOWN`` is ``Unknown()``
  when kept (else None), numbers are floats, a property or map entry that reads as None is
  left out (a list keeps it), a secret inside a map or list makes the map or list the secret
  (with the SDK's ``is_rpc_secret``, ``wrap_rpc_secret``, ``unwrap_rpc_secret``), and a Struct
  carrying the special signature key (an asset, archive, secret, resource reference or output
  value) is read by the SDK's own function.
- **Plain values serialised as they are** (``rpc.serialize_property``): for a ``str``, ``int``,
  ``float``, ``bool`` or ``None`` (exactly those types: an enum is a subclass) the SDK's
  function, called for every value of every input, runs a dozen type checks (a sequence? an
  Unknown, a resource, an asset, an archive, an awaitable, an Output, an input type, a mapping,
  a protobuf Value?) that all fail, then returns the value; here it is returned at once. Every
  other value, and a call asking for a protobuf Value, goes to the SDK's function.
- **Unknowns looked for without recursion** (``rpc.contains_unknowns``, asked by every Output
  that is made known, over its whole value): the same answer (an ``Unknown`` anywhere in its
  dicts and lists, each visited once) from a loop that skips plain values.
- **Options copied and hooks merged directly** (``pulumi/resource.py``,
  ``pulumi/resource_hooks.py``): every typed resource merges its options at least twice
  (``ResourceOptions.merge`` of the package's defaults and the caller's, and of its aliases),
  each merge copying both options with ``copy.copy`` (``ResourceOptions._copy``) and merging
  their hook bindings (``ResourceHookBinding.merge``: two more copies and seven list merges).
  For a ``ResourceOptions`` itself (not a subclass) the copy is what ``copy.copy`` makes of a
  class without ``__slots__``, ``__copy__`` or ``__reduce__`` of its own: a new instance whose
  ``__dict__`` is updated from the original's. Two bindings that bind no hook (None, or every
  list None) merge to a new ``ResourceHookBinding()``, as the SDK's merge of them does; any
  other pair is merged by the SDK.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pulumi
import pulumi.log
from pulumi import _types
from pulumi.resource_hooks import ResourceHookBinding
from pulumi.runtime import resource as sdk_resource
from pulumi.runtime import rpc, settings
from pulumi.runtime.proto import source_pb2

_T = TypeVar("_T")
_R = TypeVar("_R")


def _no_stack_trace() -> Any:
    return source_pb2.StackTrace()


_sdk_create_urn = sdk_resource.create_urn
_sdk_debug = pulumi.log.debug
_sdk_unwrap_type = _types.unwrap_type
_sdk_types_from_annotations = _types._types_from_annotations
_sdk_deserialize_properties = rpc.deserialize_properties
_sdk_serialize_property = rpc.serialize_property
_sdk_contains_unknowns = rpc.contains_unknowns
_sdk_copy_options = vars(pulumi.ResourceOptions)["_copy"]
_sdk_merge_hooks = vars(ResourceHookBinding)["merge"]
_PLAIN = frozenset({str, int, float, bool, type(None)})
_SIG = rpc._special_sig_key


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


def deserialize_properties(
    props_struct: Any, keep_unknowns: bool | None = None, keep_internal: bool | None = True
) -> Any:
    """``pulumi.runtime.rpc.deserialize_properties``' value, read in one pass (module docstring)."""
    fields = props_struct.fields
    if _SIG in fields:
        return _sdk_deserialize_properties(props_struct, keep_unknowns, keep_internal)
    output = {}
    for key, value in fields.items():
        if keep_internal is False and key.startswith("__") and key != "__provider":
            continue
        read = _read(value, keep_unknowns, keep_internal)
        if read is not None:
            output[key] = read
    return output


def _read(value: Any, keep_unknowns: bool | None, keep_internal: bool | None) -> Any:
    """``rpc.deserialize_property`` of one ``google.protobuf.Value``."""
    kind = value.WhichOneof("kind")
    if kind == "string_value":
        text = value.string_value
        if text == rpc.UNKNOWN:
            kept = settings.is_dry_run() or keep_unknowns
            return pulumi.output.Unknown() if kept else None  # type: ignore[no-untyped-call]
        return text
    if kind == "number_value":
        return value.number_value
    if kind == "bool_value":
        return value.bool_value
    if kind == "struct_value":
        props = deserialize_properties(value.struct_value, keep_unknowns, keep_internal)
        if isinstance(props, dict) and any(rpc.is_rpc_secret(v) for v in props.values()):
            return rpc.wrap_rpc_secret({k: rpc.unwrap_rpc_secret(v) for k, v in props.items()})
        return props
    if kind == "list_value":
        items = [_read(item, keep_unknowns, keep_internal) for item in value.list_value.values]
        if any(rpc.is_rpc_secret(item) for item in items):
            return rpc.wrap_rpc_secret([rpc.unwrap_rpc_secret(item) for item in items])
        return items
    if kind == "null_value":
        return None
    raise ValueError("Value not set")  # as protobuf's Struct reads an empty Value


async def serialize_property(value: Any, *args: Any, **kwargs: Any) -> Any:
    """``rpc.serialize_property``'s value (module docstring); its parameters after ``value``:
    deps, property_key, resource_obj, input_transformer, typ, keep_output_values,
    exclude_resource_refs_from_deps, return_protobuf_value."""
    protobuf = kwargs.get("return_protobuf_value", len(args) > 7 and args[7])
    if type(value) in _PLAIN and not protobuf:
        return value
    return await _sdk_serialize_property(value, *args, **kwargs)


def contains_unknowns(val: Any) -> bool:
    """``rpc.contains_unknowns``' answer (module docstring)."""
    unknown = pulumi.output.Unknown
    pending = [val]
    seen: set[int] = set()
    while pending:
        item = pending.pop()
        if isinstance(item, unknown):
            return True
        if type(item) in _PLAIN or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, dict):
            pending.extend(item[key] for key in item)
        elif isinstance(item, list):
            pending.extend(item)
    return False


def copy_options(self: pulumi.ResourceOptions) -> pulumi.ResourceOptions:
    """``ResourceOptions._copy``'s copy (module docstring)."""
    if type(self) is not pulumi.ResourceOptions:
        copied: pulumi.ResourceOptions = _sdk_copy_options(self)
        return copied
    copied = object.__new__(pulumi.ResourceOptions)
    copied.__dict__.update(self.__dict__)
    return copied


def merge_hooks(
    cls: type[ResourceHookBinding],
    bindings1: ResourceHookBinding | None,
    bindings2: ResourceHookBinding | None,
) -> ResourceHookBinding:
    """``ResourceHookBinding.merge``'s binding (module docstring)."""
    if _binds_nothing(bindings1) and _binds_nothing(bindings2):
        return ResourceHookBinding()
    merged: ResourceHookBinding = _sdk_merge_hooks.__func__(cls, bindings1, bindings2)
    return merged


def _binds_nothing(bindings: Any) -> bool:
    if bindings is None:
        return True
    if type(bindings) is not ResourceHookBinding:
        return False
    return all(hooks is None for hooks in vars(bindings).values())


@contextlib.contextmanager
def applied() -> Iterator[None]:
    """The shortcuts in place for the ``with`` block (each read here, at the call, so a test can
    wrap one), and the SDK's own functions put back after it."""
    # pulumi._types' functions are answered once per type.
    once = {"unwrap_type": _sdk_unwrap_type, "_types_from_annotations": _sdk_types_from_annotations}
    replacements: list[tuple[Any, str, Any]] = [
        (sdk_resource, "_get_stack_trace", _no_stack_trace),
        (sdk_resource, "create_urn", create_urn),
        (pulumi.log, "debug", debug),
        (rpc, "deserialize_properties", deserialize_properties),
        (rpc, "serialize_property", serialize_property),
        (rpc, "contains_unknowns", contains_unknowns),
        (pulumi.ResourceOptions, "_copy", copy_options),
        (ResourceHookBinding, "merge", classmethod(merge_hooks)),
        *[(_types, name, once_per_object(function)) for name, function in once.items()],
    ]
    # vars(), not getattr(): a class's classmethod is put back as itself, not as a bound method.
    saved = [(owner, name, vars(owner)[name]) for owner, name, _ in replacements]
    for owner, name, replacement in replacements:
        setattr(owner, name, replacement)
    try:
        yield
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)

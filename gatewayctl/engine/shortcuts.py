"""The SDK's per-resource and per-value work that only a remote engine needs, answered directly
in an offline run (``gatewayctl.engine.offline`` wraps each run in :func:`applied`; the SDK's own
are put back at its end). Only replacements that save at least 3% of a 500-gateway render each
are kept (``docs/performance.md``, "SDK replacements": the measured table); each gives the SDK's
own answer (``tests/test_shortcuts.py`` compares them).

**The guard.** They were read from, and are checked against, the pulumi SDK versions in
:data:`CHECKED_AGAINST`. On any other version :func:`applied` replaces nothing (the render is
the same, only slower) and says so in a debug line. Not a warning: a user can do nothing about
it, and every render, worker and diff would repeat it; the one who must act is whoever moves
the pin in ``uv.lock``, and ``tests/test_shortcuts.py`` fails for them until the version is
read and added here.

Each replacement, and what of pulumi 3.272.0 was read for it (single-underscore SDK names are
used only where cited; no name-mangled attribute is read):

- ``pulumi/runtime/resource.py``, ``_get_stack_trace`` (called by ``register_resource``): the
  call stack the engine turns into source positions; the offline engine records none.
- ``pulumi/runtime/resource.py``, ``create_urn``: ``register_resource``'s ``do_register``
  awaits a mock URN for its no-monitor branch only (the offline engine is a monitor); the SDK
  builds it from four Outputs, :func:`create_urn` from one, with the same value, known- and
  secretness and resources.
- ``pulumi/resource.py``, ``collapse_alias_to_urn`` (imported from ``pulumi/runtime/resource.py``,
  called by ``Resource.__init__`` for each alias): five Output steps; a string, or an ``Alias``
  of plain strings with a resource, URN string or None parent, is :func:`create_urn` of the same
  parts. Any other alias goes to the SDK.
- ``pulumi/log.py``, ``debug``: the SDK logs three or more per resource, which the mock engine
  passes to the root ``logging`` logger at DEBUG; built only when that logger is enabled.
- ``pulumi/_types.py``, ``unwrap_type`` (asked by ``rpc.serialize_property`` for every property
  of every resource): a pure function of the type, answered once per type object.
- ``pulumi/runtime/rpc.py``, ``deserialize_properties`` (with ``deserialize_property``,
  ``_special_sig_key``): every registration's properties are read twice through protobuf's
  ``Struct`` wrappers; read here in one pass with the SDK's rules. A Struct carrying the
  signature key (asset, archive, secret, resource reference, output value) goes to the SDK.
- ``pulumi/runtime/rpc.py``, ``serialize_property``: a ``str``, ``int``, ``float``, ``bool`` or
  None (exactly those types) is returned at once, after the dozen type checks the SDK runs.
- ``pulumi/runtime/rpc.py``, ``contains_unknowns`` (asked by every Output made known, through
  ``pulumi/output.py``, ``_OutputData.__post_init__``): the same answer from a loop.
- ``pulumi/runtime/rpc.py``, ``transfer_properties`` (with ``pulumi/output.py``'s
  ``_OutputData`` and ``Output._from_data``, the form ``resource_output`` gives ``urn`` and
  ``id``): each property's Output from one future its resolver sets, not four futures and a
  task; tracked in ``SETTINGS.outputs`` as the SDK tracks every Output.
- ``pulumi/runtime/rpc.py``, ``translate_output_properties`` (with ``_Path``): a plain value
  whose target type keeps it is returned as it is (a float as an ``int`` for ``int``), an
  untyped dict or list rebuilt the SDK's way; anything else goes to the SDK.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib.metadata
import logging
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pulumi
import pulumi.log
import pulumi.resource
from pulumi import _types
from pulumi.output import _OutputData
from pulumi.runtime import resource as sdk_resource
from pulumi.runtime import rpc, settings
from pulumi.runtime.proto import source_pb2

CHECKED_AGAINST: tuple[str, ...] = ("3.272.0",)
"""The pulumi SDK versions these replacements were read from and checked against; the real
engine's two (:mod:`gatewayctl.engine.drain`, :mod:`gatewayctl.engine.sdk_debug`) are guarded
by the same tuple, so an SDK upgrade is one list to read again and one place to record it."""

_T = TypeVar("_T")
_R = TypeVar("_R")
_log = logging.getLogger(__name__)

_sdk_create_urn = sdk_resource.create_urn
_sdk_collapse_alias = vars(pulumi.resource)["collapse_alias_to_urn"]
_sdk_debug = pulumi.log.debug
_sdk_unwrap_type = _types.unwrap_type
_sdk_deserialize_properties = rpc.deserialize_properties
_sdk_serialize_property = rpc.serialize_property
_sdk_contains_unknowns = rpc.contains_unknowns
_sdk_transfer_properties = rpc.transfer_properties
_sdk_translate = rpc.translate_output_properties
_PLAIN = frozenset({str, int, float, bool, type(None)})
_SIG = rpc._special_sig_key
_rules: dict[int, tuple[Any, str]] = {}


@functools.cache
def installed_version() -> str:
    """The pulumi SDK version installed (its distribution's metadata)."""
    return importlib.metadata.version("pulumi")


def _no_stack_trace() -> Any:
    return source_pb2.StackTrace()


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


def collapse_alias_to_urn(
    alias: Any, default_name: str, default_type: str, default_parent: Any
) -> pulumi.Output[str]:
    """``collapse_alias_to_urn``'s Output (module docstring)."""
    if isinstance(alias, str):
        return pulumi.Output.from_input(alias)
    if type(alias) is not pulumi.Alias:
        return _sdk_alias_urn(alias, default_name, default_type, default_parent)
    given: Any = alias  # its fields may hold ``...`` (left to the default), not in its types
    name = default_name if given.name is ... else given.name
    type_ = default_type if given.type_ is ... else given.type_
    parent = default_parent if given.parent is ... else given.parent
    project = settings.get_project() if given.project in (..., None) else given.project
    stack = settings.get_stack() if given.stack in (..., None) else given.stack
    plain = all(isinstance(part, str) for part in (name, type_, project, stack))
    if not plain or not (parent is None or isinstance(parent, (str, pulumi.Resource))):
        return _sdk_alias_urn(alias, default_name, default_type, default_parent)
    return create_urn(name, type_, parent, project, stack)


def _sdk_alias_urn(alias: Any, name: str, type_: str, parent: Any) -> pulumi.Output[str]:
    urn: pulumi.Output[str] = _sdk_collapse_alias(alias, name, type_, parent)
    return urn


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
    """``rpc.deserialize_properties``' value, read in one pass (module docstring)."""
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


_AS_IS, _TO_INT, _TO_SDK = "as-is", "int", "sdk"


def _plain_rule(typ: Any) -> str:
    """What ``translate_output_properties`` does with a plain value whose target is ``typ``
    (decided once per type object, which is kept with its rule)."""
    known = _rules.get(id(typ))
    if known is None:
        known = _rules[id(typ)] = (typ, _rule(typ))
    return known[1]


def _rule(typ: Any) -> str:
    target = _types.unwrap_optional_type(typ) if typ else typ
    if target is None or target is Any or target is str or target is bool or target is float:
        return _AS_IS
    return _TO_INT if target is int else _TO_SDK


def translate_output_properties(
    output: Any,
    output_transformer: Callable[[str], str],
    typ: Any = None,
    transform_using_type_metadata: bool = False,
    path: Any = None,
    return_none_on_dict_type_mismatch: bool = False,
) -> Any:
    """``rpc.translate_output_properties``' value (module docstring)."""
    kind = type(output)
    if kind in _PLAIN:
        rule = _plain_rule(typ)
        if rule is _AS_IS:
            return output
        if rule is _TO_INT:
            return int(output) if kind is float else output
    elif typ is None and kind is dict and not rpc.is_rpc_secret(output):
        flags = (transform_using_type_metadata, return_none_on_dict_type_mismatch)
        return {
            output_transformer(key): _untyped(value, key, output_transformer, *flags, path)
            for key, value in output.items()
        }
    elif typ is None and kind is list:
        flags = (transform_using_type_metadata, return_none_on_dict_type_mismatch)
        return [
            _untyped(value, str(index), output_transformer, *flags, path)
            for index, value in enumerate(output)
        ]
    return _sdk_translate(
        output,
        output_transformer,
        typ,
        transform_using_type_metadata,
        path,
        return_none_on_dict_type_mismatch,
    )


def transfer_properties(res: Any, props: Any, custom: bool) -> dict[str, Any]:
    """``rpc.transfer_properties``: each property's Output and its resolver (module docstring),
    for the same properties (all but ``urn``, and ``id`` of a custom resource)."""
    resolvers: dict[str, Any] = {}
    for name in props:
        if name == "urn" or (name == "id" and custom):
            continue
        data: asyncio.Future[Any] = asyncio.Future()
        resolvers[name] = functools.partial(_resolve, res, data)
        res.__dict__[name] = pulumi.Output._from_data(data)
    return resolvers


def _resolve(
    res: Any,
    data: asyncio.Future[Any],
    value: Any,
    is_known: bool,
    is_secret: bool,
    deps: Any,
    failed: Exception | None,
) -> None:
    """The SDK's ``do_resolve`` of one property, on its one future."""
    if failed is not None:
        data.set_exception(failed)
        return
    resources = set(deps) if deps else set()
    resources.add(res)
    data.set_result(
        _OutputData(resources=resources, value=value, is_known=is_known, is_secret=is_secret)
    )


def _untyped(
    value: Any,
    at: str,
    output_transformer: Callable[[str], str],
    transform_using_type_metadata: bool,
    return_none_on_dict_type_mismatch: bool,
    path: Any,
) -> Any:
    """An item of an untyped dict or list, typed back: a plain value as it is, else asked again
    with no target type, its path one step further (``at``), as the SDK recurses."""
    if type(value) in _PLAIN:
        return value
    return translate_output_properties(
        value,
        output_transformer,
        None,
        transform_using_type_metadata,
        rpc._Path(at, parent=path),
        return_none_on_dict_type_mismatch,
    )


@contextlib.contextmanager
def applied(version: str | None = None) -> Iterator[None]:
    """The replacements in place for the ``with`` block when the SDK (``version``, default the
    installed one) is one of :data:`CHECKED_AGAINST`, else none; the SDK's own back after it.
    Each replacement is read here, at the call, so a test can wrap one."""
    running = installed_version() if version is None else version
    if running not in CHECKED_AGAINST:
        _log.debug(
            "pulumi SDK %s: the offline render's SDK replacements were checked against %s "
            "and are not applied (the same render, slower; gatewayctl/engine/shortcuts.py)",
            running,
            ", ".join(CHECKED_AGAINST),
        )
        yield
        return
    replacements: list[tuple[Any, str, Any]] = [
        (sdk_resource, "_get_stack_trace", _no_stack_trace),
        (sdk_resource, "create_urn", create_urn),
        (pulumi.resource, "collapse_alias_to_urn", collapse_alias_to_urn),
        (pulumi.log, "debug", debug),
        (_types, "unwrap_type", once_per_object(_sdk_unwrap_type)),
        (rpc, "deserialize_properties", deserialize_properties),
        (rpc, "serialize_property", serialize_property),
        (rpc, "contains_unknowns", contains_unknowns),
        (rpc, "transfer_properties", transfer_properties),
        (rpc, "translate_output_properties", translate_output_properties),
    ]
    saved = [(owner, name, vars(owner)[name]) for owner, name, _ in replacements]
    for owner, name, replacement in replacements:
        setattr(owner, name, replacement)
    try:
        yield
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)

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
  every registration, which builds a class and evaluates its type hints each time), and the
  two maps between a resource class's annotated Python and Pulumi property names
  (``_pulumi_to_py_names_from_annotations``, ``_py_to_pulumi_names_from_annotations``: every
  registration asks one, reading the class's annotations and attributes; the SDK only merges
  them into new dicts) are pure
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
- **A property's Output made from one future** (``rpc.transfer_properties``): for every
  property of every resource (56 for a Keycloak client) the SDK makes four futures (value,
  known, secret, resources) and an ``Output`` over them, whose ``__init__`` starts a task that
  awaits the four and makes their ``_OutputData``. Here the resolver makes that
  ``_OutputData`` itself and sets it on one future, the Output's data (``Output._from_data``):
  the form ``resource.resource_output`` gives a resource's own ``urn`` and ``id``. The same
  value, known- and secretness and resources (the resource and the property's dependencies);
  an exceptional resolution fails the Output with the same exception; the Output is tracked
  (``SETTINGS.outputs``) as the SDK tracks every Output.
- **Outputs typed back without a call per plain value** (``rpc.translate_output_properties``,
  asked for every property of every registration and, recursively, for every value in it): a
  ``str``, ``int``, ``float``, ``bool`` or None whose target type (``Optional`` unwrapped) is
  none, ``Any``, ``str``, ``bool``, ``float`` or ``int`` is returned as it is (a float as an
  ``int`` for ``int``), which is what the SDK's function returns after its checks (a secret is
  a dict; only an enum type or ``int`` converts a plain value); the rule for each type is
  decided once (by identity). A dict or list with no target type is rebuilt here the SDK's way
  (each key through the resource's translation, plain values kept, the rest asked again);
  every other value, and every typed dict or list, goes to the SDK's function, whose own
  recursion comes back here.
- **An alias's URN made directly** (``collapse_alias_to_urn`` in ``pulumi/resource.py``):
  ``Resource.__init__`` turns each alias into an Output of its URN (``resource._aliases``),
  which only the SDK's path for a monitor without alias specs reads (``all_aliases``; the
  offline engine supports them, as the mock monitor does). The typed Kubernetes classes give
  most resources aliases (their former type tokens); the SDK's Output for each is five Output
  steps (``from_input(alias).apply``, ``Output.all(project, stack).apply``, ``create_urn``).
  For a string, or an ``Alias`` whose name, type, project and stack are plain strings (or
  left to their defaults) and whose parent is a resource, a URN string or None, it is
  :func:`create_urn` of the same parts (or the string itself): the same value, known- and
  secretness and resources. Any other alias goes to the SDK.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pulumi
import pulumi.log
import pulumi.resource
from pulumi import _types
from pulumi.output import _OutputData
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
_sdk_names = {
    name: vars(_types)[name]
    for name in ("_pulumi_to_py_names_from_annotations", "_py_to_pulumi_names_from_annotations")
}
_sdk_deserialize_properties = rpc.deserialize_properties
_sdk_serialize_property = rpc.serialize_property
_sdk_contains_unknowns = rpc.contains_unknowns
_sdk_transfer_properties = rpc.transfer_properties
_sdk_translate = rpc.translate_output_properties
_sdk_collapse_alias = vars(pulumi.resource)["collapse_alias_to_urn"]
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


_AS_IS, _TO_INT, _TO_SDK = "as-is", "int", "sdk"


@once_per_object
def _plain_rule(typ: Any) -> str:
    """What ``translate_output_properties`` does with a plain value whose target is ``typ``."""
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
        return {
            output_transformer(key): value
            if type(value) in _PLAIN
            else translate_output_properties(
                value,
                output_transformer,
                None,
                transform_using_type_metadata,
                rpc._Path(key, parent=path),
                return_none_on_dict_type_mismatch,
            )
            for key, value in output.items()
        }
    elif typ is None and kind is list:
        return [
            value
            if type(value) in _PLAIN
            else translate_output_properties(
                value,
                output_transformer,
                None,
                transform_using_type_metadata,
                rpc._Path(str(index), parent=path),
                return_none_on_dict_type_mismatch,
            )
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


@contextlib.contextmanager
def applied() -> Iterator[None]:
    """The shortcuts in place for the ``with`` block (each read here, at the call, so a test can
    wrap one), and the SDK's own functions put back after it."""
    # pulumi._types' functions are answered once per type.
    once = {
        "unwrap_type": _sdk_unwrap_type,
        "_types_from_annotations": _sdk_types_from_annotations,
        **_sdk_names,
    }
    replacements: list[tuple[Any, str, Any]] = [
        (sdk_resource, "_get_stack_trace", _no_stack_trace),
        (sdk_resource, "create_urn", create_urn),
        (pulumi.log, "debug", debug),
        (rpc, "deserialize_properties", deserialize_properties),
        (rpc, "serialize_property", serialize_property),
        (rpc, "contains_unknowns", contains_unknowns),
        (rpc, "transfer_properties", transfer_properties),
        (rpc, "translate_output_properties", translate_output_properties),
        (pulumi.resource, "collapse_alias_to_urn", collapse_alias_to_urn),
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

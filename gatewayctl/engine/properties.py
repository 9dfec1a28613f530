"""The SDK's per-value work on a resource's properties, answered directly in an offline run
(:func:`gatewayctl.engine.shortcuts.applied` puts these in place for one run, with the other
shortcuts). Each gives the SDK's own answer (``tests/test_properties.py`` compares them); read
from pulumi 3.272.0, ``pulumi/runtime/rpc.py`` and ``pulumi/output.py``:

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
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any

import pulumi
from pulumi import _types
from pulumi.output import _OutputData
from pulumi.runtime import rpc, settings

_sdk_deserialize_properties = rpc.deserialize_properties
_sdk_serialize_property = rpc.serialize_property
_sdk_contains_unknowns = rpc.contains_unknowns
_sdk_transfer_properties = rpc.transfer_properties
_sdk_translate = rpc.translate_output_properties
_PLAIN = frozenset({str, int, float, bool, type(None)})
_SIG = rpc._special_sig_key
_rules: dict[int, tuple[Any, str]] = {}


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

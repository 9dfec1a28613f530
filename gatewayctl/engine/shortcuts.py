"""The SDK's per-resource work that only a remote engine needs, left out of an offline run
(``gatewayctl.engine.offline`` applies :func:`applied` for the length of one run; everything is
put back at its end). None changes what is registered or what an Output resolves to
(``tests/test_shortcuts.py``, ``tests/test_properties.py``). What they save:
``docs/performance.md``, "Scale (issue 23)".
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
- **Settings read in one call** (``pulumi/_utils.py``, ``ContextProperty.__get__``): every
  attribute of the SDK's ``SETTINGS`` (a ``ContextVar`` each) is read through a descriptor
  that calls ``fget`` twice (is it a dict? then its value), several times per Output (its
  tracking takes ``SETTINGS.lock`` and ``SETTINGS.outputs``, and again when it resolves):
  about 4,000 reads per gateway. Here one ``ContextVar.get`` with the same default answers
  both, for the SDK's own class (a subclass, which could override ``fget``, is the SDK's).

The SDK's per-value work on properties is answered directly by :mod:`gatewayctl.engine.properties`
(applied here too).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pulumi
import pulumi.log
import pulumi.resource
from pulumi import _types, _utils
from pulumi.resource_hooks import ResourceHookBinding
from pulumi.runtime import resource as sdk_resource
from pulumi.runtime import rpc, settings
from pulumi.runtime.proto import source_pb2

from gatewayctl.engine import properties

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
_sdk_collapse_alias = vars(pulumi.resource)["collapse_alias_to_urn"]
_sdk_copy_options = vars(pulumi.ResourceOptions)["_copy"]
_sdk_merge_hooks = vars(ResourceHookBinding)["merge"]
_sdk_context_get = vars(_utils.ContextProperty)["__get__"]


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


def context_get(self: Any, obj: Any, owner: Any) -> Any:
    """``ContextProperty.__get__``'s answer (module docstring); ``self`` is the property."""
    if type(self) is not _utils.ContextProperty:
        return _sdk_context_get(self, obj, owner)
    if obj is None:
        return self
    prop: Any = self  # fget's read, its default under the name Python mangled it to
    value = prop._data.get(prop._ContextProperty__default)
    return self if isinstance(value, dict) else value


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
        (rpc, "deserialize_properties", properties.deserialize_properties),
        (rpc, "serialize_property", properties.serialize_property),
        (rpc, "contains_unknowns", properties.contains_unknowns),
        (rpc, "transfer_properties", properties.transfer_properties),
        (rpc, "translate_output_properties", properties.translate_output_properties),
        (pulumi.resource, "collapse_alias_to_urn", collapse_alias_to_urn),
        (_utils.ContextProperty, "__get__", context_get),
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

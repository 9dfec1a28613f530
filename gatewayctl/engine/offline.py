"""The offline engine: run a Pulumi program under the mock runtime and record what it registers.

One recording mock serves the offline render, the tests and the benchmark. Beyond Pulumi's
stock ``MockMonitor`` it records each registration's parent, provider and resource options, and
honours ``additionalSecretOutputs`` as the real engine does (the stock mock returns a private
key or a generated password as a plain output; the engine marks it secret).

Computed outputs get stable placeholders derived from the resource's name: a PEM-shaped
block for certificates and keys, fixed-width strings for generated secrets, so inputs built
from other resources' outputs are present in the plan, as in a real preview.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import gc
from collections.abc import Callable, Coroutine, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar, TypeVarTuple

import pulumi
from pulumi.runtime import mocks, rpc, settings
from pulumi.runtime import resource as sdk_resource
from pulumi.runtime.proto import provider_pb2, resource_pb2
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from components import tokens
from gatewayctl import ownership
from gatewayctl.engine import shortcuts
from gatewayctl.engine.placeholders import invoke_answer, placeholder_outputs

_T = TypeVar("_T")
_Ts = TypeVarTuple("_Ts")

STACK_TYPE = "pulumi:pulumi:Stack"
SECRET_SIG_KEY = rpc._special_sig_key
SECRET_SIG = rpc._special_secret_sig


def is_secret(value: Any) -> bool:
    """True for the runtime's wire form of a secret value."""
    return isinstance(value, dict) and value.get(SECRET_SIG_KEY) == SECRET_SIG


def secret(value: Any) -> dict[str, Any]:
    return {SECRET_SIG_KEY: SECRET_SIG, "value": value}


@dataclass
class RecordedResource:
    """One registration as the engine would receive it."""

    urn: str
    type: str
    name: str
    parent: str | None
    provider: str | None
    custom: bool
    inputs: dict[str, Any]
    outputs: dict[str, Any]
    retain_on_delete: bool
    protect: bool
    secret_outputs: tuple[str, ...]
    ignore_changes: tuple[str, ...] = ()
    dependencies: tuple[str, ...] = ()
    """URNs the registration depends on (from its inputs and ``depends_on``), as the engine
    receives them: the engine creates these first and deletes them last."""
    input_dependencies: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Per top-level input, the URNs whose outputs it was made from (the registration's
    ``propertyDependencies``): where a replaced resource's new outputs go."""
    delete_before_replace: bool | None = None
    """The ``deleteBeforeReplace`` resource option when set (it overrides the provider's choice
    for every replacement: pulumi/pulumi v3.274.0 ``pkg/resource/deploy/step_generator.go``,
    ``goal.DeleteBeforeReplace``), None when left to the provider."""
    replace_with: tuple[str, ...] = ()
    """The ``replace_with`` resource option's URNs: the engine replaces the resource whenever it
    replaces one of them (pulumi/pulumi ``pkg/resource/deploy/step_generator.go``,
    ``stepGenerator.diff``: ``ReplaceKeys ["replaceWith"]``)."""
    aliases: tuple[str, ...] = ()
    """The URNs the resource was known by before (its ``aliases``; an alias spec made into the
    URN it names: pulumi/pulumi ``proto/pulumi/alias.proto``, ``Alias.Spec``, a name, type or
    parent left empty is the resource's current one; stack and project are this run's)."""


@dataclass
class Recording:
    """Everything one program run registered, in registration order, keyed by URN."""

    resources: dict[str, RecordedResource] = field(default_factory=dict)

    def of_type(self, type_: str) -> list[RecordedResource]:
        return [r for r in self.resources.values() if r.type == type_]

    def ancestors(self, resource: RecordedResource) -> Iterator[RecordedResource]:
        """The registered parents of ``resource``, nearest first (the root stack is not one)."""
        urn = resource.parent
        while urn is not None and urn in self.resources:
            parent = self.resources[urn]
            yield parent
            urn = parent.parent

    def ancestor_name(self, resource: RecordedResource, type_: str) -> str | None:
        """Name of the nearest parent of type ``type_`` (e.g. the gateway a resource is in)."""
        return next((a.name for a in self.ancestors(resource) if a.type == type_), None)

    def gateways(self) -> dict[str, str | None]:
        """The gateway each resource belongs to, by URN (None: the stack's own): its nearest
        ``Gateway`` ancestor, or for a provider that is a child of the stack the one gateway
        whose resources it is made from (:mod:`gatewayctl.ownership`)."""
        found: dict[str, str | None] = {
            r.urn: self.ancestor_name(r, tokens.GATEWAY) for r in self.resources.values()
        }
        stack_level = {
            r.urn
            for r in self.resources.values()
            if ownership.is_provider(r.type) and r.parent not in self.resources
        }
        uses = (
            (urn, found.get(dep)) for urn in stack_level for dep in self.resources[urn].dependencies
        )
        found.update(ownership.served(uses))
        return found


OnRegister = Callable[[RecordedResource], None]
"""Called after each registration (progress reporting)."""


def _finish(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine that never waits (serialising plain values) to its result, here and now."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise RuntimeError("the offline engine serialised a value that had to wait")


try:  # libuv's event loop (uvloop: Linux and macOS), else asyncio's own
    from uvloop import Loop as _Loop
except ImportError:  # pragma: no cover - Windows
    _Loop = asyncio.SelectorEventLoop  # type: ignore[misc,assignment]


class _OfflineLoop(_Loop):
    """An event loop whose default executor is its own thread, at once.

    Built on uvloop's loop where there is one: the SDK makes several tasks and callbacks per
    resource (Outputs, registrations), and asyncio's loop runs each through Python code
    (``Handle._run``, ``_run_once``); uvloop runs them in C, in the same order (first scheduled,
    first run), so a run registers the same resources in the same order
    (``tests/test_offline.py``, the golden snapshots).

    The SDK hands every engine call to the loop's default executor
    (``loop.run_in_executor(None, ...)``: pulumi/runtime/resource.py, invoke.py, settings.py)
    because a real engine is across gRPC. The offline engine is in this process: the call runs
    here and now and its future is returned done, so the awaiting coroutine goes on without a
    thread hop, a wake-up of the loop through its self-pipe (``call_soon_threadsafe``) and two
    more turns of the loop per resource. An error is the future's, as a worker thread's would be.
    """

    # uvloop's stubs (uvloop/loop.pyi) declare run_in_executor a coroutine; it returns an
    # asyncio Future, as asyncio's does (tests/test_offline.py awaits one).
    def run_in_executor(  # type: ignore[override,unused-ignore]
        self,
        executor: concurrent.futures.Executor | None,
        func: Callable[[*_Ts], _T],
        *args: *_Ts,
    ) -> asyncio.Future[_T]:
        if executor is not None:
            return super().run_in_executor(executor, func, *args)  # type: ignore[return-value,unused-ignore]
        future = self.create_future()
        try:
            future.set_result(func(*args))
        except Exception as error:
            future.set_exception(error)
        return future


class RecordingMocks(pulumi.runtime.Mocks):
    """Outputs are the inputs plus placeholders; ids are ``<name>-id``."""

    def new_resource(
        self, args: pulumi.runtime.MockResourceArgs
    ) -> tuple[str | None, dict[str, Any]]:
        return f"{args.name}-id", {
            **args.inputs,
            **placeholder_outputs(args.typ, args.name, args.inputs),
        }

    def call(
        self, args: pulumi.runtime.MockCallArgs
    ) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        answer = invoke_answer(args.token, args.args)
        if answer is None:
            raise NotImplementedError(f"the offline engine has no answer for invoke {args.token}")
        return answer, []


class RecordingMonitor(mocks.MockMonitor):
    """A MockMonitor that keeps every registration's request facts (see module docstring)."""

    def __init__(self, mocks_: RecordingMocks, on_register: OnRegister | None = None) -> None:
        super().__init__(mocks_)
        self.recording = Recording()
        self._on_register = on_register

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        # As the engine does (pulumi/pulumi pkg/resource/deploy/deployment.go, generateURN),
        # and the stock mock does not: the type chain is the parent's whole qualified type
        # (`a$b$c`, not only `b$c`), and children of the root stack carry no
        # "pulumi:pulumi:Stack$". So URNs here are the real ones (the import file's references
        # are URNs: gatewayctl/deploy/adoption.py).
        parent_type = parent.split("::")[2] if parent else ""
        if parent_type not in {"", STACK_TYPE}:
            type_ = f"{parent_type}${type_}"
        return super().make_urn("", type_, name)

    def _alias_urn(self, alias: Any, request: Any) -> str:
        if alias.urn:
            return str(alias.urn)
        spec = alias.spec
        parent = "" if spec.noParent else (spec.parentUrn or request.parent)
        return self.make_urn(parent, spec.type or request.type, spec.name or request.name)

    def RegisterResource(self, request: Any) -> Any:  # noqa: N802 (gRPC method name)
        urn = self.make_urn(request.parent, request.type, request.name)
        if request.type == STACK_TYPE:
            return resource_pb2.RegisterResourceResponse(urn=urn)
        inputs = rpc.deserialize_properties(request.object, keep_unknowns=True)
        id_ = f"{request.name}-id"
        secret_outputs = tuple(request.additionalSecretOutputs)
        computed = placeholder_outputs(request.type, request.name, inputs)
        state = {**inputs, **computed}
        for key in secret_outputs:
            if key in state and not is_secret(state[key]):
                state[key] = computed[key] = secret(state[key])
        self.resources[urn] = mocks.MockMonitor.ResourceRegistration(urn, id_, state)
        recorded = self.recording.resources[urn] = RecordedResource(
            urn=urn,
            type=request.type,
            name=request.name,
            parent=request.parent or None,
            provider=request.provider.rsplit("::", 1)[0] if request.provider else None,
            custom=request.custom,
            inputs=inputs,
            outputs=state,
            retain_on_delete=request.retainOnDelete
            if request.HasField("retainOnDelete")
            else False,
            protect=request.protect if request.HasField("protect") else False,
            secret_outputs=secret_outputs,
            ignore_changes=tuple(request.ignoreChanges),
            dependencies=tuple(sorted(request.dependencies)),
            input_dependencies={
                key: tuple(sorted(deps.urns))
                for key, deps in sorted(request.propertyDependencies.items())
                if deps.urns
            },
            aliases=tuple(self._alias_urn(alias, request) for alias in request.aliases),
            delete_before_replace=request.deleteBeforeReplace
            if request.deleteBeforeReplaceDefined
            else None,
            replace_with=tuple(request.replace_with),
        )
        if self._on_register is not None:
            self._on_register(recorded)
        # The outputs: the inputs as serialised, plus what only a provider computes, added to
        # the request's own Struct (pulumi/runtime/resource.py, do_register makes ``req`` for
        # this call only), in the SDK's Python form of a response (``RegisterResponse``, what
        # do_register makes without a monitor): a RegisterResourceResponse copies the Struct.
        outputs = request.object
        if computed:
            outputs.update(_finish(rpc.serialize_properties(computed, {})))
        return sdk_resource.RegisterResponse(urn, id_, outputs, None, resource_pb2.Result.SUCCESS)

    def Invoke(self, request: Any) -> Any:  # noqa: N802 (gRPC method name)
        # The stock mock serialises the answer with ``_sync_await``, which, on a thread whose
        # event loop is running, pumps that loop until the answer is serialised. The SDK calls
        # the monitor from a thread pool (pulumi/runtime/invoke.py, ``run_in_executor``), where
        # no loop runs; the offline engine calls it inline on the loop's own thread
        # (``_OfflineLoop``), so each pump ran the next gateway's invoke, which pumped
        # again: one nesting per lookup ready at once, a stack depth growing with the
        # gateways (RecursionError at about 100 gateways with one ``access`` principal each).
        # The answer is plain values: serialising it never waits, so it runs to its end here.
        args = rpc.deserialize_properties(request.args)
        answer, failures = self.mocks.call(
            pulumi.runtime.MockCallArgs(token=request.tok, args=args, provider=request.provider)
        )
        return resource_pb2.ResourceInvokeResponse(
            failures=[
                provider_pb2.CheckFailure(property=prop, reason=reason)
                for prop, reason in failures or ()
            ],
            **{"return": _finish(rpc.serialize_properties(answer, {}))},
        )


@contextlib.contextmanager
def _offline_runtime() -> Iterator[None]:
    """The SDK runtime as the offline engine runs it, for the length of one program run.

    Each change is about work that only a remote engine needs; none changes what is registered:

    - engine calls run inline (``_OfflineLoop``, the run's own event loop) instead of on a
      thread pool;
    - none of the SDK's per-resource work that only a remote engine reads: the call stack,
      the mock URN, debug messages (``gatewayctl.engine.shortcuts``);
    - no cyclic garbage collection during the run: the SDK allocates many short-lived,
      cyclic objects per resource (Outputs, tasks, futures) and the collector spent about half
      the run re-scanning them. At the end everything allocated is moved to the permanent
      generation (``gc.freeze``), or the first collection after the run would traverse all of it
      (seconds at hundreds of gateways); the next run's start collects it (``_collect_previous``).
    """
    _collect_previous()
    # A loop of its own for each run: nothing left pending by an earlier run, and no one else
    # uses a loop that runs its executor's work inline.
    loop = _OfflineLoop()
    asyncio.set_event_loop(loop)
    collecting = gc.isenabled()
    gc.disable()
    try:
        with shortcuts.applied():
            yield
    finally:
        loop.close()
        asyncio.set_event_loop(None)
        gc.freeze()
        if collecting:
            gc.enable()


def _collect_previous() -> None:
    """Free what an earlier run in this process left frozen (tests, ``render --all``)."""
    if gc.get_freeze_count():
        gc.unfreeze()
        gc.collect()


def run_program(
    program: Callable[[], Any],
    *,
    project: str,
    stack: str,
    config: Mapping[str, str] | None = None,
    secret_keys: list[str] | None = None,
    on_register: OnRegister | None = None,
) -> tuple[Recording, Any]:
    """Run ``program`` under the mock runtime; return what it registered and its resolved result.

    ``config`` maps full keys (``project:key``) to their string (JSON for objects) values, as
    the CLI hands them to a program. Each call starts from a fresh runtime state.
    """
    result: list[Any] = []

    async def run() -> None:
        value = program()
        result.append(await pulumi.Output.from_input(value).future(with_unknowns=True))

    with _offline_runtime():
        settings.ROOT.set(None)
        pulumi.runtime.set_all_config(dict(config or {}), secret_keys or [])
        monitor = RecordingMonitor(RecordingMocks(), on_register)
        pulumi.runtime.set_mocks(
            monitor.mocks, project=project, stack=stack, preview=False, monitor=monitor
        )
        settings.SETTINGS.rpc_manager.clear()
        settings.SETTINGS.outputs.clear()
        _sync_await(run_pulumi_func(run))
    return monitor.recording, result[0] if result else None

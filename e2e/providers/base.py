"""The stand-in providers' common half: the gRPC provider protocol through the Pulumi SDK's own
provider helpers, and the bridged providers' Check, Diff and preview rules.

The protocol is the SDK's (``pulumi.provider.experimental``: ``server.main`` starts a gRPC
server, prints its port and serves ``ResourceProvider`` with a :class:`Provider`; pulumi
3.272.0 ``pulumi/provider/experimental/server.py``). Each resource type is a :class:`Kind`:
its defaults, its outputs (and which of them are secret) and its effects. What a bridged
provider does around them is here, once:

- **Check** fills the schema's defaults the Terraform provider applies and refuses an input
  the type does not have (pulumi-terraform-bridge ``pkg/tfbridge/provider.go`` ``Check``).
- **Diff** compares the checked inputs with the state and asks for a replacement when a
  changed input is one of the type's ``ForceNew``/``RequiresReplace`` attributes, from
  ``gatewayctl.diff.rules.forces_new``: the table the offline diff predicts with, so the
  stand-ins and the prediction cannot disagree. An unknown input counts as changed; an
  Optional and Computed input (one of the type's ``outputs``) the declaration leaves out is
  never a change (the Terraform plan keeps the state's value). The bridge
  never asks for delete-before-replace (``deleteBeforeReplace`` false).
- **Preview**: a create or replace previews every output the provider computes as unknown
  (the Terraform plan's ``(known after apply)``), an update keeps the state's outputs.
- Outputs the schema marks ``secret`` are returned as secrets.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pulumi.provider.experimental import provider as p
from pulumi.provider.experimental.property_value import Computed, PropertyValue
from pulumi.provider.experimental.server import main as serve
from pulumi.runtime.rpc import UNKNOWN as UNKNOWN_TEXT

from gatewayctl.diff.rules import forces_new

UNKNOWN = Computed()
"""An input or output not known yet (a preview). On the wire it is the protocol's unknown
string (pulumi ``sdk/go/common/resource/plugin/rpc.go`` ``UnknownStringValue``, the Python
SDK's ``rpc.UNKNOWN``): the SDK's ``PropertyValue`` neither reads it back as ``Computed`` nor
marshals ``Computed`` (3.272.0 ``property_value.py`` ``marshal_value`` raises), so
:func:`plain` and :func:`wrap` translate."""

Values = dict[str, Any]


def plain(value: PropertyValue) -> Any:
    """A property value as plain Python: secrets unwrapped, whole numbers as ``int``, unknowns
    as :data:`UNKNOWN`."""
    inner = value.value
    if isinstance(inner, Computed) or inner == UNKNOWN_TEXT:
        return UNKNOWN
    if isinstance(inner, float) and inner.is_integer():
        return int(inner)
    if isinstance(inner, Mapping):
        return {k: plain(v) for k, v in inner.items()}
    if isinstance(inner, (list, tuple)):
        return [plain(v) for v in inner]
    return inner


def plain_map(values: Mapping[str, PropertyValue]) -> Values:
    return {k: plain(v) for k, v in values.items()}


def wrap(value: Any, *, secret: bool = False) -> PropertyValue:
    """Plain Python as a property value (``int`` sent as a number, :data:`UNKNOWN` unknown)."""
    if isinstance(value, PropertyValue):
        return value.with_secret(True) if secret else value
    if isinstance(value, Computed):
        return PropertyValue(UNKNOWN_TEXT, is_secret=secret)
    if isinstance(value, bool) or value is None or isinstance(value, (str, float)):
        return PropertyValue(value, is_secret=secret)
    if isinstance(value, int):
        return PropertyValue(float(value), is_secret=secret)
    if isinstance(value, Mapping):
        return PropertyValue({k: wrap(v) for k, v in value.items()}, is_secret=secret)
    if isinstance(value, (list, tuple)):
        return PropertyValue([wrap(v) for v in value], is_secret=secret)
    raise TypeError(f"cannot send {type(value).__name__}")


def has_unknown(value: Any) -> bool:
    if isinstance(value, Computed):
        return True
    if isinstance(value, Mapping):
        return any(has_unknown(v) for v in value.values())
    if isinstance(value, list):
        return any(has_unknown(v) for v in value)
    return False


class ProviderError(Exception):
    """A failure the engine shows as the operation's error."""


@dataclass(frozen=True)
class Kind:
    """One resource type of a stand-in provider."""

    token: str
    inputs: frozenset[str]
    """Every input the schema has (``inputProperties``)."""
    required: frozenset[str] = frozenset()
    defaults: Mapping[str, Any] = field(default_factory=dict)
    """Defaults the provider fills in at Check (the Terraform schema's ``Default``)."""
    outputs: tuple[str, ...] = ()
    """Outputs the provider computes (beyond the inputs)."""
    secret_outputs: frozenset[str] = frozenset()
    secret_inputs: frozenset[str] = frozenset()
    server_defaulted: frozenset[str] = frozenset()
    """Inputs whose value, when the program leaves them out, is what the server holds (module
    docstring, Diff): left out, they are no change."""
    sets: frozenset[str] = frozenset()
    """Inputs of Terraform type ``TypeSet``: sorted at Check (and by Read), so order is no
    change."""
    absent_is_zero: bool = False
    """The Terraform plugin SDK's reading of an attribute left out of the configuration: its
    zero value (``""``, false, an empty list or map), so left out against a zero in the state
    is no change (hashicorp/terraform-plugin-sdk v2 ``helper/schema/schema.go`` ``diffString``:
    an unset ``Optional`` primitive is compared as its zero value)."""

    def force_new(self) -> frozenset[str]:
        return frozenset(k for k in self.inputs if forces_new(self.token, k))

    # Effects, overridden per type.
    def create(self, inputs: Values) -> tuple[str, Values]:
        raise NotImplementedError(self.token)

    def read(self, id_: str, state: Values) -> Values | None:
        """The state as the provider reads it now; None when the object is gone."""
        return state

    def import_(self, id_: str) -> tuple[str, Values | None]:
        """``pulumi import`` (Read with no state): the id the provider keeps and the state it
        reads (its ``Importer``); by default, Read of ``id_``."""
        return id_, self.read(id_, {})

    def update(self, id_: str, olds: Values, news: Values) -> Values:
        """The new state after an in-place update (only inputs outside ``force_new``)."""
        return {**olds, **news}

    def delete(self, id_: str, state: Values) -> None:
        return None

    def extra_replaces(self, olds: Values, news: Values) -> list[str]:
        """Replacements the provider plans beyond changed ``ForceNew`` inputs."""
        return []


class StandIn(p.Provider):
    """A provider serving ``kinds`` (see the module docstring)."""

    def __init__(self, package: str, kinds: Sequence[Kind]) -> None:
        self.package = package
        self.kinds = {k.token: k for k in kinds}

    def kind(self, urn: str) -> Kind:
        token = urn.split("::")[2].split("$")[-1]
        try:
            return self.kinds[token]
        except KeyError:
            raise ProviderError(f"{self.package} stand-in: unknown resource type {token}") from None

    def _state(self, kind: Kind, values: Values) -> dict[str, PropertyValue]:
        secret = kind.secret_outputs | kind.secret_inputs
        return {k: wrap(v, secret=k in secret) for k, v in values.items() if v is not None}

    async def check(self, request: p.CheckRequest) -> p.CheckResponse:
        kind = self.kind(request.urn)
        news = dict(request.new_inputs)
        failures = [
            p.CheckFailure(key, f"{key} is not an input of {kind.token}")
            for key in sorted(set(news) - kind.inputs)
        ]
        failures += [
            p.CheckFailure(key, f"Missing required argument {key}")
            for key in sorted(kind.required - set(news))
        ]
        for key, default in kind.defaults.items():
            news.setdefault(key, wrap(default))
        for key in kind.sets & set(news):
            value = plain(news[key])
            if isinstance(value, list) and not has_unknown(value):
                news[key] = wrap(sorted(value), secret=news[key].is_secret)
        return p.CheckResponse(inputs=news, failures=failures)

    async def diff(self, request: p.DiffRequest) -> p.DiffResponse:
        kind = self.kind(request.urn)
        olds, news = plain_map(request.old_state), plain_map(request.new_inputs)
        changed = sorted(
            k
            for k in kind.inputs
            if k not in request.ignore_changes
            and not (k in kind.outputs and k not in news)  # Optional+Computed, left out
            and not (k in kind.server_defaulted and k not in news)
            and not (kind.absent_is_zero and k not in news and not olds.get(k))
            and (has_unknown(news.get(k)) or news.get(k) != olds.get(k))
        )
        replaces = [k for k in changed if k in kind.force_new()]
        replaces += [k for k in kind.extra_replaces(olds, news) if k not in replaces]
        detailed = {
            k: p.PropertyDiff(
                (p.PropertyDiffKind.UPDATE_REPLACE if k in replaces else p.PropertyDiffKind.UPDATE)
                if k in olds
                else (p.PropertyDiffKind.ADD_REPLACE if k in replaces else p.PropertyDiffKind.ADD),
                True,
            )
            for k in sorted({*changed, *replaces})
        }
        return p.DiffResponse(
            changes=bool(detailed),
            replaces=replaces,
            diffs=sorted(detailed),
            detailed_diff=detailed,
            delete_before_replace=False,
        )

    async def create(self, request: p.CreateRequest) -> p.CreateResponse:
        kind = self.kind(request.urn)
        inputs = plain_map(request.properties)
        if request.preview:
            previewed = {**inputs, **{k: UNKNOWN for k in kind.outputs}}
            return p.CreateResponse(resource_id="", properties=self._state(kind, previewed))
        if has_unknown(inputs):
            raise ProviderError(f"{kind.token}: unknown inputs at create")
        id_, outputs = kind.create(inputs)
        return p.CreateResponse(resource_id=id_, properties=self._state(kind, outputs))

    async def update(self, request: p.UpdateRequest) -> p.UpdateResponse:
        kind = self.kind(request.urn)
        olds, news = plain_map(request.olds), plain_map(request.news)
        if request.preview:
            return p.UpdateResponse(properties=self._state(kind, {**olds, **news}))
        return p.UpdateResponse(
            properties=self._state(kind, kind.update(request.resource_id, olds, news))
        )

    async def read(self, request: p.ReadRequest) -> p.ReadResponse:
        kind = self.kind(request.urn)
        old = plain_map(request.properties)
        if old:
            id_, state = request.resource_id, kind.read(request.resource_id, old)
        else:
            id_, state = kind.import_(request.resource_id)
        if state is None:  # gone: the engine drops it from the state (an empty id)
            return p.ReadResponse(resource_id="", properties={}, inputs={})
        inputs = {k: v for k, v in state.items() if k in kind.inputs}
        return p.ReadResponse(
            resource_id=id_,
            properties=self._state(kind, state),
            inputs=self._state(kind, inputs),
        )

    async def delete(self, request: p.DeleteRequest) -> None:
        kind = self.kind(request.urn)
        kind.delete(request.resource_id, plain_map(request.properties))


def run(
    package: str, version: str, kinds: Sequence[Kind], provider: type[StandIn] = StandIn
) -> None:
    """Serve ``kinds`` as plugin ``pulumi-resource-<package>`` at ``version``: the engine
    starts the plugin with its address as the first argument and reads the port it prints."""
    serve(sys.argv[1:], version, provider(package, kinds))

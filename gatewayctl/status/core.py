"""One gateway's status from the parsed inputs: sync, health, certificates, address.

The live state of each resource is, in order: the refresh digest's step (its ``newState``
when the refresh found a difference, its ``oldState`` otherwise; nothing when the refresh
found the object gone), else the checkpoint's resource (the state as of the last ``up`` or
``refresh``). A preview digest says what git would change; it does not say what is live.

The gateways are every gateway an input mentions (a Gateway component, or a resource inside
one: :class:`.tree.Tree`) and every gateway the stack declares. A declared gateway the state
does not hold is not deployed yet (Missing); one the state holds that is no longer declared is
OutOfSync (a ``delete`` from git: the next ``up`` removes it; with a preview, the preview says
so); one only a preview is given for, and that it does not change, is Synced (the preview
lists what changes), its health Unknown.

The work is linear in the resources: every lookup is by URN or by gateway name, built once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from components import tokens
from gatewayctl.errors import InvalidInputError, Problem
from gatewayctl.inputs.stackfile import PROJECT
from gatewayctl.status import age, certificates, health, live, resource_tree, tampering
from gatewayctl.status.certificates import Certificate
from gatewayctl.status.health import Health, PartHealth
from gatewayctl.status.inputs import Inputs
from gatewayctl.status.live import LiveObjects
from gatewayctl.status.models import OP_CREATE, OP_DELETE, ResourceV3, UnreadableError
from gatewayctl.status.sync import OP_ADDITION, Change, Sync, changes
from gatewayctl.status.tree import CycleError, Tree, name_of, stack_outputs, type_of

LiveSource = Literal["refresh", "state", "none"]


@dataclass(frozen=True, kw_only=True)
class GatewayStatus:
    name: str
    sync: Sync
    health: Health
    changes: tuple[Change, ...]
    parts: tuple[PartHealth, ...]
    certificates: tuple[Certificate, ...]
    address: str | None
    console: str | None = None
    """The web console's address (the stack output ``consoleAddress``)."""
    resources: tuple[resource_tree.ResourceStatus, ...] = ()
    """Its resource tree (:mod:`.resources`), built for the gateway ``build`` details."""

    @property
    def earliest(self) -> Certificate | None:
        return min(self.certificates, key=lambda c: c.expires, default=None)

    @property
    def due(self) -> tuple[Certificate, ...]:
        return tuple(c for c in self.certificates if c.due)


@dataclass(frozen=True, kw_only=True)
class StackStatus:
    stack: str
    now: datetime
    live: LiveSource
    gateways: tuple[GatewayStatus, ...]
    other_changes: tuple[Change, ...] = ()
    """Changes outside any gateway (clusters, providers)."""
    inputs: Mapping[str, str] = field(default_factory=dict)
    state_time: datetime | None = None
    """The time of the update that wrote the given state (:mod:`.age`); None without one."""
    objects_read: LiveObjects | None = None
    """The live objects read with kubectl (``--live``), for when and where they were read."""
    desired: Mapping[str, ResourceV3] = field(default_factory=dict)
    """The state of each resource another manager changed or added to (:mod:`.tampering`), by
    URN: what self-heal puts it back to (:mod:`.heal`)."""

    @property
    def degraded(self) -> bool:
        return any(g.health in {"Degraded", "Progressing"} for g in self.gateways)

    @property
    def out_of_sync(self) -> bool:
        return bool(self.other_changes) or any(
            g.sync in {"OutOfSync", "Missing"} for g in self.gateways
        )

    @property
    def due(self) -> tuple[Certificate, ...]:
        return tuple(c for g in self.gateways for c in g.due)


Origin = tuple[str, str]
"""Where a live resource was read: the file (as given) and its field (``deployment.resources.3``,
``steps.7.newState``)."""


def _live(
    inputs: Inputs,
) -> tuple[dict[str, ResourceV3 | None], LiveSource, dict[str, Origin]]:
    held: dict[str, ResourceV3 | None] = {}
    origins: dict[str, Origin] = {}
    source: LiveSource = "none"
    if inputs.checkpoint is not None:
        display = inputs.paths.get("checkpoint", "checkpoint")
        for index, resource in enumerate(inputs.checkpoint.resources):
            if not resource.delete:
                held[resource.urn] = resource
                origins[resource.urn] = (display, f"deployment.resources.{index}")
        source = "state"
    if inputs.refresh is not None:
        display = inputs.paths.get("refresh", "refresh")
        for index, step in enumerate(inputs.refresh.steps):
            held[step.urn] = None if step.op == OP_DELETE else step.state
            which = "newState" if step.new_state is not None else "oldState"
            origins[step.urn] = (display, f"steps.{index}.{which}")
        source = "refresh"
    return held, source, origins


def _mentioned(inputs: Inputs) -> list[str]:
    """Every URN of every input."""
    urns: list[str] = []
    if inputs.checkpoint is not None:
        urns += [r.urn for r in inputs.checkpoint.resources if not r.delete]
    for digest in (inputs.refresh, inputs.preview):
        urns += [s.urn for s in (digest.steps if digest is not None else ())]
    return urns


def build(
    stack: str,
    inputs: Inputs,
    now: datetime,
    declared: Iterable[str] | None = None,
    detail: str | None = None,
    objects: live.LiveObjects | None = None,
    namespaces: Mapping[str, str] | None = None,
    ignored: Iterable[str] = (),
) -> StackStatus:
    """The status; ``declared``: the gateways the stack declares (None: not known);
    ``detail``: the gateway whose resource tree to build (:mod:`.resources`); ``objects``: the
    live objects read with kubectl (:mod:`.live`), compared instead of the state's outputs,
    with ``namespaces`` (namespace → gateway) for the objects the program does not declare, less
    the ``ignored`` (``Kind/name`` patterns).
    :class:`InvalidInputError` names each live value that cannot be read (a certificate's
    expiry or renewal window, a Deployment's counts: its file and field)."""
    declarations = None if declared is None else set(declared)
    live_states, source, origins = _live(inputs)
    known: list[ResourceV3] = [r for r in live_states.values() if r is not None]
    for digest in (inputs.refresh, inputs.preview):
        for step in digest.steps if digest is not None else ():
            known += [s for s in (step.old_state, step.new_state) if s is not None]
    declared = declarations or set()
    tree = Tree(known, gateways=declared)
    try:
        for urn in tree.parents:
            tree.gateway_of(urn)
    except CycleError as error:
        display, where = origins.get(error.urn, (", ".join(inputs.paths.values()), ""))
        raise InvalidInputError(
            [
                Problem(
                    display,
                    f"{where}.parent" if where else "",
                    "a parent cycle the files make together (one file's parent against"
                    " another's): no resource is its own ancestor; give files of one state",
                )
            ]
        ) from None
    found: list[Change] = []
    if inputs.refresh is not None:
        found += changes(inputs.refresh, "live")
    if inputs.preview is not None:
        found += changes(inputs.preview, "git")
    # Deployed: a gateway the state (or the refresh) holds; mentioned: any input names it.
    deployed = {
        g for g in (tree.gateway_of(u) for u, r in live_states.items() if r) if g is not None
    }
    mentioned = {g for g in map(tree.gateway_of, _mentioned(inputs)) if g is not None}
    created = {
        name_of(s.urn)
        for s in (inputs.preview.steps if inputs.preview is not None else [])
        if type_of(s.urn) == tokens.GATEWAY and s.op == OP_CREATE
    }
    found += tampering.changes(live_states, found, objects)
    per_gateway: dict[str | None, list[Change]] = {}
    for change in found:
        per_gateway.setdefault(tree.gateway_of(change.urn), []).append(change)
    if objects is not None:
        for gateway, change in live.changes(live_states, objects, namespaces or {}, ignored):
            per_gateway.setdefault(gateway, []).append(change)
    present = {u: r for u, r in live_states.items() if r is not None}
    outputs = stack_outputs(present)
    components = {name_of(u): r.outputs for u, r in present.items() if type_of(u) == tokens.GATEWAY}
    members: dict[str | None, list[tuple[str, ResourceV3 | None]]] = {}
    for urn, resource in sorted(live_states.items()):
        members.setdefault(tree.gateway_of(urn), []).append((urn, resource))
    problems: list[Problem] = []
    statuses: list[GatewayStatus] = []
    unhealthy = health.refreshed_unhealthy(inputs.refresh.diagnostics if inputs.refresh else ())
    for name in sorted(deployed | mentioned | declared | created):
        own = tuple(per_gateway.get(name, ()))
        if (
            declarations is not None
            and name in deployed
            and name not in declarations
            and inputs.preview is None
        ):
            # In the state, no longer declared: the next `up` deletes it (a preview, when
            # given, says so itself).
            own += (_undeclared(stack, name),)
        parts: list[PartHealth] = []
        certs: list[Certificate] = []
        checked: dict[str, tuple[Health, str]] = {}
        for urn, resource in members.get(name, ()):
            type_ = type_of(urn)
            try:
                if type_ in health.CHECKED:
                    state, message = health.part(type_, resource.outputs if resource else None)
                    if urn in unhealthy and state == "Healthy":  # health.UNHEALTHY
                        state, message = (
                            "Degraded",
                            f"the refresh found it unhealthy: {unhealthy[urn]}",
                        )
                    parts.append(
                        PartHealth(name=name_of(urn), type=type_, health=state, message=message)
                    )
                    checked[urn] = (state, message)
                if type_ in certificates.TYPES and resource is not None:
                    certs.append(
                        certificates.certificate(
                            urn, name_of(urn), resource.inputs, resource.outputs, now
                        )
                    )
            except UnreadableError as error:
                display, where = origins[urn]
                problems.append(Problem(display, f"{where}.{error.field}", error.reason))
        sync: Sync
        why = ""
        if name not in deployed and (name in created or source != "none"):
            why = "not deployed yet" if name in created else "declared, not in the state yet"
            sync, state = "Missing", "Missing"
            parts.append(PartHealth(name=name, type=tokens.GATEWAY, health="Missing", message=why))
        else:
            sync = "Missing" if any(c.missing for c in own) else ("OutOfSync" if own else "Synced")
            state = health.worst([p.health for p in parts]) if source != "none" else "Unknown"
        if source == "none" and inputs.preview is None:
            sync = "Unknown"
        rows: tuple[resource_tree.ResourceStatus, ...] = ()
        if name == detail:
            # Also what only a digest holds (a preview's new components), for the tree's shape.
            extra = [
                u for u in _mentioned(inputs) if u not in live_states and tree.gateway_of(u) == name
            ]
            rows = resource_tree.tree(
                resource_tree.Root(name=name, sync=sync, health=state, message=why),
                members.get(name, ()),
                _states(inputs, live_states),
                own,
                checked,
                certs,
                known=source != "none" or inputs.preview is not None,
                mentioned=extra,
            )
        statuses.append(
            GatewayStatus(
                name=name,
                sync=sync,
                health=state,
                changes=own,
                parts=tuple(parts),
                certificates=tuple(sorted(certs, key=lambda c: (c.expires, c.name))),
                address=_output(name, "address", outputs, components),
                console=_output(name, "consoleAddress", outputs, components),
                resources=rows,
            )
        )
    if problems:
        raise InvalidInputError(problems)
    return StackStatus(
        stack=stack,
        now=now,
        live=source,
        gateways=tuple(statuses),
        other_changes=tuple(per_gateway.get(None, ())),
        inputs=dict(inputs.paths),
        state_time=age.state_time(inputs.checkpoint),
        objects_read=objects,
        desired={c.urn: r for c in found if c.op == OP_ADDITION and (r := live_states.get(c.urn))},
    )


def _undeclared(stack: str, name: str) -> Change:
    return Change(
        urn=f"urn:pulumi:{stack}::{PROJECT}::{tokens.GATEWAY}::{name}",
        type=tokens.GATEWAY,
        name=name,
        op="delete",
        paths=(),
        source="git",
    )


def _states(inputs: Inputs, held: Mapping[str, ResourceV3 | None]) -> dict[str, ResourceV3]:
    """Every state the inputs hold by URN: the live one, else a digest's (a preview's create)."""
    states: dict[str, ResourceV3] = {}
    for digest in (inputs.preview, inputs.refresh):
        for step in digest.steps if digest is not None else ():
            for state in (step.old_state, step.new_state):
                if state is not None:
                    states[step.urn] = state
    states.update({u: r for u, r in held.items() if r is not None})
    return states


def _output(
    name: str, key: str, outputs: Mapping[str, Any], components: Mapping[str, Mapping[str, Any]]
) -> str | None:
    """A gateway's stack output ``gateways.<name>.<key>``, else its component's output."""
    gateways = outputs.get("gateways")
    entry = gateways.get(name) if isinstance(gateways, Mapping) else None
    if isinstance(entry, Mapping) and isinstance(entry.get(key), str):
        return str(entry[key])
    value = components.get(name, {}).get(key)
    return value if isinstance(value, str) else None


State = Literal["synced", "out-of-sync", "degraded", "renewal-due"]


def state(status: StackStatus) -> State:
    """The overall state, in the order of the package docstring (its exit code is the CLI's)."""
    if status.degraded:
        return "degraded"
    if status.out_of_sync:
        return "out-of-sync"
    if status.due:
        return "renewal-due"
    return "synced"

"""One gateway's status from the parsed inputs: sync, health, certificates, address.

The live state of each resource is, in order: the refresh digest's step (its ``newState``
when the refresh found a difference, its ``oldState`` otherwise; nothing when the refresh
found the object gone), else the checkpoint's resource (the state as of the last ``up`` or
``refresh``). A preview digest says what git would change; it does not say what is live.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from components import tokens
from gatewayctl.status import certificates, health
from gatewayctl.status.certificates import Certificate
from gatewayctl.status.health import Health, PartHealth
from gatewayctl.status.inputs import Inputs
from gatewayctl.status.models import OP_CREATE, OP_DELETE, ResourceV3
from gatewayctl.status.sync import Change, changes
from gatewayctl.status.tree import Tree, by_urn, name_of, stack_outputs, type_of

Sync = Literal["Synced", "OutOfSync", "Missing", "Unknown"]
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


def _live(inputs: Inputs) -> tuple[dict[str, ResourceV3 | None], LiveSource]:
    live: dict[str, ResourceV3 | None] = {}
    source: LiveSource = "none"
    if inputs.checkpoint is not None:
        live.update(by_urn(r for r in inputs.checkpoint.resources if not r.delete))
        source = "state"
    if inputs.refresh is not None:
        for step in inputs.refresh.steps:
            live[step.urn] = None if step.op == OP_DELETE else step.state
        source = "refresh"
    return live, source


def _address(
    name: str, outputs: Mapping[str, Any], live: Mapping[str, ResourceV3 | None]
) -> str | None:
    gateways = outputs.get("gateways")
    entry = gateways.get(name) if isinstance(gateways, Mapping) else None
    if isinstance(entry, Mapping) and isinstance(entry.get("address"), str):
        return str(entry["address"])
    for urn, resource in live.items():
        if resource is not None and type_of(urn) == tokens.GATEWAY and name_of(urn) == name:
            address = resource.outputs.get("address")
            return address if isinstance(address, str) else None
    return None


def build(stack: str, inputs: Inputs, now: datetime) -> StackStatus:
    live, source = _live(inputs)
    known: list[ResourceV3] = [r for r in live.values() if r is not None]
    for digest in (inputs.refresh, inputs.preview):
        for step in digest.steps if digest is not None else ():
            known += [s for s in (step.old_state, step.new_state) if s is not None]
    tree = Tree(known)
    found: list[Change] = []
    if inputs.refresh is not None:
        found += changes(inputs.refresh, "live")
    if inputs.preview is not None:
        found += changes(inputs.preview, "git")
    # Gateways: those the state or the refresh knows, and those a preview would create.
    names = Tree(r for r in live.values() if r is not None).gateways()
    created = {
        name_of(s.urn)
        for s in (inputs.preview.steps if inputs.preview is not None else [])
        if type_of(s.urn) == tokens.GATEWAY and s.op == OP_CREATE
    }
    per_gateway: dict[str | None, list[Change]] = {}
    for change in found:
        per_gateway.setdefault(tree.gateway_of(change.urn), []).append(change)
    outputs = stack_outputs({u: r for u, r in live.items() if r is not None})
    members: dict[str | None, list[tuple[str, ResourceV3 | None]]] = {}
    for urn, resource in sorted(live.items()):
        members.setdefault(tree.gateway_of(urn), []).append((urn, resource))
    statuses: list[GatewayStatus] = []
    for name in sorted(names | created):
        own = tuple(per_gateway.get(name, ()))
        parts: list[PartHealth] = []
        certs: list[Certificate] = []
        for urn, resource in members.get(name, ()):
            type_ = type_of(urn)
            if type_ in health.CHECKED:
                state, message = health.part(type_, resource.outputs if resource else None)
                parts.append(
                    PartHealth(name=name_of(urn), type=type_, health=state, message=message)
                )
            if type_ in certificates.TYPES and resource is not None:
                cert = certificates.certificate(
                    urn, name_of(urn), resource.inputs, resource.outputs, now
                )
                if cert is not None:
                    certs.append(cert)
        sync: Sync
        if name in created and name not in names:
            sync, state = "Missing", "Missing"
            parts.append(
                PartHealth(
                    name=name, type=tokens.GATEWAY, health="Missing", message="not deployed yet"
                )
            )
        else:
            sync = "Missing" if any(c.missing for c in own) else ("OutOfSync" if own else "Synced")
            state = health.worst([p.health for p in parts]) if source != "none" else "Unknown"
        if source == "none" and inputs.preview is None:
            sync = "Unknown"
        statuses.append(
            GatewayStatus(
                name=name,
                sync=sync,
                health=state,
                changes=own,
                parts=tuple(parts),
                certificates=tuple(sorted(certs, key=lambda c: (c.expires, c.name))),
                address=_address(name, outputs, live),
            )
        )
    return StackStatus(
        stack=stack,
        now=now,
        live=source,
        gateways=tuple(statuses),
        other_changes=tuple(per_gateway.get(None, ())),
        inputs=dict(inputs.paths),
    )

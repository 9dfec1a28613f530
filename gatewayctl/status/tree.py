"""URNs and the parent chain: which gateway each resource belongs to.

A URN is ``urn:pulumi:<stack>::<project>::<qualified type>::<name>``, the qualified type
being the parents' types and the resource's own, joined by ``$``; the name is the rest and
may itself hold ``::`` (pulumi/pulumi ``sdk/go/common/resource/urn.go``, ``NewURN`` and
``URN.Name``). A child's URN names its parents' *types* only, so the gateway is found by
following ``parent`` (``ResourceV3.parent``) up to the ``hypershell:gateway:Gateway``
component, whose name is the gateway's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from components import tokens
from gatewayctl.status.models import ResourceV3

STACK_TYPE = "pulumi:pulumi:Stack"


@dataclass(frozen=True, slots=True)
class Urn:
    type: str
    name: str


def parse_urn(urn: str) -> Urn | None:
    parts = urn.split("::", 3)
    if len(parts) != 4 or not parts[0].startswith("urn:pulumi:"):
        return None
    return Urn(type=parts[2].rsplit("$", 1)[-1], name=parts[3])


def type_of(urn: str) -> str:
    parsed = parse_urn(urn)
    return parsed.type if parsed else ""


def name_of(urn: str) -> str:
    parsed = parse_urn(urn)
    return parsed.name if parsed else urn


class Tree:
    """Parents of every resource the inputs know, and the gateway each belongs to."""

    def __init__(self, resources: Iterable[ResourceV3]):
        self.parents: dict[str, str | None] = {}
        for resource in resources:
            if resource.parent or resource.urn not in self.parents:
                self.parents[resource.urn] = resource.parent

    def gateway_of(self, urn: str) -> str | None:
        """The name of the gateway whose component (transitively) parents ``urn``; None for
        the stack's own resources (clusters, providers) and for unknown parents."""
        seen: set[str] = set()
        current: str | None = urn
        while current is not None and current not in seen:
            parsed = parse_urn(current)
            if parsed is not None and parsed.type == tokens.GATEWAY:
                return parsed.name
            seen.add(current)
            current = self.parents.get(current)
        return None

    def gateways(self) -> set[str]:
        return {name_of(u) for u in self.parents if type_of(u) == tokens.GATEWAY}


def by_urn(resources: Iterable[ResourceV3]) -> dict[str, ResourceV3]:
    return {resource.urn: resource for resource in resources}


def stack_outputs(resources: Mapping[str, ResourceV3]) -> dict[str, object]:
    for urn, resource in resources.items():
        if type_of(urn) == STACK_TYPE:
            return dict(resource.outputs)
    return {}

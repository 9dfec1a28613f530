"""URNs and the parent chain: which gateway each resource belongs to.

A URN is ``urn:pulumi:<stack>::<project>::<qualified type>::<name>``, the qualified type
being the parents' types and the resource's own, joined by ``$``; the name is the rest and
may itself hold ``::`` (pulumi/pulumi ``sdk/go/common/resource/urn.go``, ``NewURN`` and
``URN.Name``). A child's URN names its parents' *types* only, so the gateway is found by
following ``parent`` (``ResourceV3.parent``) up to the ``hypershell:gateway:Gateway``
component, whose name is the gateway's.

Where the chain breaks (a ``pulumi preview --json`` lists only the resources that change:
its unchanged parents are not in it, pulumi/pulumi ``pkg/backend/display/json.go``
``ShowPreviewDigest`` skips ``same`` steps unless ``--show-sames``), the URN still says whether
the resource is inside a gateway (its qualified type starts with the Gateway's), and its name
says which: every child is named ``<parent's name>-<suffix>`` (``components/``: the Gateway
``g`` names its namespace ``g-ns`` and its parts ``g-pki``, ``g-workload``, ...; the part
``g-workload`` its Deployment ``g-workload-deploy``), the part's suffix being its type's name
in lower case. Among the gateways the inputs and the declarations know, the one whose name
and that suffix begin the resource's name is its gateway (the longest such name); with none
known, the name before the suffix is.

Every URN is parsed once and every resource's gateway found once (memoised), so the work is
linear in the number of resources.

A file whose parents form a cycle, or a state that holds one live resource twice (two entries
of one URN, neither marked for deletion), is bad input (:func:`integrity_problems`, exit 2):
the CLI writes neither (its snapshot integrity check, pulumi/pulumi
``pkg/resource/deploy/snapshot.go`` ``VerifyIntegrity``, refuses a duplicate not marked for
deletion and a parent that does not come before its child), and read anyway its resources
would vanish from every gateway. A cycle only the files together make (one file's parent
against another's) is :class:`CycleError`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from components import tokens
from gatewayctl import ownership
from gatewayctl.errors import Problem
from gatewayctl.status.models import DeploymentV3, PreviewDigest, ResourceV3

STACK_TYPE = "pulumi:pulumi:Stack"


@dataclass(frozen=True, slots=True)
class Urn:
    type: str
    name: str
    chain: tuple[str, ...]
    """The qualified type: the parents' types, then the resource's own."""


@lru_cache(maxsize=1 << 18)
def parse_urn(urn: str) -> Urn | None:
    parts = urn.split("::", 3)
    if len(parts) != 4 or not parts[0].startswith("urn:pulumi:"):
        return None
    chain = tuple(parts[2].split("$"))
    return Urn(type=chain[-1], name=parts[3], chain=chain)


def type_of(urn: str) -> str:
    parsed = parse_urn(urn)
    return parsed.type if parsed else ""


def name_of(urn: str) -> str:
    parsed = parse_urn(urn)
    return parsed.name if parsed else urn


def _suffix(component_type: str) -> str:
    return component_type.rsplit(":", 1)[-1].lower()


class CycleError(Exception):
    """The parents of the resources the inputs know, taken together, form a cycle through
    ``urn``."""

    def __init__(self, urn: str):
        super().__init__(urn)
        self.urn = urn


class Tree:
    """Parents of every resource the inputs know, and the gateway each belongs to."""

    def __init__(self, resources: Iterable[ResourceV3], gateways: Iterable[str] = ()):
        self.parents: dict[str, str | None] = {}
        self.dependencies: dict[str, list[str]] = {}
        """Provider URN → the URNs its configuration is made from."""
        for resource in resources:
            if resource.parent or resource.urn not in self.parents:
                self.parents[resource.urn] = resource.parent
            if ownership.is_provider(resource.type):
                self.dependencies[resource.urn] = list(resource.dependencies)
        self.known: set[str] = set(gateways) | self.gateways()
        self._owner: dict[str, str | None] = {}

    def gateway_of(self, urn: str) -> str | None:
        """The name of the gateway whose component (transitively) parents ``urn``, or whose
        database owner's provider it is; None for the stack's own resources (clusters, their
        providers)."""
        if urn in self._owner:
            return self._owner[urn]
        walked: list[str] = []
        current: str | None = urn
        owner: str | None = None
        while current is not None:
            if current in self._owner:
                owner = self._owner[current]
                break
            if current in walked:
                raise CycleError(current)
            walked.append(current)
            parsed = parse_urn(current)
            if parsed is not None and parsed.type == tokens.GATEWAY:
                owner = parsed.name
                break
            if current not in self.parents:  # the chain breaks here: read the URN
                owner = self._inferred(parsed)
                break
            current = self.parents[current]
        for seen in walked:
            self._owner[seen] = owner
        if owner is None and self._stack_level_provider(urn):
            # A gateway's database owner's provider, a child of the stack
            # (gatewayctl.ownership): the one gateway whose resources it is made from.
            owned = ownership.served(
                (urn, self.gateway_of(dep)) for dep in self.dependencies.get(urn, ())
            )
            owner = self._owner[urn] = owned.get(urn)
        return owner

    def _stack_level_provider(self, urn: str) -> bool:
        parent = self.parents.get(urn)
        return ownership.is_provider(type_of(urn)) and (
            parent is None or type_of(parent) == STACK_TYPE
        )

    def _inferred(self, parsed: Urn | None) -> str | None:
        if parsed is None or parsed.chain[0] != tokens.GATEWAY:
            return None
        name = parsed.name
        # A part's child: `<gateway>-<part>-...`; the gateway's own child: `<gateway>-...`.
        lead = f"-{_suffix(parsed.chain[1])}-" if len(parsed.chain) > 2 else "-"
        candidates = [g for g in self.known if name.startswith(g + lead)]
        if candidates:
            return max(candidates, key=len)
        if len(parsed.chain) > 2:
            end = name.rfind(lead)
            return name[:end] if end > 0 else None
        end = name.rfind("-")
        return name[:end] if end > 0 else None

    def gateways(self) -> set[str]:
        return {name_of(u) for u in self.parents if type_of(u) == tokens.GATEWAY}


def by_urn(resources: Iterable[ResourceV3]) -> dict[str, ResourceV3]:
    return {resource.urn: resource for resource in resources}


def stack_outputs(resources: Mapping[str, ResourceV3]) -> dict[str, object]:
    for urn, resource in resources.items():
        if type_of(urn) == STACK_TYPE:
            return dict(resource.outputs)
    return {}


def _entries(content: DeploymentV3 | PreviewDigest) -> list[tuple[str, ResourceV3]]:
    """The resources a file gives the tree (:class:`Tree`), each with its field."""
    if isinstance(content, DeploymentV3):
        return [
            (f"deployment.resources.{i}", r)
            for i, r in enumerate(content.resources)
            if not r.delete
        ]
    found: list[tuple[str, ResourceV3]] = []
    for index, step in enumerate(content.steps):
        for key, state in (("oldState", step.old_state), ("newState", step.new_state)):
            if state is not None:
                found.append((f"steps.{index}.{key}", state))
    return found


def _collapsed(display: str, found: list[tuple[str, str]]) -> list[Problem]:
    if not found:
        return []
    field, message = found[0]
    more = f" ({len(found) - 1} more like it)" if len(found) > 1 else ""
    return [Problem(display, field, message + more)]


def integrity_problems(display: str, content: DeploymentV3 | PreviewDigest) -> list[Problem]:
    """A state's second live entry of one URN, and a resource whose parents lead back to it, in
    one file: the first of each kind (and how many more there are). Linear in the entries."""
    entries = _entries(content)
    duplicates: list[tuple[str, str]] = []
    if isinstance(content, DeploymentV3):
        first: dict[str, str] = {}
        for field, resource in entries:
            if resource.urn in first:
                duplicates.append(
                    (
                        f"{field}.urn",
                        f"the URN of {first[resource.urn]} again: a state holds each live"
                        " resource once (the CLI refuses a duplicate not marked for deletion)",
                    )
                )
            else:
                first[resource.urn] = field
    parents: dict[str, tuple[str | None, str]] = {}
    for field, resource in entries:
        if resource.parent or resource.urn not in parents:
            parents[resource.urn] = (resource.parent, field)
    cycles: list[tuple[str, str]] = []
    done: set[str] = set()
    for start in parents:
        path: dict[str, int] = {}
        current: str | None = start
        while current is not None and current in parents and current not in done:
            if current in path:
                members = sorted((parents[u][1] for u in list(path)[path[current] :]), key=_order)
                cycles.append(
                    (
                        f"{members[0]}.parent",
                        f"a parent cycle through {len(members)} resource(s)"
                        f" ({', '.join(members[:4])}{', ...' if len(members) > 4 else ''}):"
                        " no resource is its own ancestor; the file is corrupt",
                    )
                )
                break
            path[current] = len(path)
            current = parents[current][0]
        done.update(path)
    return _collapsed(display, duplicates) + _collapsed(
        display, sorted(cycles, key=lambda c: _order(c[0]))
    )


def _order(field: str) -> list[tuple[int, str]]:
    """A field path's sort key: its indexes as numbers (``resources.2`` before ``.10``)."""
    return [(int(part), "") if part.isdigit() else (-1, part) for part in field.split(".")]

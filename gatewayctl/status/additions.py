"""Live additions: what another field manager added to an object, which neither a refresh's
diff nor an ``up`` can see or undo, found by comparing a resource's outputs with its inputs.

pulumi-kubernetes' ``Read`` prunes the live object to the shape of the program's inputs before
it diffs (``provider/pkg/provider/provider.go``, ``Read``: ``liveInputs :=
pruneLiveState(liveObj, oldInputs)``), so a key added inside a map the program declares is not
in the refreshed inputs and the refresh reports nothing; its server-side apply leaves fields
another manager owns in place, so ``up`` does not remove it either. Measured with the real CLI
and API server (tests/e2e/test_e2e_b_drift.py): ``kubectl patch`` of a default-deny policy's
empty ``podSelector`` to ``matchLabels`` (the policy then selects no pod: the namespace is open)
gives no step in ``pulumi refresh --preview-only`` nor in ``pulumi preview``; a real ``pulumi
refresh`` writes the live object to the state's *outputs* (the inputs stay pruned). That is
what this module reads, in a state a real refresh wrote (``pulumi refresh --yes``, or ``up
--refresh``). The remedy: delete the live object, then ``pulumi up --refresh`` recreates it as
declared. Not ``pulumi up --replace URN``: with no replace reason from the provider the engine
creates the replacement first (an apply onto the same object) and then deletes "the original",
the same object, leaving none (measured in the same test).

Checked where an addition widens access or runs code: a NetworkPolicy's ``spec.podSelector``
(an exact match: selectors have no server defaults), and a workload's pod template's
containers, init containers and volumes (by name: the server defaults their fields, never adds
one), when the inputs hold the pod template. Only paths are reported, never values.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
WORKLOADS = frozenset(
    {
        "kubernetes:apps/v1:Deployment",
        "kubernetes:apps/v1:StatefulSet",
        "kubernetes:apps/v1:DaemonSet",
    }
)
TEMPLATE_LISTS = ("containers", "initContainers", "volumes")
TYPES = WORKLOADS | {NETWORK_POLICY}


def _at(document: Mapping[str, Any], *keys: str) -> Any:
    value: Any = document
    for key in keys:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _names(items: Any) -> set[str]:
    if not isinstance(items, list):
        return set()
    return {str(i["name"]) for i in items if isinstance(i, Mapping) and "name" in i}


def additions(type_: str, inputs: Mapping[str, Any], outputs: Mapping[str, Any]) -> tuple[str, ...]:
    """The paths where the live object (``outputs``) holds what the inputs do not."""
    if not outputs or not inputs:
        return ()
    found: list[str] = []
    if type_ == NETWORK_POLICY:
        declared = _at(inputs, "spec", "podSelector")
        if declared is not None and _at(outputs, "spec", "podSelector") != declared:
            found.append("spec.podSelector")
    elif type_ in WORKLOADS and isinstance(_at(inputs, "spec", "template", "spec"), Mapping):
        for key in TEMPLATE_LISTS:
            path = ("spec", "template", "spec", key)
            if _names(_at(outputs, *path)) - _names(_at(inputs, *path)):
                found.append(".".join(path))
    return tuple(found)

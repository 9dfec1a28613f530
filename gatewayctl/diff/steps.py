"""The predicted steps of a stack, one per resource URN, as data: what ``pulumi preview --json``
would list for the same change (its ``steps``, pulumi/pulumi ``sdk/go/common/apitype``
``PreviewStep``), from the two plans and the :mod:`.operations` predictions.

Every resource of either plan has one step: ``create`` (head only), ``delete`` (base only; a
``retainOnDelete`` resource is still a delete step, the engine only skips the provider's
``Delete``: ``pkg/resource/deploy/step.go`` ``DeleteStep.Apply``), the predicted operation
when its inputs or its provider change (``update``, ``replace``, ``replace-delete-first``,
``unpredicted``), and ``same`` otherwise. The stack's root resource (``pulumi:pulumi:Stack``,
absent from the plan) is a step too: ``same`` when both sides have resources. ``gatewayctl
diff --json`` writes them, and the real-engine lane compares them with the engine's preview
(``tests/e2e/test_e2e_e_predictions.py``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from gatewayctl.diff.operations import Operation
from gatewayctl.diff.rules import Op

StepOp = Literal["same", "create", "delete"] | Op
STACK_TYPE = "pulumi:pulumi:Stack"


@dataclass(frozen=True, kw_only=True)
class Step:
    urn: str
    type: str
    name: str
    op: StepOp
    because: tuple[str, ...] = ()


def stack_urn(stack: str, project: str) -> str:
    return f"urn:pulumi:{stack}::{project}::{STACK_TYPE}::{project}-{stack}"


def urn_of(resource: Mapping[str, Any], stack: str, project: str) -> str:
    """The URN the engine gives a plan resource: its parent's qualified type, ``$``, its own
    type (a child of the stack's root has its type alone), ``::`` its name (pulumi/pulumi
    ``sdk/go/common/resource/urn.go`` ``NewURN``)."""
    type_, name = str(resource.get("type")), str(resource.get("name"))
    parent = resource.get("parent")
    qualified = type_
    if isinstance(parent, str) and parent.count("::") >= 3:
        parent_type = parent.split("::")[2]
        if parent_type != STACK_TYPE:
            qualified = f"{parent_type}${type_}"
    return f"urn:pulumi:{stack}::{project}::{qualified}::{name}"


def _resources(plan: Mapping[str, Any], stack: str, project: str) -> dict[str, Mapping[str, Any]]:
    return {
        urn_of(r, stack, project): r for r in plan.get("resources", []) if isinstance(r, Mapping)
    }


def predicted_steps(
    base: Mapping[str, Any],
    head: Mapping[str, Any],
    operations: Iterable[Operation],
    *,
    stack: str,
    project: str,
) -> tuple[Step, ...]:
    """One :class:`Step` per URN of either plan, and the stack's root, sorted by URN."""
    old, new = _resources(base, stack, project), _resources(head, stack, project)
    predicted = {(o.type, o.name): o for o in operations}
    steps: list[Step] = []
    if old or new:
        root_op: StepOp = "same" if old and new else ("create" if new else "delete")
        steps.append(
            Step(
                urn=stack_urn(stack, project),
                type=STACK_TYPE,
                name=f"{project}-{stack}",
                op=root_op,
            )
        )
    for urn in sorted(old.keys() | new.keys()):
        resource = new.get(urn) or old[urn]
        type_, name = str(resource.get("type")), str(resource.get("name"))
        op: StepOp
        because: tuple[str, ...] = ()
        if urn not in old:
            op = "create"
        elif urn not in new:
            op = "delete"
        elif (type_, name) in predicted:
            operation = predicted[(type_, name)]
            op, because = operation.op, operation.because
        else:
            op = "same"
        steps.append(Step(urn=urn, type=type_, name=name, op=op, because=because))
    return tuple(sorted(steps, key=lambda s: s.urn))


def as_json(step: Step) -> dict[str, Any]:
    return {
        "urn": step.urn,
        "type": step.type,
        "name": step.name,
        "op": step.op,
        "because": list(step.because),
    }


JSON_FORMAT = 1
"""Version of the document ``diff --json`` writes (:func:`document`)."""


def document(diffs: Iterable[Any]) -> dict[str, Any]:
    """What ``gatewayctl diff --json FILE`` writes: per stack, every predicted step and every
    Kubernetes object file added, changed or removed (``StackDiff``s of :mod:`.compare`)."""
    return {
        "format": JSON_FORMAT,
        "stacks": [
            {
                "stack": diff.stack,
                "steps": [as_json(step) for step in diff.steps],
                "objects": [
                    {"path": o.path, "kind": o.kind, "status": o.status} for o in diff.objects
                ],
                "hazards": list(diff.hazards),
            }
            for diff in diffs
        ],
    }


def is_document(text: str) -> bool:
    """True for a file :func:`document` wrote: ``--json`` overwrites only such a file."""
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return isinstance(value, dict) and value.get("format") == JSON_FORMAT and "stacks" in value

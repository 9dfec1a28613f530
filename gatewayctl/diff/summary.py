"""The diff's summary as data: what ``diff --format json|yaml`` prints instead of the Markdown.

The same facts as the report's summary (:mod:`.report`), per stack: the gateways added,
changed and removed, each release that moves, the credential stores that change, who gains or
loses a role and the sign-in changes, the Kubernetes object files per kind, the other plan
resources with the fields that changed, the predicted operations and their warnings, the
databases dropped or no longer retained, and the working tree's uncommitted declarations. Built
from the :class:`~.compare.StackDiff` the report is built from, after the secrets were
scrubbed: field paths and names only, never an object's text or a secret's value (the object
diffs stay in the Markdown, ``--output``, and the steps in ``--json``).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from gatewayctl.diff import orphaned_credentials
from gatewayctl.diff.compare import STATUSES, StackDiff

if TYPE_CHECKING:
    from gatewayctl.diff.diff_command import Result


def _counts(items: Any) -> dict[str, int]:
    counted = Counter(item.status for item in items)
    return {status: counted[status] for status in STATUSES}


def _store(store: orphaned_credentials.Store) -> dict[str, str]:
    # The location is written for the report (Markdown code spans): its text without them.
    return {"driver": store.driver, "location": store.location.replace("`", "")}


def stack_summary(diff: StackDiff) -> dict[str, Any]:
    per_kind: dict[str, Counter[str]] = {}
    for obj in diff.objects:
        per_kind.setdefault(obj.kind, Counter())[obj.status] += 1
    return {
        "stack": diff.stack,
        "changed": diff.changed,
        "baseNote": diff.base_note,
        "headNote": diff.head_note,
        "secretsChanged": diff.secrets_changed,
        "counts": {
            "gateways": _counts(diff.gateways),
            "objects": _counts(diff.objects),
            "resources": _counts(diff.resources),
        },
        "gateways": [
            {
                "name": g.name,
                "status": g.status,
                "fields": list(g.fields),
                "resources": [{"kind": kind, "name": name} for kind, name in g.resources],
                "cluster": g.cluster,
                "namespace": g.namespace,
                "address": g.address,
                "adopted": g.adopted,
            }
            for g in diff.gateways
        ],
        "releases": [
            {"gateway": m.gateway, "before": m.before, "after": m.after, "pinned": m.pinned}
            for m in diff.releases
        ],
        "credentialStores": [
            {
                "gateway": c.gateway,
                "namespace": c.namespace,
                "from": _store(c.old),
                "to": _store(c.new),
            }
            for c in orphaned_credentials.store_changes(diff.objects)
        ],
        "access": [
            {"gateway": a.gateway, "principal": a.principal, "role": a.role, "change": a.change}
            for a in diff.access
        ],
        "signIn": [
            {"gateway": c.gateway, "field": c.field, "old": c.old, "new": c.new}
            for c in diff.sign_in
        ],
        "objects": [{"path": o.path, "kind": o.kind, "status": o.status} for o in diff.objects],
        "objectsByKind": {
            kind: {status: counted[status] for status in STATUSES}
            for kind, counted in sorted(per_kind.items())
        },
        "resources": [
            {"type": r.type, "name": r.name, "status": r.status, "fields": list(r.fields)}
            for r in diff.resources
        ],
        "operations": [
            {
                "type": o.type,
                "name": o.name,
                "gateway": o.gateway,
                "op": o.op,
                "because": list(o.because),
                "manifest": o.manifest,
            }
            for o in diff.operations
        ],
        "hazards": list(diff.hazards),
        "dataLoss": list(diff.data_loss),
        "leftBehind": list(diff.left_behind),
        "deletionPolicyFlips": list(diff.delete_flips),
        "decommissions": list(diff.decommissions),
        "rotations": [
            {"gateway": c.gateway, "counter": c.counter, "old": c.old, "new": c.new, "held": c.held}
            for c in diff.rotations
        ],
    }


def document(result: Result, ref: str) -> dict[str, Any]:
    """The whole diff: the base, whether anything changed (exit 3), the notes, each stack."""
    return {
        "base": {"ref": ref, "commit": result.commit},
        "changed": result.changed,
        "notes": list(result.notes),
        "uncommitted": [{"path": u.path, "state": u.state} for u in result.uncommitted],
        "refused": [
            {"stack": r.stack, "gateway": r.gateway, "declaration": r.declaration}
            for r in result.refused
        ],
        "stacks": [stack_summary(diff) for diff in result.diffs],
    }

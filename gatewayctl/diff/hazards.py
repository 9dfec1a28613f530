"""Creates that meet an object the same ``up`` deletes only later, and cluster keys renamed on
the same cluster: the predicted operations' hazards (:mod:`.operations`).

A resource created while another one of the same physical
identity is deleted in the same ``up`` (a renamed logical name, a renamed cluster key). The
engine creates before it deletes what the program no longer registers (deletes come last,
``step_generator.go`` ``GenerateDeletes``), so the create meets the object that still exists:
pulumi-kubernetes refuses it with AlreadyExists (``provider/pkg/await/await.go`` ``Creation``,
a client-side create unless the kind is a Patch), and so does Keycloak for a client id or role
name, and PostgreSQL for a role or database name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gatewayctl.diff.operations import Operation
from gatewayctl.diff.plan import Key, identity, index, owning_gateway, urn_key
from gatewayctl.diff.rules import KUBERNETES_PROVIDER


def _what(type_: str) -> str:
    return type_.rsplit(":", 1)[-1]


def hazards(
    base: Mapping[str, Any], head: Mapping[str, Any], operations: Iterable[Operation]
) -> list[str]:
    """Creates that meet an object the same ``up`` deletes only later (AlreadyExists), and
    cluster keys renamed on the same cluster."""
    old_res, new_res = index(base), index(head)
    replaced = {(o.type, o.name) for o in operations if o.op == "replace"}
    deleted: dict[tuple[str, ...], Key] = {}
    for key in sorted((old_res.keys() - new_res.keys()) | (replaced & old_res.keys())):
        physical = identity(old_res[key], old_res)
        if physical is not None:
            deleted.setdefault(physical, key)
    found: list[str] = []
    for key in sorted((new_res.keys() - old_res.keys()) | (replaced & new_res.keys())):
        physical = identity(new_res[key], new_res)
        if physical is None or physical not in deleted:
            continue
        gone = deleted[physical]
        gateway = owning_gateway(key, new_res)
        who = f"gateway `{gateway}`" if gateway else "the stack"
        same = "its own old object" if gone == key else f"`{gone[1]}`"
        found.append(
            f"{who}: the `up` would fail: {_what(key[0])} `{key[1]}` is created while {same},"
            f" the same {_what(key[0])} (`{physical[-1]}`), still exists (the engine deletes it"
            " only after the creates): the provider refuses it with AlreadyExists. Keep the"
            " logical name (an alias), or delete the old one first."
        )
    # A cluster key renamed: its providers and Cluster component are deleted and created under
    # the new key; the gateways move to the new providers (no replacement when their
    # configuration is the same: step_generator.go providerChanged).
    removed = {
        old_res[k].get("inputs", {}).get("context"): k
        for k in old_res.keys() - new_res.keys()
        if k[0] == KUBERNETES_PROVIDER
    }
    for key in sorted(new_res.keys() - old_res.keys()):
        context = (new_res[key].get("inputs") or {}).get("context")
        if key[0] != KUBERNETES_PROVIDER or context is None or context not in removed:
            continue
        old_cluster = urn_key(old_res[removed[context]].get("parent"))
        new_cluster = urn_key(new_res[key].get("parent"))
        found.append(
            f"the stack: the cluster key `{old_cluster[1] if old_cluster else removed[context][1]}`"
            f" becomes `{new_cluster[1] if new_cluster else key[1]}` on the same cluster (context"
            f" `{context}`): its Cluster component and providers are deleted and created under"
            " the new key, and every resource of the cluster changes provider."
        )
    return sorted(set(found))

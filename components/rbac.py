"""RBAC of a tenant gateway as pure data: the rules of its Roles, the references to roles and
the ServiceAccount subjects of its bindings (wire keys, as ``network`` does for policies).

Rules are upstream's (``manifests/gateway/*.yaml``).
"""

from __future__ import annotations

from typing import Any, Literal

import pulumi

API_GROUP = "rbac.authorization.k8s.io"

SANDBOX_RULES: list[dict[str, Any]] = [
    {
        "apiGroups": ["agents.x-k8s.io"],
        "resources": ["sandboxes", "sandboxes/status"],
        "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
    },
    {"apiGroups": [""], "resources": ["events"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]},
]
"""The gateway's Role in its namespace: it manages the tenant's sandboxes."""

NODE_READER_RULES: list[dict[str, Any]] = [
    {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]},
    {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]},
]
"""The cluster's shared node-reader ClusterRole, bound once per tenant."""


def role_ref(kind: Literal["Role", "ClusterRole"], name: pulumi.Input[str]) -> dict[str, Any]:
    """``roleRef`` of a RoleBinding or ClusterRoleBinding."""
    return {"apiGroup": API_GROUP, "kind": kind, "name": name}


def service_account(name: pulumi.Input[str], namespace: pulumi.Input[str]) -> list[dict[str, Any]]:
    """``subjects`` of a binding to one ServiceAccount."""
    return [{"kind": "ServiceAccount", "name": name, "namespace": namespace}]

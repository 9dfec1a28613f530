"""Adoption of gateways made by the upstream controller: a ``pulumi import --file`` file.

A declaration that names an existing namespace (``spec.namespace``) is an adoption. For those
gateways the file maps every object the upstream controller created, and the tenant's
PostgreSQL role and database, to their existing IDs, under the logical names, parents and
providers the program gives them, so ``pulumi import --file`` followed by ``pulumi up``
changes them in place instead of recreating them.

Not imported, and why:
- pulumi-tls keys and certificates and pulumi-random values: they exist only in Pulumi's
  state, so there is nothing to import; they are generated anew and written into the
  imported Secrets (the tenant CA changes: clients re-pin the ``caCertificate`` output);
- objects upstream never creates (the default-deny and metrics NetworkPolicies) and the
  PUBLIC revoke Grant: created by the next ``up``;
- the shared node-reader ClusterRole: the program applies it as a ``ClusterRolePatch``
  (server-side apply), which takes over the existing object without an import.
"""

from __future__ import annotations

from importlib import metadata
from typing import Any

from components import naming, network
from stacks.offline import RecordedResource
from stacks.render import Rendered

# (kind, name) of the namespaced objects upstream's controller creates per gateway.
UPSTREAM_OBJECTS = frozenset(
    {
        ("ServiceAccount", naming.GATEWAY),
        ("ServiceAccount", naming.SANDBOX_SA),
        ("Role", naming.SANDBOX_SA),
        ("RoleBinding", naming.SANDBOX_SA),
        ("RoleBinding", naming.PRIVILEGED_SCC_BINDING),
        ("ConfigMap", naming.CONFIG_MAP),
        ("ConfigMap", naming.BACKEND_CA_CONFIG_MAP),
        ("Secret", naming.SERVER_TLS_SECRET),
        ("Secret", naming.CLIENT_TLS_SECRET),
        ("Secret", naming.JWT_SECRET),
        ("Secret", naming.DB_SECRET),
        ("Secret", naming.KEK_SECRET),
        ("Service", naming.GATEWAY),
        ("Deployment", naming.GATEWAY),
        ("NetworkPolicy", network.SANDBOX_SSH),
        ("NetworkPolicy", network.SANDBOX_SSH_V2),
        ("NetworkPolicy", network.ALLOW_SANDBOX),
        ("NetworkPolicy", network.ALLOW_ROUTER),
        ("Route", naming.GATEWAY),
        ("GRPCRoute", naming.GATEWAY),
        ("BackendTLSPolicy", naming.GATEWAY),
    }
)
_POSTGRES_TYPES = {"postgresql:index/role:Role", "postgresql:index/database:Database"}
_PLUGINS = {"kubernetes": "pulumi-kubernetes", "postgresql": "pulumi-postgresql"}


def _is_upstream(resource: RecordedResource) -> bool:
    if resource.type in _POSTGRES_TYPES:
        return True
    if not resource.type.startswith("kubernetes:") or not resource.custom:
        return False
    kind, meta = resource.inputs.get("kind"), resource.inputs.get("metadata", {})
    if kind == "Namespace":
        return True
    if kind == "ClusterRoleBinding":
        return str(meta.get("name", "")).startswith(naming.NODE_READER_CLUSTER_ROLE + "-")
    return (kind, meta.get("name")) in UPSTREAM_OBJECTS


def import_id(resource: RecordedResource) -> str:
    """The provider's import ID: ``<namespace>/<name>`` or ``<name>``; role/database name."""
    if resource.type in _POSTGRES_TYPES:
        return str(resource.inputs["name"])
    meta = resource.inputs["metadata"]
    return f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else str(meta["name"])


def _plugin(type_: str) -> str:
    return metadata.version(_PLUGINS[type_.split(":", 1)[0]])


def import_file(rendered: Rendered) -> dict[str, Any]:
    """The import file for the stack's adopted gateways (empty ``resources`` when none)."""
    recording = rendered.recording
    adopted = {g.name for g in rendered.prepared.loaded.gateways if g.adopted}
    name_table: dict[str, str] = {}
    components: dict[str, dict[str, Any]] = {}
    resources: list[dict[str, Any]] = []

    def parent_ref(resource: RecordedResource) -> str | None:
        parent = recording.resources.get(resource.parent or "")
        if parent is None:
            return None  # the stack itself
        if parent.type == "hypershell:cluster:Cluster":
            name_table[parent.name] = parent.urn  # created before the import (README)
        elif parent.name not in components:
            components[parent.name] = {"type": parent.type, "name": parent.name, "component": True}
            grandparent = parent_ref(parent)
            if grandparent is not None:
                components[parent.name]["parent"] = grandparent
        return parent.name

    for resource in sorted(recording.resources.values(), key=lambda r: r.urn):
        gateway = recording.ancestor_name(resource, "hypershell:gateway:Gateway")
        if gateway not in adopted or not _is_upstream(resource):
            continue
        provider = recording.resources[resource.provider or ""]
        name_table[provider.name] = provider.urn
        parent_ref(provider)  # its Cluster: created with it before the import (README)
        entry: dict[str, Any] = {
            "type": resource.type,
            "name": resource.name,
            "id": import_id(resource),
            "provider": provider.name,
            "version": _plugin(resource.type),
        }
        parent = parent_ref(resource)
        if parent is not None:
            entry["parent"] = parent
        resources.append(entry)
    ordered = sorted(components.values(), key=lambda c: c["name"]) + resources
    return {"nameTable": dict(sorted(name_table.items())), "resources": ordered}


def targets(document: dict[str, Any]) -> list[str]:
    """URNs to create with ``pulumi up --target`` before the import: the name table's."""
    return sorted(document["nameTable"].values())

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

References inside the file are URNs, never logical names. Pulumi resolves an entry's
``parent`` in ``nameTable`` first and only then among the entries' ``name`` keys, and its
``provider`` in ``nameTable`` only (pulumi/pulumi ``pkg/cmd/pulumi/operations/import.go``,
``parseImportFile``); ``nameTable`` keys and ``name`` keys share one namespace. Logical names
do not keep them apart: a gateway named like its cluster, ``<cluster>-k8s`` or
``<cluster>-postgres`` would have its children parented to the Cluster component or to a
provider. So each entry's ``name`` is the URN it will have (unique in a stack by Pulumi's own
rule), its ``logicalName`` is the name the program registers (``importSpec.LogicalName``: "the
first argument to `new Resource`", which the URN is computed from), and ``nameTable`` maps
each URN it refers to to itself.
"""

from __future__ import annotations

import json
from importlib import metadata
from typing import Any

from components import naming, network, tokens, trusted_ca
from components.identity_types import ADMIN_ROLE, USER_ROLE
from gatewayctl.engine.offline import RecordedResource
from gatewayctl.engine.render import Rendered
from gatewayctl.inputs.signin import KeycloakImportIds

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
        # Upstream copies the control plane's trusted CA ConfigMap into the tenant namespace
        # (upstream §1.2) when there is one; the program declares it when the stack has a trusted
        # CA bundle. Imported, not created: pulumi-kubernetes 4.29 and later create client-side
        # and fail with AlreadyExists on an object that exists (provider/pkg/await/await.go,
        # Creation; CHANGELOG 4.29.0, #2926), where the lane's 4.25 took it over by
        # server-side apply (docs/adoption.md).
        ("ConfigMap", trusted_ca.CONFIG_MAP),
    }
)
_POSTGRES_TYPES = {"postgresql:index/role:Role", "postgresql:index/database:Database"}
_PLUGINS = {
    "kubernetes": "pulumi-kubernetes",
    "postgresql": "pulumi-postgresql",
    "keycloak": "pulumi-keycloak",
}
_URN = "urn:pulumi:"


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


KEYCLOAK_CLIENT = "keycloak:openid/client:Client"
KEYCLOAK_ROLE = "keycloak:index/role:Role"


def keycloak_import_id(resource: RecordedResource, ids: KeycloakImportIds) -> str | None:
    """``<realm>/<id>`` of an adopted gateway's Keycloak client or role, None for any other
    resource. The provider imports both by the realm and Keycloak's own id (the UUID), not by
    the client id or role name (terraform-provider-keycloak ``provider/``
    ``resource_keycloak_openid_client.go``, ``resourceKeycloakOpenidClientImport``:
    ``{{realmId}}/{{openidClientId}}``; ``resource_keycloak_role.go``,
    ``resourceKeycloakRoleImport``: ``{{realm}}/{{roleId}}``).

    Not imported, and why: the default scopes (``resource_keycloak_openid_client_default_scopes
    .go`` has no importer; creating them attaches the listed scopes and detaches the others);
    the protocol mappers (imported by ``<realm>/client/<client id>/<mapper id>``, which upstream
    does not record; the next ``up`` creates ours: see docs/adoption.md for upstream's own mappers);
    the role mappings (``resourceKeycloakGroupRolesImport`` and ``...UserRolesImport``
    import ``<realm>/<group or user id>`` with ``exhaustive`` true, every role of the principal,
    which the next ``up`` would trim to this gateway's; the ``up`` adds the mappings instead,
    and Keycloak keeps a role a principal already holds as it is).
    """
    realm = resource.inputs.get("realmId")
    if resource.type == KEYCLOAK_CLIENT:
        return f"{realm}/{ids.client}"
    if resource.type == KEYCLOAK_ROLE:
        role = {ADMIN_ROLE: ids.admin_role, USER_ROLE: ids.user_role}.get(
            str(resource.inputs.get("name"))
        )
        return f"{realm}/{role}" if role is not None else None
    return None


def _plugin(type_: str) -> str:
    return metadata.version(_PLUGINS[type_.split(":", 1)[0]])


def _entry(resource: RecordedResource) -> dict[str, Any]:
    """Keyed by URN; the logical name is what Pulumi computes the imported URN from."""
    return {"type": resource.type, "name": resource.urn, "logicalName": resource.name}


def import_file(rendered: Rendered) -> dict[str, Any]:
    """The import file for the stack's adopted gateways (empty ``resources`` when none)."""
    recording = rendered.recording
    adopted = {g.name for g in rendered.prepared.loaded.gateways if g.adopted}
    name_table: dict[str, str] = {}
    components: dict[str, dict[str, Any]] = {}
    resources: list[dict[str, Any]] = []

    # Created by `pulumi up --target` before the import, with the cluster components and their
    # providers: each adopted gateway's database owner's provider (the engine creates every
    # provider of a targeted `up`), the password it logs in with, and that password's parent
    # components (pulumi-random values are never imported: see the module).
    owners = recording.gateways()
    before: set[str] = set()
    for resource in recording.resources.values():
        if owners[resource.urn] in adopted and resource.parent not in recording.resources:
            for dependency in resource.dependencies:
                before.add(dependency)
                before.update(a.urn for a in recording.ancestors(recording.resources[dependency]))
    for urn in sorted(before):
        name_table[urn] = urn

    def parent_ref(resource: RecordedResource) -> str | None:
        parent = recording.resources.get(resource.parent or "")
        if parent is None:
            return None  # the stack itself
        if parent.type == tokens.CLUSTER or parent.urn in before:
            name_table[parent.urn] = parent.urn  # created before the import (docs/adoption.md)
        elif parent.urn not in components:
            components[parent.urn] = {**_entry(parent), "component": True}
            grandparent = parent_ref(parent)
            if grandparent is not None:
                components[parent.urn]["parent"] = grandparent
        return parent.urn

    keycloak_ids = {
        g.name: g.keycloak_import_ids
        for g in rendered.prepared.loaded.gateways
        if g.keycloak_import_ids is not None
    }
    for resource in sorted(recording.resources.values(), key=lambda r: r.urn):
        gateway = recording.ancestor_name(resource, tokens.GATEWAY)
        ids = keycloak_ids.get(gateway or "")
        keycloak_id = keycloak_import_id(resource, ids) if ids is not None else None
        if keycloak_id is None and (gateway not in adopted or not _is_upstream(resource)):
            continue
        provider = recording.resources[resource.provider or ""]
        name_table[provider.urn] = provider.urn
        parent_ref(provider)  # its Cluster: created with it before the import (docs/adoption.md)
        entry: dict[str, Any] = {
            **_entry(resource),
            "id": keycloak_id or import_id(resource),
            "provider": provider.urn,
            "version": _plugin(resource.type),
        }
        parent = parent_ref(resource)
        if parent is not None:
            entry["parent"] = parent
        resources.append(entry)
    # Parents before their children (the engine imports in parallel; the order is for readers).
    depth = {urn: len(list(recording.ancestors(recording.resources[urn]))) for urn in components}
    ordered = [components[urn] for urn in sorted(components, key=lambda u: (depth[u], u))]
    ordered += resources
    return {"nameTable": dict(sorted(name_table.items())), "resources": ordered}


def is_import_file(text: str) -> bool:
    """True for a file as :func:`import_file` writes it (every reference a URN, every entry
    with a logical name): ``import-file --out`` overwrites only such a file."""
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return False
    if not isinstance(document, dict) or set(document) != {"nameTable", "resources"}:
        return False
    table, resources = document["nameTable"], document["resources"]
    return (
        isinstance(table, dict)
        and all(isinstance(k, str) and k == v and k.startswith(_URN) for k, v in table.items())
        and isinstance(resources, list)
        and bool(resources)
        and all(
            isinstance(entry, dict)
            and isinstance(entry.get("name"), str)
            and entry["name"].startswith(_URN)
            and isinstance(entry.get("logicalName"), str)
            for entry in resources
        )
    )


def targets(document: dict[str, Any]) -> list[str]:
    """URNs to create with ``pulumi up --target`` before the import: the name table's (the
    clusters' components and providers, and each adopted gateway's database password with its
    parent components)."""
    return sorted(document["nameTable"].values())

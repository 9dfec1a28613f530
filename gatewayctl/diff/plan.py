"""The plan's resource entries (``plan.json``, the render's record of every resource it
registers): indexed by (type, name), their parents followed to the gateway that owns them, the
manifest path the render gives a Kubernetes object, and a Secret's data digest."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from components import tokens
from gatewayctl import ownership

Key = tuple[str, str]

_last_decoded: list[tuple[str, Any]] = []


def decoded(text: str) -> Any:
    """``json.loads(text)``; the last text's value is kept and given again for an equal text.
    A cached diff reads the base's ``plan.json`` twice, for the working tree's render of the
    gateways it reuses (:mod:`.incremental`) and for the comparison, 0.6 s each at 1,000
    gateways. The value is shared: callers only read it (none of this package writes to a
    plan)."""
    if _last_decoded and (_last_decoded[0][0] is text or _last_decoded[0][0] == text):
        return _last_decoded[0][1]
    value = json.loads(text)
    _last_decoded[:] = [(text, value)]
    return value


def urn_key(urn: object) -> Key | None:
    """(type, name) of the resource a URN names: ``urn:pulumi:s::p::<a>$<b>::<name>``."""
    if not isinstance(urn, str) or urn.count("::") < 3:
        return None
    parts = urn.split("::", 3)
    return parts[2].rsplit("$", 1)[-1], parts[3]


def index(plan: Mapping[str, Any]) -> dict[Key, Mapping[str, Any]]:
    """The plan's resource entries by (type, name)."""
    found: dict[Key, Mapping[str, Any]] = {}
    for resource in plan.get("resources", []):
        if isinstance(resource, Mapping):
            found[(str(resource.get("type")), str(resource.get("name")))] = resource
    return found


def owning_gateway(key: Key, resources: Mapping[Key, Mapping[str, Any]]) -> str | None:
    """The gateway whose component (transitively) parents ``key``, or whose database owner's
    provider it is (:mod:`gatewayctl.ownership`)."""
    found = _ancestor_gateway(key, resources)
    if found is None and ownership.is_provider(key[0]):
        return _served_gateways(resources).get(key)
    return found


_served: list[tuple[Mapping[Key, Mapping[str, Any]], dict[Key, str]]] = []


def _ancestor_gateway(key: Key, resources: Mapping[Key, Mapping[str, Any]]) -> str | None:
    seen: set[Key] = set()
    current: Key | None = key
    while current is not None and current not in seen:
        if current[0] == tokens.GATEWAY:
            return current[1]
        seen.add(current)
        resource = resources.get(current)
        current = urn_key(resource.get("parent")) if resource else None
    return None


def _served_gateways(resources: Mapping[Key, Mapping[str, Any]]) -> dict[Key, str]:
    """:func:`gatewayctl.ownership.served` over a plan's index, made once per index (the last
    one is kept with the index itself, so that its identity cannot be another's)."""
    if _served and _served[0][0] is resources:
        return _served[0][1]
    stack_level = {
        key
        for key, resource in resources.items()
        if ownership.is_provider(key[0]) and urn_key(resource.get("parent")) not in resources
    }
    uses = (
        (key, _ancestor_gateway(dep, resources))
        for key in stack_level
        for urns in resources[key].get("inputDependencies", {}).values()
        for urn in urns
        if (dep := urn_key(urn)) is not None
    )
    found = ownership.served(uses)
    _served[:] = [(resources, found)]
    return found


def object_name(inputs: Mapping[str, Any]) -> tuple[object, object]:
    """A Kubernetes object's ``.metadata.name`` and ``.metadata.namespace``."""
    meta = inputs.get("metadata") if isinstance(inputs.get("metadata"), Mapping) else {}
    assert isinstance(meta, Mapping)
    return meta.get("name"), meta.get("namespace")


def manifest_path(
    resource: Mapping[str, Any], resources: Mapping[Key, Mapping[str, Any]]
) -> str | None:
    """The manifest path the render gives the object
    (``gatewayctl.engine.render.manifest_files``)."""
    inputs = resource.get("inputs") or {}
    provider_key = urn_key(resource.get("provider"))
    provider = resources.get(provider_key) if provider_key else None
    cluster = urn_key(provider.get("parent")) if provider else None
    name, namespace = object_name(inputs)
    if cluster is None or not isinstance(name, str) or not isinstance(inputs.get("kind"), str):
        return None
    where = namespace if isinstance(namespace, str) and namespace else "_cluster"
    return f"manifests/{cluster[1]}/{where}/{inputs['kind'].lower()}-{name}.yaml"


DATA_DIGEST = "dataDigest"
"""A Secret's plan entry: the digest of its redacted data
(``gatewayctl.engine.render.data_digest``)."""


def with_data_digest(resource: Mapping[str, Any]) -> Mapping[str, Any]:
    """A resource's inputs; a Secret's with its data digest in ``stringData``, so that a change
    of its redacted data is a change of ``.stringData`` (updated in place under our providers'
    ``enableSecretMutable``, replaced when immutable: :func:`.rules.kubernetes_force_new`)."""
    inputs = resource.get("inputs") or {}
    digest = resource.get(DATA_DIGEST)
    if digest is None:
        return inputs
    string_data = inputs.get("stringData")
    merged = dict(string_data) if isinstance(string_data, Mapping) else {}
    return {**inputs, "stringData": {**merged, f"({DATA_DIGEST})": digest}}


def identity(
    resource: Mapping[str, Any], resources: Mapping[Key, Mapping[str, Any]]
) -> tuple[str, ...] | None:
    """The physical object a resource is, where one name can be taken only once: a
    Kubernetes object (not a Patch) on its cluster (the provider's context), a PostgreSQL role
    or database on its server, a Keycloak client or role in its realm. None otherwise."""
    type_ = str(resource.get("type"))
    inputs = resource.get("inputs") or {}
    provider_key = urn_key(resource.get("provider"))
    provider = resources.get(provider_key) if provider_key else None
    config = (provider or {}).get("inputs") or {}
    if type_.startswith("kubernetes:"):
        if type_.endswith("Patch"):
            return None  # a server-side apply: it takes the object over (await.go Creation)
        name, namespace = object_name(inputs)
        cluster = config.get("context") or (provider_key[1] if provider_key else "")
        group = str(inputs.get("apiVersion", "")).rsplit("/", 1)[0]
        return (
            "kubernetes",
            str(cluster),
            group,
            str(inputs.get("kind")),
            str(namespace),
            str(name),
        )
    server = f"{config.get('host')}:{config.get('port')}"
    if type_ in ("postgresql:index/role:Role", "postgresql:index/database:Database"):
        return (type_, server, str(inputs.get("name")))
    realm = (str(config.get("url")), str(inputs.get("realmId")))
    if type_ == "keycloak:openid/client:Client":
        return (type_, *realm, str(inputs.get("clientId")))
    if type_ == "keycloak:index/role:Role":
        return (type_, *realm, str(inputs.get("clientId")), str(inputs.get("name")))
    return None

"""Reading resource properties the way the policy analyzer hands them over.

The analyzer gives a policy plain values (secrets already unwrapped) wrapped in read-only
proxies: mappings and sequences, not ``dict`` and ``list``. Reading a value that is unknown
during preview raises ``UnknownValueError``; the analyzer turns that into an advisory "can't
run during preview" note, and ``pulumi up`` checks the value once it is known. So policies read
only the fields they judge, never whole objects (a pod template's config-hash annotation, for
one, is unknown until the certificates exist).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

K8S = "kubernetes:"
MANAGED_LABEL = "hypershell.redhat.io/managed"
GATEWAY_LABEL = "hypershell.redhat.io/gateway"

# Where each pod-creating kind keeps its pod spec.
_POD_SPEC_PATHS: dict[str, tuple[str, ...]] = {
    "Pod": ("spec",),
    "Deployment": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}
_POD_GROUPS = {"core", "apps", "batch"}
_CONTAINER_FIELDS = ("initContainers", "containers", "ephemeralContainers")


def is_list(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str | bytes)


def get(obj: Any, *path: str) -> Any:
    """``obj[a][b]...``, or None where a step is absent or not a mapping."""
    for key in path:
        if not isinstance(obj, Mapping) or key not in obj:
            return None
        obj = obj[key]
    return obj


def elements(value: Any) -> list[Any]:
    """The elements of a list property; [] when absent or not a list."""
    return [value[i] for i in range(len(value))] if is_list(value) else []


def plain(value: Any) -> Any:
    """Proxies to plain dicts and lists, for messages and comparisons of small values."""
    if isinstance(value, Mapping):
        return {key: plain(value[key]) for key in value}
    if is_list(value):
        return [plain(item) for item in elements(value)]
    return value


def show(value: Any) -> str:
    """A value as it reads in a manifest: ``true``, ``'edge'``, ``['NET_RAW']``, ``not set``."""
    if value is None:
        return "not set"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(plain(value))


def kind_of(resource_type: str) -> tuple[str, str] | None:
    """``("apps", "Deployment")`` for ``kubernetes:apps/v1:Deployment``; None if not Kubernetes."""
    if not resource_type.startswith(K8S):
        return None
    _, group_version, kind = resource_type.split(":", 2)
    return group_version.split("/", 1)[0], kind


def describe(resource_type: str, props: Mapping[str, Any], fallback: str) -> str:
    """``Deployment openshell-team-a/openshell-gateway``: the kind and the object's own name."""
    kind = (kind_of(resource_type) or ("", resource_type))[1]
    name, namespace = get(props, "metadata", "name"), get(props, "metadata", "namespace")
    if not isinstance(name, str):
        return f"{kind} {fallback}"
    return f"{kind} {namespace}/{name}" if isinstance(namespace, str) else f"{kind} {name}"


def pod_spec(resource_type: str, props: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]] | None:
    """The dotted path and value of the pod spec of any pod-creating kind."""
    group_kind = kind_of(resource_type)
    if group_kind is None or group_kind[0] not in _POD_GROUPS:
        return None
    path = _POD_SPEC_PATHS.get(group_kind[1])
    spec = get(props, *path) if path else None
    return (".".join(path), spec) if path and isinstance(spec, Mapping) else None


def containers(path: str, spec: Mapping[str, Any]) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
    """``(path, name, container)`` of every container, init and ephemeral container."""
    for field in _CONTAINER_FIELDS:
        for index, container in enumerate(elements(get(spec, field))):
            if isinstance(container, Mapping):
                yield f"{path}.{field}[{index}]", str(get(container, "name")), container

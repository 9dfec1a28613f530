"""Pod policies: the "restricted" Pod Security Standard (plus a read-only root filesystem and
resource requests and limits), and the registries images may come from."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pulumi_policy import (
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
)

from ._props import containers, describe, elements, get, kind_of, pod_spec, show

OPENSHIFT_INTERNAL_REGISTRY = "image-registry.openshift-image-registry.svc:5000/"
DEFAULT_ALLOWED_REGISTRIES = ("ghcr.io/", OPENSHIFT_INTERNAL_REGISTRY)
# The restricted standard's volume types (no hostPath, no in-tree network volumes).
_RESTRICTED_VOLUMES = {
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
}
_RESOURCES = [(section, name) for section in ("requests", "limits") for name in ("cpu", "memory")]


def _pod_problems(path: str, spec: Mapping[str, Any]) -> Iterator[str]:
    for flag in ("hostNetwork", "hostPID", "hostIPC"):
        if get(spec, flag) is True:
            yield f"{path}.{flag} must not be true"
    for index, volume in enumerate(elements(get(spec, "volumes"))):
        if not isinstance(volume, Mapping):
            continue
        name = get(volume, "name")
        for source in sorted(set(volume) - {"name"} - _RESTRICTED_VOLUMES):
            yield f"{path}.volumes[{index}] ({name}): {source} volumes are not allowed"


def _container_problems(
    pod_context: Mapping[str, Any], container: Mapping[str, Any]
) -> Iterator[str]:
    """Each problem as ``securityContext.<field> ...`` relative to the container."""
    context = get(container, "securityContext") or {}

    def effective(*field: str) -> Any:
        value = get(context, *field)
        return get(pod_context, *field) if value is None else value

    if get(context, "privileged") is True:
        yield "securityContext.privileged must not be true"
    escalation = get(context, "allowPrivilegeEscalation")
    if escalation is not False:
        yield f"securityContext.allowPrivilegeEscalation must be false, got {show(escalation)}"
    if effective("runAsNonRoot") is not True:
        yield (
            f"securityContext.runAsNonRoot must be true (here or in the pod's securityContext),"
            f" got {show(effective('runAsNonRoot'))}"
        )
    if effective("runAsUser") == 0:
        yield "securityContext.runAsUser must not be 0"
    drop = [str(c) for c in elements(get(context, "capabilities", "drop"))]
    if "ALL" not in drop:
        yield f"securityContext.capabilities.drop must contain 'ALL', got {show(drop or None)}"
    added = [str(c) for c in elements(get(context, "capabilities", "add"))]
    if set(added) - {"NET_BIND_SERVICE"}:
        yield f"securityContext.capabilities.add may only hold 'NET_BIND_SERVICE', got {added!r}"
    seccomp = effective("seccompProfile", "type")
    if seccomp != "RuntimeDefault":
        yield (
            "securityContext.seccompProfile.type must be 'RuntimeDefault' (here or in the pod's"
            f" securityContext), got {show(seccomp)}"
        )
    if get(context, "readOnlyRootFilesystem") is not True:
        yield (
            "securityContext.readOnlyRootFilesystem must be true,"
            f" got {show(get(context, 'readOnlyRootFilesystem'))}"
        )
    for section, name in _RESOURCES:
        if get(container, "resources", section, name) is None:
            yield f"resources.{section}.{name} is not set"


def validate_pod_security(args: ResourceValidationArgs, report: ReportViolation) -> None:
    found = pod_spec(args.resource_type, args.props)
    if found is None:
        return
    path, spec = found
    what = describe(args.resource_type, args.props, args.name)
    for problem in _pod_problems(path, spec):
        report(f"{what}: {problem}", None)
    pod_context = get(spec, "securityContext") or {}
    for container_path, name, container in containers(path, spec):
        for problem in _container_problems(pod_context, container):
            report(f"{what}: {container_path} ({name}): {problem}", None)


pod_security = ResourceValidationPolicy(
    name="pod-security-restricted",
    description=(
        "Pods follow the Kubernetes 'restricted' Pod Security Standard, run with a read-only"
        " root filesystem and set CPU and memory requests and limits on every container."
    ),
    validate=validate_pod_security,
)


# --- registries ------------------------------------------------------------------------------


def allowed_registries(config: Mapping[str, Any]) -> tuple[str, ...]:
    configured = config.get("allowedRegistries")
    return tuple(str(p) for p in configured) if configured else DEFAULT_ALLOWED_REGISTRIES


def is_allowed(image: str, prefixes: Sequence[str]) -> bool:
    """True when ``image`` starts with a prefix; a prefix without a trailing '/' must end at a
    path, tag or digest boundary (``ghcr.io`` must not admit ``ghcr.io.evil.example/x``)."""
    return any(
        image.startswith(prefix)
        and (prefix.endswith("/") or image[len(prefix) : len(prefix) + 1] in ("", "/", ":", "@"))
        for prefix in prefixes
    )


def _toml_images(document: Mapping[str, Any], path: str = "") -> Iterator[tuple[str, str]]:
    """``(dotted key, image)`` of every string under a key named ``image`` or ``*_image``."""
    for key, value in document.items():
        dotted = f"{path}.{key}" if path else key
        if isinstance(value, Mapping):
            yield from _toml_images(value, dotted)
        elif isinstance(value, str) and (key == "image" or key.endswith("_image")):
            yield dotted, value


def _images(args: ResourceValidationArgs) -> Iterator[tuple[str, str]]:
    """``(where, image)``: container images, and the images a ConfigMap's TOML files name
    (gateway.toml's sandbox and supervisor images, which the gateway makes the cluster pull)."""
    found = pod_spec(args.resource_type, args.props)
    if found is not None:
        for container_path, name, container in containers(*found):
            image = get(container, "image")
            if isinstance(image, str):
                yield f"{container_path} ({name}): image", image
    if kind_of(args.resource_type) == ("core", "ConfigMap"):
        data = get(args.props, "data") or {}
        for key in [k for k in data if k.endswith(".toml")]:
            try:
                document = tomllib.loads(str(data[key]))
            except tomllib.TOMLDecodeError:
                continue
            for dotted, image in _toml_images(document):
                yield f"data[{key!r}] {dotted}", image


def validate_registries(args: ResourceValidationArgs, report: ReportViolation) -> None:
    prefixes = allowed_registries(args.get_config())
    what = describe(args.resource_type, args.props, args.name)
    for where, image in _images(args):
        if not is_allowed(image, prefixes):
            report(
                f"{what}: {where} {image!r} is not from an allowed registry"
                f" (allowed: {', '.join(prefixes)})",
                None,
            )


allowed_images = ResourceValidationPolicy(
    name="allowed-image-registries",
    description="Container images come only from the registries the cluster allows.",
    validate=validate_registries,
    config_schema=PolicyConfigSchema(
        properties={
            "allowedRegistries": {
                "description": (
                    "Image reference prefixes the cluster pulls from, such as 'ghcr.io/' or"
                    " 'image-registry.openshift-image-registry.svc:5000/openshift/'."
                ),
                "type": "array",
                "items": {"type": "string", "minLength": 1},
                "minItems": 1,
                "default": list(DEFAULT_ALLOWED_REGISTRIES),
            }
        }
    ),
)

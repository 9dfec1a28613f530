"""The ``openshell-gateway`` Deployment spec (upstream's ``deployment.yaml``), as wire data,
and :class:`WorkloadSettings`, the declaration's per-gateway settings of the workload."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pulumi

from components import credentials, naming
from components.credentials import KEK_ENV, KEK_KEY
from components.gateway_config import CONFIG_DIR, CONFIG_FILE, JWT_DIR, TLS_DIR

READ_ONLY_0440 = 0o440
UPSTREAM_FS_GROUP = 1001

RESTRICTED_CONTAINER_SECURITY_CONTEXT: dict[str, Any] = {
    "runAsNonRoot": True,
    "readOnlyRootFilesystem": True,
    "allowPrivilegeEscalation": False,
    "seccompProfile": {"type": "RuntimeDefault"},
    "capabilities": {"drop": ["ALL"]},
}


UPSTREAM_RESOURCES: Mapping[str, Mapping[str, str]] = {
    "requests": {"cpu": "100m", "memory": "256Mi"},
    "limits": {"cpu": "500m", "memory": "512Mi"},
}
"""Upstream's requests and limits of the gateway container (its ``deployment.yaml``)."""


@dataclass(frozen=True, kw_only=True)
class WorkloadSettings:
    """The gateway workload's settings a declaration's ``spec`` holds, passed whole from the
    declaration to the Deployment: a new one is a field of the declaration's spec (the same
    name), a field here with upstream's default, and its use below — the resolution copies every
    field by name (:func:`components.settings.from_fields`) and the components pass the
    settings through."""

    replicas: int = 1
    """Gateway pods (``spec.replicas``)."""
    resources: Mapping[str, Mapping[str, str]] = dataclasses.field(
        default_factory=lambda: UPSTREAM_RESOURCES
    )
    """The gateway container's requests and limits (``spec.resources``), as wire data."""


UPSTREAM_SETTINGS = WorkloadSettings()
"""Upstream's workload settings: what a declaration that sets none of them gets."""


def _probe(path: str, *, period: int, failures: int, delay: int | None = None) -> dict[str, Any]:
    probe: dict[str, Any] = {"httpGet": {"path": path, "port": "health"}}
    if delay is not None:
        probe["initialDelaySeconds"] = delay
    probe.update(periodSeconds=period, timeoutSeconds=1, failureThreshold=failures)
    return probe


def _secret_env(name: str, secret: pulumi.Input[str], key: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"secretKeyRef": {"name": secret, "key": key}}}


def deployment_spec(
    *,
    image: str,
    settings: WorkloadSettings,
    labels: dict[str, str],
    config_hash: pulumi.Input[str],
    service_account: pulumi.Input[str],
    config_map: pulumi.Input[str],
    kek_secret: pulumi.Input[str] | None,
    db_secret: pulumi.Input[str],
    jwt_secret: pulumi.Input[str],
    server_tls_secret: pulumi.Input[str],
    openshift: bool,
    vault_token: bool = False,
) -> dict[str, Any]:
    """Upstream's Deployment: restricted security context, probes on ``health``, resources.

    The Secret volumes are mode 0440, readable through the pod's group: elsewhere the pod
    sets upstream's ``fsGroup: 1001``; on OpenShift the SCC assigns the fsGroup from the
    namespace's range and would reject a fixed one, so it is left out there. Images are pulled
    ``Always``: tags such as the sandbox's ``latest`` move. Names of the objects the pod uses
    come in as outputs, so the Deployment waits for them to exist.

    ``kek_secret`` is None with a credential driver (no KEK variable then); ``vault_token``
    adds the projected ServiceAccount token the Vault driver logs in with.
    """
    pod_security: dict[str, Any] = {
        "runAsNonRoot": True,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    if not openshift:
        pod_security["fsGroup"] = UPSTREAM_FS_GROUP
    container = {
        "name": naming.GATEWAY,
        "image": image,
        "imagePullPolicy": "Always",
        "securityContext": RESTRICTED_CONTAINER_SECURITY_CONTEXT,
        "args": ["--config", f"{CONFIG_DIR}/{CONFIG_FILE}", "--db-url", "$(OPENSHELL_DB_URL)"],
        "env": [
            _secret_env("OPENSHELL_DB_URL", db_secret, "uri"),
            *([_secret_env(KEK_ENV, kek_secret, KEK_KEY)] if kek_secret is not None else []),
        ],
        "ports": [
            {"name": "grpc", "containerPort": naming.GRPC_PORT, "protocol": "TCP"},
            {"name": "health", "containerPort": naming.HEALTH_PORT, "protocol": "TCP"},
            {"name": "metrics", "containerPort": naming.METRICS_PORT, "protocol": "TCP"},
        ],
        "startupProbe": _probe("/healthz", period=2, failures=30),
        "livenessProbe": _probe("/healthz", period=5, failures=3, delay=2),
        "readinessProbe": _probe("/readyz", period=2, failures=3, delay=1),
        "resources": {kind: dict(values) for kind, values in settings.resources.items()},
        "volumeMounts": [
            {"name": "gateway-config", "mountPath": CONFIG_DIR, "readOnly": True},
            {"name": "sandbox-jwt", "mountPath": JWT_DIR, "readOnly": True},
            {"name": "tls-cert", "mountPath": TLS_DIR, "readOnly": True},
            {"name": "tmp", "mountPath": "/tmp"},
            *([credentials.vault_token_mount()] if vault_token else []),
        ],
    }
    return {
        "replicas": settings.replicas,
        "strategy": {
            "type": "RollingUpdate",
            "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1},
        },
        "selector": {"matchLabels": naming.selector_labels()},
        "template": {
            "metadata": {
                "labels": {**labels, **naming.selector_labels()},
                "annotations": {naming.CONFIG_HASH_ANNOTATION: config_hash},
            },
            "spec": {
                "terminationGracePeriodSeconds": 5,
                "serviceAccountName": service_account,
                "securityContext": pod_security,
                "containers": [container],
                "volumes": [
                    {"name": "gateway-config", "configMap": {"name": config_map}},
                    {
                        "name": "sandbox-jwt",
                        "secret": {"secretName": jwt_secret, "defaultMode": READ_ONLY_0440},
                    },
                    {
                        "name": "tls-cert",
                        "secret": {"secretName": server_tls_secret, "defaultMode": READ_ONLY_0440},
                    },
                    {"name": "tmp", "emptyDir": {}},
                    *([credentials.vault_token_volume()] if vault_token else []),
                ],
            },
        },
    }

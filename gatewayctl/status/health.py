"""Health of a gateway's parts, from the live state (Argo CD's vocabulary: Healthy,
Progressing, Degraded, Missing).

- Deployment: the rollout rules of ``kubectl rollout status`` (kubernetes/kubectl
  ``pkg/polymorphichelpers/rollout_status.go``, ``DeploymentStatusViewer.Status``), which
  Argo CD's Deployment health follows too (argoproj/gitops-engine ``pkg/health/
  health_deployment.go``): observed generation behind → Progressing; condition
  ``Progressing`` with reason ``ProgressDeadlineExceeded`` → Degraded; fewer updated
  replicas than ``spec.replicas``, old replicas still terminating, or fewer available than
  updated → Progressing while the ``Progressing`` condition is True, Degraded once it is
  False or once the rollout had finished (reason ``NewReplicaSetAvailable`` with every
  replica updated: pods that became unavailable after it); condition ``Available`` False
  with nothing under way → Degraded; else Healthy. A
  ``ReplicaFailure`` condition with every count met is named in the message, not Degraded:
  the deployment controller copies it from any of its ReplicaSets, old ones included
  (kubernetes v1.34.4 ``pkg/controller/deployment/progress.go``, ``getReplicaFailures``), and
  the lane saw it left True after the pods a PodSecurity refusal was about had been replaced
  (tests/e2e/test_e2e_b_tampering.py); neither ``kubectl rollout status`` nor Argo CD reads it.
- Route (route.openshift.io/v1): every ``status.ingress[]`` has condition ``Admitted``
  True → Healthy; one False → Degraded; none yet → Progressing (docs/upstream-differences.md,
  "8. Readiness is awaited": the program awaits the same condition through ``pulumi.com/waitFor``).
- GRPCRoute (gateway.networking.k8s.io/v1): every ``status.parents[]`` has ``Accepted``
  and ``ResolvedRefs`` True → Healthy; one False → Degraded; none yet → Progressing.
- Namespace: ``status.phase`` Terminating → Degraded.
- PostgreSQL Role and Database: present → Healthy (the provider's Read finds them by name
  and drops them from the state when they are gone: terraform-provider-postgresql
  ``resource_postgresql_role.go`` ``resourcePostgreSQLRoleReadImpl`` and
  ``resource_postgresql_database.go`` ``resourcePostgreSQLDatabaseReadImpl`` set the ID to ""
  for a missing object, which a refresh shows as a delete).

A part whose live object is gone is Missing. A Deployment count that is not a whole number in
its API type's range is bad input (:class:`~gatewayctl.status.models.UnreadableError`, exit 2).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, assert_never

from components.exposure_types import EXPOSURE_KINDS, ExposureKind, exposed_by
from gatewayctl.errors import printable
from gatewayctl.status.models import UnreadableError

Health = Literal["Healthy", "Progressing", "Missing", "Degraded", "Unknown"]
ORDER: dict[Health, int] = {
    "Healthy": 0,
    "Unknown": 1,
    "Progressing": 2,
    "Missing": 3,
    "Degraded": 4,
}
"""Worse is higher; a gateway is as healthy as its least healthy part (Argo CD's rule)."""

DEPLOYMENT = "kubernetes:apps/v1:Deployment"
NAMESPACE = "kubernetes:core/v1:Namespace"
PG_ROLE = "postgresql:index/role:Role"
PG_DATABASE = "postgresql:index/database:Database"


@dataclass(frozen=True, kw_only=True)
class PartHealth:
    name: str
    type: str
    health: Health
    message: str


def worst(values: list[Health]) -> Health:
    return max(values, key=ORDER.__getitem__) if values else "Healthy"


def _conditions(status: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    found: dict[str, Mapping[str, Any]] = {}
    for condition in status.get("conditions") or []:
        if isinstance(condition, Mapping) and isinstance(condition.get("type"), str):
            found[condition["type"]] = condition
    return found


INT32 = 2**31 - 1
"""The replica counts are ``int32`` (k8s.io/api ``apps/v1`` ``DeploymentSpec.Replicas``,
``DeploymentStatus.Replicas``, ``UpdatedReplicas``, ``AvailableReplicas``)."""
INT64 = 2**63 - 1
"""The generations are ``int64`` (``ObjectMeta.Generation``, ``ObservedGeneration``)."""


def _count(section: Mapping[str, Any], where: str, key: str, limit: int, default: int = 0) -> int:
    """A Deployment's count ``where.key``: absent is ``default`` (the API server omits a zero);
    else a whole number from 0 to ``limit``. Anything else (text, a negative or fractional
    number, one beyond the API's type) is :class:`UnreadableError`: a Deployment whose counts
    cannot be read is never read as healthy. The value is not quoted."""
    value = section.get(key)
    if value is None:
        return default
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= limit:
        raise UnreadableError(
            f"outputs.{where}.{key}",
            f"not a whole number from 0 to {limit}: the Deployment's health is unknown",
        )
    return value


def deployment(live: Mapping[str, Any]) -> tuple[Health, str]:
    """The health of a Deployment (the module docstring's rules); :class:`UnreadableError` for
    a count that is not a whole number in its API type's range."""
    spec = live.get("spec") if isinstance(live.get("spec"), Mapping) else {}
    status = live.get("status") if isinstance(live.get("status"), Mapping) else {}
    meta = live.get("metadata") if isinstance(live.get("metadata"), Mapping) else {}
    assert isinstance(spec, Mapping) and isinstance(status, Mapping) and isinstance(meta, Mapping)
    wanted = _count(spec, "spec", "replicas", INT32, 1)
    generation = _count(meta, "metadata", "generation", INT64)
    observed = _count(status, "status", "observedGeneration", INT64)
    updated = _count(status, "status", "updatedReplicas", INT32)
    replicas = _count(status, "status", "replicas", INT32)
    available = _count(status, "status", "availableReplicas", INT32)
    if generation > observed:
        return "Progressing", "rollout: the controller has not observed the newest spec yet"
    conditions = _conditions(status)
    progressing = conditions.get("Progressing", {})
    if progressing.get("reason") == "ProgressDeadlineExceeded":
        return "Degraded", "rollout exceeded its progress deadline (ProgressDeadlineExceeded)"
    counts = f"{available}/{wanted} available"
    under_way = progressing.get("status") == "True"
    # A rollout that finished (every replica updated, the condition's reason
    # NewReplicaSetAvailable) is never measured against its deadline again: the controller
    # skips its progress check while Replicas == UpdatedReplicas and that reason stands
    # (kubernetes v1.34.4 pkg/controller/deployment/progress.go, isCompleteDeployment), so
    # pods that become unavailable afterwards leave the condition True for good.
    finished = (
        progressing.get("reason") == "NewReplicaSetAvailable"
        and updated >= wanted
        and replicas == updated
    )
    if updated < wanted or replicas > updated or available < updated:
        if under_way and not finished:
            return "Progressing", f"rollout under way: {counts}, {updated}/{wanted} updated"
        if finished:
            return "Degraded", f"{counts} after the rollout finished (NewReplicaSetAvailable)"
        return "Degraded", f"{counts}, {updated}/{wanted} updated, no rollout under way"
    if conditions.get("Available", {}).get("status") == "False":
        return "Degraded", f"Available is False: {conditions['Available'].get('reason', '')}"
    failure = conditions.get("ReplicaFailure", {})
    if failure.get("status") == "True":
        return (
            "Healthy",
            f"{counts} (a ReplicaSet reports ReplicaFailure: {failure.get('reason', '')})",
        )
    return "Healthy", counts


def _route_conditions(entries: object, required: tuple[str, ...], what: str) -> tuple[Health, str]:
    items = [e for e in entries if isinstance(e, Mapping)] if isinstance(entries, list) else []
    if not items:
        return "Progressing", f"no {what} has reported a status yet"
    for entry in items:
        conditions = _conditions(entry)
        for kind in required:
            condition = conditions.get(kind)
            if condition is not None and condition.get("status") == "False":
                reason = condition.get("reason", "")
                return "Degraded", f"{kind} is False ({reason})" if reason else f"{kind} is False"
    for entry in items:
        conditions = _conditions(entry)
        if any(conditions.get(k, {}).get("status") != "True" for k in required):
            return "Progressing", f"waiting for {' and '.join(required)}"
    return "Healthy", " and ".join(required)


def route(live: Mapping[str, Any]) -> tuple[Health, str]:
    status = live.get("status") if isinstance(live.get("status"), Mapping) else {}
    assert isinstance(status, Mapping)
    return _route_conditions(status.get("ingress"), ("Admitted",), "router")


def grpc_route(live: Mapping[str, Any]) -> tuple[Health, str]:
    status = live.get("status") if isinstance(live.get("status"), Mapping) else {}
    assert isinstance(status, Mapping)
    return _route_conditions(status.get("parents"), ("Accepted", "ResolvedRefs"), "parent Gateway")


Reader = Callable[[Mapping[str, Any]], tuple[Health, str]]


def exposure_reader(kind: ExposureKind) -> Reader | None:
    """How the health of the object that exposes a gateway or console of ``kind`` is read; None
    when only whether it is synced is (a console's HTTPRoute) or there is no such object."""
    match kind:
        case "route":
            return route
        case "grpcroute":
            return grpc_route
        case "httproute" | "none" | "port-forward":
            return None
        case _:
            assert_never(kind)


def namespace(live: Mapping[str, Any]) -> tuple[Health, str]:
    status = live.get("status") if isinstance(live.get("status"), Mapping) else {}
    assert isinstance(status, Mapping)
    phase = status.get("phase")
    if phase == "Terminating":
        return "Degraded", "Terminating"
    return "Healthy", str(phase or "Active")


def part(type_: str, outputs: Mapping[str, Any] | None) -> tuple[Health, str]:
    """The health of one resource of a :data:`CHECKED` type from its live outputs (None: the
    live object is gone)."""
    if outputs is None:
        return "Missing", "the live object is gone"
    if type_ == DEPLOYMENT:
        return deployment(outputs)
    if type_ in READERS:
        return READERS[type_](outputs)
    if type_ == NAMESPACE:
        return namespace(outputs)
    return "Healthy", "present"


READERS: dict[str, Reader] = {
    f"kubernetes:{exposed[0]}:{exposed[1]}": reader
    for kind in EXPOSURE_KINDS
    if (exposed := exposed_by(kind)) is not None and (reader := exposure_reader(kind)) is not None
}
"""The exposing objects' readers, by Pulumi type."""

CHECKED = (DEPLOYMENT, *READERS, NAMESPACE, PG_ROLE, PG_DATABASE)
"""The types whose health is read; every other resource is only synced or not."""


UNHEALTHY = "Refreshed resource is in an unhealthy state:"
"""How the engine warns that a refresh found a resource failing its provider's readiness check
(pulumi/pulumi v3.274.0 ``pkg/resource/deploy/step.go``, ``RefreshStep.Apply``: the provider's
initialization errors, one ``* `` line each). In ``refresh --preview-only --json`` that warning
is the only sign of it: a step whose inputs did not change keeps the op ``refresh`` and the
state it had (``ShowPreviewDigest``), so a Deployment whose pods became unavailable shows its
old, available status (seen in the lane on pulumi-kubernetes 4.25.0: its Read returns an
``await.PartialError`` for a Deployment below its minimum availability)."""


def refreshed_unhealthy(diagnostics: Iterable[Any]) -> dict[str, str]:
    """URN → the reasons of each resource the refresh warned is unhealthy."""
    found: dict[str, str] = {}
    for diagnostic in diagnostics:
        urn, message = getattr(diagnostic, "urn", None), getattr(diagnostic, "message", "")
        if not urn or UNHEALTHY not in message:
            continue
        lines = message.split(UNHEALTHY, 1)[1].splitlines()
        reasons = [printable(line[2:].strip()) for line in lines if line.startswith("* ")]
        found[urn] = "; ".join(reasons)[:300] or "unhealthy"
    return found

"""The live objects of a stack's gateway namespaces, read with ``kubectl get`` (read-only), and
those in them the program does not declare.

Why a read of its own: a ``pulumi refresh --preview-only --json`` carries a live object only for
a resource whose refresh found a difference (pulumi v3.274.0 ``pkg/backend/display/json.go``,
``ShowPreviewDigest``: a refresh step's ``newState`` replaces the step only on an ``update``
with a detailed diff, or a ``delete``), and the provider prunes the live object to the inputs'
shape before it diffs (:mod:`.tampering`), so what another manager added is in none of its
steps; and no refresh looks at an object nobody declared. The scheduled check must not write
the state (a real refresh would), so it reads the objects itself: ``kubectl get`` of the kinds
in :data:`KINDS` in each gateway's namespace, the namespaces themselves, and the cluster's
ClusterRoleBindings.

Never kept: a Secret's values (each replaced by ``""`` as it is read: its keys stay), and every
other object's ``managedFields`` (a Secret's say which field manager wrote each key, and hold
no value: :func:`gatewayctl.status.tampering.written_by_others`).

Unmanaged (Argo CD's "orphaned resources"): an object in a gateway's namespace that is not one
the state holds, nor made by one (an ``ownerReferences`` entry: a Deployment's ReplicaSets and
Pods, a Service's EndpointSlices), nor one the platform makes in every namespace
(:func:`platform_made`); and a ClusterRoleBinding with a subject in a gateway's namespace
(a service account there, or the group of all of them).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from fnmatch import fnmatchcase
from typing import Any

from gatewayctl.status.models import ResourceV3
from gatewayctl.status.sync import OP_UNMANAGED, Change
from gatewayctl.status.tree import type_of

KUBERNETES = "kubernetes:"

KINDS = (
    "networkpolicies.networking.k8s.io",
    "roles.rbac.authorization.k8s.io",
    "rolebindings.rbac.authorization.k8s.io",
    "serviceaccounts",
    "secrets",
    "configmaps",
    "services",
    "deployments.apps",
    "replicasets.apps",
    "statefulsets.apps",
    "daemonsets.apps",
    "jobs.batch",
    "cronjobs.batch",
    "pods",
    "persistentvolumeclaims",
    "ingresses.networking.k8s.io",
    "routes.route.openshift.io",
    "grpcroutes.gateway.networking.k8s.io",
    "httproutes.gateway.networking.k8s.io",
)
"""What is read in each gateway namespace: what the program makes, and what grants access, runs
code or exposes it, and what owns the Pods (ReplicaSets); a kind the cluster does not serve is
left out (``kubectl api-resources``)."""

PLATFORM_CONFIGMAPS = frozenset({"kube-root-ca.crt", "openshift-service-ca.crt"})
PLATFORM_SERVICE_ACCOUNTS = frozenset({"default", "builder", "deployer", "pipeline"})
PLATFORM_ROLEBINDINGS = frozenset(
    {"system:image-pullers", "system:image-builders", "system:deployers"}
)
"""What Kubernetes and OpenShift make in every namespace: the root CA ConfigMap
(kube-controller-manager's ``root-ca-cert-publisher``, kubernetes ``pkg/controller/certificates/
rootcacertpublisher``) and the ``default`` service account (``pkg/controller/serviceaccount``),
both proved by the lane's untouched stack reading clean; OpenShift's service CA ConfigMap
(service-ca-operator's ``cabundleinjector``), the ``builder`` and ``deployer`` accounts and
their ``system:*`` bindings (openshift-controller-manager, ``pkg/serviceaccounts`` and the
default rolebindings controller) and OpenShift Pipelines' ``pipeline`` account, which no lane
here can show: what a cluster adds beyond them, ``unmanagedIgnore`` lets be."""
TOKEN_TYPES = frozenset({"kubernetes.io/service-account-token", "kubernetes.io/dockercfg"})

Key = tuple[str, str, str, str]
"""An object's API group (no version), kind, namespace and name."""


class LiveReadError(Exception):
    """kubectl failed: its command and error, never an object's content."""


@dataclass(frozen=True, kw_only=True)
class LiveObjects:
    items: tuple[Mapping[str, Any], ...]
    namespaces: tuple[str, ...]
    kinds: tuple[str, ...]
    read_at: datetime
    context: str
    unread: tuple[str, ...] = ()
    """Clusters not read (``--kubeconfig CLUSTER=FILE`` named others, not them)."""


def key(obj: Mapping[str, Any]) -> Key:
    api_version = str(obj.get("apiVersion", ""))
    group = api_version.rsplit("/", 1)[0] if "/" in api_version else ""
    metadata = obj.get("metadata") or {}
    namespace, name = str(metadata.get("namespace") or ""), str(metadata.get("name", ""))
    return (group, str(obj.get("kind", "")), namespace, name)


def label(obj: Mapping[str, Any]) -> tuple[str, str]:
    """How a report names an object: ``group/Kind`` (``Kind`` in the core group), and
    ``namespace/name`` (``name`` when cluster-scoped)."""
    group, kind, namespace, name = key(obj)
    return (f"{group}/{kind}" if group else kind, f"{namespace}/{name}" if namespace else name)


def _clean(obj: dict[str, Any]) -> dict[str, Any]:
    metadata = obj.get("metadata")
    if isinstance(metadata, dict) and obj.get("kind") != "Secret":
        metadata.pop("managedFields", None)  # a Secret's tell who wrote its keys (no values)
    if obj.get("kind") == "Secret":
        for field in ("data", "stringData"):
            if isinstance(obj.get(field), dict):
                obj[field] = dict.fromkeys(obj[field], "")
    return obj


def read(
    namespaces: Sequence[str],
    *,
    kubectl: str = "kubectl",
    kubeconfig: str | None = None,
    context: str | None = None,
    now: datetime | None = None,
) -> LiveObjects:
    """The live objects of :data:`KINDS` in ``namespaces`` and every ClusterRoleBinding."""
    base = [kubectl, *([f"--kubeconfig={kubeconfig}"] if kubeconfig else [])]
    base += [f"--context={context}"] if context else []

    def get(*args: str) -> str:
        proc = subprocess.run(
            [*base, *args], capture_output=True, text=True, check=False, timeout=300
        )
        if proc.returncode != 0:
            error = proc.stderr.strip()[:500]
            raise LiveReadError(f"kubectl {' '.join(args)}: exit {proc.returncode}: {error}")
        return proc.stdout

    served = set(get("api-resources", "--verbs=list", "-o", "name").split())
    kinds = tuple(k for k in KINDS if k in served)
    items: list[Mapping[str, Any]] = []
    for namespace in sorted(set(namespaces)):
        listed = json.loads(get("get", ",".join(kinds), "-n", namespace, "-o", "json"))
        items += [_clean(i) for i in listed.get("items", [])]
    for cluster_scoped in (
        ["namespaces", *sorted(set(namespaces))] if namespaces else [],
        ["clusterrolebindings.rbac.authorization.k8s.io"],
    ):
        if cluster_scoped:
            text = get("get", *cluster_scoped, "-o", "json", "--ignore-not-found")
            items += [_clean(i) for i in json.loads(text or "{}").get("items", [])]
    used = context or get("config", "current-context").strip()
    return LiveObjects(
        items=tuple(items),
        namespaces=tuple(sorted(set(namespaces))),
        kinds=kinds,
        read_at=now or datetime.now(UTC),
        context=used,
    )


def unread(cluster: str, now: datetime) -> LiveObjects:
    """What stands for a cluster not read."""
    return LiveObjects(
        items=(), namespaces=(), kinds=(), read_at=now, context="", unread=(cluster,)
    )


def merged(reads: Sequence[LiveObjects], now: datetime) -> LiveObjects:
    """One read of several clusters' (an empty one for a stack without gateways)."""
    done = [r for r in reads if not r.unread]
    return LiveObjects(
        items=tuple(i for r in done for i in r.items),
        namespaces=tuple(sorted({n for r in done for n in r.namespaces})),
        kinds=tuple(sorted({k for r in done for k in r.kinds})),
        read_at=min((r.read_at for r in done), default=now),
        context=", ".join(r.context for r in done),
        unread=tuple(sorted(c for r in reads for c in r.unread)),
    )


def platform_made(obj: Mapping[str, Any], uids: frozenset[str] = frozenset()) -> bool:
    """Made by the platform in every namespace, or by another object read (``uids``: an
    ``ownerReferences`` entry names it: a managed Deployment's ReplicaSet, its Pods)."""
    metadata = obj.get("metadata") or {}
    owners = metadata.get("ownerReferences") or []
    if any(isinstance(o, Mapping) and o.get("uid") in uids for o in owners):
        return True
    name, kind = str(metadata.get("name", "")), obj.get("kind")
    if kind == "ConfigMap":
        return name in PLATFORM_CONFIGMAPS
    if kind == "ServiceAccount":
        return name in PLATFORM_SERVICE_ACCOUNTS
    if kind == "RoleBinding":
        return name in PLATFORM_ROLEBINDINGS
    if kind == "Secret" and obj.get("type") in TOKEN_TYPES:
        account = (metadata.get("annotations") or {}).get("kubernetes.io/service-account.name")
        return account in PLATFORM_SERVICE_ACCOUNTS
    return False


def binds_into(binding: Mapping[str, Any], namespaces: Iterable[str]) -> str | None:
    """The gateway namespace a ClusterRoleBinding's subject is in, or None."""
    wanted = set(namespaces)
    for subject in binding.get("subjects") or []:
        if not isinstance(subject, Mapping):
            continue
        if subject.get("kind") == "ServiceAccount" and subject.get("namespace") in wanted:
            return str(subject["namespace"])
        if subject.get("kind") == "Group":
            group = str(subject.get("name", ""))
            for namespace in wanted:
                if group == f"system:serviceaccounts:{namespace}":
                    return namespace
    return None


def unmanaged(
    live: LiveObjects, managed: Iterable[Key], ignored: Iterable[str] = ()
) -> list[tuple[str, Mapping[str, Any]]]:
    """``(namespace, object)`` of each unmanaged object (module docstring), by namespace and
    key; ``ignored``: ``Kind/name`` patterns (``fnmatch``) the stack's configuration lets be
    (``unmanagedIgnore``)."""
    held = set(managed)
    skip = tuple(ignored)
    uids = frozenset(str((o.get("metadata") or {}).get("uid", "")) for o in live.items)
    found: list[tuple[str, Mapping[str, Any]]] = []
    for obj in live.items:
        group, kind, namespace, name = key(obj)
        if (group, kind, namespace, name) in held or any(
            fnmatchcase(f"{kind}/{name}", pattern) for pattern in skip
        ):
            continue
        if kind == "ClusterRoleBinding":
            into = binds_into(obj, live.namespaces)
            if into is not None:
                found.append((into, obj))
        elif namespace in live.namespaces and not platform_made(obj, uids):
            found.append((namespace, obj))
    return sorted(found, key=lambda pair: (pair[0], key(pair[1])))


def changes(
    states: Mapping[str, ResourceV3 | None],
    objects: LiveObjects,
    namespaces: Mapping[str, str],
    ignored: Iterable[str] = (),
) -> list[tuple[str | None, Change]]:
    """Each object in a gateway's namespace the program does not declare (:mod:`.live`), as a
    change of that gateway."""
    managed = [
        key(r.outputs or r.inputs)
        for u, r in states.items()
        if r is not None and type_of(u).startswith(KUBERNETES)
    ]
    result: list[tuple[str | None, Change]] = []
    for namespace, obj in unmanaged(objects, managed, ignored):
        type_, name = label(obj)
        result.append(
            (
                namespaces.get(namespace),
                Change(
                    urn="",
                    type=type_,
                    name=name,
                    op=OP_UNMANAGED,
                    paths=(),
                    source="live",
                ),
            )
        )
    return result

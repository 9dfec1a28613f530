"""Self-heal of what ``pulumi up --refresh`` leaves in place: what another field manager added
to an object the program manages (:mod:`.tampering`), and objects nobody declared (:mod:`.live`).

Each is healed in place, against the object as it was read (never a replace that creates
before it deletes onto the same name, :mod:`.tampering`):

- ``remove``: an added field or entry (a container, an env entry, a hostPath volume, a key in a
  selector, ``privileged``...) leaves by an RFC 6902 JSON patch of ``remove`` operations, after a
  ``test`` of the ``metadata.resourceVersion`` read (Kubernetes API conventions, "Patch
  operations": ``application/json-patch+json``; a failed ``test`` refuses the whole patch, so a
  change made since the read is never overwritten). The object keeps its name, UID and everything
  else; fields another manager changed that the program declares are the refresh's drift, which
  the ``pulumi up --refresh`` after it puts back (its server-side apply forced:
  ``PULUMI_K8S_ENABLE_PATCH_FORCE``). A field's owner is irrelevant to a JSON patch: an
  ``Update`` takes the fields it removes from every manager (Kubernetes server-side apply,
  "Conflicts").
- ``recreate``: a Secret another manager wrote to (its values are not read, and a key rewritten
  through ``stringData`` is pruned from the refresh's diff, :mod:`.tampering`), or a ConfigMap
  with a value changed where no refresh sees it, is deleted; the
  ``pulumi up --refresh`` after it finds it gone and creates it again from the program: its
  content is the program's alone, so nothing is lost. Other kinds changed that way are not
  deleted (a Service's address, a NetworkPolicy's protection, a Deployment's pods would go with
  them): the report gives the command.
- ``delete``: an unmanaged object, only when the stack's ``selfHealUnmanaged`` says so.

Deletes carry the UID and resourceVersion read as preconditions (``DeleteOptions.preconditions``;
the API server answers 409 Conflict when the object changed or is another of the same name), by
``kubectl delete --raw <path> -f -`` with the options on stdin as the DELETE's body (kubectl
v0.33.3, the lane's: ``pkg/cmd/delete/delete.go`` ``RunDelete`` hands ``--raw`` and ``-f`` to
``rawhttp.RawDelete``, whose ``raw`` reads ``-`` as stdin, ``pkg/rawhttp/raw.go``).
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from gatewayctl.status import live
from gatewayctl.status.core import StackStatus
from gatewayctl.status.sync import OP_ADDITION, OP_UNMANAGED, Change

Action = Literal["remove", "recreate", "delete"]
RECREATED = frozenset({"Secret", "ConfigMap"})
"""Kinds whose every field comes from the program: deleted, they come back whole from ``up``."""
RESOURCES = {
    "NetworkPolicy": "networkpolicies",
    "Ingress": "ingresses",
}
"""Resource names that are not the kind's lower case with an ``s``."""
UP = "pulumi up --refresh"


@dataclass(frozen=True, kw_only=True)
class Step:
    action: Action
    gateway: str | None
    type: str
    """``group/Kind``, or ``Kind`` for the core group."""
    name: str
    """``namespace/name``, or ``name`` for a cluster-scoped object."""
    paths: tuple[str, ...]
    resource: str
    """For kubectl: ``deployments.apps``, ``secrets``..."""
    uri: str
    """The object's API path (``/apis/apps/v1/namespaces/ns/deployments/name``)."""
    uid: str
    resource_version: str
    patch: tuple[Mapping[str, Any], ...] = ()

    def kubectl(self) -> list[str]:
        """kubectl's arguments (after its global flags); the DELETE's body is :meth:`body`."""
        if self.action == "remove":
            namespace, _, name = self.name.rpartition("/")
            where = ["-n", namespace] if namespace else []
            body = json.dumps(list(self.patch), sort_keys=True, separators=(",", ":"))
            return ["patch", self.resource, name, *where, "--type=json", "-p", body]
        return ["delete", "--raw", self.uri, "-f", "-"]

    def command(self) -> str:
        """The same by hand (without the preconditions of a delete)."""
        if self.action == "remove":
            return shlex.join(["kubectl", *self.kubectl()])
        namespace, _, name = self.name.rpartition("/")
        where = ["-n", namespace] if namespace else []
        then = f" && {UP}" if self.action == "recreate" else ""
        return shlex.join(["kubectl", "delete", self.resource, name, *where]) + then

    def body(self) -> str | None:
        if self.action == "remove":
            return None
        preconditions = {"uid": self.uid, "resourceVersion": self.resource_version}
        # Background, as `kubectl delete` sends: without it a batch/v1 Job's default is to
        # orphan its Pods (kubernetes pkg/registry/batch/job/strategy.go,
        # DefaultGarbageCollectionPolicy).
        options = {
            "apiVersion": "v1",
            "kind": "DeleteOptions",
            "preconditions": preconditions,
            "propagationPolicy": "Background",
        }
        return json.dumps(options, sort_keys=True)


@dataclass(frozen=True, kw_only=True)
class Manual:
    """What self-heal leaves to a person: why, and the command."""

    gateway: str | None
    type: str
    name: str
    why: str
    command: str


@dataclass(frozen=True, kw_only=True)
class Plan:
    steps: tuple[Step, ...] = ()
    manual: tuple[Manual, ...] = ()


def resolve(node: Any, path: str, live_indexes: bool = True) -> list[tuple[str | int, ...]]:
    """The places ``path`` (as :mod:`.tampering` writes it: ``a.b[name].c``, ``[+i]`` for a
    live list's i-th entry, ``.field`` after a list for the field of each entry) names in
    ``node``, as JSON pointer segments; empty when it names nothing there. A map's key may hold
    dots (``app.kubernetes.io/name``): the longest key that fits is taken."""
    return _resolve(node, path, (), live_indexes)


def _resolve(
    node: Any, rest: str, at: tuple[str | int, ...], plus: bool
) -> list[tuple[str | int, ...]]:
    if not rest:
        return [at]
    if isinstance(node, Mapping):
        rest = rest[1:] if rest.startswith(".") else rest
        fits = [k for k in node if rest == k or rest.startswith((f"{k}.", f"{k}["))]
        if not fits:
            return []
        found = max(fits, key=len)
        return _resolve(node[found], rest[len(found) :], (*at, found), plus)
    if isinstance(node, list):
        if rest.startswith("["):
            inner, _, after = rest[1:].partition("]")
            # Every entry of that name (as tampering matches them: by str(name)); an added
            # name twice is two entries to remove.
            names = [
                i
                for i, e in enumerate(node)
                if isinstance(e, Mapping) and str(e.get("name")) == inner
            ]
            if names:
                return [p for i in names for p in _resolve(node[i], after, (*at, i), plus)]
            if (
                plus
                and inner.startswith("+")
                and inner[1:].isdigit()
                and int(inner[1:]) < len(node)
            ):
                index = int(inner[1:])
            else:
                return []
            return _resolve(node[index], after, (*at, index), plus)
        if rest.startswith("."):
            return [p for i, e in enumerate(node) for p in _resolve(e, rest, (*at, i), plus)]
    return []


def pointer(segments: Sequence[str | int]) -> str:
    """RFC 6901: ``~`` as ``~0``, ``/`` as ``~1``."""
    return "".join("/" + str(s).replace("~", "~0").replace("/", "~1") for s in segments)


def removals(
    desired: Mapping[str, Any], current: Mapping[str, Any], paths: Sequence[str]
) -> tuple[list[tuple[str | int, ...]], list[str]]:
    """The places in ``current`` to remove (what the program does not declare), and the paths
    that are no addition (a value the program declares, changed)."""
    places: set[tuple[str | int, ...]] = set()
    changed: list[str] = []
    # A declared entry of a list without names that another manager changed shows as that
    # entry missing (``x[i]``) and a live one left over (``x[+j]``): the leftover may be the
    # declared entry, changed, so nothing of that list is removed (the change is reported).
    touched = {p.rpartition("[")[0] for p in paths if re.search(r"\[\d+\]$", p)}
    for path in paths:
        found = resolve(current, path)
        leftover = re.search(r"\[\+\d+\]$", path)
        if leftover and path[: leftover.start()] in touched:
            changed.append(path)
        elif found and not resolve(desired, path, live_indexes=False):
            places.update(found)
        else:
            changed.append(path)
    # Inside another removal: gone with it.
    kept = [p for p in places if not any(p[: len(q)] == q and p != q for q in places)]
    # Deepest and last first: a list's later entries before its earlier ones.
    kept.sort(key=lambda p: [(0, s) if isinstance(s, int) else (1, s) for s in p], reverse=True)
    return kept, changed


def plan(status: StackStatus, delete_unmanaged: bool) -> Plan:
    """What self-heal would do with the live objects status read, and what it leaves."""
    read = status.objects_read
    if read is None:
        return Plan()
    index = {live.key(o): o for o in read.items}
    labels = {live.label(o): o for o in read.items}
    steps: list[Step] = []
    manual: list[Manual] = []
    for gateway in status.gateways:
        for change in gateway.changes:
            if change.op == OP_UNMANAGED:
                obj = labels.get((change.type, change.name))
                if obj is None:
                    continue
                step = _step("delete", gateway.name, (), obj)
                others = _foreign_subjects(obj, read.namespaces)
                if delete_unmanaged and others:
                    steps.append(_unbind(gateway.name, obj, read.namespaces))
                elif delete_unmanaged:
                    steps.append(step)
                else:
                    manual.append(
                        _manual(
                            step,
                            "not declared; self-heal deletes it only with selfHealUnmanaged",
                        )
                    )
            elif change.op == OP_ADDITION and change.urn in status.desired:
                resource = status.desired[change.urn]
                obj = index.get(live.key(resource.outputs or resource.inputs))
                if obj is not None:
                    _object(gateway.name, change, resource.inputs, obj, steps, manual)
    return Plan(steps=ordered(steps), manual=tuple(manual))


def ordered(steps: Sequence[Step]) -> tuple[Step, ...]:
    """Deletes for ``up`` to recreate last, each kind in its order: a heal that stops part-way
    has removed additions and strangers, and deleted nothing of the program's."""
    return tuple(sorted(steps, key=lambda s: s.action == "recreate"))


def _bound(subject: Any, namespaces: Sequence[str]) -> bool:
    """A ClusterRoleBinding subject that is one of the gateway namespaces' accounts."""
    one = live.binds_into({"subjects": [subject]}, namespaces)
    return one is not None


def _foreign_subjects(obj: Mapping[str, Any], namespaces: Sequence[str]) -> bool:
    """A ClusterRoleBinding that also binds subjects outside the gateway namespaces (one the
    platform shares, such as OpenShift's SCC bindings): never deleted whole."""
    if obj.get("kind") != "ClusterRoleBinding":
        return False
    return any(not _bound(s, namespaces) for s in obj.get("subjects") or [])


def _unbind(gateway: str, obj: Mapping[str, Any], namespaces: Sequence[str]) -> Step:
    """Remove from a shared ClusterRoleBinding only the subjects in the gateway namespaces."""
    subjects = obj.get("subjects") or []
    ours = [i for i, s in enumerate(subjects) if _bound(s, namespaces)]
    removed = tuple({"op": "remove", "path": f"/subjects/{i}"} for i in sorted(ours, reverse=True))
    test = {"op": "test", "path": "/metadata/resourceVersion", "value": _version(obj)}
    paths = tuple(f"subjects[{subjects[i].get('name', i)}]" for i in ours)
    return _step("remove", gateway, paths, obj, (test, *removed))


def _object(
    gateway: str,
    change: Change,
    desired: Mapping[str, Any],
    obj: Mapping[str, Any],
    steps: list[Step],
    manual: list[Manual],
) -> None:
    kind = str(obj.get("kind", ""))
    if kind == "Secret":  # its values are not read: which keys were rewritten is all we know
        steps.append(_step("recreate", gateway, change.paths, obj))
        return
    places, changed = removals(desired, obj, change.paths)
    if changed and kind in RECREATED:
        steps.append(_step("recreate", gateway, change.paths, obj))
        return
    if places:
        removed = tuple({"op": "remove", "path": pointer(p)} for p in places)
        test = {"op": "test", "path": "/metadata/resourceVersion", "value": _version(obj)}
        paths = tuple(p for p in change.paths if p not in changed)
        steps.append(_step("remove", gateway, paths, obj, (test, *removed)))
    if changed:
        step = _step("recreate", gateway, tuple(changed), obj)
        manual.append(
            _manual(
                step,
                f"{', '.join(changed)} changed where no refresh sees it, and deleting a {kind}"
                " loses what it holds",
            )
        )


def _version(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion", ""))


def _step(
    action: Action,
    gateway: str | None,
    paths: tuple[str, ...],
    obj: Mapping[str, Any],
    patch: tuple[Mapping[str, Any], ...] = (),
) -> Step:
    group, kind, namespace, name = live.key(obj)
    plural = RESOURCES.get(kind, f"{kind.lower()}s")
    version = str(obj.get("apiVersion", ""))
    base = f"/apis/{version}" if group else f"/api/{version}"
    where = f"/namespaces/{namespace}" if namespace else ""
    type_, shown = live.label(obj)
    return Step(
        action=action,
        gateway=gateway,
        type=type_,
        name=shown,
        paths=paths,
        resource=f"{plural}.{group}" if group else plural,
        uri=f"{base}{where}/{plural}/{name}",
        uid=str((obj.get("metadata") or {}).get("uid", "")),
        resource_version=_version(obj),
        patch=patch,
    )


def _manual(step: Step, why: str) -> Manual:
    return Manual(
        gateway=step.gateway, type=step.type, name=step.name, why=why, command=step.command()
    )


class HealError(Exception):
    """A kubectl command of the heal failed: the object, the command, kubectl's error."""


def run(steps: Sequence[Step], kubectl: Mapping[str | None, Sequence[str]]) -> list[str]:
    """Carry out ``steps`` in order, each with its gateway's kubectl command line
    (``kubectl``: gateway → ``[kubectl, --kubeconfig=..., --context=...]``); one line for each
    done. HealError at the first that fails: those before it stay done (each is whole)."""
    done: list[str] = []
    for step in steps:
        if step.gateway not in kubectl:
            raise HealError(
                f"{step.action} {step.type} {step.name}: the cluster of gateway {step.gateway}"
                " was not read (no --kubeconfig for it)"
            )
        args = [*kubectl[step.gateway], *step.kubectl()]
        proc = subprocess.run(args, input=step.body(), capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            # stderr only: a delete's stdout is the object deleted (a Secret's values).
            error = proc.stderr.strip().splitlines()
            raise HealError(
                f"{step.action} {step.type} {step.name}: kubectl {' '.join(step.kubectl()[:3])}"
                f" exited {proc.returncode}: {error[-1] if error else 'no message'}"
            )
        done.append(f"done: {describe(step)}")
    return done


def describe(step: Step) -> str:
    if step.action == "remove":
        return f"remove from {step.type} {step.name}: {', '.join(step.paths)}"
    if step.action == "recreate":
        return f"delete {step.type} {step.name}; `{UP}` creates it again as declared"
    return f"delete unmanaged {step.type} {step.name}"

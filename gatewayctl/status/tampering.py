"""What another field manager changed in, or added to, an object the program manages: the live
object (as ``kubectl get -o json`` or a real refresh's outputs hold it) against what the
program declared (the resource's inputs in the state). Only paths are reported, never values.

Why neither ``pulumi refresh`` nor ``pulumi up`` sees an addition: pulumi-kubernetes' ``Read``
prunes the live object to the shape of the program's inputs before it diffs
(``provider/pkg/provider/provider.go``, ``Read``: ``liveInputs := pruneLiveState(liveObj,
oldInputs)``), so a key added inside a map the program declares is not in the refreshed inputs
and the refresh reports nothing; its server-side apply leaves fields another manager owns in
place, so ``up`` does not remove it either. Measured with the real CLI and API server
(tests/e2e/test_e2e_b_drift.py): ``kubectl patch`` of a default-deny policy's empty
``podSelector`` to ``matchLabels`` (the policy then selects no pod: the namespace is open) gives
no step in ``pulumi refresh --preview-only`` nor in ``pulumi preview``; a real ``pulumi
refresh`` writes the live object to the state's *outputs* (the inputs stay pruned). Status
compares the inputs with those outputs, or with the live object read by kubectl
(:mod:`.live`). The remedy: delete the live object, then ``pulumi up --refresh`` recreates it as
declared. Not ``pulumi up --replace URN``: with no replace reason from the provider the engine
creates the replacement first (an apply onto the same object) and then deletes "the original",
the same object, leaving none (measured in the same test).

What counts, and what the API server's defaults do not (Kubernetes API conventions: the server
fills unset optional fields with their defaults, never adds an entry to a list or a key to a
map the client sent, apart from the metadata it owns):

- **Changed values**: every scalar the program declares, compared with the live one (resource
  quantities by value: the server writes ``0.5`` back as ``500m``); secret values (ciphertext in
  the state) are not compared: a Secret's key written by another field manager is found from
  its ``managedFields`` instead (:func:`written_by_others`).
- **Entries added** to the lists the program declares, matched by ``name`` where entries have
  one (containers, env, volumes, ports...), else each declared entry to a live one that holds it
  (rules, subjects, selectors' expressions); a live entry left over is an addition.
- **Keys added** to the maps that are the program's to fill: ``metadata.labels`` and
  ``metadata.annotations`` (less what the platform writes, :data:`SYSTEM_PREFIXES`), label
  selectors (an empty ``podSelector`` selects every pod: a key added narrows it),
  ``nodeSelector``, ``securityContext``, a ConfigMap's ``data``.
- **Fields the program leaves unset** where Pod Security ``restricted`` or NetworkPolicy
  semantics make them matter (:data:`POD_UNSET`, :data:`CONTAINER_UNSET`, :data:`SERVICE_UNSET`):
  host namespaces, ``nodeName``, ``affinity``, ``tolerations``, ``ephemeralContainers``,
  ``imagePullSecrets``, a service account or its token, a container's ``command`` or
  ``envFrom``, a Service's type other than ``ClusterIP`` or external IPs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from gatewayctl.status.live import KUBERNETES, LiveObjects, key
from gatewayctl.status.models import ResourceV3
from gatewayctl.status.sync import OP_ADDITION, Change
from gatewayctl.status.tree import name_of, type_of

SECRET = "kubernetes:core/v1:Secret"
FIELD_MANAGER = "__fieldManager"
"""The output where pulumi-kubernetes keeps the field manager its server-side applies use
(``provider/pkg/provider/provider.go``: ``fieldManagerName``, saved in the state)."""

SECRET_SIG = "4dabf18193072939515e22adb298388d"
"""The key Pulumi marks a secret value with (``sdk/go/common/resource/sig``, ``Secret``)."""
SECRET_TEXT = "[secret]"
"""What ``pulumi refresh --json`` writes for one (``display.MassageSecrets``)."""

SYSTEM_PREFIXES = (
    "kubectl.kubernetes.io/last-applied-configuration",
    "deployment.kubernetes.io/",
    "kubernetes.io/metadata.name",
    "pod-security.kubernetes.io/",
    "openshift.io/",
    "security.openshift.io/",
    "k8s.ovn.org/",
    "pulumi.com/",
)
"""Label and annotation keys the API server, OpenShift's controllers or the provider write."""

CLOSED_MAPS = frozenset(
    {
        "labels",
        "annotations",
        "matchLabels",
        "podSelector",
        "namespaceSelector",
        "selector",
        "nodeSelector",
        "securityContext",
        "capabilities",
        "data",
    }
)
"""Maps whose every key is the program's to set: a key the program did not is an addition."""

POD_UNSET = {
    "hostNetwork": (False,),
    "hostPID": (False,),
    "hostIPC": (False,),
    "nodeName": (),
    "affinity": (),
    "tolerations": (),
    "ephemeralContainers": (),
    "imagePullSecrets": (),
    "serviceAccountName": ("default",),
    "serviceAccount": ("default",),
    "automountServiceAccountToken": (),
    "nodeSelector": (),
    "securityContext": ({},),
    "hostUsers": (True,),
    "shareProcessNamespace": (False,),
    "runtimeClassName": (),
}
"""Pod spec fields the program may leave unset, with the values the server defaults them to:
any other live value is reported."""
CONTAINER_UNSET = {
    "command": (),
    "args": (),
    "envFrom": (),
    "securityContext": (),
    "lifecycle": (),
    "stdin": (False,),
    "tty": (False,),
}
SERVICE_UNSET = {
    "type": ("ClusterIP",),
    "externalIPs": (),
    "externalName": (),
    "loadBalancerSourceRanges": (),
}
PORT_UNSET = {"hostPort": (), "hostIP": ()}
UNSET_BY_KEY = {"containers": CONTAINER_UNSET, "initContainers": CONTAINER_UNSET}

WRITE_ONLY = frozenset({"stringData"})
"""Fields the server takes and never returns: a Secret's ``stringData`` is merged into ``data``
(Kubernetes API reference, Secret v1: "stringData ... is never output when reading from the
API"); the lane's untouched stack reads clean with it (tests/e2e/test_e2e_b_tampering.py)."""
QUANTITY_PARENTS = frozenset({"limits", "requests"})
"""Maps of resource quantities, which the server stores in canonical form (apimachinery
``pkg/api/resource/quantity.go``, ``CanonicalizeBytes``: ``0.5`` is written back ``500m``)."""
_SUFFIXES: dict[str, int | Decimal] = {
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "Ei": 2**60,
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "": 1,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "E": 10**18,
}


def quantity(value: Any) -> Decimal | None:
    """A Kubernetes resource quantity's value (``apimachinery/pkg/api/resource``), or None."""
    text = str(value)
    for suffix in sorted(_SUFFIXES, key=len, reverse=True):
        if suffix and text.endswith(suffix):
            number = text[: -len(suffix)]
            break
    else:
        suffix, number = "", text
    try:
        return Decimal(number) * Decimal(_SUFFIXES[suffix])
    except InvalidOperation:
        return None


def _secret(value: Any) -> bool:
    return value == SECRET_TEXT or (isinstance(value, Mapping) and SECRET_SIG in value)


def _system(key: str) -> bool:
    return key.startswith(SYSTEM_PREFIXES)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _same_scalar(desired: Any, live: Any, path: str) -> bool:
    if desired == live:
        return True
    parts = path.rsplit(".", 2)
    if len(parts) == 3 and parts[1] in QUANTITY_PARENTS:
        a, b = quantity(desired), quantity(live)
        return a is not None and a == b
    return False


def differences(desired: Mapping[str, Any], live: Mapping[str, Any]) -> tuple[str, ...]:
    """The paths where ``live`` differs from ``desired`` in the ways the module docstring
    lists, sorted; empty when it holds what the program declared and nothing that matters
    besides."""
    found: list[str] = []
    _compare(desired, live, "", "", found)
    return tuple(sorted(set(found)))


def _compare(desired: Any, live: Any, path: str, key: str, found: list[str]) -> None:
    if _secret(desired):
        return
    if isinstance(desired, Mapping):
        if not isinstance(live, Mapping):
            found.append(path)
            return
        _compare_map(desired, live, path, key, found)
    elif isinstance(desired, list):
        if not isinstance(live, list):
            found.append(path)
            return
        _compare_list(desired, live, path, key, found)
    elif not _same_scalar(desired, live, path):
        found.append(path)


def _compare_map(
    desired: Mapping[str, Any], live: Mapping[str, Any], path: str, key: str, found: list[str]
) -> None:
    for name, value in desired.items():
        if name in WRITE_ONLY:
            continue
        if name not in live:
            if value not in (None, {}, [], False, ""):
                found.append(_join(path, name))
            continue
        _compare(value, live[name], _join(path, name), name, found)
    if key in CLOSED_MAPS:
        found += [_join(path, k) for k in live if k not in desired and not _system(k)]
    for name in ("labels", "annotations"):  # left out by the program, filled by another
        added = live.get(name) if name not in desired else None
        if isinstance(added, Mapping):
            found += [_join(_join(path, name), k) for k in added if not _system(k)]
    for name, allowed in _unset_rules(path, key, desired).items():
        if name == "serviceAccount":  # the deprecated alias the server mirrors the name into
            allowed = (*allowed, desired.get("serviceAccountName"))
        if name not in desired and name in live and live[name] not in (None, *allowed):
            found.append(_join(path, name))


def _unset_rules(path: str, key: str, desired: Mapping[str, Any]) -> dict[str, tuple[Any, ...]]:
    if path.endswith("template.spec") or (path == "spec" and "containers" in desired):
        return POD_UNSET
    if path == "spec" and "ports" in desired and "selector" in desired:
        return SERVICE_UNSET
    return {}


def _compare_list(
    desired: Sequence[Any], live: Sequence[Any], path: str, key: str, found: list[str]
) -> None:
    if all(isinstance(d, Mapping) and "name" in d for d in desired) and all(
        isinstance(item, Mapping) for item in live
    ):
        by_name = {str(item.get("name")): item for item in live}
        for entry in desired:
            name = str(entry["name"])
            where = f"{path}[{name}]"
            if name not in by_name:
                found.append(where)
                continue
            _compare(entry, by_name[name], where, key, found)
            for field, allowed in UNSET_BY_KEY.get(key, {}).items():
                value = by_name[name].get(field)
                if field not in entry and value is not None and value not in allowed:
                    found.append(f"{where}.{field}")
            _ports(entry, by_name[name], where, found)
        declared = {str(d["name"]) for d in desired}
        found += [f"{path}[{n}]" for n in by_name if n not in declared]
        return
    unmatched = list(range(len(live)))
    for index, entry in enumerate(desired):
        for candidate in unmatched:
            trial: list[str] = []
            _compare(entry, live[candidate], "", key, trial)
            if not trial:
                unmatched.remove(candidate)
                break
        else:
            found.append(f"{path}[{index}]")
    found += [f"{path}[+{i}]" for i in unmatched]


def _ports(
    desired: Mapping[str, Any], live: Mapping[str, Any], where: str, found: list[str]
) -> None:
    """A container's ports: an entry the program did not declare, or a host port on one."""
    ports = live.get("ports")
    if not isinstance(ports, list):
        return
    declared = desired.get("ports") if isinstance(desired.get("ports"), list) else []
    for port in ports:
        if not isinstance(port, Mapping):
            continue
        for field, allowed in PORT_UNSET.items():
            if port.get(field) not in (None, *allowed):
                found.append(f"{where}.ports.{field}")
    if not declared and ports:
        found.append(f"{where}.ports")


def changes(
    states: Mapping[str, ResourceV3 | None],
    found: Sequence[Change],
    objects: LiveObjects | None,
) -> list[Change]:
    """What another manager changed or added in each Kubernetes object, less the paths another
    change (the refresh's) names already: the live object read with kubectl when given, else
    the state's outputs (the live object as the last ``up`` or real refresh read it)."""
    named: dict[str, set[str]] = {}
    for change in found:
        named.setdefault(change.urn, set()).update(change.paths or ("",))
    index = {key(o): o for o in objects.items} if objects is not None else {}
    result: list[Change] = []
    for urn, resource in sorted(states.items()):
        type_ = type_of(urn)
        if resource is None or not type_.startswith(KUBERNETES) or "" in named.get(urn, set()):
            continue
        if not resource.custom or not resource.inputs:
            continue
        current: Mapping[str, Any] | None = resource.outputs
        if objects is not None:
            current = index.get(key(resource.outputs or resource.inputs))
        if not current:
            continue  # gone: the refresh says so (Missing)
        found_here = differences(resource.inputs, current)
        if type_ == SECRET:
            found_here += written_by_others(resource.outputs.get(FIELD_MANAGER), current)
        paths = tuple(p for p in found_here if not _under(p, named.get(urn, set())))
        if paths:
            result.append(
                Change(
                    urn=urn,
                    type=type_,
                    name=name_of(urn),
                    op=OP_ADDITION,
                    paths=paths,
                    source="live",
                )
            )
    return result


def _under(path: str, named: set[str]) -> bool:
    """``path`` is one of ``named`` or inside one."""
    return any(path == n or path.startswith((n + ".", n + "[")) for n in named)


def written_by_others(manager: Any, live: Mapping[str, Any]) -> tuple[str, ...]:
    """A Secret's keys another field manager wrote (``data.<key>``), from its
    ``metadata.managedFields``: its values are neither in the state (ciphertext) nor read, and
    a value set by ``stringData`` (the program's way) is pruned from the refresh's diff, so an
    edit shows only as a key the program's manager (``manager``, the state's
    ``__fieldManager``) no longer owns alone. An update by another manager takes a field's
    ownership from its appliers (Kubernetes server-side apply, "Conflicts": an ``Update`` never
    conflicts, it becomes the field's manager); nothing when ``manager`` is unknown."""
    if not isinstance(manager, str) or not manager:
        return ()
    entries = (live.get("metadata") or {}).get("managedFields") or []
    found: set[str] = set()
    for entry in entries:
        if not isinstance(entry, Mapping) or entry.get("manager") == manager:
            continue
        fields = entry.get("fieldsV1") or {}
        for section in ("f:data", "f:stringData"):
            keys = fields.get(section) if isinstance(fields, Mapping) else None
            if isinstance(keys, Mapping):
                found.update(f"data.{k[2:]}" for k in keys if k.startswith("f:"))
    return tuple(sorted(found))

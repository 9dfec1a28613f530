"""What the real providers will do with each changed plan resource: update it in place, or
replace it (create-before-delete, or delete-before-replace), by the providers' own rules, read
in their source and cited below. Also the replacements people must hear about: a new tenant
CA (clients must re-pin it), a new database password, a recreated namespace.

Only resources present on both sides with different inputs are predicted here; added and
removed resources are creates and deletes.

**Kubernetes** (pulumi/pulumi-kubernetes ``provider/pkg/provider/diff.go``
``forceNewProperties`` and ``provider/pkg/provider/provider.go`` ``Diff``): a change of
``.metadata.name`` or ``.metadata.namespace`` always replaces; so do per-kind fields
(:data:`K8S_FORCE_NEW`: a Deployment's ``.spec.selector``, a Service's ``.spec.clusterIP``,
a (Cluster)RoleBinding's ``.roleRef``, a Secret's ``.type``, and a Secret's or ConfigMap's data
unless the provider sets ``enableSecretMutable`` / ``enableConfigMapMutable`` (ours do,
``components/cluster.py``) or the object is ``immutable``). Patch resources replace only on
name and namespace. The replacement deletes first when the object is named, and keeps its name
and namespace (``deleteBeforeReplace`` in ``Diff``); otherwise it creates first.

**Bridged providers** (their schemas, ``../shared/schemas/pulumi/*.json``, mark no
``replaceOnChanges``: the Terraform providers decide in ``PlanResourceChange``, so their
``ForceNew``/``RequiresReplace`` attributes are the rule, :data:`BRIDGED_FORCE_NEW`). The
bridge answers ``deleteBeforeReplace`` false, so the engine creates the replacement first
(pulumi/pulumi ``pkg/resource/deploy/step_generator.go``: delete-before-replace only when the
provider or the resource option asks for it).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from components import tokens

Op = Literal["update", "replace", "replace-delete-first"]
OP_LABELS: dict[Op, str] = {
    "update": "update in place",
    "replace": "replace (create-before-delete)",
    "replace-delete-first": "replace (delete-before-replace)",
}

# pulumi-kubernetes provider/pkg/provider/diff.go (``forceNew``), by "group/version/Kind";
# kinds the program never creates and no one adopts into it (Pod, PersistentVolume,
# ResourceQuota, PodDisruptionBudget) are left out: they would be updates here.
_SELECTOR = (
    ".spec.selector",
    ".spec.selector.matchExpressions",
    ".spec.selector.matchLabels",
)
K8S_FORCE_NEW: dict[str, tuple[str, ...]] = {
    "apps/v1/Deployment": _SELECTOR,
    "apps/v1/DaemonSet": _SELECTOR,
    "apps/v1/StatefulSet": (
        ".spec.podManagementPolicy",
        ".spec.revisionHistoryLimit",
        ".spec.serviceName",
        ".spec.volumeClaimTemplates",
        *_SELECTOR,
    ),
    "batch/v1/Job": (".spec.completions", ".spec.parallelism", ".spec.template", *_SELECTOR),
    "rbac.authorization.k8s.io/v1/RoleBinding": (".roleRef",),
    "rbac.authorization.k8s.io/v1/ClusterRoleBinding": (".roleRef",),
    "v1/Service": (".spec.clusterIP",),
    "v1/PersistentVolumeClaim": (
        ".spec.accessModes",
        ".spec.storageClassName",
        ".spec.volumeName",
        *_SELECTOR,
    ),
    "storage.k8s.io/v1/StorageClass": (".parameters", ".provisioner"),
}
_METADATA_FORCE_NEW = (".metadata.name", ".metadata.namespace")

# Attributes that force a new resource, per Pulumi type token (camelCase, as in plan.json):
BRIDGED_FORCE_NEW: dict[str, frozenset[str] | None] = {
    # hashicorp/terraform-provider-tls internal/provider/resource_private_key.go: algorithm,
    # rsa_bits, ecdsa_curve carry RequiresReplace.
    "tls:index/privateKey:PrivateKey": frozenset({"algorithm", "rsaBits", "ecdsaCurve"}),
    # resource_cert_request.go: every attribute RequiresReplace (None: every input).
    "tls:index/certRequest:CertRequest": None,
    # resource_self_signed_cert.go / resource_locally_signed_cert.go: every input but
    # early_renewal_hours (updated in place) RequiresReplace.
    "tls:index/selfSignedCert:SelfSignedCert": None,
    "tls:index/locallySignedCert:LocallySignedCert": None,
    # hashicorp/terraform-provider-random internal/provider/resource_password.go,
    # resource_bytes.go, resource_string.go ...: every attribute RequiresReplace (no Update).
    "random:index/randomPassword:RandomPassword": None,
    "random:index/randomBytes:RandomBytes": None,
    "random:index/randomString:RandomString": None,
    "random:index/randomId:RandomId": None,
    # cyrilgdn/terraform-provider-postgresql postgresql/resource_postgresql_role.go: no
    # ForceNew (name, password ... updated with ALTER ROLE).
    "postgresql:index/role:Role": frozenset(),
    # resource_postgresql_database.go: template, encoding, lc_collate, lc_ctype ForceNew; name
    # and owner are altered in place.
    "postgresql:index/database:Database": frozenset(
        {"template", "encoding", "lcCollate", "lcCtype"}
    ),
    # resource_postgresql_grant.go: role, database, schema, object_type, objects, columns,
    # with_grant_option ForceNew; privileges updated in place.
    "postgresql:index/grant:Grant": frozenset(
        {"role", "database", "schema", "objectType", "objects", "columns", "withGrantOption"}
    ),
}
_IN_PLACE_ONLY = {"earlyRenewalHours"}
"""tls certificates: updated in place (no RequiresReplace), the exception to None above."""

CA_TYPE = "tls:index/selfSignedCert:SelfSignedCert"
CA_KEY_SUFFIX = "-ca-key"
PASSWORD_TYPE = "random:index/randomPassword:RandomPassword"
NAMESPACE_TYPE = "kubernetes:core/v1:Namespace"
REPLACEMENT_ROWS = 30
"""Replacement rows in the summary before the rest are named in one line."""
NAMES_LISTED = 8
"""Paths listed per replacement."""
REPLACED_OUTPUTS_NOTE = (
    "A replaced resource's outputs are new (a new key, certificate or password): what uses"
    " them changes too (a certificate signed with a new CA or request is reissued, the"
    " Secrets holding them are updated, the pods roll), which the offline render cannot show."
)


@dataclass(frozen=True, kw_only=True)
class Operation:
    type: str
    name: str
    gateway: str | None
    op: Op
    because: tuple[str, ...]
    """The changed inputs that force the replacement; for an update, every changed input."""
    manifest: str | None = None
    """The object's manifest path, for a Kubernetes object."""

    @property
    def label(self) -> str:
        return OP_LABELS[self.op]


def changed_paths(old: object, new: object, prefix: str = "") -> list[str]:
    """Dotted paths (``[i]`` for list items) of every leaf that differs."""
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        paths: list[str] = []
        for key in sorted(set(old) | set(new), key=str):
            path = f"{prefix}.{key}" if prefix else str(key)
            if key not in old or key not in new:
                paths.append(path)
            else:
                paths += changed_paths(old[key], new[key], path)
        return paths
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [
            p
            for i, (a, b) in enumerate(zip(old, new, strict=True))
            for p in changed_paths(a, b, f"{prefix}[{i}]")
        ]
    return [] if old == new else [prefix]


def _pattern(prop: str) -> re.Pattern[str]:
    escaped = re.escape(prop.lstrip(".")).replace(r"\[\*\]", r"\[\d+\]")
    return re.compile(escaped)


def _touches(path: str, prop: str) -> bool:
    """``path`` is ``prop``, inside it, or holds it (a parent added or removed whole)."""
    pattern = _pattern(prop)
    if pattern.fullmatch(path) or any(
        pattern.fullmatch(path[:i]) for i, c in enumerate(path) if c in ".["
    ):
        return True
    return prop.lstrip(".").startswith(path + ".") or prop.lstrip(".").startswith(path + "[")


def _gvk(inputs: Mapping[str, Any]) -> str:
    return f"{inputs.get('apiVersion', '')}/{inputs.get('kind', '')}"


def _truthy(value: object) -> bool:
    return value is True or value == "true"


def kubernetes_force_new(
    type_: str, inputs: Mapping[str, Any], provider: Mapping[str, Any]
) -> tuple[str, ...]:
    """``forceNewProperties`` for one object under a provider with ``provider`` inputs."""
    if type_.endswith("Patch"):  # kinds.IsPatchResource: only the identity replaces
        return _METADATA_FORCE_NEW
    props = list(_METADATA_FORCE_NEW)
    kind = inputs.get("kind")
    immutable = _truthy(inputs.get("immutable"))
    if kind == "Secret":
        mutable = _truthy(provider.get("enableSecretMutable")) and not immutable
        props += [".type"] if mutable else [".type", ".stringData", ".data"]
    elif kind == "ConfigMap":
        if not (_truthy(provider.get("enableConfigMapMutable")) and not immutable):
            props += [".binaryData", ".data"]
    else:
        props += K8S_FORCE_NEW.get(_gvk(inputs), ())
    return tuple(props)


def _name(inputs: Mapping[str, Any]) -> tuple[object, object]:
    meta = inputs.get("metadata") if isinstance(inputs.get("metadata"), Mapping) else {}
    assert isinstance(meta, Mapping)
    return meta.get("name"), meta.get("namespace")


Key = tuple[str, str]


def _urn_key(urn: object) -> Key | None:
    if not isinstance(urn, str) or urn.count("::") < 3:
        return None
    parts = urn.split("::", 3)
    return parts[2].rsplit("$", 1)[-1], parts[3]


def _index(plan: Mapping[str, Any]) -> dict[Key, Mapping[str, Any]]:
    found: dict[Key, Mapping[str, Any]] = {}
    for resource in plan.get("resources", []):
        if isinstance(resource, Mapping):
            found[(str(resource.get("type")), str(resource.get("name")))] = resource
    return found


def _gateway(key: Key, resources: Mapping[Key, Mapping[str, Any]]) -> str | None:
    seen: set[Key] = set()
    current: Key | None = key
    while current is not None and current not in seen:
        if current[0] == tokens.GATEWAY:
            return current[1]
        seen.add(current)
        resource = resources.get(current)
        current = _urn_key(resource.get("parent")) if resource else None
    return None


def _manifest(
    resource: Mapping[str, Any], resources: Mapping[Key, Mapping[str, Any]]
) -> str | None:
    """The manifest path the render gives the object (``gatewayctl.render.manifest_files``)."""
    inputs = resource.get("inputs") or {}
    provider_key = _urn_key(resource.get("provider"))
    provider = resources.get(provider_key) if provider_key else None
    cluster = _urn_key(provider.get("parent")) if provider else None
    name, namespace = _name(inputs)
    if cluster is None or not isinstance(name, str) or not isinstance(inputs.get("kind"), str):
        return None
    where = namespace if isinstance(namespace, str) and namespace else "_cluster"
    return f"manifests/{cluster[1]}/{where}/{inputs['kind'].lower()}-{name}.yaml"


def _ignored(path: str, ignore: Iterable[str]) -> bool:
    return any(path == i or path.startswith(i + ".") or path.startswith(i + "[") for i in ignore)


def predict_one(
    type_: str,
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    provider: Mapping[str, Any] | None = None,
    ignore_changes: Iterable[str] = (),
) -> tuple[Op, tuple[str, ...]] | None:
    """The op for one resource whose inputs go from ``old`` to ``new``; None when unchanged."""
    ignore = list(ignore_changes)
    paths = [p for p in changed_paths(old, new) if not _ignored(p, ignore)]
    if not paths:
        return None
    if type_.startswith("kubernetes:"):
        props = kubernetes_force_new(type_, new, provider or {})
        forcing = tuple(p for p in paths if any(_touches(p, prop) for prop in props))
        if not forcing:
            return "update", tuple(paths)
        # provider.go Diff: deleteBeforeReplace when named and keeping name and namespace.
        same_identity = _name(old) == _name(new) and _name(new)[0] is not None
        return ("replace-delete-first" if same_identity else "replace"), forcing
    if type_ in BRIDGED_FORCE_NEW:
        attributes = BRIDGED_FORCE_NEW[type_]
        if attributes is None:
            forcing = tuple(p for p in paths if p.split(".", 1)[0] not in _IN_PLACE_ONLY)
        else:
            forcing = tuple(p for p in paths if p.split(".", 1)[0].split("[", 1)[0] in attributes)
        return ("replace", forcing) if forcing else ("update", tuple(paths))
    return "update", tuple(paths)  # providers and other types: the engine diffs their config


def predict(base: Mapping[str, Any], head: Mapping[str, Any]) -> list[Operation]:
    """An :class:`Operation` for every plan resource on both sides whose inputs differ."""
    old_res, new_res = _index(base), _index(head)
    operations: list[Operation] = []
    for key in sorted(old_res.keys() & new_res.keys()):
        old, new = old_res[key], new_res[key]
        if key[0].startswith((f"{tokens.PACKAGE}:", "pulumi:pulumi:")):
            continue  # components change nothing by themselves
        provider_key = _urn_key(new.get("provider"))
        provider = new_res.get(provider_key) if provider_key else None
        predicted = predict_one(
            key[0],
            old.get("inputs") or {},
            new.get("inputs") or {},
            (provider or {}).get("inputs") or {},
            [str(i) for i in new.get("ignoreChanges") or []],
        )
        if predicted is None:
            continue
        op, because = predicted
        operations.append(
            Operation(
                type=key[0],
                name=key[1],
                gateway=_gateway(key, new_res),
                op=op,
                because=because,
                manifest=_manifest(new, new_res) if key[0].startswith("kubernetes:") else None,
            )
        )
    return operations


def warnings(operations: Iterable[Operation]) -> list[str]:
    """Plain words for the replacements that reach people."""
    found: list[str] = []
    for item in operations:
        if item.op == "update":
            continue
        who = f"gateway `{item.gateway}`" if item.gateway else "the stack"
        if item.type == CA_TYPE or (
            item.type == "tls:index/privateKey:PrivateKey" and item.name.endswith(CA_KEY_SUFFIX)
        ):
            found.append(
                f"{who}: a new tenant CA (`{item.name}` is replaced): every client must re-pin"
                " the new CA certificate, and every certificate it signed is reissued."
            )
        elif item.type == PASSWORD_TYPE:
            found.append(
                f"{who}: a new database password (`{item.name}` is replaced): the role's"
                " password and the credentials Secret change, and the gateway's pods restart."
            )
        elif item.type == NAMESPACE_TYPE:
            found.append(
                f"{who}: the namespace is recreated (`{item.name}`, {item.label}): every object"
                " in it is deleted with the old one."
            )
    return sorted(set(found))


def summary_lines(operations: Sequence[Operation]) -> list[str]:
    """What the providers will do with the changed resources, replacements by name, and the
    warnings people must read: the report's summary section (``gatewayctl.diff.report``)."""
    if not operations:
        return []
    counts = Counter(o.op for o in operations)
    totals = ", ".join(f"{counts[op]} {label}" for op, label in OP_LABELS.items())
    lines = [f"**Predicted operations** (by the providers' rules): {totals}", ""]
    lines += [f"> **Warning:** {warning}" for warning in warnings(operations)]
    if lines[-1] != "":
        lines.append("")
    updates = Counter(o.type.rsplit(":", 1)[-1] for o in operations if o.op == "update")
    if updates:
        listed = ", ".join(f"{kind} {count}" for kind, count in sorted(updates.items()))
        lines += [f"Updated in place: {listed}.", ""]
    replaced = [o for o in operations if o.op != "update"]
    if replaced:
        lines += ["| Resource | Gateway | Operation | Because |", "|---|---|---|---|"]
        for item in replaced[:REPLACEMENT_ROWS]:
            because = ", ".join(f"`{p}`" for p in item.because[:NAMES_LISTED])
            more = len(item.because) - NAMES_LISTED
            because += f" and {more} more" if more > 0 else ""
            lines.append(
                f"| {item.type.rsplit(':', 1)[-1]} `{item.name}` | `{item.gateway or '-'}`"
                f" | {item.label} | {because} |"
            )
        rest = replaced[REPLACEMENT_ROWS:]
        if rest:
            names = ", ".join(f"`{o.name}` ({o.label})" for o in rest)
            lines.append(f"| ... | | | {len(rest)} more: {names} |")
        lines += ["", REPLACED_OUTPUTS_NOTE, ""]
    return lines

"""What the real providers will do with each changed plan resource: update it in place, or
replace it (create-before-delete, or delete-before-replace), by the providers' own rules, read
in their source and cited (:mod:`gatewayctl.diff.rules`). Also the replacements people must hear
about: a new tenant CA (clients must re-pin it), a new database password, a recreated namespace.

Only resources present on both sides with different inputs are predicted here; added and
removed resources are creates and deletes.

A resource whose provider is replaced is replaced too, created before the old one is
deleted; one that moves to a provider of another name (a cluster key renamed) is replaced only
when the new provider's ``DiffConfig`` of the old configuration says replace (pulumi/pulumi
``step_generator.go`` ``providerChanged``, then ``ReplaceKeys: ["provider"]``).
The creates such an ``up`` would see fail: :mod:`.hazards`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from gatewayctl.diff.plan import (
    Key,
    index,
    manifest_path,
    owning_gateway,
    urn_key,
    with_data_digest,
)
from gatewayctl.diff.rules import (
    ACTIVE_CLUSTER_KEYS,
    KUBERNETES_PROVIDER,
    OP_LABELS,
    Op,
    forces_new,
    predict_one,
    rule_for,
    with_option,
)

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
    " Secrets holding them are updated, the pods roll), as the operations above say; the new"
    " values themselves exist only after the `up`."
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


def _provider_replaced(
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    old_res: Mapping[Key, Mapping[str, Any]],
    new_res: Mapping[Key, Mapping[str, Any]],
) -> bool:
    """The engine's ``providerChanged``: the resource's provider is replaced, or it moves to a
    provider whose ``DiffConfig`` of the old provider's configuration says replace."""
    old_key, new_key = urn_key(old.get("provider")), urn_key(new.get("provider"))
    if old_key is None or new_key is None:
        return old_key != new_key
    old_provider, new_provider = old_res.get(old_key), new_res.get(new_key)
    if old_provider is None or new_provider is None:
        return False
    predicted = predict_one(
        new_key[0], old_provider.get("inputs") or {}, new_provider.get("inputs") or {}
    )
    return predicted is not None and predicted[0] != "update"


NEW_OUTPUTS_WHEN_REPLACED = frozenset(
    {
        # Every output the program reads from these is computed by the provider, so the
        # replacement's outputs are unknown in a preview and new after it: tls keys, requests
        # and certificates (their PEMs), random values (``result``, ``base64``), and Keycloak's
        # clients and roles (their ``id``, a UUID Keycloak assigns). Not postgresql: the
        # program reads only a Role's or Database's ``name``, an input the replacement keeps.
        "tls:index/privateKey:PrivateKey",
        "tls:index/certRequest:CertRequest",
        "tls:index/selfSignedCert:SelfSignedCert",
        "tls:index/locallySignedCert:LocallySignedCert",
        "random:index/randomPassword:RandomPassword",
        "random:index/randomBytes:RandomBytes",
        "keycloak:openid/client:Client",
        "keycloak:index/role:Role",
    }
)
"""Types whose replacement changes what their dependents receive (:func:`_cascade`)."""
REPLACE_FLAG = "--replace"
"""``because`` of a resource replaced on request (``pulumi up --replace URN``)."""


def _cascade(
    operations: dict[Key, Operation],
    new_res: Mapping[Key, Mapping[str, Any]],
    old_keys: Iterable[Key] = (),
) -> None:
    """Add what a replacement changes downstream (pulumi/pulumi ``step_generator.go``: a
    dependent is diffed against its new inputs, and an input made from a replaced resource's
    outputs is unknown in the preview): each input that ``inputDependencies`` ties to a
    replaced resource of :data:`NEW_OUTPUTS_WHEN_REPLACED` changes. A bridged dependent is
    replaced when that input forces it (:func:`.rules.forces_new`: a new key reissues its
    certificate), and replacements cascade; a Kubernetes object is updated (its new PEM,
    password or pod-template checksum: the program derives no name, namespace, selector or
    Secret type from these outputs). A provider so made is unknown in the preview, which then
    cannot diff what it serves and shows each as an update (sdk/go/common/resource/plugin/
    provider_plugin.go ``Diff``: ``DiffUnavailable``; step_generator.go makes it ``DiffSome``).
    A resource created in the ``up`` (a key under a rotated name, ``components.rotation``) is a
    source too: its outputs are unknown in the preview. One whose ``replaceWith`` names a
    replaced resource is replaced (step_generator.go ``stepGenerator.diff``)."""
    kept = set(old_keys)
    dependents: dict[Key, dict[Key, list[str]]] = {}  # source -> dependent -> its inputs
    followers: dict[Key, list[Key]] = {}  # source -> the resources it replaces (replaceWith)
    for key, resource in new_res.items():
        if rule_for(key[0]) == "component":
            continue
        for urn in resource.get("replaceWith") or ():
            source = urn_key(urn)
            if source is not None and key in kept:
                followers.setdefault(source, []).append(key)
        for name, urns in sorted((resource.get("inputDependencies") or {}).items()):
            for urn in urns:
                source = urn_key(urn)
                if source is not None and source[0] in NEW_OUTPUTS_WHEN_REPLACED:
                    dependents.setdefault(source, {}).setdefault(key, []).append(name)
    replaced = {k for k, o in operations.items() if o.op.startswith("replace")}
    cascaded: set[Key] = set()
    created = (new_res.keys() - kept) if kept else set()
    pending = sorted((replaced | created) & (dependents.keys() | followers.keys()))
    while pending:
        source = pending.pop()
        for key in followers.get(source, []) if source in replaced else []:
            if key not in replaced:
                replaced.add(key)
                cascaded.add(key)
                pending.append(key)
                operations[key] = replace(
                    operations.get(key) or _operation(key, new_res),
                    op=with_option("replace", new_res[key]),
                    because=("replaceWith",),
                )
        for key, inputs in sorted(dependents.get(source, {}).items()):
            if key in replaced or (kept and key not in kept):
                continue
            bridged = rule_for(key[0]) == "bridged"
            forcing = tuple(k for k in inputs if bridged and forces_new(key[0], k))
            before = operations.get(key)
            known = before.because if before else ()
            added = [k for k in inputs if not any(_within(p, k) for p in known)]
            because = forcing or tuple(sorted({*known, *added}))
            cascaded.add(key)
            if forcing:
                replaced.add(key)
                if key in dependents:
                    pending.append(key)
            resource = new_res[key]
            operations[key] = Operation(
                type=key[0],
                name=key[1],
                gateway=owning_gateway(key, new_res),
                op=with_option("replace", resource) if forcing else "update",
                because=because,
                manifest=manifest_path(resource, new_res)
                if key[0].startswith("kubernetes:")
                else None,
            )
    unknown = {
        k for k, o in operations.items() if rule_for(k[0]) == "provider" and o.op == "update"
    }
    for key, resource in sorted(new_res.items()):
        if key not in operations and urn_key(resource.get("provider")) in (unknown & cascaded):
            operations[key] = Operation(
                type=key[0],
                name=key[1],
                gateway=owning_gateway(key, new_res),
                op="update",
                because=("provider",),
                manifest=manifest_path(resource, new_res)
                if key[0].startswith("kubernetes:")
                else None,
            )


def _operation(key: Key, new_res: Mapping[Key, Mapping[str, Any]]) -> Operation:
    resource = new_res[key]
    manifest = manifest_path(resource, new_res) if key[0].startswith("kubernetes:") else None
    return Operation(
        type=key[0],
        name=key[1],
        gateway=owning_gateway(key, new_res),
        op="update",
        because=(),
        manifest=manifest,
    )


def _within(path: str, key: str) -> bool:
    """``path`` (``spec.replicas``, ``data[0]``) is ``key`` or lies inside it."""
    return path == key or path.startswith((f"{key}.", f"{key}["))


def predict(
    base: Mapping[str, Any], head: Mapping[str, Any], replace: Iterable[Key] = ()
) -> list[Operation]:
    """An :class:`Operation` for every plan resource on both sides whose inputs differ, whose
    provider is replaced, that ``replace`` names (``--replace``), or whose inputs come from a
    replaced resource's new outputs (:func:`_cascade`)."""
    old_res, new_res = index(base), index(head)
    targets = set(replace)
    operations: list[Operation] = []
    for key in sorted(old_res.keys() & new_res.keys()):
        old, new = old_res[key], new_res[key]
        if rule_for(key[0]) == "component":
            continue  # components change nothing by themselves
        provider_key = urn_key(new.get("provider"))
        provider = new_res.get(provider_key) if provider_key else None
        predicted: tuple[Op, tuple[str, ...]] | None
        if _provider_replaced(old, new, old_res, new_res):
            # step_generator.go: ReplaceKeys ["provider"], no delete-before-replace.
            predicted = ("replace", ("provider",))
        else:
            predicted = predict_one(
                key[0],
                with_data_digest(old),
                with_data_digest(new),
                (provider or {}).get("inputs") or {},
                [str(i) for i in new.get("ignoreChanges") or []],
            )
        if key in targets:
            predicted = ("replace", (REPLACE_FLAG,))
        if predicted is None:
            continue
        op, because = predicted
        op = with_option(op, new)
        operations.append(
            Operation(
                type=key[0],
                name=key[1],
                gateway=owning_gateway(key, new_res),
                op=op,
                because=because,
                manifest=manifest_path(new, new_res) if key[0].startswith("kubernetes:") else None,
            )
        )
    found = {(o.type, o.name): o for o in operations}
    _cascade(found, new_res, old_res.keys())
    return [found[key] for key in sorted(found)]


def warnings(operations: Iterable[Operation]) -> list[str]:
    """Plain words for the replacements that reach people."""
    found: list[str] = []
    operations = list(operations)
    for item in operations:
        if item.type == KUBERNETES_PROVIDER and item.op == "update":
            keys = sorted(ACTIVE_CLUSTER_KEYS.intersection(item.because))
            if keys:
                found.append(
                    f"the stack: `{item.name}` changes {', '.join(f'`{k}`' for k in keys)}"
                    " and is updated in place (no `kubeconfig` input to find the active cluster"
                    " in, or the same `clusterIdentifier`): nothing is recreated; if it now"
                    " names another cluster, the objects in the state are looked for there."
                )
        if item.op == "update":
            continue
        who = f"gateway `{item.gateway}`" if item.gateway else "the stack"
        if item.type == KUBERNETES_PROVIDER:
            moved = sum(o.because == ("provider",) for o in operations)
            found.append(
                f"{who}: the cluster behind `{item.name}` is replaced"
                f" ({', '.join(f'`{p}`' for p in item.because)} changes): its {moved}"
                " resource(s) are created on the new cluster and deleted from the old one."
            )
            continue
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


def summary_lines(operations: Sequence[Operation], danger: Sequence[str] = ()) -> list[str]:
    """What the providers will do with the changed resources, replacements by name, and the
    warnings people must read: the report's summary section (``gatewayctl.diff.report``)."""
    if not operations and not danger:
        return []
    counts = Counter(o.op for o in operations)
    totals = ", ".join(
        f"{counts[op]} {label}"
        for op, label in OP_LABELS.items()
        if op != "unpredicted" or counts[op]
    )
    lines = [f"**Predicted operations** (by the providers' rules): {totals}", ""]
    lines += [f"> **Warning:** {warning}" for warning in [*danger, *warnings(operations)]]
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

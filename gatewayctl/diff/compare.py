"""What changed between the two sides of a stack, as data: the gateways of the plan, the
Kubernetes object files, the other plan resources, and whether a secret value changed.

Every value of either render that equals a plaintext secret is scrubbed first
(:class:`gatewayctl.engine.redaction.Scrubber`). Nothing here writes text for a reader: the report
(:mod:`gatewayctl.diff.report`) does.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import yaml

from gatewayctl.diff.access import AccessChange, SignInChange, access_changes
from gatewayctl.diff.hazards import hazards
from gatewayctl.diff.losses import deletion_flips, tenant_data
from gatewayctl.diff.operations import Operation, predict
from gatewayctl.diff.plan import (
    DATA_DIGEST,
    Key,
    decoded,
    index,
    manifest_path,
    owning_gateway,
    urn_key,
)
from gatewayctl.diff.release_changes import ReleaseMove, release_moves
from gatewayctl.diff.removals import key_only_copies
from gatewayctl.diff.rotation_risks import RotationChange, changes
from gatewayctl.diff.rules import is_component
from gatewayctl.diff.sides import Side
from gatewayctl.diff.steps import Step, predicted_steps
from gatewayctl.engine.redaction import MANIFESTS, Scrubber
from gatewayctl.inputs.stackfile import PROJECT

_PLAN = "plan.json"

_ENTRY_DEFAULTS: dict[str, object] = {"adopted": False}
"""Plan-entry fields a base rendered by an older program lacks, with the value they mean."""

Status = Literal["added", "changed", "removed"]
STATUSES: tuple[Status, ...] = ("added", "changed", "removed")


@dataclass(frozen=True, kw_only=True)
class ObjectChange:
    """One Kubernetes object file added, changed or removed."""

    path: str
    kind: str
    status: Status
    old: str
    new: str


@dataclass(frozen=True, kw_only=True)
class GatewayChange:
    """A gateway of the plan added, changed or removed.

    Changed: the fields of its plan entry that differ, and the plan resources it (transitively)
    parents that changed, as (kind, name). Added or removed: where its plan entry puts it.
    """

    name: str
    status: Status
    fields: tuple[str, ...] = ()
    resources: tuple[tuple[str, str], ...] = ()
    cluster: object = None
    namespace: object = None
    address: object = None
    adopted: bool = False
    """Added, and its plan entry says it adopts the upstream controller's namespace."""


@dataclass(frozen=True, kw_only=True)
class ResourceChange:
    """A plan resource outside the manifests (tls, postgresql, random, providers...)."""

    type: str
    name: str
    status: Status
    fields: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class StackDiff:
    stack: str
    base_note: str | None
    head_note: str | None
    gateways: tuple[GatewayChange, ...]
    objects: tuple[ObjectChange, ...]
    resources: tuple[ResourceChange, ...]
    secrets_changed: bool = False
    """A plaintext ``clusterSecrets`` value differs (the render redacts it, so nothing else
    shows it)."""
    releases: tuple[ReleaseMove, ...] = ()
    """Gateways whose release differs (:mod:`gatewayctl.diff.release_changes`)."""
    operations: tuple[Operation, ...] = ()
    """What the providers will do with each changed plan resource (:mod:`.operations`)."""
    hazards: tuple[str, ...] = ()
    """Creates that meet an object the same ``up`` deletes later, renamed cluster keys
    (:func:`.operations.hazards`)."""
    data_loss: tuple[str, ...] = ()
    """Tenant data the next ``up`` destroys: databases not retained, KEK Secrets, Keycloak
    clients (:func:`.losses.tenant_data`)."""
    left_behind: tuple[str, ...] = ()
    """Tenant data the next ``up`` leaves where it is, managed or read by nothing: retained
    databases, credential stores (:func:`.losses.tenant_data`)."""
    key_only_copies: tuple[str, ...] = ()
    """Removed gateways whose database is retained while the only copy of its key, the KEK
    Secret, is deleted (:func:`.removals.key_only_copies`): refused unless recorded."""
    decommissions: tuple[str, ...] = ()
    """What ``deploy/decommissions.yaml`` says of each of :attr:`key_only_copies`, or that it
    says nothing (:func:`gatewayctl.diff.diff_command.run` fills it in)."""
    delete_flips: tuple[str, ...] = ()
    """Databases retained on delete at the base and not in the working tree
    (:func:`.losses.deletion_flips`)."""
    access: tuple[AccessChange, ...] = ()
    """Principals that gain or lose a gateway's role (:mod:`gatewayctl.diff.access`)."""
    sign_in: tuple[SignInChange, ...] = ()
    """Gateways whose sign-in (mode, issuer, client id) changed."""
    steps: tuple[Step, ...] = ()
    """The predicted step of every resource, by URN (:mod:`.steps`; ``diff --json``)."""
    waves: tuple[str, ...] = ()
    """The rollout waves the change goes through (``deploy/rollout.yaml``), one line each."""
    rotations: tuple[RotationChange, ...] = ()
    """Counters of ``spec.rotation`` that differ (:mod:`.rotation`)."""

    @property
    def rendered_changed(self) -> bool:
        return bool(self.gateways or self.objects or self.resources)

    @property
    def changed(self) -> bool:
        # operations without a rendered change: resources replaced on request (--replace)
        return self.rendered_changed or self.secrets_changed or bool(self.operations)


def _kind(path: str, text: str) -> str:
    try:
        kind = yaml.safe_load(text).get("kind")
    except Exception:
        kind = None
    if isinstance(kind, str) and kind:
        return kind
    return path.rsplit("/", 1)[-1].split("-", 1)[0]


def _status(old: object | None, new: object | None) -> Status | None:
    if old is None:
        return None if new is None else "added"
    if new is None:
        return "removed"
    return None if old == new else "changed"


def compare_objects(base: Mapping[str, str], head: Mapping[str, str]) -> list[ObjectChange]:
    changes = []
    for path in sorted(set(base) | set(head)):
        if not path.startswith(MANIFESTS):
            continue
        old, new = base.get(path), head.get(path)
        status = _status(old, new)
        if status is not None:
            text = new if new is not None else old or ""
            changes.append(
                ObjectChange(
                    path=path, kind=_kind(path, text), status=status, old=old or "", new=new or ""
                )
            )
    return changes


def secret_data_changes(
    base: Mapping[str, Any],
    head: Mapping[str, Any],
    files: Mapping[str, str],
    seen: Iterable[str],
) -> list[ObjectChange]:
    """Secrets whose manifest reads the same (their data is redacted) but whose data digest
    differs (``gatewayctl.engine.render.data_digest``): changed objects too, as the engine sees
    them."""
    old_res, new_res = index(base), index(head)
    known = set(seen)
    changes = []
    for key in sorted(old_res.keys() & new_res.keys()):
        old, new = old_res[key].get(DATA_DIGEST), new_res[key].get(DATA_DIGEST)
        path = manifest_path(new_res[key], new_res)
        if old is None or new is None or old == new or path is None or path in known:
            continue
        text = files.get(path, "")
        changes.append(ObjectChange(path=path, kind="Secret", status="changed", old=text, new=text))
    return changes


def output_changes(
    operations: Iterable[Operation], files: Mapping[str, str], seen: Iterable[str]
) -> list[ObjectChange]:
    """Kubernetes objects whose manifest reads the same but that a replacement upstream changes
    (a Secret carrying a reissued certificate, a Deployment whose config hash covers it:
    :func:`.operations._cascade`): changed objects too, as the engine sees them."""
    known = set(seen)
    return [
        ObjectChange(
            path=o.manifest,
            kind=o.type.rsplit(":", 1)[-1],
            status="changed",
            old=files.get(o.manifest, ""),
            new=files.get(o.manifest, ""),
        )
        for o in operations
        if o.manifest is not None and o.manifest not in known and o.manifest in files
    ]


def _plan(files: Mapping[str, str], scrubber: Scrubber | None = None) -> dict[str, Any]:
    text = files.get(_PLAN)
    if text is None:
        return {}
    plan = decoded(text)
    if not isinstance(plan, dict):
        return {}
    return scrubber.plan(plan, text) if scrubber is not None else plan


def _changed_fields(old: Mapping[str, Any], new: Mapping[str, Any], *, inputs: bool) -> list[str]:
    fields = [
        name
        for name in sorted(set(old) | set(new))
        if name not in {"inputs", "type", "name"} and old.get(name) != new.get(name)
    ]
    if inputs:
        before, after = old.get("inputs") or {}, new.get("inputs") or {}
        fields += [
            f"inputs.{key}"
            for key in sorted(set(before) | set(after))
            if before.get(key) != after.get(key)
        ]
    return fields


def compare_plans(
    base: Mapping[str, Any], head: Mapping[str, Any]
) -> tuple[list[GatewayChange], list[ResourceChange]]:
    old_res, new_res = index(base), index(head)
    touched: dict[str, list[tuple[str, str]]] = {}
    resources: list[ResourceChange] = []
    for key in sorted(set(old_res) | set(new_res)):
        old, new = old_res.get(key), new_res.get(key)
        status = _status(old, new)
        if status is None or is_component(key[0]):
            continue
        owner = owning_gateway(key, new_res if new is not None else old_res)
        if owner is not None:
            touched.setdefault(owner, []).append((key[0].rsplit(":", 1)[-1], key[1]))
        kubernetes = key[0].startswith("kubernetes:")
        fields: list[str] = []
        if old is not None and new is not None:
            # A Kubernetes object's inputs are its manifest, diffed in full.
            fields = _changed_fields(old, new, inputs=not kubernetes)
            if not fields:
                continue
        elif kubernetes:
            continue
        resources.append(
            ResourceChange(type=key[0], name=key[1], status=status, fields=tuple(fields))
        )

    def by_name(plan: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        return {str(g.get("name")): g for g in plan.get("gateways", []) if isinstance(g, dict)}

    old_gw, new_gw = by_name(base), by_name(head)
    gateways: list[GatewayChange] = []
    for name in sorted(set(old_gw) | set(new_gw)):
        old, new = old_gw.get(name), new_gw.get(name)
        if old is not None and new is not None:
            fields = [
                k
                for k in sorted(set(old) | set(new))
                if old.get(k, _ENTRY_DEFAULTS.get(k)) != new.get(k, _ENTRY_DEFAULTS.get(k))
            ]
            owned = tuple(touched.get(name, ()))
            if fields or owned:
                gateways.append(
                    GatewayChange(
                        name=name, status="changed", fields=tuple(fields), resources=owned
                    )
                )
        else:
            entry = new if new is not None else old or {}
            gateways.append(
                GatewayChange(
                    name=name,
                    status="added" if new is not None else "removed",
                    cluster=entry.get("cluster"),
                    namespace=entry.get("namespace"),
                    address=entry.get("address"),
                    adopted=new is not None and new.get("adopted") is True,
                )
            )
    return gateways, resources


def secrets_changed(base: Side, head: Side) -> bool:
    """Whether a secret value differs between two rendered sides: a plaintext
    ``clusterSecrets`` value, or the ciphertext of a ``secure:`` value (also one that replaces a
    plaintext value, or the reverse).

    Only what both sides have is compared: an empty side (with a note) shows every object as
    added or removed already, and a value present on one side only is a new or dropped key,
    not a changed one; but a ``secure:`` object on one side split into values on the other (or
    the reverse) is a change. Sides built without digests fall back to their scrub sets, when
    both have one.
    """
    if base.note is not None or head.note is not None:
        return False
    old, new = base.secret_digests, head.secret_digests
    if old and new:
        if any(old[path] != new[path] for path in old.keys() & new.keys()):
            return True
        return any(  # reshaped: one side's value is a prefix of the other's paths
            len(a) != len(b) and a[: len(b)] == b[: len(a)] for a, b in itertools.product(old, new)
        )
    return bool(base.secrets and head.secrets and base.secrets != head.secrets)


def replaced_keys(plan: Mapping[str, Any], names: Iterable[str]) -> set[Key]:
    """The resources of ``plan`` that ``--replace`` names: by URN or by logical name."""
    wanted = set(names)
    return {
        key for key in index(plan) if key[1] in wanted or any(urn_key(n) == key for n in wanted)
    }


def compare(
    stack: str,
    base: Side,
    head: Side,
    secrets: Iterable[str] = (),
    replace: Iterable[str] = (),
) -> StackDiff:
    """What changed from ``base`` to ``head``, every value equal to a secret of either side (or
    of ``secrets``: the other stacks') scrubbed first (see :class:`Scrubber`); ``replace``:
    resources replaced on request (``pulumi up --replace``), by URN or logical name."""
    scrubber = Scrubber(base.secrets | head.secrets | frozenset(secrets))
    base_plan, head_plan = _plan(base.files, scrubber), _plan(head.files, scrubber)
    gateways, resources = compare_plans(base_plan, head_plan)
    access, sign_in = access_changes(base_plan, head_plan)
    operations = tuple(predict(base_plan, head_plan, replaced_keys(head_plan, replace)))
    # A side with a note is treated as empty: nothing of it is deleted by an `up`.
    held = tenant_data(base_plan, head_plan) if head.note is None else ([], [])
    losses = (tuple(held[0]), tuple(held[1]))
    head_files = scrubber.files(head.files)
    objects = compare_objects(scrubber.files(base.files), head_files)
    objects += secret_data_changes(base_plan, head_plan, head_files, (o.path for o in objects))
    objects += output_changes(operations, head_files, (o.path for o in objects))
    return StackDiff(
        stack=stack,
        base_note=base.note,
        head_note=head.note,
        gateways=tuple(gateways),
        objects=tuple(sorted(objects, key=lambda o: o.path)),
        resources=tuple(r for r in resources if not r.type.startswith("kubernetes:"))
        + tuple(r for r in resources if r.type.startswith("kubernetes:")),
        secrets_changed=secrets_changed(base, head),
        releases=release_moves(base_plan, head_plan),
        operations=operations,
        hazards=tuple(hazards(base_plan, head_plan, operations)),
        # A side with a note is treated as empty: nothing of it is deleted by an `up`.
        data_loss=losses[0],
        left_behind=losses[1],
        delete_flips=tuple(deletion_flips(base_plan, head_plan)),
        key_only_copies=tuple(key_only_copies(base_plan, head_plan) if head.note is None else ()),
        access=tuple(access),
        sign_in=tuple(sign_in),
        steps=predicted_steps(base_plan, head_plan, operations, stack=stack, project=PROJECT),
        rotations=tuple(changes(base_plan, head_plan)),
    )

"""One gateway's resources as a tree, each with its sync, health and a message, as ``argocd app
get`` lists an application's resources (argoproj/argo-cd ``cmd/argocd/commands/app.go``,
``printAppResources``: kind, name, status, health, message; ``-o tree`` draws the parents).

The tree is the parent chain (``ResourceV3.parent``, :mod:`.tree`): the Gateway component at
the root, its parts (Pki, Workload, ...) below it, their resources below them. A resource whose
parent is not among the gateway's own hangs from its closest ancestor that is, else from the
root. Siblings are ordered by kind, then name.

Per custom resource:

- sync: ``Missing`` when its live object is gone (a refresh's ``delete``) or git creates it
  (a preview's ``create``: not deployed yet); ``OutOfSync`` for any other change (drift, a
  live addition, an undeployed update, replace or delete); else ``Synced`` (``Unknown`` when
  no input says what is live and no preview what git changes);
- health: read for the kinds :mod:`.health` checks (``Missing`` for one that is gone or not
  created yet); none for the others, as Argo CD leaves it blank for what it does not assess
  (their sync says when they are missing), so no row contradicts the gateway's health;
- message: what differs (paths only, never a value), the health's reason, a certificate's
  expiry.

A component (Pki, Workload, ...) creates nothing itself: it is as out of sync and as unhealthy
as the worst of what it holds. The root is the gateway's own status.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from components import tokens
from gatewayctl.errors import printable
from gatewayctl.status import health
from gatewayctl.status.certificates import Certificate
from gatewayctl.status.health import Health
from gatewayctl.status.models import OP_CREATE, ResourceV3
from gatewayctl.status.sync import OP_ADDITION, Change, Sync, paths_text
from gatewayctl.status.tree import name_of, type_of

SYNC_ORDER: dict[Sync, int] = {"Synced": 0, "Unknown": 1, "OutOfSync": 2, "Missing": 3}
"""Worse is higher, as :data:`.health.ORDER`."""
TREE_DEPTH = 16
"""Levels of the tree drawn; deeper resources are drawn at this depth (their ``parent`` stays
exact)."""
KUBERNETES = "kubernetes"
PROJECT_PACKAGE = tokens.GATEWAY.split(":", 1)[0]


@dataclass(frozen=True, kw_only=True)
class ResourceStatus:
    urn: str
    type: str
    name: str
    parent: str | None
    """The URN of the resource it hangs from in the tree; None for the root."""
    last: tuple[bool, ...]
    """From the root's child down to this one: whether each is the last of its siblings (the
    root's own is empty; its length is the depth)."""
    id: str | None
    sync: Sync
    health: Health | None
    message: str


def kind(type_: str) -> str:
    """A short kind: the Kubernetes kind (``Deployment``), this project's component
    (``Pki``), else the package and the type (``tls:PrivateKey``, ``postgresql:Role``)."""
    package, _, rest = type_.partition(":")
    name = rest.rsplit(":", 1)[-1] if rest else type_
    return name if package in {KUBERNETES, PROJECT_PACKAGE} else f"{package}:{name}"


def change_text(change: Change) -> str:
    """One change of a resource, for its row (paths only)."""
    paths = paths_text(change)
    if change.missing:
        return "live object missing"
    if change.op == OP_ADDITION:
        return f"added by another manager: {paths} (delete the object, then pulumi up --refresh)"
    where = "live" if change.source == "live" else "git"
    what = "create (not deployed yet)" if change.op == OP_CREATE else change.op
    return f"{where} {what}: {paths}" if change.paths else f"{where} {what}"


def certificate_text(cert: Certificate) -> str:
    days = f"{cert.days_left} days" if cert.days_left >= 0 else "expired"
    due = ", renewal due" if cert.due else ""
    return f"expires {cert.expires.strftime('%Y-%m-%d')} ({days}){due}"


@dataclass(frozen=True, kw_only=True)
class Root:
    """The gateway's own status: its root row."""

    name: str
    sync: Sync
    health: Health
    message: str


def _own(
    urn: str,
    gone: bool,
    changes: Sequence[Change],
    checked: Mapping[str, tuple[Health, str]],
    cert: Certificate | None,
    known: bool,
) -> tuple[Sync, Health | None, str]:
    missing = gone or any(c.missing or (c.source == "git" and c.op == OP_CREATE) for c in changes)
    sync: Sync = "Missing" if missing else "OutOfSync" if changes else "Synced"
    if not known and not changes:
        sync = "Unknown"
    messages = [change_text(c) for c in changes]
    state_health: Health | None = None
    if urn in checked:
        state_health, reason = checked[urn]
        if not (gone and any(c.missing for c in changes)):
            messages.append(printable(reason))
    elif missing and type_of(urn) in health.CHECKED:  # not created yet: the gateway's rule
        state_health = "Missing"
    if cert is not None:
        messages.append(certificate_text(cert))
    return sync, state_health, "; ".join(messages)


def tree(
    root: Root,
    members: Sequence[tuple[str, ResourceV3 | None]],
    states: Mapping[str, ResourceV3],
    changes: Sequence[Change],
    checked: Mapping[str, tuple[Health, str]],
    certificates: Sequence[Certificate],
    *,
    known: bool,
    mentioned: Sequence[str] = (),
) -> tuple[ResourceStatus, ...]:
    """The rows of one gateway, depth first. ``members``: its resources as the live state has
    them (None: the live object is gone); ``states``: every state the inputs hold of them or of
    what the preview creates (for the parent and whether it is a component); ``known``: an input
    says what is live; ``mentioned``: its other resources only a digest names (the components
    a preview creates)."""
    by_urn: dict[str, list[Change]] = {}
    for change in changes:
        by_urn.setdefault(change.urn, []).append(change)
    live = dict(members)
    nodes = list(dict.fromkeys([*(urn for urn, _ in members), *by_urn, *mentioned]))
    listed = set(nodes)
    root_urn = next((u for u in nodes if type_of(u) == tokens.GATEWAY), None)
    certs = {c.urn: c for c in certificates}

    def parent_of(urn: str) -> str | None:
        seen = {urn}
        state = states.get(urn)
        current = state.parent if state is not None else None
        while current is not None and current not in seen:
            if current in listed:
                return current
            seen.add(current)
            above = states.get(current)
            current = above.parent if above is not None else None
        return root_urn if urn != root_urn else None

    children: dict[str | None, list[str]] = {}
    for urn in nodes:
        children.setdefault(parent_of(urn), []).append(urn)
    for siblings in children.values():
        siblings.sort(key=lambda u: (kind(type_of(u)), name_of(u)))

    own: dict[str, tuple[Sync, Health | None, str]] = {}
    for urn in nodes:
        state = live.get(urn) or states.get(urn)
        if state is not None and not state.custom:
            own[urn] = ("Synced", None, "; ".join(change_text(c) for c in by_urn.get(urn, ())))
            continue
        gone = urn in live and live[urn] is None
        own[urn] = _own(urn, gone, by_urn.get(urn, ()), checked, certs.get(urn), known)

    # Depth first, without recursion (a hostile state may chain its parents deep); drawn at
    # most TREE_DEPTH levels deep (the program nests four).
    order: list[tuple[str, str | None, tuple[bool, ...]]] = []
    tops = children.get(None, [])
    # With no Gateway among them, they hang from a row made for it (below).
    pending: list[tuple[str, str | None, tuple[bool, ...]]] = [
        (urn, None, () if root_urn is not None else (i == len(tops) - 1,))
        for i, urn in reversed(list(enumerate(tops)))
    ]
    while pending:
        urn, parent, last = pending.pop()
        order.append((urn, parent, last))
        kids = children.get(urn, [])
        for i in reversed(range(len(kids))):
            pending.append((kids[i], urn, (*last, i == len(kids) - 1)[-TREE_DEPTH:]))
    results: dict[str, tuple[Sync, Health | None, str]] = {}
    for urn, _parent, _last in reversed(order):  # children before their parent
        sync, state_health, message = own[urn]
        state = live.get(urn) or states.get(urn)
        below = [results[k] for k in children.get(urn, ())]
        if state is not None and not state.custom and below:
            sync = max([sync, *(b[0] for b in below)], key=SYNC_ORDER.__getitem__)
            found = [h for h in (state_health, *(b[1] for b in below)) if h is not None]
            state_health = health.worst(found) if found else None
        if urn == root_urn:
            sync, state_health, message = root.sync, root.health, message or root.message
        results[urn] = (sync, state_health, message)
    rows = [
        _row(urn, parent, last, live.get(urn) or states.get(urn), results[urn])
        for urn, parent, last in order
    ]
    if root_urn is None:  # the gateway itself is in no input (declared only): a row for it
        rows.insert(0, _synthetic_root(root))
    return tuple(rows)


def _row(
    urn: str,
    parent: str | None,
    last: tuple[bool, ...],
    state: ResourceV3 | None,
    values: tuple[Sync, Health | None, str],
) -> ResourceStatus:
    sync, state_health, message = values
    return ResourceStatus(
        urn=urn,
        type=type_of(urn),
        name=name_of(urn),
        parent=parent,
        last=last,
        id=state.id if state is not None and state.custom else None,
        sync=sync,
        health=state_health,
        message=message,
    )


def _synthetic_root(root: Root) -> ResourceStatus:
    return ResourceStatus(
        urn="",
        type=tokens.GATEWAY,
        name=root.name,
        parent=None,
        last=(),
        id=None,
        sync=root.sync,
        health=root.health,
        message=root.message,
    )

"""Self-heal and certificate reissue: what the scheduled check may do after reporting.

Opt-in per stack (``hypershell-gateways:selfHeal``, default false), and never for a stack the
Pulumi Kubernetes Operator owns (``deploy/operator.yaml`` ``stacks``): the operator refreshes
and corrects its stacks itself, and a second driver would race it
(:mod:`gatewayctl.deploy.operator`).

- ``up-refresh``: the only problem is drift (live objects differ from, or are missing
  against, the state; nothing degraded, nothing from git pending): ``pulumi up --refresh``
  puts the cluster back as git declares it, and reissues any certificate that is due. Not
  for a live addition (:mod:`.additions`), which it would leave in place.
- ``reissue``: otherwise, when certificates are inside their renewal window: ``pulumi up
  --target <each due certificate> --target-dependents`` (the Secrets holding them and the
  Deployment whose pod-template hash covers them follow), so a quiet repository never lets a
  certificate lapse. Also when a gateway is degraded: a lapsed certificate would only add to
  it, and the ``up`` touches nothing but the due certificates and what depends on them.
- ``none``: nothing to do, self-heal off, or no refresh among the inputs (the live state is
  not known, so neither is drift).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from gatewayctl.errors import InvalidInputError, Problem
from gatewayctl.inputs import operator_settings
from gatewayctl.inputs.stackfile import PROJECT, parse_stack_config, read_stack_config
from gatewayctl.status.core import StackStatus
from gatewayctl.status.sync import OP_ADDITION

Action = Literal["none", "up-refresh", "reissue"]
KEY = f"{PROJECT}:selfHeal"


@dataclass(frozen=True, kw_only=True)
class Remedy:
    action: Action
    targets: tuple[str, ...] = ()
    """URNs for ``pulumi up --target`` (``reissue``)."""


def enabled(root: Path, stack: str) -> bool:
    """The stack's ``selfHeal``; a problem (exit 2) when it is on for a stack the operator
    owns."""
    display, raw = read_stack_config(root, stack)
    config = parse_stack_config(display, raw)
    if not config.self_heal:
        return False
    if operator_settings.drivers(root, [stack])[stack] == "operator":
        raise InvalidInputError(
            [
                Problem(
                    display,
                    KEY,
                    f"the operator owns this stack ({operator_settings.SETTINGS} stacks) and"
                    " corrects its drift itself; self-heal from CI would race it: remove the key",
                )
            ]
        )
    return True


def remedy(status: StackStatus, self_heal: bool) -> Remedy:
    if not self_heal or status.live != "refresh":
        return Remedy(action="none")
    drift_only = (
        status.out_of_sync
        and not status.degraded
        and all(c.source == "live" for g in status.gateways for c in g.changes)
        and all(c.source == "live" for c in status.other_changes)
        # `up --refresh` leaves another manager's additions in place: only a replace does.
        and not any(c.op == OP_ADDITION for g in status.gateways for c in g.changes)
    )
    if drift_only:
        return Remedy(action="up-refresh")
    if status.due:
        return Remedy(action="reissue", targets=tuple(sorted(c.urn for c in status.due)))
    return Remedy(action="none")

"""Self-heal and certificate reissue: what the scheduled check may do after reporting.

Opt-in per stack (``hypershell-gateways:selfHeal``, default false), and never for a stack the
Pulumi Kubernetes Operator owns (``deploy/operator.yaml`` ``stacks``): the operator refreshes
and corrects its stacks itself, and a second driver would race it
(:mod:`gatewayctl.deploy.operator`).

- ``up-refresh``: the only problem is drift (live objects differ from, or are missing
  against, the state; nothing degraded, nothing from git pending): ``pulumi up --refresh``
  puts the cluster back as git declares it, and reissues any certificate that is due. Not
  for a live addition (:mod:`.tampering`) or an unmanaged object (:mod:`.live`), which it
  would leave in place.
- ``heal``: what another field manager added to an object the program manages, and (with the
  stack's ``selfHealUnmanaged``) an object nobody declared, which ``up --refresh`` leaves in
  place: removed in place first (:mod:`.heal`), then ``pulumi up --refresh`` puts back what the
  refresh sees. Whenever nothing from git is pending, degraded or not: the addition can be what
  degrades a gateway (a container added rolls its Deployment out).
- ``reissue``: otherwise, when certificates are inside their renewal window: the same reviewed
  change as any rotation (``gatewayctl rotate``, :mod:`gatewayctl.inputs.rotation_secrets`). Per
  declared gateway with certificates due, the rotation counters that reissue them
  (``serverCertificate``, ``clientCertificate``; ``ca`` alone when the CA is due: a new CA
  reissues both certificates it signs) and the command that raises them; the drift workflow
  runs it on a branch and opens a pull request, whose diff previews the reissue and whose
  merge's ``pulumi up`` carries it out, so a quiet repository never lets a certificate lapse
  unreviewed. Also when a gateway is degraded: a lapsed certificate would only add to it.
- ``none``: nothing to do, self-heal off, or no refresh among the inputs (the live state is
  not known, so neither is drift).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from components import naming
from gatewayctl.errors import InvalidInputError, Problem
from gatewayctl.inputs import operator_settings, rotation_secrets
from gatewayctl.inputs.rotation_secrets import Secret
from gatewayctl.inputs.stackfile import PROJECT, parse_stack_config, read_stack_config
from gatewayctl.status import heal
from gatewayctl.status.certificates import Certificate
from gatewayctl.status.core import StackStatus
from gatewayctl.status.sync import OP_ADDITION, OP_UNMANAGED

Action = Literal["none", "up-refresh", "reissue", "heal"]
KEY = f"{PROJECT}:selfHeal"
LEFT_BY_UP = frozenset({OP_ADDITION, OP_UNMANAGED})


COMMAND = "python -m gatewayctl rotate"


@dataclass(frozen=True, kw_only=True)
class Renewal:
    """One gateway's certificates due and the rotation counters that reissue them."""

    stack: str
    gateway: str
    secrets: tuple[Secret, ...]
    certificates: tuple[Certificate, ...]

    def argv(self) -> list[str]:
        """The words after ``python -m gatewayctl rotate``."""
        return [self.gateway, *(s.name for s in self.secrets), "--stack", self.stack]

    def command(self) -> str:
        return " ".join([COMMAND, *self.argv()])


@dataclass(frozen=True, kw_only=True)
class Remedy:
    action: Action
    renewals: tuple[Renewal, ...] = ()
    """The rotations that reissue the certificates due (``reissue``)."""
    unrenewed: tuple[Certificate, ...] = ()
    """Certificates due that no rotation reissues: a gateway no longer declared (the next
    ``up`` deletes it), or a certificate the program does not make (reissue it by hand)."""
    plan: heal.Plan = field(default_factory=heal.Plan)
    """What ``heal`` does before its ``up --refresh``, and what is left to a person (reported
    whatever the action)."""


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


def renewals(
    status: StackStatus, declared: Collection[str] | None = None
) -> tuple[tuple[Renewal, ...], tuple[Certificate, ...]]:
    """Per gateway of ``declared`` (None: every gateway named as a gateway is) with
    certificates due, the secrets whose rotation reissues them; and the certificates due that
    none does. A gateway's name is a DNS label, so a command line holds nothing else."""
    found, left = [], []
    for gateway in status.gateways:
        if not gateway.due:
            continue
        known = naming.is_dns1123_label(gateway.name) and (
            declared is None or gateway.name in declared
        )
        secrets = set()
        for cert in gateway.due:
            secret = rotation_secrets.for_certificate(gateway.name, cert.name) if known else None
            if secret is None:
                left.append(cert)
            else:
                secrets.add(secret)
        if (
            rotation_secrets.BY_NAME["ca"] in secrets
        ):  # a new CA reissues both certificates it signs
            secrets = {rotation_secrets.BY_NAME["ca"]}
        if secrets:
            found.append(
                Renewal(
                    stack=status.stack,
                    gateway=gateway.name,
                    secrets=tuple(s for s in rotation_secrets.SECRETS if s in secrets),
                    certificates=tuple(c for c in gateway.due if c not in left),
                )
            )
    return tuple(found), tuple(left)


def remedy(
    status: StackStatus,
    self_heal: bool,
    plan: heal.Plan | None = None,
    declared: Collection[str] | None = None,
) -> Remedy:
    """What the check may do; ``plan``: what :func:`.heal.plan` found to heal in the live
    objects read; ``declared``: the gateways the stack declares (:func:`renewals`)."""
    plan = plan or heal.Plan()
    found, left = renewals(status, declared)
    # The renewals are named whatever the action, as the heal's steps are: a person runs them.

    def named(action: Action) -> Remedy:
        return Remedy(action=action, renewals=found, unrenewed=left, plan=plan)

    if not self_heal or status.live != "refresh":
        return named("none")
    from_live = all(c.source == "live" for g in status.gateways for c in g.changes) and all(
        c.source == "live" for c in status.other_changes
    )
    if plan.steps and from_live:
        return named("heal")
    drift_only = (
        status.out_of_sync
        and not status.degraded
        and from_live
        # `up --refresh` leaves another manager's additions in place, and an object nobody
        # declared: it never touches either.
        and not any(c.op in LEFT_BY_UP for g in status.gateways for c in g.changes)
    )
    if drift_only:  # its up reissues the certificates due too (readyForRenewal)
        return named("up-refresh")
    # Changes from git not yet deployed (a merged renewal held by a window, a failed deploy):
    # their `up` reissues what is due (the tls provider's readyForRenewal replaces it), so no
    # second renewal pull request raises the counters again.
    return named("reissue" if found and from_live else "none")

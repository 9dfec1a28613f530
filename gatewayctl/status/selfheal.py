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
- ``reissue``: otherwise, when certificates are inside their renewal window: ``pulumi up
  --target <each due certificate> --target-dependents`` (the Secrets holding them and the
  Deployment whose pod-template hash covers them follow), so a quiet repository never lets a
  certificate lapse. Also when a gateway is degraded: a lapsed certificate would only add to
  it, and the ``up`` touches nothing but the due certificates and what depends on them.
- ``none``: nothing to do, self-heal off, or no refresh among the inputs (the live state is
  not known, so neither is drift).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from gatewayctl.errors import InvalidInputError, Problem, printable
from gatewayctl.inputs import operator_settings
from gatewayctl.inputs.stackfile import PROJECT, parse_stack_config, read_stack_config
from gatewayctl.status import heal
from gatewayctl.status.core import StackStatus
from gatewayctl.status.sync import OP_ADDITION, OP_UNMANAGED
from gatewayctl.status.tree import parse_urn

Action = Literal["none", "up-refresh", "reissue", "heal"]
KEY = f"{PROJECT}:selfHeal"
LEFT_BY_UP = frozenset({OP_ADDITION, OP_UNMANAGED})


@dataclass(frozen=True, kw_only=True)
class Remedy:
    action: Action
    targets: tuple[str, ...] = ()
    """URNs for ``pulumi up --target`` (``reissue``)."""
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


def remedy(
    status: StackStatus, self_heal: bool, source: str = "", plan: heal.Plan | None = None
) -> Remedy:
    """What the check may do; ``source``: the state file the certificates were read from,
    named by a problem of a target (:func:`target_problems`, exit 2); ``plan``: what
    :func:`.heal.plan` found to heal in the live objects read."""
    plan = plan or heal.Plan()
    if not self_heal or status.live != "refresh":
        return Remedy(action="none", plan=plan)
    from_live = all(c.source == "live" for g in status.gateways for c in g.changes) and all(
        c.source == "live" for c in status.other_changes
    )
    if plan.steps and from_live:
        return Remedy(action="heal", plan=plan)
    drift_only = (
        status.out_of_sync
        and not status.degraded
        and from_live
        # `up --refresh` leaves another manager's additions in place, and an object nobody
        # declared: it never touches either.
        and not any(c.op in LEFT_BY_UP for g in status.gateways for c in g.changes)
    )
    if drift_only:
        return Remedy(action="up-refresh", plan=plan)
    if status.due:
        targets = tuple(sorted(c.urn for c in status.due))
        problems = target_problems(targets, source)
        if problems:
            raise InvalidInputError(problems)
        return Remedy(action="reissue", targets=targets, plan=plan)
    return Remedy(action="none", plan=plan)


TARGETS = "remedy.targets"


def target_problem(urn: str) -> str | None:
    """Why ``urn`` cannot leave the tool as a ``pulumi up --target``, or None. The drift
    workflow writes the targets into ``$GITHUB_OUTPUT`` joined by ``;`` (one ``name=value``
    a line), and pulumi/actions splits its ``target`` input on ``;``: a URN holding a
    semicolon, a line break or any other control character would be two targets, or forge
    another output. Pulumi's own URNs hold none; one that does, or that is no URN at all,
    is refused rather than passed on."""
    if parse_urn(urn) is None:
        return "not a Pulumi URN (urn:pulumi:<stack>::<project>::<type>::<name>)"
    if ";" in urn:
        return "holds ';', which separates targets"
    if any(not c.isprintable() for c in urn):
        return "holds a line break or another control character"
    if urn != urn.strip():
        return "starts or ends with white space"
    return None


def target_problems(targets: Iterable[str], source: str) -> list[Problem]:
    """A problem for each URN that may not be a target (:func:`target_problem`), naming the
    state file the certificate came from and the certificate by its name, printable."""
    problems = []
    for urn in targets:
        why = target_problem(urn)
        if why is not None:
            parsed = parse_urn(urn)
            shown = printable(parsed.name if parsed is not None else urn)
            problems.append(
                Problem(
                    source,
                    TARGETS,
                    f"certificate {shown!r} is due for renewal, but its URN {why}: refused as a"
                    " `pulumi up --target`; reissue it by hand",
                )
            )
    return problems

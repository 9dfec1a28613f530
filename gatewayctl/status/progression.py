"""Run a stack's rollout wave after wave on the real engine (``gatewayctl rollout``).

Each round reads what the engine says: ``pulumi preview --json`` (what git would still change)
and ``pulumi stack export`` (the state, whose outputs give health), through ``gatewayctl
status``'s own reading (:func:`gatewayctl.status.core.build`). The first wave not yet done
(:mod:`gatewayctl.resolve.waves`) decides the next step:

- the preview changes resources of its gateways (wave 0: of no gateway): ``pulumi up --target``
  of exactly those URNs, nothing else. The engine keeps every resource not targeted as its
  state has it and skips a create it was not asked for (pulumi/pulumi v3.274.0
  ``pkg/resource/deploy/step_generator.go``: ``isTargetedForUpdate``,
  ``NewUntargetedSameStep``), so later waves are untouched; it fails the ``up`` when a targeted
  resource depends on a create not targeted (``untargeted create``), which is why the shared
  resources go first. ``--target-dependents`` is not given: it would pull dependents of other
  waves in. The program still runs whole.
- else ``pulumi refresh --preview-only --json --target`` of its gateways' resources, so that
  their health is read live without writing the state (a refresh that writes it records the
  provider's initialization errors in the state, and the next preview then shows the
  Deployment and its Service as updates with no input changed: seen in the lane), the
  engine's warning that a resource is unhealthy included (:data:`.health.UNHEALTHY`), then
  each gateway must be ``Healthy``: ``Degraded`` stops the rollout, naming the gateway and its
  unhealthy part; still ``Progressing`` after the wave's ``healthDeadline`` stops it too. The
  waves after a stop are left as they are.

Nothing is stored between runs: running it again after a fix passes the waves that are synced
and Healthy (a refresh and a preview each) and goes on where it stopped. The gateways the stack
no longer declares are removed with the last wave.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, Protocol

from gatewayctl.inputs.stackfile import PROJECT
from gatewayctl.resolve.waves import Wave
from gatewayctl.status import core
from gatewayctl.status import inputs as status_inputs
from gatewayctl.status.tree import Tree

POLL_SECONDS = 10.0


class Engine(Protocol):
    """The Pulumi CLI on one stack (:mod:`gatewayctl.deploy.pulumicli`; the lane's own)."""

    def observe(self, refresh: Sequence[str]) -> Sequence[Path]:
        """``pulumi preview --json`` and ``pulumi stack export`` written to files, and with
        ``refresh`` also ``pulumi refresh --preview-only --json --target`` of those URNs."""

    def up(self, urns: Sequence[str]) -> None: ...


@dataclass(frozen=True, kw_only=True)
class Observed:
    status: core.StackStatus
    owned: dict[str | None, list[str]]
    """The state's URNs by the gateway they belong to (None: the stack's own)."""


Result = Literal["done", "stopped", "untouched"]


@dataclass(frozen=True, kw_only=True)
class WaveOutcome:
    wave: Wave
    result: Result
    updated: int = 0
    """Resources its ``up`` targeted in this run (0: it was already synced)."""
    why: str = ""
    """Why it stopped: the gateway and what is unhealthy."""


@dataclass(frozen=True, kw_only=True)
class Outcome:
    stack: str
    waves: tuple[WaveOutcome, ...]

    @property
    def stopped(self) -> WaveOutcome | None:
        return next((w for w in self.waves if w.result == "stopped"), None)

    def summary(self) -> str:
        gateways = [w for w in self.waves if not w.wave.shared]
        head = f"{self.stack}: {len(gateways)} waves"
        stop = self.stopped
        if stop is None:
            return f"{head}, all Healthy"
        after = [w.wave.number for w in gateways if w.result == "untouched"]
        rest = f", wave {', '.join(map(str, after))} untouched" if after else ""
        if len(after) > 1:
            rest = f", waves {', '.join(map(str, after))} untouched"
        return f"{head}, stopped at wave {stop.wave.number} ({stop.why}){rest}"


def observe(
    engine: Engine, stack: str, declared: Sequence[str], now: datetime, refresh: Sequence[str]
) -> Observed:
    read = status_inputs.read(list(engine.observe(refresh)), stack=stack, project=PROJECT)
    status = core.build(stack, read, now, declared)
    resources = read.checkpoint.resources if read.checkpoint is not None else []
    tree = Tree(resources, gateways=declared)
    owned: dict[str | None, list[str]] = {}
    for resource in resources:
        owned.setdefault(tree.gateway_of(resource.urn), []).append(resource.urn)
    return Observed(status=status, owned=owned)


def targets(observed: Observed, wave: Wave, last: bool, declared: set[str]) -> list[str]:
    """The URNs the preview would change in ``wave`` (``last``: also the gateways the stack no
    longer declares)."""
    if wave.shared:
        return sorted({c.urn for c in observed.status.other_changes if c.source == "git" and c.urn})
    return sorted(
        {
            c.urn
            for g in observed.status.gateways
            if g.name in wave.gateways or (last and g.name not in declared)
            for c in g.changes
            if c.source == "git" and c.urn
        }
    )


def _unhealthy(observed: Observed, wave: Wave) -> list[tuple[str, str, str]]:
    """(gateway, health, what) of each gateway of the wave that is not Healthy."""
    found = {g.name: g for g in observed.status.gateways}
    shown = []
    for name in wave.gateways:
        gateway = found.get(name)
        if gateway is None:
            shown.append((name, "Missing", "not deployed"))
        elif gateway.health != "Healthy":
            parts = [
                f"{p.type.rsplit(':', 1)[-1]} {p.name}: {p.message}"
                for p in gateway.parts
                if p.health != "Healthy"
            ]
            shown.append((name, gateway.health, "; ".join(parts)))
    return shown


def run(
    stack: str,
    waves: Sequence[Wave],
    engine: Engine,
    declared: Sequence[str],
    *,
    log: Callable[[str], None] = lambda _: None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    poll: float = POLL_SECONDS,
) -> Outcome:
    done: dict[int, WaveOutcome] = {}
    updated: dict[int, int] = {}
    started: dict[int, float] = {}
    known = set(declared)
    checking: Wave | None = None
    """The wave whose gateways the next round reads live (a refresh that writes nothing)."""
    owned: dict[str | None, list[str]] = {}

    def finish(stop: WaveOutcome) -> Outcome:
        rest = [done.get(w.number) or WaveOutcome(wave=w, result="untouched") for w in waves]
        return Outcome(stack=stack, waves=tuple(stop if o.wave == stop.wave else o for o in rest))

    while True:
        live = [u for g in checking.gateways for u in owned.get(g, [])] if checking else []
        observed = observe(engine, stack, declared, datetime.now(UTC), live)
        owned = observed.owned
        for wave in waves:
            if wave.number in done:
                continue
            wanted = targets(observed, wave, wave is waves[-1], known)
            if wanted:
                if wave.number in updated:
                    why = f"still out of sync after its update: {wanted[0]}"
                    return finish(
                        WaveOutcome(
                            wave=wave, result="stopped", updated=updated[wave.number], why=why
                        )
                    )
                log(f"{wave.label()}: pulumi up --target of {len(wanted)} resources")
                started.setdefault(wave.number, clock())
                engine.up(wanted)
                updated[wave.number] = len(wanted)
                checking = None
                break
            if wave.shared:
                done[0] = WaveOutcome(wave=wave, result="done", updated=updated.get(0, 0))
                continue
            if checking is not wave:
                checking = wave  # the next round reads its gateways live
                started.setdefault(wave.number, clock())
                break
            unhealthy = _unhealthy(observed, wave)
            degraded = [u for u in unhealthy if u[1] == "Degraded"]
            late = clock() - started[wave.number] >= wave.deadline.total_seconds()
            if degraded or (unhealthy and late):
                name, health, what = (degraded or unhealthy)[0]
                why = f"{name} {health}" + (f": {what}" if what else "")
                if not degraded:
                    why += f" after its health deadline of {wave.deadline}"
                return finish(
                    WaveOutcome(
                        wave=wave, result="stopped", updated=updated.get(wave.number, 0), why=why
                    )
                )
            if not unhealthy:
                log(f"{wave.label()}: Healthy ({', '.join(wave.gateways)})")
                done[wave.number] = WaveOutcome(
                    wave=wave, result="done", updated=updated.get(wave.number, 0)
                )
                checking = None
                continue
            log(f"{wave.label()}: waiting for {', '.join(u[0] for u in unhealthy)}")
            sleep(poll)
            break
        else:
            return Outcome(stack=stack, waves=tuple(done[w.number] for w in waves))

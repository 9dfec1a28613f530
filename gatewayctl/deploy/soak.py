"""The soak between environments (docs/rollouts.md, "Soak between environments"): before
``gatewayctl promote`` binds a release in a stack of the plan's entry i > 0
(``deploy/rollout.yaml``, :mod:`gatewayctl.inputs.promotion`), every deployed stack of entry
i - 1 must have run it Healthy for the plan's soak, as its recorded status says
(:mod:`gatewayctl.inputs.status_records`), never a person's word.

Healthy since: the first record of the latest unbroken run of records, counted back from the
newest one, in which at least one gateway runs the release and every gateway that runs it is
``Synced`` and ``Healthy``. A record that breaks the rule (a gateway Degraded or OutOfSync, or
none running the release) ends the run; the time between two records does not (a failed check
writes none). The soak is met when the newest record is at least ``soak`` after that since;
a newest record that breaks the rule means the release is not Healthy now: no since at all.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from gatewayctl import interrupts
from gatewayctl.deploy.deployed import SETTINGS as DEPLOYED_SETTINGS
from gatewayctl.deploy.deployed import deployed_stacks
from gatewayctl.inputs.promotion import SETTINGS, Plan
from gatewayctl.inputs.status_records import Record, parse
from gatewayctl.inputs.windows import duration_text

BRANCH = "hypershell-records"
REF = f"origin/{BRANCH}"
GIT_TIMEOUT = 60


@dataclass(frozen=True, kw_only=True)
class Upstream:
    """One stack of the previous environment: since when its records show the release
    Healthy, and why not, when they do not."""

    stack: str
    since: datetime | None = None
    newest: datetime | None = None
    """The time of its newest record (None: no records)."""
    met: bool = False
    why: str = ""
    """What it says: how long it has been Healthy, or what stops the soak."""


@dataclass(frozen=True, kw_only=True)
class Gate:
    required: bool
    """The plan asks for a soak before this stack (and the promotion changes a binding)."""
    release: str = ""
    previous: str = ""
    """The plan's entry before the stack's (a stack or a pattern)."""
    soak: timedelta | None = None
    upstream: tuple[Upstream, ...] = ()
    override: str | None = None
    """The reason given with --override-soak, when it lets an unmet soak through."""

    @property
    def met(self) -> bool:
        return not self.required or (bool(self.upstream) and all(u.met for u in self.upstream))

    @property
    def since(self) -> datetime | None:
        """The latest since of the stacks (the one the soak waits for); None when one has
        none."""
        times = [u.since for u in self.upstream]
        if not times or any(t is None for t in times):
            return None
        return max(t for t in times if t is not None)

    @property
    def until(self) -> datetime | None:
        since = self.since
        return since + self.soak if since is not None and self.soak is not None else None


NO_SOAK = Gate(required=False)


def span(length: timedelta) -> str:
    """``1d2h``, ``19h17m``, ``0m`` (:func:`~gatewayctl.inputs.windows.duration_text`; a
    negative length, records out of order, as ``0m``)."""
    return duration_text(max(length, timedelta(0)))


def broken(record: Record, release: str) -> str | None:
    """Why ``record`` does not show ``release`` Healthy, or None when it does."""
    running = [g for g in record.gateways if g.release == release]
    if not running:
        return f"no gateway runs {release}"
    bad = [f"{g.name} {g.sync}/{g.health}" for g in running if (g.sync, g.health) != _GOOD]
    return ", ".join(bad) or None


_GOOD = ("Synced", "Healthy")


def healthy_since(records: list[Record], release: str) -> datetime | None:
    """The first record of the unbroken run that ends with the newest record (``records``
    oldest first), or None when the newest record breaks the rule (or there is none)."""
    since = None
    for record in reversed(records):
        if broken(record, release) is not None:
            break
        since = record.recorded
    return since


def upstream(stack: str, records: list[Record], release: str, soak: timedelta) -> Upstream:
    """What the records of ``stack`` say about ``release`` and the soak."""
    if not records:
        return Upstream(stack=stack, why=f"{stack}: no records in its file")
    newest = records[-1]
    at = newest.recorded.isoformat()
    since = healthy_since(records, release)
    if since is None:
        why = f"{stack}: {release} not Healthy in the newest record ({at}): "
        return Upstream(stack=stack, newest=newest.recorded, why=why + str(broken(newest, release)))
    held = newest.recorded - since
    why = f"{stack}: {release} Healthy since {since.isoformat()}, {span(held)} of {span(soak)}"
    if held >= soak:
        return Upstream(stack=stack, since=since, newest=newest.recorded, met=True, why=why)
    why += (
        f" by the newest record ({at}); the soak ends at {(since + soak).isoformat()}: a record"
        " at or after that time is needed (the next drift check's)"
    )
    return Upstream(stack=stack, since=since, newest=newest.recorded, why=why)


def gate(root: Path, plan: Plan | None, stack: str, release: str, records_dir: Path | None) -> Gate:
    """The soak ``plan`` asks of ``release`` before ``stack``, from the records in
    ``records_dir`` (``<stack>.jsonl``) or, without one, on the branch ``REF`` of the git
    repository ``root`` is in. InvalidInputError for a record file with a bad line."""
    previous = plan.previous(stack) if plan is not None else None
    if plan is None or previous is None:
        return NO_SOAK
    entry, stacks = previous
    deployed = set(deployed_stacks(root))
    found = []
    for name in stacks:
        if name not in deployed:
            continue  # never deployed from CI: nothing records its status
        text, display, missing = _records(root, name, records_dir)
        if text is None:
            found.append(Upstream(stack=name, why=f"{name}: {missing}"))
        else:
            found.append(upstream(name, parse(text, display, name), release, plan.soak))
    if not found:
        why = (
            f"{entry}: no stack of it is deployed ({DEPLOYED_SETTINGS}), so none has recorded"
            f" status; change the order in {SETTINGS} or override"
        )
        found.append(Upstream(stack=entry, why=why))
    return Gate(
        required=True,
        release=release,
        previous=entry,
        soak=plan.soak,
        upstream=tuple(found),
    )


def _records(root: Path, stack: str, records_dir: Path | None) -> tuple[str | None, str, str]:
    """The record file's text (None: missing), the name it is shown by, and why missing."""
    if records_dir is not None:
        return read_file(records_dir / f"{stack}.jsonl")
    return read_branch(root, f"records/{stack}.jsonl", "no drift check recorded it")


def read_file(path: Path) -> tuple[str | None, str, str]:
    """A file's text (None: missing or unreadable), its name as shown, and why missing."""
    try:
        return path.read_text(encoding="utf-8"), str(path), ""
    except FileNotFoundError:
        return None, str(path), f"no records: {path} does not exist"
    except (OSError, UnicodeDecodeError) as error:
        return None, str(path), f"no records: {path} cannot be read ({error})"


def read_branch(
    root: Path, path: str, unwritten: str, ref: str = REF
) -> tuple[str | None, str, str]:
    """The text of ``path`` on ``ref`` (the records branch) of the git repository ``root``
    is in (None: missing), its name as shown, and why missing (``unwritten``: why a file the
    branch lacks was never written)."""
    display = f"{ref}:{path}"
    fetch = f"fetch it with `git fetch origin {BRANCH}` (or give --records DIR)"
    try:
        found = _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
        if found.returncode != 0:
            return None, display, f"no {ref} here (not fetched, or not a git checkout); {fetch}"
        shown = _git(root, "show", display)
    except (OSError, subprocess.TimeoutExpired) as error:
        return None, display, f"no records: git failed ({error}); {fetch}"
    if shown.returncode != 0:
        return None, display, f"no records: {display} does not exist ({unwritten})"
    return shown.stdout, display, ""


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return interrupts.run(["git", "-C", str(root), *args], timeout=GIT_TIMEOUT)


def refusal(gate: Gate) -> list[str]:
    """What promote says when the soak is not met (or what it overrides)."""
    assert gate.soak is not None
    lines = [
        f"soak: {gate.release} must have been Healthy in {gate.previous} for {span(gate.soak)}"
        f" first ({SETTINGS})"
    ]
    lines += [f"  {u.why}" for u in gate.upstream]
    return lines


def comment(gate: Gate, reason: str, now: datetime) -> str:
    """The YAML comment promote writes above each binding it moves when --override-soak lets
    an unmet soak through: when, why, and what the records said."""
    assert gate.soak is not None
    said = "; ".join(
        f"{gate.release} Healthy in {u.stack} for {span(u.newest - u.since)} of {span(gate.soak)}"
        if u.since is not None and u.newest is not None
        else f"{gate.release} not Healthy in {u.stack}"
        for u in gate.upstream
    )
    return f"# soak overridden {now.astimezone(UTC).strftime('%Y-%m-%dT%H:%MZ')}: {reason} ({said})"


def document(gate: Gate) -> dict[str, object]:
    """``promote -o json|yaml``'s ``soak``: whether the plan asks for one, whether it is met,
    since and until when, the override's reason, and what each upstream stack's records say."""
    return {
        "required": gate.required,
        "met": gate.met,
        "since": gate.since.isoformat() if gate.since else None,
        "until": gate.until.isoformat() if gate.until else None,
        "override": gate.override,
        "release": gate.release or None,
        "previous": gate.previous or None,
        "soak": span(gate.soak) if gate.soak is not None else None,
        "stacks": [
            {
                "stack": u.stack,
                "since": u.since.isoformat() if u.since else None,
                "newest": u.newest.isoformat() if u.newest else None,
                "met": u.met,
                "why": u.why,
            }
            for u in gate.upstream
        ],
    }

"""``gatewayctl rollback STACK --to COMMIT``: the git change that returns gateways to their
declaration and release as of a commit (docs/history.md, "Rolling back").

Each chosen gateway's declaration file gets its content at COMMIT (``git show``); when the
release it resolved to at COMMIT differs from HEAD's and that declaration did not pin one, the
restored file pins it (``spec.release``); for a whole stack whose cluster binding moved since,
the binding moves back instead (``promote``'s editing). ``spec.rotation`` keeps HEAD's
counters: a secret rotated since stays rotated (a lower counter would rotate it again).

Both sides are read from git: HEAD (not the working tree) and COMMIT, each exported to a
temporary directory and resolved there by this version of the tool; the result is checked as
``validate`` checks a stack before it is committed. What cannot be rolled back is refused,
gateway by gateway, with the reason (:func:`refusals`).
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gatewayctl.deploy import promote, restore
from gatewayctl.deploy.gitrepo import Repository
from gatewayctl.errors import InvalidInputError, Problem, UsageError
from gatewayctl.inputs import rollout
from gatewayctl.inputs.environment import KEY as ENVIRONMENT_KEY
from gatewayctl.inputs.environment import environment_file
from gatewayctl.inputs.stackfile import read_stack_config, stack_file
from gatewayctl.inputs.yamlfile import parse_yaml_mapping
from gatewayctl.resolve import preparation, waves
from gatewayctl.resolve.resolved import LoadedStack, ResolvedGateway
from gatewayctl.resolve.stack import load_stack

IMAGES = ("gateway", "supervisor", "sandbox")
ROTATION_NOTE = (
    "spec.rotation keeps today's counters: a rotation cannot be rolled back (a lower counter"
    " would rotate the secret again, not bring the old one back)"
)


@dataclass(frozen=True, kw_only=True)
class Restored:
    """One gateway rolled back."""

    name: str
    path: str
    release_before: str | None
    release_after: str | None
    pinned: bool
    """The restored declaration pins the release COMMIT resolved (it did not pin one)."""
    images: tuple[str, ...]
    """The images that change (gateway, supervisor, sandbox)."""
    rotation_kept: bool
    """The restored file's spec.rotation was set to HEAD's counters."""
    restored: bool = True
    """Its declaration file changes (False: the same at COMMIT as at HEAD)."""


@dataclass(frozen=True, kw_only=True)
class Rollback:
    stack: str
    commit: str
    head: str
    files: dict[str, str]
    """The project's files that change, with their new text."""
    gateways: tuple[Restored, ...]
    bindings: tuple[tuple[str, str | None, str | None], ...] = ()
    """(cluster, release at HEAD, release at COMMIT) of each binding moved back."""
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def changed(self) -> bool:
        return bool(self.files)

    def message(self) -> str:
        names = ", ".join(g.name for g in self.gateways) or "nothing"
        head = f"Roll back {names} of {self.stack} to {self.commit[:12]}"
        if len(head) > 72:
            head = f"Roll back {len(self.gateways)} gateways of {self.stack} to {self.commit[:12]}"
        body = [
            f"Returns the declarations of {self.stack} ({names}) to their content at commit"
            f" {self.commit}, made by `gatewayctl rollback {self.stack} --to {self.commit}`.",
            "",
            *report(self),
        ]
        return head + "\n\n" + "\n".join(body) + "\n"


def _store(gateway: ResolvedGateway) -> tuple[str, ...]:
    c = gateway.credentials
    kept = ("namespace", "address", "mount")
    return (c.driver, *(str(getattr(c, k)) for k in kept if hasattr(c, k)))


def refusals(
    repo: Repository,
    removals: Sequence[tuple[str, str]],
    commit: str,
    name: str,
    past: ResolvedGateway | None,
    now: ResolvedGateway | None,
) -> list[str]:
    """Why ``name`` cannot go back to ``commit`` (empty: it can); ``removals``: (commit, path)
    of each removal since of its declaration, under its path then or now (a file renamed
    between a removal and a new declaration is still found)."""
    short = commit[:12]
    if past is None:
        return [f"did not exist at {short}: there is nothing to return it to"]
    if now is None:
        if past.args.retain_database:
            return [
                f"was removed since {short}: its namespace (the KEK Secret, the credentials"
                " Secrets) is gone and its retained role and database would have to be adopted"
                " back (docs/adoption.md); declare it again by hand"
            ]
        return [
            f"was removed since {short} with deletionPolicy Delete: its database was dropped;"
            " restoring the declaration would not restore the data"
        ]
    why = []
    for removal, path in removals:
        before = repo.show(f"{removal}^", path)
        document = parse_yaml_mapping(before, path) if before is not None else {}
        spec = document.get("spec") or {}
        if spec.get("deletionPolicy") == "Delete":
            why.append(
                f"was removed at {removal[:12]} with deletionPolicy Delete: its database was"
                " dropped then; its data at the commit cannot come back"
            )
    for label, value in (("namespace", "namespace"), ("cluster", "cluster")):
        if getattr(past, value) != getattr(now, value):
            why.append(
                f"its {label} was {getattr(past, value)} at {short} and is {getattr(now, value)}"
                f" now: going back replaces the gateway with everything it holds"
            )
    if past.database_name != now.database_name:
        why.append(
            f"its database was {past.database_name} at {short} and is {now.database_name} now:"
            " going back would not bring the old data back"
        )
    then_store, now_store = _store(past), _store(now)
    if then_store != now_store:
        before, after = then_store[0], now_store[0]
        if before == "kek":
            why.append(
                f"its credentials driver was kek at {short} and is {after} now: the KEK"
                " Secret was deleted when it left kek, so what it encrypted is unreadable"
                " (docs/credential-drivers.md: switch back by hand with the KEK's backup)"
            )
        elif after == "kek":
            why.append(
                f"its credentials driver is kek now and was {before} at {short}: going back"
                " deletes the KEK Secret, the only key to what it encrypted"
            )
        else:
            why.append(
                f"its credential store changed since {short}: what tenants stored since is in"
                " the current one and would be unreadable (docs/credential-drivers.md)"
            )
    return why


def choose(
    loaded: LoadedStack,
    past: LoadedStack,
    root: Path,
    gateways: Sequence[str],
    wave: int | None,
) -> list[str]:
    """The gateways to roll back: named, a wave's (of HEAD's plan), or every one of either."""
    known = {g.name for g in loaded.gateways} | {g.name for g in past.gateways}
    if gateways:
        unknown = [g for g in gateways if g not in known]
        if unknown:
            raise UsageError(
                f"--gateway {', '.join(unknown)}: not a gateway of {loaded.name} now or then;"
                f" it has {', '.join(sorted(known))}"
            )
        return sorted(set(gateways))
    if wave is not None:
        planned = waves.plan(loaded, rollout.read(root).get(loaded.name))
        found = [w for w in planned if w.number == wave]
        if wave == 0 or not found:
            numbers = ", ".join(str(w.number) for w in planned if w.number)
            raise UsageError(f"--wave {wave}: the gateway waves of {loaded.name} are {numbers}")
        return sorted(found[0].gateways)
    return sorted(known)


def plan(
    root: Path, stack: str, to: str, gateways: Sequence[str] = (), wave: int | None = None
) -> Rollback:
    """The rollback, checked, not written."""
    repo = Repository(root)
    commit, head = repo.commit(to), repo.commit("HEAD")
    config = stack_file(stack)
    if repo.show(commit, config) is None:
        raise UsageError(f"{config} does not exist at {to}: stack {stack} had no file then")
    with tempfile.TemporaryDirectory(prefix="gatewayctl-rollback-") as work:
        then, now_dir, after_dir = Path(work, "then"), Path(work, "now"), Path(work, "after")
        for commit_of, directory in ((commit, then), (head, now_dir), (head, after_dir)):
            repo.export(commit_of, directory)
        past = _loaded(then, stack, commit)
        loaded = load_stack(now_dir, stack)
        chosen = choose(loaded, past, now_dir, gateways, wave)
        whole = not gateways and wave is None
        return _plan(repo, stack, commit, head, loaded, past, chosen, now_dir, after_dir, whole)


def _loaded(directory: Path, stack: str, commit: str) -> LoadedStack:
    try:
        return load_stack(directory, stack)
    except InvalidInputError as error:
        problems = [Problem(f"{commit[:12]}:{p.path}", p.field, p.message) for p in error.problems]
        problems.append(
            Problem(
                stack_file(stack),
                "",
                f"the stack at {commit[:12]} does not load with this"
                " version of the tool: roll back by hand",
            )
        )
        raise InvalidInputError(problems) from None


def _plan(
    repo: Repository,
    stack: str,
    commit: str,
    head: str,
    loaded: LoadedStack,
    past: LoadedStack,
    chosen: list[str],
    now_dir: Path,
    after_dir: Path,
    whole: bool,
) -> Rollback:
    then_by = {g.name: g for g in past.gateways}
    now_by = {g.name: g for g in loaded.gateways}
    problems = []
    removed = repo.removals(commit)
    for name in chosen:
        now, then = now_by.get(name), then_by.get(name)
        path = (now or then).source  # type: ignore[union-attr]
        sources = dict.fromkeys(g.source for g in (then, now) if g is not None)
        removals = [(r, source) for source in sources for r in removed.get(source, [])]
        for why in refusals(repo, removals, commit, name, then, now):
            problems.append(Problem(path, "", f"gateway {name} cannot be rolled back: {why}"))
    if problems:
        raise InvalidInputError(problems)
    files: dict[str, str] = {}
    notes: list[str] = []
    bindings: list[tuple[str, str | None, str | None]] = []
    display, own = read_stack_config(now_dir, stack, merge=False)
    if whole and own.get(ENVIRONMENT_KEY) is not None:
        notes.append(
            f"the clusters' bindings are in {environment_file(str(own[ENVIRONMENT_KEY]))}, shared"
            " by every stack of the environment: each gateway whose release moved is pinned"
        )
    elif whole:
        moved = [
            (c, loaded.config.clusters[c].release, past.config.clusters[c].release)
            for c in sorted(loaded.config.clusters)
            if c in past.config.clusters
            and past.config.clusters[c].release is not None
            and loaded.config.clusters[c].release != past.config.clusters[c].release
        ]
        text = (now_dir / display).read_text(encoding="utf-8")
        for cluster, _, release in moved:
            assert release is not None
            text = promote.edit_bindings(text, display, [cluster], release)
        if moved:
            files[display] = text
            bindings = moved
    bound = {c: r for c, _, r in bindings}
    restored = []
    for name in chosen:
        now, then = now_by[name], then_by[name]
        shown = repo.show(commit, then.source)
        assert shown is not None
        text = shown
        current = parse_yaml_mapping((now_dir / now.source).read_text(encoding="utf-8"), now.source)
        counters = dict((current.get("spec") or {}).get("rotation") or {})
        kept = restore.keep_rotation(text, now.source, counters)
        rotation_kept = kept != text
        text = kept
        # The release the restored file resolves to without a pin of its own: its cluster's
        # binding (moved back, or as at HEAD).
        unpinned = bound.get(now.cluster, loaded.config.clusters[now.cluster].release)
        pinned = False
        if then.release != unpinned and not then.release_pinned:
            if then.release is None:
                raise InvalidInputError(
                    [
                        Problem(
                            now.source,
                            "spec.release",
                            f"gateway {name} ran no release at"
                            f" {commit[:12]}: pin its images by hand",
                        )
                    ]
                )
            if then.release not in loaded.releases:
                raise InvalidInputError(
                    [
                        Problem(
                            now.source,
                            "spec.release",
                            f"gateway {name} cannot be rolled back:"
                            f" its release {then.release} is no longer in releases/",
                        )
                    ]
                )
            text = restore.pin_release(text, now.source, then.release)
            pinned = True
        if then.source != now.source:
            was = f"it was {then.source} at {commit[:12]}"
            notes.append(f"{name}: restored to {now.source} ({was})")
        if text != (now_dir / now.source).read_text(encoding="utf-8"):
            files[now.source] = text
        restored.append((name, now, then, pinned, rotation_kept))
    for path, text in files.items():
        (after_dir / path).write_text(text, encoding="utf-8")
    preparation.offline_config(after_dir, stack)  # every rule of validate; exit 2 otherwise
    after = {g.name: g for g in load_stack(after_dir, stack).gateways}
    gateways = []
    for name, now, then, pinned, rotation_kept in restored:
        result = after[name]
        changed = tuple(
            k for k in IMAGES if getattr(now.args.images, k) != getattr(result.args.images, k)
        )
        differs = [
            k for k in IMAGES if getattr(result.args.images, k) != getattr(then.args.images, k)
        ]
        if differs:
            notes.append(
                f"{name}: its {', '.join(differs)} image(s) will not be what they were at"
                f" {commit[:12]} (the release's file or the cluster's mirrors changed since)"
            )
        gateways.append(
            Restored(
                name=name,
                path=now.source,
                release_before=now.release,
                release_after=result.release,
                pinned=pinned,
                images=changed,
                rotation_kept=rotation_kept,
                restored=now.source in files,
            )
        )
    rotated = [g.name for g in gateways if g.rotation_kept]
    if rotated:
        notes.append(f"{', '.join(rotated)}: {ROTATION_NOTE}")
    return Rollback(
        stack=stack,
        commit=commit,
        head=head,
        files=files,
        gateways=tuple(gateways),
        bindings=tuple(bindings),
        notes=tuple(notes),
    )


def report(rollback: Rollback) -> list[str]:
    """What the command prints (and the commit message's body)."""
    short = rollback.commit[:12]
    if not rollback.changed:
        return [f"{rollback.stack}: already as at {short}; nothing to roll back"]
    lines = [f"rollback of {rollback.stack} to {short} (from HEAD {rollback.head[:12]}):"]
    for cluster, now, then in rollback.bindings:
        lines.append(
            f"  {promote.CLUSTERS_KEY}.{cluster}.release: {now or '(none)'} → {then} (moved back)"
        )
    for g in rollback.gateways:
        if not g.restored and not g.images:
            lines.append(f"  {g.name}: unchanged (release {g.release_after or '(none)'})")
            continue
        how = " (pinned: spec.release)" if g.pinned else ""
        images = f" [{', '.join(g.images)}]" if g.images else " [no image changes]"
        lines.append(
            f"  {g.name}: {g.path} as at {short}; release {g.release_before or '(none)'} →"
            f" {g.release_after or '(none)'}{how}{images}"
        )
    lines += [f"  note: {n}" for n in rollback.notes]
    return lines

"""``gatewayctl diff``: both sides of each stack rendered, compared, and the report written
(the package docstring tells the whole flow)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gatewayctl import lazy
from gatewayctl.diff import decommission, risks, rotation_risks
from gatewayctl.diff import report as markdown
from gatewayctl.diff.compare import StackDiff, compare
from gatewayctl.diff.operations import REPLACE_FLAG
from gatewayctl.diff.plan import urn_key
from gatewayctl.diff.repository import base_checkout, lock_differs, resolve_base
from gatewayctl.diff.sides import cache_key, head_side, missing_head, rendering_base
from gatewayctl.engine import parallel
from gatewayctl.errors import InvalidInputError, Problem
from gatewayctl.inputs.stackfile import all_stacks

if TYPE_CHECKING:
    from gatewayctl.resolve import preparation

__all__ = ["Result", "run"]

LOCK_FILE = "uv.lock"


@dataclass(frozen=True, kw_only=True)
class Result:
    report: str
    diffs: tuple[StackDiff, ...]
    commit: str = ""
    """The base commit the ref named."""
    notes: tuple[str, ...] = ()
    """The report's notes about the whole diff (the dependencies' note)."""
    uncommitted: tuple[risks.Uncommitted, ...] = ()
    """Declarations and stack files of the working tree git does not hold as they are."""
    refused: tuple[decommission.Refusal, ...] = ()
    """Removals that lose the only key of a retained database, unrecorded
    (:mod:`.decommission`): the report is written, and the command exits refused."""

    @property
    def changed(self) -> bool:
        return any(d.changed for d in self.diffs)


def _incremental(
    root: Path,
    commit: str,
    present: Sequence[preparation.Prepared],
    cached: Mapping[str, Mapping[str, str]],
) -> dict[str, parallel.StackRender]:
    """The working-tree render of each stack that can reuse its cached base render."""
    if not any(p.loaded.name in cached for p in present):
        return {}
    # the program and its SDKs

    changed = lazy.incremental.changed_paths(root, commit)
    rendered = {}
    for item in present:
        stack = item.loaded.name
        names = lazy.incremental.affected(item, changed) if stack in cached else None
        if names is None:
            continue
        try:
            rendered[stack] = lazy.incremental.head_render(item, cached[stack], names)
        except lazy.incremental.NotReusableError:
            continue  # rendered whole, with the others
    return rendered


def run(
    root: Path,
    head: Sequence[preparation.Prepared],
    ref: str,
    *,
    every_stack: bool = False,
    limit: int | None = None,
    use_cache: bool = True,
    replace: Sequence[str] = (),
) -> Result:
    """Diff the validated working-tree stacks ``head`` against their render at ``ref``.

    With ``every_stack``, stacks that exist only at ``ref`` are diffed too (against an empty
    working-tree side). Raises BaseRefError for a ref that names no commit and DiffError when
    git or the base render fails. The base side's render is cached under ``build/`` unless
    ``use_cache`` is false (``gatewayctl.diff.cache``). ``limit``: the report's bound
    (:func:`.report.build_report`; 0 for none). ``replace``: resources (URN or logical name)
    to predict as ``pulumi up --replace`` would replace them; one that no stack of the
    working tree has is an InvalidInputError.
    """
    prepared = {p.loaded.name: p for p in head}
    commit = resolve_base(root, ref)
    key = cache_key(root, commit, LOCK_FILE) if use_cache else None
    with base_checkout(root, commit) as base_root:
        names = sorted(set(prepared) | (set(all_stacks(base_root)) if every_stack else set()))
        # The base renders in a subprocess (or comes from the cache) while the working tree
        # renders here, in workers of its own when there are several stacks.
        with rendering_base(base_root, names, key, root) as base:
            present = [prepared[stack] for stack in names if stack in prepared]
            # With the base cached, a stack whose change is only some declarations renders
            # only those gateways (gatewayctl.diff.incremental).
            rendered = _incremental(root, commit, present, base.cached())
            rest = [p for p in present if p.loaded.name not in rendered]
            jobs = parallel.default_jobs(len(rest))
            rendered |= {r.prepared.loaded.name: r for r in parallel.render_stacks(rest, jobs=jobs)}
            bases = base.result()
        heads = {
            stack: head_side(rendered[stack]) if stack in rendered else missing_head(stack)
            for stack in names
        }
        new_pins = lock_differs(base_root, root, LOCK_FILE)
    # Every stack's secrets are scrubbed from every stack's section.
    secrets = frozenset[str]().union(*(s.secrets for s in (*bases.values(), *heads.values())))
    diffs = [compare(stack, bases[stack], heads[stack], secrets, replace) for stack in names]
    diffs = _with_waves(root, prepared, diffs)
    sources = {g.name: g.source for p in head for g in p.loaded.gateways}
    problems = rotation_risks.lowered([c for d in diffs for c in d.rotations], sources)
    if problems:
        raise InvalidInputError(problems)
    directories = {name: p.loaded.config.declarations_dir for name, p in prepared.items()}
    diffs, refused = decommission.apply(root, diffs, directories)
    replaced = {(o.type, o.name) for d in diffs for o in d.operations if REPLACE_FLAG in o.because}
    unknown = [n for n in replace if not any(n == k[1] or urn_key(n) == k for k in replaced)]
    if unknown:
        raise InvalidInputError(
            [
                Problem(
                    "--replace",
                    n,
                    "no resource of that URN or name in the working tree's"
                    f" {'stacks' if len(names) > 1 else 'stack'} {', '.join(names)}",
                )
                for n in unknown
            ]
        )
    target = "--all" if every_stack else " ".join(sorted(prepared))
    notes = (markdown.dependencies_note(ref, LOCK_FILE),) if new_pins else ()
    uncommitted = risks.uncommitted(root)
    report = markdown.build_report(
        diffs,
        base_label=markdown.base_label(ref, commit),
        command=f"python -m gatewayctl diff {target} --base {ref}",
        limit=limit,
        notes=notes,
        uncommitted=uncommitted,
    )
    return Result(
        report=report,
        diffs=tuple(diffs),
        commit=commit,
        notes=notes,
        uncommitted=uncommitted,
        refused=tuple(refused),
    )


def _with_waves(
    root: Path, prepared: Mapping[str, preparation.Prepared], diffs: list[StackDiff]
) -> list[StackDiff]:
    """Each stack diff with the rollout waves its change goes through, for the stacks the
    rollout plan names (``deploy/rollout.yaml``, :mod:`gatewayctl.resolve.waves`)."""

    try:
        plans = lazy.rollout.read(root)
    except InvalidInputError:
        return diffs  # `validate` names the plan's problems; the diff shows no waves
    found = []
    for diff in diffs:
        if diff.stack in plans and diff.stack in prepared and diff.rendered_changed:
            touched: set[str | None] = {o.gateway for o in diff.operations}
            touched |= {g.name for g in diff.gateways}
            planned = lazy.waves.plan(prepared[diff.stack].loaded, plans[diff.stack])
            diff = dataclasses.replace(diff, waves=tuple(lazy.waves.lines(planned, touched)))
        found.append(diff)
    return found

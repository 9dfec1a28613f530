"""The report's first section: what a reviewer must not miss (issue 25 item 1).

Always kept whatever the report's size bound, across every stack of the diff, in this order:

- **decommissions**: removals that lose the only key of a retained database, refused or as
  ``deploy/decommissions.yaml`` records them (:mod:`.decommission`);
- **destroys**: removed gateways (their namespace and every object in it), other removed
  namespaces, and the PostgreSQL databases the next ``up`` drops (:mod:`.losses`);
- **rotates**: each raised ``spec.rotation`` counter, with what restarts and what clients and
  users must do (:mod:`.rotation`);
- **replaces**: every resource the providers replace (:mod:`.operations`), delete-before-replace
  marked as an outage;
- **Retain -> Delete**: databases that stop being retained (:func:`.losses.deletion_flips`);
- **grants**: every principal that gains a role (:mod:`.access`), groups flagged (all their
  members gain it, and Keycloak hands a group's roles to its subgroups' members too), top-level
  groups as broad;
- **adopts**: added gateways that take over a namespace of the upstream controller;
- **not committed**: declarations (``gateways/``), stack files and the decommission records
  (``deploy/decommissions.yaml``) of the working tree that git
  does not hold as they are: the report includes them, the pull request does not. Their paths
  are the project's (below its repository's root too), each a code span (:func:`code_span`):
  a file name is never Markdown.

Each kind lists at most :data:`RISK_ROWS` lines and counts the rest, so the section stays small.
Data in (:class:`~.compare.StackDiff`, :class:`Uncommitted`), Markdown out; :func:`uncommitted`
asks git.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from gatewayctl.diff import repository
from gatewayctl.diff.compare import StackDiff
from gatewayctl.diff.operations import REPLACE_FLAG
from gatewayctl.diff.rotation_risks import risk_lines
from gatewayctl.errors import printable

RISK_ROWS = 20
"""Lines per kind of risk before the rest is counted."""
VOCABULARY = (
    "_Objects_ are the Kubernetes manifests of the render; _resources_ are the entries of the"
    " Pulumi plan: every object is one, and so are the tls, postgresql, random and keycloak"
    " resources."
)
"""The report's one vocabulary, said once under the risks."""
NO_RISK = (
    "None: nothing is destroyed, left behind or replaced, no database stops being retained, no"
    " one gains a role, nothing is adopted and every declaration is committed."
)
DECLARATIONS = ("gateways/",)
"""Where declarations live; with the stack files (``Pulumi.<stack>.yaml``)."""
RECORDS = "deploy/decommissions.yaml"
"""The decommission records (:mod:`gatewayctl.inputs.decommissions`): an input of the diff."""


@dataclass(frozen=True, kw_only=True)
class Uncommitted:
    """A declaration or stack file whose working-tree content is not in ``HEAD``."""

    path: str
    state: str
    """``untracked``, ``modified``, ``added`` (staged, not committed) or ``deleted``."""


_STATES = {"?": "untracked", "A": "added", "D": "deleted", "M": "modified", "R": "renamed"}


def _declaration(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    top = "/" not in path and name.startswith("Pulumi.") and name.endswith((".yaml", ".yml"))
    return path.startswith(DECLARATIONS) or top or path == RECORDS


def uncommitted(root: Path) -> tuple[Uncommitted, ...]:
    """The declarations and stack files ``git status`` reports under ``root`` (untracked files
    git ignores are not), their paths relative to ``root``: git's porcelain paths are the
    repository's, and a project may sit below its repository's root. Empty outside a
    repository: the diff fails there anyway."""
    try:
        prefix = repository.git(root, "rev-parse", "--show-prefix")  # "" at the top
        status = repository.git(
            root,
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--no-renames",
            "--",
            ".",
            strip=False,
        )
    except repository.DiffError:
        return ()
    found = []
    for record in status.split("\0"):
        if len(record) < 4:
            continue
        code, path = record[:2], record[3:]
        if not path.startswith(prefix):
            continue
        path = path[len(prefix) :]
        if not _declaration(path):
            continue
        letter = "?" if code == "??" else (code[1] if code[1] != " " else code[0])
        found.append(Uncommitted(path=path, state=_STATES.get(letter, "modified")))
    return tuple(sorted(found, key=lambda u: u.path))


def _broad(principal: str) -> str:
    """The flag of a principal gaining a role: groups give it to all their members."""
    if not principal.startswith("group:"):
        return ""
    path = principal.removeprefix("group:").strip("/")
    if "/" not in path:
        return " (**broad**: a top-level group; every member and every subgroup's member gains it)"
    return " (a group: every member and every subgroup's member gains it)"


def _capped(lines: list[str]) -> list[str]:
    if len(lines) <= RISK_ROWS:
        return lines
    return [*lines[:RISK_ROWS], f"- ... and {len(lines) - RISK_ROWS} more"]


def _destroys(diff: StackDiff) -> list[str]:
    where = f"stack `{diff.stack}`"
    removed = [g for g in diff.gateways if g.status == "removed"]
    lines = [
        f"- {where}: gateway `{g.name}` is removed: namespace `{g.namespace}` on cluster"
        f" `{g.cluster}` and every object in it are deleted"
        for g in removed
    ]
    gone = {str(g.namespace) for g in removed}
    namespaces = sorted(
        name
        for o in diff.objects
        if o.status == "removed" and o.kind == "Namespace"
        for name in [_name(o.old)]
        if name not in gone
    )
    lines += [
        f"- {where}: Namespace `{name}` is deleted, with every object in it" for name in namespaces
    ]
    lines += [f"- {where}: **data loss**: {loss}" for loss in diff.data_loss]
    return lines


def _left(diff: StackDiff) -> list[str]:
    return [f"- stack `{diff.stack}`: {line}" for line in diff.left_behind]


def _name(manifest: str) -> str:
    """``metadata.name`` of a rendered manifest (the render writes one object per file)."""
    try:
        document = yaml.safe_load(manifest)
    except yaml.YAMLError:
        return "?"
    metadata = document.get("metadata") if isinstance(document, dict) else None
    name = metadata.get("name") if isinstance(metadata, dict) else None
    return name if isinstance(name, str) else "?"


def _replaces(diff: StackDiff) -> list[str]:
    lines = []
    for item in diff.operations:
        if item.op == "update":
            continue
        who = f"gateway `{item.gateway}`" if item.gateway else "the stack"
        what = f"{item.type.rsplit(':', 1)[-1]} `{item.name}`"
        because = ", ".join(f"`{p}`" for p in item.because[:4])
        if item.op == "replace-delete-first":
            how = "**delete-before-replace: an outage** until the new one is ready"
        elif item.op == "replace":
            how = "replaced (create-before-delete)"
        else:
            how = "no prediction rule: read the preview"
        reason = (
            "asked with `--replace`" if item.because == (REPLACE_FLAG,) else f"{because} changes"
        )
        lines.append(f"- stack `{diff.stack}`, {who}: {what} {how} ({reason})")
    return lines


def _grants(diff: StackDiff) -> list[str]:
    return [
        f"- stack `{diff.stack}`, gateway `{c.gateway}`: `{c.principal}` gains"
        f" **{c.role}**{_broad(c.principal)}"
        for c in diff.access
        if c.change == "gains"
    ]


def _adopts(diff: StackDiff) -> list[str]:
    return [
        f"- stack `{diff.stack}`: gateway `{g.name}` **adopts** namespace `{g.namespace}` on"
        f" cluster `{g.cluster}` from the upstream controller: the objects there are taken over,"
        " not created (`gatewayctl import-file` writes the import file)"
        for g in diff.gateways
        if g.status == "added" and g.adopted
    ]


def code_span(text: str) -> str:
    """``text`` as one Markdown code span, whatever it holds (a file name may hold anything but
    ``/`` and NUL): control characters and line breaks as escapes (:func:`printable`), so no
    line of its own can start a heading; a fence one backtick longer than its longest run of
    backticks, padded by a space where the text would touch the fence (CommonMark 0.31,
    "Code spans"), so it cannot close early. Inside a code span nothing is markup: no emphasis,
    link or HTML."""
    shown = printable(text)
    longest = max((len(run) for run in re.findall(r"`+", shown)), default=0)
    fence = "`" * (longest + 1)
    spaced = shown.startswith(" ") and shown.endswith(" ") and shown.strip() != ""
    pad = " " if shown.startswith("`") or shown.endswith("`") or spaced else ""
    return f"{fence}{pad}{shown}{pad}{fence}"


def _uncommitted(files: Sequence[Uncommitted]) -> list[str]:
    return [
        f"- {code_span(u.path)} ({u.state}): this report includes it as the working tree has"
        " it; the pull request does not until it is committed"
        for u in files
    ]


def section(diffs: Sequence[StackDiff], files: Sequence[Uncommitted] = ()) -> str:
    """The risks section, or "" when no stack changed and nothing is uncommitted."""
    if not any(d.changed for d in diffs) and not files:
        return ""
    kinds = (
        (
            "Decommissions",
            [f"- stack `{d.stack}`: {line}" for d in diffs for line in d.decommissions],
        ),
        ("Destroys", [line for d in diffs for line in _destroys(d)]),
        ("Leaves behind", [line for d in diffs for line in _left(d)]),
        ("Rotates", [line for d in diffs for line in risk_lines(d.stack, d.rotations)]),
        ("Replaces", [line for d in diffs for line in _replaces(d)]),
        (
            "Retain -> Delete",
            [f"- stack `{d.stack}`, {flip}" for d in diffs for flip in d.delete_flips],
        ),
        ("Grants a role", [line for d in diffs for line in _grants(d)]),
        ("Adopts", [line for d in diffs for line in _adopts(d)]),
        ("Not committed", _uncommitted(files)),
    )
    lines = ["## Risks", ""]
    found = [(title, items) for title, items in kinds if items]
    for title, items in found:
        lines += [f"**{title}** ({len(items)}):", "", *_capped(items), ""]
    if not found:
        lines += [NO_RISK, ""]
    lines += [VOCABULARY, ""]
    return "\n".join(lines) + "\n"

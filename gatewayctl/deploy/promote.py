"""``python -m gatewayctl promote <release> --to <stack>[/<cluster>]``: move a binding.

The stack file is edited as text, not re-serialised, so its comments, key order, quoting and
layout stay byte for byte; only the binding changes: the value of the cluster's own
``release:`` key, or a new ``release: <name>`` line right under the cluster's key when it has
none. Where that key sits is read from PyYAML's node marks (``yaml.compose``) after the strict
reader has accepted the file; the edited text is read back and must be the same config with
only those bindings changed, and the stack with the new bindings must validate (every rule of
``validate``, the releases' history included) before anything is written. The file is then
replaced whole in one rename (:func:`write`), never half-written.

What rolls: a gateway whose resolved images (after its release, its own overrides and the
mirrors) differ between the two bindings. A canary that pins its release, or a gateway whose
overrides cover every image that changes, stays.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, ScalarNode

from gatewayctl.deploy import textedit
from gatewayctl.deploy.textedit import is_alias as _is_alias
from gatewayctl.deploy.textedit import line_offset as _line_offset
from gatewayctl.deploy.textedit import value as _value
from gatewayctl.errors import InvalidInputError, Problem, ToolError, UsageError
from gatewayctl.inputs.environment import KEY as ENVIRONMENT_KEY
from gatewayctl.inputs.environment import environment_file
from gatewayctl.inputs.release_files import RELEASES_DIR, known, load_releases
from gatewayctl.inputs.stackfile import PROJECT, all_stacks, read_stack_config, requested_stacks
from gatewayctl.inputs.yamlfile import parse_yaml_mapping
from gatewayctl.resolve import preparation
from gatewayctl.resolve.release_bindings import history_problems
from gatewayctl.resolve.resolved import LoadedStack, ResolvedGateway
from gatewayctl.resolve.stack import load_stack

CLUSTERS_KEY = f"{PROJECT}:clusters"
RELEASE_KEY = "release"


@dataclass(frozen=True, kw_only=True)
class Move:
    """One gateway's images before and after the promotion."""

    gateway: str
    cluster: str
    before: str | None
    """Its release before (None: no release)."""
    after: str | None
    changed: tuple[str, ...]
    """The images that change (gateway, supervisor, sandbox); empty: it does not roll."""
    reason: str = ""
    """Why it stays, when it does."""


@dataclass(frozen=True, kw_only=True)
class Promotion:
    stack: str
    path: str
    release: str
    clusters: tuple[tuple[str, str | None], ...]
    """(cluster, release before) of every cluster the promotion binds."""
    text: str
    """The stack file as it will be written (the same text when nothing changes)."""
    moves: tuple[Move, ...]

    @property
    def changed(self) -> bool:
        return any(before != self.release for _, before in self.clusters)


# --- target ------------------------------------------------------------------------------------


def parse_target(root: Path, target: str) -> tuple[str, str | None]:
    """``stack`` or ``stack/cluster``; an unknown stack is a problem (exit 2)."""
    stack, _, cluster = target.partition("/")
    if not stack:
        known = ", ".join(all_stacks(root)) or "none"
        raise UsageError(
            f"--to {target!r} names no stack: write STACK or STACK/CLUSTER (the stacks here are"
            f" {known})"
        )
    # As every command names a stack: by its file (``Pulumi.<stack>.yaml``).
    requested_stacks(root, stack)
    return stack, cluster if "/" in target else None


# --- editing -----------------------------------------------------------------------------------


def _scalar(name: str) -> str:
    """``name`` as a YAML scalar that reads back as that string (``1.10`` would be a number)."""
    return name if yaml.safe_load(name) == name else f'"{name}"'


def _refuse(path: str, field: str, why: str) -> InvalidInputError:
    return InvalidInputError(
        [Problem(path, field, f"{why}; edit the binding by hand ({RELEASE_KEY}: <name>)")]
    )


def edit_bindings(
    text: str, path: str, clusters: Sequence[str], release: str, comment: str = ""
) -> str:
    """``text`` with ``clusters.<c>.release`` set to ``release`` for each cluster, every other
    byte kept; a ``comment`` (one ``# ...`` line) goes on a line of its own above each."""
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    config = _value(root, "config") if isinstance(root, MappingNode) else None
    section = (
        _value(config[1], CLUSTERS_KEY) if config and isinstance(config[1], MappingNode) else None
    )
    if section is None or not isinstance(section[1], MappingNode) or _is_alias(*section):
        raise _refuse(path, CLUSTERS_KEY, "the clusters are not written out as a block mapping")
    newline = textedit.newline(text)
    edits: list[tuple[int, int, str]] = []
    for cluster in clusters:
        field = f"{CLUSTERS_KEY}.{cluster}"
        found = _value(section[1], cluster)
        if found is None or _is_alias(*found):
            raise _refuse(path, field, "the cluster is not written out in the stack file")
        key, body = found
        if not isinstance(body, MappingNode) or body.flow_style or not body.value:
            raise _refuse(path, field, "the cluster's settings are not a block mapping")
        own = _value(body, RELEASE_KEY)
        if own is not None:
            if _is_alias(*own) or not isinstance(own[1], ScalarNode):
                raise _refuse(path, f"{field}.{RELEASE_KEY}", "the binding is not a plain value")
            if text[own[1].start_mark.index : own[1].start_mark.index + 1] == "&":
                # Replacing the value would drop its anchor, and every `*alias` of it with it.
                raise _refuse(
                    path,
                    f"{field}.{RELEASE_KEY}",
                    "the binding carries a YAML anchor (&name) that other values may refer to",
                )
            if comment:  # above the key's line, at its indentation
                at = _line_offset(text, own[0].start_mark.line)
                edits.append((at, at, f"{' ' * own[0].start_mark.column}{comment}{newline}"))
            start, end = own[1].start_mark.index, own[1].end_mark.index
            if start == end:  # `release:` with no value (null): the value goes after the colon
                start = end = text.index(":", own[0].end_mark.index) + 1
                edits.append((start, end, f" {_scalar(release)}"))
            else:
                edits.append((start, end, _scalar(release)))
        else:
            # A line of its own right under the cluster's key, indented as the cluster's first
            # key: the cluster's comments stay with the keys they describe.
            indent = body.value[0][0].start_mark.column
            line = key.end_mark.line + 1
            offset = _line_offset(text, line)
            above = f"{' ' * indent}{comment}{newline}" if comment else ""
            binding = f"{' ' * indent}{RELEASE_KEY}: {_scalar(release)}{newline}"
            edits.append((offset, offset, above + binding))
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    return text


def _expected(document: dict[str, Any], clusters: Sequence[str], release: str) -> dict[str, Any]:
    config = dict(document["config"])
    section = {name: dict(value) for name, value in config[CLUSTERS_KEY].items()}
    for cluster in clusters:
        section[cluster][RELEASE_KEY] = release
    config[CLUSTERS_KEY] = section
    return {**document, "config": config}


# --- promotion ---------------------------------------------------------------------------------


def _moves(before: LoadedStack, after: LoadedStack) -> tuple[Move, ...]:
    old: dict[str, ResolvedGateway] = {g.name: g for g in before.gateways}
    moves = []
    for gateway in after.gateways:
        previous = old[gateway.name]
        changed = tuple(
            which
            for which in ("gateway", "supervisor", "sandbox")
            if getattr(previous.args.images, which) != getattr(gateway.args.images, which)
        )
        reason = ""
        if not changed:
            if gateway.release_pinned:
                reason = f"pins {gateway.release} (spec.release)"
            elif previous.release == gateway.release:
                reason = "its cluster is not promoted"
            else:
                reason = "its own images (spec.images) cover every image that changes"
        moves.append(
            Move(
                gateway=gateway.name,
                cluster=gateway.cluster,
                before=previous.release,
                after=gateway.release,
                changed=changed,
                reason=reason,
            )
        )
    return tuple(moves)


def promote(root: Path, release: str, target: str, comment: str = "") -> Promotion:
    """The promotion of ``release`` to ``target``, checked, not written; ``comment``: a line
    above each binding moved (an overridden soak, :mod:`.soak`)."""
    stack, cluster = parse_target(root, target)
    display, own = read_stack_config(root, stack, merge=False)
    shared = own.get(ENVIRONMENT_KEY)
    if shared is not None:
        raise InvalidInputError(
            [
                Problem(
                    display,
                    f"{PROJECT}:{ENVIRONMENT_KEY}",
                    f"the clusters of stack {stack!r} are in {environment_file(str(shared))},"
                    " shared by every stack of the environment: bind the release there"
                    f" (clusters.<cluster>.{RELEASE_KEY}), one change for all of them;"
                    " promote edits a stack file's own clusters",
                )
            ]
        )
    releases, problems = load_releases(root)
    if problems:
        raise InvalidInputError(problems)
    if release not in releases:
        raise InvalidInputError(
            [Problem(RELEASES_DIR, "", f"no release named {release!r}; {known(releases)}")]
        )
    display, raw = read_stack_config(root, stack)
    before = load_stack(root, stack, raw)
    clusters = sorted(before.config.clusters)
    if cluster is not None:
        if cluster not in clusters:
            raise InvalidInputError(
                [
                    Problem(
                        display,
                        CLUSTERS_KEY,
                        f"no cluster {cluster!r} in stack {stack!r}; it has {', '.join(clusters)}",
                    )
                ]
            )
        clusters = [cluster]
    history, _ = history_problems(root, releases)
    if history:
        raise InvalidInputError(history)
    bound = tuple((name, before.config.clusters[name].release) for name in clusters)
    text = (root / display).read_text(encoding="utf-8")
    moving = [name for name, current in bound if current != release]
    if moving:
        document = parse_yaml_mapping(text, display)
        text = edit_bindings(text, display, moving, release, comment)
        unsafe = ToolError(f"{display}: the binding could not be edited safely; edit it by hand")
        try:
            edited = parse_yaml_mapping(text, display)
        except InvalidInputError:
            # A problem of the text this command produced, not of the file as it is.
            raise unsafe from None
        if edited != _expected(document, moving, release):  # the edit is the binding, only
            raise unsafe
    # Every rule the render checks (declarations, bindings, secrets), on the text to write.
    after = preparation.offline_config(root, stack, text)[0]
    return Promotion(
        stack=stack,
        path=display,
        release=release,
        clusters=bound,
        text=text,
        moves=_moves(before, after),
    )


def write(root: Path, promotion: Promotion) -> None:
    """Replace the stack file in one rename (:func:`.textedit.replace`), when a binding moved."""
    if promotion.changed:
        textedit.replace(root, promotion.path, promotion.text, "edit the binding by hand")


def report(promotion: Promotion) -> list[str]:
    """What the command prints: the bindings moved, then each gateway that rolls or stays."""
    lines = []
    for name, before in promotion.clusters:
        where = f"{promotion.path}: {CLUSTERS_KEY}.{name}.{RELEASE_KEY}"
        if before == promotion.release:
            lines.append(f"{where}: already {promotion.release}; unchanged")
        else:
            lines.append(f"{where}: {before or '(none)'} → {promotion.release}")
    rolls = [m for m in promotion.moves if m.changed]
    stays = [m for m in promotion.moves if not m.changed]
    lines.append(f"{len(rolls)} gateway(s) will roll:")
    lines += [
        f"  {m.gateway} ({m.cluster}): {m.before or '(none)'} → {m.after} [{', '.join(m.changed)}]"
        for m in rolls
    ]
    if stays:
        lines.append(f"{len(stays)} gateway(s) stay:")
        lines += [f"  {m.gateway} ({m.cluster}): {m.reason}" for m in stays]
    return lines


def document(promotion: Promotion, *, dry_run: bool) -> dict[str, Any]:
    """``promote -o json|yaml``: what :func:`report` prints, as data. ``written``: the stack
    file was edited (not a dry run, and a binding moved)."""
    return {
        "stack": promotion.stack,
        "path": promotion.path,
        "release": promotion.release,
        "changed": promotion.changed,
        "dryRun": dry_run,
        "written": promotion.changed and not dry_run,
        "clusters": [
            {
                "cluster": name,
                "field": f"{CLUSTERS_KEY}.{name}.{RELEASE_KEY}",
                "before": before,
                "after": promotion.release,
                "changed": before != promotion.release,
            }
            for name, before in promotion.clusters
        ],
        "gateways": [
            {
                "name": m.gateway,
                "cluster": m.cluster,
                "before": m.before,
                "after": m.after,
                "rolls": bool(m.changed),
                "images": list(m.changed),
                "reason": m.reason or None,
            }
            for m in promotion.moves
        ],
    }

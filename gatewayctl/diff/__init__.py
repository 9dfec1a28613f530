"""Offline diff: what a change to the declarations or the program does to a stack's render.

``python -m gatewayctl diff <stack>|--all --base <git-ref>`` renders each stack twice and prints a
Markdown report for a pull-request comment:

- the **base** side is the ref checked out into a temporary ``git worktree`` and rendered by
  *the ref's own* program and declarations (``python -m gatewayctl render <stack> --out DIR -q``
  run inside the worktree with this interpreter); a ref without the stack, or without an
  offline render at all, is an empty side and the report says so;
- the **head** side is this working tree, rendered in process (``gatewayctl.render``).

The report starts with a summary that is always kept (gateways added/changed/removed from the
two plans, Kubernetes objects per kind from the manifest trees, other plan resources such as
tls, postgresql and random), then per-object unified diffs, within :data:`REPORT_LIMIT`
characters; what does not fit is counted in a note under the summary. Nothing is decrypted or
read from a backend: the render already redacts every secret. As a second guard, every value
in the two renders that equals a plaintext ``clusterSecrets`` value of either side is replaced
by the render's marker before anything is compared or formatted (:class:`Scrubber`: by value,
never by substring, so ``Config`` as a password leaves ``kind: ConfigMap`` alone). A secret
value that differs between the sides, plaintext or ``secure:`` ciphertext, is only said to
have changed (its summary line :data:`SECRETS_CHANGED`), and counts as a change.

An interrupt (SIGINT, SIGTERM) stops the base render and the git commands first, then removes
the worktree and the temporary directories (see ``gatewayctl.interrupts``).
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from components import tokens
from gatewayctl import interrupts, render
from gatewayctl.errors import ToolError, UsageError
from gatewayctl.inventory import all_stacks
from gatewayctl.scrub import MANIFESTS, Scrubber, scrub
from gatewayctl.secrets import is_secure
from gatewayctl.stackfile import PROJECT
from gatewayctl.yamlfile import SECRETS_KEY

REPORT_LIMIT = 60_000
"""Characters of the whole report (a GitHub comment holds 65,536)."""
GATEWAY_ROWS = 30
"""Gateway rows in the summary before the rest is counted."""
RESOURCE_LINES = 30
"""Lines of the other-resources section before the rest is counted."""
NAMES_LISTED = 8
"""Resource names listed per group of added or removed resources."""
RENDER_TIMEOUT = 900
"""Seconds the base render may take."""
_NOTE_RESERVE = 600
_PLAN = "plan.json"
_MANIFESTS = MANIFESTS
_COMPONENT_PREFIXES = (f"{tokens.PACKAGE}:", "pulumi:pulumi:")
_GATEWAY_TYPE = tokens.GATEWAY
SECRETS_CHANGED = f"{SECRETS_KEY} values changed (not shown)"
"""Summary line of a stack whose secret values (plaintext, or the ciphertext of ``secure:``
values) differ between the sides."""

Status = Literal["added", "changed", "removed"]
STATUSES: tuple[Status, ...] = ("added", "changed", "removed")


class DiffError(ToolError):
    """git or the base render failed: exit 1, with a message that holds no secret."""


class BaseRefError(UsageError):
    """The ``--base`` ref does not name a commit here: invalid input, exit 2."""


# --- the two sides --------------------------------------------------------------------------


SecretPath = tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class Side:
    """One side's rendered files (relative path → text); empty with ``note`` saying why.

    ``secrets`` are the plaintext ``clusterSecrets`` values to scrub from the report;
    ``secret_digests`` fingerprint each plaintext ``clusterSecrets`` value and each ``secure:``
    value of the stack's config by its path in the config, so a changed value (or ciphertext)
    is noticed though the render redacts it (see :func:`secrets_changed`).
    """

    files: Mapping[str, str]
    note: str | None = None
    secrets: frozenset[str] = frozenset()
    secret_digests: Mapping[SecretPath, str] = field(default_factory=dict)


def _git(root: Path, *args: str) -> str:
    try:
        done = interrupts.run(["git", "-C", str(root), *args], timeout=120)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise DiffError(f"git {args[0]}: {error}") from None
    if done.returncode != 0:
        message = done.stderr.strip().splitlines()
        raise DiffError(f"git {args[0]} failed: {message[-1] if message else done.returncode}")
    return done.stdout.strip()


def resolve_base(root: Path, ref: str) -> str:
    """The full commit id of ``ref``; BaseRefError if it names no commit in ``root``'s repo."""
    _git(root, "rev-parse", "--show-toplevel")  # not a repository: DiffError (exit 1)
    if ref.startswith("-"):
        raise BaseRefError(f"--base: {ref!r} is not a git ref")
    try:
        return _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except DiffError:
        raise BaseRefError(
            f"--base: {ref!r} names no commit in this repository"
            " (in CI, fetch the base branch: actions/checkout with fetch-depth: 0)"
        ) from None


@contextlib.contextmanager
def base_checkout(root: Path, commit: str) -> Iterator[Path]:
    """The project root as of ``commit``, in a temporary worktree removed afterwards, also
    when the process is interrupted (see ``gatewayctl.interrupts``)."""
    prefix = _git(root, "rev-parse", "--show-prefix")  # the project inside its repository
    common = root / _git(root, "rev-parse", "--git-common-dir")  # absolute stays absolute
    with interrupts.temporary_directory("stacks-diff-") as scratch:
        # Named after the temporary directory: git names its administrative directory
        # (.git/worktrees/<name>) after it, so that one is known to be ours.
        tree = Path(scratch) / Path(scratch).name

        def remove() -> None:
            # Twice forced: also a worktree still locked by an interrupted `worktree add`;
            # one whose directory is already gone is unregistered all the same. What an
            # interrupted `worktree add` left half made is not a worktree to git: removed here.
            with contextlib.suppress(DiffError):
                _git(root, "worktree", "remove", "--force", "--force", str(tree))
            admin = common / "worktrees" / tree.name
            shutil.rmtree(admin, ignore_errors=True)
            with contextlib.suppress(OSError):
                admin.parent.rmdir()  # if empty, as git leaves it

        with interrupts.on_interrupt(remove):
            try:
                _git(root, "worktree", "add", "--detach", "--quiet", str(tree), commit)
                yield tree / prefix
            finally:
                remove()


def read_tree(directory: Path) -> dict[str, str]:
    """Relative POSIX path → text of every file under ``directory`` (the marker aside)."""
    return {
        p.relative_to(directory).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(directory.rglob("*"))
        if p.is_file() and p.relative_to(directory).as_posix() != render.MARKER
    }


def _stack_config(project: Path, stack: str) -> dict[str, Any]:
    """The ``config`` mapping of ``Pulumi.<stack>.yaml`` in ``project``; best effort: empty if
    unreadable (the working tree's is validated before; the base's render says if it is not)."""
    try:
        document = yaml.safe_load((project / f"Pulumi.{stack}.yaml").read_text(encoding="utf-8"))
        config = document["config"]
    except Exception:
        return {}
    return config if isinstance(config, dict) else {}


def _plaintext(config: Mapping[str, Any]) -> frozenset[str]:
    """The plaintext values under ``clusterSecrets`` of a stack's config (``secure:`` values,
    ciphertext or the committed placeholders, are not plaintext)."""
    return frozenset(
        str(value)
        for _, value in _leaves(config.get(f"{PROJECT}:{SECRETS_KEY}"))
        if value is not None
        and not isinstance(value, bool)
        and not is_secure(value)
        and str(value).strip()
    )


def _leaves(value: Any, path: SecretPath = ()) -> Iterator[tuple[SecretPath, Any]]:
    """(path, leaf) of every scalar and every ``secure:`` value in ``value``."""
    if isinstance(value, dict) and not is_secure(value):
        for key, item in value.items():
            yield from _leaves(item, (*path, str(key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, (*path, str(index)))
    else:
        yield path, value


def stack_secrets(project: Path, stack: str) -> frozenset[str]:
    """Plaintext values under ``clusterSecrets`` of ``Pulumi.<stack>.yaml`` (best effort: an
    unreadable file or no secrets gives none).

    Only used to scrub them from the report; never printed.
    """
    return _plaintext(_stack_config(project, stack))


def _digest(value: Any) -> str:
    return hashlib.sha256(repr(value).encode("utf-8", "surrogatepass")).hexdigest()


def _digests(config: Mapping[str, Any]) -> dict[SecretPath, str]:
    """Config path → SHA-256 of every plaintext ``clusterSecrets`` value and of every
    ``secure:`` value (its ciphertext) anywhere in the stack's config.

    Only compared between the two sides, never printed: enough to tell that a value changed.
    A new ciphertext may hold the same value (Pulumi encrypts with a fresh nonce each time);
    offline there is no telling, so it counts as a change.
    """
    secrets_key = f"{PROJECT}:{SECRETS_KEY}"
    return {
        path: _digest(("secure", value["secure"]) if is_secure(value) else value)
        for path, value in _leaves(dict(config))
        if is_secure(value) or path[:1] == (secrets_key,)
    }


def stack_side(
    project: Path, stack: str, files: Mapping[str, str], note: str | None = None
) -> Side:
    """A side of ``stack`` with the secrets of its ``Pulumi.<stack>.yaml`` in ``project``."""
    config = _stack_config(project, stack)  # the stack file is read once per side
    return Side(files=files, note=note, secrets=_plaintext(config), secret_digests=_digests(config))


PACKAGES = ("gatewayctl", "stacks")
"""The tool's package at a base ref, newest name first: before the data/code split the package
was ``stacks`` (with the declarations inside it), and a pull request's base may predate it."""


def _base_package(project: Path) -> str | None:
    return next((p for p in PACKAGES if (project / p / "__main__.py").is_file()), None)


def _render_process(
    project: Path, package: str, target: Sequence[str], out: Path
) -> tuple[int, str]:
    """``python -m PACKAGE render TARGET --out OUT -q`` in ``project``, with this interpreter."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSAFEPATH"}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    try:
        done = interrupts.run(
            [sys.executable, "-m", package, "render", *target, "--out", str(out), "-q"],
            cwd=project,
            env=env,
            timeout=RENDER_TIMEOUT,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise DiffError(f"base render of {' '.join(target)}: {type(error).__name__}") from None
    return done.returncode, done.stderr


def render_base(project: Path, stacks: Sequence[str]) -> dict[str, Side]:
    """Render ``stacks`` with the base checkout's own program, in a subprocess.

    Several stacks that all exist at the base are rendered by one ``render --all`` (one
    interpreter start); if that reports invalid input, each stack is rendered on its own so
    only the invalid ones become empty sides.
    """
    package = _base_package(project)
    if package is None:
        note = "has no offline render (`python -m gatewayctl`)"
        return {s: stack_side(project, s, {}, note) for s in stacks}
    sides = {
        s: stack_side(project, s, {}, f"has no stack `{s}`")
        for s in stacks
        if not (project / f"Pulumi.{s}.yaml").is_file()
    }
    present = [s for s in stacks if s not in sides]
    with interrupts.temporary_directory("stacks-diff-render-") as scratch:
        out = Path(scratch)
        if len(present) > 1 and set(present) == set(all_stacks(project)):
            code, _ = _render_process(project, package, ["--all"], out / "all")
            if code == 0:
                for stack in present:
                    sides[stack] = stack_side(project, stack, read_tree(out / "all" / stack))
                return sides
        for stack in present:
            code, stderr = _render_process(project, package, [stack], out / stack)
            if code == 2:
                note = f"has invalid input for stack `{stack}` (its render exits 2)"
                sides[stack] = stack_side(project, stack, {}, note)
            elif code != 0:
                lines = scrub(stderr, stack_secrets(project, stack)).strip().splitlines()
                last = f": {lines[-1]}" if lines else ""
                raise DiffError(f"base render of {stack} exited {code}{last}")
            else:
                sides[stack] = stack_side(project, stack, read_tree(out / stack))
    return sides


def render_head(prepared: render.Prepared) -> Side:
    """Render a validated working-tree stack in process."""
    stack = prepared.loaded.name
    return stack_side(prepared.root, stack, render.execute(prepared).files)


# --- comparison -----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ObjectChange:
    """One Kubernetes object file added, changed or removed."""

    path: str
    kind: str
    status: Status
    old: str
    new: str


@dataclass(frozen=True, kw_only=True)
class GatewayChange:
    name: str
    status: Status
    detail: str


@dataclass(frozen=True, kw_only=True)
class ResourceChange:
    """A plan resource outside the manifests (tls, postgresql, random, providers...)."""

    type: str
    name: str
    status: Status
    fields: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class StackDiff:
    stack: str
    base_note: str | None
    head_note: str | None
    gateways: tuple[GatewayChange, ...]
    objects: tuple[ObjectChange, ...]
    resources: tuple[ResourceChange, ...]
    secrets_changed: bool = False
    """A plaintext ``clusterSecrets`` value differs (the render redacts it, so nothing else
    shows it)."""

    @property
    def rendered_changed(self) -> bool:
        return bool(self.gateways or self.objects or self.resources)

    @property
    def changed(self) -> bool:
        return self.rendered_changed or self.secrets_changed


def _kind(path: str, text: str) -> str:
    try:
        kind = yaml.safe_load(text).get("kind")
    except Exception:
        kind = None
    if isinstance(kind, str) and kind:
        return kind
    return path.rsplit("/", 1)[-1].split("-", 1)[0]


def _status(old: object | None, new: object | None) -> Status | None:
    if old is None:
        return None if new is None else "added"
    if new is None:
        return "removed"
    return None if old == new else "changed"


def compare_objects(base: Mapping[str, str], head: Mapping[str, str]) -> list[ObjectChange]:
    changes = []
    for path in sorted(set(base) | set(head)):
        if not path.startswith(_MANIFESTS):
            continue
        old, new = base.get(path), head.get(path)
        status = _status(old, new)
        if status is not None:
            text = new if new is not None else old or ""
            changes.append(
                ObjectChange(
                    path=path, kind=_kind(path, text), status=status, old=old or "", new=new or ""
                )
            )
    return changes


def _plan(files: Mapping[str, str], scrubber: Scrubber | None = None) -> dict[str, Any]:
    text = files.get(_PLAN)
    if text is None:
        return {}
    plan = json.loads(text)
    if not isinstance(plan, dict):
        return {}
    return scrubber.plan(plan, text) if scrubber is not None else plan


Key = tuple[str, str]


def _urn_key(urn: str | None) -> Key | None:
    """(type, name) of the resource a URN names: ``urn:pulumi:s::p::<a>$<b>::<name>``."""
    if not urn or "::" not in urn:
        return None
    head, name = urn.rsplit("::", 1)
    return head.rsplit("::", 1)[-1].rsplit("$", 1)[-1], name


def _resources(plan: Mapping[str, Any]) -> dict[Key, dict[str, Any]]:
    found: dict[Key, dict[str, Any]] = {}
    for resource in plan.get("resources", []):
        if isinstance(resource, dict):
            found[(str(resource.get("type")), str(resource.get("name")))] = resource
    return found


def _owner(key: Key, resources: Mapping[Key, Mapping[str, Any]]) -> str | None:
    """The gateway whose component (transitively) parents ``key``."""
    seen: set[Key] = set()
    current: Key | None = key
    while current is not None and current not in seen:
        if current[0] == _GATEWAY_TYPE:
            return current[1]
        seen.add(current)
        resource = resources.get(current)
        current = _urn_key(resource.get("parent")) if resource else None
    return None


def _changed_fields(old: Mapping[str, Any], new: Mapping[str, Any], *, inputs: bool) -> list[str]:
    fields = [
        name
        for name in sorted(set(old) | set(new))
        if name not in {"inputs", "type", "name"} and old.get(name) != new.get(name)
    ]
    if inputs:
        before, after = old.get("inputs") or {}, new.get("inputs") or {}
        fields += [
            f"inputs.{key}"
            for key in sorted(set(before) | set(after))
            if before.get(key) != after.get(key)
        ]
    return fields


def _is_component(type_: str) -> bool:
    return type_.startswith(_COMPONENT_PREFIXES)


def compare_plans(
    base: Mapping[str, Any], head: Mapping[str, Any]
) -> tuple[list[GatewayChange], list[ResourceChange]]:
    old_res, new_res = _resources(base), _resources(head)
    touched: dict[str, list[str]] = {}
    resources: list[ResourceChange] = []
    for key in sorted(set(old_res) | set(new_res)):
        old, new = old_res.get(key), new_res.get(key)
        status = _status(old, new)
        if status is None or _is_component(key[0]):
            continue
        owner = _owner(key, new_res if new is not None else old_res)
        if owner is not None:
            touched.setdefault(owner, []).append(f"{key[0].rsplit(':', 1)[-1]} `{key[1]}`")
        kubernetes = key[0].startswith("kubernetes:")
        fields: list[str] = []
        if old is not None and new is not None:
            # A Kubernetes object's inputs are its manifest, diffed in full below.
            fields = _changed_fields(old, new, inputs=not kubernetes)
            if not fields:
                continue
        elif kubernetes:
            continue
        resources.append(
            ResourceChange(type=key[0], name=key[1], status=status, fields=tuple(fields))
        )

    def by_name(plan: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        return {str(g.get("name")): g for g in plan.get("gateways", []) if isinstance(g, dict)}

    old_gw, new_gw = by_name(base), by_name(head)
    gateways: list[GatewayChange] = []
    for name in sorted(set(old_gw) | set(new_gw)):
        old, new = old_gw.get(name), new_gw.get(name)
        status = _status(old, new)
        if old is not None and new is not None:
            fields = [k for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]
            parts = ["plan: " + ", ".join(f"`{f}`" for f in fields)] if fields else []
            if name in touched:
                shown = touched[name][:NAMES_LISTED]
                more = len(touched[name]) - len(shown)
                parts.append(
                    f"{len(touched[name])} resource(s): "
                    + ", ".join(shown)
                    + (f" and {more} more" if more else "")
                )
            if not parts:
                continue
            status, detail = "changed", "; ".join(parts)
        else:
            entry = new if new is not None else old or {}
            detail = (
                f"cluster `{entry.get('cluster')}`, namespace `{entry.get('namespace')}`,"
                f" address `{entry.get('address') or '-'}`"
            )
        assert status is not None
        gateways.append(GatewayChange(name=name, status=status, detail=detail))
    return gateways, resources


def secrets_changed(base: Side, head: Side) -> bool:
    """Whether a secret value differs between two rendered sides: a plaintext
    ``clusterSecrets`` value, or the ciphertext of a ``secure:`` value (also one that replaces a
    plaintext value, or the reverse).

    Only what both sides have is compared: an empty side (with a note) shows every object as
    added or removed already, and a value present on one side only is a new or dropped key,
    not a changed one; but a ``secure:`` object on one side split into values on the other (or
    the reverse) is a change. Sides built without digests fall back to their scrub sets, when
    both have one.
    """
    if base.note is not None or head.note is not None:
        return False
    old, new = base.secret_digests, head.secret_digests
    if old and new:
        if any(old[path] != new[path] for path in old.keys() & new.keys()):
            return True
        return any(  # reshaped: one side's value is a prefix of the other's paths
            len(a) != len(b) and a[: len(b)] == b[: len(a)] for a, b in itertools.product(old, new)
        )
    return bool(base.secrets and head.secrets and base.secrets != head.secrets)


def compare(stack: str, base: Side, head: Side, secrets: Iterable[str] = ()) -> StackDiff:
    """What changed from ``base`` to ``head``, every value equal to a secret of either side (or
    of ``secrets``: the other stacks') scrubbed first (see :class:`Scrubber`)."""
    scrubber = Scrubber(base.secrets | head.secrets | frozenset(secrets))
    gateways, resources = compare_plans(_plan(base.files, scrubber), _plan(head.files, scrubber))
    return StackDiff(
        stack=stack,
        base_note=base.note,
        head_note=head.note,
        gateways=tuple(gateways),
        objects=tuple(compare_objects(scrubber.files(base.files), scrubber.files(head.files))),
        resources=tuple(r for r in resources if not r.type.startswith("kubernetes:"))
        + tuple(r for r in resources if r.type.startswith("kubernetes:")),
        secrets_changed=secrets_changed(base, head),
    )


# --- the report -----------------------------------------------------------------------------


def _counts(items: Iterable[Any]) -> Counter[str]:
    return Counter(item.status for item in items)


def _totals(counts: Counter[str]) -> str:
    return ", ".join(f"{counts[s]} {s}" for s in STATUSES)


def _summary(diff: StackDiff, base_label: str) -> str:
    lines = [f"## Offline diff: stack `{diff.stack}`", ""]
    lines.append(f"Base {base_label} -> this working tree.")
    for side, note in (("The base", diff.base_note), ("The working tree", diff.head_note)):
        if note:
            lines.append(f"{side} {note}; its side is treated as empty.")
    lines.append("")
    if diff.secrets_changed:
        lines += [SECRETS_CHANGED, ""]
    if not diff.rendered_changed:
        lines += [
            "**No changes**: the rendered manifests and plan are the same."
            if not diff.secrets_changed
            else "The rendered manifests and plan are the same (the render redacts secrets).",
            "",
        ]
        return "\n".join(lines) + "\n"

    lines += [f"**Gateways:** {_totals(_counts(diff.gateways))}", ""]
    if diff.gateways:
        lines += ["| Gateway | Change | Details |", "|---|---|---|"]
        lines += [f"| `{g.name}` | {g.status} | {g.detail} |" for g in diff.gateways[:GATEWAY_ROWS]]
        if len(diff.gateways) > GATEWAY_ROWS:
            lines.append(f"| ... | | {len(diff.gateways) - GATEWAY_ROWS} more gateway(s) |")
        lines.append("")

    lines += [f"**Kubernetes objects:** {_totals(_counts(diff.objects))}", ""]
    if diff.objects:
        per_kind: dict[str, Counter[str]] = {}
        for obj in diff.objects:
            per_kind.setdefault(obj.kind, Counter())[obj.status] += 1
        lines += ["| Kind | Added | Changed | Removed |", "|---|---:|---:|---:|"]
        lines += [
            f"| {kind} | " + " | ".join(str(per_kind[kind][s]) for s in STATUSES) + " |"
            for kind in sorted(per_kind)
        ]
        lines.append("")

    lines += [
        f"**Other plan resources** (tls, postgresql, random, providers):"
        f" {_totals(_counts(diff.resources))}",
        "",
    ]
    return "\n".join(lines) + "\n"


def _resource_section(diff: StackDiff) -> str:
    if not diff.resources:
        return ""
    lines: list[str] = []
    groups: dict[tuple[Status, str], list[str]] = {}
    for res in diff.resources:
        if res.status == "changed":
            fields = ", ".join(f"`{f}`" for f in res.fields)
            lines.append(f"- changed `{res.type}` `{res.name}`: {fields}")
        else:
            groups.setdefault((res.status, res.type), []).append(res.name)
    for (status, type_), names in sorted(groups.items()):
        shown = ", ".join(f"`{n}`" for n in names[:NAMES_LISTED])
        more = f" and {len(names) - NAMES_LISTED} more" if len(names) > NAMES_LISTED else ""
        lines.append(f"- {status} {len(names)} `{type_}`: {shown}{more}")
    if len(lines) > RESOURCE_LINES:
        lines = [*lines[:RESOURCE_LINES], f"- ... {len(lines) - RESOURCE_LINES} more line(s)"]
    title = f"### Other plan resources: stack `{diff.stack}`"
    return "\n".join([title, "", *lines, ""]) + "\n"


def _fence(body: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    return "`" * max(3, longest + 1)


def _lines(text: str) -> list[str]:
    return [line if line.endswith("\n") else line + "\n" for line in text.splitlines(True)]


def object_diff(change: ObjectChange) -> str:
    """A unified diff of one object file, fenced for Markdown."""
    before = "/dev/null" if change.status == "added" else f"a/{change.path}"
    after = "/dev/null" if change.status == "removed" else f"b/{change.path}"
    body = "".join(
        difflib.unified_diff(
            _lines(change.old), _lines(change.new), fromfile=before, tofile=after, n=3
        )
    )
    fence = _fence(body)
    title = f"#### {change.status} {change.kind}: `{change.path}`"
    return f"{title}\n\n{fence}diff\n{body}{fence}\n\n"


_RANK: dict[str, int] = {"changed": 0, "added": 1, "removed": 2}


def build_report(
    diffs: Sequence[StackDiff],
    *,
    base_label: str,
    command: str,
    limit: int | None = None,
    notes: Sequence[str] = (),
) -> str:
    """The Markdown report, at most ``limit`` (default :data:`REPORT_LIMIT`) characters.

    ``notes`` (about the whole diff) come first; then the summaries. Both are always kept.
    Object diffs follow, each whole or not at all: changed objects first (what a reviewer most
    needs), then added, then removed; those that do not fit are counted in a note under the
    summaries.
    """
    limit = REPORT_LIMIT if limit is None else limit
    kept = "".join(f"> **Note:** {note}\n\n" for note in notes)
    kept += "".join(_summary(d, base_label) for d in diffs)
    kept += "".join(_resource_section(d) for d in diffs)
    candidates = sorted(
        ((_RANK[obj.status], index, obj.path), obj)
        for index, d in enumerate(diffs)
        for obj in d.objects
    )
    budget = limit - len(kept) - _NOTE_RESERVE
    chosen: dict[int, list[tuple[tuple[int, int, str], str]]] = {}
    omitted: Counter[str] = Counter()
    for key, obj in candidates:
        index = key[1]
        block = object_diff(obj)
        heading = 0 if index in chosen else len(_heading(diffs[index].stack))
        if len(block) + heading <= budget:
            chosen.setdefault(index, []).append((key, block))
            budget -= len(block) + heading
        else:
            omitted[obj.status] += 1
    body = "".join(
        _heading(diffs[index].stack) + "".join(block for _, block in sorted(blocks))
        for index, blocks in sorted(chosen.items())
    )
    note = ""
    if omitted:
        parts = ", ".join(f"{omitted[s]} {s}" for s in STATUSES if omitted[s])
        note = (
            f"> **Note:** {sum(omitted.values())} of {len(candidates)} object diffs omitted"
            f" ({parts}) to keep this report under {limit:,} characters; the summary above"
            f" is complete. Run `{command}` to see them all.\n\n"
        )
    report = kept + note + body
    if len(report) > limit:  # the summaries alone are too long: cut, and say so
        cut = f"\n\n> **Note:** report cut at {limit:,} characters.\n"
        report = report[: max(0, limit - len(cut))] + cut
    return report


def _heading(stack: str) -> str:
    return f"### Object diffs: stack `{stack}`\n\n"


_REPORT_HEADING = "## Offline diff: stack `"


def is_report(text: str) -> bool:
    """True for a report as :func:`build_report` writes it: notes or a stack summary first.
    ``--output`` overwrites only such a file."""
    starts = text.startswith((_REPORT_HEADING, "> **Note:** "))
    return starts and any(line.startswith(_REPORT_HEADING) for line in text.splitlines())


# --- the command ----------------------------------------------------------------------------

LOCK_FILE = "uv.lock"


def dependencies_note(base_root: Path, head_root: Path, ref: str) -> str | None:
    """Say so when ``ref`` pins other dependencies than the working tree.

    Both sides run on this tree's virtualenv, so a render change that comes from a dependency
    update itself (a provider SDK's defaults, say) is in neither side and not in the report.
    """

    def pins(root: Path) -> bytes | None:
        path = root / LOCK_FILE
        return path.read_bytes() if path.is_file() else None

    if pins(base_root) == pins(head_root):
        return None
    return (
        f"`{LOCK_FILE}` at `{ref}` differs from this working tree's. Both sides were rendered"
        " with this tree's dependencies, so what the dependency update itself changes in the"
        " render is not shown here."
    )


@dataclass(frozen=True, kw_only=True)
class Result:
    report: str
    diffs: tuple[StackDiff, ...]

    @property
    def changed(self) -> bool:
        return any(d.changed for d in self.diffs)


def run(
    root: Path,
    head: Sequence[render.Prepared],
    ref: str,
    *,
    every_stack: bool = False,
    limit: int | None = None,
) -> Result:
    """Diff the validated working-tree stacks ``head`` against their render at ``ref``.

    With ``every_stack``, stacks that exist only at ``ref`` are diffed too (against an empty
    working-tree side). Raises BaseRefError for a ref that names no commit and DiffError when
    git or the base render fails.
    """
    prepared = {p.loaded.name: p for p in head}
    commit = resolve_base(root, ref)
    with base_checkout(root, commit) as base_root:
        names = sorted(set(prepared) | (set(all_stacks(base_root)) if every_stack else set()))
        bases = render_base(base_root, names)
        heads = {
            stack: render_head(prepared[stack])
            if stack in prepared
            else Side(files={}, note=f"has no stack `{stack}`")
            for stack in names
        }
        lock_note = dependencies_note(base_root, root, ref)
    # Every stack's secrets are scrubbed from every stack's section.
    secrets = frozenset[str]().union(*(s.secrets for s in (*bases.values(), *heads.values())))
    diffs = [compare(stack, bases[stack], heads[stack], secrets) for stack in names]
    target = "--all" if every_stack else " ".join(sorted(prepared))
    report = build_report(
        diffs,
        base_label=f"`{ref}` (`{commit[:12]}`)",
        command=f"python -m gatewayctl diff {target} --base {ref}",
        limit=limit,
        notes=[lock_note] if lock_note else [],
    )
    return Result(report=report, diffs=tuple(diffs))

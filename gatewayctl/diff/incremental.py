"""The working-tree side of a diff rendered in proportion to the change (issue 23).

A pull request that changes declarations renders only the gateways those changes can affect;
every other gateway's output is taken from the base side's cached render, after checking it.
A gateway's resources depend on its declaration, the stack's config, the program, the lock file
and the releases (and the CA bundles the program reads), never on another gateway
(``gatewayctl.engine.shares``): so when nothing changed between the base and the working tree but
files of the stack's declarations directory, the gateways whose declaration files did not change
render as at the base.

Everything renders as before when anything else changed (``affected`` returns None): any file
outside the declarations directory except those no render reads (``IGNORED``), or when the base
side was not cached (then it renders anyway, at the same time as the working tree). The
stack-level resources always come from the working tree's own run.

Checked before use (``base_share``), else the whole stack renders: the cached render holds
``plan.json`` and, for every Kubernetes object of a reused gateway, the manifest file its plan
entry renders to; for the first :data:`SPOT_CHECKED` reused gateways (by name), with exactly
the text the render writes from that entry. Writing every reused object again only to compare
it cost two thirds of a one-gateway diff of 1,000 gateways: the cache itself checks each file's
SHA-256 against its manifest (:mod:`.cache`), and the base's render ran the program, lock file
and interpreter the working tree runs (the precondition above, and the cache key), so its text
is the text the render writes. The spot check catches what would still differ systematically
(the YAML emitter, say) at a cost that does not grow with the stack.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from components import tokens
from gatewayctl import ownership
from gatewayctl.diff.plan import decoded
from gatewayctl.engine import parallel, render, shares
from gatewayctl.engine.redaction import MANIFESTS
from gatewayctl.inputs.secrets import REDACTED
from gatewayctl.inputs.stackfile import PROJECT
from gatewayctl.inputs.yamlwrite import dump_yaml
from gatewayctl.resolve.preparation import Prepared

IGNORED = ("docs/", "tests/", "bench/", ".github/", "build/")
"""Directories no render reads: a change there leaves every gateway's render as it was."""
_STACK_URN_TYPE = "pulumi:pulumi:Stack"
SPOT_CHECKED = 2
"""Reused gateways whose every object is written again and compared with the cached text."""


class NotReusableError(Exception):
    """The cached base render cannot stand in for the gateways (the message says why)."""


def changed_paths(root: Path, commit: str) -> set[str]:
    """Files of the project (paths relative to ``root``) that differ between ``commit`` and the
    working tree: tracked changes, staged or not, and untracked files git does not ignore."""

    def git(*args: str) -> list[str]:
        done = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
        )
        return [line for line in done.stdout.splitlines() if line]

    tracked = git("diff", "--name-only", "--relative", "--no-renames", commit, "--")
    untracked = git("ls-files", "--others", "--exclude-standard")
    return {*tracked, *untracked}


def _ignored(path: str) -> bool:
    return path.startswith(IGNORED) or ("/" not in path and path.endswith(".md"))


def affected(prepared: Prepared, changed: set[str]) -> frozenset[str] | None:
    """The gateways of the working tree that ``changed`` can affect, or None: all of them
    (something outside the stack's declarations changed)."""
    directory = prepared.loaded.config.declarations_dir.rstrip("/") + "/"
    if any(not path.startswith(directory) and not _ignored(path) for path in changed):
        return None
    return frozenset(g.name for g in prepared.loaded.gateways if g.source in changed)


def _urn(stack: str, entry: Mapping[str, Any]) -> str:
    """The URN of a ``plan.json`` resource, as the engine makes it (``offline.RecordingMonitor
    .make_urn``): the parent's qualified type, then this one's; none for the stack's children."""
    parent = entry["parent"]
    qualified = entry["type"]
    if parent:
        parent_type = parent.split("::")[2]
        if parent_type != _STACK_URN_TYPE:
            qualified = f"{parent_type}${qualified}"
    return f"urn:pulumi:{stack}::{PROJECT}::{qualified}::{entry['name']}"


def _manifest_text(entry: Mapping[str, Any]) -> str:
    """What ``render.manifest_files`` writes for a Kubernetes object of the plan: the plan's
    inputs (already cleaned), a Secret's values redacted."""
    obj = dict(entry["inputs"])
    if obj.get("kind") == "Secret":
        for key in ("data", "stringData"):
            if isinstance(obj.get(key), dict):
                obj[key] = {k: REDACTED for k in obj[key]}
    return dump_yaml(obj)


def base_share(prepared: Prepared, files: Mapping[str, str], keep: set[str]) -> shares.Share:
    """The gateways ``keep`` as the cached base render ``files`` has them (see module)."""
    stack = prepared.loaded.name
    try:
        plan = decoded(files["plan.json"])
        entries = {_urn(stack, entry): entry for entry in plan["resources"]}
        gateways = {g["name"]: g for g in plan["gateways"]}
    except (KeyError, TypeError, ValueError, IndexError) as error:
        raise NotReusableError(f"the cached plan.json cannot be read ({error!r})") from None
    if missing := sorted(keep - set(gateways)):
        raise NotReusableError(f"the cached render has no gateway {missing[0]}")

    def ancestor_gateway(urn: str) -> str | None:
        parent = entries[urn]["parent"]
        while parent in entries:
            if entries[parent]["type"] == tokens.GATEWAY:
                return str(entries[parent]["name"])
            parent = entries[parent]["parent"]
        return None

    # A gateway's database owner's provider is a child of the stack (gatewayctl.ownership).
    stack_level = {
        urn
        for urn, entry in entries.items()
        if ownership.is_provider(entry["type"]) and entry["parent"] not in entries
    }
    owned = ownership.served(
        (urn, ancestor_gateway(dep) if dep in entries else None)
        for urn in stack_level
        for deps in entries[urn].get("inputDependencies", {}).values()
        for dep in deps
    )

    def gateway_of(urn: str) -> str | None:
        return owned.get(urn) or ancestor_gateway(urn)

    def cluster_of(entry: Mapping[str, Any]) -> str:
        provider = entry.get("provider")
        parent = entries[provider]["parent"] if provider in entries else None
        while parent in entries:
            if entries[parent]["type"] == tokens.CLUSTER:
                return str(entries[parent]["name"])
            parent = entries[parent]["parent"]
        raise NotReusableError(f"{entry['name']} has no cluster in the cached plan")

    checked = set(sorted(keep)[:SPOT_CHECKED])
    kept: dict[str, dict[str, Any]] = {}
    counts: dict[str | None, int] = {}
    manifests: dict[str, str] = {}
    for urn, entry in entries.items():
        gateway = (
            str(entry["name"])
            if entry["type"] == tokens.GATEWAY and entry["name"] in keep
            else gateway_of(urn)
        )
        if gateway not in keep:
            continue
        kept[urn] = entry
        if entry["type"] == tokens.GATEWAY:
            continue  # the component itself: not in its own count (render.resource_counts)
        counts[gateway] = counts.get(gateway, 0) + 1
        if not entry["type"].startswith("kubernetes:"):
            continue
        meta = entry["inputs"].get("metadata", {})
        path = (
            f"{MANIFESTS}{cluster_of(entry)}/"
            f"{meta.get('namespace') or render.CLUSTER_SCOPED}/"
            f"{entry['inputs']['kind'].lower()}-{meta['name']}.yaml"
        )
        text = files.get(path)
        if text is None:
            raise NotReusableError(f"the cached render has no {path}")
        if gateway in checked and text != _manifest_text(entry):
            raise NotReusableError(f"the cached {path} is not what its plan entry renders")
        manifests[path] = text
    facts = {
        name: [
            gateways[name]["namespace"],
            gateways[name]["hostname"],
            gateways[name]["address"],
            gateways[name]["database"],
            (gateways[name]["console"] or {}).get("address"),
        ]
        for name in keep
    }
    resources = {urn: render.entry_text(entry) for urn, entry in kept.items()}
    return shares.Share(manifests=manifests, resources=resources, facts=facts, counts=counts)


def head_render(
    prepared: Prepared, base_files: Mapping[str, str], names: frozenset[str]
) -> parallel.StackRender:
    """The working tree's render: the gateways ``names`` (and the stack-level resources) run
    here, the others taken from the base's cached render. Raises NotReusableError when the cache
    cannot stand in for them (the caller renders the whole stack)."""
    keep = {g.name for g in prepared.loaded.gateways} - names
    reused = base_share(prepared, base_files, keep)
    fresh = shares.execute_share(prepared, names)
    merged = shares.merge(prepared, [fresh, reused])
    # plan.json's gateway entries are built from the working tree's declarations and each
    # gateway's outputs (the reused ones' from the base's plan: the same outputs).
    return parallel.StackRender(
        prepared=prepared,
        files=merged.files,
        gateways=merged.gateways,
        resources=merged.resources,
    )

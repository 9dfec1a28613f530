"""Offline render (DESIGN §6): the real program under the mock runtime → manifests and a plan.

No Pulumi CLI, backend, cluster or secret is needed. What is written is what ``pulumi up``
would send: one YAML file per Kubernetes object under ``manifests/<cluster>/<namespace>/``
and ``plan.json`` with every resource's inputs. Secret values are redacted everywhere (keys
kept), output is byte-identical for the same inputs, and the output directory is replaced
whole only once everything has been rendered.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulumi

from components import tokens
from gatewayctl import inventory, program
from gatewayctl.console import console_cell, console_entry
from gatewayctl.errors import InvalidInputError, Problem
from gatewayctl.identity import access_entry
from gatewayctl.offline import OnRegister, RecordedResource, Recording, run_program
from gatewayctl.releases import history_problems
from gatewayctl.resolve import LoadedStack, load_stack
from gatewayctl.secrets import (
    KEYCLOAK_SECRET,
    REDACTED,
    SECURE_PLACEHOLDER,
    all_cluster_secrets,
    clean,
    plaintext_notes,
    replace_secure,
)
from gatewayctl.stackfile import PROJECT, read_stack_config
from gatewayctl.yamlfile import SECRETS_KEY, dump_yaml

CLUSTER_SCOPED = "_cluster"
_K8S_PROVIDER = "pulumi:providers:kubernetes"


@dataclass(frozen=True, kw_only=True)
class GatewaySummary:
    name: str
    cluster: str
    mode: str
    address: str | None
    resources: int
    release: str | None = None
    release_pinned: bool = False
    image_overrides: tuple[str, ...] = ()
    sign_in: str = "unset"
    """How people sign in: keycloak, oidc, none (declared) or unset (``gatewayctl.identity``)."""
    console: str | None = None
    """The web console's address, ``port-forward`` when it is not exposed, None without one."""


# --- config ---------------------------------------------------------------------------------


def keycloak_clusters(clusters: Any) -> list[str]:
    """The clusters of a raw ``clusters`` value that name a Keycloak server (their secrets need
    its admin client's); tolerant of a malformed value, which the stack's validation reports."""
    if not isinstance(clusters, dict):
        return []
    return sorted(
        (
            str(name)
            for name, cluster in clusters.items()
            if isinstance(cluster, dict)
            and isinstance(cluster.get("identity"), dict)
            and cluster["identity"].get("keycloak") is not None
        ),
    )


def _secret_problems(
    display: str, secrets: Any, clusters: list[str], keycloak: list[str]
) -> list[Problem]:
    try:
        all_cluster_secrets(secrets, clusters, display, keycloak)
    except InvalidInputError as error:
        return error.problems
    return []


def offline_config(
    root: Path, stack: str, text: str | None = None
) -> tuple[LoadedStack, dict[str, str], int, tuple[str, ...]]:
    """Validate the stack and build the config map a real ``pulumi up`` would hand the program;
    also count its ``secure:`` values and warn of its plaintext secrets. ``text``: the stack
    file's content about to be written (``promote``), instead of the file's.

    Declaration, config and secret problems are reported together.
    """
    display, raw = read_stack_config(root, stack, text)
    problems: list[Problem] = []
    try:
        loaded: LoadedStack | None = load_stack(root, stack, raw)
    except InvalidInputError as error:
        problems += error.problems
        loaded = None
    notes = plaintext_notes(loaded, raw.get(SECRETS_KEY)) if loaded is not None else ()
    counter = [0]
    raw = replace_secure(raw, counter)
    clusters = raw.get("clusters")
    names = sorted(clusters, key=str) if isinstance(clusters, dict) else []
    if raw.get(SECRETS_KEY) == SECURE_PLACEHOLDER:
        # The whole object is one `secure:` value: its shape is unknown offline.
        raw[SECRETS_KEY] = {
            name: {"dbAdminPassword": SECURE_PLACEHOLDER}
            | ({KEYCLOAK_SECRET: SECURE_PLACEHOLDER} if name in keycloak_clusters(clusters) else {})
            for name in names
        }
    if names:  # else the clusters are the problem: no secret can be matched to one
        problems += _secret_problems(
            display, raw.get(SECRETS_KEY), names, keycloak_clusters(clusters)
        )
    if problems or loaded is None:
        raise InvalidInputError(problems)
    config = {
        f"{PROJECT}:{key}": value if isinstance(value, str) else json.dumps(value)
        for key, value in raw.items()
    }
    return loaded, config, counter[0], notes


# --- the render -----------------------------------------------------------------------------


def manifest(resource: RecordedResource) -> dict[str, Any]:
    """The Kubernetes object as sent to the API server, secrets redacted."""
    obj: dict[str, Any] = clean(resource.inputs)
    if obj.get("kind") == "Secret":
        for key in ("data", "stringData"):
            if isinstance(obj.get(key), dict):
                obj[key] = {k: REDACTED for k in obj[key]}
    return obj


def _cluster_of(recording: Recording, resource: RecordedResource) -> str:
    provider = recording.resources.get(resource.provider or "")
    if provider is None or provider.type != _K8S_PROVIDER:
        raise RuntimeError(f"{resource.urn} has no cluster Kubernetes provider")
    cluster = recording.ancestor_name(provider, tokens.CLUSTER)
    if cluster is None:
        raise RuntimeError(f"provider {provider.urn} is not inside a Cluster")
    return cluster


def manifest_files(recording: Recording) -> dict[str, str]:
    """Relative path → YAML text of every Kubernetes object."""
    files: dict[str, str] = {}
    for resource in recording.resources.values():
        if not resource.type.startswith("kubernetes:") or not resource.custom:
            continue
        obj = manifest(resource)
        meta = obj.get("metadata", {})
        namespace = meta.get("namespace") or CLUSTER_SCOPED
        path = (
            f"manifests/{_cluster_of(recording, resource)}/{namespace}/"
            f"{obj['kind'].lower()}-{meta['name']}.yaml"
        )
        if path in files:
            raise RuntimeError(f"two objects render to {path}")
        files[path] = dump_yaml(obj)
    return files


def plan(loaded: LoadedStack, recording: Recording, facts: Mapping[str, Any]) -> dict[str, Any]:
    """The reviewable plan: gateways with their decisions, every resource with its inputs."""
    gateways = []
    for gateway in loaded.gateways:
        namespace, hostname, address, database, console_address = facts[gateway.name]
        gateways.append(
            {
                "name": gateway.name,
                "cluster": gateway.cluster,
                "namespace": namespace,
                "ingressMode": str(gateway.ingress_mode),
                "hostname": hostname,
                "address": address,
                "images": {
                    "gateway": gateway.args.images.gateway,
                    "supervisor": gateway.args.images.supervisor,
                    "sandbox": gateway.args.images.sandbox,
                },
                "database": database,
                # Releases (gatewayctl.releases): the one its images come from, whether the
                # gateway pins it itself, and the images its declaration overrides.
                "release": gateway.release,
                "releasePinned": gateway.release_pinned,
                "imageOverrides": list(gateway.image_overrides),
                **access_entry(gateway),
                "console": console_entry(gateway, console_address),
            }
        )
    resources = [
        {
            "type": r.type,
            "name": r.name,
            "parent": r.parent,
            "provider": r.provider,
            "retainOnDelete": r.retain_on_delete,
            "ignoreChanges": list(r.ignore_changes),
            "inputs": clean(r.inputs),
        }
        for r in sorted(recording.resources.values(), key=lambda r: r.urn)
    ]
    return {"stack": loaded.name, "gateways": gateways, "resources": resources}


def _facts(gateways: Mapping[str, Any]) -> pulumi.Output[Any]:
    return pulumi.Output.all(
        **{
            name: pulumi.Output.all(
                gw.namespace, gw.hostname, gw.address, gw.database_name, gw.console_address
            )
            for name, gw in gateways.items()
        }
    )


@dataclass(frozen=True, kw_only=True)
class Prepared:
    """A validated stack and the config map its program will read."""

    root: Path
    loaded: LoadedStack
    config: dict[str, str]
    secure_placeholders: int
    plaintext_notes: tuple[str, ...] = ()
    """Warnings for plaintext ``clusterSecrets`` (see ``secrets.plaintext_notes``)."""
    release_notes: tuple[str, ...] = ()
    """What could not be checked of the releases' history (``releases.history_problems``)."""


@dataclass(frozen=True, kw_only=True)
class Rendered:
    """One stack's render, in memory."""

    prepared: Prepared
    recording: Recording
    files: dict[str, str]
    gateways: tuple[GatewaySummary, ...]

    @property
    def manifests(self) -> int:
        return sum(1 for path in self.files if path.startswith("manifests/"))


def absent_ca_bundles(root: Path, loaded: LoadedStack) -> list[str]:
    """Warnings for ``database.sslRootCert`` files that are not in the project directory.

    The offline render never connects, so it does not need them; ``pulumi up`` does (the
    PostgreSQL provider verifies the admin connection with the bundle, ``verify-full``).
    """
    return [
        f"{loaded.config_path}: clusters.{name}.database.sslRootCert:"
        f" {cluster.database.ssl_root_cert!r} is not in the project directory;"
        " `pulumi up` needs it to verify the database server (the offline render does not)"
        for name, cluster in sorted(loaded.config.clusters.items())
        if cluster.database.ssl_root_cert is not None
        and not (root / cluster.database.ssl_root_cert).is_file()
    ]


def prepare(root: Path, stack: str) -> Prepared:
    """Validate config, declarations and secrets; raise InvalidInputError with every problem."""
    if problems := inventory.stack_name_problems(stack):
        raise InvalidInputError(problems)  # before its name makes a path
    loaded, config, placeholders, notes = offline_config(root, stack)
    # Immutability needs git: checked by the tooling (validate, render, diff, promote), not by
    # the program that `pulumi up` runs (docs/design-notes.md, "Releases").
    problems, release_notes = history_problems(root, loaded.releases)
    if problems:
        raise InvalidInputError(problems)
    return Prepared(
        root=root,
        loaded=loaded,
        config=config,
        secure_placeholders=placeholders,
        plaintext_notes=notes,
        release_notes=tuple(release_notes),
    )


def execute(prepared: Prepared, on_register: OnRegister | None = None) -> Rendered:
    """Run the stack's real program offline and produce its files; nothing is written."""
    loaded = prepared.loaded
    recording, facts = run_program(
        lambda: _facts(program.main(prepared.root)),
        project=PROJECT,
        stack=loaded.name,
        config=prepared.config,
        secret_keys=[f"{PROJECT}:{SECRETS_KEY}"],
        on_register=on_register,
    )
    files = manifest_files(recording)
    files["plan.json"] = json.dumps(plan(loaded, recording, facts), indent=2, sort_keys=True) + "\n"
    return Rendered(
        prepared=prepared,
        recording=recording,
        files=files,
        gateways=summarise(loaded, recording, facts),
    )


def summarise(
    loaded: LoadedStack, recording: Recording, facts: Mapping[str, Any]
) -> tuple[GatewaySummary, ...]:
    counts = Counter(
        recording.ancestor_name(r, tokens.GATEWAY) for r in recording.resources.values()
    )
    return tuple(
        GatewaySummary(
            name=g.name,
            cluster=g.cluster,
            mode=str(g.ingress_mode),
            address=facts[g.name][2],
            resources=counts[g.name] + 1,  # the Gateway component itself
            release=g.release,
            release_pinned=g.release_pinned,
            image_overrides=g.image_overrides,
            sign_in=g.sign_in,
            console=console_cell(g, facts[g.name][4]),
        )
        for g in loaded.gateways
    )

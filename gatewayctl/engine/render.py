"""Offline render (docs/render.md): the real program under the mock runtime → manifests and a plan.

No Pulumi CLI, backend, cluster or secret is needed. What is written is what ``pulumi up``
would send: one YAML file per Kubernetes object under ``manifests/<cluster>/<namespace>/``
and ``plan.json`` with every resource's inputs. Secret values are redacted everywhere (keys
kept), output is byte-identical for the same inputs, and the output directory is replaced
whole only once everything has been rendered.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from typing import Any

import pulumi

from components import tokens
from components.rotation import DECLARED_FIELDS, Rotation
from gatewayctl.engine import jsontext, program
from gatewayctl.engine.offline import (
    OnRegister,
    RecordedResource,
    Recording,
    is_secret,
    run_program,
)
from gatewayctl.engine.redaction import clean
from gatewayctl.inputs.secrets import REDACTED
from gatewayctl.inputs.stackfile import PROJECT
from gatewayctl.inputs.yamlfile import SECRETS_KEY
from gatewayctl.inputs.yamlwrite import dump_yaml
from gatewayctl.resolve.console_plan import console_cell, console_entry
from gatewayctl.resolve.preparation import Prepared
from gatewayctl.resolve.resolved import LoadedStack, SignIn
from gatewayctl.resolve.signin_plan import access_entry

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
    sign_in: SignIn = "unset"
    """How people sign in: keycloak, oidc, none (declared) or unset
    (``gatewayctl.resolve.signin_plan``)."""
    console: str | None = None
    """The web console's address, ``port-forward`` when it is not exposed, None without one."""


# --- config ---------------------------------------------------------------------------------


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


def _path(recording: Recording, resource: RecordedResource, obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata", {})
    namespace = meta.get("namespace") or CLUSTER_SCOPED
    return (
        f"manifests/{_cluster_of(recording, resource)}/{namespace}/"
        f"{obj['kind'].lower()}-{meta['name']}.yaml"
    )


def _objects(recording: Recording) -> Iterator[RecordedResource]:
    for resource in recording.resources.values():
        if resource.type.startswith("kubernetes:") and resource.custom:
            yield resource


def manifest_files(recording: Recording) -> dict[str, str]:
    """Relative path → YAML text of every Kubernetes object."""
    files: dict[str, str] = {}
    for resource in _objects(recording):
        obj = manifest(resource)
        path = _path(recording, resource, obj)
        if path in files:
            raise RuntimeError(f"two objects render to {path}")
        files[path] = dump_yaml(obj)
    return files


def stack_level_paths(recording: Recording) -> set[str]:
    """The paths of :func:`manifest_files` whose objects are in no gateway (the clusters')."""
    return {
        _path(recording, resource, manifest(resource))
        for resource in _objects(recording)
        if recording.ancestor_name(resource, tokens.GATEWAY) is None
    }


def plan(loaded: LoadedStack, recording: Recording, facts: Mapping[str, Any]) -> dict[str, Any]:
    """The reviewable plan: gateways with their decisions, every resource with its inputs."""
    return plan_of(loaded, facts, {r.urn: plan_entry(r) for r in recording.resources.values()})


_SECRET_TYPE = "kubernetes:core/v1:Secret"


def _revealed(value: Any) -> Any:
    if is_secret(value):
        return _revealed(value["value"])
    if isinstance(value, dict):
        return {k: _revealed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_revealed(v) for v in value]
    return value


def data_digest(inputs: Mapping[str, Any]) -> str:
    """SHA-256 of a Kubernetes Secret's ``data`` and ``stringData`` as rendered, which the plan
    and the manifests redact: the diff compares it to see that a Secret's data changes (a
    database host, say), as the real engine does (tests/e2e/test_e2e_e_predictions.py).

    What it hashes is never a secret of the stack: the program fills Secrets only from the
    stack's plain config and from the outputs of tls, random and keycloak resources, which the
    offline render answers with its placeholders (``RecordedResource`` outputs); no
    ``clusterSecrets`` value reaches a Secret (``tests/test_diff_steps.py`` checks it).
    """
    body = {key: _revealed(inputs.get(key)) for key in ("data", "stringData")}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def plan_entry(r: RecordedResource) -> dict[str, Any]:
    """One resource of ``plan.json``; a Secret's also with its :func:`data_digest`."""
    entry = {
        "type": r.type,
        "name": r.name,
        "parent": r.parent,
        "provider": r.provider,
        "retainOnDelete": r.retain_on_delete,
        "ignoreChanges": list(r.ignore_changes),
        "inputs": clean(r.inputs),
    }
    if r.input_dependencies:
        # Which inputs come from which resources' outputs (gatewayctl.diff.operations: the
        # dependents of a replaced resource change too).
        entry["inputDependencies"] = {k: list(v) for k, v in r.input_dependencies.items()}
    # The URNs it had before under its own type (a moved provider: components/database.py),
    # which the engine matches against the state instead of replacing it. The aliases the
    # provider SDKs give every resource of a kind to its former type tokens (three on every
    # Deployment) are left out: they move nothing.
    moved = [a for a in r.aliases if a.split("::", 3)[2].rsplit("$", 1)[-1] == r.type]
    if moved:
        entry["aliases"] = moved
    if r.delete_before_replace is not None:
        entry["deleteBeforeReplace"] = r.delete_before_replace
    if r.replace_with:
        # Replaced whenever one of these is (a rotated KEK's Secret: components.rotation).
        entry["replaceWith"] = list(r.replace_with)
    if r.type == _SECRET_TYPE:
        entry["dataDigest"] = data_digest(r.inputs)
    return entry


def rotation_entry(counters: Rotation) -> dict[str, Any]:
    """``{"rotation": {counter: n}}`` by the declaration's names, when one is raised (none
    while all are 0: a plan without counters reads as all 0,
    :mod:`gatewayctl.diff.rotation_risks`)."""
    values = {DECLARED_FIELDS[f.name]: getattr(counters, f.name) for f in fields(counters)}
    return {"rotation": values} if any(values.values()) else {}


def plan_of(
    loaded: LoadedStack, facts: Mapping[str, Any], entries: Mapping[str, dict[str, Any]]
) -> dict[str, Any]:
    """The plan from each gateway's facts and every resource's entry by URN."""
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
                # Adopts the upstream controller's namespace (spec.namespace): the diff says
                # "adopts", not "added" (gatewayctl.diff.risks).
                "adopted": gateway.adopted,
                # Releases (gatewayctl.resolve.release_bindings): the one its images come from,
                # whether the gateway pins it itself, and the images its declaration overrides.
                "release": gateway.release,
                "releasePinned": gateway.release_pinned,
                "imageOverrides": list(gateway.image_overrides),
                **access_entry(gateway),
                "console": console_entry(gateway, console_address),
                **rotation_entry(gateway.args.rotation),
            }
        )
    resources = [entries[urn] for urn in sorted(entries)]
    return {"stack": loaded.name, "gateways": gateways, "resources": resources}


def plan_text(plan_: Mapping[str, Any], entry_texts: Mapping[str, str] | None = None) -> str:
    """``plan.json``'s text. With ``entry_texts`` (URN -> :func:`entry_text` of each resource,
    made in the workers of a split stack), they are the resources, joined in URN order (the
    plan's own ``resources`` is not read): the same bytes as encoding the entries here (each
    entry's own indented text, four spaces deeper, is what the nested encoding writes), without
    CPython's pure-Python encoder of ``indent`` on them."""
    if entry_texts is None:
        return jsontext.indented(plan_) + "\n"
    text = jsontext.indented({**plan_, "resources": []}) + "\n"
    if not entry_texts:
        return text
    slot = '\n  "resources": [],\n'
    assert text.count(slot) == 1, "plan.json has one top-level resources list"
    body = ",\n".join(_deeper(entry_texts[urn]) for urn in sorted(entry_texts))
    return text.replace(slot, f'\n  "resources": [\n{body}\n  ],\n')


def entry_text(entry: Mapping[str, Any]) -> str:
    """One resource of ``plan.json`` as :func:`plan_text` joins it."""
    return jsontext.indented(entry)


def _deeper(text: str) -> str:
    return "\n".join("    " + line for line in text.split("\n"))


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
class Rendered:
    """One stack's render, in memory."""

    prepared: Prepared
    recording: Recording
    files: dict[str, str]
    gateways: tuple[GatewaySummary, ...]

    @property
    def manifests(self) -> int:
        return sum(1 for path in self.files if path.startswith("manifests/"))


def _run(
    prepared: Prepared, on_register: OnRegister | None, only: frozenset[str] | None = None
) -> tuple[Recording, Any]:
    return run_program(
        lambda: _facts(program.main(prepared.root, only=only, loaded=prepared.loaded)),
        project=PROJECT,
        stack=prepared.loaded.name,
        config=prepared.config,
        secret_keys=[f"{PROJECT}:{SECRETS_KEY}"],
        on_register=on_register,
    )


def execute(prepared: Prepared, on_register: OnRegister | None = None) -> Rendered:
    """Run the stack's real program offline and produce its files; nothing is written."""
    loaded = prepared.loaded
    recording, facts = _run(prepared, on_register)
    files = manifest_files(recording)
    files["plan.json"] = plan_text(plan(loaded, recording, facts))
    return Rendered(
        prepared=prepared,
        recording=recording,
        files=files,
        gateways=summarise(loaded, resource_counts(recording), facts),
    )


def resource_counts(recording: Recording) -> Counter[str | None]:
    """Resources of each gateway (its subtree, the component not included, and its database
    owner's provider: ``Recording.gateways``) by gateway name; None: the stack-level ones."""
    return Counter(recording.gateways().values())


def summarise(
    loaded: LoadedStack, counts: Mapping[str | None, int], facts: Mapping[str, Any]
) -> tuple[GatewaySummary, ...]:
    return tuple(
        GatewaySummary(
            name=g.name,
            cluster=g.cluster,
            mode=str(g.ingress_mode),
            address=facts[g.name][2],
            resources=counts.get(g.name, 0) + 1,  # the Gateway component itself
            release=g.release,
            release_pinned=g.release_pinned,
            image_overrides=g.image_overrides,
            sign_in=g.sign_in,
            console=console_cell(g, facts[g.name][4]),
        )
        for g in loaded.gateways
    )

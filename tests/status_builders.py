"""Builders of what the Pulumi CLI writes, for the status tests, shaped as pulumi/pulumi's
types at the pinned CLI (3.272.0): ``apitype.UntypedDeployment`` / ``DeploymentV3`` /
``ResourceV3`` (``sdk/go/common/apitype/core.go``) for ``pulumi stack export``, and the preview
digest (``pkg/backend/display/json.go`` ``ShowPreviewDigest``: ``steps`` of ``op``, ``urn``,
``provider``, ``oldState``, ``newState``, ``diffReasons``, ``detailedDiff``; ``changeSummary``)
for ``pulumi preview --json`` and ``pulumi refresh --preview-only --json``.

Secrets in an export are ``{"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
"ciphertext": ...}`` (``resource.SigKey``/``SecretSig``); in a digest the CLI prints ``[secret]``
(``massagePropertyValue``). ``SECRET_TEXT`` is planted in both so tests can prove it never
reaches the output.

``python -m tests.status_builders`` rewrites the committed fixtures in
``tests/fixtures/status/``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

STACK = "ibm"
PROJECT = "hypershell-gateways"
FIXTURES = Path(__file__).parent / "fixtures" / "status"
SECRET_TEXT = "hunter2-do-not-print"
SIG = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270"}
NOW = "2026-12-01T05:30:00Z"
K8S_PROVIDER = (
    f"urn:pulumi:{STACK}::{PROJECT}::hypershell:cluster:Cluster$pulumi:providers:kubernetes"
    "::roks-us-east-k8s::3f1d2c6e-1111-4d3c-9b2a-000000000001"
)

STACK_URN = f"urn:pulumi:{STACK}::{PROJECT}::pulumi:pulumi:Stack::{PROJECT}-{STACK}"
GATEWAY = "hypershell:gateway:Gateway"


def urn(chain: Sequence[str], name: str) -> str:
    return f"urn:pulumi:{STACK}::{PROJECT}::{'$'.join(chain)}::{name}"


def secret(ciphertext: str = "djE6c2VjcmV0") -> dict[str, Any]:
    return {**SIG, "ciphertext": ciphertext + SECRET_TEXT.encode().hex()}


def resource(
    type_: str,
    name: str,
    chain: Sequence[str],
    parent: str | None,
    *,
    inputs: dict[str, Any] | None = None,
    outputs: dict[str, Any] | None = None,
    custom: bool = True,
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "urn": urn([*chain, type_], name),
        "custom": custom,
        "type": type_,
        "created": "2026-01-05T10:00:00.000000Z",
        "modified": "2026-11-20T09:00:00.000000Z",
        "sourcePosition": "project:///components/gateway.py#120,9",
        # A field a later CLI may add: ignored by the reader.
        "futureField": {"nested": [1, 2, 3]},
    }
    if custom:
        entry["id"] = name
        entry["provider"] = K8S_PROVIDER if type_.startswith("kubernetes:") else ""
    if parent:
        entry["parent"] = parent
    entry["inputs"] = inputs or {}
    entry["outputs"] = outputs if outputs is not None else dict(inputs or {})
    return entry


def deployment_object(
    namespace: str,
    *,
    replicas: int = 1,
    available: int = 1,
    updated: int | None = None,
    generation: int = 3,
    observed: int = 3,
    progressing: tuple[str, str] = ("True", "NewReplicaSetAvailable"),
    image: str = "image-registry.openshift-image-registry.svc:5000/openshift/gateway:0.0.109",
) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "openshell-gateway", "namespace": namespace, "generation": generation},
        "spec": {
            "replicas": replicas,
            "template": {"spec": {"containers": [{"name": "gateway", "image": image}]}},
        },
        "status": {
            "observedGeneration": observed,
            "replicas": max(replicas, available),
            "updatedReplicas": replicas if updated is None else updated,
            "availableReplicas": available,
            "readyReplicas": available,
            "conditions": [
                {
                    "type": "Available",
                    "status": "True" if available >= replicas else "False",
                    "reason": "MinimumReplicasAvailable"
                    if available >= replicas
                    else "MinimumReplicasUnavailable",
                },
                {"type": "Progressing", "status": progressing[0], "reason": progressing[1]},
            ],
        },
    }


def route_object(namespace: str, host: str, admitted: str | None = "True") -> dict[str, Any]:
    status: dict[str, Any] = {}
    if admitted is not None:
        status = {
            "ingress": [
                {
                    "host": host,
                    "routerName": "default",
                    "conditions": [{"type": "Admitted", "status": admitted}],
                }
            ]
        }
    return {
        "apiVersion": "route.openshift.io/v1",
        "kind": "Route",
        "metadata": {"name": "openshell-gateway", "namespace": namespace},
        "spec": {"host": host, "tls": {"termination": "passthrough"}},
        "status": status,
    }


def gateway_resources(
    name: str,
    *,
    cert_end: str = "2027-10-01T00:00:00Z",
    ca_end: str = "2036-01-05T10:00:00Z",
    deployment: dict[str, Any] | None = None,
    exposed: bool = True,
) -> list[dict[str, Any]]:
    """The resources of one gateway as the program registers them (components/*.py)."""
    namespace = f"openshell-{name}"
    host = f"gw-{namespace}.apps.example.com"
    gw_chain = [GATEWAY]
    gw = urn([], "")  # placeholder replaced below
    gw = urn(gw_chain, name)
    pki = urn([GATEWAY, "hypershell:gateway:Pki"], f"{name}-pki")
    db = urn([GATEWAY, "hypershell:gateway:Database"], f"{name}-database")
    wl = urn([GATEWAY, "hypershell:gateway:Workload"], f"{name}-workload")
    ex = urn([GATEWAY, "hypershell:gateway:Exposure"], f"{name}-exposure")
    pki_chain = [GATEWAY, "hypershell:gateway:Pki"]
    db_chain = [GATEWAY, "hypershell:gateway:Database"]
    wl_chain = [GATEWAY, "hypershell:gateway:Workload"]
    ex_chain = [GATEWAY, "hypershell:gateway:Exposure"]
    address = f"grpcs://{host}:443" if exposed else None
    out: list[dict[str, Any]] = [
        resource(
            GATEWAY,
            name,
            [],
            STACK_URN,
            custom=False,
            outputs={"namespace": namespace, "address": address, "hostname": host},
        ),
        resource(
            "kubernetes:core/v1:Namespace",
            f"{name}-ns",
            gw_chain,
            gw,
            inputs={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
            outputs={
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": namespace},
                "status": {"phase": "Active"},
            },
        ),
        resource("hypershell:gateway:Pki", f"{name}-pki", gw_chain, gw, custom=False),
        resource(
            "tls:index/privateKey:PrivateKey",
            f"{name}-pki-ca-key",
            pki_chain,
            pki,
            inputs={"algorithm": "ECDSA", "ecdsaCurve": "P256"},
            outputs={"algorithm": "ECDSA", "privateKeyPem": secret()},
        ),
        resource(
            "tls:index/selfSignedCert:SelfSignedCert",
            f"{name}-pki-ca",
            pki_chain,
            pki,
            inputs={
                "isCaCertificate": True,
                "validityPeriodHours": 87600,
                "privateKeyPem": secret(),
            },
            outputs={
                "certPem": "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
                "earlyRenewalHours": 0,
                "readyForRenewal": False,
                "validityEndTime": ca_end,
                "validityStartTime": "2026-01-05T10:00:00Z",
                "privateKeyPem": secret(),
            },
        ),
    ]
    for leaf in ("server", "client"):
        out.append(
            resource(
                "tls:index/locallySignedCert:LocallySignedCert",
                f"{name}-pki-{leaf}-cert",
                pki_chain,
                pki,
                inputs={
                    "validityPeriodHours": 8760,
                    "earlyRenewalHours": 720,
                    "caPrivateKeyPem": secret(),
                },
                outputs={
                    "certPem": "-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----\n",
                    "earlyRenewalHours": 720,
                    "readyForRenewal": False,
                    "validityEndTime": cert_end,
                    "validityStartTime": "2026-10-01T00:00:00Z",
                    "caPrivateKeyPem": secret(),
                },
            )
        )
    out.append(
        resource(
            "kubernetes:core/v1:Secret",
            f"{name}-pki-server-tls",
            pki_chain,
            pki,
            inputs={"kind": "Secret", "stringData": secret()},
            outputs={"kind": "Secret", "data": secret()},
        )
    )
    out += [
        resource("hypershell:gateway:Database", f"{name}-database", gw_chain, gw, custom=False),
        resource(
            "random:index/randomPassword:RandomPassword",
            f"{name}-database-db-password",
            db_chain,
            db,
            inputs={"length": 40, "special": False},
            outputs={"length": 40, "result": secret()},
        ),
        resource(
            "postgresql:index/role:Role",
            f"{name}-database-db-role",
            db_chain,
            db,
            inputs={"name": f"gw_{name.replace('-', '_')}", "login": True, "password": secret()},
        ),
        resource(
            "postgresql:index/database:Database",
            f"{name}-database-db",
            db_chain,
            db,
            inputs={"name": f"gw_{name.replace('-', '_')}", "owner": f"gw_{name}"},
        ),
        resource("hypershell:gateway:Workload", f"{name}-workload", gw_chain, gw, custom=False),
        resource(
            "kubernetes:core/v1:ConfigMap",
            f"{name}-workload-config",
            wl_chain,
            wl,
            inputs={"kind": "ConfigMap", "data": {"gateway.toml": "[server]\nport = 8080\n"}},
        ),
        resource(
            "kubernetes:apps/v1:Deployment",
            f"{name}-workload-deploy",
            wl_chain,
            wl,
            inputs={"kind": "Deployment", "spec": {"replicas": 1}},
            outputs=deployment or deployment_object(namespace),
        ),
    ]
    if exposed:
        out += [
            resource("hypershell:gateway:Exposure", f"{name}-exposure", gw_chain, gw, custom=False),
            resource(
                "kubernetes:route.openshift.io/v1:Route",
                f"{name}-exposure-route",
                ex_chain,
                ex,
                inputs={"kind": "Route", "spec": {"host": host}},
                outputs=route_object(namespace, host),
            ),
        ]
    return out


def stack_resources(gateways: dict[str, str | None]) -> list[dict[str, Any]]:
    """The stack, its cluster and providers (outside any gateway)."""
    cluster = urn(["hypershell:cluster:Cluster"], "roks-us-east")
    return [
        resource(
            "pulumi:pulumi:Stack",
            f"{PROJECT}-{STACK}",
            [],
            None,
            custom=False,
            outputs={
                "gateways": {
                    name: {"address": address, "caCertificate": "-----BEGIN CERTIFICATE-----"}
                    for name, address in gateways.items()
                }
            },
        ),
        resource("hypershell:cluster:Cluster", "roks-us-east", [], STACK_URN, custom=False),
        resource(
            "pulumi:providers:kubernetes",
            "roks-us-east-k8s",
            ["hypershell:cluster:Cluster"],
            cluster,
            inputs={"context": "hysh-ibm-01", "kubeconfig": secret()},
        ),
    ]


def export(resources: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """``pulumi stack export``: ``UntypedDeployment`` of a ``DeploymentV3``."""
    return {
        "version": 3,
        "deployment": {
            "manifest": {
                "time": "2026-11-20T09:00:00.000000000Z",
                "magic": "0c5b1d3f4a8e7c6b2d9f0e1a3b5c7d9e",
                "version": "v3.272.0",
            },
            "secrets_providers": {"type": "passphrase", "state": {"salt": "v1:abc"}},
            "resources": list(resources),
            "metadata": {},
        },
    }


def _digest_state(entry: dict[str, Any]) -> dict[str, Any]:
    """A state as the digest prints it: secrets as ``[secret]`` (``massagePropertyValue``)."""

    def massage(value: Any) -> Any:
        if isinstance(value, dict):
            if SIG.keys() <= value.keys():
                return "[secret]"
            return {k: massage(v) for k, v in value.items()}
        if isinstance(value, list):
            return [massage(v) for v in value]
        return value

    state = copy.deepcopy(entry)
    state["inputs"] = massage(state.get("inputs", {}))
    state["outputs"] = massage(state.get("outputs", {}))
    return state


def refresh_step(
    entry: dict[str, Any],
    *,
    op: str = "refresh",
    live: dict[str, Any] | None = None,
    paths: Sequence[str] = (),
) -> dict[str, Any]:
    """One step of ``pulumi refresh --preview-only --json``: ``refresh`` (unchanged), ``update``
    (the live object differs: ``live`` outputs and a detailed diff of ``paths``) or ``delete``
    (gone)."""
    step: dict[str, Any] = {"op": op, "urn": entry["urn"], "oldState": _digest_state(entry)}
    if entry.get("provider"):
        step["provider"] = entry["provider"]
    if op == "update":
        new = _digest_state(entry)
        if live is not None:
            new["outputs"] = live
        step["newState"] = new
        step["diffReasons"] = sorted({p.split(".")[0].split("[")[0] for p in paths})
        step["detailedDiff"] = {p: {"kind": "update", "inputDiff": False} for p in paths}
    return step


def digest(steps: list[dict[str, Any]]) -> dict[str, Any]:
    summary: dict[str, int] = {}
    for step in steps:
        key = "same" if step["op"] == "refresh" else step["op"]
        summary[key] = summary.get(key, 0) + 1
    return {
        "config": {"hypershell-gateways:declarationsDir": "gateways/ibm"},
        "steps": steps,
        "diagnostics": [
            {
                "urn": steps[0]["urn"] if steps else "",
                "message": f"a provider warning that quotes {SECRET_TEXT}",
                "severity": "warning",
            }
        ],
        "duration": 4200000000,
        "changeSummary": summary,
        # A field a later CLI may add: ignored.
        "futureSummary": {"x": 1},
    }


def by_name(resources: Iterable[dict[str, Any]], name: str) -> dict[str, Any]:
    (found,) = [r for r in resources if r["urn"].endswith(f"::{name}")]
    return found


def scenario() -> dict[str, Any]:
    """The gateways ``gateways/ibm`` declares: team-a drifted (image and a Secret's data) with
    its leaf certificates due; canary healthy; research's Route deleted by hand; batch-jobs
    degraded (progress deadline)."""
    addresses = {
        "team-a": "grpcs://gw-openshell-team-a.apps.example.com:443",
        "canary": "grpcs://gw-openshell-canary.apps.example.com:443",
        "research": "grpcs://gw-openshell-research.apps.example.com:443",
        "batch-jobs": None,
    }
    resources = stack_resources(addresses)
    resources += gateway_resources("team-a", cert_end="2026-12-20T00:00:00Z")
    resources += gateway_resources("canary")
    resources += gateway_resources("research")
    resources += gateway_resources("batch-jobs", exposed=False)
    return {"resources": resources}


RENEWING = ("team-a-pki-server-cert", "team-a-pki-client-cert")
"""Inside their renewal window at ``NOW``, when the fixtures' refresh ran."""


def renewal_step(entry: dict[str, Any]) -> dict[str, Any]:
    """A certificate inside its renewal window in ``pulumi refresh --preview-only --json``:
    the provider's Read set ``readyForRenewal`` (hashicorp/terraform-provider-tls
    ``common_cert.go`` ``modifyStateIfCertificateReadyForRenewal``), so the refresh shows an
    ``update`` of it (``ShowPreviewDigest``)."""
    live = {**_digest_state(entry)["outputs"], "readyForRenewal": True}
    return refresh_step(entry, op="update", live=live, paths=["readyForRenewal"])


def write_fixtures(target: Path = FIXTURES) -> None:
    resources = scenario()["resources"]
    target.mkdir(parents=True, exist_ok=True)

    def dump(name: str, document: Any) -> None:
        (target / name).write_text(json.dumps(document, indent=4) + "\n", encoding="utf-8")

    dump("state.json", export(resources))
    clean = [
        renewal_step(r) if r["urn"].rsplit("::", 1)[-1] in RENEWING else refresh_step(r)
        for r in resources
    ]
    dump("refresh-clean.json", digest(clean))
    drifted: list[dict[str, Any]] = []
    for entry in resources:
        name = entry["urn"].rsplit("::", 1)[-1]
        if name == "team-a-workload-deploy":
            live = deployment_object("openshell-team-a", image="quay.io/someone/else:latest")
            drifted.append(
                refresh_step(
                    entry,
                    op="update",
                    live=live,
                    paths=["spec.template.spec.containers[0].image"],
                )
            )
        elif name == "team-a-pki-server-tls":
            drifted.append(refresh_step(entry, op="update", paths=["data.tls.key"]))
        elif name in RENEWING:
            drifted.append(renewal_step(entry))
        elif name == "research-exposure-route":
            drifted.append(refresh_step(entry, op="delete"))
        elif name == "batch-jobs-workload-deploy":
            live = deployment_object(
                "openshell-batch-jobs",
                available=0,
                updated=1,
                progressing=("False", "ProgressDeadlineExceeded"),
            )
            drifted.append(refresh_step(entry, op="update", live=live, paths=["spec.replicas"]))
        else:
            drifted.append(refresh_step(entry))
    # A resource the program never registers (read with a get, e.g. by an older program) and a
    # step op the status does not act on.
    external = resource(
        "kubernetes:core/v1:ConfigMap",
        "kube-root-ca",
        ["hypershell:cluster:Cluster"],
        urn(["hypershell:cluster:Cluster"], "roks-us-east"),
        inputs={"kind": "ConfigMap"},
    )
    drifted.append({**refresh_step(external), "op": "read"})
    drifted.append({**refresh_step(external), "op": "discard-replaced", "unknownStepField": True})
    dump("refresh-drift.json", digest(drifted))
    # `pulumi preview --json`: a new gateway and an image change git has not deployed.
    new_gw = gateway_resources("team-d")
    preview_steps: list[dict[str, Any]] = [
        {"op": "same", "urn": STACK_URN},
        *(
            {"op": "create", "urn": r["urn"], "newState": _digest_state(r)}
            | ({"provider": r["provider"]} if r.get("provider") else {})
            for r in new_gw
        ),
    ]
    deploy_b = by_name(resources, "canary-workload-deploy")
    preview_steps.append(
        {
            "op": "update",
            "urn": deploy_b["urn"],
            "provider": deploy_b["provider"],
            "oldState": _digest_state(deploy_b),
            "newState": _digest_state(deploy_b),
            "diffReasons": ["spec"],
            "detailedDiff": {
                "spec.template.spec.containers[0].image": {"kind": "update", "inputDiff": True}
            },
        }
    )
    dump("preview.json", digest(preview_steps))
    (target / "empty.json").write_text("", encoding="utf-8")
    text = (target / "state.json").read_text(encoding="utf-8")
    (target / "truncated.json").write_text(text[: len(text) // 2], encoding="utf-8")


if __name__ == "__main__":
    write_fixtures()

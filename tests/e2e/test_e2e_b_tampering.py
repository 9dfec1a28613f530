"""Tampering made with kubectl (other field managers) on the real API server, named by
``gatewayctl status --live`` on the scheduled check's command path: ``pulumi refresh
--preview-only --json`` and ``pulumi stack export`` (neither writes the state), then status
reading the live objects itself (gatewayctl/status/live.py, tampering.py). Before and after,
the untouched stack shows nothing: what the API server defaults is not drift."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from e2e.cluster import Cluster
from e2e.engine import Engine
from e2e.project import E2EProject
from tests.e2e.lane import (
    Deployed,
    export,
    figure,
    pulumi,
    refresh_changes_nothing,
    status,
    write_json,
)

STACK = "e2e-local"
GATEWAY = "dev-build"
NAMESPACE = "openshell-dev-build"
DEPLOYMENT = "openshell-gateway"
SECRET = "openshell-gateway-db-credentials"
PREFIX = "hypershell-gateways:"


def status_live(
    project: E2EProject,
    cluster: Cluster,
    engine: Engine,
    env: dict[str, str],
    out: Path,
    *extra: str,
    notes: list[str] | None = None,
) -> tuple[int, dict[str, Any]]:
    """The drift workflow's commands (.github/workflows/drift.yml), with ``--live``."""
    refresh = pulumi(
        engine, project, env, "refresh", "--preview-only", "--json", program=False, check=False
    )
    assert refresh.returncode == 0, refresh.stderr[-3000:]
    (out / "refresh.json").write_text(refresh.stdout)
    write_json(out / "state.json", export(engine, project, env))
    return status(
        project,
        [out / "refresh.json", out / "state.json"],
        "--live",
        "--kubeconfig",
        str(cluster.kubeconfig),
        *extra,
        path=cluster.kubectl_bin.parent,
        notes=notes,
    )


def findings(report: dict[str, Any]) -> dict[str, set[str]]:
    """Each gateway's changes as ``op type name path`` (without a path: ``op type name``)."""
    found: dict[str, set[str]] = {}
    for gateway in report["gateways"]:
        for change in gateway["changes"]:
            paths = change["paths"] or [""]
            found.setdefault(gateway["name"], set()).update(
                f"{change['op']} {change['type']} {change['name']} {p}".strip() for p in paths
            )
    return found


def at(kind: str, path: str, name: str = "") -> Callable[[str], bool]:
    """A finding on an object of ``kind`` (its type's last part) whose resource name holds
    ``name``, at ``path`` or inside it."""

    def match(finding: str) -> bool:
        _, type_, resource, *rest = finding.split(" ")
        where = rest[0] if rest else ""
        return (
            type_.endswith(f":{kind}")
            and name in resource
            and (where == path or where.startswith((path + ".", path + "[")))
        )

    return match


def add(cluster: Cluster, path: str, value: Any) -> Callable[[], None]:
    """A JSON patch adding ``value`` at ``path`` of the gateway's Deployment."""
    body = [{"op": "add", "path": path, "value": value}]
    return lambda: patch(cluster, "deployment", DEPLOYMENT, "json", body)


def patch(cluster: Cluster, kind: str, name: str, kind_of: str, body: Any) -> None:
    cluster.kubectl(
        "patch", kind, name, "-n", NAMESPACE, f"--type={kind_of}", "-p", json.dumps(body)
    )


def test_tampering_is_named_by_status_live_and_nothing_else(
    deployed: dict[str, Deployed],
    engine: Engine,
    cluster: Cluster,
    kube_env: dict[str, str],
    tmp_path: Path,
) -> None:
    project = deployed[STACK].project
    code, report = status_live(project, cluster, engine, kube_env, tmp_path)
    assert report["liveObjects"]["objects"] > 0 and NAMESPACE in report["liveObjects"]["namespaces"]
    assert (code, findings(report)) == (0, {}), findings(report)  # server defaults: no drift

    kept = {
        (kind, name): cluster.get(kind, name, namespace=NAMESPACE)
        for kind, name in (
            ("deployment", DEPLOYMENT),
            ("networkpolicy", "openshell-default-deny-ingress"),
            ("networkpolicy", "openshell-gateway-allow-console"),
            ("service", "openshell-gateway"),
            ("configmap", "openshell-gateway-config"),
            ("rolebinding", "openshell-gateway-sandbox"),
        )
    }
    deploy = kept[("deployment", DEPLOYMENT)]
    container = deploy["spec"]["template"]["spec"]["containers"][0]["name"]
    pod = "spec.template.spec"
    c = f"{pod}.containers[{container}]"
    deployment = f"{GATEWAY}-workload-deploy"
    # (what kubectl does, the finding status must report for it)
    tamperings: list[tuple[str, Callable[[], Any], Callable[[str], bool]]] = [
        (
            "default-deny narrowed",
            lambda: patch(
                cluster,
                "networkpolicy",
                "openshell-default-deny-ingress",
                "merge",
                {"spec": {"podSelector": {"matchLabels": {"nobody": "here"}}}},
            ),
            at("NetworkPolicy", "spec.podSelector.matchLabels", "default-deny"),
        ),
        (
            "a container added",
            add(cluster, "/spec/template/spec/containers/-", {"name": "miner", "image": "miner:1"}),
            at("Deployment", f"{pod}.containers[miner]"),
        ),
        (
            "an env entry added",
            add(
                cluster,
                "/spec/template/spec/containers/0/env/-",
                {"name": "INJECTED", "value": "1"},
            ),
            at("Deployment", f"{c}.env[INJECTED]"),
        ),
        (
            "a hostPath volume added",
            add(
                cluster,
                "/spec/template/spec/volumes/-",
                {"name": "host", "hostPath": {"path": "/"}},
            ),
            at("Deployment", f"{pod}.volumes[host]"),
        ),
        (
            "privileged",
            lambda: patch(
                cluster,
                "deployment",
                DEPLOYMENT,
                "json",
                [
                    {
                        "op": "add",
                        "path": "/spec/template/spec/containers/0/securityContext/privileged",
                        "value": True,
                    },
                    {  # the API server refuses privileged without it
                        "op": "replace",
                        "path": "/spec/template/spec/containers/0/securityContext/"
                        "allowPrivilegeEscalation",
                        "value": True,
                    },
                ],
            ),
            lambda f: (
                at("Deployment", f"{c}.securityContext.privileged")(f)
                # the refresh names the flag the API server made us change with it
                or at(
                    "Deployment", f"{pod}.containers[0].securityContext.allowPrivilegeEscalation"
                )(f)
            ),
        ),
        (
            "a nodeSelector",
            lambda: patch(
                cluster,
                "deployment",
                DEPLOYMENT,
                "merge",
                {"spec": {"template": {"spec": {"nodeSelector": {"node": "chosen"}}}}},
            ),
            at("Deployment", f"{pod}.nodeSelector"),
        ),
        (
            "replicas scaled",
            lambda: cluster.kubectl(
                "scale", "deployment", DEPLOYMENT, "-n", NAMESPACE, "--replicas=3"
            ),
            at("Deployment", "spec.replicas"),
        ),
        (
            "a Service turned NodePort",
            lambda: patch(
                cluster, "service", "openshell-gateway", "merge", {"spec": {"type": "NodePort"}}
            ),
            at("Service", "spec.type"),
        ),
        (
            "a label a NetworkPolicy selects removed",
            lambda: patch(
                cluster,
                "networkpolicy",
                "openshell-gateway-allow-console",
                "json",
                [
                    {
                        "op": "remove",
                        "path": "/spec/podSelector/matchLabels/app.kubernetes.io~1instance",
                    }
                ],
            ),
            # the refresh names it, as matchLabels["app.kubernetes.io/instance"]
            at("NetworkPolicy", "spec.podSelector.matchLabels", "allow-console"),
        ),
        (
            "the database credentials Secret edited",
            lambda: patch(
                cluster,
                "secret",
                SECRET,
                "merge",
                {"stringData": {"uri": "postgresql://intruder@elsewhere/db"}},
            ),
            # the refresh names it (data.uri); were it not, its writer from managedFields would
            at("Secret", "data.uri"),
        ),
        (
            "a key added to the gateway's ConfigMap",
            lambda: patch(
                cluster,
                "configmap",
                "openshell-gateway-config",
                "merge",
                {"data": {"injected": "1"}},
            ),
            at("ConfigMap", "data.injected"),
        ),
        (
            "a subject added to the sandbox RoleBinding",
            lambda: patch(
                cluster,
                "rolebinding",
                "openshell-gateway-sandbox",
                "json",
                [
                    {
                        "op": "add",
                        "path": "/subjects/-",
                        "value": {
                            "kind": "User",
                            "name": "stranger",
                            "apiGroup": "rbac.authorization.k8s.io",
                        },
                    }
                ],
            ),
            at("RoleBinding", "subjects[stranger]"),
        ),
        (
            "an annotation added to the gateway's Service",
            lambda: cluster.kubectl(
                "annotate", "service", "openshell-gateway", "-n", NAMESPACE, "exposed-by=intruder"
            ),
            at("Service", "metadata.annotations.exposed-by"),
        ),
    ]
    for _, tamper, _ in tamperings:
        tamper()

    unmanaged = [
        (
            "rolebinding granting a stranger edit",
            [
                "create",
                "rolebinding",
                "stranger-edit",
                "-n",
                NAMESPACE,
                "--clusterrole=edit",
                "--user=stranger",
            ],
            f"unmanaged rbac.authorization.k8s.io/RoleBinding {NAMESPACE}/stranger-edit",
        ),
        (
            "an allow-all NetworkPolicy",
            ["apply", "-f", "-"],
            f"unmanaged networking.k8s.io/NetworkPolicy {NAMESPACE}/allow-all",
        ),
        (
            "a ClusterRoleBinding to the namespace's accounts",
            [
                "create",
                "clusterrolebinding",
                "tenant-accounts-admin",
                "--clusterrole=admin",
                f"--group=system:serviceaccounts:{NAMESPACE}",
            ],
            "unmanaged rbac.authorization.k8s.io/ClusterRoleBinding tenant-accounts-admin",
        ),
    ]
    allow_all = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "allow-all", "namespace": NAMESPACE},
        "spec": {"podSelector": {}, "ingress": [{}], "policyTypes": ["Ingress"]},
    }
    for _, args, _ in unmanaged:
        cluster.kubectl(*args, input=json.dumps(allow_all) if args[0] == "apply" else None)

    # The stack lets self-heal remove what the program does not declare, unmanaged objects too.
    config_text = project.config_file.read_text()
    config = yaml.safe_load(config_text)
    config["config"].update({f"{PREFIX}selfHeal": True, f"{PREFIX}selfHealUnmanaged": True})
    project.config_file.write_text(yaml.safe_dump(config, sort_keys=False))
    healed_all = False
    try:
        code, report = status_live(project, cluster, engine, kube_env, tmp_path)
        # 3 out of sync, or 4 when the tampered Deployment is still rolling out (exit codes:
        # degraded before out of sync); either way the gateway is OutOfSync.
        assert code in (3, 4), findings(report)
        (ours_status,) = [g for g in report["gateways"] if g["name"] == GATEWAY]
        assert ours_status["sync"] == "OutOfSync"
        found = findings(report)
        ours = found.pop(GATEWAY, set())
        named = [what for what, _, match in tamperings if any(map(match, ours))]
        unmanaged_named = [what for what, _, line in unmanaged if line in ours]
        expected = [match for _, _, match in tamperings]
        false_positives = sorted(
            f
            for f in ours
            if not any(m(f) for m in expected) and f not in {line for _, _, line in unmanaged}
        ) + sorted(f"{g}: {f}" for g, fs in found.items() for f in fs)
        print("findings:", *sorted(ours), sep="\n  ")
        print("not named:", [what for what, _, _ in tamperings if what not in named])
        print("false positives:", false_positives)
        assert deployment in {c["name"] for g in report["gateways"] for c in g["changes"]}
        assert report["remedy"]["action"] == "heal", report["remedy"]
        print("heal plan:", *(h["command"] for h in report["remedy"]["heal"]), sep="\n  ")
        assert report["remedy"]["manual"] == []

        # The self-heal, as the drift workflow runs it: status --heal, then up --refresh.
        notes: list[str] = []
        status_live(project, cluster, engine, kube_env, tmp_path, "--heal", notes=notes)
        print("heal:", notes[0])
        force = {**kube_env, "PULUMI_K8S_ENABLE_PATCH_FORCE": "true"}  # git wins any conflict
        pulumi(engine, project, force, "up", "--refresh", "--yes", "--skip-preview")
        code, after = status_live(project, cluster, engine, kube_env, tmp_path)
        left = findings(after).get(GATEWAY, set())
        # The heal changed the pod template: its rollout may still be under way (exit 4,
        # Progressing) with nothing out of sync; wait for it, as the next check would.
        for _ in range(24):
            if code != 4 or findings(after):
                break
            time.sleep(5)
            code, after = status_live(project, cluster, engine, kube_env, tmp_path)
        healed = [what for what, _, match in tamperings if not any(map(match, left))]
        healed += [what for what, _, line in unmanaged if line not in left]
        total = len(tamperings) + len(unmanaged)
        message = (
            f"tampering: {len(named)} of {len(tamperings)} named, {len(healed)} of {total}"
            f" healed, {len(unmanaged_named)} of {len(unmanaged)} unmanaged named,"
            f" {len(false_positives)} false positives"
        )
        figure(message)
        print("left after the heal:", sorted(left))
        assert len(named) == len(tamperings), (message, sorted(ours))
        assert len(unmanaged_named) == len(unmanaged), (message, sorted(ours))
        assert false_positives == [], (message, false_positives)
        assert len(healed) == total, (message, sorted(left))
        assert (code, findings(after)) == (0, {}), findings(after)
        gone = cluster.run("get", "rolebinding", "stranger-edit", "-n", NAMESPACE)
        assert gone.returncode != 0 and "NotFound" in gone.stderr
        healed_all = True
    finally:
        project.config_file.write_text(config_text)
        if not healed_all:
            restore(cluster, engine, project, kube_env, kept)
    code, report = status_live(project, cluster, engine, kube_env, tmp_path)
    assert (code, findings(report)) == (0, {}), findings(report)
    refresh_changes_nothing(engine, project, kube_env)


def restore(
    cluster: Cluster,
    engine: Engine,
    project: E2EProject,
    kube_env: dict[str, str],
    kept: dict[tuple[str, str], Any],
) -> None:
    """Put everything back as it was when the heal did not (the lane's later tests share this
    stack)."""
    cluster.kubectl("delete", "rolebinding", "stranger-edit", "-n", NAMESPACE, check=False)
    cluster.kubectl("delete", "networkpolicy", "allow-all", "-n", NAMESPACE, check=False)
    cluster.kubectl("delete", "clusterrolebinding", "tenant-accounts-admin", check=False)
    for obj in kept.values():
        restored = json.loads(json.dumps(obj))
        for field in ("resourceVersion", "managedFields", "generation", "creationTimestamp", "uid"):
            restored["metadata"].pop(field, None)
        restored.pop("status", None)
        if restored["kind"] == "Service":
            for port in restored["spec"].get("ports", []):
                port.pop("nodePort", None)
        cluster.kubectl("replace", "-f", "-", input=json.dumps(restored), check=False)
    cluster.kubectl("delete", "secret", SECRET, "-n", NAMESPACE, check=False)
    force = {**kube_env, "PULUMI_K8S_ENABLE_PATCH_FORCE": "true"}
    pulumi(engine, project, force, "up", "--refresh", "--yes", "--skip-preview")

"""What another manager changed or added in a managed object, which the refresh's diff
cannot see (gatewayctl/status/tampering.py), and the objects nobody declared
(gatewayctl/status/live.py): found in the live object against the state's inputs."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest

from gatewayctl.status import core, formats, inputs, live, selfheal
from gatewayctl.status.formats import change_line
from gatewayctl.status.models import PreviewDigest, UntypedDeployment
from gatewayctl.status.tampering import differences, quantity
from tests.status_builders import digest, export, gateway_resources, refresh_step, stack_resources

DEPLOYMENT = "kubernetes:apps/v1:Deployment"


def policy(selector: dict[str, Any]) -> dict[str, Any]:
    return {"spec": {"podSelector": selector, "policyTypes": ["Ingress"]}}


def workload(containers: list[str], volumes: list[str], **defaults: Any) -> dict[str, Any]:
    return {
        "spec": {
            "template": {
                "spec": {
                    "containers": [{"name": c, **defaults} for c in containers],
                    "volumes": [{"name": v, **defaults} for v in volumes],
                }
            }
        }
    }


DECLARED: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "gw", "namespace": "ns", "labels": {"app": "gw"}},
    "spec": {
        "replicas": 1,
        "selector": {"matchLabels": {"app": "gw"}},
        "template": {
            "metadata": {"labels": {"app": "gw"}},
            "spec": {
                "automountServiceAccountToken": False,
                "securityContext": {"runAsNonRoot": True},
                "containers": [
                    {
                        "name": "gateway",
                        "image": "registry.example/gw:1",
                        "env": [{"name": "A", "value": "1"}],
                        "ports": [{"name": "grpc", "containerPort": 8080}],
                        "resources": {"limits": {"cpu": "0.5", "memory": "128Mi"}},
                        "securityContext": {
                            "allowPrivilegeEscalation": False,
                            "capabilities": {"drop": ["ALL"]},
                        },
                        "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],
                    }
                ],
                "volumes": [{"name": "tmp", "emptyDir": {}}],
            },
        },
    },
}


def served(declared: dict[str, Any]) -> dict[str, Any]:
    """``declared`` as the API server returns it: its metadata and defaults added."""
    obj = copy.deepcopy(declared)
    obj["metadata"].update(
        uid="u-1",
        resourceVersion="7",
        generation=1,
        annotations={"deployment.kubernetes.io/revision": "1"},
    )
    spec = obj["spec"]
    spec.update(progressDeadlineSeconds=600, revisionHistoryLimit=10, strategy={"type": "x"})
    pod = spec["template"]["spec"]
    pod.update(
        dnsPolicy="ClusterFirst",
        restartPolicy="Always",
        schedulerName="default-scheduler",
        terminationGracePeriodSeconds=30,
        serviceAccountName="default",
        serviceAccount="default",
    )
    (container,) = pod["containers"]
    container.update(imagePullPolicy="IfNotPresent", terminationMessagePath="/dev/termination-log")
    container["ports"][0]["protocol"] = "TCP"
    container["resources"]["limits"]["cpu"] = "500m"
    obj["status"] = {"replicas": 1}
    return obj


def test_what_the_server_defaults_is_no_difference() -> None:
    assert differences(DECLARED, served(DECLARED)) == ()


def edit(path: str, value: Any) -> dict[str, Any]:
    obj = served(DECLARED)
    *parents, last = path.split(".")
    target = obj
    for part in parents:
        target = target[int(part)] if isinstance(target, list) else target[part]
    if isinstance(target, list):
        target.append(value)
    else:
        target[last] = value
    return obj


POD = "spec.template.spec"
C0 = f"{POD}.containers.0"


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        ("spec.replicas", 5, "spec.replicas"),
        (f"{C0}.image", "evil/miner:1", "spec.template.spec.containers[gateway].image"),
        (f"{POD}.containers.+", {"name": "miner"}, "spec.template.spec.containers[miner]"),
        (f"{C0}.env.+", {"name": "B"}, "spec.template.spec.containers[gateway].env[B]"),
        (
            f"{POD}.volumes.+",
            {"name": "host", "hostPath": {"path": "/"}},
            "spec.template.spec.volumes[host]",
        ),
        (
            f"{C0}.volumeMounts.+",
            {"name": "host", "mountPath": "/host"},
            "spec.template.spec.containers[gateway].volumeMounts[host]",
        ),
        (
            f"{C0}.securityContext.privileged",
            True,
            "spec.template.spec.containers[gateway].securityContext.privileged",
        ),
        (
            f"{C0}.securityContext.capabilities.add",
            ["SYS_ADMIN"],
            "spec.template.spec.containers[gateway].securityContext.capabilities.add",
        ),
        (f"{POD}.securityContext.runAsUser", 0, "spec.template.spec.securityContext.runAsUser"),
        (f"{POD}.hostNetwork", True, "spec.template.spec.hostNetwork"),
        (f"{POD}.hostPID", True, "spec.template.spec.hostPID"),
        (f"{POD}.nodeSelector", {"node": "a"}, "spec.template.spec.nodeSelector"),
        (f"{POD}.nodeName", "node-a", "spec.template.spec.nodeName"),
        (f"{POD}.tolerations", [{"operator": "Exists"}], "spec.template.spec.tolerations"),
        (f"{POD}.serviceAccountName", "admin", "spec.template.spec.serviceAccountName"),
        (
            f"{POD}.imagePullSecrets",
            [{"name": "stolen"}],
            "spec.template.spec.imagePullSecrets",
        ),
        (
            f"{POD}.ephemeralContainers",
            [{"name": "debug"}],
            "spec.template.spec.ephemeralContainers",
        ),
        (f"{C0}.command", ["/bin/sh"], "spec.template.spec.containers[gateway].command"),
        (
            f"{C0}.ports.+",
            {"containerPort": 22, "hostPort": 22},
            "spec.template.spec.containers[gateway].ports.hostPort",
        ),
        ("metadata.labels.stolen", "yes", "metadata.labels.stolen"),
        ("spec.template.metadata.labels.app", "other", "spec.template.metadata.labels.app"),
        ("spec.selector.matchLabels.extra", "x", "spec.selector.matchLabels.extra"),
    ],
)
def test_each_tampering_is_named_by_its_path(path: str, value: Any, expected: str) -> None:
    assert expected in differences(DECLARED, edit(path, value))


def test_a_narrowed_default_deny_selector_is_a_difference() -> None:
    declared = policy({})
    assert differences(declared, policy({"matchLabels": {"nobody": "here"}})) == (
        "spec.podSelector.matchLabels",
    )


def test_a_selector_as_declared_is_none() -> None:
    declared = policy({"matchLabels": {"app": "gateway"}})
    assert differences(declared, copy.deepcopy(declared)) == ()


def test_a_label_a_policy_selects_removed_is_named() -> None:
    declared = policy({"matchLabels": {"app": "gateway"}})
    assert differences(declared, policy({})) == ("spec.podSelector.matchLabels",)


def test_rules_and_subjects_match_by_content_and_extra_entries_are_named() -> None:
    declared = {"subjects": [{"kind": "ServiceAccount", "name": "gw", "namespace": "ns"}]}
    live_ = copy.deepcopy(declared)
    live_["subjects"].append({"kind": "User", "name": "stranger"})
    assert differences(declared, live_) == ("subjects[stranger]",)
    rules = {"spec": {"ingress": [{"ports": [{"port": 8080}]}]}}
    defaulted = {"spec": {"ingress": [{"ports": [{"port": 8080, "protocol": "TCP"}]}]}}
    assert differences(rules, defaulted) == ()
    opened = copy.deepcopy(defaulted)
    opened["spec"]["ingress"].append({})
    assert differences(rules, opened) == ("spec.ingress[+1]",)


def test_a_service_turned_node_port_is_named_and_cluster_ip_is_the_default() -> None:
    declared = {"spec": {"selector": {"app": "gw"}, "ports": [{"name": "grpc", "port": 80}]}}
    defaulted = copy.deepcopy(declared)
    defaulted["spec"].update(type="ClusterIP", clusterIP="10.0.0.1")
    assert differences(declared, defaulted) == ()
    defaulted["spec"]["type"] = "NodePort"
    assert differences(declared, defaulted) == ("spec.type",)


def test_secret_values_are_not_compared() -> None:
    sig = "4dabf18193072939515e22adb298388d"
    declared = {"data": {sig: "1b47061264138c4ac30d75fd1eb44270", "ciphertext": "v1:abc"}}
    assert differences(declared, {"data": {"password": "c2VjcmV0"}}) == ()


@pytest.mark.parametrize(
    ("text", "value"),
    [("500m", "0.5"), ("0.5", "0.5"), ("128Mi", "134217728"), ("1G", "1000000000")],
)
def test_quantities_are_read_by_value(text: str, value: str) -> None:
    assert quantity(text) == quantity(value) is not None


def obj(kind: str, name: str, namespace: str = "ns", **extra: Any) -> dict[str, Any]:
    api = {"RoleBinding": "rbac.authorization.k8s.io/v1", "ReplicaSet": "apps/v1"}
    metadata = {"name": name, "namespace": namespace, "uid": f"uid-{kind}-{name}"}
    metadata.update(extra.pop("metadata", {}))
    return {"apiVersion": api.get(kind, "v1"), "kind": kind, "metadata": metadata, **extra}


def test_objects_nobody_declared_are_unmanaged_and_the_platforms_are_not() -> None:
    objects = live.LiveObjects(
        items=(
            obj("ConfigMap", "kube-root-ca.crt"),
            obj("ServiceAccount", "default"),
            obj("ServiceAccount", "gw"),
            obj("ReplicaSet", "gw-1", metadata={"ownerReferences": [{"uid": "uid-Deploy-gw"}]}),
            obj("Deployment", "gw", metadata={"uid": "uid-Deploy-gw"}),
            obj("Pod", "gw-1-a", metadata={"ownerReferences": [{"uid": "uid-ReplicaSet-gw-1"}]}),
            obj("Pod", "planted", metadata={"ownerReferences": [{"uid": "elsewhere"}]}),
            obj("RoleBinding", "stranger-edit"),
            obj("ConfigMap", "other", namespace="not-a-gateway-namespace"),
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": "ns-admin"},
                "subjects": [{"kind": "Group", "name": "system:serviceaccounts:ns"}],
            },
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": "unrelated"},
                "subjects": [{"kind": "ServiceAccount", "name": "x", "namespace": "kube-system"}],
            },
        ),
        namespaces=("ns",),
        kinds=(),
        read_at=datetime(2026, 6, 1, tzinfo=UTC),
        context="c",
    )
    managed = [("", "ServiceAccount", "ns", "gw"), ("", "Deployment", "ns", "gw")]
    found = [(n, live.key(o)) for n, o in live.unmanaged(objects, managed)]
    assert found == [
        ("ns", ("", "Pod", "ns", "planted")),
        ("ns", ("rbac.authorization.k8s.io", "ClusterRoleBinding", "", "ns-admin")),
        ("ns", ("rbac.authorization.k8s.io", "RoleBinding", "ns", "stranger-edit")),
    ]
    assert (
        live.unmanaged(
            objects,
            managed,
            ignored=["Pod/plant*", "RoleBinding/stranger-edit", "ClusterRoleBinding/ns-*"],
        )
        == []
    )
    assert [live.key(o)[3] for _, o in live.unmanaged(objects, managed, ["Pod/plant"])] == [
        "planted",
        "ns-admin",
        "stranger-edit",
    ]  # a pattern matches the whole Kind/name


def test_a_secrets_values_are_never_kept_nor_another_objects_managed_fields() -> None:
    secret = {"kind": "Secret", "metadata": {}, "data": {"password": "eA=="}}
    assert live._clean(secret) == {"kind": "Secret", "metadata": {}, "data": {"password": ""}}
    config = {"kind": "ConfigMap", "metadata": {"managedFields": [{}]}, "data": {"a": "b"}}
    assert live._clean(config) == {"kind": "ConfigMap", "metadata": {}, "data": {"a": "b"}}


def test_an_addition_is_drift_the_self_heal_leaves_alone() -> None:
    """``up --refresh`` would leave another manager's addition in place: no self-heal."""
    resources = stack_resources({"x": None}) + gateway_resources("x", exposed=False)
    (deploy,) = [r for r in resources if r["type"] == DEPLOYMENT]
    deploy["inputs"] = workload(["gateway"], ["tmp"])
    deploy["outputs"] = workload(["gateway", "miner"], ["tmp"])
    parsed = inputs.Inputs(
        checkpoint=UntypedDeployment.model_validate(export(resources)).deployment,
        refresh=PreviewDigest.model_validate(digest([refresh_step(r) for r in resources])),
    )
    status = core.build("ibm", parsed, datetime(2026, 6, 1, tzinfo=UTC))
    (gateway,) = status.gateways
    assert gateway.sync == "OutOfSync"
    assert [(c.name, c.op, c.source, c.paths) for c in gateway.changes] == [
        ("x-workload-deploy", "addition", "live", ("spec.template.spec.containers[miner]",))
    ]
    assert selfheal.remedy(status, True) == selfheal.Remedy(action="none")
    assert change_line(gateway.changes[0]) == (
        "kubernetes:apps/v1:Deployment x-workload-deploy (live) added by another manager"
        " (up leaves it: self-heal removes it, or the command below):"
        " spec.template.spec.containers[miner]"
    )


def test_live_objects_are_compared_and_the_undeclared_named_in_the_gateway() -> None:
    """With ``--live``'s objects, the state's inputs are compared with them (not with the
    state's outputs), and an object nobody declared is the gateway's change too; the document
    says when and where they were read, and self-heal leaves both alone."""
    resources = stack_resources({"x": None}) + gateway_resources("x", exposed=False)
    (deploy,) = [r for r in resources if r["type"] == DEPLOYMENT]
    declared = workload(["gateway"], ["tmp"])
    declared.update(
        apiVersion="apps/v1", kind="Deployment", metadata={"name": "gw", "namespace": "ns-x"}
    )
    deploy["inputs"] = declared
    deploy["outputs"] = copy.deepcopy(declared)  # as the last up read it: clean
    tampered = copy.deepcopy(declared)
    tampered["spec"]["template"]["spec"]["hostNetwork"] = True
    planted = obj("RoleBinding", "stranger-edit", namespace="ns-x")
    objects = live.LiveObjects(
        items=(tampered, planted, obj("ConfigMap", "kube-root-ca.crt", namespace="ns-x")),
        namespaces=("ns-x",),
        kinds=("deployments.apps",),
        read_at=datetime(2026, 6, 1, 4, tzinfo=UTC),
        context="ctx",
    )
    parsed = inputs.Inputs(
        checkpoint=UntypedDeployment.model_validate(export(resources)).deployment,
        refresh=PreviewDigest.model_validate(digest([refresh_step(r) for r in resources])),
    )
    now = datetime(2026, 6, 1, 5, tzinfo=UTC)
    assert core.build("ibm", parsed, now).gateways[0].changes == ()  # the state alone: clean
    status = core.build("ibm", parsed, now, objects=objects, namespaces={"ns-x": "x"})
    (gateway,) = status.gateways
    assert gateway.sync == "OutOfSync"
    assert [(c.name, c.op, c.paths) for c in gateway.changes] == [
        ("x-workload-deploy", "addition", ("spec.template.spec.hostNetwork",)),
        ("ns-x/stranger-edit", "unmanaged", ()),
    ]
    assert change_line(gateway.changes[1]) == (
        "rbac.authorization.k8s.io/RoleBinding ns-x/stranger-edit (live) not declared by the"
        " program (deleted only by self-heal with selfHealUnmanaged)"
    )
    assert selfheal.remedy(status, True) == selfheal.Remedy(action="none")
    head = formats.document(status, selfheal.Remedy(action="none"), "out-of-sync", False, {})
    assert head["liveObjects"] == {
        "readAt": "2026-06-01T04:00:00+00:00",
        "context": "ctx",
        "namespaces": ["ns-x"],
        "kinds": ["deployments.apps"],
        "objects": 3,
        "unreadClusters": [],
    }
    assert head["gateways"][0]["changes"][1]["urn"] is None
    assert "3 live objects of 1 namespace(s) read with kubectl at 2026-06-01 04:00 UTC" in (
        formats.live_note(status)
    )


def test_labels_or_annotations_on_an_object_that_declares_none_are_named() -> None:
    declared: dict[str, Any] = {
        "metadata": {"name": "svc"},
        "spec": {"selector": {"app": "gw"}, "ports": []},
    }
    live_ = copy.deepcopy(declared)
    live_["metadata"]["annotations"] = {
        "exposed-by": "intruder",
        "kubectl.kubernetes.io/last-applied-configuration": "{}",
    }
    live_["metadata"]["labels"] = {"kubernetes.io/metadata.name": "svc"}
    assert differences(declared, live_) == ("metadata.annotations.exposed-by",)


def test_a_secret_key_another_manager_wrote_is_named_without_its_value() -> None:
    from gatewayctl.status.tampering import written_by_others

    def owned(manager: str, *keys: str) -> dict[str, Any]:
        return {
            "manager": manager,
            "operation": "Update" if manager.startswith("kubectl") else "Apply",
            "fieldsV1": {"f:data": {f"f:{k}": {} for k in keys}, "f:type": {}},
        }

    ours = "pulumi-kubernetes-1b841d5a"
    secret: dict[str, Any] = {
        "kind": "Secret",
        "metadata": {"managedFields": [owned(ours, "url", "password")]},
        "data": {"url": "", "password": ""},
    }
    assert written_by_others(ours, secret) == ()
    secret["metadata"]["managedFields"].append(owned("kubectl-patch", "url", "extra"))
    assert written_by_others(ours, secret) == ("data.extra", "data.url")
    assert written_by_others(None, secret) == ()  # no field manager in the state: not known
    # live.read keeps a Secret's managedFields (names, no values) and drops its values
    cleaned = live._clean(copy.deepcopy({**secret, "data": {"url": "eA=="}}))
    assert cleaned["metadata"]["managedFields"] == secret["metadata"]["managedFields"]
    assert cleaned["data"] == {"url": ""}


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        ([], {"east": None, "west": None}),
        (["/k/all"], {"east": "/k/all", "west": "/k/all"}),
        (["east=/k/e"], {"east": "/k/e"}),  # west not read: the report says so
        (["/k/all", "east=/k/e"], {"east": "/k/e", "west": "/k/all"}),
        (["./a=b"], {"east": "./a=b", "west": "./a=b"}),  # a file whose name holds '='
    ],
)
def test_kubeconfigs_for_the_live_read(entries: list[str], expected: dict[str, Any]) -> None:
    from gatewayctl.status.status_command import kubeconfigs

    assert kubeconfigs(entries, ["east", "west"]) == expected


def test_a_kubeconfig_for_a_cluster_the_stack_lacks_is_refused() -> None:
    from gatewayctl.errors import UsageError
    from gatewayctl.status.status_command import kubeconfigs

    with pytest.raises(UsageError, match="the stack has no cluster 'north'; its clusters: east"):
        kubeconfigs(["north=/k/n"], ["east"])


def test_a_cluster_not_read_is_said() -> None:
    now = datetime(2026, 6, 1, tzinfo=UTC)
    one = live.LiveObjects(items=(), namespaces=("ns",), kinds=(), read_at=now, context="a")
    both = live.merged([one, live.unread("west", now)], now)
    assert (both.namespaces, both.context, both.unread) == (("ns",), "a", ("west",))

"""Self-heal of additions and unmanaged objects (gatewayctl/status/heal.py): what it removes,
recreates or deletes, with which kubectl command, and what it leaves to a person."""

from __future__ import annotations

import copy
import json
import stat
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from gatewayctl.status import core, formats, heal, inputs, live, selfheal
from gatewayctl.status.models import PreviewDigest, UntypedDeployment
from gatewayctl.status.sync import Change
from tests.hostile_helpers import run_cli
from tests.status_builders import digest, export, gateway_resources, refresh_step, stack_resources

DEPLOYMENT = "kubernetes:apps/v1:Deployment"
NOW = datetime(2026, 6, 1, 5, tzinfo=UTC)

DECLARED: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "gw", "namespace": "ns-x", "labels": {"app": "gw"}},
    "spec": {
        "replicas": 1,
        "template": {
            "spec": {
                "containers": [
                    {"name": "gateway", "image": "gw:1", "env": [{"name": "A", "value": "1"}]}
                ],
                "volumes": [{"name": "tmp", "emptyDir": {}}],
            }
        },
    },
}


def live_object(kind: str, name: str, **extra: Any) -> dict[str, Any]:
    api = {"RoleBinding": "rbac.authorization.k8s.io/v1", "Deployment": "apps/v1"}
    metadata = {"name": name, "namespace": "ns-x", "uid": f"uid-{name}", "resourceVersion": "7"}
    metadata.update(extra.pop("metadata", {}))
    return {"apiVersion": api.get(kind, "v1"), "kind": kind, "metadata": metadata, **extra}


def tampered() -> dict[str, Any]:
    obj = copy.deepcopy(DECLARED)
    obj["metadata"].update(uid="uid-gw", resourceVersion="41")
    pod = obj["spec"]["template"]["spec"]
    pod["hostNetwork"] = True
    pod["containers"].append({"name": "miner", "image": "miner:1"})
    pod["containers"][0]["env"].append({"name": "INJECTED", "value": "1"})
    pod["volumes"] += [{"name": "host", "hostPath": {"path": "/"}}, {"name": "more"}]
    return obj


def build(items: list[dict[str, Any]]) -> core.StackStatus:
    resources = stack_resources({"x": None}) + gateway_resources("x", exposed=False)
    (deploy,) = [r for r in resources if r["type"] == DEPLOYMENT]
    deploy["inputs"] = copy.deepcopy(DECLARED)
    deploy["outputs"] = copy.deepcopy(DECLARED)
    parsed = inputs.Inputs(
        checkpoint=UntypedDeployment.model_validate(export(resources)).deployment,
        refresh=PreviewDigest.model_validate(digest([refresh_step(r) for r in resources])),
    )
    objects = live.LiveObjects(
        items=tuple(items),
        namespaces=("ns-x",),
        kinds=("deployments.apps",),
        read_at=NOW,
        context="ctx",
    )
    return core.build("ibm", parsed, NOW, objects=objects, namespaces={"ns-x": "x"})


def test_a_path_is_resolved_to_json_pointer_segments_in_the_object() -> None:
    obj = {
        "metadata": {"labels": {"app.kubernetes.io/name": "gw", "app": "x"}},
        "spec": {"containers": [{"name": "a", "ports": [{"hostPort": 1}, {}, {"hostPort": 2}]}]},
        "rules": [{"verbs": ["get"]}, {"verbs": ["*"]}],
    }
    assert heal.resolve(obj, "metadata.labels.app.kubernetes.io/name") == [
        ("metadata", "labels", "app.kubernetes.io/name")
    ]
    assert heal.resolve(obj, "spec.containers[a].ports.hostPort") == [
        ("spec", "containers", 0, "ports", 0, "hostPort"),
        ("spec", "containers", 0, "ports", 2, "hostPort"),
    ]
    assert heal.resolve(obj, "rules[+1]") == [("rules", 1)]
    assert heal.resolve(obj, "rules[+1]", live_indexes=False) == []  # no desired entry
    assert heal.resolve(obj, "rules[+2]") == []
    assert heal.resolve(obj, "spec.containers[b]") == []
    assert heal.resolve(obj, "metadata.annotations.x") == []
    assert heal.pointer(("metadata", "labels", "app.kubernetes.io/name~x", 3)) == (
        "/metadata/labels/app.kubernetes.io~1name~0x/3"
    )


def test_only_what_the_program_does_not_declare_is_removed_last_entries_first() -> None:
    desired = {"spec": {"replicas": 1, "selector": {}, "list": [{"name": "a"}]}}
    current = {
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"x": "y", "z": "w"}},
            "list": [{"name": "a"}, {"name": "b"}, {"name": "c", "deep": {"k": 1}}],
        }
    }
    places, changed = heal.removals(
        desired,
        current,
        [
            "spec.replicas",
            "spec.selector.matchLabels",
            "spec.selector.matchLabels.x",
            "spec.list[b]",
            "spec.list[c]",
            "spec.list[c].deep.k",
        ],
    )
    assert [heal.pointer(p) for p in places] == [
        "/spec/selector/matchLabels",
        "/spec/list/2",
        "/spec/list/1",
    ]
    assert changed == ["spec.replicas"]


def test_additions_are_removed_by_a_json_patch_tested_on_the_version_read() -> None:
    status = build([tampered()])
    (gateway,) = status.gateways
    assert [(c.op, c.paths) for c in gateway.changes] == [
        (
            "addition",
            (
                "spec.template.spec.containers[gateway].env[INJECTED]",
                "spec.template.spec.containers[miner]",
                "spec.template.spec.hostNetwork",
                "spec.template.spec.volumes[host]",
                "spec.template.spec.volumes[more]",
            ),
        )
    ]
    plan = heal.plan(status, delete_unmanaged=False)
    assert plan.manual == ()
    (step,) = plan.steps
    assert (step.action, step.type, step.name, step.gateway) == (
        "remove",
        "apps/Deployment",
        "ns-x/gw",
        "x",
    )
    assert step.kubectl() == [
        "patch",
        "deployments.apps",
        "gw",
        "-n",
        "ns-x",
        "--type=json",
        "-p",
        '[{"op":"test","path":"/metadata/resourceVersion","value":"41"},'
        '{"op":"remove","path":"/spec/template/spec/volumes/2"},'
        '{"op":"remove","path":"/spec/template/spec/volumes/1"},'
        '{"op":"remove","path":"/spec/template/spec/hostNetwork"},'
        '{"op":"remove","path":"/spec/template/spec/containers/1"},'
        '{"op":"remove","path":"/spec/template/spec/containers/0/env/1"}]',
    ]
    assert step.body() is None
    assert selfheal.remedy(status, True, plan=plan).action == "heal"
    assert selfheal.remedy(status, False, plan=plan) == selfheal.Remedy(action="none", plan=plan)
    assert heal.describe(step) == (
        "remove from apps/Deployment ns-x/gw: spec.template.spec.containers[gateway].env[INJECTED],"
        " spec.template.spec.containers[miner], spec.template.spec.hostNetwork,"
        " spec.template.spec.volumes[host], spec.template.spec.volumes[more]"
    )


def test_an_unmanaged_object_is_deleted_only_when_the_stack_says_so() -> None:
    planted = live_object("RoleBinding", "stranger-edit")
    status = build([copy.deepcopy(DECLARED), planted])
    kept = heal.plan(status, delete_unmanaged=False)
    assert kept.steps == ()
    assert kept.manual == (
        heal.Manual(
            gateway="x",
            type="rbac.authorization.k8s.io/RoleBinding",
            name="ns-x/stranger-edit",
            why="not declared; self-heal deletes it only with selfHealUnmanaged",
            command="kubectl delete rolebindings.rbac.authorization.k8s.io stranger-edit -n ns-x",
        ),
    )
    assert selfheal.remedy(status, True, plan=kept).action == "none"
    (step,) = heal.plan(status, delete_unmanaged=True).steps
    assert step.kubectl() == [
        "delete",
        "--raw",
        "/apis/rbac.authorization.k8s.io/v1/namespaces/ns-x/rolebindings/stranger-edit",
        "-f",
        "-",
    ]
    assert json.loads(step.body() or "") == {
        "apiVersion": "v1",
        "kind": "DeleteOptions",
        "preconditions": {"uid": "uid-stranger-edit", "resourceVersion": "7"},
        "propagationPolicy": "Background",
    }


def test_a_secret_is_recreated_and_another_kind_changed_unseen_is_left_with_the_command() -> None:
    secret = live_object("Secret", "db", data={"uri": ""})
    change = Change(
        urn="urn:s",
        type="kubernetes:core/v1:Secret",
        name="db",
        op="addition",
        paths=("data.uri",),
        source="live",
    )
    steps: list[heal.Step] = []
    manual: list[heal.Manual] = []
    heal._object("x", change, {"stringData": {"uri": "..."}}, secret, steps, manual)
    (step,) = steps
    assert (step.action, step.kubectl()[:3], manual) == (
        "recreate",
        ["delete", "--raw", "/api/v1/namespaces/ns-x/secrets/db"],
        [],
    )
    assert step.command() == "kubectl delete secrets db -n ns-x && pulumi up --refresh"
    policy = live_object("NetworkPolicy", "np", spec={"podSelector": {"matchLabels": {"a": "c"}}})
    policy["apiVersion"] = "networking.k8s.io/v1"
    change = Change(
        urn="urn:n",
        type="kubernetes:networking.k8s.io/v1:NetworkPolicy",
        name="np",
        op="addition",
        paths=("spec.podSelector.matchLabels.a",),
        source="live",
    )
    steps, manual = [], []
    heal._object(
        "x", change, {"spec": {"podSelector": {"matchLabels": {"a": "b"}}}}, policy, steps, manual
    )
    assert steps == []
    assert [(m.why, m.command) for m in manual] == [
        (
            "spec.podSelector.matchLabels.a changed where no refresh sees it, and deleting a"
            " NetworkPolicy loses what it holds",
            "kubectl delete networkpolicies.networking.k8s.io np -n ns-x && pulumi up --refresh",
        )
    ]


def test_the_report_names_each_step_and_what_is_left_with_its_command() -> None:
    status = build([tampered(), live_object("RoleBinding", "stranger-edit")])
    plan = heal.plan(status, delete_unmanaged=False)
    remedy = selfheal.remedy(status, True, plan=plan)
    lines = formats.heal_lines(remedy)
    assert lines[0].startswith("self-heal will remove from apps/Deployment ns-x/gw: ")
    assert lines[1] == (
        "left to a person: rbac.authorization.k8s.io/RoleBinding ns-x/stranger-edit: not"
        " declared; self-heal deletes it only with selfHealUnmanaged: `kubectl delete"
        " rolebindings.rbac.authorization.k8s.io stranger-edit -n ns-x`"
    )
    document = formats.document(status, remedy, "out-of-sync", True, {})["remedy"]
    assert document["action"] == "heal"
    assert [(h["action"], h["name"], h["gateway"]) for h in document["heal"]] == [
        ("remove", "ns-x/gw", "x")
    ]
    assert document["heal"][0]["command"].startswith(
        'kubectl patch deployments.apps gw -n ns-x --type=json -p \'[{"op":"test"'
    )
    assert [m["command"] for m in document["manual"]] == [
        "kubectl delete rolebindings.rbac.authorization.k8s.io stranger-edit -n ns-x"
    ]
    off = formats.heal_lines(selfheal.remedy(status, False, plan=plan))
    assert off[0].startswith("to heal: remove from apps/Deployment ns-x/gw: ")
    assert off[0].endswith("/spec/template/spec/containers/0/env/1\"}]'`")  # quoted, in a code span


def fake_kubectl(tmp_path: Path, fail_on: str = "") -> tuple[Path, Path]:
    """A kubectl that records each call (its arguments and stdin, one JSON line) and fails
    when an argument equals ``fail_on``."""
    calls = tmp_path / "calls.jsonl"
    script = tmp_path / "kubectl"
    script.write_text(
        "#!/usr/bin/env python3\n"
        "import json, sys\n"
        f"calls = {str(calls)!r}\n"
        "body = sys.stdin.read()\n"
        "with open(calls, 'a') as out:\n"
        "    out.write(json.dumps({'args': sys.argv[1:], 'stdin': body}) + '\\n')\n"
        f"if {fail_on!r} and {fail_on!r} in sys.argv:\n"
        "    print('Error from server (Conflict): the object has been modified', file=sys.stderr)\n"
        "    sys.exit(1)\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script, calls


def test_the_steps_run_in_order_with_each_gateways_kubectl(tmp_path: Path) -> None:
    status = build([tampered(), live_object("RoleBinding", "stranger-edit")])
    plan = heal.plan(status, delete_unmanaged=True)
    script, calls = fake_kubectl(tmp_path)
    line = [str(script), "--kubeconfig=/k", "--context=c"]
    assert heal.run(plan.steps, {"x": line}) == [f"done: {heal.describe(s)}" for s in plan.steps]
    recorded = [json.loads(x) for x in calls.read_text().splitlines()]
    assert [c["args"][:3] for c in recorded] == [
        ["--kubeconfig=/k", "--context=c", "patch"],
        ["--kubeconfig=/k", "--context=c", "delete"],
    ]
    assert recorded[0]["stdin"] == ""
    assert json.loads(recorded[1]["stdin"])["preconditions"]["uid"] == "uid-stranger-edit"

    (tmp_path / "failing").mkdir()
    script, calls = fake_kubectl(tmp_path / "failing", fail_on="--raw")
    with pytest.raises(heal.HealError) as raised:
        heal.run(plan.steps, {"x": [str(script)]})
    assert str(raised.value) == (
        "delete rbac.authorization.k8s.io/RoleBinding ns-x/stranger-edit: kubectl delete --raw"
        " /apis/rbac.authorization.k8s.io/v1/namespaces/ns-x/rolebindings/stranger-edit exited 1:"
        " Error from server (Conflict): the object has been modified"
    )
    assert len(calls.read_text().splitlines()) == 2  # the patch ran, the delete was refused
    with pytest.raises(heal.HealError) as raised:
        heal.run(plan.steps, {})
    assert str(raised.value) == (
        "remove apps/Deployment ns-x/gw: the cluster of gateway x was not read (no --kubeconfig"
        " for it)"
    )


def test_heal_needs_live_and_the_whole_stack() -> None:
    out = run_cli("status", "ibm", "--heal", "--from", "state.json")
    assert out.code == 2
    assert "--heal needs --live (it heals what kubectl read) and no GATEWAY" in out.err


def test_a_configmap_loses_an_added_key_in_place_and_is_recreated_for_a_changed_one() -> None:
    current = live_object("ConfigMap", "cfg", data={"a": "changed", "injected": "1"})
    desired = {"data": {"a": "declared"}}
    for paths, action in (
        (("data.injected",), "remove"),
        (("data.a", "data.injected"), "recreate"),
    ):
        change = Change(
            urn="urn:c",
            type="kubernetes:core/v1:ConfigMap",
            name="cfg",
            op="addition",
            paths=paths,
            source="live",
        )
        steps: list[heal.Step] = []
        manual: list[heal.Manual] = []
        heal._object("x", change, desired, current, steps, manual)
        assert ([s.action for s in steps], manual) == ([action], [])
        assert steps[0].paths == paths


def test_a_shared_cluster_role_binding_loses_only_the_gateway_namespaces_subjects() -> None:
    subjects = [
        {"kind": "ServiceAccount", "name": "monitoring-agent", "namespace": "other-team"},
        {"kind": "ServiceAccount", "name": "openshell-gateway", "namespace": "ns-x"},
        {"kind": "Group", "name": "system:serviceaccounts:ns-x"},
    ]
    shared = live_object("ClusterRoleBinding", "system:openshift:scc:privileged", subjects=subjects)
    shared["apiVersion"] = "rbac.authorization.k8s.io/v1"
    del shared["metadata"]["namespace"]
    own = copy.deepcopy(shared)
    own["metadata"]["name"] = "tenant-admin"
    own["subjects"] = subjects[1:]
    (remove, delete) = heal.plan(build([copy.deepcopy(DECLARED), shared, own]), True).steps
    assert (remove.action, remove.name, remove.paths) == (
        "remove",
        "system:openshift:scc:privileged",
        ("subjects[openshell-gateway]", "subjects[system:serviceaccounts:ns-x]"),
    )
    assert json.loads(remove.kubectl()[-1]) == [
        {"op": "test", "path": "/metadata/resourceVersion", "value": "7"},
        {"op": "remove", "path": "/subjects/2"},
        {"op": "remove", "path": "/subjects/1"},
    ]
    assert remove.kubectl()[:3] == [
        "patch",
        "clusterrolebindings.rbac.authorization.k8s.io",
        "system:openshift:scc:privileged",
    ]
    assert (delete.action, delete.name, delete.uri) == (
        "delete",
        "tenant-admin",
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/tenant-admin",
    )


def test_a_changed_entry_of_a_list_without_names_is_not_removed() -> None:
    desired = {"spec": {"ingress": [{"from": [{"podSelector": {}}]}], "x": [{"a": 1}]}}
    current = {
        "spec": {
            "ingress": [{"from": [{"podSelector": {"matchLabels": {"a": "b"}}}]}],
            "x": [{"a": 1}, {"a": 2}],
        }
    }
    places, changed = heal.removals(
        desired, current, ["spec.ingress[0]", "spec.ingress[+0]", "spec.x[+1]"]
    )
    assert ([heal.pointer(p) for p in places], changed) == (
        ["/spec/x/1"],
        ["spec.ingress[0]", "spec.ingress[+0]"],
    )


def test_deletes_for_up_to_recreate_come_last() -> None:
    secret = live_object("Secret", "db", data={"uri": ""})
    obj = tampered()
    steps: list[heal.Step] = []
    manual: list[heal.Manual] = []
    for change, desired, current in (
        (
            Change(
                urn="s", type="Secret", name="db", op="addition", paths=("data.uri",), source="live"
            ),
            {},
            secret,
        ),
        (
            Change(
                urn="d",
                type="Deployment",
                name="gw",
                op="addition",
                paths=("spec.template.spec.hostNetwork",),
                source="live",
            ),
            DECLARED,
            obj,
        ),
    ):
        heal._object("x", change, desired, current, steps, manual)
    assert [s.action for s in steps] == ["recreate", "remove"]
    assert [s.action for s in heal.ordered(steps)] == ["remove", "recreate"]


def test_an_added_name_that_appears_twice_is_removed_twice() -> None:
    desired = {"spec": {"env": [{"name": "A", "value": "1"}]}}
    current = {
        "spec": {
            "env": [
                {"name": "Y", "value": "1"},
                {"name": "A", "value": "1"},
                {"name": "Y", "value": "2"},
            ]
        }
    }
    places, changed = heal.removals(desired, current, ["spec.env[Y]"])
    assert ([heal.pointer(p) for p in places], changed) == (["/spec/env/2", "/spec/env/0"], [])

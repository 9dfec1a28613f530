"""RBAC and object metadata as pure data (components/rbac.py, components/metadata.py)."""

from __future__ import annotations

from components import rbac
from components.metadata import metadata

LABELS = {"app.kubernetes.io/name": "openshell", "hypershell.redhat.io/gateway": "team-a"}


def test_role_ref_names_a_role_of_the_rbac_api_group() -> None:
    assert rbac.role_ref("Role", "openshell-gateway-sandbox") == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": "openshell-gateway-sandbox",
    }
    assert rbac.role_ref("ClusterRole", "system:openshift:scc:privileged") == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "system:openshift:scc:privileged",
    }


def test_service_account_is_the_one_subject_of_a_binding() -> None:
    assert rbac.service_account("openshell-gateway", "openshell-team-a") == [
        {"kind": "ServiceAccount", "name": "openshell-gateway", "namespace": "openshell-team-a"}
    ]


def test_sandbox_rules_are_upstreams() -> None:
    # manifests/gateway/role.yaml upstream: the gateway manages its tenant's sandboxes.
    assert rbac.SANDBOX_RULES == [
        {
            "apiGroups": ["agents.x-k8s.io"],
            "resources": ["sandboxes", "sandboxes/status"],
            "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
        },
        {"apiGroups": [""], "resources": ["events"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]},
    ]


def test_node_reader_rules_are_upstreams_and_read_only_but_for_token_reviews() -> None:
    assert rbac.NODE_READER_RULES == [
        {
            "apiGroups": ["authentication.k8s.io"],
            "resources": ["tokenreviews"],
            "verbs": ["create"],
        },
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]},
    ]


def test_metadata_of_a_namespaced_object() -> None:
    assert metadata("openshell-gateway", LABELS, namespace="openshell-team-a") == {
        "name": "openshell-gateway",
        "namespace": "openshell-team-a",
        "labels": LABELS,
    }


def test_metadata_of_a_cluster_scoped_object_has_no_namespace() -> None:
    assert metadata("openshell-gateway-node-reader", LABELS) == {
        "name": "openshell-gateway-node-reader",
        "labels": LABELS,
    }


def test_metadata_sends_annotations_only_when_there_are_some() -> None:
    assert metadata("x", LABELS, annotations={}) == {"name": "x", "labels": LABELS}
    assert metadata("x", LABELS, namespace="ns", annotations={"a": "1"}) == {
        "name": "x",
        "namespace": "ns",
        "labels": LABELS,
        "annotations": {"a": "1"},
    }


def test_metadata_does_not_share_the_callers_mappings() -> None:
    labels = dict(LABELS)
    annotations = {"a": "1"}
    meta = metadata("x", labels, annotations=annotations)
    meta["labels"]["extra"] = "y"
    meta["annotations"]["b"] = "2"
    assert (labels, annotations) == (LABELS, {"a": "1"})

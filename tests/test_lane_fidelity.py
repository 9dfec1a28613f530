"""The lane's render-fidelity comparison (tests/e2e/fidelity.py): typed, empties included,
both ways. The lane runs it against the real API server; these pin its rules."""

from __future__ import annotations

from tests.e2e import fidelity


def test_values_compare_by_type_and_quantities_only_where_kubernetes_stores_them() -> None:
    assert fidelity.same(("spec", "replicas"), 1, 1)
    assert not fidelity.same(("metadata", "labels", "n"), "1", 1)
    assert not fidelity.same(("spec", "paused"), True, 1)
    limits = ("spec", "containers", 0, "resources", "limits", "cpu")
    assert fidelity.same(limits, "1000m", "1")
    assert fidelity.same(limits, "512Mi", "536870912")
    assert not fidelity.same(limits, "500m", "1")
    assert not fidelity.same(("data", "cpu"), "1000m", "1")  # not a quantity field


def test_empty_maps_and_lists_are_fields() -> None:
    obj = {"spec": {"podSelector": {}, "ingress": [], "policyTypes": ["Ingress"]}}
    assert list(fidelity.leaves(obj)) == [
        (("spec", "podSelector"), {}),
        (("spec", "ingress"), []),
        (("spec", "policyTypes", 0), "Ingress"),
    ]
    assert fidelity.same(("spec", "podSelector"), {}, {})
    assert not fidelity.same(("spec", "podSelector"), {}, {"matchLabels": {"app": "x"}})


def test_additions_to_set_lists_and_owned_maps_are_found() -> None:
    rendered = {
        "metadata": {"name": "ns", "labels": {"a": "1"}},
        "spec": {
            "podSelector": {},
            "template": {"spec": {"containers": [{"name": "c", "env": [{"name": "E"}]}]}},
        },
    }
    live = {
        "metadata": {"name": "ns", "uid": "u", "labels": {"a": "1", "b": "2"}},
        "spec": {
            "podSelector": {"matchLabels": {"x": "y"}},
            "template": {
                "spec": {
                    "containers": [
                        {"name": "c", "env": [{"name": "E"}, {"name": "F"}]},
                        {"name": "sidecar"},
                    ],
                    "dnsPolicy": "ClusterFirst",
                }
            },
        },
    }
    assert list(fidelity.extras("Deployment", rendered, live)) == [
        "metadata.labels.b: added live",
        "spec.podSelector.matchLabels: added live",
        "spec.template.spec.containers: 1 more entries live (1 rendered)",
        "spec.template.spec.containers.0.env: 1 more entries live (1 rendered)",
    ]
    # What the API server adds itself is no addition; nor are fields of maps it does not own.
    namespace = {"metadata": {"labels": {"a": "1"}}}
    served = {"metadata": {"labels": {"a": "1", "kubernetes.io/metadata.name": "ns"}}}
    assert list(fidelity.extras("Namespace", namespace, served)) == []
    assert list(fidelity.extras("Deployment", namespace, served)) == [
        "metadata.labels.kubernetes.io/metadata.name: added live"
    ]


def test_a_secrets_keys_live_are_the_ones_it_declares() -> None:
    rendered = {"stringData": {"a": "x"}, "data": {"b": "eA=="}}
    assert fidelity.secret_keys(rendered, {"data": {"a": "eA==", "b": "eA=="}}) == []
    assert fidelity.secret_keys(rendered, {"data": {"a": "", "b": "", "c": ""}}) == [
        "data.c: added live"
    ]
    assert list(fidelity.extras("Secret", rendered, {"data": {"c": ""}})) == []

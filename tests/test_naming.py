"""Names, labels and limits derived from a gateway name (components/naming.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components import naming
from tests.strategies import DNS_LABELS, SHORT_LABELS


def test_default_namespace_prefixes_openshell() -> None:
    assert naming.default_namespace("team-a") == "openshell-team-a"


def test_host_label_prefixes_gw() -> None:
    assert naming.host_label("openshell-team-a") == "gw-openshell-team-a"


@pytest.mark.parametrize(
    ("gateway", "identifier"),
    [
        ("team-a", "gw_team_a"),
        ("a-b-c", "gw_a_b_c"),
        ("plain", "gw_plain"),
        ("x--y", "gw_x__y"),
    ],
)
def test_postgres_identifier_replaces_hyphens(gateway: str, identifier: str) -> None:
    assert naming.postgres_identifier(gateway) == identifier


def test_service_names_are_upstreams_four_shortest_first() -> None:
    assert naming.service_names("openshell-team-a") == (
        "openshell-gateway",
        "openshell-gateway.openshell-team-a",
        "openshell-gateway.openshell-team-a.svc",
        "openshell-gateway.openshell-team-a.svc.cluster.local",
    )


def test_service_fqdn_is_the_last_service_name() -> None:
    assert naming.service_fqdn("ns1") == "openshell-gateway.ns1.svc.cluster.local"
    assert naming.service_names("ns1")[-1] == naming.service_fqdn("ns1")


def test_cluster_role_binding_is_per_namespace() -> None:
    assert (
        naming.cluster_role_binding("openshell-team-a")
        == "openshell-gateway-node-reader-openshell-team-a"
    )


def test_max_gateway_name_length_is_bound_by_the_host_label() -> None:
    # gw-openshell-<name>: 3 + 10 + 50 = 63, the DNS-1123 label limit, exactly.
    assert naming.max_gateway_name_length() == 50
    longest = "a" * naming.max_gateway_name_length()
    label = naming.host_label(naming.default_namespace(longest))
    assert label == "gw-openshell-" + longest
    assert len(label) == 63
    assert naming.is_dns1123_label(label)
    assert not naming.is_dns1123_label(naming.host_label(naming.default_namespace(longest + "a")))
    # The namespace and the PostgreSQL identifier are looser bounds.
    assert len(naming.default_namespace(longest)) == 60
    assert len(naming.postgres_identifier(longest)) == 53


def test_max_namespace_length_leaves_room_for_gw_prefix() -> None:
    assert naming.max_namespace_length() == 60
    assert len(naming.host_label("n" * naming.max_namespace_length())) == 63


@given(DNS_LABELS)
def test_generated_valid_labels_pass(label: str) -> None:
    assert naming.is_dns1123_label(label)


@given(SHORT_LABELS, st.sampled_from(["A", "Z", "_"]), st.data())
def test_uppercase_or_underscore_anywhere_fails(label: str, bad: str, data: st.DataObject) -> None:
    index = data.draw(st.integers(min_value=0, max_value=len(label)))
    candidate = label[:index] + bad + label[index:]
    assert len(candidate) <= 63
    assert not naming.is_dns1123_label(candidate)


@given(SHORT_LABELS)
def test_leading_or_trailing_hyphen_fails(label: str) -> None:
    assert not naming.is_dns1123_label("-" + label)
    assert not naming.is_dns1123_label(label + "-")


@given(st.from_regex(r"[a-z0-9][-a-z0-9]{62}[a-z0-9]", fullmatch=True))
def test_length_64_fails(label: str) -> None:
    assert len(label) == 64
    assert not naming.is_dns1123_label(label)


@pytest.mark.parametrize(
    "value",
    ["", "-", "a-", "-a", "A", "a_b", "a.b", "team-a\n", " team-a", "ü"],
)
def test_invalid_labels(value: str) -> None:
    assert not naming.is_dns1123_label(value)


@pytest.mark.parametrize("value", ["a", "0", "a-b", "a--b", "1abc", "a" * 63])
def test_valid_labels(value: str) -> None:
    assert naming.is_dns1123_label(value)


def test_standard_labels_default_component() -> None:
    assert naming.standard_labels("team-a") == {
        "app.kubernetes.io/name": "openshell",
        "app.kubernetes.io/component": "gateway",
        "app.kubernetes.io/managed-by": "hypershell-control-plane",
        "hypershell.redhat.io/managed": "true",
        "hypershell.redhat.io/gateway": "team-a",
    }


def test_standard_labels_explicit_component() -> None:
    assert naming.standard_labels("team-b", component="database") == {
        "app.kubernetes.io/name": "openshell",
        "app.kubernetes.io/component": "database",
        "app.kubernetes.io/managed-by": "hypershell-control-plane",
        "hypershell.redhat.io/managed": "true",
        "hypershell.redhat.io/gateway": "team-b",
    }


def test_selector_labels_are_upstreams() -> None:
    assert naming.selector_labels() == {
        "app.kubernetes.io/name": "openshell",
        "app.kubernetes.io/instance": "openshell-gateway",
    }


def test_selector_labels_are_a_fresh_dict() -> None:
    # Callers may add to the dict they get; the next caller must not see it.
    first = naming.selector_labels()
    first["extra"] = "x"
    assert "extra" not in naming.selector_labels()

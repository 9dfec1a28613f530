"""The one hostname function and its DNS checks (components/hostnames.py, DESIGN §5.1)."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from components.hostnames import HostnameError, check_dns_name, gateway_hostname, grpcs_address

BASE = "apps.example.com"
SYNTAX = (
    " is not a lowercase RFC 1123 DNS name"
    " (labels of a-z, 0-9 and inner '-', separated by single dots)"
)


def hijack_message(host: str, base: str, slot: str) -> str:
    return (
        f"host {host!r} is under the base domain {base!r} but is not this gateway's own slot"
        f" {slot!r}; a tenant may only use its own slot there"
    )


NO_HOST = (
    "exposure is enabled but there is no host: set spec.exposure.host or the cluster's baseDomain"
)

# Namespaces that fit a host slot (gw- + at most 60 = 63).
NAMESPACE = st.from_regex(r"[a-z0-9]([-a-z0-9]{0,58}[a-z0-9])?", fullmatch=True)
# Base domains short enough (at most 6 * 30 + 5 = 185) that gw-<ns>.<base> stays within 253.
BASE_LABEL = st.from_regex(r"[a-z0-9]([-a-z0-9]{0,28}[a-z0-9])?", fullmatch=True)
BASE_DOMAIN = st.lists(BASE_LABEL, min_size=1, max_size=6).map(".".join)


# --- check_dns_name ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "a",
        "example.com",
        "gw-openshell-team-a.apps.example.com",
        "0.1.2.3",
        "a--b.c",
        ("a" * 63 + ".") * 3 + "a" * 61,  # 253 characters, four labels
    ],
)
def test_check_dns_name_accepts_and_returns_value(value: str) -> None:
    assert check_dns_name(value) == value


def test_check_dns_name_empty() -> None:
    with pytest.raises(HostnameError) as info:
        check_dns_name("")
    assert str(info.value) == "host must not be empty"


def test_check_dns_name_label_longer_than_63() -> None:
    label = "a" * 64
    value = f"{label}.example.com"
    with pytest.raises(HostnameError) as info:
        check_dns_name(value)
    assert str(info.value) == f"host {value!r}: label {label!r} is 64 characters; at most 63"


def test_check_dns_name_longer_than_253() -> None:
    value = ("a" * 63 + ".") * 3 + "a" * 62  # every label fits, 254 in all
    assert len(value) == 254
    with pytest.raises(HostnameError) as info:
        check_dns_name(value)
    assert str(info.value) == f"host {value!r} is 254 characters; at most 253"


@pytest.mark.parametrize(
    "value",
    [
        "Example.com",
        "example.COM",
        "a.b\n",
        "\na.b",
        "a..b",
        ".a.b",
        "a.b.",
        "-a.b",
        "a.-b",
        "a-.b",
        "a_b.c",
        "a b.c",
        "a.b/c",
        "ü.example.com",
    ],
)
def test_check_dns_name_rejects_syntax(value: str) -> None:
    with pytest.raises(HostnameError) as info:
        check_dns_name(value)
    assert str(info.value) == f"host {value!r}{SYNTAX}"


def test_check_dns_name_names_what_it_checks() -> None:
    with pytest.raises(HostnameError) as info:
        check_dns_name("Apps.example.com", what="base domain")
    assert str(info.value) == f"base domain 'Apps.example.com'{SYNTAX}"


def test_hostname_error_is_a_value_error() -> None:
    assert issubclass(HostnameError, ValueError)


# --- gateway_hostname ----------------------------------------------------------------------


def test_default_is_the_tenant_slot() -> None:
    host = gateway_hostname(namespace="openshell-team-a", base_domain=BASE, explicit=None)
    assert host == "gw-openshell-team-a.apps.example.com"


@pytest.mark.parametrize("base", [BASE, None])
@pytest.mark.parametrize(
    "vanity",
    ["grpc.team-a.io", "notapps.example.com", "example.com", "gw-openshell-team-b.example.org"],
)
def test_explicit_host_outside_the_base_domain_is_used_as_is(vanity: str, base: str | None) -> None:
    assert gateway_hostname(namespace="openshell-team-a", base_domain=base, explicit=vanity) == (
        vanity
    )


def test_explicit_host_equal_to_own_slot_passes() -> None:
    slot = "gw-openshell-team-a.apps.example.com"
    assert gateway_hostname(namespace="openshell-team-a", base_domain=BASE, explicit=slot) == slot


@pytest.mark.parametrize(
    "host",
    [
        "gw-openshell-team-b.apps.example.com",  # another tenant's slot
        "api.apps.example.com",  # an unclaimed name under the base domain
        "x.gw-openshell-team-a.apps.example.com",  # below the own slot is not the slot
    ],
)
def test_explicit_host_under_the_base_domain_must_be_own_slot(host: str) -> None:
    with pytest.raises(HostnameError) as info:
        gateway_hostname(namespace="openshell-team-a", base_domain=BASE, explicit=host)
    assert str(info.value) == hijack_message(host, BASE, "gw-openshell-team-a.apps.example.com")


def test_explicit_host_equal_to_the_base_domain_is_rejected() -> None:
    with pytest.raises(HostnameError) as info:
        gateway_hostname(namespace="openshell-team-a", base_domain=BASE, explicit=BASE)
    assert str(info.value) == hijack_message(BASE, BASE, "gw-openshell-team-a.apps.example.com")


def test_no_host_and_no_base_domain_is_rejected() -> None:
    with pytest.raises(HostnameError) as info:
        gateway_hostname(namespace="openshell-team-a", base_domain=None, explicit=None)
    assert str(info.value) == NO_HOST


def test_namespace_too_long_for_the_slot_label() -> None:
    namespace = "n" * 61  # gw- + 61 = 64
    with pytest.raises(HostnameError) as info:
        gateway_hostname(namespace=namespace, base_domain=BASE, explicit=None)
    label = "gw-" + namespace
    assert str(info.value) == (
        f"host {label + '.' + BASE!r}: label {label!r} is 64 characters; at most 63"
    )


def test_namespace_of_60_fits_the_slot_label() -> None:
    namespace = "n" * 60
    host = gateway_hostname(namespace=namespace, base_domain=BASE, explicit=None)
    assert host == f"gw-{namespace}.{BASE}"


def test_invalid_base_domain_is_rejected_even_with_a_vanity_host() -> None:
    with pytest.raises(HostnameError) as info:
        gateway_hostname(namespace="ns", base_domain="Apps.Example.com", explicit="grpc.team.io")
    assert str(info.value) == f"base domain 'Apps.Example.com'{SYNTAX}"


def test_invalid_explicit_host_is_rejected() -> None:
    with pytest.raises(HostnameError) as info:
        gateway_hostname(namespace="ns", base_domain=BASE, explicit="grpc.team.io\n")
    assert str(info.value) == f"host 'grpc.team.io\\n'{SYNTAX}"


@given(NAMESPACE, BASE_DOMAIN)
def test_default_slot_is_always_a_valid_dns_name(namespace: str, base: str) -> None:
    host = gateway_hostname(namespace=namespace, base_domain=base, explicit=None)
    assert check_dns_name(host) == host
    assert host.startswith("gw-" + namespace + ".")
    assert host == f"gw-{namespace}.{base}"


@given(NAMESPACE, NAMESPACE, BASE_DOMAIN)
def test_another_tenants_slot_is_always_rejected(namespace: str, other: str, base: str) -> None:
    assume(other != namespace)
    host = f"gw-{other}.{base}"
    with pytest.raises(HostnameError) as info:
        gateway_hostname(namespace=namespace, base_domain=base, explicit=host)
    assert str(info.value) == hijack_message(host, base, f"gw-{namespace}.{base}")


def test_slot_beyond_253_characters_is_rejected() -> None:
    base = ("b" * 49 + ".") * 4 + "b" * 50  # 250 characters, itself valid
    slot = f"gw-ns.{base}"
    assert check_dns_name(base, what="base domain") == base
    with pytest.raises(HostnameError) as info:
        gateway_hostname(namespace="ns", base_domain=base, explicit=None)
    assert str(info.value) == f"host {slot!r} is 256 characters; at most 253"


@given(NAMESPACE, st.lists(BASE_LABEL, min_size=1, max_size=12).map(".".join))
def test_slot_is_returned_exactly_when_it_fits(namespace: str, base: str) -> None:
    assume(len(base) <= 253)
    slot = f"gw-{namespace}.{base}"
    if len(slot) <= 253:
        assert gateway_hostname(namespace=namespace, base_domain=base, explicit=None) == slot
    else:
        with pytest.raises(HostnameError) as info:
            gateway_hostname(namespace=namespace, base_domain=base, explicit=None)
        assert str(info.value) == f"host {slot!r} is {len(slot)} characters; at most 253"


# --- grpcs_address -------------------------------------------------------------------------


def test_grpcs_address() -> None:
    assert grpcs_address("gw-openshell-team-a.apps.example.com") == (
        "grpcs://gw-openshell-team-a.apps.example.com:443"
    )

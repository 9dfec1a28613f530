"""The one hostname function and its DNS checks (components/hostnames.py;
docs/upstream-differences.md, "1. One hostname function")."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from components.hostnames import (
    HostnameError,
    check_dns_name,
    check_host,
    gateway_hostname,
    grpcs_address,
)
from tests.strategies import BASE_DOMAINS, BASE_LABELS, NAMESPACES, domains

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


@given(NAMESPACES, BASE_DOMAINS)
def test_default_slot_is_always_a_valid_dns_name(namespace: str, base: str) -> None:
    host = gateway_hostname(namespace=namespace, base_domain=base, explicit=None)
    assert check_dns_name(host) == host
    assert host.startswith("gw-" + namespace + ".")
    assert host == f"gw-{namespace}.{base}"


@given(NAMESPACES, NAMESPACES, BASE_DOMAINS)
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


@given(NAMESPACES, domains(12))
def test_slot_is_returned_exactly_when_it_fits(namespace: str, base: str) -> None:
    assume(len(base) <= 253)
    slot = f"gw-{namespace}.{base}"
    if len(slot) <= 253:
        assert gateway_hostname(namespace=namespace, base_domain=base, explicit=None) == slot
    else:
        with pytest.raises(HostnameError) as info:
            gateway_hostname(namespace=namespace, base_domain=base, explicit=None)
        assert str(info.value) == f"host {slot!r} is {len(slot)} characters; at most 253"


# --- check_host: what clients reach by name ------------------------------------------------


def ip_message(value: str, what: str = "host") -> str:
    return f"{what} {value!r} is an IP address; it must be a DNS name"


def numeric_message(value: str, last: str, what: str = "host") -> str:
    return (
        f"{what} {value!r} ends in the numeric label {last!r}, so it is read as an IP"
        " address; it must be a DNS name (no top-level domain is numeric)"
    )


def single_label_message(value: str, what: str = "host") -> str:
    return (
        f"{what} {value!r} is a single label; it must be a fully qualified DNS name such as"
        f" {value}.example.com"
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("10.0.0.1", ip_message("10.0.0.1")),
        ("192.168.1.255", ip_message("192.168.1.255")),
        ("0.1.2.3", ip_message("0.1.2.3")),
        ("127.1", numeric_message("127.1", "1")),  # inet_aton: 127.0.0.1
        ("010.0.0.1", numeric_message("010.0.0.1", "1")),  # octal to inet_aton
        ("256.1.1.1", numeric_message("256.1.1.1", "1")),
        ("grpc.example.123", numeric_message("grpc.example.123", "123")),
        ("0x7f.0x1", numeric_message("0x7f.0x1", "0x1")),  # hexadecimal to URL parsers
        ("sandboxes", single_label_message("sandboxes")),
        ("localhost", single_label_message("localhost")),
        ("a", single_label_message("a")),
        ("10", numeric_message("10", "10")),
    ],
)
def test_check_host_refuses_addresses_and_single_labels(value: str, message: str) -> None:
    assert check_dns_name(value) == value  # still a DNS name: a database host may be this
    with pytest.raises(HostnameError) as info:
        check_host(value)
    assert str(info.value) == message


@pytest.mark.parametrize(
    "value", ["example.com", "gw-ns.apps.example.com", "1.2.3.example", "10.0.0.1.nip.io", "a.b"]
)
def test_check_host_accepts_fully_qualified_names(value: str) -> None:
    assert check_host(value) == value


def test_check_host_checks_the_dns_syntax_first() -> None:
    with pytest.raises(HostnameError) as info:
        check_host("Grpc.example.com", what="base domain")
    assert str(info.value) == f"base domain 'Grpc.example.com'{SYNTAX}"


@given(st.ip_addresses(v=4).map(str))
def test_every_ipv4_address_is_refused(address: str) -> None:
    with pytest.raises(HostnameError) as info:
        check_host(address)
    assert str(info.value) == ip_message(address)


@given(domains(6))
def test_every_fully_qualified_name_with_a_non_numeric_top_label_passes(value: str) -> None:
    assert check_host(value) == value


@given(st.lists(BASE_LABELS, min_size=1, max_size=4).map(".".join), st.integers(0, 10**6))
def test_a_numeric_top_label_is_always_refused(labels: str, top: int) -> None:
    value = f"{labels}.{top}"
    with pytest.raises(HostnameError):
        check_host(value)


@pytest.mark.parametrize("explicit", ["10.0.0.1", "sandboxes", "127.1"])
@pytest.mark.parametrize("base", [BASE, None])
def test_gateway_hostname_refuses_an_address_or_single_label_host(
    explicit: str, base: str | None
) -> None:
    with pytest.raises(HostnameError) as info:
        gateway_hostname(namespace="ns", base_domain=base, explicit=explicit)
    assert (
        str(info.value)
        == {
            "10.0.0.1": ip_message("10.0.0.1"),
            "sandboxes": single_label_message("sandboxes"),
            "127.1": numeric_message("127.1", "1"),
        }[explicit]
    )


@pytest.mark.parametrize(
    ("base", "message"),
    [
        ("10.0.0.1", ip_message("10.0.0.1", "base domain")),
        ("apps", single_label_message("apps", "base domain")),
        ("apps.10", numeric_message("apps.10", "10", "base domain")),
    ],
)
def test_gateway_hostname_refuses_an_address_or_single_label_base_domain(
    base: str, message: str
) -> None:
    with pytest.raises(HostnameError) as info:
        gateway_hostname(namespace="ns", base_domain=base, explicit=None)
    assert str(info.value) == message


# --- grpcs_address -------------------------------------------------------------------------


def test_grpcs_address() -> None:
    assert grpcs_address("gw-openshell-team-a.apps.example.com") == (
        "grpcs://gw-openshell-team-a.apps.example.com:443"
    )

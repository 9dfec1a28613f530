"""Ingress modes: parsing upstream's spellings and resolving auto (components/ingress.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components.ingress import (
    AUTO,
    IngressMode,
    IngressSetting,
    parse_ingress_mode,
    resolve_ingress_mode,
)

UPSTREAM_SPELLINGS = ("routes", "gatewayapi", "off", "disabled")
ALLOWED = ", ".join(sorted([*(mode.value for mode in IngressMode), *UPSTREAM_SPELLINGS, AUTO]))
"""What a mistaken mode is told: each mode's own spelling, upstream's others, and auto."""


@pytest.mark.parametrize(
    ("value", "mode"),
    [
        ("route", IngressMode.ROUTE),
        ("Route", IngressMode.ROUTE),
        ("routes", IngressMode.ROUTE),
        (" GATEWAYAPI ", IngressMode.GATEWAY_API),
        ("gateway-api", IngressMode.GATEWAY_API),
        ("Gateway-API", IngressMode.GATEWAY_API),
        ("none", IngressMode.NONE),
        ("off", IngressMode.NONE),
        ("disabled", IngressMode.NONE),
        ("auto", AUTO),
        ("\tAuto\n", AUTO),
    ],
)
def test_parse_accepts_upstream_spellings(value: str, mode: IngressSetting) -> None:
    assert parse_ingress_mode(value) == mode
    assert type(parse_ingress_mode(value)) is type(mode)


@pytest.mark.parametrize("value", ["foo", "", "   ", "gateway_api", "gateway api", "route-s"])
def test_parse_rejects_unknown_values(value: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_ingress_mode(value)
    assert str(info.value) == f"unknown ingress mode {value!r}; expected one of: {ALLOWED}"


def test_parse_error_quotes_the_value_as_given() -> None:
    with pytest.raises(ValueError) as info:
        parse_ingress_mode(" Foo ")
    assert str(info.value) == f"unknown ingress mode ' Foo '; expected one of: {ALLOWED}"


def test_mode_values_are_the_canonical_spellings() -> None:
    assert {"route", "gateway-api", "none"} <= {mode.value for mode in IngressMode}
    for mode in IngressMode:
        assert parse_ingress_mode(mode.value) is mode


@pytest.mark.parametrize(
    ("openshift", "gateway_api", "resolved"),
    [
        (False, False, IngressMode.NONE),
        (True, False, IngressMode.ROUTE),
        (False, True, IngressMode.GATEWAY_API),
        (True, True, IngressMode.GATEWAY_API),
    ],
)
def test_auto_resolves_from_capabilities(
    openshift: bool, gateway_api: bool, resolved: IngressMode
) -> None:
    assert resolve_ingress_mode(AUTO, openshift=openshift, gateway_api=gateway_api) is resolved


@given(
    st.sampled_from([IngressMode.ROUTE, IngressMode.GATEWAY_API, IngressMode.NONE]),
    st.booleans(),
    st.booleans(),
)
def test_explicit_modes_are_never_changed(
    mode: IngressMode, openshift: bool, gateway_api: bool
) -> None:
    assert resolve_ingress_mode(mode, openshift=openshift, gateway_api=gateway_api) is mode


@given(st.sampled_from([*IngressMode, AUTO]), st.booleans(), st.booleans())
def test_resolved_mode_is_never_auto(
    mode: IngressSetting, openshift: bool, gateway_api: bool
) -> None:
    assert resolve_ingress_mode(mode, openshift=openshift, gateway_api=gateway_api) in set(
        IngressMode
    )

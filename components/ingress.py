"""Ingress modes (docs/upstream-differences.md, "5. Ingress modes are chosen per cluster"):
the one declaration of the modes, parsing upstream's spellings and resolving ``auto``.

Every choice among the modes is a ``match`` that ends in ``assert_never``, so a mode added to
:class:`IngressMode` fails type checking at each place that must handle it
(tests/test_exhaustive.py names them).
"""

from __future__ import annotations

import enum
from typing import Final, Literal, assert_never


class IngressMode(enum.StrEnum):
    """How a cluster exposes gateways: the modes a cluster resolves to."""

    ROUTE = "route"
    GATEWAY_API = "gateway-api"
    NONE = "none"


def known_mode(value: object) -> IngressMode | None:
    """``value`` as a mode (a plan names it), None when it names none."""
    return next((mode for mode in IngressMode if mode.value == value), None)


AUTO: Final = "auto"
"""The stack config's ``ingress.mode: auto``: the mode is the cluster's capabilities' choice
(:func:`resolve_ingress_mode`); never a mode after resolve."""

IngressSetting = IngressMode | Literal["auto"]
"""What a stack config's ``ingress.mode`` holds: a mode, or ``auto``."""

_ALIASES: dict[str, IngressSetting] = {
    **{mode.value: mode for mode in IngressMode},
    "routes": IngressMode.ROUTE,
    "gatewayapi": IngressMode.GATEWAY_API,
    "off": IngressMode.NONE,
    "disabled": IngressMode.NONE,
    AUTO: AUTO,
}
"""Each mode's own spelling, upstream's other spellings, and ``auto``."""


def parse_ingress_mode(value: str) -> IngressSetting:
    """Trim and lowercase, accept upstream's aliases; anything else is an error.

    Upstream silently falls back to auto-detection for unknown values; we refuse them.
    """
    key = value.strip().lower()
    if key not in _ALIASES:
        allowed = ", ".join(sorted(_ALIASES))
        raise ValueError(f"unknown ingress mode {value!r}; expected one of: {allowed}")
    return _ALIASES[key]


def resolve_ingress_mode(
    mode: IngressSetting, *, openshift: bool, gateway_api: bool
) -> IngressMode:
    """``auto`` → Gateway API if the cluster has it, else OpenShift Route, else none."""
    if isinstance(mode, IngressMode):
        return mode
    if gateway_api:
        return IngressMode.GATEWAY_API
    if openshift:
        return IngressMode.ROUTE
    return IngressMode.NONE


def reaches_outside(mode: IngressMode) -> bool:
    """Whether a gateway of a cluster in ``mode`` can be reached from outside the cluster."""
    match mode:
        case IngressMode.ROUTE | IngressMode.GATEWAY_API:
            return True
        case IngressMode.NONE:
            return False
        case _:
            assert_never(mode)

"""Ingress modes (docs/upstream-differences.md, "5. Ingress modes are chosen per cluster"):
parsing upstream's spellings and resolving ``auto``."""

from __future__ import annotations

import enum


class IngressMode(enum.StrEnum):
    """How a cluster exposes gateways. ``AUTO`` only appears in config, never after resolve."""

    ROUTE = "route"
    GATEWAY_API = "gateway-api"
    NONE = "none"
    AUTO = "auto"


_ALIASES: dict[str, IngressMode] = {
    "route": IngressMode.ROUTE,
    "routes": IngressMode.ROUTE,
    "gateway-api": IngressMode.GATEWAY_API,
    "gatewayapi": IngressMode.GATEWAY_API,
    "none": IngressMode.NONE,
    "off": IngressMode.NONE,
    "disabled": IngressMode.NONE,
    "auto": IngressMode.AUTO,
}


def parse_ingress_mode(value: str) -> IngressMode:
    """Trim and lowercase, accept upstream's aliases; anything else is an error.

    Upstream silently falls back to auto-detection for unknown values; we refuse them.
    """
    key = value.strip().lower()
    if key not in _ALIASES:
        allowed = ", ".join(sorted(_ALIASES))
        raise ValueError(f"unknown ingress mode {value!r}; expected one of: {allowed}")
    return _ALIASES[key]


def resolve_ingress_mode(mode: IngressMode, *, openshift: bool, gateway_api: bool) -> IngressMode:
    """``auto`` → Gateway API if the cluster has it, else OpenShift Route, else none."""
    if mode is not IngressMode.AUTO:
        return mode
    if gateway_api:
        return IngressMode.GATEWAY_API
    if openshift:
        return IngressMode.ROUTE
    return IngressMode.NONE

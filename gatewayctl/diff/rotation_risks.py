"""Rotations a change asks for (``spec.rotation``, :mod:`components.rotation`): each raised
counter as a risk that says what is replaced, what restarts and what clients and users must
do; a lowered one refused (it would rotate again, not restore the old secret).

The counters come from each plan's gateway entry (``rotation``, written only when one is
raised: a plan without it reads as all 0). What is replaced is the predicted operations' to
say (:mod:`.operations`); the words here are the consequences no operation shows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from components import naming
from components.console_types import SECRET as CONSOLE_SECRET
from components.rotation import DECLARED_FIELDS
from gatewayctl.errors import Problem

COUNTERS = tuple(DECLARED_FIELDS.values())
"""The counters, by their field of ``spec.rotation``, in the declaration's order."""

CONSEQUENCES: dict[str, str] = {
    "databasePassword": (
        "a new database password: the role's password, the owner's provider and Secret"
        f" `{naming.DB_SECRET}` change; the gateway's pod rolls (its config hash covers the"
        " credentials). Clients and users do nothing"
    ),
    "serverCertificate": (
        "a new server key and certificate, signed by the same CA: Secret"
        f" `{naming.SERVER_TLS_SECRET}` changes and the gateway's pod rolls. Clients do"
        " nothing: the CA they trust is the same"
    ),
    "clientCertificate": (
        "a new client key and certificate: Secret"
        f" `{naming.CLIENT_TLS_SECRET}` changes (and the console's pod rolls, if there is"
        " one). Whoever holds a copy of the old client certificate must fetch the new one from"
        " that Secret"
    ),
    "ca": (
        "**a new tenant CA**: the CA key and certificate, both leaf certificates and"
        f" `{naming.SERVER_TLS_SECRET}`, `{naming.CLIENT_TLS_SECRET}` are replaced; the"
        " gateway's pod (and the console's) rolls. **Every client must trust the new CA**"
        " (the `caCertificate` of the stack output `gateways`, after the `up`) and fetch the"
        f" new client certificate (`{naming.CLIENT_TLS_SECRET}`): until then its connections"
        " fail"
    ),
    "kek": (
        "**a new KEK: every credential the gateway's users stored is lost**: the gateway has"
        " no re-encryption, so what it encrypted with the old key (in its database, default"
        " driver) can no longer be decrypted, and each user must store it again. Secret"
        f" `{naming.KEK_SECRET}` is deleted, then created (delete-before-replace); the"
        " gateway's pod rolls"
    ),
    "consoleCookie": (
        f"a new console cookie secret: Secret `{CONSOLE_SECRET}` changes and the console's"
        " pod rolls; **everyone signed in to the console signs in again**"
    ),
}
"""What follows each rotation, beyond the replaced resources the operations list."""


HELD_BY = {"kek": "-workload-kek-bytes", "consoleCookie": "-console-cookie-bytes"}
"""The secrets a gateway may not hold: the resource's logical name after the gateway's."""
NOT_HELD = (
    "the gateway holds no such secret (a KEK only on the default credential driver, a console"
    " cookie only with a console); the counter is kept for when it does"
)


@dataclass(frozen=True, kw_only=True)
class RotationChange:
    """One counter of one gateway that differs between the two sides."""

    gateway: str
    counter: str
    """Its field of ``spec.rotation`` (``databasePassword``, ``ca``, …)."""
    old: int
    new: int
    held: bool = True
    """The gateway holds that secret (a KEK only on the default credential driver, a cookie
    secret only with a console): else the counter rotates nothing."""

    @property
    def raised(self) -> bool:
        return self.new > self.old


def counters(entry: Mapping[str, Any]) -> dict[str, int]:
    """A plan's gateway entry's counters, every one (0 when the entry has none)."""
    found = entry.get("rotation") or {}
    return {name: int(found.get(name, 0)) for name in COUNTERS}


def changes(base: Mapping[str, Any], head: Mapping[str, Any]) -> list[RotationChange]:
    """The counters that differ, for gateways on both sides (a new gateway's secrets are new
    anyway, a removed one's gone), by gateway and the declaration's order."""

    def by_name(plan: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
        return {str(g.get("name")): g for g in plan.get("gateways", []) if isinstance(g, dict)}

    old_gw, new_gw = by_name(base), by_name(head)
    present = {str(r.get("name")) for r in head.get("resources", []) if isinstance(r, dict)}
    found = []
    for name in sorted(old_gw.keys() & new_gw.keys()):
        old, new = counters(old_gw[name]), counters(new_gw[name])
        found += [
            RotationChange(
                gateway=name,
                counter=c,
                old=old[c],
                new=new[c],
                held=c not in HELD_BY or f"{name}{HELD_BY[c]}" in present,
            )
            for c in COUNTERS
            if old[c] != new[c]
        ]
    return found


def risk_lines(stack: str, found: Sequence[RotationChange]) -> list[str]:
    """One risk line per raised counter."""
    return [
        f"- stack `{stack}`, gateway `{c.gateway}`: `spec.rotation.{c.counter}` {c.old} -> {c.new}"
        + (f" rotates {CONSEQUENCES[c.counter]}" if c.held else f" rotates nothing: {NOT_HELD}")
        for c in found
        if c.raised
    ]


def lowered(found: Sequence[RotationChange], sources: Mapping[str, str]) -> list[Problem]:
    """A problem per lowered counter, at the declaration's file (``sources``: gateway name ->
    its path): a counter never goes down."""
    return [
        Problem(
            sources.get(c.gateway, c.gateway),
            f"spec.rotation.{c.counter}",
            f"lowered from {c.old} to {c.new}: a counter never goes down (a lower value would"
            " rotate the secret again, not bring the old one back); keep"
            f" {c.old}, or raise it to {c.old + 1} to rotate again",
        )
        for c in found
        if not c.raised
    ]

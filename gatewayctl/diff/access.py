"""Who gains or loses access to each gateway, from the two plans (issue 12).

The plan's gateway entries carry ``access`` (principals holding the admin and user roles) and
``signIn``/``issuer``/``clientId``. Reviewers of a pull request read these lines in the diff's
summary: each principal added or removed per role, and sign-in that starts, stops or moves to
another issuer. Data first (:func:`access_changes`, called by ``compare``), then Markdown
(:func:`access_lines`, called by ``report``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

ROLES: tuple[tuple[str, str], ...] = (("admins", "admin"), ("users", "user"))
"""(plan key, role as the report names it)."""
ACCESS_ROWS = 40
"""Lines of the access section before the rest is counted."""

Change = Literal["gains", "loses"]


@dataclass(frozen=True, kw_only=True)
class AccessChange:
    gateway: str
    principal: str
    role: str
    change: Change


@dataclass(frozen=True, kw_only=True)
class SignInChange:
    gateway: str
    field: str
    old: object
    new: object


def _gateways(plan: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {
        str(g.get("name")): g
        for g in plan.get("gateways", [])
        if isinstance(g, Mapping) and isinstance(g.get("name"), str)
    }


def _held(entry: Mapping[str, Any] | None, key: str) -> set[str]:
    access = entry.get("access") if entry is not None else None
    values = access.get(key) if isinstance(access, Mapping) else None
    return {v for v in values if isinstance(v, str)} if isinstance(values, list) else set()


def access_changes(
    base: Mapping[str, Any], head: Mapping[str, Any]
) -> tuple[list[AccessChange], list[SignInChange]]:
    """Per gateway of either plan: the principals that gain or lose each role (a gateway added
    or removed gains or loses all of them), and changed sign-in facts."""
    old, new = _gateways(base), _gateways(head)
    changes: list[AccessChange] = []
    sign_in: list[SignInChange] = []
    for name in sorted(set(old) | set(new)):
        before, after = old.get(name), new.get(name)
        for key, role in ROLES:
            was, now = _held(before, key), _held(after, key)
            changes += [
                AccessChange(gateway=name, principal=p, role=role, change="gains")
                for p in sorted(now - was)
            ]
            changes += [
                AccessChange(gateway=name, principal=p, role=role, change="loses")
                for p in sorted(was - now)
            ]
        if before is not None and after is not None:
            sign_in += [
                SignInChange(gateway=name, field=field, old=before.get(field), new=after.get(field))
                for field in ("signIn", "issuer", "clientId")
                if before.get(field) != after.get(field)
            ]
    return changes, sign_in


def _code(value: object) -> str:
    return "-" if value is None else f"`{value}`"


def access_lines(changes: Sequence[AccessChange], sign_in: Sequence[SignInChange]) -> list[str]:
    """The summary's access section of one stack: Markdown lines, none when nothing changed."""
    lines = [f"- `{c.gateway}`: {_code(c.principal)} **{c.change}** {c.role}" for c in changes]
    lines += [
        f"- `{s.gateway}`: sign-in `{s.field}` {_code(s.old)} -> {_code(s.new)}" for s in sign_in
    ]
    if not lines:
        return []
    if len(lines) > ACCESS_ROWS:
        lines = [*lines[:ACCESS_ROWS], f"- ... {len(lines) - ACCESS_ROWS} more line(s)"]
    return ["**Access** (who gains or loses a role, sign-in changes):", "", *lines, ""]

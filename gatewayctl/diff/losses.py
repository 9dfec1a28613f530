"""Data loss: the PostgreSQL databases the next ``up`` drops (issue 25 item 5).

A gateway with ``deletionPolicy: Delete`` registers its role and database without
``retainOnDelete`` (``components/database.py``); removing its declaration, or moving it to
another stack, deletes both and everything the gateway stored in them. The base plan says
which: each ``Database`` it registers with ``retainOnDelete`` false that the working tree no
longer registers. The warning sits in the always-kept summary of the report.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gatewayctl.diff.plan import index, owning_gateway

DATABASE = "postgresql:index/database:Database"


def data_losses(base: Mapping[str, Any], head: Mapping[str, Any]) -> list[str]:
    """One warning per database of ``base`` that ``head`` deletes, not retained."""
    old, new = index(base), index(head)
    remaining = {g.get("name") for g in head.get("gateways", []) if isinstance(g, Mapping)}
    found = []
    for key in sorted(old.keys() - new.keys()):
        resource = old[key]
        if key[0] != DATABASE or resource.get("retainOnDelete") is not False:
            continue  # retained, or a base whose plan does not say
        gateway = owning_gateway(key, old)
        database = (resource.get("inputs") or {}).get("name", key[1])
        if gateway is not None and gateway not in remaining:
            who = f"gateway `{gateway}` is removed and its deletionPolicy is Delete"
        else:
            who = f"{f'gateway `{gateway}`' if gateway else 'the stack'}: `{key[1]}` is deleted"
        found.append(
            f"{who}: the next `up` drops its PostgreSQL database `{database}` and its role, and"
            " everything the gateway stored in them. To keep them, set `deletionPolicy: Retain`"
            " and run `pulumi up` before the removal."
        )
    return found


def deletion_flips(base: Mapping[str, Any], head: Mapping[str, Any]) -> list[str]:
    """One line per database that ``base`` retains on delete and ``head`` does not: a
    gateway's ``deletionPolicy`` flipped from Retain to Delete (issue 25 item 1). Nothing is
    dropped by this ``up``, but from then on removing the gateway drops its data."""
    old, new = index(base), index(head)
    found = []
    for key in sorted(old.keys() & new.keys()):
        if key[0] != DATABASE:
            continue
        if (
            old[key].get("retainOnDelete") is not True
            or new[key].get("retainOnDelete") is not False
        ):
            continue
        gateway = owning_gateway(key, new)
        database = (new[key].get("inputs") or {}).get("name", key[1])
        who = f"gateway `{gateway}`" if gateway else f"`{key[1]}`"
        found.append(
            f"{who}: `deletionPolicy` Retain -> Delete: PostgreSQL database `{database}` and its"
            " role are no longer retained; removing the gateway later drops them"
        )
    return found

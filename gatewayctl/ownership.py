"""Which gateway a resource belongs to when it is outside every gateway's subtree.

A gateway's resources are its ``Gateway`` component's descendants, with one exception: its
database owner's provider (``<gateway>-database-db-owner``) is a child of the stack, so that
``pulumi state move`` of the component can move the gateway between shards (the CLI never
moves a provider; components/database.py). Such a provider belongs to the one gateway whose
resources its configuration is made from (its Role, Database and password). A provider under
a cluster component is the cluster's, and a stack-level provider made from no gateway's
resources is the stack's, however many gateways use them.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import TypeVar

K = TypeVar("K", bound=Hashable)
PROVIDER_PREFIX = "pulumi:providers:"


def is_provider(type_: str) -> bool:
    return type_.startswith(PROVIDER_PREFIX)


def served(uses: Iterable[tuple[K, str | None]]) -> dict[K, str]:
    """For (stack-level provider, gateway of a resource it depends on) pairs: each provider
    whose dependencies all belong to one gateway, with that gateway."""
    owners: dict[K, set[str | None]] = {}
    for provider, gateway in uses:
        owners.setdefault(provider, set()).add(gateway)
    return {
        provider: only
        for provider, gateways in owners.items()
        if len(gateways) == 1 and (only := next(iter(gateways))) is not None
    }

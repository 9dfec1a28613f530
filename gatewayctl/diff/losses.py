"""What holds a tenant's data, and what a change does to it (issue 25 item 5, issue 42 item 5).

One rule, :func:`tenant_data`, for a removed gateway and a changed one alike, over the two
plans. Every holder the base registers that the working tree no longer registers is either
**destroyed** (the engine deletes it) or **left behind** (it stays where it is, no longer
managed or read):

- the PostgreSQL database and role (``components/database.py``): dropped with
  ``deletionPolicy: Delete`` (no ``retainOnDelete``), left on the server with ``Retain``;
- the KEK Secret ``openshell-gateway-credential-kek`` (``components/credentials.py``): the key
  the credentials stored in the database are encrypted with; deleting it (the gateway removed,
  or switched to another driver) makes them unreadable;
- the Keycloak client (``keycloak:openid/client:Client``): deleted with its roles and every
  user's grant of them;
- the credential store a driver names in ``gateway.toml`` (``credential_drivers``): a Vault KV
  mount or a Secrets namespace, outside the program; what the gateway stored there stays
  when the gateway or its driver goes (in the gateway's own namespace it goes with it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, assert_never

from components import naming
from components.credentials import known_driver
from gatewayctl.diff import removals
from gatewayctl.diff.plan import index, owning_gateway
from gatewayctl.diff.removals import stores

DATABASE = "postgresql:index/database:Database"


SECRET = "kubernetes:core/v1:Secret"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
CLIENT = "keycloak:openid/client:Client"


def _who(gateway: str | None, name: str) -> str:
    return f"the stack: `{name}` is deleted" if gateway is None else f"gateway `{gateway}`"


def _store(driver: str, table: Mapping[str, Any]) -> str:
    known = known_driver(driver)
    match known:
        case "vault":
            return f"Vault `{table.get('address')}` (KV mount `{table.get('mount')}`)"
        # kek keeps no table; a driver this program does not know is read as Secrets'.
        case "kubernetes-secrets" | "kek" | None:
            return f"Secrets in namespace `{table.get('namespace')}`"
        case _:
            assert_never(known)


def tenant_data(base: Mapping[str, Any], head: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """(destroyed, left behind): one line per holder of tenant data in ``base`` that ``head``
    deletes or stops using (the module docstring); a removed gateway's first, every holder it
    had (:mod:`.removals`)."""
    old, new = index(base), index(head)
    remaining = {g.get("name") for g in head.get("gateways", []) if isinstance(g, Mapping)}
    destroyed, kept = removals.holders(base, head)
    for key in sorted(old.keys() - new.keys()):
        resource = old[key]
        inputs = resource.get("inputs") or {}
        gateway = owning_gateway(key, old)
        if gateway is not None and gateway not in remaining:
            continue  # removals.holders named it
        who = _who(gateway, key[1])
        retained = resource.get("retainOnDelete") is True
        if key[0] == DATABASE:
            database = inputs.get("name", key[1])
            if resource.get("retainOnDelete") is False:
                destroyed.append(
                    f"{who}: the next `up` drops its PostgreSQL database `{database}` and"
                    " its role, and everything the gateway stored in them. To keep them, set"
                    " `deletionPolicy: Retain` and run `pulumi up` before the removal."
                )
            elif retained:
                kept.append(
                    f"{who}: its PostgreSQL database `{database}` and its role stay on the server"
                    " (deletionPolicy Retain), managed by no stack: export or drop them by hand"
                )
        elif key[0] == SECRET and (inputs.get("metadata") or {}).get("name") == naming.KEK_SECRET:
            fate = "left in place" if retained else "deleted"
            (kept if retained else destroyed).append(
                f"{who}: its KEK Secret `{naming.KEK_SECRET}` is {fate}: the credentials stored"
                " in its database are encrypted with that key and"
                f"{' stay readable only with it' if retained else ' can no longer be read'}."
                " Export the key first (`kubectl get secret` in the gateway's namespace) to keep"
                " them"
            )
        elif key[0] == CLIENT:
            client = inputs.get("clientId", key[1])
            destroyed.append(
                f"{who}: its Keycloak client `{client}` is deleted, with the roles and grants"
                " made on it"
            )
    for key in sorted(old):
        if key[0] != CONFIG_MAP:
            continue
        gateway = owning_gateway(key, old)
        if gateway is not None and gateway not in remaining:
            continue  # removals.holders named its stores
        before = stores(old[key])
        after = stores(new[key]) if key in new else {}
        for driver, table in sorted(before.items()):
            if not isinstance(table, Mapping) or after.get(driver) == table:
                continue
            kept.append(
                f"{_who(gateway, key[1])}: the credentials it stored in"
                f" {_store(driver, table)} stay there, no longer read by it"
            )
    return destroyed, kept


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

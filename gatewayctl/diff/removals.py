"""What a gateway's removal does to each thing that holds its data (issue 45 item 2;
docs/decommissioning.md says the same for the operator, with the export commands).

For each gateway the base declares and the working tree does not, in this order:

- **destroyed**: its namespace with every Secret in it (each named with what it holds, and the
  Secrets the ``kubernetes-secrets`` driver wrote there); its KEK (the only copy of the key of
  the credentials in its database); its database and role under ``deletionPolicy: Delete``;
  its Keycloak client with its roles and every grant of them; its console's Keycloak client;
- **left behind**: its database and role under ``Retain``; the credentials a driver stored in
  Vault or in a namespace not its own; the host names its Route or GRPCRoute and its console's
  route served, which DNS still resolves (the base domain's wildcard record, or a record of the
  tenant's own).

:func:`key_only_copies` names the removals :mod:`gatewayctl.diff.diff_command` refuses unless
``deploy/decommissions.yaml`` records them: the database stays and the only copy of its key goes.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from typing import Any, assert_never

from components import naming
from components.console_types import SECRET as CONSOLE_SECRET
from components.credentials import known_driver
from components.exposure_types import exposed_by, known_kind, routed_by
from components.ingress import known_mode
from gatewayctl.diff.plan import Key, index, owning_gateway
from gatewayctl.inputs.decommissions import SETTINGS as RECORDS

DATABASE = "postgresql:index/database:Database"
SECRET = "kubernetes:core/v1:Secret"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
CLIENT = "keycloak:openid/client:Client"
ROLE = "keycloak:index/role:Role"

HOLDS = {
    naming.CLIENT_TLS_SECRET: "the client certificate and key",
    naming.KEK_SECRET: "the KEK",
    naming.DB_SECRET: "the database password",
    naming.JWT_SECRET: "the JWT signing key",
    naming.SERVER_TLS_SECRET: "the server certificate and key",
    CONSOLE_SECRET: "the console's client secret and cookie secret",
}
"""What each Secret a gateway's namespace holds (``components/pki.py``, ``database.py``,
``workload.py``, ``console_client.py``)."""
CONFIG_FILE = "gateway.toml"  # components.gateway_config.CONFIG_FILE


def removed_gateways(base: Mapping[str, Any], head: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The base's entries (``plan.json`` ``gateways``) of the gateways ``head`` does not hold."""
    remaining = {g.get("name") for g in head.get("gateways", []) if isinstance(g, Mapping)}
    gone = [g for g in base.get("gateways", []) if isinstance(g, Mapping)]
    return sorted(
        (g for g in gone if g.get("name") not in remaining), key=lambda g: str(g.get("name"))
    )


def stores(resource: Mapping[str, Any]) -> dict[str, Any]:
    """The ``credential_drivers`` table of a gateway's ``gateway.toml`` ConfigMap."""
    text = ((resource.get("inputs") or {}).get("data") or {}).get(CONFIG_FILE)
    if not isinstance(text, str):
        return {}
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}
    stores = document.get("openshell", {}).get("credential_drivers", {})
    return stores if isinstance(stores, dict) else {}


def _owned(
    base: Mapping[str, Any], names: Sequence[str]
) -> dict[str, dict[Key, Mapping[str, Any]]]:
    """The base's resources of each gateway of ``names``, in one pass over the plan."""
    found: dict[str, dict[Key, Mapping[str, Any]]] = {name: {} for name in names}
    if not names:
        return found
    resources = index(base)
    for key, resource in resources.items():
        gateway = owning_gateway(key, resources)
        if gateway in found:
            found[gateway][key] = resource
    return found


def _of(owned: Mapping[Key, Mapping[str, Any]], kind: str) -> list[Mapping[str, Any]]:
    return [r for k, r in sorted(owned.items()) if k[0] == kind]


def _secret_name(resource: Mapping[str, Any]) -> str:
    return str(((resource.get("inputs") or {}).get("metadata") or {}).get("name"))


def _stores(owned: Mapping[Key, Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    found: dict[str, Mapping[str, Any]] = {}
    for config in _of(owned, CONFIG_MAP):
        found |= {k: v for k, v in stores(config).items() if isinstance(v, Mapping)}
    return found


def _codes(names: Sequence[str]) -> str:
    return ", ".join(f"`{n}`" for n in names)


def _database(owned: Mapping[Key, Mapping[str, Any]]) -> tuple[str, bool] | None:
    """The gateway's database name and whether it is retained on delete."""
    for resource in _of(owned, DATABASE):
        name = str((resource.get("inputs") or {}).get("name"))
        return name, resource.get("retainOnDelete") is True
    return None


def key_only_copies(base: Mapping[str, Any], head: Mapping[str, Any]) -> list[str]:
    """The removed gateways whose database is retained while their KEK Secret, the only copy
    of its key, is deleted with the namespace."""
    removed = removed_gateways(base, head)
    owned_by = _owned(base, [str(g.get("name")) for g in removed])
    found = []
    for gateway in removed:
        owned = owned_by[str(gateway.get("name"))]
        database = _database(owned)
        kek = any(_secret_name(s) == naming.KEK_SECRET for s in _of(owned, SECRET))
        if kek and database is not None and database[1]:
            found.append(str(gateway.get("name")))
    return found


def holders(base: Mapping[str, Any], head: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """(destroyed, left behind) of every removed gateway (the module docstring)."""
    removed = removed_gateways(base, head)
    owned_by = _owned(base, [str(g.get("name")) for g in removed])
    destroyed: list[str] = []
    kept: list[str] = []
    for gateway in removed:
        owned = owned_by[str(gateway.get("name"))]
        lost, left = _gateway(gateway, owned)
        destroyed += lost
        kept += left
    return destroyed, kept


def _gateway(
    gateway: Mapping[str, Any], owned: Mapping[Key, Mapping[str, Any]]
) -> tuple[list[str], list[str]]:
    who = f"gateway `{gateway.get('name')}` is removed"
    namespace = str(gateway.get("namespace"))
    stores = _stores(owned)
    secrets = sorted(
        {n for s in _of(owned, SECRET) if (n := _secret_name(s)) and _in(s, namespace)}
    )
    database = _database(owned)
    lost: list[str] = []
    left: list[str] = []
    if secrets:
        held = ", ".join(f"`{n}` ({HOLDS.get(n, 'a secret')})" for n in secrets)
        own = stores.get("kubernetes-secrets", {}).get("namespace") == namespace
        extra = (
            "; and every Secret the kubernetes-secrets driver wrote there: the users' stored"
            " credentials"
            if own
            else ""
        )
        lost.append(
            f"{who}: namespace `{namespace}` is deleted with every Secret in it: {held}{extra}."
            " The stack's state forgets them too: declared again, the gateway gets new ones"
        )
    if naming.KEK_SECRET in secrets:
        lost.append(_kek(who, namespace, database))
    if database is not None and not database[1]:
        lost.append(
            f"{who} and its deletionPolicy is Delete: the next `up` drops its PostgreSQL database"
            f" `{database[0]}` and its role, and everything the gateway stored in them; nothing"
            " of it is left on the server. To keep them, set `deletionPolicy: Retain` and run"
            " `pulumi up` before the removal."
        )
    elif database is not None:
        left.append(
            f"{who}: its PostgreSQL database `{database[0]}` and its role stay on the server"
            " (deletionPolicy Retain), managed by no stack: export or drop them by hand"
        )
    lost += _clients(who, gateway, owned)
    for driver, table in sorted(stores.items()):
        known = known_driver(driver)
        match known:
            case "vault":
                mount = table.get("mount")
                left.append(
                    f"{who}: the credentials it stored in Vault `{table.get('address')}` (KV"
                    f" mount `{mount}`) stay there, and so does the mount: read or delete them"
                    f" by hand (`vault kv list -mount={mount}`)"
                )
            case "kubernetes-secrets":
                if table.get("namespace") != namespace:
                    left.append(
                        f"{who}: the credentials it stored as Secrets in namespace"
                        f" `{table.get('namespace')}` stay there, no longer read by it; its"
                        " Role there is deleted"
                    )
            case "kek" | None:  # kek keeps no table; a driver this program does not know
                pass
            case _:
                assert_never(known)
    left += _hosts(who, gateway)
    return lost, left


def _in(resource: Mapping[str, Any], namespace: str) -> bool:
    metadata = (resource.get("inputs") or {}).get("metadata") or {}
    return metadata.get("namespace") == namespace


def _kek(who: str, namespace: str, database: tuple[str, bool] | None) -> str:
    secret = f"its KEK Secret `{naming.KEK_SECRET}`"
    if database is not None and not database[1]:
        return (
            f"{who}: {secret} is deleted with the namespace, and the credentials it encrypts"
            f" go with the database `{database[0]}`"
        )
    where = f" `{database[0]}`" if database is not None else ""
    return (
        f"{who}: {secret} is deleted with the namespace: the only copy of the key the"
        f" credentials stored in its database{where} are encrypted with, and the database is"
        " retained: without the key they can no longer be read. Export it first (`kubectl -n"
        f" {namespace} get secret {naming.KEK_SECRET} -o yaml`) and say so in `{RECORDS}`"
    )


def _clients(
    who: str, gateway: Mapping[str, Any], owned: Mapping[Key, Mapping[str, Any]]
) -> list[str]:
    console = _mapping(gateway.get("console"))
    console_id = console.get("clientId")
    roles = sorted({str((r.get("inputs") or {}).get("name")) for r in _of(owned, ROLE)})
    access = _mapping(gateway.get("access"))
    principals = sorted({str(p) for group in access.values() for p in group or ()})
    lines = []
    for client in _of(owned, CLIENT):
        client_id = (client.get("inputs") or {}).get("clientId")
        if client_id == console_id:
            address = f" `{console['address']}`" if console.get("address") else ""
            lines.append(
                f"{who}: its console's Keycloak client `{client_id}` is deleted with its client"
                f" secret and its mappings of the gateway's roles: the console{address} signs"
                " no one in"
            )
            continue
        grants = (
            f"declared: {_codes(principals)}; and any made in Keycloak by hand"
            if principals
            else "any made in Keycloak by hand too"
        )
        with_roles = f" with its roles {_codes(roles)}" if roles else ""
        lines.append(
            f"{who}: its Keycloak client `{client_id}` is deleted{with_roles} and every grant"
            f" of them ({grants}): no one signs in to the gateway"
        )
    return lines


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _hosts(who: str, gateway: Mapping[str, Any]) -> list[str]:
    routed = routed_by(known_mode(gateway.get("ingressMode")))
    namespace = str(gateway.get("namespace"))
    lines = []
    host = gateway.get("hostname")
    if isinstance(host, str) and host and routed is not None:
        route, entry = routed
        own = not host.startswith(f"{naming.host_label(namespace)}.")
        dns = (
            "its DNS record, the tenant's own and outside this program, still points at"
            f" {entry}: delete it"
            if own
            else "the base domain's wildcard DNS record still resolves it, to"
            f" {entry}, which routes it nowhere"
        )
        lines.append(f"{who}: host `{host}` stops routing (its {route} is deleted); {dns}")
    console = _mapping(gateway.get("console"))
    address = console.get("address")
    if isinstance(address, str) and address:
        host = address.removeprefix("https://").split("/", 1)[0]
        exposed = exposed_by(known_kind(console.get("exposure")) or "none")
        route = exposed[1] if exposed is not None else "route"
        lines.append(
            f"{who}: console host `{host}` stops routing (its {route} is deleted); the base"
            " domain's wildcard DNS record still resolves it"
        )
    return lines

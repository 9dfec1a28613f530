"""Credential-store changes in the offline diff: a live gateway whose users' credentials would be
left behind.

A gateway reads the credentials its users stored from one place: its database, encrypted with
the KEK Secret (``kek``), Secrets in one namespace (``kubernetes-secrets``) or one Vault mount
(``vault``). A change of driver, of the Secrets' namespace, or of the Vault address or mount
points the gateway at an empty store: what was stored before is still there but unreadable to
it, and leaving ``kek`` deletes the KEK Secret, and with it the only key to the encrypted
rows. Such a change is a reviewed one: the report lists it above the object diffs, every
time, with a pointer to the migration steps (docs/credential-drivers.md).

The store is read from the gateway's rendered ``gateway.toml`` on both sides (the ConfigMap
``openshell-gateway-config``), so a base rendered by an older program, without
``spec.credentials``, reads as ``kek`` exactly as it runs.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, assert_never

import yaml

from components import naming
from components.credentials import KEK, known_driver
from components.gateway_config import CONFIG_FILE
from gatewayctl.diff.compare import ObjectChange, StackDiff

CONFIG_MAP_FILE = f"/configmap-{naming.CONFIG_MAP}.yaml"
DOCS_SECTION = "Changing a gateway's credential driver"
TITLE = "**Credential storage changes**"


@dataclass(frozen=True, order=True)
class Store:
    """Where a gateway's users' credentials are: the driver and what locates them."""

    driver: str
    location: str = ""

    def __str__(self) -> str:
        return f"`{self.driver}` {self.location}".rstrip()


@dataclass(frozen=True, order=True)
class StoreChange:
    gateway: str
    namespace: str
    old: Store
    new: Store


def _table(value: Any, *keys: str) -> Mapping[str, Any]:
    for key in keys:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value if isinstance(value, Mapping) else {}


def store_of(config: Mapping[str, Any]) -> Store:
    """The store a parsed ``gateway.toml`` selects."""
    drivers = _table(config, "openshell", "gateway").get("credential_drivers")
    if not isinstance(drivers, list) or not drivers:
        return Store(KEK, "(database, KEK Secret)")
    driver = str(drivers[0])
    table = _table(config, "openshell", "credential_drivers", driver)
    known = known_driver(driver)
    match known:
        case "kubernetes-secrets":
            return Store(driver, f"namespace `{table.get('namespace')}`")
        case "vault":
            return Store(driver, f"`{table.get('address')}` mount `{table.get('mount')}`")
        case "kek" | None:  # kek is never listed; a driver this program does not know
            return Store(driver)
        case _:
            assert_never(known)


def _parsed(text: str) -> tuple[str, str, Store] | None:
    """(gateway, namespace, store) of a rendered ConfigMap file, None when it is not one."""
    try:
        document = yaml.safe_load(text)
        metadata = _table(document, "metadata")
        toml = _table(document, "data").get(CONFIG_FILE)
        if not isinstance(toml, str):
            return None
        config = tomllib.loads(toml)
    except (yaml.YAMLError, tomllib.TOMLDecodeError):
        return None
    gateway = _table(metadata, "labels").get(naming.GATEWAY_LABEL)
    return str(gateway), str(metadata.get("namespace")), store_of(config)


def store_changes(objects: Iterable[ObjectChange]) -> list[StoreChange]:
    """The gateways present on both sides whose credential store differs."""
    changes = []
    for change in objects:
        if change.status != "changed" or not change.path.endswith(CONFIG_MAP_FILE):
            continue
        old, new = _parsed(change.old), _parsed(change.new)
        if old is not None and new is not None and old[2] != new[2]:
            changes.append(StoreChange(gateway=new[0], namespace=new[1], old=old[2], new=new[2]))
    return sorted(changes)


def summary_lines(diff: StackDiff) -> list[str]:
    """The report's warning for ``diff``: a table of the changes, or nothing."""
    changes = store_changes(diff.objects)
    if not changes:
        return []
    lines = [
        f"{TITLE}: {len(changes)} gateway(s) would read their users' credentials from another"
        " store; what they stored before becomes unreadable to them (and leaving `kek` deletes"
        " the KEK Secret) unless migrated first: see docs/credential-drivers.md, "
        f'"{DOCS_SECTION}".',
        "",
        "| Gateway | Namespace | From | To |",
        "|---|---|---|---|",
    ]
    lines += [f"| `{c.gateway}` | `{c.namespace}` | {c.old} | {c.new} |" for c in changes]
    return [*lines, ""]

"""The Vault credential driver talks to Vault over TLS: the pod's ServiceAccount token (its
Vault login) and every credential a user stores cross that connection.

The driver's address is in the gateway's ``gateway.toml`` (a ConfigMap), table
``[openshell.credential_drivers.vault]``, key ``address``. Plain ``http://`` is allowed only
where the stack's policy config says so (``allowHttp``: the local kind stack, whose dev Vault
runs inside the cluster); every other stack requires ``https://``.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator, Mapping
from typing import Any

from pulumi_policy import (
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
)

from ._props import describe, get, kind_of

DRIVER_TABLE = ("openshell", "credential_drivers", "vault")


def _addresses(data: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """``(where, address)`` of the Vault driver in every TOML file of a ConfigMap."""
    for key in [k for k in data if str(k).endswith(".toml")]:
        try:
            document = tomllib.loads(str(data[key]))
        except tomllib.TOMLDecodeError:
            continue
        table = get(document, *DRIVER_TABLE)
        if isinstance(table, Mapping) and "address" in table:
            yield f"data[{key!r}] {'.'.join(DRIVER_TABLE)}.address", table["address"]


def address_problem(address: Any, *, allow_http: bool) -> str | None:
    """Why ``address`` is not an allowed Vault address, or None."""
    scheme = address.split("://", 1)[0].lower() if isinstance(address, str) else None
    if scheme == "https" or (allow_http and scheme == "http"):
        return None
    wanted = "https://" + (" (or http:// on this stack)" if allow_http else "")
    return f"{address!r} must be an {wanted} URL"


def validate_vault_address(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if kind_of(args.resource_type) != ("core", "ConfigMap"):
        return
    data = get(args.props, "data")
    if not isinstance(data, Mapping):
        return
    allow_http = bool((args.get_config() or {}).get("allowHttp", False))
    what = describe(args.resource_type, args.props, args.name)
    for where, address in _addresses(data):
        problem = address_problem(address, allow_http=allow_http)
        if problem is not None:
            report(f"{what}: {where} {problem}", None)


vault_address_https = ResourceValidationPolicy(
    name="vault-address-https",
    description=(
        "The Vault credential driver's address in gateway.toml is https:// (http:// only on a"
        " stack whose policy config sets allowHttp, the local one)."
    ),
    validate=validate_vault_address,
    config_schema=PolicyConfigSchema(
        properties={
            "allowHttp": {
                "description": (
                    "Allow a plain http:// Vault address: only for a local stack whose Vault runs"
                    " inside the cluster."
                ),
                "type": "boolean",
                "default": False,
            }
        }
    ),
)

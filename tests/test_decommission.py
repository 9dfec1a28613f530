"""A gateway's removal names every holder of its data (issue 45 item 2): the diff's risks for a
removal under ``Retain`` and under ``Delete``, with the ``kek`` and the ``vault`` driver, with
and without the console; a vanity host, the kubernetes-secrets driver; the report's order.
The refusal and the records: tests/test_decommission_refusal.py."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from gatewayctl.diff.compare import StackDiff, compare
from gatewayctl.diff.report import build_report
from gatewayctl.diff.sides import Side
from gatewayctl.engine import render
from gatewayctl.resolve import preparation
from tests.builders import DECLARATIONS, STACK, cluster, write_gateway
from tests.console_helpers import KEYCLOAK, write_stack

VAULT = {
    "driver": "vault",
    "vault": {
        "address": "https://vault.example.com",
        "role": "openshell-acme",
        "mount": "tenants/acme",
    },
}
ACCESS = {"admins": ["user:alice"], "users": ["group:/team"]}
WHO = "gateway `acme` is removed"


def removal(root: Path, spec: dict[str, Any], **changes: Any) -> StackDiff:
    """The diff of removing gateway ``acme`` (``spec``) from a stack that keeps ``other``, on
    one cluster with Keycloak (route mode unless ``changes`` say otherwise)."""
    write_stack(root, clusters={"c1": cluster(identity=KEYCLOAK, **changes)})
    write_gateway(root, "acme", spec)
    write_gateway(root, "other", {})
    base = Side(files=render.execute(preparation.prepare(root, STACK)).files)
    (root / DECLARATIONS / "acme.yaml").unlink()
    head = Side(files=render.execute(preparation.prepare(root, STACK)).files)
    return compare(STACK, base, head)


def secrets_line(*, kek: bool, console: bool) -> str:
    held = ["`openshell-client-tls` (the client certificate and key)"]
    if console:
        held.append("`openshell-console-oauth2` (the console's client secret and cookie secret)")
    if kek:
        held.append("`openshell-gateway-credential-kek` (the KEK)")
    held += [
        "`openshell-gateway-db-credentials` (the database password)",
        "`openshell-gateway-jwt-keys` (the JWT signing key)",
        "`openshell-server-tls` (the server certificate and key)",
    ]
    return (
        f"{WHO}: namespace `openshell-acme` is deleted with every Secret in it: "
        + ", ".join(held)
        + ". The stack's state forgets them too: declared again, the gateway gets new ones"
    )


KEK_RETAINED = (
    f"{WHO}: its KEK Secret `openshell-gateway-credential-kek` is deleted with the namespace: the"
    " only copy of the key the credentials stored in its database `gw_acme` are encrypted with,"
    " and the database is retained: without the key they can no longer be read. Export it first"
    " (`kubectl -n openshell-acme get secret openshell-gateway-credential-kek -o yaml`) and say"
    " so in `deploy/decommissions.yaml`"
)
KEK_DROPPED = (
    f"{WHO}: its KEK Secret `openshell-gateway-credential-kek` is deleted with the namespace, and"
    " the credentials it encrypts go with the database `gw_acme`"
)
DATABASE_DROPPED = (
    f"{WHO} and its deletionPolicy is Delete: the next `up` drops its PostgreSQL database"
    " `gw_acme` and its role, and everything the gateway stored in them; nothing of it is left"
    " on the server. To keep them, set `deletionPolicy: Retain` and run `pulumi up` before the"
    " removal."
)
DATABASE_LEFT = (
    f"{WHO}: its PostgreSQL database `gw_acme` and its role stay on the server (deletionPolicy"
    " Retain), managed by no stack: export or drop them by hand"
)
CONSOLE_CLIENT = (
    f"{WHO}: its console's Keycloak client `openshell-acme-console` is deleted with its client"
    " secret and its mappings of the gateway's roles: the console"
    " `https://console-openshell-acme.apps.example.com` signs no one in"
)
GATEWAY_CLIENT = (
    f"{WHO}: its Keycloak client `openshell-acme` is deleted with its roles `openshell-admin`,"
    " `openshell-user` and every grant of them (declared: `group:/team`, `user:alice`; and any"
    " made in Keycloak by hand): no one signs in to the gateway"
)
VAULT_LEFT = (
    f"{WHO}: the credentials it stored in Vault `https://vault.example.com` (KV mount"
    " `tenants/acme`) stay there, and so does the mount: read or delete them by hand"
    " (`vault kv list -mount=tenants/acme`)"
)
HOST_LEFT = (
    f"{WHO}: host `gw-openshell-acme.apps.example.com` stops routing (its Route is deleted); the"
    " base domain's wildcard DNS record still resolves it, to the cluster's router, which routes"
    " it nowhere"
)
CONSOLE_HOST_LEFT = (
    f"{WHO}: console host `console-openshell-acme.apps.example.com` stops routing (its Route is"
    " deleted); the base domain's wildcard DNS record still resolves it"
)


@pytest.mark.parametrize(
    ("policy", "driver", "console"),
    list(itertools.product(["Retain", "Delete"], ["kek", "vault"], [False, True])),
)
def test_a_removal_names_every_holder_of_the_tenant_s_data(
    tmp_path: Path, policy: str, driver: str, console: bool
) -> None:
    spec: dict[str, Any] = {"deletionPolicy": policy, "access": ACCESS}
    if driver == "vault":
        spec["credentials"] = VAULT
    if console:
        spec["console"] = {"enabled": True}

    diff = removal(tmp_path, spec)

    kek, retained = driver == "kek", policy == "Retain"
    destroyed = [secrets_line(kek=kek, console=console)]
    if kek:
        destroyed.append(KEK_RETAINED if retained else KEK_DROPPED)
    if not retained:
        destroyed.append(DATABASE_DROPPED)
    destroyed += [CONSOLE_CLIENT] if console else []
    destroyed.append(GATEWAY_CLIENT)
    left = [DATABASE_LEFT] if retained else []
    left += [VAULT_LEFT] if driver == "vault" else []
    left += [HOST_LEFT, CONSOLE_HOST_LEFT] if console else [HOST_LEFT]
    assert diff.data_loss == tuple(destroyed)
    assert diff.left_behind == tuple(left)
    # Only the retained database with a KEK loses its only key; Delete drops both by declaration.
    assert diff.key_only_copies == (("acme",) if kek and retained else ())
    assert [(g.name, g.status) for g in diff.gateways] == [("acme", "removed")]


def test_a_host_of_the_tenant_s_own_leaves_its_dns_record_behind(tmp_path: Path) -> None:
    diff = removal(tmp_path, {"exposure": {"host": "openshell.acme.example.org"}})

    assert diff.left_behind[-1] == (
        f"{WHO}: host `openshell.acme.example.org` stops routing (its Route is deleted); its DNS"
        " record, the tenant's own and outside this program, still points at the cluster's"
        " router: delete it"
    )


def test_through_the_shared_gateway_the_routes_are_a_grpcroute_and_an_httproute(
    tmp_path: Path,
) -> None:
    diff = removal(
        tmp_path,
        {"console": {"enabled": True}},
        capabilities={"openshift": True, "gatewayApi": True},
        ingress={"mode": "gateway-api", "gateway": {"name": "shared-gw"}},
    )

    assert diff.left_behind[-2:] == (
        f"{WHO}: host `gw-openshell-acme.apps.example.com` stops routing (its GRPCRoute is"
        " deleted); the base domain's wildcard DNS record still resolves it, to the cluster's"
        " shared Gateway, which routes it nowhere",
        f"{WHO}: console host `console-openshell-acme.apps.example.com` stops routing (its"
        " HTTPRoute is deleted); the base domain's wildcard DNS record still resolves it",
    )


def test_the_kubernetes_secrets_driver_s_own_namespace_goes_and_another_stays(
    tmp_path: Path,
) -> None:
    own = removal(tmp_path / "own", {"credentials": {"driver": "kubernetes-secrets"}})
    assert own.data_loss[0] == (
        f"{WHO}: namespace `openshell-acme` is deleted with every Secret in it:"
        " `openshell-client-tls` (the client certificate and key),"
        " `openshell-gateway-db-credentials` (the database password),"
        " `openshell-gateway-jwt-keys` (the JWT signing key), `openshell-server-tls` (the server"
        " certificate and key); and every Secret the kubernetes-secrets driver wrote there: the"
        " users' stored credentials. The stack's state forgets them too: declared again, the"
        " gateway gets new ones"
    )
    assert not any("kubernetes-secrets" in line for line in own.left_behind)

    driver = {"driver": "kubernetes-secrets", "kubernetesSecrets": {"namespace": "acme-creds"}}
    other = removal(tmp_path / "other", {"credentials": driver})
    assert "kubernetes-secrets driver" not in other.data_loss[0]
    assert (
        f"{WHO}: the credentials it stored as Secrets in namespace `acme-creds` stay there, no"
        " longer read by it; its Role there is deleted"
    ) in other.left_behind


def test_the_report_leads_with_the_removal_s_holders(tmp_path: Path) -> None:
    diff = removal(tmp_path, {"deletionPolicy": "Delete", "access": ACCESS})

    report = build_report([diff], base_label="b", command="c")
    section = report.split("\n## Offline diff", 1)[0]
    assert section.splitlines()[:4] == ["## Risks", "", "**Destroys** (5):", ""]
    assert f"- stack `{STACK}`: **data loss**: {DATABASE_DROPPED}\n" in section
    assert f"- stack `{STACK}`: **data loss**: {GATEWAY_CLIENT}\n" in section
    assert f"**Leaves behind** (1):\n\n- stack `{STACK}`: {HOST_LEFT}\n" in section

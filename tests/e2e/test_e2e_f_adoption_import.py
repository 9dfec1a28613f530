"""Adoption, for real (issue 24 item 3): the import file ``gatewayctl import-file`` writes for a
tenant made as upstream's controller makes it (tests/e2e/adoption.py). Its rows name the live
objects (the Kubernetes ones in the cluster, the PostgreSQL ones in the real server, the
Keycloak ones as Keycloak's admin API answers), it prints the targets to create first, the rows
are all imported by the engine now that every provider is served: the Kubernetes ones, the
PostgreSQL role and database through the postgresql stand-in plugin (read from the real
server) and the Keycloak client and roles through the keycloak stand-in (read through the admin
API).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from e2e.cluster import Cluster
from e2e.engine import package_of
from e2e.keycloak import Keycloak
from tests.e2e.adoption import DATABASE, GATEWAY, REALM, STACK, UPSTREAM_CLIENT, Adoption
from tests.e2e.databases import LaneDatabases
from tests.e2e.lane import figure
from tests.e2e.realms import ok


def _documents(text: str) -> list[dict[str, Any]]:
    """Every JSON object of ``import --json``'s output (its preview, then its events)."""
    decoder, found, index = json.JSONDecoder(), [], 0
    while text[index:].strip():
        index = len(text) - len(text[index:].lstrip())
        value, index = decoder.raw_decode(text, index)
        found.append(value)
    return found


def test_import_file_names_the_live_objects(
    adoption: Adoption, cluster: Cluster, databases: LaneDatabases, keycloak: Keycloak
) -> None:
    rows = [r for r in adoption.document["resources"] if "id" in r]
    by_package = Counter(package_of(r["type"]) for r in rows)
    assert dict(by_package) == {"kubernetes": 18, "postgresql": 2, "keycloak": 3}
    # Every Kubernetes row's id is an object upstream made (its templates, and its copy of the
    # trusted CA), and nothing else.
    live = set()
    for row in rows:
        if package_of(row["type"]) != "kubernetes":
            continue
        namespace, _, name = row["id"].rpartition("/")
        kind = row["type"].rsplit(":", 1)[-1]
        found = cluster.get(kind.lower(), name, namespace=namespace or None)
        live.add((found["kind"], found["metadata"].get("namespace", ""), found["metadata"]["name"]))
    assert len(live) == 18
    # The PostgreSQL rows: the role and the database exist in the real server, the database
    # owned by the role, as CNPG made them.
    postgres_ids = {r["type"]: r["id"] for r in rows if package_of(r["type"]) == "postgresql"}
    assert postgres_ids == {
        "postgresql:index/role:Role": DATABASE,
        "postgresql:index/database:Database": DATABASE,
    }
    with databases.by_stack[STACK].superuser() as connection:
        role = connection.execute(
            "SELECT rolcanlogin FROM pg_roles WHERE rolname = %s", (DATABASE,)
        ).fetchall()
        owner = connection.execute(
            "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = %s", (DATABASE,)
        ).fetchall()
    assert role == [(True,)]
    assert owner == [(DATABASE,)]
    # The Keycloak rows: <realm>/<uuid> of upstream's client and roles, as the admin API
    # answers for the client id and role names (what an operator reads off the admin console).
    keycloak_ids = {r["logicalName"]: r["id"] for r in rows if package_of(r["type"]) == "keycloak"}
    admin = keycloak.admin_token()
    (client,) = ok(
        keycloak.admin("GET", f"/{REALM}/clients", admin, params={"clientId": UPSTREAM_CLIENT}),
        200,
    ).json()
    roles = ok(keycloak.admin("GET", f"/{REALM}/clients/{client['id']}/roles", admin), 200)
    by_name = {r["name"]: r["id"] for r in roles.json()}
    ids = {
        "client": client["id"],
        "adminRole": by_name["openshell-admin"],
        "userRole": by_name["openshell-user"],
    }
    assert ids == adoption.keycloak_ids
    assert keycloak_ids == {
        f"{GATEWAY}-identity-client": f"{REALM}/{ids['client']}",
        f"{GATEWAY}-identity-admin-role": f"{REALM}/{ids['adminRole']}",
        f"{GATEWAY}-identity-user-role": f"{REALM}/{ids['userRole']}",
    }
    figure(
        f"adopt: import file of {len(rows)} rows (18 kubernetes, 2 postgresql, 3 keycloak), each"
        " naming a live object; upstream tenant made in"
        f" {adoption.seconds['upstream']:.1f} s"
    )


def test_import_file_prints_the_targets_to_create_first(adoption: Adoption) -> None:
    cluster = f"urn:pulumi:{STACK}::hypershell-gateways::hypershell:cluster:Cluster"
    gateway = f"urn:pulumi:{STACK}::hypershell-gateways::hypershell:gateway:Gateway"
    database = f"{gateway}$hypershell:gateway:Database"
    keycloak_provider = next(k for k in adoption.document["nameTable"] if "providers:keycloak" in k)
    expected = sorted(
        [
            f"{cluster}$pulumi:providers:kubernetes::kind-k8s",
            f"{cluster}$pulumi:providers:postgresql::kind-postgres",
            f"{cluster}::kind",
            keycloak_provider,
            # What the database owner's provider logs in with, which the engine creates with
            # every provider of a targeted `up`: the password and its parent components.
            f"{database}$random:index/randomPassword:RandomPassword"
            f"::{GATEWAY}-database-db-password",
            f"{database}::{GATEWAY}-database",
            f"{gateway}::{GATEWAY}",
        ]
    )
    assert sorted(adoption.document["nameTable"]) == expected
    printed = " ".join(f"--target '{urn}'" for urn in expected)
    assert f"  pulumi up {printed}\n" in adoption.printed
    figure(
        f"adopt: `up --target` of the {len(expected)} printed URNs in"
        f" {adoption.seconds['targets']:.1f} s"
    )


def test_the_engine_imports_every_row(adoption: Adoption) -> None:
    # The whole file: every package has a stand-in plugin, so no row is refused.
    assert adoption.imported.returncode == 0, adoption.imported.stdout[-3000:]
    preview, *events = _documents(adoption.imported.stdout)
    ops = Counter(step["op"] for step in preview["steps"])
    # 18 objects (upstream's copy of the trusted CA among them), the role and the database,
    # upstream's client and two roles, and the 3
    # components the file creates as their parents (the Gateway and Database components come
    # from step 3's `up --target`, with the password)
    assert dict(ops) == {"import": 26, "same": 1}, dict(ops)
    summary = [e["summaryEvent"]["resourceChanges"] for e in events if "summaryEvent" in e]
    # and the stack, the Cluster component and its providers, made before by `up --target`
    assert summary[0]["import"] == 26, summary
    by_package: dict[str, list[str]] = {}
    for step in preview["steps"]:
        if step["op"] == "import":
            package = package_of(step["urn"].split("::")[2].split("$")[-1])
            by_package.setdefault(package, []).append(step["urn"].split("::")[-1])
    # Read from the servers as the providers' importers do: by name (ImportStatePassthrough)
    # and by <realm>/<uuid>; an id naming nothing would fail the import.
    assert sorted(by_package["postgresql"]) == [
        f"{GATEWAY}-database-db",
        f"{GATEWAY}-database-db-role",
    ]
    assert sorted(by_package["keycloak"]) == [
        f"{GATEWAY}-identity-admin-role",
        f"{GATEWAY}-identity-client",
        f"{GATEWAY}-identity-user-role",
    ]
    figure(
        f"adopt: pulumi import of {summary[0]['import']} resources in"
        f" {adoption.seconds['import']:.1f} s"
    )

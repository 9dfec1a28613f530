"""Adoption of upstream gateways: the ``pulumi import --file`` file."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from components import tokens
from gatewayctl.cli import main as cli
from gatewayctl.deploy import adoption
from gatewayctl.engine import render
from gatewayctl.resolve import preparation
from tests.builders import ADOPTED_DB, ADOPTED_NS, adopting_project, copy_stack, write_gateway
from tests.hostile_helpers import run_cli, unlocated
from tests.support import ROOT, rendered

# Pulumi's import file format (`pulumi import --file`, docs "Bulk import operations"):
# a name table of existing parents/providers and the resources to import. Resources with
# `component: true` are created as empty parents (Pulumi >= 3.94); parents imported in the
# same file are referenced by name (`name`; `logicalName` is the name the URN is built from).
IMPORT_FILE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["resources"],
    "properties": {
        "nameTable": {
            "type": "object",
            "additionalProperties": {"type": "string", "pattern": "^urn:pulumi:"},
        },
        "resources": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["type", "name", "logicalName"],
                "properties": {
                    "type": {
                        "type": "string",
                        "pattern": r"^[a-zA-Z0-9.-]+:[a-zA-Z0-9./-]*:[A-Za-z0-9]+$",
                    },
                    "name": {"type": "string", "minLength": 1},
                    "id": {"type": "string", "minLength": 1},
                    "parent": {"type": "string"},
                    "provider": {"type": "string"},
                    "version": {"type": "string", "pattern": r"^\d+\.\d+\.\d+$"},
                    "pluginDownloadURL": {"type": "string"},
                    "properties": {"type": "array", "items": {"type": "string"}},
                    "component": {"type": "boolean"},
                    "remote": {"type": "boolean"},
                    "logicalName": {"type": "string"},
                },
            },
        },
    },
}

PROJECT = "hypershell-gateways"
CLUSTER = "roks-us-east"


@pytest.fixture(scope="module")
def adopted(tmp_path_factory: pytest.TempPathFactory) -> render.Rendered:
    return render.execute(
        preparation.prepare(adopting_project(tmp_path_factory.mktemp("p")), "ibm")
    )


def imported(document: dict[str, Any]) -> int:
    """The import file's resources to import: those with the id of an existing object."""
    return sum(1 for entry in document["resources"] if "id" in entry)


@dataclass(frozen=True)
class Resolved:
    urn: str
    parent: str | None
    provider: str | None


def resolve(document: dict[str, Any], stack: str = "ibm") -> dict[str, Resolved]:
    """What ``pulumi import --file`` makes of each entry, keyed by the entry's ``name``.

    As pulumi/pulumi ``pkg/cmd/pulumi/operations/import.go``, ``parseImportFile``: ``name``
    and ``logicalName`` default to each other; a ``parent`` is looked up in ``nameTable``
    first, then among the entries' names; a ``provider`` in ``nameTable`` only; a name two
    entries share is an error once referenced; the entry's URN is built from its parent's
    qualified type, its type and its logical name (``resource.NewURN``), and must be unique.
    The engine then needs the provider to be a provider (``providers.NewReference``).
    """
    table: dict[str, str] = document.get("nameTable", {})
    entries = [
        {**e, "name": e.get("name") or e["logicalName"], "logicalName": e.get("logicalName")}
        for e in document["resources"]
    ]
    for entry in entries:
        entry["logicalName"] = entry["logicalName"] or entry["name"]
    counts = Counter(e["name"] for e in entries)
    by_name = {e["name"]: e for e in entries}
    urns: dict[str, str] = {}

    def urn_of(name: str, seen: tuple[str, ...] = ()) -> str:
        assert counts[name] < 2, f"{name!r} is ambiguous"
        if name in urns:
            return urns[name]
        assert name not in seen, f"parent cycle through {name!r}"
        entry = by_name[name]
        qualified = entry["type"]
        if "parent" in entry:
            parent = parent_urn(entry["parent"], (*seen, name))
            qualified = f"{parent.split('::')[2]}${qualified}"
        urns[name] = f"urn:pulumi:{stack}::{PROJECT}::{qualified}::{entry['logicalName']}"
        return urns[name]

    def parent_urn(reference: str, seen: tuple[str, ...]) -> str:
        assert counts[reference] < 2, f"the parent {reference!r} is ambiguous"
        if reference in table:
            return table[reference]
        assert reference in by_name, f"the parent {reference!r} has no entry in 'nameTable'"
        return urn_of(reference, seen)

    resolved = {}
    for entry in entries:
        provider = None
        if "provider" in entry:
            assert counts[entry["provider"]] < 2, f"the provider {entry['provider']!r} is ambiguous"
            assert entry["provider"] in table, f"{entry['provider']!r} has no entry in 'nameTable'"
            provider = table[entry["provider"]]
            assert provider.split("::")[2].split("$")[-1].startswith("pulumi:providers:"), (
                f"{provider} is not a provider"
            )
        parent = parent_urn(entry["parent"], ()) if "parent" in entry else None
        resolved[entry["name"]] = Resolved(urn_of(entry["name"]), parent, provider)
    urn_list = [r.urn for r in resolved.values()]
    assert len(set(urn_list)) == len(urn_list), "ambiguous URNs"
    assert not set(urn_list) & set(table.values()), "an entry has a name table URN"
    return resolved


def assert_resolves_to_the_program(document: dict[str, Any], rendered: render.Rendered) -> None:
    """Every entry becomes the resource the program registers, under its parent and provider."""
    registered = rendered.recording.resources
    for name, resolved in resolve(document).items():
        resource = registered[resolved.urn]
        assert resolved.parent == (resource.parent if resource.parent in registered else None)
        assert resolved.provider == resource.provider, name


def test_import_file_follows_pulumis_format(adopted: render.Rendered) -> None:
    document = adoption.import_file(adopted)
    jsonschema.validate(document, IMPORT_FILE_SCHEMA)
    names = {r["name"] for r in document["resources"]}
    assert len(names) == len(document["resources"])
    assert not names & set(document["nameTable"])
    for entry in document["resources"]:
        assert ("id" in entry) is not entry.get("component", False), entry
        if "parent" in entry:
            assert entry["parent"] in names or entry["parent"] in document["nameTable"], entry
        if "provider" in entry:
            assert entry["provider"] in document["nameTable"], entry


def test_only_the_adopted_gateway_is_imported(
    adopted: render.Rendered,
) -> None:
    document = adoption.import_file(adopted)
    ids = sorted(
        (r["type"].rsplit(":", 1)[-1], r["id"]) for r in document["resources"] if "id" in r
    )
    ns = ADOPTED_NS
    assert ids == sorted(
        [
            ("ClusterRoleBinding", f"openshell-gateway-node-reader-{ns}"),
            ("ConfigMap", f"{ns}/openshell-gateway-config"),
            ("Database", ADOPTED_DB),
            ("Deployment", f"{ns}/openshell-gateway"),
            ("Namespace", ns),
            ("NetworkPolicy", f"{ns}/openshell-gateway-allow-router"),
            ("NetworkPolicy", f"{ns}/openshell-gateway-allow-sandbox-v2"),
            ("NetworkPolicy", f"{ns}/openshell-gateway-sandbox-ssh"),
            ("NetworkPolicy", f"{ns}/openshell-gateway-sandbox-ssh-v2"),
            ("Role", ADOPTED_DB),
            ("Role", f"{ns}/openshell-gateway-sandbox"),
            ("RoleBinding", f"{ns}/openshell-gateway-sandbox"),
            ("RoleBinding", f"{ns}/openshell-sandbox-privileged-scc"),
            ("Route", f"{ns}/openshell-gateway"),
            ("Secret", f"{ns}/openshell-client-tls"),
            ("Secret", f"{ns}/openshell-gateway-credential-kek"),
            ("Secret", f"{ns}/openshell-gateway-db-credentials"),
            ("Secret", f"{ns}/openshell-gateway-jwt-keys"),
            ("Secret", f"{ns}/openshell-server-tls"),
            ("Service", f"{ns}/openshell-gateway"),
            ("ServiceAccount", f"{ns}/openshell-gateway"),
            ("ServiceAccount", f"{ns}/openshell-gateway-sandbox"),
        ]
    )
    route = next(r for r in document["resources"] if r["logicalName"] == "legacy-exposure-route")
    assert route["type"] == "kubernetes:route.openshift.io/v1:Route"
    assert not any(
        r["logicalName"].startswith(("team-a", "canary", "research", "batch-jobs"))
        for r in document["resources"]
    )
    assert not any(r["type"].startswith(("tls:", "random:")) for r in document["resources"])


def test_names_parents_and_providers_match_the_program(adopted: render.Rendered) -> None:
    document = adoption.import_file(adopted)
    assert_resolves_to_the_program(document, adopted)
    by_urn = adopted.recording.resources
    for entry in document["resources"]:
        registered = by_urn[entry["name"]]  # each entry is keyed by the URN it will have
        assert (registered.type, registered.name) == (entry["type"], entry["logicalName"])
    cluster = f"urn:pulumi:ibm::{PROJECT}::{tokens.CLUSTER}"
    gateway = f"urn:pulumi:ibm::{PROJECT}::{tokens.GATEWAY}"
    database = f"{gateway}${tokens.DATABASE}"
    urns = [
        f"{cluster}$pulumi:providers:kubernetes::{CLUSTER}-k8s",
        f"{cluster}$pulumi:providers:postgresql::{CLUSTER}-postgres",
        f"{cluster}::{CLUSTER}",
        # What the database owner's provider is made from, which the engine creates with
        # every provider of a targeted `up`: the password and its parent components.
        f"{database}$random:index/randomPassword:RandomPassword::legacy-database-db-password",
        f"{database}::legacy-database",
        f"{gateway}::legacy",
    ]
    assert document["nameTable"] == {urn: urn for urn in urns}
    components = [r["logicalName"] for r in document["resources"] if r.get("component")]
    assert components == [
        "legacy-exposure",
        "legacy-pki",
        "legacy-workload",
    ]
    assert adoption.targets(document) == urns


@pytest.mark.parametrize(
    "gateway", [CLUSTER, f"{CLUSTER}-k8s", f"{CLUSTER}-postgres", f"{CLUSTER}-node-reader"]
)
def test_a_gateway_named_like_a_reference_is_imported_under_its_own_parents(
    tmp_path: Path, gateway: str, adopted: render.Rendered
) -> None:
    project = adopting_project(tmp_path, gateway)
    rendered = render.execute(preparation.prepare(project, "ibm"))
    document = adoption.import_file(rendered)

    assert_resolves_to_the_program(document, rendered)
    resolved = resolve(document)
    gateway_urn = f"urn:pulumi:ibm::{PROJECT}::{tokens.GATEWAY}::{gateway}"
    database = f"urn:pulumi:ibm::{PROJECT}::{tokens.GATEWAY}${tokens.DATABASE}"
    cluster = f"urn:pulumi:ibm::{PROJECT}::{tokens.CLUSTER}"
    # (kind, logical name) of every entry.
    found = {
        (e["type"].rsplit(":", 1)[-1], e["logicalName"]): resolved[e["name"]]
        for e in document["resources"]
    }
    assert len(found) == len(resolved)
    # The gateway's and its database's components are made by the targeted `up` before the
    # import (with the password the database owner's provider logs in with): named by URN.
    assert ("Gateway", gateway) not in found and ("Database", f"{gateway}-database") not in found
    assert {gateway_urn, f"{database}::{gateway}-database"} <= set(document["nameTable"])
    assert found["Namespace", f"{gateway}-ns"] == Resolved(
        f"urn:pulumi:ibm::{PROJECT}::{tokens.GATEWAY}$kubernetes:core/v1:Namespace::{gateway}-ns",
        gateway_urn,
        f"{cluster}$pulumi:providers:kubernetes::{CLUSTER}-k8s",
    )
    assert found["Role", f"{gateway}-database-db-role"] == Resolved(
        f"{database}$postgresql:index/role:Role::{gateway}-database-db-role",
        f"{database}::{gateway}-database",
        f"{cluster}$pulumi:providers:postgresql::{CLUSTER}-postgres",
    )
    # The shared ClusterRole is a server-side apply patch: applied, never imported.
    assert [key for key in found if key[0] == "ClusterRole"] == []
    assert f"{cluster}::{CLUSTER}" in document["nameTable"]
    # As many resources to import as for a gateway of a plain name ("legacy").
    assert imported(document) == imported(adoption.import_file(adopted)) > 0


def test_database_role_keeps_its_existing_name(adopted: render.Rendered) -> None:
    document = adoption.import_file(adopted)
    role = next(r for r in document["resources"] if r["type"] == "postgresql:index/role:Role")
    cluster = f"urn:pulumi:ibm::{PROJECT}::{tokens.CLUSTER}"
    assert (role["logicalName"], role["id"], role["provider"]) == (
        "legacy-database-db-role",
        ADOPTED_DB,
        f"{cluster}$pulumi:providers:postgresql::{CLUSTER}-postgres",
    )
    assert role["version"] == "3.18.2"


def test_no_adopted_gateway_gives_an_empty_file() -> None:
    assert adoption.import_file(rendered("aws")) == {"nameTable": {}, "resources": []}


def test_import_file_is_deterministic_json(adopted: render.Rendered) -> None:
    first = json.dumps(adoption.import_file(adopted), indent=2)
    assert first == json.dumps(adoption.import_file(adopted), indent=2)
    assert "[secret]" not in first and "PRIVATE KEY" not in first


def test_import_file_does_not_depend_on_the_checkout(tmp_path: Path) -> None:
    assert str(ROOT) not in json.dumps(adoption.import_file(rendered("ibm")))


def test_cli_writes_the_import_file_and_prints_the_targets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], adopted: render.Rendered
) -> None:

    adopting_project(tmp_path)
    assert cli.main(["--root", str(tmp_path), "import-file", "ibm"]) == 0
    out = capsys.readouterr().out
    written = json.loads((tmp_path / "build/import/ibm.json").read_text())
    assert written == adoption.import_file(adopted)  # the file does not depend on the checkout
    assert f"{imported(written)} resources to import → {tmp_path}/build/import/ibm.json" in out
    cluster = f"urn:pulumi:ibm::hypershell-gateways::{tokens.CLUSTER}"
    gateway = f"urn:pulumi:ibm::hypershell-gateways::{tokens.GATEWAY}"
    database = f"{gateway}${tokens.DATABASE}"
    assert (
        f"  pulumi up --target '{cluster}$pulumi:providers:kubernetes::roks-us-east-k8s'"
        f" --target '{cluster}$pulumi:providers:postgresql::roks-us-east-postgres'"
        f" --target '{cluster}::roks-us-east'"
        f" --target '{database}$random:index/randomPassword:RandomPassword"
        "::legacy-database-db-password'"
        f" --target '{database}::legacy-database'"
        f" --target '{gateway}::legacy'\n"
    ) in out
    assert (
        f"  pulumi import --file {tmp_path}/build/import/ibm.json --protect=false"
        " --generate-code=false\n"
    ) in out


def test_cli_import_file_without_adoptions_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:

    assert cli.main(["import-file", "aws", "--out", str(tmp_path / "x.json")]) == 0
    assert not (tmp_path / "x.json").exists()
    assert "no declaration adopts an existing namespace" in capsys.readouterr().out


# --- Keycloak: the adopted client and its roles ---------------------------------------------

CLIENT_UUID = "5b0c7e7a-93d2-4d8e-8b9a-0a6d3c1f2e4b"
ADMIN_UUID = "1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b"
USER_UUID = "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d"


def test_an_adopted_client_and_its_roles_are_imported_by_realm_and_keycloak_id(
    tmp_path: Path,
) -> None:
    root = adopting_project(tmp_path)
    write_gateway(
        root,
        "legacy",
        {
            "namespace": ADOPTED_NS,
            "databaseName": ADOPTED_DB,
            "keycloak": {
                "clientId": "legacy-0ujtsycgvstl8pauadqwysmnlov",
                "importIds": {
                    "client": CLIENT_UUID,
                    "adminRole": ADMIN_UUID,
                    "userRole": USER_UUID,
                },
            },
        },
        stack="ibm",
    )
    adopted = render.execute(preparation.prepare(root, "ibm"))
    document = adoption.import_file(adopted)
    keycloak = {
        r["logicalName"]: (r["type"], r["id"], r["version"])
        for r in document["resources"]
        if r["type"].startswith("keycloak:")
    }
    version = metadata.version("pulumi-keycloak")
    assert keycloak == {
        "legacy-identity-client": (
            "keycloak:openid/client:Client",
            f"hypershell/{CLIENT_UUID}",
            version,
        ),
        "legacy-identity-admin-role": (
            "keycloak:index/role:Role",
            f"hypershell/{ADMIN_UUID}",
            version,
        ),
        "legacy-identity-user-role": (
            "keycloak:index/role:Role",
            f"hypershell/{USER_UUID}",
            version,
        ),
    }
    client = next(r for r in document["resources"] if r["logicalName"] == "legacy-identity-client")
    (provider,) = adopted.recording.of_type("pulumi:providers:keycloak")
    assert client["provider"] == provider.urn
    assert document["nameTable"][provider.urn] == provider.urn
    jsonschema.validate(document, IMPORT_FILE_SCHEMA)
    assert_resolves_to_the_program(document, adopted)
    # The client keeps the adopted id; the gateway trusts it as the audience.
    (gateway,) = [
        g for g in json.loads(adopted.files["plan.json"])["gateways"] if g["name"] == "legacy"
    ]
    assert gateway["clientId"] == "legacy-0ujtsycgvstl8pauadqwysmnlov"


# --- validate: a kept client needs its ids (issue 25 item 5) ---------------------------------

UPSTREAM_CLIENT = "legacy-0ujtsycgvstl8pauadqwysmnlov"
IDS = {"client": CLIENT_UUID, "adminRole": ADMIN_UUID, "userRole": USER_UUID}


def adopting_with(root: Path, spec: dict[str, Any]) -> str:
    """The ibm stack and its ``legacy`` gateway adopting an upstream namespace, with ``spec``."""
    adopting_project(root)
    adopted = {"namespace": ADOPTED_NS, "databaseName": ADOPTED_DB}
    return write_gateway(root, "legacy", adopted | spec, stack="ibm")


def test_validate_and_render_report_a_kept_client_without_its_ids(tmp_path: Path) -> None:
    source = adopting_with(tmp_path, {"keycloak": {"clientId": UPSTREAM_CLIENT}})

    validated = run_cli("--root", str(tmp_path), "validate", "ibm")

    assert validated.code == 2
    assert unlocated(validated.err).splitlines() == [
        f"error: {source}: spec.keycloak.importIds: missing: the gateway is adopted"
        f" (spec.namespace) and keeps the client '{UPSTREAM_CLIENT}'; without Keycloak's ids of"
        " it `pulumi up` creates it anew, which Keycloak refuses as it exists: add importIds"
        " {client, adminRole, userRole} (the UUIDs in Keycloak's admin console), or remove"
        " spec.keycloak to give the gateway a new client 'openshell-legacy'",
        "1 problem(s); nothing written",
    ]
    # Every command that reads declarations runs the same validation (issue 42, item 7).
    rendered_ = run_cli("--root", str(tmp_path), "render", "ibm", "--out", str(tmp_path / "o"))
    assert (rendered_.code, rendered_.err) == (2, validated.err)
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "spec",
    [
        {"keycloak": {"clientId": UPSTREAM_CLIENT, "importIds": IDS}},
        {"keycloak": {"clientId": "openshell-legacy"}},  # the derived id: a new client
        {},
    ],
    ids=["with-its-ids", "derived-id", "no-keycloak"],
)
def test_an_adopted_gateway_with_its_ids_or_a_new_client_validates(
    tmp_path: Path, spec: dict[str, Any]
) -> None:
    adopting_with(tmp_path, spec)

    validated = run_cli("--root", str(tmp_path), "validate", "ibm")

    assert validated.code == 0, validated.err


def test_a_kept_client_id_on_a_gateway_not_adopted_needs_no_ids(tmp_path: Path) -> None:
    adopting_project(tmp_path)
    write_gateway(tmp_path, "fresh", {"keycloak": {"clientId": "fresh-client"}}, stack="ibm")

    assert run_cli("--root", str(tmp_path), "validate", "ibm").code == 0


def test_a_kept_client_without_its_ids_is_reported_with_the_stacks_other_problems(
    tmp_path: Path,
) -> None:
    source = adopting_with(tmp_path, {"keycloak": {"clientId": UPSTREAM_CLIENT}})
    broken = write_gateway(tmp_path, "broken", {"replicas": 99}, stack="ibm")

    validated = run_cli("--root", str(tmp_path), "validate", "ibm")

    assert validated.code == 2
    assert [line.split(": ")[1:3] for line in unlocated(validated.err).splitlines()[:-1]] == [
        [broken, "spec.replicas"],
        [source, "spec.keycloak.importIds"],
    ]


def test_without_import_ids_no_keycloak_resource_is_imported(adopted: render.Rendered) -> None:
    document = adoption.import_file(adopted)
    assert not [r for r in document["resources"] if r["type"].startswith("keycloak:")]


def test_an_imported_service_keeps_its_cluster_ip(adopted: render.Rendered) -> None:
    """After ``pulumi import`` the Service's state holds the cluster IP the API server gave it
    and the program sets none; pulumi-kubernetes replaces a Service whose ``spec.clusterIP``
    changes (the real engine's preview: replace, reason ``spec.clusterIP``, in
    tests/e2e/test_e2e_f_adoption_up.py). Ignoring both fields keeps the imported ones."""
    document = adoption.import_file(adopted)
    (service,) = [e for e in document["resources"] if e["type"] == "kubernetes:core/v1:Service"]
    registered = adopted.recording.resources[service["name"]]
    assert registered.ignore_changes == ("spec.clusterIP", "spec.clusterIPs")
    assert "clusterIP" not in registered.inputs["spec"]


def test_a_trusted_ca_copied_by_upstream_is_imported_not_created(tmp_path: Path) -> None:
    # The local stack has a trusted CA bundle, so the program declares gateway-trusted-ca, the
    # ConfigMap upstream copies into each tenant namespace: imported, since a create of an
    # existing object fails from pulumi-kubernetes 4.29 on (gatewayctl/deploy/adoption.py).
    # The ibm stack has none, and its import file has no such row.
    copy_stack("local", tmp_path)
    write_gateway(
        tmp_path, "legacy", {"namespace": ADOPTED_NS, "databaseName": ADOPTED_DB}, stack="local"
    )
    document = adoption.import_file(render.execute(preparation.prepare(tmp_path, "local")))
    rows = {(r["type"], r.get("id")) for r in document["resources"] if "id" in r}
    assert ("kubernetes:core/v1:ConfigMap", f"{ADOPTED_NS}/gateway-trusted-ca") in rows
    ibm = adoption.import_file(
        render.execute(preparation.prepare(adopting_project(tmp_path / "i"), "ibm"))
    )
    assert not any(r.get("id", "").endswith("/gateway-trusted-ca") for r in ibm["resources"])

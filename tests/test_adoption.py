"""Adoption of upstream gateways: the ``pulumi import --file`` file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from stacks import adoption, cli, render
from tests.conftest import ROOT, rendered

# Pulumi's import file format (`pulumi import --file`, docs "Bulk import operations"):
# a name table of existing parents/providers and the resources to import. Resources with
# `component: true` are created as empty parents (Pulumi >= 3.94); parents imported in the
# same file are referenced by name.
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
                "required": ["type", "name"],
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

ADOPTED_NS = "openshell-b5a1cd34b5f99d11"
ADOPTED_DB = "gw_0ujtsycgvstl8pauadqwysmnlov"


@pytest.fixture(scope="module")
def adopted(tmp_path_factory: pytest.TempPathFactory) -> render.Rendered:
    root = tmp_path_factory.mktemp("project")
    shutil.copy(ROOT / "Pulumi.ibm.yaml", root)
    shutil.copytree(ROOT / "stacks" / "ibm", root / "stacks" / "ibm")
    (root / "stacks/ibm/gateways/legacy.yaml").write_text(
        "apiVersion: hypershell.redhat.io/v1alpha1\nkind: Gateway\nmetadata:\n  name: legacy\n"
        f"spec:\n  namespace: {ADOPTED_NS}\n  databaseName: {ADOPTED_DB}\n"
    )
    return render.execute(render.prepare(root, "ibm"))


def test_import_file_follows_pulumis_format(adopted: render.Rendered) -> None:
    document = adoption.import_file(adopted)
    jsonschema.validate(document, IMPORT_FILE_SCHEMA)
    names = {r["name"] for r in document["resources"]}
    assert len(names) == len(document["resources"])
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
    route = next(r for r in document["resources"] if r["name"] == "legacy-exposure-route")
    assert route["type"] == "kubernetes:route.openshift.io/v1:Route"
    assert not any(
        r["name"].startswith(("team-a", "canary", "research", "batch-jobs"))
        for r in document["resources"]
    )
    assert not any(r["type"].startswith(("tls:", "random:")) for r in document["resources"])


def test_names_parents_and_providers_match_the_program(adopted: render.Rendered) -> None:
    document = adoption.import_file(adopted)
    by_urn = adopted.recording.resources
    by_name = {r.name: r for r in by_urn.values()}
    for entry in document["resources"]:
        registered = by_name[entry["name"]]
        assert registered.type == entry["type"]
        parent = by_urn.get(registered.parent or "")
        assert entry.get("parent") == (parent.name if parent else None)
        if "provider" in entry:
            assert document["nameTable"][entry["provider"]] == registered.provider
    cluster = "urn:pulumi:ibm::hypershell-gateways::hypershell:cluster:Cluster"
    assert document["nameTable"] == {
        "roks-us-east": f"{cluster}::roks-us-east",
        "roks-us-east-k8s": f"{cluster}$pulumi:providers:kubernetes::roks-us-east-k8s",
        "roks-us-east-postgres": f"{cluster}$pulumi:providers:postgresql::roks-us-east-postgres",
    }
    components = [r["name"] for r in document["resources"] if r.get("component")]
    assert components == [
        "legacy",
        "legacy-database",
        "legacy-exposure",
        "legacy-pki",
        "legacy-workload",
    ]
    assert adoption.targets(document) == sorted(document["nameTable"].values())


def test_database_role_keeps_its_existing_name(adopted: render.Rendered) -> None:
    document = adoption.import_file(adopted)
    role = next(r for r in document["resources"] if r["type"] == "postgresql:index/role:Role")
    assert (role["name"], role["id"], role["provider"]) == (
        "legacy-database-db-role",
        ADOPTED_DB,
        "roks-us-east-postgres",
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
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:

    shutil.copy(ROOT / "Pulumi.ibm.yaml", tmp_path)
    shutil.copytree(ROOT / "stacks" / "ibm", tmp_path / "stacks" / "ibm")
    (tmp_path / "stacks/ibm/gateways/legacy.yaml").write_text(
        "apiVersion: hypershell.redhat.io/v1alpha1\nkind: Gateway\nmetadata:\n  name: legacy\n"
        f"spec:\n  namespace: {ADOPTED_NS}\n  databaseName: {ADOPTED_DB}\n"
    )
    assert cli.main(["--root", str(tmp_path), "import-file", "ibm"]) == 0
    out = capsys.readouterr().out
    written = json.loads((tmp_path / "build/import/ibm.json").read_text())
    assert sum(1 for r in written["resources"] if "id" in r) == 22
    assert f"22 resources to import → {tmp_path}/build/import/ibm.json" in out
    cluster = "urn:pulumi:ibm::hypershell-gateways::hypershell:cluster:Cluster"
    assert (
        f"  pulumi up --target '{cluster}$pulumi:providers:kubernetes::roks-us-east-k8s'"
        f" --target '{cluster}$pulumi:providers:postgresql::roks-us-east-postgres'"
        f" --target '{cluster}::roks-us-east'\n"
    ) in out
    assert f"pulumi import --file {tmp_path}/build/import/ibm.json --protect=false" in out


def test_cli_import_file_without_adoptions_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:

    assert cli.main(["import-file", "aws", "--out", str(tmp_path / "x.json")]) == 0
    assert not (tmp_path / "x.json").exists()
    assert "no declaration adopts an existing namespace" in capsys.readouterr().out

"""Every command that reads declarations runs ``validate``'s validation, its own rules included
(issue 42, item 7): a declaration ``validate`` rejects is rejected by ``render``, ``diff``,
``import-file``, ``operator-manifests`` and ``graph`` with the same problems (exit 2), and none
of them writes anything. ``import-file`` once exited 0 on an adopted gateway keeping its
Keycloak client without Keycloak's ids of it, leaving the client out of the import file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders import ADOPTED_DB, ADOPTED_NS, adopting_project, copy_project, write_gateway
from tests.hostile_helpers import run_cli, unlocated

UPSTREAM_CLIENT = "legacy-0ujtsycgvstl8pauadqwysmnlov"
KEPT = (
    "spec.keycloak.importIds: missing: the gateway is adopted (spec.namespace) and keeps the"
    f" client '{UPSTREAM_CLIENT}'; without Keycloak's ids of it `pulumi up` creates it anew,"
    " which Keycloak refuses as it exists: add importIds {client, adminRole, userRole} (the"
    " UUIDs in Keycloak's admin console), or remove spec.keycloak to give the gateway a new"
    " client 'openshell-legacy'"
)


def _kept_client(root: Path) -> str:
    """The ibm stack adopting ``legacy``, which keeps its client without Keycloak's ids."""
    adopting_project(root)
    spec = {"namespace": ADOPTED_NS, "databaseName": ADOPTED_DB}
    keep = {"keycloak": {"clientId": UPSTREAM_CLIENT}}
    return write_gateway(root, "legacy", spec | keep, stack="ibm")


COMMANDS = {
    "render": ["render", "ibm", "--out", "{out}"],
    "diff": ["diff", "ibm", "--base", "HEAD", "--output", "{out}"],
    "import-file": ["import-file", "ibm", "--out", "{out}"],
    "graph": ["graph", "ibm", "--output", "{out}"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_each_command_rejects_what_validate_rejects(tmp_path: Path, command: str) -> None:
    root = tmp_path / "project"
    source = _kept_client(root)
    validated = run_cli("--root", str(root), "validate", "ibm")
    expected = [f"error: {source}: {KEPT}", "1 problem(s); nothing written"]
    assert (validated.code, unlocated(validated.err).splitlines()) == (2, expected)
    out = tmp_path / "out"
    argv = [part.format(out=out) for part in COMMANDS[command]]
    ran = run_cli("--root", str(root), *argv)
    assert (ran.code, ran.out, ran.err) == (2, "", validated.err)
    assert not out.exists()


def test_import_file_prints_the_problems_document_and_writes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "project"
    source = _kept_client(root)
    out = tmp_path / "ibm.json"
    ran = run_cli("--root", str(root), "import-file", "ibm", "--out", str(out), "-o", "json")
    assert ran.code == 2
    (problem,) = json.loads(ran.out)["problems"]
    assert (problem["path"], f"{problem['field']}: {problem['message']}") == (source, KEPT)
    assert not out.exists() and not (root / "build").exists()


def test_operator_manifests_rejects_what_validate_rejects(tmp_path: Path) -> None:
    # The operator owns the aws stack (deploy/operator.yaml).
    root = copy_project(tmp_path / "project", ready=True)
    spec = {"cluster": "rosa-us-east-1", "namespace": ADOPTED_NS, "databaseName": ADOPTED_DB}
    keep = {"keycloak": {"clientId": UPSTREAM_CLIENT}}
    source = write_gateway(root, "legacy", spec | keep, stack="aws")
    validated = run_cli("--root", str(root), "validate", "aws")
    expected = [f"error: {source}: {KEPT}", "1 problem(s); nothing written"]
    assert (validated.code, unlocated(validated.err).splitlines()) == (2, expected)
    out = tmp_path / "operator"
    ran = run_cli("--root", str(root), "operator-manifests", "--out", str(out))
    assert (ran.code, ran.out, ran.err) == (2, "", validated.err)
    assert not out.exists()


def test_a_valid_adopted_gateway_still_gets_its_import_file(tmp_path: Path) -> None:
    root = adopting_project(tmp_path / "project")
    out = tmp_path / "ibm.json"
    ran = run_cli("--root", str(root), "import-file", "ibm", "--out", str(out), "-o", "json")
    assert (ran.code, ran.err) == (0, "")
    assert json.loads(ran.out)["file"] == str(out)
    assert out.is_file()

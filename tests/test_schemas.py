"""Rendered output against real schemas: Kubernetes (1.31, 1.34), the CRDs, the providers."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from gatewayctl.engine import render, write_guard
from tests import schema_checks
from tests.support import ROOT, STACKS, rendered

# OpenShift 4.18 ships Kubernetes 1.31, OpenShift 4.21 ships 1.34.
KUBERNETES_VERSIONS = ("1.31", "1.34")
CUSTOM_KINDS = {"Route", "GRPCRoute", "BackendTLSPolicy", "HTTPRoute"}


def manifests(r: render.Rendered) -> list[dict[str, Any]]:
    return [yaml.safe_load(text) for path, text in r.files.items() if path.startswith("manifests/")]


def built_in_objects(r: render.Rendered) -> int:
    """The Kubernetes objects of built-in kinds the stack's plan declares (plan.json): counted
    apart from the manifests the validation reads, so none can escape it."""
    plan = json.loads(r.files["plan.json"])
    types = [resource["type"] for resource in plan["resources"]]
    return sum(
        t.startswith("kubernetes:") and t.rsplit(":", 1)[1] not in CUSTOM_KINDS for t in types
    )


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("stack", STACKS)
def test_built_in_kinds_pass_kubernetes_validate_strict(stack: str, version: str) -> None:
    checked = 0
    for obj in manifests(rendered(stack)):
        if obj["kind"] in CUSTOM_KINDS:
            continue
        kubernetes_validate.validate(obj, version, strict=True)
        checked += 1
    assert checked == built_in_objects(rendered(stack)) > 0


def test_custom_kinds_rendered_per_mode() -> None:
    def kinds(stack: str) -> set[str]:
        return {o["kind"] for o in manifests(rendered(stack))} & CUSTOM_KINDS

    assert kinds("ibm") == {"Route"}
    assert kinds("aws") == {"GRPCRoute", "BackendTLSPolicy", "HTTPRoute"}
    assert kinds("local") == set()


def write(r: render.Rendered, directory: Path) -> Path:
    write_guard.write_tree(directory, r.files)
    return directory


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("stack", STACKS)
def test_every_manifest_passes_its_schema(stack: str, version: str, tmp_path: Path) -> None:
    out = write(rendered(stack), tmp_path / stack)
    report = schema_checks.check_manifests([out / "manifests"], version)
    expected = sum(1 for p in rendered(stack).files if p.startswith("manifests/"))
    assert report.lines() == [f"{expected} passed, 0 failed"]


def first_manifest(out: Path, kind: str) -> Path:
    return next(
        p
        for p in sorted((out / "manifests").rglob("*.yaml"))
        if yaml.safe_load(p.read_text())["kind"] == kind
    )


@pytest.mark.parametrize(
    ("kind", "change", "problem"),
    [
        # A custom resource: an unknown field, refused by the CRD's schema.
        ("GRPCRoute", lambda d: d["spec"].update(hostname=["x"]), "spec: Additional properties"),
        (
            "HTTPRoute",
            lambda d: d["spec"]["parentRefs"][0].update(port="443"),
            "spec.parentRefs.0.port: '443' is not of type 'integer'",
        ),
        # A built-in kind: the strict schema of kubernetes-validate.
        ("Deployment", lambda d: d["spec"].update(replica=1), "Additional properties"),
        ("Service", lambda d: d["spec"]["ports"][0].update(port="grpc"), "is not of type"),
        # What the API server checks outside the schemas.
        (
            "Deployment",
            lambda d: d["spec"]["selector"]["matchLabels"].update(extra="x"),
            "spec.selector.matchLabels: extra=x is not a label of spec.template",
        ),
        ("Namespace", lambda d: d["metadata"].update(name="Team_A"), "is not a valid Namespace"),
        ("ConfigMap", lambda d: d["metadata"].update(labels={"a/b/c": "x"}), "labels: key"),
    ],
    ids=["crd-field", "crd-type", "builtin-field", "builtin-type", "selector", "name", "label"],
)
def test_a_broken_manifest_fails_with_its_path(
    kind: str, change: Any, problem: str, tmp_path: Path
) -> None:
    out = write(rendered("aws"), tmp_path / "aws")
    path = first_manifest(out, kind)
    document = yaml.safe_load(path.read_text())
    change(document)
    path.write_text(yaml.safe_dump(document))
    report = schema_checks.check_manifests([out / "manifests"], "1.34")
    assert report.failed == 1
    assert [label.split(":")[0] for label, _ in report.problems] == [str(path)] * len(
        report.problems
    )
    assert any(problem in message for _, message in report.problems), report.problems


def test_a_kind_without_a_schema_fails(tmp_path: Path) -> None:
    (tmp_path / "x.yaml").write_text(
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n"
    )
    report = schema_checks.check_manifests([tmp_path], "1.31")
    assert report.failed == 1
    assert "no schema for example.com/v1 Widget" in report.problems[0][1]


def test_the_schema_checks_run_by_hand(tmp_path: Path) -> None:
    out = write(rendered("local"), tmp_path / "local")
    for args in (
        ["manifests", "-k", "1.34", str(out / "manifests")],
        ["plan", str(out / "plan.json")],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "tests.schema_checks", *args],
            capture_output=True,
            text=True,
            check=False,
            cwd=ROOT,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert " passed, 0 failed" in done.stdout.splitlines()[-1]
    (out / "manifests" / "bad.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n")
    done = subprocess.run(
        [sys.executable, "-m", "tests.schema_checks", "manifests", str(out / "manifests")],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 1
    assert done.stdout.splitlines()[-1].endswith("passed, 1 failed")


def keycloak_types() -> set[str]:
    return {
        "pulumi:providers:keycloak",
        "keycloak:openid/client:Client",
        "keycloak:openid/clientDefaultScopes:ClientDefaultScopes",
        "keycloak:index/role:Role",
        "keycloak:openid/audienceProtocolMapper:AudienceProtocolMapper",
        "keycloak:openid/subProtocolMapper:SubProtocolMapper",
        "keycloak:openid/userClientRoleProtocolMapper:UserClientRoleProtocolMapper",
        "keycloak:index/genericRoleMapper:GenericRoleMapper",  # the web consoles' scope
    }


@pytest.mark.parametrize("stack", STACKS)
def test_plan_inputs_match_the_provider_schemas(stack: str) -> None:
    plan = json.loads(rendered(stack).files["plan.json"])
    report = schema_checks.check_plan(plan)
    checked = sum(
        1
        for r in plan["resources"]
        if r["type"].split(":")[0] in {"tls", "postgresql", "random", "keycloak"}
        or r["type"] in {"pulumi:providers:postgresql", "pulumi:providers:keycloak"}
    )
    keycloak = [r for r in plan["resources"] if "keycloak" in r["type"]]
    # Every stack signs people in through Keycloak: its client, roles, mappers and provider
    # are among the resources checked.
    assert {r["type"] for r in keycloak} >= keycloak_types()
    assert report.problems == []
    assert (report.passed, report.failed) == (checked, 0)
    assert report.skipped == len(plan["resources"]) - checked


def broken(plan: dict[str, Any], kind: str, change: Any) -> dict[str, Any]:
    plan = copy.deepcopy(plan)
    change(next(r for r in plan["resources"] if r["type"] == kind)["inputs"])
    return plan


@pytest.mark.parametrize(
    ("kind", "change", "problem"),
    [
        (
            "keycloak:openid/client:Client",
            lambda i: i.update(clientSecrett="x"),
            "inputs.(root): Additional properties are not allowed ('clientSecrett' was unexpected)",
        ),
        (
            "keycloak:openid/client:Client",
            lambda i: i.pop("realmId"),
            "inputs.(root): 'realmId' is a required property",
        ),
        (
            "random:index/randomBytes:RandomBytes",
            lambda i: i.update(length="32"),
            "inputs.length: '32' is not valid under any of the given schemas",
        ),
        (
            "pulumi:providers:postgresql",
            lambda i: i.update(port="five"),
            "inputs.port: 'five' is not valid under any of the given schemas",
        ),
        (
            "tls:index/locallySignedCert:LocallySignedCert",
            lambda i: i.update(allowedUses="x"),
            "inputs.allowedUses: 'x' is not valid under any of the given schemas",
        ),
    ],
    ids=["unknown", "required", "type", "provider", "array"],
)
def test_a_broken_plan_fails_with_the_input(kind: str, change: Any, problem: str) -> None:
    plan = broken(json.loads(rendered("aws").files["plan.json"]), kind, change)
    report = schema_checks.check_plan(plan)
    assert report.failed == 1
    assert [(label.split()[0], message) for label, message in report.problems] == [(kind, problem)]


def test_a_resource_type_its_package_lacks_fails() -> None:
    plan = {"resources": [{"type": "tls:index/nothing:Nothing", "name": "n", "inputs": {}}]}
    report = schema_checks.check_plan(plan)
    assert report.problems == [("tls:index/nothing:Nothing n", "type: not a resource of tls 5.6.2")]

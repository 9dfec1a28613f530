"""Rendered output against real schemas: Kubernetes (1.31, 1.34), the CRDs, the providers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from gatewayctl.engine import outputs, render
from tests.support import STACKS, rendered, shared_or_skip

# OpenShift 4.18 ships Kubernetes 1.31, OpenShift 4.21 ships 1.34.
KUBERNETES_VERSIONS = ("1.31", "1.34")
CUSTOM_KINDS = {"Route", "GRPCRoute", "BackendTLSPolicy", "HTTPRoute"}
# Per stack: 2 or 3 cluster-scoped objects per cluster/gateway plus ~19 per tenant namespace.
# local: plus ConfigMap gateway-trusted-ca in each of its 3 tenant namespaces.
# One web console per stack: Deployment, Service, Secret and two NetworkPolicies (one in mode
# none, where nothing admits the router).
BUILT_IN_OBJECTS = {"aws": 88 + 5, "ibm": 84 + 5, "local": 57 + 4}


def manifests(r: render.Rendered) -> list[dict]:
    return [yaml.safe_load(text) for path, text in r.files.items() if path.startswith("manifests/")]


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("stack", STACKS)
def test_built_in_kinds_pass_kubernetes_validate_strict(stack: str, version: str) -> None:
    checked = 0
    for obj in manifests(rendered(stack)):
        if obj["kind"] in CUSTOM_KINDS:
            continue
        kubernetes_validate.validate(obj, version, strict=True)
        checked += 1
    assert checked == BUILT_IN_OBJECTS[stack]


def test_custom_kinds_rendered_per_mode() -> None:
    def kinds(stack: str) -> set[str]:
        return {o["kind"] for o in manifests(rendered(stack))} & CUSTOM_KINDS

    assert kinds("ibm") == {"Route"}
    assert kinds("aws") == {"GRPCRoute", "BackendTLSPolicy", "HTTPRoute"}
    assert kinds("local") == set()


def write(r: render.Rendered, directory: Path) -> Path:
    outputs.write_tree(directory, r.files)
    return directory


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("stack", STACKS)
def test_every_manifest_passes_the_shared_validator(
    stack: str, version: str, tmp_path: Path
) -> None:
    tool = shared_or_skip("tools/validate_manifests.py")
    out = write(rendered(stack), tmp_path / stack)
    done = subprocess.run(
        [sys.executable, str(tool), "-k", version, str(out / "manifests")],
        capture_output=True,
        text=True,
        check=False,
    )
    expected = sum(1 for p in rendered(stack).files if p.startswith("manifests/"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == f"{expected} passed, 0 failed"


@pytest.mark.parametrize("stack", STACKS)
def test_plan_inputs_match_the_provider_schemas(stack: str, tmp_path: Path) -> None:
    tool = shared_or_skip("tools/validate_plan.py")
    out = write(rendered(stack), tmp_path / stack)
    done = subprocess.run(
        [sys.executable, str(tool), str(out / "plan.json")],
        capture_output=True,
        text=True,
        check=False,
    )
    plan = json.loads(rendered(stack).files["plan.json"])
    checked = sum(
        1
        for r in plan["resources"]
        if r["type"].split(":")[0] in {"tls", "postgresql", "random", "keycloak"}
        or r["type"] in {"pulumi:providers:postgresql", "pulumi:providers:keycloak"}
    )
    keycloak = [r for r in plan["resources"] if "keycloak" in r["type"]]
    # Every stack signs people in through Keycloak: its client, roles, mappers and provider
    # are among the resources the tool checks.
    assert {r["type"] for r in keycloak} >= {
        "pulumi:providers:keycloak",
        "keycloak:openid/client:Client",
        "keycloak:openid/clientDefaultScopes:ClientDefaultScopes",
        "keycloak:index/role:Role",
        "keycloak:openid/audienceProtocolMapper:AudienceProtocolMapper",
        "keycloak:openid/subProtocolMapper:SubProtocolMapper",
        "keycloak:openid/userClientRoleProtocolMapper:UserClientRoleProtocolMapper",
        "keycloak:index/genericRoleMapper:GenericRoleMapper",  # the web consoles' scope
    }
    assert done.returncode == 0, done.stdout
    passed = int(done.stdout.splitlines()[-1].split(" passed")[0])
    assert passed == checked

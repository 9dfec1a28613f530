"""The policy pack against the offline render: the real stacks pass every policy, and a
deliberately broken copy of real recorded resources fails each one with its exact message."""

from __future__ import annotations

import copy
import re
import runpy
import sys
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import grpc
import pytest
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc
from pulumi_policy import ResourceValidationPolicy, StackValidationPolicy
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, UnknownValueError

from gatewayctl.engine.offline import RecordedResource, Recording, secret
from gatewayctl.inputs.stackfile import parse_stack_config, read_stack_config
from gatewayctl.resolve.console_plan import DEFAULT_DASHBOARD_IMAGE as CONSOLE_DASHBOARD
from policy.hypershell_policies import PACK_NAME, POLICIES
from policy.hypershell_policies.credentials import secret_like_name
from policy.hypershell_policies.identity import is_loopback
from policy.hypershell_policies.images import is_pinned
from policy.hypershell_policies.network import covers
from policy.hypershell_policies.pods import DEFAULT_ALLOWED_REGISTRIES, allowed_images, is_allowed
from tests.policy_helpers import (
    POLICY_DIR,
    resource_args,
    stack_args,
    stack_config,
    struct,
    violations,
)
from tests.support import ROOT, STACKS, rendered

IBM_BASE = "hysh-ibm-01-4c28435107377e996c6eb39230b7bcf5-0000.us-east.containers.appdomain.cloud"
TEAM_A_HOST = f"gw-openshell-team-a.{IBM_BASE}"
DEPLOYMENT = "Deployment openshell-team-a/openshell-gateway"
CONTAINER = f"{DEPLOYMENT}: spec.template.spec.containers[0] (openshell-gateway)"
CONFIG_MAP = "ConfigMap openshell-team-a/openshell-gateway-config"
INTERNAL = "image-registry.openshift-image-registry.svc:5000/"
PEM_KEY = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIB0=\n-----END EC PRIVATE KEY-----\n"
BY_NAME = {policy.name: policy for policy in POLICIES}
SANDBOX_109_DIGEST = "sha256:ad47448cd2e9418be9875f840e4a4baaaa804ccf06358c34e28e4fa1b077aca7"
# The aws sample console pins its oauth2-proxy by digest (gateways/aws/search.yaml).
SAMPLE_PROXY_DIGEST = (
    (ROOT / "gateways/aws/search.yaml").read_text().split("oauth2-proxy:v7.7.1@", 1)[1].split()[0]
)
"""The sandbox image's digest in releases/openshell-0.0.109.yaml (ibm's release)."""


def broken(stack: str) -> Recording:
    """A private copy of a real stack's recording, to break."""
    return copy.deepcopy(rendered(stack).recording)


def named(recording: Recording, name: str) -> RecordedResource:
    found = [r for r in recording.resources.values() if r.name == name]
    assert len(found) == 1, name
    return found[0]


def messages(policy: str, recording: Recording, stack: str) -> list[str]:
    """What one policy reports, run with the stack's policy config."""
    return [v.message for v in violations([BY_NAME[policy]], recording, stack_config(stack))]


def _unexpected(message: str, urn: str | None = None) -> None:
    """A policy's report where none is expected: the test fails with it."""
    pytest.fail(f"{urn}: {message}")


def container(recording: Recording, name: str = "team-a-workload-deploy") -> dict[str, Any]:
    spec: dict[str, Any] = named(recording, name).inputs["spec"]
    containers: list[dict[str, Any]] = spec["template"]["spec"]["containers"]
    return containers[0]


# --- the real stacks -------------------------------------------------------------------------


@pytest.mark.parametrize("policy", [p.name for p in POLICIES])
@pytest.mark.parametrize("stack", STACKS)
def test_every_real_stack_passes_every_policy(stack: str, policy: str) -> None:
    assert violations([BY_NAME[policy]], rendered(stack).recording, stack_config(stack)) == []


def test_every_stack_has_a_policy_config() -> None:
    assert sorted(p.stem for p in (POLICY_DIR / "config").glob("*.json")) == sorted(STACKS)


# --- pod security ----------------------------------------------------------------------------


def test_privilege_escalation_fails() -> None:
    recording = broken("ibm")
    container(recording)["securityContext"]["allowPrivilegeEscalation"] = True
    assert messages("pod-security-restricted", recording, "ibm") == [
        f"{CONTAINER}: securityContext.allowPrivilegeEscalation must be false, got true"
    ]


def test_missing_limits_fail() -> None:
    recording = broken("ibm")
    del container(recording)["resources"]["limits"]
    assert messages("pod-security-restricted", recording, "ibm") == [
        f"{CONTAINER}: resources.limits.cpu is not set",
        f"{CONTAINER}: resources.limits.memory is not set",
    ]


def test_root_writable_capable_container_fails_on_every_count() -> None:
    recording = broken("ibm")
    context = container(recording)["securityContext"]
    context.update(runAsNonRoot=False, runAsUser=0, readOnlyRootFilesystem=False)
    context["capabilities"] = {"add": ["NET_ADMIN"]}
    assert messages("pod-security-restricted", recording, "ibm") == [
        f"{CONTAINER}: securityContext.runAsNonRoot must be true (here or in the pod's"
        " securityContext), got false",
        f"{CONTAINER}: securityContext.runAsUser must not be 0",
        f"{CONTAINER}: securityContext.capabilities.drop must contain 'ALL', got not set",
        f"{CONTAINER}: securityContext.capabilities.add may only hold 'NET_BIND_SERVICE',"
        " got ['NET_ADMIN']",
        f"{CONTAINER}: securityContext.readOnlyRootFilesystem must be true, got false",
    ]


def test_pod_level_settings_count_for_every_container() -> None:
    recording = broken("ibm")
    context = container(recording)["securityContext"]
    del context["runAsNonRoot"], context["seccompProfile"]  # the pod level still sets both
    assert messages("pod-security-restricted", recording, "ibm") == []


def test_host_namespaces_and_host_path_volumes_fail() -> None:
    recording = broken("ibm")
    pod = named(recording, "team-a-workload-deploy").inputs["spec"]["template"]["spec"]
    pod["hostNetwork"] = True
    pod["volumes"].append({"name": "docker", "hostPath": {"path": "/var/run"}})
    assert messages("pod-security-restricted", recording, "ibm") == [
        f"{DEPLOYMENT}: spec.template.spec.hostNetwork must not be true",
        f"{DEPLOYMENT}: spec.template.spec.volumes[4] (docker): hostPath volumes are not allowed",
    ]


@pytest.mark.parametrize(
    ("type_", "path"),
    [
        ("kubernetes:core/v1:Pod", ("spec",)),
        ("kubernetes:apps/v1:StatefulSet", ("spec", "template", "spec")),
        ("kubernetes:apps/v1:DaemonSet", ("spec", "template", "spec")),
        ("kubernetes:batch/v1:Job", ("spec", "template", "spec")),
        ("kubernetes:batch/v1:CronJob", ("spec", "jobTemplate", "spec", "template", "spec")),
    ],
)
def test_every_pod_kind_is_checked(type_: str, path: tuple[str, ...]) -> None:
    recording = broken("ibm")
    deployment = named(recording, "team-a-workload-deploy")
    pod = deployment.inputs["spec"]["template"]["spec"]
    del pod["securityContext"]["seccompProfile"]
    del pod["containers"][0]["securityContext"]["seccompProfile"]
    inputs: dict[str, Any] = {"metadata": deployment.inputs["metadata"]}
    for key in reversed(path):
        pod = {key: pod}
    inputs.update(pod)
    kind = type_.rsplit(":", 1)[1]
    recording.resources = {"x": replace(deployment, urn="x", type=type_, inputs=inputs)}
    assert messages("pod-security-restricted", recording, "ibm") == [
        f"{kind} openshell-team-a/openshell-gateway: {'.'.join(path)}.containers[0]"
        " (openshell-gateway): securityContext.seccompProfile.type must be 'RuntimeDefault'"
        " (here or in the pod's securityContext), got not set"
    ]


# --- registries ------------------------------------------------------------------------------


def test_ghcr_image_on_ibm_fails() -> None:
    recording = broken("ibm")
    container(recording)["image"] = "ghcr.io/nvidia/openshell/gateway:0.0.109"
    assert messages("allowed-image-registries", recording, "ibm") == [
        f"{CONTAINER}: image 'ghcr.io/nvidia/openshell/gateway:0.0.109' is not from an allowed"
        f" registry (allowed: {INTERNAL})"
    ]


def test_ghcr_sandbox_image_in_gateway_toml_on_ibm_fails() -> None:
    recording = broken("ibm")
    data = named(recording, "team-a-workload-config").inputs["data"]
    sandbox = f"ghcr.io/nvidia/openshell-community/sandboxes/base:latest@{SANDBOX_109_DIGEST}"
    data["gateway.toml"] = data["gateway.toml"].replace(
        f"{INTERNAL}openshift/openshell-sandbox-base:latest@{SANDBOX_109_DIGEST}", sandbox
    )
    assert messages("allowed-image-registries", recording, "ibm") == [
        f"{CONFIG_MAP}: data['gateway.toml'] openshell.gateway.default_image '{sandbox}' is not"
        f" from an allowed registry (allowed: {INTERNAL})"
    ]


def test_aws_images_would_not_pass_on_ibm() -> None:
    config = {"allowed-image-registries": stack_config("ibm")["allowed-image-registries"]}
    found = violations([allowed_images], rendered("aws").recording, config)
    # Per gateway: the Deployment's image, and gateway.toml's sandbox and supervisor images;
    # per web console, its dashboard and oauth2-proxy images (quay.io, allowed on aws).
    gateways = rendered("aws").gateways
    consoles = sum(g.console is not None for g in gateways)
    assert consoles == 1
    assert len(found) == 3 * len(gateways) + 2 * consoles
    assert sum("'ghcr.io/" in v.message for v in found) == 3 * len(gateways)
    assert sum("'quay.io/" in v.message for v in found) == 2 * consoles


def test_without_config_the_schema_default_applies() -> None:
    schema = allowed_images.config_schema
    assert schema is not None
    assert schema.properties["allowedRegistries"]["default"] == list(DEFAULT_ALLOWED_REGISTRIES)
    assert DEFAULT_ALLOWED_REGISTRIES == ("ghcr.io/", INTERNAL)
    # The web consoles' quay.io images are allowed by aws's and local's own config only.
    console = (
        "Deployment openshell-{ns}/openshell-console: spec.template.spec.containers[{i}] ({c}):"
        " image '{image}' is not from an allowed registry (allowed: ghcr.io/, " + INTERNAL + ")"
    )
    dashboard = CONSOLE_DASHBOARD
    proxy_tag = "quay.io/oauth2-proxy/oauth2-proxy:v7.7.1"
    assert [v.message for v in violations([allowed_images], rendered("aws").recording)] == [
        console.format(ns="search", i=0, c="dashboard", image=dashboard),
        console.format(
            ns="search", i=1, c="oauth2-proxy", image=f"{proxy_tag}@{SAMPLE_PROXY_DIGEST}"
        ),
    ]
    assert violations([allowed_images], rendered("ibm").recording) == []
    assert [v.message for v in violations([allowed_images], rendered("local").recording)] == [
        console.format(ns="dev-build", i=0, c="dashboard", image=dashboard),
        console.format(ns="dev-build", i=1, c="oauth2-proxy", image=proxy_tag),
        "Deployment openshell-dev-build/openshell-gateway: spec.template.spec.containers[0]"
        " (openshell-gateway): image 'localhost:5001/openshell/gateway:dev' is not from an"
        f" allowed registry (allowed: ghcr.io/, {INTERNAL})",
    ]


# --- images pinned by digest (production) ---------------------------------------------------

PRODUCTION = {"images-pinned-by-digest": {"production": True}}
NOT_PINNED = (
    "is not pinned by digest; a production stack runs images by digest only (@sha256: and 64"
    " lowercase hex characters: bind a release, or pin the gateway's own image by digest)"
)


@pytest.mark.parametrize("stack", STACKS)
def test_the_policy_config_says_production_as_the_stack_file_does(stack: str) -> None:
    display, raw = read_stack_config(ROOT, stack)
    production = parse_stack_config(display, raw).production
    assert stack_config(stack)["images-pinned-by-digest"] == {"production": production}
    assert production == (stack in {"aws", "ibm"})


def test_a_tag_in_a_production_stack_fails_with_where_it_is() -> None:
    recording = broken("ibm")
    container(recording)["image"] = f"{INTERNAL}openshift/openshell-gateway:0.0.109"
    data = named(recording, "team-a-workload-config").inputs["data"]
    data["gateway.toml"] = data["gateway.toml"].replace(f"@{SANDBOX_109_DIGEST}", "", 1)
    assert messages("images-pinned-by-digest", recording, "ibm") == [
        f"{CONFIG_MAP}: data['gateway.toml'] openshell.gateway.default_image"
        f" '{INTERNAL}openshift/openshell-sandbox-base:latest' {NOT_PINNED}",
        f"{CONTAINER}: image '{INTERNAL}openshift/openshell-gateway:0.0.109' {NOT_PINNED}",
    ]


def test_local_as_production_would_fail_only_on_its_tag_override() -> None:
    pinned = BY_NAME["images-pinned-by-digest"]
    found = violations([pinned], rendered("local").recording, PRODUCTION)
    assert [v.message for v in found] == [
        # Its console runs upstream's oauth2-proxy default, a tag (the dashboard's default is
        # pinned by digest).
        "Deployment openshell-dev-build/openshell-console: spec.template.spec.containers[1]"
        f" (oauth2-proxy): image 'quay.io/oauth2-proxy/oauth2-proxy:v7.7.1' {NOT_PINNED}",
        "Deployment openshell-dev-build/openshell-gateway: spec.template.spec.containers[0]"
        f" (openshell-gateway): image 'localhost:5001/openshell/gateway:dev' {NOT_PINNED}",
    ]
    # Not production (its config, or none at all): tags pass.
    assert violations([pinned], rendered("local").recording) == []


@pytest.mark.parametrize(
    ("image", "pinned"),
    [
        (f"ghcr.io/a/b@{SANDBOX_109_DIGEST}", True),
        (f"ghcr.io/a/b:1@{SANDBOX_109_DIGEST}", True),
        (f"ghcr.io/a/b@{SANDBOX_109_DIGEST.upper()}", False),
        (f"ghcr.io/a/b@{SANDBOX_109_DIGEST[:-1]}", False),
        (f"ghcr.io/a/b@{SANDBOX_109_DIGEST}x", False),
        ("ghcr.io/a/b:sha256", False),
    ],
)
def test_is_pinned(image: str, pinned: bool) -> None:
    assert is_pinned(image) is pinned


@pytest.mark.parametrize(
    ("image", "prefix", "allowed"),
    [
        ("ghcr.io/nvidia/gw:1", "ghcr.io/", True),
        ("ghcr.io/nvidia/gw:1", "ghcr.io", True),
        ("ghcr.io.evil.example/nvidia/gw:1", "ghcr.io", False),
        ("ghcr.io/nvidia/gateway-evil:1", "ghcr.io/nvidia/gateway", False),
        ("ghcr.io/nvidia/gateway@sha256:00", "ghcr.io/nvidia/gateway", True),
        ("nginx:latest", "ghcr.io/", False),
    ],
)
def test_registry_prefixes_match_at_boundaries(image: str, prefix: str, allowed: bool) -> None:
    assert is_allowed(image, [prefix]) is allowed


# --- PostgreSQL ------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", ["roks-us-east-postgres", "team-a-database-db-owner"])
@pytest.mark.parametrize(
    ("sslmode", "got"),
    [("require", "'require'"), ('"require"', "'require'"), (None, "not set")],
)
def test_postgresql_provider_without_verify_full_fails(
    provider: str, sslmode: str | None, got: str
) -> None:
    # The cluster's admin provider and a tenant's owner provider alike.
    recording = broken("ibm")
    inputs = named(recording, provider).inputs
    inputs.pop("sslmode")
    if sslmode is not None:
        inputs["sslmode"] = sslmode
    assert messages("postgresql-admin-verify-full", recording, "ibm") == [
        f"PostgreSQL provider {provider}: sslmode is {got}; every PostgreSQL connection"
        " must use 'verify-full' (verify the server certificate and its host name)"
    ]


def test_json_encoded_verify_full_passes() -> None:
    recording = broken("ibm")
    named(recording, "roks-us-east-postgres").inputs["sslmode"] = '"verify-full"'
    named(recording, "team-a-database-db-owner").inputs["sslmode"] = '"verify-full"'
    assert messages("postgresql-admin-verify-full", recording, "ibm") == []


# --- plaintext credentials -------------------------------------------------------------------


def test_pem_private_key_in_a_config_map_fails() -> None:
    recording = broken("ibm")
    named(recording, "team-a-workload-config").inputs["data"]["tls.key"] = PEM_KEY
    assert messages("no-plaintext-credentials", recording, "ibm") == [
        f"{CONFIG_MAP}: data['tls.key'] contains a PEM private key block; keep it in a Secret"
    ]


def test_password_env_literal_fails_even_as_a_pulumi_secret() -> None:
    recording = broken("ibm")
    env = container(recording)["env"]
    env.append({"name": "DB_PASSWORD", "value": "hunter2"})
    env.append({"name": "API_TOKEN", "value": secret("t0k3n")})  # the analyzer unwraps it
    env.append({"name": "SA_TOKEN_TTL", "value": "3600"})
    assert messages("no-plaintext-credentials", recording, "ibm") == [
        f"{CONTAINER}: env[2] (DB_PASSWORD): value is a literal for a secret-like name;"
        " use valueFrom.secretKeyRef",
        f"{CONTAINER}: env[3] (API_TOKEN): value is a literal for a secret-like name;"
        " use valueFrom.secretKeyRef",
    ]


def test_credential_uri_in_env_and_config_fails_without_repeating_it() -> None:
    recording = broken("ibm")
    uri = "postgresql://gw_team_a:s3cr3t@db.example.com:5432/gw_team_a?sslmode=require"
    container(recording)["env"][0] = {"name": "OPENSHELL_DB_URL", "value": uri}
    data = named(recording, "team-a-workload-config").inputs["data"]
    data["gateway.toml"] += f'\n[extra]\ndatabase = "{uri}"\n'
    found = messages("no-plaintext-credentials", recording, "ibm")
    assert found == [
        f"{CONFIG_MAP}: data['gateway.toml'] contains a postgresql:// URI with embedded"
        " credentials; keep it in a Secret",
        f"{CONTAINER}: env[0] (OPENSHELL_DB_URL): value contains a postgresql:// URI with"
        " embedded credentials; use valueFrom.secretKeyRef",
    ]
    assert not any("s3cr3t" in m for m in found)


@pytest.mark.parametrize(
    ("name", "secret_like"),
    [
        ("DB_PASSWORD", True),
        ("PGPASSWORD", True),
        ("API_KEY", True),
        ("GITHUB_TOKEN", True),
        ("client-secret", True),
        ("OPENSHELL_GATEWAY_CREDENTIAL_KEY_ENCRYPTION_KEY", True),
        ("SA_TOKEN_TTL_SECS", False),
        ("TLS_KEY_FILE", False),
        ("KEYCLOAK_URL", False),
        ("LOG_LEVEL", False),
    ],
)
def test_secret_like_env_names(name: str, secret_like: bool) -> None:
    assert secret_like_name(name) is secret_like


# --- tenant default deny ---------------------------------------------------------------------

NO_DEFAULT_DENY = (
    "Namespace openshell-team-a: no default-deny ingress NetworkPolicy (spec.podSelector {},"
    " spec.policyTypes [Ingress], no spec.ingress rules) in this tenant namespace"
)


def test_namespace_without_default_deny_fails() -> None:
    recording = broken("ibm")
    del recording.resources[named(recording, "team-a-workload-netpol-default-deny-ingress").urn]
    found = violations([BY_NAME["tenant-default-deny-ingress"]], recording, stack_config("ibm"))
    assert [(v.urn, v.message) for v in found] == [
        (named(recording, "team-a-ns").urn, NO_DEFAULT_DENY)
    ]


def test_default_deny_that_lets_traffic_in_fails() -> None:
    recording = broken("ibm")
    policy = named(recording, "team-a-workload-netpol-default-deny-ingress")
    policy.outputs["spec"] = {**policy.outputs["spec"], "ingress": [{}]}  # allows everything
    assert messages("tenant-default-deny-ingress", recording, "ibm") == [NO_DEFAULT_DENY]


def test_default_deny_counts_only_on_its_own_cluster() -> None:
    recording = broken("aws")
    payments = named(recording, "payments-workload-netpol-default-deny-ingress")
    search = named(recording, "search-workload-netpol-default-deny-ingress")  # other cluster
    payments.provider = search.provider
    assert messages("tenant-default-deny-ingress", recording, "aws") == [
        NO_DEFAULT_DENY.replace("openshell-team-a", "openshell-payments")
    ]


# --- Routes ----------------------------------------------------------------------------------


def test_edge_route_fails() -> None:
    recording = broken("ibm")
    tls = named(recording, "team-a-exposure-route").inputs["spec"]["tls"]
    tls.update(termination="edge", insecureEdgeTerminationPolicy="Redirect")
    assert messages("route-passthrough-tls", recording, "ibm") == [
        "Route openshell-team-a/openshell-gateway: spec.tls.termination is 'edge'; only"
        " 'passthrough' is allowed (the gateway terminates TLS itself, with the tenant CA)",
        "Route openshell-team-a/openshell-gateway: spec.tls.insecureEdgeTerminationPolicy is"
        " 'Redirect'; must be 'None' (no plain-HTTP listener for a gRPC endpoint)",
    ]


def test_route_without_tls_fails() -> None:
    recording = broken("ibm")
    del named(recording, "team-a-exposure-route").inputs["spec"]["tls"]
    assert messages("route-passthrough-tls", recording, "ibm") == [
        "Route openshell-team-a/openshell-gateway: spec.tls.termination is not set; only"
        " 'passthrough' is allowed (the gateway terminates TLS itself, with the tenant CA)"
    ]


# --- server certificate SANs -----------------------------------------------------------------


def drop_san(recording: Recording, request: str, host: str) -> RecordedResource:
    csr = named(recording, request)
    sans = [san for san in csr.outputs["dnsNames"] if san != host]
    assert len(sans) == len(csr.outputs["dnsNames"]) - 1
    csr.inputs["dnsNames"] = csr.outputs["dnsNames"] = sans
    return csr


def test_route_host_missing_from_the_sans_fails() -> None:
    recording = broken("ibm")
    csr = drop_san(recording, "team-a-pki-server-csr", TEAM_A_HOST)
    found = violations([BY_NAME["server-cert-covers-host"]], recording, stack_config("ibm"))
    assert [(v.urn, v.message) for v in found] == [
        (
            csr.urn,
            f"Route openshell-team-a/openshell-gateway: spec.host '{TEAM_A_HOST}' is not among"
            " the dnsNames of the server certificate request team-a-pki-server-csr"
            " (openshell-gateway, openshell-gateway.openshell-team-a,"
            " openshell-gateway.openshell-team-a.svc,"
            " openshell-gateway.openshell-team-a.svc.cluster.local)",
        )
    ]


def test_grpcroute_hostname_missing_from_the_sans_fails() -> None:
    recording = broken("aws")
    host = "gw-openshell-search.usw2.openshell.example.com"
    drop_san(recording, "search-pki-server-csr", host)
    assert messages("server-cert-covers-host", recording, "aws") == [
        f"GRPCRoute openshell-search/openshell-gateway: spec.hostnames[0] '{host}' is not among"
        " the dnsNames of the server certificate request search-pki-server-csr"
        " (openshell-gateway, openshell-gateway.openshell-search,"
        " openshell-gateway.openshell-search.svc,"
        " openshell-gateway.openshell-search.svc.cluster.local)"
    ]


def test_exposed_gateway_without_a_server_certificate_request_fails() -> None:
    recording = broken("ibm")
    del recording.resources[named(recording, "team-a-pki-server-csr").urn]
    assert messages("server-cert-covers-host", recording, "ibm") == [
        "Route openshell-team-a/openshell-gateway: no server certificate request"
        " 'team-a-pki-server-csr' for the gateway 'team-a', so its certificate cannot be checked"
    ]


def test_gateway_label_stands_in_for_parentage() -> None:
    recording = broken("ibm")
    named(recording, "team-a-exposure-route").parent = None
    assert messages("server-cert-covers-host", recording, "ibm") == []
    drop_san(recording, "team-a-pki-server-csr", TEAM_A_HOST)
    assert len(messages("server-cert-covers-host", recording, "ibm")) == 1


@pytest.mark.parametrize(
    ("san", "host", "covered"),
    [
        ("gw.example.com", "GW.example.com", True),
        ("*.example.com", "gw.example.com", True),
        ("*.example.com", "a.gw.example.com", False),
        ("*.example.com", "example.com", False),
        ("gw.example.com", "gw.example.com.evil", False),
    ],
)
def test_san_matching(san: str, host: str, covered: bool) -> None:
    assert covers(san, host) is covered


# --- preview: unknown values -----------------------------------------------------------------


def test_unknown_values_outside_the_checked_fields_do_not_stop_a_policy() -> None:
    """In a preview the pod-template hash (built from certificates) is unknown."""
    recording = broken("ibm")
    deployment = named(recording, "team-a-workload-deploy")
    annotations = deployment.inputs["spec"]["template"]["metadata"]["annotations"]
    for key in annotations:
        annotations[key] = UNKNOWN_STRING_VALUE
    for policy in POLICIES:
        if not isinstance(policy, StackValidationPolicy):
            assert isinstance(policy, ResourceValidationPolicy), policy.name
            policy.validate(resource_args(recording, deployment), _unexpected)


def test_an_unknown_checked_value_is_left_to_the_analyzer() -> None:
    """The analyzer reports UnknownValueError as "can't run policy during preview"."""
    recording = broken("ibm")
    container(recording)["image"] = UNKNOWN_STRING_VALUE
    args = resource_args(recording, named(recording, "team-a-workload-deploy"))
    with pytest.raises(UnknownValueError):
        allowed_images.validate(args, _unexpected)


# --- the pack as the CLI starts it -----------------------------------------------------------


class _ServedError(Exception):
    """Raised instead of serving: the pack is built, its analyzer captured."""


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Run ``policy/__main__.py`` as ``pulumi preview --policy-pack policy`` does (runpy on the
    directory), capturing the analyzer servicer instead of starting its gRPC server."""
    captured: list[Any] = []

    def capture(servicer: Any, server: Any) -> None:
        captured.append(servicer)
        raise _ServedError

    monkeypatch.setattr(grpc, "server", lambda *args, **kwargs: None)
    monkeypatch.setattr(analyzer_pb2_grpc, "add_AnalyzerServicer_to_server", capture)
    with pytest.raises(_ServedError):
        runpy.run_path(str(POLICY_DIR), run_name="__main__")
    yield captured[0]
    for module in [m for m in sys.modules if m.split(".")[0] == "hypershell_policies"]:
        del sys.modules[module]


def test_main_builds_the_mandatory_pack_of_exactly_these_policies(served: Any) -> None:
    info = served.GetAnalyzerInfo(None, None)
    assert info.name == PACK_NAME == "hypershell-gateways"
    assert [p.name for p in info.policies] == [p.name for p in POLICIES]
    # Each policy once, each with the description a violation is printed with.
    assert len({p.name for p in POLICIES}) == len(POLICIES)
    assert all(p.description for p in info.policies)
    assert {p.enforcementLevel for p in info.policies} == {analyzer_pb2.MANDATORY}
    stack = {p.name for p in info.policies if p.policy_type == analyzer_pb2.POLICY_TYPE_STACK}
    assert stack == {
        "tenant-default-deny-ingress",
        "server-cert-covers-host",
        "exposed-gateway-has-issuer",
    }
    schema = {p.name: p.configSchema for p in info.policies if p.configSchema.properties}
    assert list(schema) == [
        "allowed-image-registries",
        "images-pinned-by-digest",
        "vault-address-https",
        "console-tls-only",
    ]


def _provider(recording: Recording, r: RecordedResource) -> Any:
    provider = recording.resources.get(r.provider or "")
    if provider is None:
        return None
    return analyzer_pb2.AnalyzerProviderResource(
        type=provider.type, properties=struct(provider.inputs), urn=provider.urn, name=provider.name
    )


def _analyze(served: Any, recording: Recording, r: RecordedResource) -> list[tuple[str, str]]:
    request = analyzer_pb2.AnalyzeRequest(
        type=r.type,
        properties=struct(r.inputs),
        urn=r.urn,
        name=r.name,
        options=analyzer_pb2.AnalyzerResourceOptions(parent=r.parent or ""),
        provider=_provider(recording, r),
    )
    return [(d.policyName, d.message) for d in served.Analyze(request, None).diagnostics]


def _analyze_stack(served: Any, recording: Recording) -> list[tuple[str, str, str]]:
    resources = [
        analyzer_pb2.AnalyzerResource(
            type=r.type,
            properties=struct(r.outputs),
            urn=r.urn,
            name=r.name,
            parent=r.parent or "",
            provider=_provider(recording, r),
        )
        for r in recording.resources.values()
    ]
    response = served.AnalyzeStack(analyzer_pb2.AnalyzeStackRequest(resources=resources), None)
    return [(d.policyName, d.urn, d.message) for d in response.diagnostics]


def test_served_pack_judges_ibm_with_its_config(served: Any) -> None:
    config = {
        name: analyzer_pb2.PolicyConfig(
            enforcementLevel=analyzer_pb2.MANDATORY, properties=struct(properties)
        )
        for name, properties in stack_config("ibm").items()
    }
    served.Configure(analyzer_pb2.ConfigureAnalyzerRequest(policyConfig=config), None)
    recording = broken("ibm")
    assert [d for r in recording.resources.values() for d in _analyze(served, recording, r)] == []
    assert _analyze_stack(served, recording) == []

    container(recording)["image"] = "ghcr.io/nvidia/openshell/gateway:0.0.109"
    assert _analyze(served, recording, named(recording, "team-a-workload-deploy")) == [
        (
            "allowed-image-registries",
            f"{allowed_images.description}\n{CONTAINER}: image"
            " 'ghcr.io/nvidia/openshell/gateway:0.0.109' is not from an allowed registry"
            f" (allowed: {INTERNAL})",
        ),
        (
            "images-pinned-by-digest",
            f"{BY_NAME['images-pinned-by-digest'].description}\n{CONTAINER}: image"
            " 'ghcr.io/nvidia/openshell/gateway:0.0.109' is not pinned by digest; a production"
            " stack runs images by digest only (@sha256: and 64 lowercase hex characters: bind a"
            " release, or pin the gateway's own image by digest)",
        ),
    ]
    del recording.resources[named(recording, "team-a-workload-netpol-default-deny-ingress").urn]
    description = BY_NAME["tenant-default-deny-ingress"].description
    assert _analyze_stack(served, recording) == [
        (
            "tenant-default-deny-ingress",
            named(recording, "team-a-ns").urn,
            f"{description}\n{NO_DEFAULT_DENY}",
        )
    ]


def test_stack_args_link_parents_like_the_analyzer() -> None:
    args = stack_args(rendered("ibm").recording)
    route = next(r for r in args.resources if r.name == "team-a-exposure-route")
    assert route.parent is not None and route.parent.name == "team-a-exposure"
    assert route.parent.parent is not None and route.parent.parent.name == "team-a"
    assert route.provider is not None and route.provider.name == "roks-us-east-k8s"


def test_policies_see_secrets_as_plain_values() -> None:
    recording = rendered("ibm").recording
    args = resource_args(recording, named(recording, "roks-us-east-postgres"))
    assert args.props["password"] == "offline-placeholder-for-secure-value"


# --- sign-in ---------------------------------------------------------------------------------


def test_public_client_without_pkce_full_scope_or_loopback_fails_on_every_count() -> None:
    recording = broken("ibm")
    client = named(recording, "team-a-identity-client").inputs
    client["pkceCodeChallengeMethod"] = "plain"
    client["fullScopeAllowed"] = True
    client["validRedirectUris"] = ["http://127.0.0.1:*", "https://evil.example.com/*"]
    assert messages("keycloak-public-client", recording, "ibm") == [
        "Keycloak client team-a-identity-client: pkceCodeChallengeMethod is 'plain'; a public"
        " client must use 'S256'",
        "Keycloak client team-a-identity-client: fullScopeAllowed must be false for a public"
        " client",
        "Keycloak client team-a-identity-client: redirect URI 'https://evil.example.com/*' is"
        " not a loopback address (http://127.0.0.1:*, http://localhost:*)",
    ]


def test_public_client_that_leaves_pkce_and_full_scope_to_the_provider_fails() -> None:
    # The provider's defaults are no PKCE and full scope on.
    recording = broken("local")
    client = named(recording, "dev-identity-client").inputs
    del client["pkceCodeChallengeMethod"], client["fullScopeAllowed"]
    assert messages("keycloak-public-client", recording, "local") == [
        "Keycloak client dev-identity-client: pkceCodeChallengeMethod is not set; a public"
        " client must use 'S256'",
        "Keycloak client dev-identity-client: fullScopeAllowed must be false for a public client",
    ]


@pytest.mark.parametrize(
    ("uri", "loopback"),
    [
        ("http://127.0.0.1:*", True),
        ("http://localhost:*", True),
        ("http://localhost:8400/callback", True),
        ("http://[::1]:*", True),
        ("https://localhost:*", False),  # the CLI listens in plain http on loopback
        ("http://127.0.0.1.evil.example.com:*", False),
        ("http://localhost.evil.example.com/", False),
        ("http://localhost:*/*", False),
        ("*", False),
    ],
)
def test_loopback_redirect_uris(uri: str, loopback: bool) -> None:
    assert is_loopback(uri) is loopback


def test_exposed_gateway_without_an_issuer_fails() -> None:
    recording = broken("ibm")
    config = named(recording, "team-a-workload-config")
    toml = config.outputs["data"]["gateway.toml"]
    start = toml.index("[openshell.gateway.oidc]")
    end = toml.index("[openshell.drivers.kubernetes]")
    config.outputs["data"] = {"gateway.toml": toml[:start] + toml[end:]}
    assert messages("exposed-gateway-has-issuer", recording, "ibm") == [
        "gateway 'team-a' is exposed (team-a-exposure-route) but its gateway.toml names no https"
        " OIDC issuer ([openshell.gateway.oidc] issuer): no person could sign in"
    ]


def test_an_unexposed_gateway_needs_no_issuer() -> None:
    # local's `offline` declares that no person signs in; it has no Route.
    recording = rendered("local").recording
    toml = named(recording, "offline-workload-config").inputs["data"]["gateway.toml"]
    assert "[openshell.gateway.oidc]" not in toml
    assert messages("exposed-gateway-has-issuer", recording, "local") == []


def test_the_packs_readme_lists_every_policy_once() -> None:
    """policy/README.md's table has one row per policy of the pack, of its kind."""
    text = (ROOT / "policy" / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([a-z-]+)` \| (resource|stack) \|", text, re.M)
    assert sorted(rows) == sorted(
        (p.name, "resource" if isinstance(p, ResourceValidationPolicy) else "stack")
        for p in POLICIES
    )

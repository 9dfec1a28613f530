"""The three committed stacks end to end: the facts an operator relies on."""

from __future__ import annotations

import collections
import json
from typing import Any

import pytest

from components import naming
from gatewayctl.engine.render import Rendered
from tests.helpers import k8s, kinds, one, raw, secret_paths
from tests.support import rendered

IBM_BASE = "hysh-ibm-01-4c28435107377e996c6eb39230b7bcf5-0000.us-east.containers.appdomain.cloud"
INTERNAL = "image-registry.openshift-image-registry.svc:5000/openshift/"


def plan(stack: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(rendered(stack).files["plan.json"])
    return document


def containers(r: Rendered) -> list[str]:
    images = []
    for res in r.recording.resources.values():
        if res.inputs.get("kind") == "Deployment":
            pod = res.inputs["spec"]["template"]["spec"]
            images += [
                c["image"] for c in pod.get("containers", []) + pod.get("initContainers", [])
            ]
    return images


# --- IBM ------------------------------------------------------------------------------------


def test_ibm_route_is_passthrough_on_the_tenant_slot() -> None:
    route = k8s(rendered("ibm").recording, "Route", "openshell-gateway", "openshell-team-a")
    assert route["spec"] == {
        "host": f"gw-openshell-team-a.{IBM_BASE}",
        "to": {"kind": "Service", "name": "openshell-gateway", "weight": 100},
        "port": {"targetPort": "grpc"},
        "tls": {"termination": "passthrough", "insecureEdgeTerminationPolicy": "None"},
        "wildcardPolicy": "None",
    }
    assert route["metadata"]["annotations"]["pulumi.com/waitFor"] == (
        'jsonpath={.status.ingress[0].conditions[?(@.type=="Admitted")].status}=True'
    )


def test_ibm_every_image_comes_from_the_internal_registry() -> None:
    r = rendered("ibm")
    images = containers(r)
    # Four gateways, and research's web console (dashboard and oauth2-proxy).
    assert len(images) == 6
    assert all(image.startswith(INTERNAL) for image in images)
    for gateway in plan("ibm")["gateways"]:
        assert all(ref.startswith(INTERNAL) for ref in gateway["images"].values()), gateway
        console = gateway["console"]
        refs = console["images"].values() if console is not None else ()
        assert all(ref.startswith(INTERNAL) for ref in refs), gateway
    canary = next(g for g in plan("ibm")["gateways"] if g["name"] == "canary")
    # The canary pins openshell-0.0.110; the mirror keeps its tag and digest.
    assert canary["images"]["gateway"] == (
        f"{INTERNAL}openshell-gateway:0.0.110"
        "@sha256:4f429aa894ffa01ef84be68a3c92e069ac1db6ab350c42ab28bac8704ff346b4"
    )


def test_ibm_sandboxes_get_the_privileged_scc_binding() -> None:
    binding = k8s(
        rendered("ibm").recording,
        "RoleBinding",
        "openshell-sandbox-privileged-scc",
        "openshell-team-a",
    )
    assert binding["roleRef"]["name"] == "system:openshift:scc:privileged"
    assert binding["subjects"] == [
        {
            "kind": "ServiceAccount",
            "name": "openshell-gateway-sandbox",
            "namespace": "openshell-team-a",
        }
    ]


def test_ibm_router_may_reach_grpc_only() -> None:
    policy = k8s(
        rendered("ibm").recording,
        "NetworkPolicy",
        "openshell-gateway-allow-router",
        "openshell-team-a",
    )
    assert policy["spec"]["ingress"] == [
        {
            "from": [
                {
                    "namespaceSelector": {
                        "matchLabels": {"kubernetes.io/metadata.name": "openshift-ingress"}
                    }
                },
                {
                    "namespaceSelector": {
                        "matchLabels": {"policy-group.network.openshift.io/ingress": ""}
                    }
                },
            ],
            "ports": [{"protocol": "TCP", "port": 8080}],
        }
    ]


def test_ibm_unexposed_gateway_has_no_route_and_no_address() -> None:
    gateways = {g["name"]: g for g in plan("ibm")["gateways"]}
    assert gateways["batch-jobs"]["address"] is None
    assert gateways["batch-jobs"]["hostname"] is None
    assert "Route/openshell-gateway" not in kinds(rendered("ibm").recording, "openshell-batch-jobs")
    assert gateways["research"]["address"] == "grpcs://openshell.research.example.org:443"


# --- AWS ------------------------------------------------------------------------------------


def test_aws_grpcroute_attaches_to_the_shared_gateway() -> None:
    route = k8s(rendered("aws").recording, "GRPCRoute", "openshell-gateway", "openshell-payments")
    assert route["spec"] == {
        "parentRefs": [
            {
                "name": "openshell-grpc-gateway",
                "namespace": "openshift-ingress",
                "sectionName": "grpc",
            }
        ],
        "hostnames": ["gw-openshell-payments.use1.openshell.example.com"],
        "rules": [{"backendRefs": [{"name": "openshell-gateway", "port": 8080}]}],
    }
    assert route["metadata"]["annotations"]["pulumi.com/waitFor"] == (
        'jsonpath={.status.parents[0].conditions[?(@.type=="Accepted")].status}=True'
    )


def test_aws_backend_tls_policy_validates_the_service_fqdn_with_the_tenant_ca() -> None:
    r = rendered("aws").recording
    policy = k8s(r, "BackendTLSPolicy", "openshell-gateway", "openshell-search")
    assert policy["spec"] == {
        "targetRefs": [{"group": "", "kind": "Service", "name": "openshell-gateway"}],
        "validation": {
            "caCertificateRefs": [
                {"group": "", "kind": "ConfigMap", "name": "openshell-backend-ca"}
            ],
            "hostname": "openshell-gateway.openshell-search.svc.cluster.local",
        },
    }
    ca = k8s(r, "ConfigMap", "openshell-backend-ca", "openshell-search")
    ca_cert = one(r, "tls:index/selfSignedCert:SelfSignedCert", "search-pki-ca")
    assert ca["data"] == {"ca.crt": ca_cert.outputs["certPem"]}


def test_aws_gateways_use_their_own_cluster_providers() -> None:
    r = rendered("aws").recording
    expected = {
        "payments": "rosa-us-east-1",
        "audit": "rosa-us-east-1",
        "search": "rosa-us-west-2",
        "ml-platform": "rosa-us-west-2",
    }
    for gateway, cluster in expected.items():
        ns = one(r, "kubernetes:core/v1:Namespace", f"{gateway}-ns")
        role = one(r, "postgresql:index/role:Role", f"{gateway}-database-db-role")
        assert ns.provider is not None and ns.provider.endswith(f"::{cluster}-k8s")
        assert role.provider is not None and role.provider.endswith(f"::{cluster}-postgres")
    per_cluster = collections.Counter(g["cluster"] for g in plan("aws")["gateways"])
    assert per_cluster == {"rosa-us-east-1": 2, "rosa-us-west-2": 2}


def test_aws_one_shared_cluster_role_per_cluster() -> None:
    roles = [
        r
        for r in rendered("aws").recording.resources.values()
        if r.inputs.get("kind") == "ClusterRole"
    ]
    assert sorted(r.name for r in roles) == [
        "rosa-us-east-1-node-reader",
        "rosa-us-west-2-node-reader",
    ]


def test_aws_node_reader_bindings_wait_for_their_own_clusters_role() -> None:
    # The binding's roleRef is the Cluster's output, not the role's name alone: the engine
    # creates the shared ClusterRole first.
    r = rendered("aws").recording
    bindings = r.of_type("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding")
    assert sorted(
        (b.name, [d.rsplit("::", 1)[1] for d in b.dependencies if d.endswith("-node-reader")])
        for b in bindings
    ) == [
        ("audit-workload-node-reader-crb", ["rosa-us-east-1-node-reader"]),
        ("ml-platform-workload-node-reader-crb", ["rosa-us-west-2-node-reader"]),
        ("payments-workload-node-reader-crb", ["rosa-us-east-1-node-reader"]),
        ("search-workload-node-reader-crb", ["rosa-us-west-2-node-reader"]),
    ]


# --- every stack ----------------------------------------------------------------------------


def test_server_sans_keep_service_names_and_add_the_external_host(any_stack: Rendered) -> None:
    for gateway in json.loads(any_stack.files["plan.json"])["gateways"]:
        csr = one(
            any_stack.recording,
            "tls:index/certRequest:CertRequest",
            f"{gateway['name']}-pki-server-csr",
        )
        expected = list(naming.service_names(gateway["namespace"]))
        if gateway["hostname"]:
            expected.append(gateway["hostname"])
        assert csr.inputs["dnsNames"] == expected


def test_db_credentials_uri_requires_ssl(any_stack: Rendered) -> None:
    for gateway in json.loads(any_stack.files["plan.json"])["gateways"]:
        secret = raw(
            any_stack.recording, "Secret", "openshell-gateway-db-credentials", gateway["namespace"]
        )
        data = secret.inputs["stringData"]["value"]  # the whole map is a secret
        ident = naming.postgres_identifier(gateway["name"])
        assert data["uri"].endswith(f"/{ident}?sslmode=require")
        assert data["uri"].startswith(f"postgresql://{ident}:")
        assert (data["dbname"], data["user"]) == (ident, ident)
        assert gateway["database"] == ident


def test_admin_provider_verifies_the_server(any_stack: Rendered) -> None:
    providers = [
        r for r in any_stack.recording.resources.values() if r.type == "pulumi:providers:postgresql"
    ]
    assert providers
    for provider in providers:
        assert provider.inputs["sslmode"] == "verify-full"
        assert secret_paths(provider.inputs) == ["password"]


def test_passwords_and_keys_are_secret_outputs(any_stack: Rendered) -> None:
    r = any_stack.recording
    for res in r.resources.values():
        if res.type == "tls:index/privateKey:PrivateKey":
            assert {"privateKeyPem", "privateKeyPemPkcs8"} <= {
                k for k in res.outputs if k in secret_paths(res.outputs)
            }
        if res.type == "random:index/randomPassword:RandomPassword":
            assert "result" in secret_paths(res.outputs)
        if res.type == "postgresql:index/role:Role":
            assert secret_paths(res.inputs) == ["password"]
        if res.inputs.get("kind") == "Secret":
            assert secret_paths(res.inputs) == ["stringData"], res.name


def test_no_duplicate_type_and_name(any_stack: Rendered) -> None:
    pairs = collections.Counter((r.type, r.name) for r in any_stack.recording.resources.values())
    assert [pair for pair, count in pairs.items() if count > 1] == []


def test_pods_are_restricted(any_stack: Rendered) -> None:
    deployments = [
        r
        for r in any_stack.recording.resources.values()
        if r.inputs.get("kind") == "Deployment"
        and r.inputs["metadata"]["name"] == "openshell-gateway"
    ]
    assert len(deployments) == len(json.loads(any_stack.files["plan.json"])["gateways"])
    # The web consoles' pods are restricted the same way (tests/test_console.py checks their
    # resources, upstream's).
    consoles = [
        r
        for r in any_stack.recording.resources.values()
        if r.inputs.get("kind") == "Deployment"
        and r.inputs["metadata"]["name"] == "openshell-console"
    ]
    assert len(consoles) == 1
    for deployment in deployments + consoles:
        pod = deployment.inputs["spec"]["template"]["spec"]
        expected = {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}
        if any_stack.prepared.loaded.name == "local":  # not OpenShift: upstream's fsGroup
            expected["fsGroup"] = 1001
        assert pod["securityContext"] == expected
        for container in pod["containers"]:
            assert container["securityContext"] == {
                "runAsNonRoot": True,
                "readOnlyRootFilesystem": True,
                "allowPrivilegeEscalation": False,
                "seccompProfile": {"type": "RuntimeDefault"},
                "capabilities": {"drop": ["ALL"]},
            }
            if deployment in deployments:
                assert container["resources"] == {
                    "requests": {"cpu": "100m", "memory": "256Mi"},
                    "limits": {"cpu": "500m", "memory": "512Mi"},
                }


def test_every_tenant_namespace_denies_ingress_by_default(any_stack: Rendered) -> None:
    for gateway in json.loads(any_stack.files["plan.json"])["gateways"]:
        deny = k8s(
            any_stack.recording,
            "NetworkPolicy",
            "openshell-default-deny-ingress",
            gateway["namespace"],
        )
        assert deny["spec"] == {"podSelector": {}, "policyTypes": ["Ingress"]}


@pytest.mark.parametrize(
    ("stack", "name", "retained"),
    [
        ("ibm", "team-a", True),
        ("ibm", "batch-jobs", False),
        ("aws", "audit", False),
        ("local", "dev", True),
    ],
)
def test_deletion_policy_decides_database_retention(stack: str, name: str, retained: bool) -> None:
    r = rendered(stack).recording
    assert (
        one(r, "postgresql:index/role:Role", f"{name}-database-db-role").retain_on_delete
        is retained
    )
    assert (
        one(r, "postgresql:index/database:Database", f"{name}-database-db").retain_on_delete
        is retained
    )

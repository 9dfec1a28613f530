"""The Gateway component in each ingress mode, through the shared recording mock."""

from __future__ import annotations

import tomllib
from dataclasses import replace
from typing import Any

import pulumi

from components.cluster import Cluster, ClusterArgs
from components.database_types import DatabaseEndpoint
from components.exposure_types import GrpcRouteExposure, NoExposure, RouteExposure, SharedGateway
from components.gateway import Gateway
from components.gateway_types import GatewayArgs, GatewayImages
from gatewayctl.engine.offline import Recording, is_secret, run_program
from tests.helpers import k8s, kinds, one, raw, secret_paths

NS = "openshell-acme"
HOST = "gw-openshell-acme.apps.example.com"


def route(host: str) -> RouteExposure:
    return RouteExposure(host=host, router_namespace="openshift-ingress")


BASE_ARGS = GatewayArgs(
    cluster="c1",
    namespace=NS,
    exposure=route(HOST),
    images=GatewayImages(
        gateway="reg.example.com/gw:1",
        supervisor="reg.example.com/sup:1",
        sandbox="reg.example.com/sb:1",
    ),
    database_name="gw_acme",
    database_host="db.example.com",
    database_port=5432,
    database_endpoint=DatabaseEndpoint(
        host="db-admin.example.com", port=5432, ssl_root_cert="certs/db-ca.pem"
    ),
    retain_database=True,
    openshift=True,
    node_reader_cluster_role="openshell-gateway-node-reader",
    metrics_namespace="openshift-user-workload-monitoring",
)
COMMON = [
    "ConfigMap/openshell-gateway-config",
    "Deployment/openshell-gateway",
    "NetworkPolicy/openshell-default-deny-ingress",
    "NetworkPolicy/openshell-gateway-allow-metrics",
    "NetworkPolicy/openshell-gateway-allow-sandbox-v2",
    "NetworkPolicy/openshell-gateway-sandbox-ssh",
    "NetworkPolicy/openshell-gateway-sandbox-ssh-v2",
    "Role/openshell-gateway-sandbox",
    "RoleBinding/openshell-gateway-sandbox",
    "RoleBinding/openshell-sandbox-privileged-scc",
    "Secret/openshell-client-tls",
    "Secret/openshell-gateway-credential-kek",
    "Secret/openshell-gateway-db-credentials",
    "Secret/openshell-gateway-jwt-keys",
    "Secret/openshell-server-tls",
    "Service/openshell-gateway",
    "ServiceAccount/openshell-gateway",
    "ServiceAccount/openshell-gateway-sandbox",
]


def build(args: GatewayArgs) -> tuple[Recording, dict[str, Any]]:
    def program() -> Any:
        cluster = Cluster(
            "c1",
            ClusterArgs(
                kubeconfig_context="ctx",
                kubeconfig=None,
                database_admin_host="db-admin.example.com",
                database_admin_port=5432,
                database_admin_user="admin",
                database_admin_password=pulumi.Output.secret("sentinel-admin-password"),
                database_ssl_root_cert=None,
            ),
        )
        gateway = Gateway(
            "acme",
            args,
            opts=pulumi.ResourceOptions(providers=[cluster.kubernetes, cluster.postgresql]),
        )
        return pulumi.Output.all(
            namespace=gateway.namespace,
            hostname=gateway.hostname,
            address=gateway.address,
            ca=gateway.ca_certificate,
            database=gateway.database_name,
        )

    return run_program(program, project="p", stack="s")


def test_route_mode() -> None:
    recording, outputs = build(BASE_ARGS)
    assert kinds(recording, NS) == sorted(
        [*COMMON, "Route/openshell-gateway", "NetworkPolicy/openshell-gateway-allow-router"]
    )
    assert k8s(recording, "Route", "openshell-gateway", NS)["spec"]["host"] == HOST
    assert outputs["address"] == f"grpcs://{HOST}:443"
    assert outputs["hostname"] == HOST
    assert outputs["namespace"] == NS
    assert outputs["database"] == "gw_acme"
    assert (
        outputs["ca"]
        == one(recording, "tls:index/selfSignedCert:SelfSignedCert", "acme-pki-ca").outputs[
            "certPem"
        ]
    )


def test_gateway_api_mode() -> None:
    shared = SharedGateway(name="shared-gw", namespace="gw-system", section_name="grpc")
    recording, outputs = build(
        replace(BASE_ARGS, exposure=GrpcRouteExposure(host=HOST, gateway=shared))
    )
    assert kinds(recording, NS) == sorted(
        [
            *COMMON,
            "GRPCRoute/openshell-gateway",
            "BackendTLSPolicy/openshell-gateway",
            "ConfigMap/openshell-backend-ca",
            "NetworkPolicy/openshell-gateway-allow-router",
        ]
    )
    route = k8s(recording, "GRPCRoute", "openshell-gateway", NS)
    assert route["spec"]["parentRefs"] == [
        {"name": "shared-gw", "namespace": "gw-system", "sectionName": "grpc"}
    ]
    assert route["spec"]["hostnames"] == [HOST]
    policy = k8s(recording, "NetworkPolicy", "openshell-gateway-allow-router", NS)
    assert policy["spec"]["ingress"][0]["from"] == [
        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "gw-system"}}}
    ]
    assert outputs["address"] == f"grpcs://{HOST}:443"


def test_none_mode_exposes_nothing_and_keeps_sans_internal() -> None:
    recording, outputs = build(replace(BASE_ARGS, exposure=NoExposure(), openshift=False))
    expected = [k for k in COMMON if k != "RoleBinding/openshell-sandbox-privileged-scc"]
    assert kinds(recording, NS) == sorted(expected)
    assert outputs["address"] is None and outputs["hostname"] is None
    csr = one(recording, "tls:index/certRequest:CertRequest", "acme-pki-server-csr")
    assert HOST not in csr.inputs["dnsNames"]


def test_exposure_disabled_in_route_mode() -> None:
    recording, outputs = build(replace(BASE_ARGS, exposure=NoExposure()))
    assert "Route/openshell-gateway" not in kinds(recording, NS)
    assert outputs["address"] is None


def test_children_carry_the_cluster_providers() -> None:
    recording, _ = build(BASE_ARGS)
    for res in recording.resources.values():
        if res.type.startswith("kubernetes:") and res.custom:
            assert res.provider is not None and res.provider.endswith("::c1-k8s"), res.name
        if res.type in {"postgresql:index/role:Role", "postgresql:index/database:Database"}:
            assert res.provider is not None and res.provider.endswith("::c1-postgres"), res.name
    grant = one(recording, "postgresql:index/grant:Grant", "acme-database-db-revoke-public")
    assert grant.provider is not None
    assert grant.provider == "urn:pulumi:s::p::pulumi:providers:postgresql::acme-database-db-owner"


def test_the_owner_provider_is_outside_the_gateway_subtree_with_its_old_urn_aliased() -> None:
    # `pulumi state move` of the Gateway moves every descendant and never a provider: the
    # owner's provider must not be a descendant (gatewayctl/deploy/move.py), and the alias
    # keeps the URN it had as the Database component's child, so no stack replaces it.
    recording, _ = build(BASE_ARGS)
    owner = one(recording, "pulumi:providers:postgresql", "acme-database-db-owner")
    assert owner.urn == "urn:pulumi:s::p::pulumi:providers:postgresql::acme-database-db-owner"
    assert owner.aliases == (
        "urn:pulumi:s::p::hypershell:gateway:Gateway$hypershell:gateway:Database"
        "$pulumi:providers:postgresql::acme-database-db-owner",
    )
    gateway = "urn:pulumi:s::p::hypershell:gateway:Gateway::acme"
    descendants = {gateway}
    for res in recording.resources.values():  # registration order: parents come first
        if res.parent in descendants:
            descendants.add(res.urn)
    assert owner.urn not in descendants
    assert {r.type for r in recording.resources.values() if r.urn in descendants} >= {
        "postgresql:index/grant:Grant",
        "postgresql:index/role:Role",
    }


def test_public_is_revoked_by_a_provider_that_logs_in_as_the_owner() -> None:
    recording, _ = build(BASE_ARGS)
    owner = one(recording, "pulumi:providers:postgresql", "acme-database-db-owner")
    password = one(
        recording, "random:index/randomPassword:RandomPassword", "acme-database-db-password"
    )
    assert owner.parent == "urn:pulumi:s::p::pulumi:pulumi:Stack::p-s"
    # The admin connection's endpoint and TLS, the tenant role's name and password, and the
    # tenant's own database (the role has CONNECT nowhere else).
    assert owner.inputs == {
        "host": "db-admin.example.com",
        "port": "5432",
        "sslmode": "verify-full",
        "sslrootcert": "certs/db-ca.pem",
        "username": "gw_acme",
        "password": password.outputs["result"],
        "database": "gw_acme",
        "superuser": "false",
        "connectTimeout": "180",
    }
    assert is_secret(owner.inputs["password"])
    # It is made from the password alone (username and database are the identifier), so an
    # adoption's targeted `up` can create it before the Role and Database are imported (the
    # engine creates every provider of a targeted `up`). The Grant names it as its provider,
    # which the engine treats as a dependency (pulumi/pulumi
    # pkg/resource/graph/dependency_graph.go, DependenciesOf), and depends on the Database,
    # which depends on the Role: the Grant runs after both and is deleted before them, by the
    # owner.
    assert [d.rsplit("::", 1)[1] for d in owner.dependencies] == ["acme-database-db-password"]
    grant = one(recording, "postgresql:index/grant:Grant", "acme-database-db-revoke-public")
    database = one(recording, "postgresql:index/database:Database", "acme-database-db")
    assert database.urn in grant.dependencies
    assert any(d.endswith("::acme-database-db-role") for d in database.dependencies)
    role = one(recording, "postgresql:index/role:Role", "acme-database-db-role")
    assert role.inputs["password"] == owner.inputs["password"]


def test_deployment_follows_upstream() -> None:
    recording, _ = build(BASE_ARGS)
    deployment = k8s(recording, "Deployment", "openshell-gateway", NS)
    spec = deployment["spec"]
    assert spec["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1},
    }
    pod = spec["template"]["spec"]
    container = pod["containers"][0]
    assert container["image"] == "reg.example.com/gw:1"
    assert container["args"] == [
        "--config",
        "/etc/openshell/gateway.toml",
        "--db-url",
        "$(OPENSHELL_DB_URL)",
    ]
    assert container["env"] == [
        {
            "name": "OPENSHELL_DB_URL",
            "valueFrom": {
                "secretKeyRef": {"name": "openshell-gateway-db-credentials", "key": "uri"}
            },
        },
        {
            "name": "OPENSHELL_GATEWAY_CREDENTIAL_KEY_ENCRYPTION_KEY",
            "valueFrom": {
                "secretKeyRef": {
                    "name": "openshell-gateway-credential-kek",
                    "key": "key-encryption-key",
                }
            },
        },
    ]
    assert [p["containerPort"] for p in container["ports"]] == [8080, 8081, 9090]
    assert container["startupProbe"] == {
        "httpGet": {"path": "/healthz", "port": "health"},
        "periodSeconds": 2,
        "timeoutSeconds": 1,
        "failureThreshold": 30,
    }
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "health"}
    assert {v["name"]: v for v in pod["volumes"]}["tls-cert"]["secret"] == {
        "secretName": "openshell-server-tls",
        "defaultMode": 288,
    }
    assert pod["serviceAccountName"] == "openshell-gateway"


def config_hash(args: GatewayArgs) -> str:
    recording, _ = build(args)
    template = k8s(recording, "Deployment", "openshell-gateway", NS)["spec"]["template"]
    return str(template["metadata"]["annotations"]["hypershell.redhat.io/config-hash"])


def test_pod_template_hash_changes_with_config_and_certificates() -> None:
    base = config_hash(BASE_ARGS)
    assert len(base) == 64
    assert config_hash(BASE_ARGS) == base
    assert (
        config_hash(
            replace(BASE_ARGS, images=replace(BASE_ARGS.images, supervisor="reg.example.com/sup:2"))
        )
        != base
    )
    # A new host changes the server certificate's SANs and gateway.toml's server_sans.
    assert config_hash(replace(BASE_ARGS, exposure=route("vanity.example.org"))) != base
    # The credentials Secret's URI changes with the database endpoint: pods read it at start.
    assert config_hash(replace(BASE_ARGS, database_host="db2.example.com")) != base
    assert config_hash(replace(BASE_ARGS, database_port=6432)) != base


def test_pod_template_hash_is_reviewable_though_it_covers_the_credentials() -> None:
    recording, _ = build(BASE_ARGS)
    deployment = raw(recording, "Deployment", "openshell-gateway", NS)
    assert secret_paths(deployment.inputs) == []
    annotations = deployment.inputs["spec"]["template"]["metadata"]["annotations"]
    assert len(annotations["hypershell.redhat.io/config-hash"]) == 64


def test_kek_secret_is_never_updated_once_created() -> None:
    recording, _ = build(BASE_ARGS)
    kek = raw(recording, "Secret", "openshell-gateway-credential-kek", NS)
    assert kek.ignore_changes == ("data", "stringData")
    others = {
        r.name: r.ignore_changes
        for r in recording.resources.values()
        if r.ignore_changes and r is not kek
    }
    # and the Service's API-assigned cluster IP (an adopted Service keeps its imported one)
    assert others == {"acme-workload-svc": ("spec.clusterIP", "spec.clusterIPs")}


def test_shared_node_reader_cluster_role_is_never_deleted() -> None:
    recording, _ = build(BASE_ARGS)
    role = raw(recording, "ClusterRole", "openshell-gateway-node-reader")
    assert role.retain_on_delete is True


def test_gateway_toml_is_generated_from_data() -> None:
    recording, _ = build(replace(BASE_ARGS, exposure=route('evil"host')))
    toml = k8s(recording, "ConfigMap", "openshell-gateway-config", NS)["data"]["gateway.toml"]
    config = tomllib.loads(toml)
    gateway = config["openshell"]["gateway"]
    assert gateway["server_sans"][-1] == 'evil"host'  # escaped by the writer, parsed back intact
    assert gateway["sandbox_namespace"] == NS
    assert gateway["default_image"] == "reg.example.com/sb:1"
    assert gateway["supervisor_image"] == "reg.example.com/sup:1"
    assert config["openshell"]["drivers"]["kubernetes"]["grpc_endpoint"] == (
        f"https://openshell-gateway.{NS}.svc.cluster.local:8080"
    )
    assert "oidc" not in gateway


def test_database_is_retained_or_deleted_per_policy() -> None:
    for retain in (True, False):
        recording, _ = build(replace(BASE_ARGS, retain_database=retain))
        assert (
            one(recording, "postgresql:index/role:Role", "acme-database-db-role").retain_on_delete
            is retain
        )
        assert (
            one(
                recording, "postgresql:index/database:Database", "acme-database-db"
            ).retain_on_delete
            is retain
        )
        grant = one(recording, "postgresql:index/grant:Grant", "acme-database-db-revoke-public")
        assert grant.inputs == {
            "database": "gw_acme",
            "objectType": "database",
            "privileges": [],
            "role": "public",
        }
        assert grant.retain_on_delete is False
        # Deleted with every gateway: it outlives its Grant, and the Role and Database outlive it.
        owner = one(recording, "pulumi:providers:postgresql", "acme-database-db-owner")
        assert owner.retain_on_delete is False


def test_cluster_role_binding_targets_the_shared_role() -> None:
    recording, _ = build(BASE_ARGS)
    binding = k8s(recording, "ClusterRoleBinding", f"openshell-gateway-node-reader-{NS}")
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "openshell-gateway-node-reader",
    }
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "openshell-gateway", "namespace": NS}
    ]

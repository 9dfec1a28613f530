"""Resolution of one declaration (``gatewayctl.resolve.per_gateway``): its namespace, host, address,
images and defaults; the host rules inside its cluster's base domain and listener, the images
through the registry mirrors, the database and namespace names the stack config reserves. Each
test builds a small project into ``tmp_path`` with ``tests.builders`` (one OpenShift cluster in
route mode with a base domain, or two such clusters) and states only what differs from it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from components import images
from components.database_types import DatabaseEndpoint
from components.exposure_types import GrpcRouteExposure, NoExposure, RouteExposure, SharedGateway
from components.gateway_types import GatewayArgs, GatewayImages
from components.ingress import IngressMode
from gatewayctl.resolve.resolved import ResolvedGateway
from tests.builders import (
    BASE_DOMAIN,
    CONFIG_FILE,
    DECLARATIONS,
    DROP,
    EAST_DOMAIN,
    GATEWAY_API,
    PREFIX,
    STACK,
    WEST_DOMAIN,
    cluster,
    one_cluster,
    two_clusters,
    write_gateway,
    write_stack,
)
from tests.helpers import load, load_problems, only_gateway, where

# --- a valid gateway ------------------------------------------------------------------------


def test_valid_gateway_resolves_namespace_host_address_and_defaults(tmp_path: Path) -> None:
    write_stack(tmp_path)
    write_gateway(tmp_path, "team-a")

    loaded = load(tmp_path)

    assert loaded.name == STACK
    assert loaded.config_path == CONFIG_FILE
    assert loaded.gateways == (
        ResolvedGateway(
            name="team-a",
            source=f"{DECLARATIONS}/team-a.yaml",
            adopted=False,
            ingress_mode=IngressMode.ROUTE,
            args=GatewayArgs(
                cluster="c1",
                namespace="openshell-team-a",
                exposure=RouteExposure(
                    host=f"gw-openshell-team-a.{BASE_DOMAIN}", router_namespace="openshift-ingress"
                ),
                images=GatewayImages(
                    gateway=images.DEFAULT_GATEWAY_IMAGE,
                    supervisor=images.DEFAULT_SUPERVISOR_IMAGE,
                    sandbox=images.DEFAULT_SANDBOX_IMAGE,
                ),
                database_name="gw_team_a",
                database_host="postgres.db.svc.cluster.local",
                database_port=5432,
                database_endpoint=DatabaseEndpoint(
                    host="db.example.com", port=5432, ssl_root_cert=None
                ),
                retain_database=True,
                openshift=True,
                metrics_namespace=None,
            ),
        ),
    )
    assert loaded.gateways[0].address == f"grpcs://gw-openshell-team-a.{BASE_DOMAIN}:443"


def test_spec_values_are_carried_through(tmp_path: Path) -> None:
    write_stack(tmp_path)
    write_gateway(
        tmp_path,
        "team-a",
        {"namespace": "legacy-team-a", "replicas": 3, "deletionPolicy": "Delete"},
    )

    gateway = only_gateway(tmp_path)

    assert gateway.namespace == "legacy-team-a"
    assert gateway.hostname == f"gw-legacy-team-a.{BASE_DOMAIN}"
    assert gateway.args.settings.replicas == 3
    assert gateway.args.retain_database is False


@pytest.mark.parametrize(("policy", "retain"), [("Retain", True), ("Delete", False)])
def test_retain_database_follows_deletion_policy(tmp_path: Path, policy: str, retain: bool) -> None:
    write_stack(tmp_path)
    write_gateway(tmp_path, "team-a", {"deletionPolicy": policy})

    assert only_gateway(tmp_path).args.retain_database is retain


def test_deletion_policy_must_be_retain_or_delete(tmp_path: Path) -> None:
    write_stack(tmp_path)
    source = write_gateway(tmp_path, "team-a", {"deletionPolicy": "delete"})

    assert load_problems(tmp_path) == [
        (source, "spec.deletionPolicy", "Input should be 'Retain' or 'Delete'")
    ]


def test_longest_allowed_name_fills_the_host_label_exactly(tmp_path: Path) -> None:
    name = "a" * 50
    write_stack(tmp_path)
    write_gateway(tmp_path, name)

    gateway = only_gateway(tmp_path)

    label = gateway.hostname.split(".")[0] if gateway.hostname else ""
    assert gateway.namespace == f"openshell-{name}"
    assert label == f"gw-openshell-{name}"
    assert len(label) == 63


def test_adoption_names_the_existing_namespace_and_database(tmp_path: Path) -> None:
    write_stack(tmp_path)
    write_gateway(
        tmp_path,
        "team-a",
        {
            "namespace": "openshell-b5a1cd34b5f99d11",
            "databaseName": "gw_0ujtsycgvstl8pauadqwysmnlov",
        },
    )
    gateway = only_gateway(tmp_path)
    assert (gateway.namespace, gateway.database_name, gateway.adopted) == (
        "openshell-b5a1cd34b5f99d11",
        "gw_0ujtsycgvstl8pauadqwysmnlov",
        True,
    )
    assert gateway.hostname == f"gw-openshell-b5a1cd34b5f99d11.{BASE_DOMAIN}"


# --- images ---------------------------------------------------------------------------------


def test_images_default_to_the_built_in_references(tmp_path: Path) -> None:
    write_stack(tmp_path)
    write_gateway(tmp_path, "team-a")

    resolved = only_gateway(tmp_path).args.images

    assert (resolved.gateway, resolved.supervisor, resolved.sandbox) == (
        images.DEFAULT_GATEWAY_IMAGE,
        images.DEFAULT_SUPERVISOR_IMAGE,
        images.DEFAULT_SANDBOX_IMAGE,
    )


def test_stack_image_defaults_override_the_built_ins(tmp_path: Path) -> None:
    write_stack(
        tmp_path,
        stack_images={
            "gateway": "quay.io/acme/gateway:2.0",
            "sandbox": "quay.io/acme/sandbox:2.0",
        },
    )
    write_gateway(tmp_path, "team-a")

    resolved = only_gateway(tmp_path).args.images

    assert (resolved.gateway, resolved.supervisor, resolved.sandbox) == (
        "quay.io/acme/gateway:2.0",
        images.DEFAULT_SUPERVISOR_IMAGE,
        "quay.io/acme/sandbox:2.0",
    )


def test_per_gateway_image_wins_over_the_stack_default(tmp_path: Path) -> None:
    write_stack(
        tmp_path,
        stack_images={"gateway": "quay.io/acme/gateway:2.0", "supervisor": "quay.io/acme/sup:2"},
    )
    write_gateway(
        tmp_path, "canary", {"images": {"gateway": "localhost:5001/openshell/gateway:dev"}}
    )
    write_gateway(tmp_path, "stable")

    canary, stable = load(tmp_path).gateways

    assert (canary.args.images.gateway, canary.args.images.supervisor) == (
        "localhost:5001/openshell/gateway:dev",
        "quay.io/acme/sup:2",
    )
    assert stable.args.images.gateway == "quay.io/acme/gateway:2.0"


def test_registry_mirrors_rewrite_with_the_longest_matching_prefix(tmp_path: Path) -> None:
    mirrors = {
        "ghcr.io/nvidia": "mirror.internal:5000/nv",
        "ghcr.io/nvidia/openshell": "mirror.internal:5000/openshell",
    }
    write_stack(tmp_path, clusters=one_cluster(registryMirrors=mirrors))
    digest = "sha256:" + "ab" * 32
    write_gateway(
        tmp_path,
        "team-a",
        {"images": {"supervisor": f"ghcr.io/nvidia/openshell/supervisor@{digest}"}},
    )

    resolved = only_gateway(tmp_path).args.images

    # Longest prefix wins; the tag or digest is kept; prefixes match on "/" boundaries only, so
    # "ghcr.io/nvidia/openshell" does not match "ghcr.io/nvidia/openshell-community".
    assert resolved.gateway == "mirror.internal:5000/openshell/gateway:0.0.109"
    assert resolved.supervisor == f"mirror.internal:5000/openshell/supervisor@{digest}"
    assert resolved.sandbox == "mirror.internal:5000/nv/openshell-community/sandboxes/base:latest"


def test_registry_mirrors_apply_to_per_gateway_images_too(tmp_path: Path) -> None:
    mirrors = {"quay.io/acme": "registry.local/acme"}
    write_stack(tmp_path, clusters=one_cluster(registryMirrors=mirrors))
    write_gateway(tmp_path, "team-a", {"images": {"gateway": "quay.io/acme/gateway:7"}})

    assert only_gateway(tmp_path).args.images.gateway == "registry.local/acme/gateway:7"


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        (
            "ghcr.io/acme/gateway :1",
            "image reference 'ghcr.io/acme/gateway :1' contains whitespace",
        ),
        (
            "ghcr.io/acme/gateway:1;reboot",
            "image reference 'ghcr.io/acme/gateway:1;reboot' contains shell metacharacters: ';'",
        ),
        (
            "ghcr.io/Acme/Gateway:1",
            "image reference 'ghcr.io/Acme/Gateway:1' is not"
            " [registry[:port]/]repository[:tag][@digest] with a lowercase repository path",
        ),
    ],
)
def test_bad_per_gateway_image_is_a_problem_at_its_field(
    tmp_path: Path, reference: str, message: str
) -> None:
    write_stack(tmp_path)
    source = write_gateway(tmp_path, "team-a", {"images": {"gateway": reference}})

    assert load_problems(tmp_path) == [(source, "spec.images.gateway", message)]


def test_bad_stack_default_image_is_a_problem_in_the_stack_file(tmp_path: Path) -> None:
    write_stack(tmp_path, stack_images={"supervisor": "ghcr.io/acme/sup:1 && true"})

    assert load_problems(tmp_path) == [
        (
            CONFIG_FILE,
            f"{PREFIX}images.supervisor",
            "image reference 'ghcr.io/acme/sup:1 && true' contains whitespace",
        )
    ]


def test_sandbox_image_cannot_be_overridden_per_gateway(tmp_path: Path) -> None:
    write_stack(tmp_path)
    source = write_gateway(tmp_path, "team-a", {"images": {"sandbox": "quay.io/acme/sb:1"}})

    assert load_problems(tmp_path) == [(source, "spec.images.sandbox", "unknown field")]


# --- hostnames ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cluster_changes", "mode"),
    [({}, IngressMode.ROUTE), (GATEWAY_API, IngressMode.GATEWAY_API)],
    ids=["route", "gateway-api"],
)
def test_hijack_guard_refuses_another_tenants_slot(
    tmp_path: Path, cluster_changes: dict[str, Any], mode: IngressMode
) -> None:
    write_stack(tmp_path, clusters=one_cluster(**cluster_changes))
    write_gateway(tmp_path, "victim")
    thief = write_gateway(
        tmp_path, "thief", {"exposure": {"host": f"gw-openshell-victim.{BASE_DOMAIN}"}}
    )

    assert load_problems(tmp_path) == [
        (
            thief,
            "spec.exposure.host",
            f"host 'gw-openshell-victim.{BASE_DOMAIN}' is under the base domain"
            f" '{BASE_DOMAIN}' but is not this gateway's own slot"
            f" 'gw-openshell-thief.{BASE_DOMAIN}'; a tenant may only use its own slot there",
        )
    ]


@pytest.mark.parametrize(
    "host",
    [
        BASE_DOMAIN,
        f"www.{BASE_DOMAIN}",
        f"x.gw-openshell-team-a.{BASE_DOMAIN}",
        f"gw-openshell-team-b.{BASE_DOMAIN}",
    ],
)
def test_hijack_guard_covers_the_whole_base_domain(tmp_path: Path, host: str) -> None:
    write_stack(tmp_path, clusters=one_cluster(**GATEWAY_API))
    source = write_gateway(tmp_path, "team-a", {"exposure": {"host": host}})

    assert where(load_problems(tmp_path)) == [(source, "spec.exposure.host")]


def test_explicit_host_equal_to_its_own_slot_passes(tmp_path: Path) -> None:
    write_stack(tmp_path, clusters=one_cluster(**GATEWAY_API))
    write_gateway(tmp_path, "team-a", {"exposure": {"host": f"gw-openshell-team-a.{BASE_DOMAIN}"}})

    gateway = only_gateway(tmp_path)

    assert (gateway.ingress_mode, gateway.hostname) == (
        IngressMode.GATEWAY_API,
        f"gw-openshell-team-a.{BASE_DOMAIN}",
    )


def test_vanity_host_outside_the_base_domain_passes_in_route_mode(tmp_path: Path) -> None:
    write_stack(tmp_path)
    # Ends with the base domain's text but is not under it.
    write_gateway(tmp_path, "team-a", {"exposure": {"host": "sandboxes.notapps.example.com"}})

    gateway = only_gateway(tmp_path)

    assert gateway.hostname == "sandboxes.notapps.example.com"
    assert gateway.address == "grpcs://sandboxes.notapps.example.com:443"


def test_vanity_host_is_a_problem_in_gateway_api_mode(tmp_path: Path) -> None:
    # TLS ends at the shared Gateway's listener, whose certificate is *.<baseDomain>.
    write_stack(tmp_path, clusters=one_cluster(**GATEWAY_API))
    source = write_gateway(
        tmp_path, "team-a", {"exposure": {"host": "sandboxes.notapps.example.com"}}
    )
    # Not exposed: the host is still checked as a hostname, but no listener serves it.
    write_gateway(
        tmp_path,
        "internal",
        {"exposure": {"enabled": False, "host": "internal.notapps.example.com"}},
    )

    assert load_problems(tmp_path) == [
        (
            source,
            "spec.exposure.host",
            "host 'sandboxes.notapps.example.com' is outside the base domain"
            f" '{BASE_DOMAIN}': in gateway-api mode the shared Gateway's listener serves only"
            f" *.{BASE_DOMAIN}; leave the host unset or use a cluster in route mode for a"
            " vanity host",
        )
    ]


@pytest.mark.parametrize(
    ("host", "message"),
    [
        (
            "Sandboxes.example.org",
            "host 'Sandboxes.example.org' is not a lowercase RFC 1123 DNS name"
            " (labels of a-z, 0-9 and inner '-', separated by single dots)",
        ),
        ("", "host must not be empty"),
        (
            "x" * 64 + ".example.org",
            f"host '{'x' * 64}.example.org': label '{'x' * 64}' is 64 characters; at most 63",
        ),
    ],
    ids=["uppercase", "empty", "long-label"],
)
def test_bad_explicit_host(tmp_path: Path, host: str, message: str) -> None:
    write_stack(tmp_path)
    source = write_gateway(tmp_path, "team-a", {"exposure": {"host": host}})

    assert load_problems(tmp_path) == [(source, "spec.exposure.host", message)]


@pytest.mark.parametrize("cluster_changes", [{}, GATEWAY_API], ids=["route", "gateway-api"])
def test_exposure_without_base_domain_or_host_is_a_problem(
    tmp_path: Path, cluster_changes: dict[str, Any]
) -> None:
    write_stack(tmp_path, clusters=one_cluster(baseDomain=DROP, **cluster_changes))
    source = write_gateway(tmp_path, "team-a")
    write_gateway(tmp_path, "internal", {"exposure": {"enabled": False}})
    write_gateway(tmp_path, "vanity", {"exposure": {"host": "vanity.example.org"}})

    assert load_problems(tmp_path) == [
        (
            source,
            "spec.exposure.host",
            "exposure is enabled but there is no host: set spec.exposure.host or the"
            " cluster's baseDomain",
        )
    ]


def test_exposure_disabled_gives_no_hostname_or_address(tmp_path: Path) -> None:
    write_stack(tmp_path)
    write_gateway(tmp_path, "team-a", {"exposure": {"enabled": False}})

    gateway = only_gateway(tmp_path)

    assert (gateway.ingress_mode, gateway.hostname, gateway.address) == (
        IngressMode.ROUTE,
        None,
        None,
    )


@pytest.mark.parametrize("base_domain", [BASE_DOMAIN, DROP], ids=["base-domain", "no-base-domain"])
def test_none_mode_cluster_gives_no_hostname_or_address(tmp_path: Path, base_domain: Any) -> None:
    # auto with no declared capabilities resolves to none (the local kind stack).
    kind = cluster(capabilities=DROP, ingress={"mode": "auto"}, baseDomain=base_domain)
    write_stack(tmp_path, clusters={"kind": kind})
    write_gateway(tmp_path, "dev")
    write_gateway(tmp_path, "vanity", {"exposure": {"host": "vanity.example.org"}})

    loaded = load(tmp_path)

    assert loaded.cluster("kind").ingress_mode is IngressMode.NONE
    assert [(g.name, g.ingress_mode, g.hostname, g.address) for g in loaded.gateways] == [
        ("dev", IngressMode.NONE, None, None),
        ("vanity", IngressMode.NONE, None, None),
    ]


SHARED_GATEWAY = {"name": "shared-gw", "namespace": "gw-system", "sectionName": "grpc-tls"}


ROUTE_CLUSTER = cluster(ingress={"routerNamespace": "router-shard"})


GATEWAY_API_CLUSTER = cluster(
    capabilities={"gatewayApi": True}, ingress={"mode": "gateway-api", "gateway": SHARED_GATEWAY}
)


NONE_CLUSTER = cluster(ingress={"mode": "none", "gateway": SHARED_GATEWAY})


OWN_HOST = f"gw-openshell-team-a.{BASE_DOMAIN}"


@pytest.mark.parametrize(
    ("cluster_config", "exposure", "expected"),
    [
        (ROUTE_CLUSTER, {}, RouteExposure(host=OWN_HOST, router_namespace="router-shard")),
        (
            GATEWAY_API_CLUSTER,
            {},
            GrpcRouteExposure(
                host=OWN_HOST,
                gateway=SharedGateway(
                    name="shared-gw", namespace="gw-system", section_name="grpc-tls"
                ),
            ),
        ),
        (ROUTE_CLUSTER, {"enabled": False}, NoExposure()),
        (GATEWAY_API_CLUSTER, {"enabled": False}, NoExposure()),
        (NONE_CLUSTER, {}, NoExposure()),
        (NONE_CLUSTER, {"host": "vanity.example.org"}, NoExposure()),
    ],
    ids=["route", "gateway-api", "route-disabled", "gateway-api-disabled", "none", "none-host"],
)
def test_exposure_is_decided_at_resolution(
    tmp_path: Path, cluster_config: dict[str, Any], exposure: dict[str, Any], expected: object
) -> None:
    write_stack(tmp_path, clusters={"c1": cluster_config})
    write_gateway(tmp_path, "team-a", {"exposure": exposure} if exposure else None)

    assert only_gateway(tmp_path).args.exposure == expected


def test_host_under_another_clusters_base_domain_is_refused(tmp_path: Path) -> None:
    write_stack(tmp_path, clusters=two_clusters())
    source = write_gateway(
        tmp_path, "t1", {"cluster": "west", "exposure": {"host": f"gw-openshell-x.{EAST_DOMAIN}"}}
    )
    assert load_problems(tmp_path) == [
        (
            source,
            "spec.exposure.host",
            f"host 'gw-openshell-x.{EAST_DOMAIN}' is under the base domain '{EAST_DOMAIN}' of"
            " cluster 'east'; a gateway on 'west' may not use it",
        )
    ]


def test_explicit_host_is_checked_even_when_exposure_is_disabled(tmp_path: Path) -> None:
    write_stack(tmp_path)
    source = write_gateway(
        tmp_path, "t1", {"exposure": {"enabled": False, "host": f"gw-openshell-t2.{BASE_DOMAIN}"}}
    )
    (problem,) = load_problems(tmp_path)
    assert problem[:2] == (source, "spec.exposure.host")
    assert "is not this gateway's own slot" in problem[2]


# --- database names -------------------------------------------------------------------------


OWN_DATABASE = "a gateway needs a role and database of its own"


@pytest.mark.parametrize(
    ("database", "message"),
    [
        ("postgres", f"'postgres' is a PostgreSQL system database; {OWN_DATABASE}"),
        ("template0", f"'template0' is a PostgreSQL system database; {OWN_DATABASE}"),
        ("template1", f"'template1' is a PostgreSQL system database; {OWN_DATABASE}"),
        (
            "pg_monitor",
            "'pg_monitor' starts with 'pg_', which PostgreSQL reserves for its system roles;"
            f" {OWN_DATABASE}",
        ),
        (
            "pg_",
            "'pg_' starts with 'pg_', which PostgreSQL reserves for its system roles;"
            f" {OWN_DATABASE}",
        ),
    ],
)
def test_system_database_names_are_refused(tmp_path: Path, database: str, message: str) -> None:
    write_stack(tmp_path)
    source = write_gateway(
        tmp_path, "team-a", {"databaseName": database, "deletionPolicy": "Delete"}
    )

    assert load_problems(tmp_path) == [(source, "spec.databaseName", message)]


@pytest.mark.parametrize("database", ["postgres_app", "gw_postgres", "template2", "apg_x", "pgx"])
def test_names_that_only_resemble_system_databases_pass(tmp_path: Path, database: str) -> None:
    write_stack(tmp_path)
    write_gateway(tmp_path, "team-a", {"databaseName": database})

    assert only_gateway(tmp_path).database_name == database


def admin_role_message(value: str, cluster_name: str) -> str:
    return (
        f"{value} is the database server's admin user (database.adminUser of cluster"
        f" {cluster_name!r}): the gateway would take over that role (reset its password) and,"
        f" with deletionPolicy Delete, drop it; {OWN_DATABASE}"
    )


@pytest.mark.parametrize("policy", ["Retain", "Delete"])
def test_database_name_equal_to_the_admin_user_is_refused(tmp_path: Path, policy: str) -> None:
    write_stack(tmp_path, clusters=one_cluster(database={"adminUser": "hypershell_admin"}))
    source = write_gateway(
        tmp_path, "team-a", {"databaseName": "hypershell_admin", "deletionPolicy": policy}
    )

    assert load_problems(tmp_path) == [
        (source, "spec.databaseName", admin_role_message("'hypershell_admin'", "c1"))
    ]


def test_default_database_name_equal_to_the_admin_user_is_refused(tmp_path: Path) -> None:
    write_stack(tmp_path, clusters=one_cluster(database={"adminUser": "gw_team_a"}))
    source = write_gateway(tmp_path, "team-a")
    write_gateway(tmp_path, "team-b")

    assert load_problems(tmp_path) == [
        (
            source,
            "spec.databaseName",
            admin_role_message("the default database name 'gw_team_a'", "c1"),
        )
    ]


def test_admin_user_of_another_cluster_on_the_same_server_is_refused(tmp_path: Path) -> None:
    shared = {"adminHost": "shared-pg.example.com"}
    clusters = {
        "east": cluster(baseDomain=EAST_DOMAIN, database={**shared, "adminUser": "east_admin"}),
        "west": cluster(baseDomain=WEST_DOMAIN, database={**shared, "adminUser": "west_admin"}),
        "north": cluster(baseDomain="north.example.com", database={"adminUser": "north_admin"}),
    }
    write_stack(tmp_path, clusters=clusters)
    source = write_gateway(tmp_path, "a", {"cluster": "west", "databaseName": "east_admin"})
    # Another server: its admin role is not on this gateway's server.
    write_gateway(tmp_path, "b", {"cluster": "west", "databaseName": "north_admin"})

    assert load_problems(tmp_path) == [
        (source, "spec.databaseName", admin_role_message("'east_admin'", "east"))
    ]


# --- reserved namespaces --------------------------------------------------------------------


@pytest.mark.parametrize("namespace", ["default", "kube-system", "openshift", "openshift-ingress"])
def test_system_namespaces_are_refused(tmp_path: Path, namespace: str) -> None:
    write_stack(tmp_path)
    source = write_gateway(tmp_path, "team-a", {"namespace": namespace})
    assert load_problems(tmp_path) == [
        (source, "spec.namespace", f"{namespace!r} is a system namespace; a gateway needs its own")
    ]


def namespace_message(value: str, what: str, field: str, cluster_name: str = "c1") -> str:
    return f"{value} is {what} of cluster {cluster_name!r} ({field}); a gateway needs its own"


def test_metrics_namespace_is_refused(tmp_path: Path) -> None:
    write_stack(tmp_path, clusters=one_cluster(metricsNamespace="monitoring"))
    source = write_gateway(tmp_path, "team-a", {"namespace": "monitoring"})

    assert load_problems(tmp_path) == [
        (
            source,
            "spec.namespace",
            namespace_message("'monitoring'", "the metrics namespace", "metricsNamespace"),
        )
    ]


def test_default_namespace_equal_to_a_referenced_namespace_is_refused(tmp_path: Path) -> None:
    write_stack(tmp_path, clusters=one_cluster(metricsNamespace="openshell-monitoring"))
    source = write_gateway(tmp_path, "monitoring")

    assert load_problems(tmp_path) == [
        (
            source,
            "spec.namespace",
            namespace_message(
                "the default namespace 'openshell-monitoring'",
                "the metrics namespace",
                "metricsNamespace",
            ),
        )
    ]


def test_shared_gateway_namespace_is_refused_in_gateway_api_mode(tmp_path: Path) -> None:
    ingress = {"mode": "gateway-api", "gateway": {"name": "shared-gw", "namespace": "gw-system"}}
    write_stack(tmp_path, clusters=one_cluster(**(GATEWAY_API | {"ingress": ingress})))
    source = write_gateway(tmp_path, "team-a", {"namespace": "gw-system"})

    assert load_problems(tmp_path) == [
        (
            source,
            "spec.namespace",
            namespace_message(
                "'gw-system'", "the shared Gateway's namespace", "ingress.gateway.namespace"
            ),
        )
    ]


def test_shared_gateway_namespace_is_not_reserved_when_no_gateway_api_is_used(
    tmp_path: Path,
) -> None:
    ingress = {"mode": "route", "gateway": {"name": "shared-gw", "namespace": "gw-system"}}
    write_stack(tmp_path, clusters=one_cluster(ingress=ingress))
    write_gateway(tmp_path, "team-a", {"namespace": "gw-system"})

    assert only_gateway(tmp_path).namespace == "gw-system"


def test_router_namespace_is_refused_in_route_mode(tmp_path: Path) -> None:
    write_stack(tmp_path, clusters=one_cluster(ingress={"routerNamespace": "router"}))
    source = write_gateway(tmp_path, "team-a", {"namespace": "router"})

    assert load_problems(tmp_path) == [
        (
            source,
            "spec.namespace",
            namespace_message("'router'", "the router's namespace", "ingress.routerNamespace"),
        )
    ]


@pytest.mark.parametrize(
    ("database", "field", "host"),
    [
        ({}, "database.host", "postgres.db.svc.cluster.local"),
        ({"host": "postgres.db.svc"}, "database.host", "postgres.db.svc"),
        (
            {"host": "pg.example.com", "adminHost": "pg-rw.db.svc.cluster.local"},
            "database.adminHost",
            "pg-rw.db.svc.cluster.local",
        ),
    ],
    ids=["host-cluster-local", "host-svc", "admin-host"],
)
def test_namespace_of_an_in_cluster_database_service_is_refused(
    tmp_path: Path, database: dict[str, str], field: str, host: str
) -> None:
    write_stack(tmp_path, clusters=one_cluster(database=database))
    source = write_gateway(tmp_path, "team-a", {"namespace": "db"})

    assert load_problems(tmp_path) == [
        (
            source,
            "spec.namespace",
            namespace_message("'db'", f"the namespace of the database service {host!r}", field),
        )
    ]


@pytest.mark.parametrize(
    "host", ["db.example.com", "postgres.db.svc.example.com", "db.svc.cluster.local"]
)
def test_database_hosts_that_are_no_in_cluster_service_reserve_nothing(
    tmp_path: Path, host: str
) -> None:
    write_stack(tmp_path, clusters=one_cluster(database={"host": host}))
    write_gateway(tmp_path, "team-a", {"namespace": "db"})

    assert only_gateway(tmp_path).namespace == "db"


def test_another_clusters_namespaces_are_not_reserved(tmp_path: Path) -> None:
    clusters = two_clusters()
    clusters["east"]["metricsNamespace"] = "monitoring"
    clusters["east"]["database"]["host"] = "postgres.east-db.svc"
    write_stack(tmp_path, clusters=clusters)
    write_gateway(tmp_path, "a", {"cluster": "west", "namespace": "monitoring"})
    write_gateway(tmp_path, "b", {"cluster": "west", "namespace": "east-db"})

    assert [g.namespace for g in load(tmp_path).gateways] == ["monitoring", "east-db"]

"""Rules on names and addresses within a stack (``gatewayctl.resolve.stack``,
``gatewayctl.inputs.clusters``, ``gatewayctl.inputs.gateway_declaration``).

Hosts and base domains are fully qualified DNS names, never IP addresses; registry ports are
TCP ports; infrastructure namespaces and PostgreSQL's reserved role names are refused; a
registry host matches its mirror whatever its case. Each problem is ``path: field: problem``,
exit 2. The same kinds of rules across the stacks of a repository are in test_inventory.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders import (
    CONFIG_FILE,
    PREFIX,
    copy_project,
    one_cluster,
    write_gateway,
    write_stack,
    write_text,
)
from tests.helpers import load_problems, only_gateway
from tests.hostile_helpers import run_cli, unlocated
from tests.support import ROOT

OWN_DATABASE = "a gateway needs a role and database of its own"
SYSTEM = "is a system namespace; a gateway needs its own"


# --- hosts and base domains are fully qualified DNS names -----------------------------------


@pytest.mark.parametrize(
    ("host", "message"),
    [
        ("10.0.0.1", "host '10.0.0.1' is an IP address; it must be a DNS name"),
        (
            "127.1",
            "host '127.1' ends in the numeric label '1', so it is read as an IP address; it must"
            " be a DNS name (no top-level domain is numeric)",
        ),
        (
            "sandboxes",
            "host 'sandboxes' is a single label; it must be a fully qualified DNS name such as"
            " sandboxes.example.com",
        ),
    ],
)
@pytest.mark.parametrize("enabled", [True, False], ids=["exposed", "not-exposed"])
def test_an_address_or_single_label_host_is_refused(
    tmp_path: Path, host: str, message: str, enabled: bool
) -> None:
    write_stack(tmp_path)
    source = write_gateway(tmp_path, "team-a", {"exposure": {"host": host, "enabled": enabled}})

    assert load_problems(tmp_path) == [(source, "spec.exposure.host", message)]


@pytest.mark.parametrize(
    ("base_domain", "message"),
    [
        ("10.1.2.3", "base domain '10.1.2.3' is an IP address; it must be a DNS name"),
        (
            "apps.10",
            "base domain 'apps.10' ends in the numeric label '10', so it is read as an IP"
            " address; it must be a DNS name (no top-level domain is numeric)",
        ),
        (
            "apps",
            "base domain 'apps' is a single label; it must be a fully qualified DNS name such as"
            " apps.example.com",
        ),
    ],
)
def test_an_address_or_single_label_base_domain_is_refused(
    tmp_path: Path, base_domain: str, message: str
) -> None:
    write_stack(tmp_path, clusters=one_cluster(baseDomain=base_domain))

    assert load_problems(tmp_path) == [(CONFIG_FILE, f"{PREFIX}clusters.c1.baseDomain", message)]


def test_a_database_host_may_still_be_an_address_or_localhost(tmp_path: Path) -> None:
    database = {"adminHost": "localhost", "host": "10.0.0.5"}
    write_stack(tmp_path, clusters=one_cluster(database=database))
    write_gateway(tmp_path, "team-a")

    assert only_gateway(tmp_path).hostname == "gw-openshell-team-a.apps.example.com"


# --- registry ports -------------------------------------------------------------------------


def port_message(reference: str, port: str) -> str:
    return f"image reference {reference!r}: registry port {port} is out of range (1-65535)"


def test_a_registry_port_out_of_range_is_refused_in_every_field(tmp_path: Path) -> None:
    mirrors = {"ghcr.io/nvidia": "registry.internal:70000/nvidia", "quay.io:0/team": "quay.io/t"}
    write_stack(
        tmp_path,
        clusters=one_cluster(registryMirrors=mirrors),
        stack_images={"sandbox": "registry.internal:65536/sandbox:1"},
    )
    source = write_gateway(tmp_path, "team-a", {"images": {"gateway": "localhost:0/gw:1"}})

    mirror_field = f"{PREFIX}clusters.c1.registryMirrors"
    assert load_problems(tmp_path) == [
        (
            CONFIG_FILE,
            f"{mirror_field}.ghcr.io/nvidia",
            port_message("registry.internal:70000/nvidia", "70000"),
        ),
        (
            CONFIG_FILE,
            f"{mirror_field}.quay.io:0/team",
            f"key: {port_message('quay.io:0/team', '0')}",
        ),
        (
            CONFIG_FILE,
            f"{PREFIX}images.sandbox",
            port_message("registry.internal:65536/sandbox:1", "65536"),
        ),
        (source, "spec.images.gateway", port_message("localhost:0/gw:1", "0")),
    ]


# --- registry hosts compare case-insensitively ----------------------------------------------


def test_an_uppercase_registry_host_takes_the_clusters_mirror(tmp_path: Path) -> None:
    mirrors = {"ghcr.io/nvidia": "registry.internal:5000/nvidia"}
    write_stack(tmp_path, clusters=one_cluster(registryMirrors=mirrors))
    write_gateway(tmp_path, "team-a", {"images": {"gateway": "GHCR.IO/nvidia/openshell/gw:1"}})

    images = only_gateway(tmp_path).args.images
    assert images.gateway == "registry.internal:5000/nvidia/openshell/gw:1"
    assert images.supervisor == "registry.internal:5000/nvidia/openshell/supervisor:0.0.109"


def test_mirror_keys_differing_only_in_the_hosts_case_are_refused(tmp_path: Path) -> None:
    mirrors = {"ghcr.io/nvidia": "registry.internal/a", "GHCR.io/nvidia": "registry.internal/b"}
    write_stack(tmp_path, clusters=one_cluster(registryMirrors=mirrors))

    assert load_problems(tmp_path) == [
        (
            CONFIG_FILE,
            f"{PREFIX}clusters.c1.registryMirrors",
            "'ghcr.io/nvidia' and 'GHCR.io/nvidia' are the same prefix (registry hosts compare"
            " case-insensitively); keep one",
        )
    ]


# --- infrastructure namespaces --------------------------------------------------------------


@pytest.mark.parametrize(
    "namespace",
    [
        "istio-system",
        "istio-cni",
        "cert-manager",
        "cert-manager-operator",
        "olm",
        "operators",
        "hypershift",
        "open-cluster-management",
        "open-cluster-management-agent",
        "multicluster-engine",
        "local-cluster",
        "ibm-system",
        "calico-system",
        "tigera-operator",
        "local-path-storage",
        "hypershell-system",
    ],
)
def test_infrastructure_namespaces_are_refused(tmp_path: Path, namespace: str) -> None:
    write_stack(tmp_path)
    source = write_gateway(tmp_path, "team-a", {"namespace": namespace})

    assert load_problems(tmp_path) == [(source, "spec.namespace", f"{namespace!r} {SYSTEM}")]


@pytest.mark.parametrize(
    "namespace", ["istio", "team-olm", "kube", "openshell-kube-x", "cert-manager-x", "defaults"]
)
def test_names_that_only_resemble_infrastructure_namespaces_pass(
    tmp_path: Path, namespace: str
) -> None:
    write_stack(tmp_path)
    write_gateway(tmp_path, "team-a", {"namespace": namespace})

    assert only_gateway(tmp_path).namespace == namespace


# --- PostgreSQL reserved role names ---------------------------------------------------------

RESERVED = {
    "public": "PUBLIC stands for every role",
    "none": "PostgreSQL refuses to create a role of that name",
    "current_user": "CURRENT_USER stands for the role of the session",
    "current_role": "CURRENT_ROLE stands for the role of the session",
    "session_user": "SESSION_USER stands for the role that logged in",
}


@pytest.mark.parametrize("name", sorted(RESERVED))
def test_reserved_role_names_are_refused_as_database_names(tmp_path: Path, name: str) -> None:
    write_stack(tmp_path)
    source = write_gateway(tmp_path, "team-a", {"databaseName": name})

    assert load_problems(tmp_path) == [
        (
            source,
            "spec.databaseName",
            f"{name!r} is a reserved PostgreSQL role name ({RESERVED[name]}); {OWN_DATABASE}",
        )
    ]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        *[
            (name, f"{name!r} is a reserved PostgreSQL role name ({why})")
            for name, why in sorted(RESERVED.items())
        ],
        (
            "pg_monitor",
            "'pg_monitor' starts with 'pg_', which PostgreSQL reserves for its system roles",
        ),
    ],
)
def test_reserved_role_names_are_refused_as_admin_user(
    tmp_path: Path, name: str, message: str
) -> None:
    write_stack(tmp_path, clusters=one_cluster(database={"adminUser": name}))

    assert load_problems(tmp_path) == [
        (
            CONFIG_FILE,
            f"{PREFIX}clusters.c1.database.adminUser",
            f"{message}; it cannot be the admin role Pulumi logs in as",
        )
    ]


@pytest.mark.parametrize("name", ["postgres", "PUBLIC", "public_admin", "admin_none", "pgadmin"])
def test_admin_users_that_are_not_reserved_pass(tmp_path: Path, name: str) -> None:
    write_stack(tmp_path, clusters=one_cluster(database={"adminUser": name}))
    write_gateway(tmp_path, "team-a")

    assert only_gateway(tmp_path).database_name == "gw_team_a"


def test_these_rules_exit_2_through_the_cli(tmp_path: Path) -> None:
    write_stack(tmp_path)
    first = write_gateway(
        tmp_path, "team-a", {"namespace": "istio-system", "databaseName": "current_user"}
    )
    second = write_gateway(tmp_path, "team-b", {"exposure": {"host": "10.0.0.1"}})
    out = tmp_path / "out"

    validated = run_cli("--root", str(tmp_path), "validate", "test")
    rendered = run_cli("--root", str(tmp_path), "render", "test", "--out", str(out), "-q")

    assert (validated.code, rendered.code) == (2, 2)
    problems = [
        f"error: {first}: spec.databaseName: 'current_user' is a reserved PostgreSQL role name"
        f" (CURRENT_USER stands for the role of the session); {OWN_DATABASE}",
        f"error: {first}: spec.namespace: 'istio-system' {SYSTEM}",
        f"error: {second}: spec.exposure.host: host '10.0.0.1' is an IP address; it must be a"
        " DNS name",
    ]
    # Both also say, with the rest, that no one can sign in to team-b (valid on its own): every
    # command runs validate's rules (issue 42, item 7).
    assert unlocated(validated.err).splitlines() == [
        *problems,
        f"error: {second}: spec.signIn: no person can sign in: cluster 'c1' has no"
        " identity.keycloak and the gateway declares no spec.oidc; declare spec.oidc (your"
        " issuer) or spec.signIn: none",
        "4 problem(s); nothing written",
    ]
    assert rendered.err == validated.err
    assert not out.exists()


# --- managed services' reserved roles and databases (issue 21, item 8) ----------------------

MANAGED = {
    "rdsadmin": "'rdsadmin' is a reserved database: Amazon RDS / Aurora's own database, where"
    " it keeps the instance's management data",
    "rds_superuser": "'rds_superuser' is a reserved role: Amazon RDS / Aurora reserves roles"
    " starting with 'rds_' (rds_superuser, rds_replication, rds_password, rds_iam, rds_ad)",
    "rds_iam": "'rds_iam' is a reserved role: Amazon RDS / Aurora reserves roles starting with"
    " 'rds_' (rds_superuser, rds_replication, rds_password, rds_iam, rds_ad)",
    "rdsrepladmin": "'rdsrepladmin' is a reserved role: Amazon RDS / Aurora's replication"
    " administrator",
    "rdstopmgr": "'rdstopmgr' is a reserved role: Amazon RDS / Aurora's role for its monitoring",
    "ibmclouddb": "'ibmclouddb' is a reserved database: IBM Cloud Databases' default database,"
    " created with the deployment",
    "ibm": "'ibm' is a reserved role: IBM Cloud Databases' own superuser, which manages the"
    " deployment",
    "ibm_admin": "'ibm_admin' is a reserved role: IBM Cloud Databases' group role of its manager"
    " users (Gen 2)",
    "ibm_writer": "'ibm_writer' is a reserved role: IBM Cloud Databases' group role of its"
    " writer users (Gen 2)",
    "admin": "'admin' is a reserved role: IBM Cloud Databases' admin user, which the service"
    " creates with the deployment",
}


@pytest.mark.parametrize("name", sorted(MANAGED))
def test_managed_services_reserved_names_are_refused_as_database_names(
    tmp_path: Path, name: str
) -> None:
    write_stack(tmp_path, clusters=one_cluster(database={"adminUser": "hypershell_admin"}))
    source = write_gateway(tmp_path, "team-a", {"databaseName": name})

    assert load_problems(tmp_path) == [
        (source, "spec.databaseName", f"{MANAGED[name]}; {OWN_DATABASE}")
    ]


@pytest.mark.parametrize("name", ["rdsadmin", "rds_superuser", "ibm", "ibm_admin"])
def test_managed_services_own_roles_are_refused_as_admin_user(tmp_path: Path, name: str) -> None:
    write_stack(tmp_path, clusters=one_cluster(database={"adminUser": name}))
    why = MANAGED[name].replace("reserved database", "reserved role")
    if name == "rdsadmin":
        why = "'rdsadmin' is a reserved role: Amazon RDS / Aurora's own superuser, which manages"
        why += " the instance"

    assert load_problems(tmp_path) == [
        (
            CONFIG_FILE,
            f"{PREFIX}clusters.c1.database.adminUser",
            f"{why}; it cannot be the admin role Pulumi logs in as",
        )
    ]


def test_a_managed_services_admin_user_is_a_stacks_admin_user_but_no_gateways(
    tmp_path: Path,
) -> None:
    # IBM Cloud Databases' `admin` is what Pulumi logs in as there (the builders' baseline).
    write_stack(tmp_path, clusters=one_cluster(database={"adminUser": "admin"}))
    write_gateway(tmp_path, "team-a", {"databaseName": "rdsadmin_reports"})

    assert only_gateway(tmp_path).database_name == "rdsadmin_reports"


# --- the project's own namespaces (issue 21, item 1) -----------------------------------------

OPERATOR = (
    "the Pulumi Kubernetes Operator's namespace, which holds the Pulumi access token and the git"
    " credentials (deploy/operator.yaml: namespace)"
)


def _operator_settings(root: Path, namespace: str) -> None:
    text = (ROOT / "deploy" / "operator.yaml").read_text(encoding="utf-8")
    write_text(
        root,
        "deploy/operator.yaml",
        text.replace("namespace: pulumi-operator", f"namespace: {namespace}"),
    )


@pytest.mark.parametrize("namespace", ["pulumi-operator", "gitops-deployer"])
def test_the_operators_namespace_is_no_gateways_and_no_credential_store(
    tmp_path: Path, namespace: str
) -> None:
    _operator_settings(tmp_path, namespace)
    write_stack(tmp_path)
    adopter = write_gateway(tmp_path, "team-a", {"namespace": namespace})
    store = {"driver": "kubernetes-secrets", "kubernetesSecrets": {"namespace": namespace}}
    reader = write_gateway(tmp_path, "team-b", {"credentials": store})

    assert load_problems(tmp_path) == [
        (adopter, "spec.namespace", f"{namespace!r} is {OPERATOR}; a gateway needs its own"),
        (
            reader,
            "spec.credentials.kubernetesSecrets.namespace",
            f"{namespace!r} is {OPERATOR}; the gateway would be granted every Secret in it",
        ),
    ]


def test_the_committed_operator_namespace_is_reserved_through_the_cli(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "p")
    store = {"driver": "kubernetes-secrets", "kubernetesSecrets": {"namespace": "pulumi-operator"}}
    source = write_gateway(
        project, "thief", {"credentials": store, "signIn": "none"}, stack="local"
    )
    outcome = run_cli("--root", str(project), "validate", "local")
    assert (outcome.code, unlocated(outcome.err).splitlines()) == (
        2,
        [
            f"error: {source}: spec.credentials.kubernetesSecrets.namespace: 'pulumi-operator'"
            f" is {OPERATOR}; the gateway would be granted every Secret in it",
            "1 problem(s); nothing written",
        ],
    )


@pytest.mark.parametrize("field", ["namespace", "credentials"])
def test_the_operators_default_namespace_is_a_system_namespace(tmp_path: Path, field: str) -> None:
    write_stack(tmp_path)
    store = {
        "driver": "kubernetes-secrets",
        "kubernetesSecrets": {"namespace": "pulumi-kubernetes-operator"},
    }
    spec = (
        {"namespace": "pulumi-kubernetes-operator"}
        if field == "namespace"
        else {"credentials": store}
    )
    source = write_gateway(tmp_path, "team-a", spec)
    path, own = (
        ("spec.namespace", "a gateway needs its own")
        if field == "namespace"
        else ("spec.credentials.kubernetesSecrets.namespace", "credentials need a tenant's own")
    )
    assert load_problems(tmp_path) == [
        (source, path, f"'pulumi-kubernetes-operator' is a system namespace; {own}")
    ]


def test_without_operator_settings_only_the_system_namespaces_are_reserved(tmp_path: Path) -> None:
    write_stack(tmp_path)
    write_gateway(tmp_path, "team-a", {"namespace": "pulumi-operator"})
    assert only_gateway(tmp_path).namespace == "pulumi-operator"

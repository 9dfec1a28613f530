"""Every reserved name, in one place: what a gateway may never take.

A gateway owns what it names: its namespace (removing the gateway deletes it; adopting one
puts it under the gateway's labels and NetworkPolicies), the namespace of its
``kubernetes-secrets`` credential store (the gateway is granted every Secret in it), and the
PostgreSQL role and database of ``spec.databaseName`` (it resets the role's password and, with
``deletionPolicy: Delete``, drops both); its Keycloak client is its own too (deleting the
gateway deletes it). So every field that names one of these is checked here:

- namespaces (``spec.namespace``, ``spec.credentials.kubernetesSecrets.namespace``): the
  platform's and cluster-wide software's (:func:`system_namespace`), and the project's own
  (:func:`project_namespaces`: the Pulumi Kubernetes Operator's, which holds the Pulumi access
  token and the git credentials). The namespaces the stack config names (router, shared
  Gateway, metrics, the in-cluster database and Keycloak services) are the cluster's:
  ``ClusterConfig.referenced_namespaces``, checked beside these (:func:`namespace_owner`);
  so are those of the in-cluster services a declaration names (its Vault, its issuer):
  ``gatewayctl.resolve.per_gateway.service_namespaces``. A host is in a cluster when a pod's
  resolver finds it there, in any of its spellings (:func:`service_namespace`);
- PostgreSQL roles and databases (``spec.databaseName``, ``database.adminUser``): PostgreSQL's
  own, and those of the managed services the stacks run on, Amazon RDS / Aurora and IBM Cloud
  Databases (:func:`role_problem`, :func:`database_problem`);
- Keycloak client ids (``spec.keycloak.clientId`` and the console's ``<id>-console``): the
  clients every realm has (:data:`KEYCLOAK_BUILTIN_CLIENTS`).

Names are compared as the systems compare them: Kubernetes names and the PostgreSQL
identifiers a declaration may write are lowercase already (the models refuse any other
spelling), and PostgreSQL reserves ``pg_`` case-sensitively (``IsReservedName``).
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Mapping
from pathlib import Path

from components import naming
from gatewayctl import lazy
from gatewayctl.errors import InvalidInputError
from gatewayctl.inputs.yamlfile import read_yaml_mapping

# --- namespaces ------------------------------------------------------------------------------

_SYSTEM_NAMESPACE_PREFIXES = (
    "kube-",  # reserved by Kubernetes (kube-system, kube-public, kube-node-lease)
    "openshift-",  # reserved by OpenShift, which refuses projects named openshift-* or kube-*
    "open-cluster-management-",  # Red Hat ACM / multicluster engine agents and hub
)
_SYSTEM_NAMESPACES = frozenset(
    {
        "default",  # Kubernetes
        "openshift",  # OpenShift's shared image streams and templates
        "olm",  # Operator Lifecycle Manager outside OpenShift ...
        "operators",  # ... and its global OperatorGroup
        "istio-system",  # Istio / OpenShift Service Mesh, a Gateway API implementation
        "istio-cni",
        "cert-manager",  # cert-manager and the OpenShift cert-manager Operator
        "cert-manager-operator",
        "hypershift",  # the HyperShift operator (hosted control planes)
        "open-cluster-management",  # Red Hat ACM / multicluster engine
        "multicluster-engine",
        "local-cluster",
        "ibm-system",  # IBM Cloud ROKS: cloud provider, certificates, Calico networking
        "ibm-cert-store",
        "calico-system",
        "tigera-operator",
        "local-path-storage",  # kind's volume provisioner (the local stack)
        "hypershell-system",  # upstream HyperShell's control plane, whose gateways are adopted
        # The Pulumi Kubernetes Operator's default install namespace (its kustomize and Helm
        # installs); the one deploy/operator.yaml names is reserved by project_namespaces.
        "pulumi-kubernetes-operator",
    }
)

OPERATOR_SETTINGS = "deploy/operator.yaml"
"""The operator's settings (``gatewayctl.deploy.operator``), whose ``namespace`` is reserved."""


def system_namespace_schema() -> dict[str, object]:
    """:func:`system_namespace` as JSON Schema keywords (``gatewayctl.inputs.model.none_of``)."""

    return lazy.model.none_of(_SYSTEM_NAMESPACES, _SYSTEM_NAMESPACE_PREFIXES)


def system_namespace(name: str) -> bool:
    """A namespace of the platform or of cluster-wide software, never a tenant's."""
    return name in _SYSTEM_NAMESPACES or name.startswith(_SYSTEM_NAMESPACE_PREFIXES)


def project_namespaces(root: Path) -> dict[str, tuple[str, str]]:
    """The namespaces the project itself uses, whatever the cluster: namespace -> (what it is,
    where it is named). The operator's namespace holds the Pulumi access token and the git
    credentials (its Secrets ``accessToken`` and ``gitToken``); a gateway adopting it would
    delete it with the gateway, a credential store there would read and write them.

    Settings that cannot be read name nothing here (their own problems are reported by the
    commands that use them: ``operator-manifests``, ``driver``)."""
    path = root / OPERATOR_SETTINGS
    try:
        if not path.is_file():
            return {}
        document = read_yaml_mapping(path, OPERATOR_SETTINGS)
    except (InvalidInputError, OSError):
        return {}
    namespace = document.get("namespace")
    if not isinstance(namespace, str) or not naming.is_dns1123_label(namespace):
        return {}
    what = (
        "the Pulumi Kubernetes Operator's namespace, which holds the Pulumi access token and"
        " the git credentials"
    )
    return {namespace: (what, f"{OPERATOR_SETTINGS}: namespace")}


def namespace_owner(
    namespace: str,
    cluster: Mapping[str, tuple[str, str]],
    project: Mapping[str, tuple[str, str]],
) -> tuple[str, str, bool] | None:
    """(what it is, where it is named, whether the cluster's config names it) when
    ``namespace`` is reserved beyond the system ones: one the cluster's config names
    (``cluster``, ``ClusterConfig.referenced_namespaces``) or one of the project's
    (``project``, :func:`project_namespaces`)."""
    if namespace in cluster:
        return (*cluster[namespace], True)
    if namespace in project:
        return (*project[namespace], False)
    return None


_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_SERVICE_HOST = re.compile(
    # <svc>.<ns>.svc[.cluster.local], and a headless service's pod: <pod>.<svc>.<ns>.svc...
    rf"(?:{_LABEL}\.)?{_LABEL}\.(?P<namespace>{_LABEL})\.svc(?:\.cluster\.local)?"
    # <svc>.<ns>: the pod's search list (``<ns>.svc.cluster.local svc.cluster.local ...``,
    # ndots 5) tries ``<svc>.<ns>.svc.cluster.local`` before any public name.
    rf"|{_LABEL}\.(?P<short>{_LABEL})"
)


def service_namespace(host: str) -> str | None:
    """The namespace of ``host`` when a pod's resolver finds it inside the cluster, else None:
    ``<svc>.<ns>``, ``<svc>.<ns>.svc``, ``<svc>.<ns>.svc.cluster.local`` (and a headless
    service's pod before them), in any case, with or without the trailing dot of an absolute
    name. A tenant that takes that namespace owns the service's objects (removing the gateway
    deletes them) or, with a Service of that name, receives what is sent to it."""
    match = _SERVICE_HOST.fullmatch(host.lower().removesuffix("."))
    if match is None:
        return None
    return match["namespace"] or match["short"]


def url_namespace(url: str) -> str | None:
    """:func:`service_namespace` of a URL's host; None for a URL without one."""
    try:
        host = urllib.parse.urlsplit(url).hostname
    except ValueError:
        return None
    return service_namespace(host) if host else None


# --- PostgreSQL roles and databases ------------------------------------------------------------

POSTGRES_ROLES = {
    "public": "PUBLIC stands for every role",
    "none": "PostgreSQL refuses to create a role of that name",
    "current_user": "CURRENT_USER stands for the role of the session",
    "current_role": "CURRENT_ROLE stands for the role of the session",
    "session_user": "SESSION_USER stands for the role that logged in",
}
"""Role names PostgreSQL reserves (src/backend/parser/gram.y, RoleSpec and RoleId: "role name
"public"/"none" is reserved", "CURRENT_USER cannot be used as a role name here"); names
starting with ``pg_`` are reserved too (src/backend/commands/user.c, CreateRole:
IsReservedName). The postgresql provider quotes role names (cyrilgdn/terraform-provider-
postgresql, postgresql/resource_postgresql_role.go, createRole: pq.QuoteIdentifier), so
``"current_user"`` could be created, but every unquoted CURRENT_USER would mean another role."""

POSTGRES_DATABASES = frozenset({"postgres", "template0", "template1"})
"""The databases every PostgreSQL server has (initdb)."""

_RDS = "Amazon RDS / Aurora"
_IBM = "IBM Cloud Databases"
MANAGED_ROLES = {
    "rdsadmin": f"{_RDS}'s own superuser, which manages the instance",
    "rdsrepladmin": f"{_RDS}'s replication administrator",
    "rdstopmgr": f"{_RDS}'s role for its monitoring",
    "ibm": f"{_IBM}' own superuser, which manages the deployment",
    "ibm_admin": f"{_IBM}' group role of its manager users (Gen 2)",
    "ibm_writer": f"{_IBM}' group role of its writer users (Gen 2)",
    "ibm-cloud-base-user": f"{_IBM}' group role of every user it creates",
    "ibm-replication": f"{_IBM}' replication role",
}
"""Roles a managed PostgreSQL service keeps for itself (RDS: the ``\\du`` of an RDS for
PostgreSQL instance, AWS docs "Understanding PostgreSQL roles and permissions"; IBM: docs
"Managing users, roles, and privileges" of Databases for PostgreSQL). A gateway taking one
would reset its password and could drop it; Pulumi cannot log in as one either."""
MANAGED_ROLE_PREFIXES = {
    "rds_": f"{_RDS} reserves roles starting with 'rds_' (rds_superuser, rds_replication,"
    " rds_password, rds_iam, rds_ad)",
}
MANAGED_LOGINS = {
    "admin": f"{_IBM}' admin user, which the service creates with the deployment",
}
"""Roles a managed service creates for its customer to log in as: a stack may name one as
``database.adminUser``, a gateway may never take one."""
MANAGED_DATABASES = {
    "rdsadmin": f"{_RDS}'s own database, where it keeps the instance's management data",
    "ibmclouddb": f"{_IBM}' default database, created with the deployment",
}


def role_problem(name: str, *, login: bool = False) -> str | None:
    """Why the role name ``name`` is reserved, or None. ``login``: the name is the admin role
    Pulumi logs in as (``database.adminUser``), where a managed service's admin user is right."""
    if name in POSTGRES_ROLES:
        return f"{name!r} is a reserved PostgreSQL role name ({POSTGRES_ROLES[name]})"
    if name.startswith("pg_"):
        return f"{name!r} starts with 'pg_', which PostgreSQL reserves for its system roles"
    if name in MANAGED_ROLES:
        return f"{name!r} is a reserved role: {MANAGED_ROLES[name]}"
    for prefix, why in MANAGED_ROLE_PREFIXES.items():
        if name.startswith(prefix):
            return f"{name!r} is a reserved role: {why}"
    if not login and name in MANAGED_LOGINS:
        return f"{name!r} is a reserved role: {MANAGED_LOGINS[name]}"
    return None


def gateway_database_schema() -> dict[str, object]:
    """JSON Schema keywords refusing what :func:`database_problem` or :func:`role_problem`
    (not a login) refuses: the name of a gateway's database is its role's too."""

    names = {*POSTGRES_ROLES, *MANAGED_ROLES, *MANAGED_LOGINS}
    names |= POSTGRES_DATABASES | set(MANAGED_DATABASES)
    return lazy.model.none_of(names, {"pg_", *MANAGED_ROLE_PREFIXES})


def database_problem(name: str) -> str | None:
    """Why the database name ``name`` is reserved, or None."""
    if name in POSTGRES_DATABASES:
        return f"{name!r} is a PostgreSQL system database"
    if name in MANAGED_DATABASES:
        return f"{name!r} is a reserved database: {MANAGED_DATABASES[name]}"
    return None


# --- Keycloak clients --------------------------------------------------------------------------

KEYCLOAK_BUILTIN_CLIENTS = frozenset(
    {
        "account",
        "account-console",
        "admin-cli",
        "broker",
        "realm-management",
        "security-admin-console",
    }
)
"""The clients Keycloak creates in every realm (``RealmManagerImpl.setupRealmDefaults`` and
its ``setupAccountManagement``, ``setupBrokerService``, ``setupAdminCli``,
``setupAdminConsole``, ``setupRealmAdminManagement``): a gateway's client of one of these ids
would take it over, and deleting the gateway would delete it."""


def client_problem(client_id: str) -> str | None:
    """Why ``client_id`` may not be a gateway's (or its console's) client, or None."""
    if client_id in KEYCLOAK_BUILTIN_CLIENTS:
        return (
            f"client {client_id!r} is one of the clients Keycloak creates in every realm; a"
            " gateway needs a client of its own"
        )
    return None

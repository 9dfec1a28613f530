"""Per-cluster shared resources: providers and the node-reader ClusterRole (DESIGN §5.9)."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as kubernetes
import pulumi_postgresql as postgresql
from pulumi_kubernetes.rbac.v1 import ClusterRole

from components import naming
from components.wire import wire

_NODE_READER_RULES = [
    {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]},
    {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]},
]


@dataclass(frozen=True, kw_only=True)
class ClusterArgs:
    kubeconfig_context: str | None
    """Context in the operator's kubeconfig; None uses the kubeconfig's current context."""
    kubeconfig: pulumi.Input[str] | None
    """Kubeconfig contents (a Pulumi secret), or None to use the operator's kubeconfig."""
    database_admin_host: str
    """PostgreSQL host as Pulumi reaches it (the admin connection)."""
    database_admin_port: int
    """PostgreSQL port as Pulumi reaches it."""
    database_admin_user: str
    """Admin role used to create tenant roles and databases."""
    database_admin_password: pulumi.Input[str]
    """Admin password (a Pulumi secret)."""
    database_ssl_root_cert: str | None
    """CA bundle path the admin connection verifies the server with, or None for the system's."""


class Cluster(pulumi.ComponentResource):
    """Creates: the cluster's Kubernetes provider; its PostgreSQL admin provider with
    ``sslmode=verify-full``; the shared ClusterRole ``openshell-gateway-node-reader`` (one
    per cluster, bound per tenant by each gateway)."""

    kubernetes: kubernetes.Provider
    postgresql: postgresql.Provider
    node_reader_cluster_role: pulumi.Output[str]

    def __init__(self, name: str, args: ClusterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("hypershell:cluster:Cluster", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.kubernetes = kubernetes.Provider(
            f"{name}-k8s",
            context=args.kubeconfig_context,
            kubeconfig=args.kubeconfig,
            opts=child,
        )
        self.postgresql = postgresql.Provider(
            f"{name}-postgres",
            host=args.database_admin_host,
            port=args.database_admin_port,
            username=args.database_admin_user,
            password=args.database_admin_password,
            database="postgres",
            sslmode="verify-full",
            sslrootcert=args.database_ssl_root_cert,
            superuser=False,
            opts=child,
        )
        role = ClusterRole(
            f"{name}-node-reader",
            metadata={
                "name": naming.NODE_READER_CLUSTER_ROLE,
                "labels": {
                    "app.kubernetes.io/name": "openshell",
                    "app.kubernetes.io/component": "gateway",
                    "app.kubernetes.io/managed-by": "hypershell-control-plane",
                    naming.MANAGED_LABEL: "true",
                },
            },
            rules=wire(_NODE_READER_RULES),
            # Never deleted (upstream's rule): every tenant on the cluster is bound to it, and
            # other stacks sharing the cluster (scale-out) apply the same object.
            opts=pulumi.ResourceOptions(
                parent=self, provider=self.kubernetes, retain_on_delete=True
            ),
        )
        self.node_reader_cluster_role = role.metadata.name
        self.register_outputs({"node_reader_cluster_role": self.node_reader_cluster_role})

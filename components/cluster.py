"""Per-cluster shared resources: providers and the node-reader ClusterRole
(docs/upstream-differences.md, "9. Providers per cluster")."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as kubernetes
import pulumi_postgresql as postgresql
from pulumi_kubernetes.rbac.v1 import ClusterRolePatch

from components import naming, rbac, tokens
from components.metadata import metadata
from components.wire import wire


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
    delete_unreachable: bool = False
    """Drop this cluster's resources from the state when its API server is unreachable
    (a decommissioned cluster), instead of failing every preview of the stack."""


class Cluster(pulumi.ComponentResource):
    """Creates: the cluster's Kubernetes provider; its PostgreSQL admin provider with
    ``sslmode=verify-full``; the shared ClusterRole ``openshell-gateway-node-reader`` (one
    per cluster, bound per tenant by each gateway), applied as a server-side apply patch.

    Provider settings that differ from pulumi-kubernetes' defaults, read in its source
    (pulumi/pulumi-kubernetes ``provider/pkg/provider/diff.go`` ``forceNewProperties``):
    ConfigMaps and Secrets are immutable unless ``enableConfigMapMutable`` /
    ``enableSecretMutable`` are set, so a change of their data would replace the object, and
    since ours have fixed names the replacement deletes before it creates (an outage for the
    gateway reading them). With both set, data changes are updates in place; the Deployment's
    pod-template hash still rolls the pods (``components.deployment``).
    """

    kubernetes: kubernetes.Provider
    postgresql: postgresql.Provider
    node_reader_cluster_role: pulumi.Output[str]

    def __init__(self, name: str, args: ClusterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(tokens.CLUSTER, name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.kubernetes = kubernetes.Provider(
            f"{name}-k8s",
            context=args.kubeconfig_context,
            kubeconfig=args.kubeconfig,
            # Update ConfigMap/Secret data in place instead of delete-then-create (see above).
            enable_config_map_mutable=True,
            enable_secret_mutable=True,
            # Off unless the stack says so: a cluster that is only briefly unreachable must
            # fail the run, not vanish from the state
            # (docs/running.md, "Decommissioning a cluster").
            delete_unreachable=args.delete_unreachable,
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
        # A Patch, not a ClusterRole: pulumi-kubernetes >= 4.29 creates objects client-side and
        # fails with AlreadyExists for an object the stack did not create
        # (provider/pkg/await/await.go ``Creation``: server-side apply only when
        # ``upsertExistingObjects`` is set or ``kinds.IsPatchResource``). This object already
        # exists on every cluster upstream's controller ran on, and every stack on a shared
        # cluster applies it. A Patch is a server-side apply that creates the object when it is
        # absent; each stack applies it under its own field manager (``fieldManagerName``: a
        # unique name kept in the state), so any number of stacks co-own the same values.
        # ``upsertExistingObjects`` on the provider would re-open the data loss 4.29 closed
        # for every other object (CHANGELOG 4.29.0, #2926), so it stays off.
        role = ClusterRolePatch(
            f"{name}-node-reader",
            metadata=wire(
                metadata(
                    naming.NODE_READER_CLUSTER_ROLE,
                    {
                        "app.kubernetes.io/name": "openshell",
                        "app.kubernetes.io/component": "gateway",
                        "app.kubernetes.io/managed-by": "hypershell-control-plane",
                        naming.MANAGED_LABEL: "true",
                    },
                    # Rules are one atomic list: a manager that wrote other rules (an older
                    # upstream controller, an edit by hand) would be a conflict; these rules
                    # are what every gateway on the cluster needs, so the apply takes them over.
                    annotations={"pulumi.com/patchForce": "true"},
                )
            ),
            rules=wire(rbac.NODE_READER_RULES),
            # Never deleted nor relinquished (upstream's rule): every tenant on the cluster is
            # bound to it, and other stacks sharing the cluster (scale-out) apply it too.
            opts=pulumi.ResourceOptions(
                parent=self, provider=self.kubernetes, retain_on_delete=True
            ),
        )
        self.node_reader_cluster_role = role.metadata.name
        self.register_outputs({"node_reader_cluster_role": self.node_reader_cluster_role})

"""The program body: validated stack → one ``Cluster`` per cluster, one ``Gateway`` per declaration.

``main()`` is what ``__main__.py`` runs under the Pulumi CLI; the offline render runs the same
``main()`` under the mock runtime. ``build()`` is the part tests call with a loaded stack.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pulumi

from components.cluster import Cluster, ClusterArgs
from components.database import DatabaseEndpoint
from components.exposure import SharedGateway
from components.gateway import Gateway, GatewayArgs
from gatewayctl.models import ClusterConfig
from gatewayctl.resolve import LoadedStack, ResolvedGateway, load_stack
from gatewayctl.secrets import ClusterSecrets, all_cluster_secrets
from gatewayctl.stackfile import OBJECT_KEYS, PROJECT, STRING_KEYS
from gatewayctl.yamlfile import SECRETS_KEY

ROOT = Path(__file__).resolve().parent.parent


def gateway_args(
    gateway: ResolvedGateway, cluster: ClusterConfig, node_reader: pulumi.Input[str]
) -> GatewayArgs:
    """The one function turning the validated model into component args."""
    shared = cluster.ingress.gateway
    return GatewayArgs(
        cluster=gateway.cluster,
        namespace=gateway.namespace,
        ingress_mode=gateway.ingress_mode,
        hostname=gateway.hostname,
        images=gateway.images,
        replicas=gateway.replicas,
        database_name=gateway.database_name,
        database_host=cluster.database.host,
        database_port=cluster.database.port,
        database_endpoint=DatabaseEndpoint(
            host=cluster.database.admin_host,
            port=cluster.database.admin_port,
            ssl_root_cert=cluster.database.ssl_root_cert,
        ),
        retain_database=gateway.retain_database,
        openshift=cluster.capabilities.openshift,
        node_reader_cluster_role=node_reader,
        router_namespace=cluster.ingress.router_namespace,
        shared_gateway=(
            SharedGateway(
                name=shared.name, namespace=shared.namespace, section_name=shared.section_name
            )
            if shared is not None
            else None
        ),
        metrics_namespace=cluster.metrics_namespace,
    )


def build(stack: LoadedStack, secrets: Mapping[str, ClusterSecrets]) -> dict[str, Gateway]:
    """Register every cluster and gateway of a validated stack; return the gateways by name.

    ``secrets`` come from ``all_cluster_secrets``: validated, one entry per cluster. They enter
    the program as secret Outputs, so the engine encrypts them in the state and masks them."""
    clusters: dict[str, Cluster] = {}
    for name, cluster in sorted(stack.config.clusters.items()):
        picked = secrets[name]
        clusters[name] = Cluster(
            name,
            ClusterArgs(
                kubeconfig_context=cluster.kubeconfig_context,
                # None leaves the provider on the operator's kubeconfig (and kubeconfigContext).
                kubeconfig=(
                    pulumi.Output.secret(picked.kubeconfig)
                    if picked.kubeconfig is not None
                    else None
                ),
                database_admin_host=cluster.database.admin_host,
                database_admin_port=cluster.database.admin_port,
                database_admin_user=cluster.database.admin_user,
                database_admin_password=pulumi.Output.secret(picked.db_admin_password),
                database_ssl_root_cert=cluster.database.ssl_root_cert,
                delete_unreachable=cluster.delete_unreachable,
            ),
        )
    gateways: dict[str, Gateway] = {}
    for gateway in stack.gateways:
        target = clusters[gateway.cluster]
        gateways[gateway.name] = Gateway(
            gateway.name,
            gateway_args(gateway, stack.cluster(gateway.cluster), target.node_reader_cluster_role),
            opts=pulumi.ResourceOptions(providers=[target.kubernetes, target.postgresql]),
        )
    return gateways


def export(gateways: Mapping[str, Gateway]) -> None:
    """Stack outputs keyed by gateway name."""
    pulumi.export(
        "gateways",
        {
            name: {
                "namespace": gw.namespace,
                "hostname": gw.hostname,
                "address": gw.address,
                "caCertificate": gw.ca_certificate,
                "database": gw.database_name,
            }
            for name, gw in sorted(gateways.items())
        },
    )


def main(root: Path = ROOT) -> dict[str, Gateway]:
    """Read the stack's config through ``pulumi.Config``, validate, build and export."""
    config = pulumi.Config(PROJECT)
    raw = {key: config.get(key) for key in STRING_KEYS} | {
        key: config.get_object(key) for key in OBJECT_KEYS
    }
    stack = load_stack(root, pulumi.get_stack(), {k: v for k, v in raw.items() if v is not None})
    # The plain value, read only to validate its structure before any resource is registered;
    # ``build`` wraps every value back into a secret Output. (pulumi.Config.get_object on a
    # secret key returns the decrypted value; the SDK's warning for that is disabled,
    # pulumi/pulumi sdk/python/lib/pulumi/config.py ``_get``, TODO #7127.)
    secrets = all_cluster_secrets(
        config.get_object(SECRETS_KEY), stack.config.clusters, stack.config_path
    )
    gateways = build(stack, secrets)
    export(gateways)
    return gateways

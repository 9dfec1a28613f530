"""The gateway workload: identity, RBAC, configuration, Deployment, Service and the tenant cell.

Object names, ports, probes, resources, env variables, mounts and RBAC rules are upstream's
(``manifests/gateway/*.yaml``). Kubernetes objects are written with wire (camelCase) keys.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, assert_never

import pulumi
import pulumi_random as random
from pulumi_kubernetes.apps.v1 import Deployment
from pulumi_kubernetes.core.v1 import ConfigMap, Secret, Service, ServiceAccount
from pulumi_kubernetes.networking.v1 import NetworkPolicy
from pulumi_kubernetes.rbac.v1 import ClusterRoleBinding, Role, RoleBinding

from components import credentials, naming, network, rbac, rotation, tokens, trusted_ca
from components.credentials import DEFAULT_CREDENTIALS, GatewayCredentials, KekCredentials
from components.deployment import WorkloadSettings, deployment_spec
from components.gateway_config import (
    CONFIG_FILE,
    OidcSettings,
    gateway_config,
    render_gateway_toml,
    with_oidc,
)
from components.metadata import metadata
from components.wire import wire

SERVICE_IGNORED = ["spec.clusterIP", "spec.clusterIPs"]
"""Fields of the gateway Service the API server assigns and never changes (an adopted
Service's imported state holds them; the program does not set them)."""


@dataclass(frozen=True, kw_only=True)
class WorkloadArgs:
    namespace: str
    """Tenant namespace (already validated)."""
    namespace_ref: pulumi.Input[str]
    """The namespace as an output of the Namespace resource, for dependency ordering."""
    gateway_image: str
    """Final gateway image (precedence and mirrors applied)."""
    supervisor_image: str
    """Final supervisor image."""
    sandbox_image: str
    """Final sandbox base image."""
    settings: WorkloadSettings
    """The declaration's settings of the workload, for the Deployment."""
    server_sans: tuple[str, ...]
    """SANs of the server certificate, written to ``server_sans`` in gateway.toml."""
    db_secret: pulumi.Input[str]
    """Name of the database credentials Secret (an output of the Database component)."""
    db_uri: pulumi.Input[str]
    """The credentials' connection URI (secret); its hash rolls the pod when it changes."""
    jwt_secret: pulumi.Input[str]
    """Name of the JWT keys Secret (an output of the Pki component)."""
    server_tls_secret: pulumi.Input[str]
    """Name of the server TLS Secret (an output of the Pki component)."""
    cert_pems: pulumi.Input[list[str]]
    """CA and server certificate PEMs; their hash rolls the pod when they change."""
    node_reader_cluster_role: pulumi.Input[str]
    """Name of the cluster's shared node-reader ClusterRole."""
    openshift: bool
    """Grant the sandbox ServiceAccount the privileged SCC (OpenShift only)."""
    metrics_namespace: str | None
    """Namespace allowed to scrape the metrics port, or None."""
    labels: dict[str, str]
    """Standard labels of the gateway's objects."""
    credentials: GatewayCredentials = DEFAULT_CREDENTIALS
    """Where the gateway keeps its users' credentials (``components.credentials``)."""
    oidc: OidcSettings | None = None
    """The ``[openshell.gateway.oidc]`` table, or None: no person can sign in."""
    trusted_ca_bundle: str | None = None
    """PEM bundle of ConfigMap ``gateway-trusted-ca``, or None: no such ConfigMap."""
    kek_rotation: int = 0
    """``spec.rotation.kek``: raised, the KEK's bytes and Secret are replaced
    (:mod:`components.rotation`)."""


def config_hash(toml: str, cert_pems: list[str], db_uri: str, *extra: str) -> str:
    """SHA-256 over the config, the certificates and the database credentials (upstream hashes
    the ConfigMap, the server TLS Secret and the credentials Secret), so a change to any of them
    rolls the pod: the gateway reads them only at start. ``extra``: more the pod reads at start
    (the trusted CA bundle, then the KEK), each its own part."""
    digest = hashlib.sha256(toml.encode())
    for part in (*cert_pems, db_uri, *extra):
        digest.update(b"\0" + part.encode())
    return digest.hexdigest()


class Workload(pulumi.ComponentResource):
    """Creates: ServiceAccounts ``openshell-gateway`` and ``openshell-gateway-sandbox``; Role
    and RoleBinding ``openshell-gateway-sandbox``; ClusterRoleBinding to the shared
    node-reader ClusterRole; on OpenShift the privileged-SCC RoleBinding for sandboxes; the
    KEK Secret (default driver) or, for the kubernetes-secrets driver, Role and RoleBinding
    ``openshell-gateway-credential-secrets`` in the credential namespace; ConfigMap with
    ``gateway.toml``; Deployment and Service ``openshell-gateway``;
    the tenant NetworkPolicies (default-deny plus explicit allows)."""

    def __init__(self, name: str, args: WorkloadArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(tokens.WORKLOAD, name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        ns = args.namespace_ref

        def meta(object_name: str) -> Any:
            return metadata(object_name, args.labels, namespace=ns)

        sa = ServiceAccount(f"{name}-sa", metadata=meta(naming.GATEWAY), opts=child)
        sandbox_sa = ServiceAccount(
            f"{name}-sandbox-sa", metadata=meta(naming.SANDBOX_SA), opts=child
        )
        gateway_subject = rbac.service_account(sa.metadata.name, ns)
        role = Role(
            f"{name}-sandbox-role",
            metadata=meta(naming.SANDBOX_SA),
            rules=wire(rbac.SANDBOX_RULES),
            opts=child,
        )
        RoleBinding(
            f"{name}-sandbox-rb",
            metadata=meta(naming.SANDBOX_SA),
            role_ref=wire(rbac.role_ref("Role", role.metadata.name)),
            subjects=wire(gateway_subject),
            opts=child,
        )
        ClusterRoleBinding(
            f"{name}-node-reader-crb",
            metadata=wire(metadata(naming.cluster_role_binding(args.namespace), args.labels)),
            role_ref=wire(rbac.role_ref("ClusterRole", args.node_reader_cluster_role)),
            subjects=wire(gateway_subject),
            opts=child,
        )
        if args.openshift:
            RoleBinding(
                f"{name}-sandbox-scc-rb",
                metadata=meta(naming.PRIVILEGED_SCC_BINDING),
                role_ref=wire(rbac.role_ref("ClusterRole", naming.PRIVILEGED_SCC_CLUSTER_ROLE)),
                subjects=wire(rbac.service_account(sandbox_sa.metadata.name, ns)),
                opts=child,
            )

        kek_secret, kek = self._credential_store(name, args, meta, gateway_subject)

        toml = render_gateway_toml(
            with_oidc(
                gateway_config(
                    namespace=args.namespace,
                    sandbox_image=args.sandbox_image,
                    supervisor_image=args.supervisor_image,
                    server_sans=args.server_sans,
                    credentials=args.credentials,
                ),
                args.oidc,
            )
        )
        config_map = ConfigMap(
            f"{name}-config", metadata=meta(naming.CONFIG_MAP), data={CONFIG_FILE: toml}, opts=child
        )

        # A digest is not the secret it covers (the password is 40 random characters, the KEK
        # 32 random bytes), and a secret annotation would make the whole Deployment spec
        # secret, unreviewable. The KEK is read from the environment at start only, so a new
        # one (docs/running.md, "Rotating keys") must roll the pod too. It is the program's
        # key: an adopted namespace keeps upstream's (the Secret is create-only) until the key
        # is rotated, and the hash changes exactly when the program's key is replaced.
        bundle = () if args.trusted_ca_bundle is None else (args.trusted_ca_bundle,)
        pod_hash = pulumi.Output.unsecret(
            pulumi.Output.all(
                args.cert_pems, args.db_uri, *([kek] if kek is not None else [])
            ).apply(lambda v: config_hash(toml, v[0], v[1], *bundle, *v[2:]))
        )
        deploy_spec = deployment_spec(
            image=args.gateway_image,
            settings=args.settings,
            labels=args.labels,
            config_hash=pod_hash,
            service_account=sa.metadata.name,
            config_map=config_map.metadata.name,
            # By its constant name, not the Secret's output: a property made from the KEK
            # Secret would make the engine replace the Deployment too, deleting it first, when
            # the Secret is replaced delete-first (pulumi/pulumi v3.274.0
            # pkg/resource/deploy/step_generator.go, calculateDependentReplacements: only
            # property dependencies count, a dependsOn edge does not). Ordered after it below.
            kek_secret=naming.KEK_SECRET if kek_secret is not None else None,
            db_secret=args.db_secret,
            jwt_secret=args.jwt_secret,
            server_tls_secret=args.server_tls_secret,
            openshift=args.openshift,
            vault_token=credentials.uses_projected_token(args.credentials),
        )
        self.trusted_ca_config_map: pulumi.Output[str] | None = None
        if args.trusted_ca_bundle is not None:
            trusted = ConfigMap(
                f"{name}-trusted-ca",
                metadata=meta(trusted_ca.CONFIG_MAP),
                data={trusted_ca.KEY: args.trusted_ca_bundle},
                opts=child,
            )
            deploy_spec = trusted_ca.with_trusted_ca(deploy_spec, trusted.metadata.name)
            self.trusted_ca_config_map = trusted.metadata.name
        Deployment(
            f"{name}-deploy",
            metadata=meta(naming.GATEWAY),
            spec=wire(deploy_spec),
            opts=pulumi.ResourceOptions(
                parent=self, depends_on=[kek_secret] if kek_secret is not None else []
            ),
        )
        Service(
            f"{name}-svc",
            metadata=meta(naming.GATEWAY),
            spec=wire(
                {
                    "type": "ClusterIP",
                    "selector": naming.selector_labels(),
                    "ports": [
                        {
                            "name": "grpc",
                            "port": naming.GRPC_PORT,
                            "targetPort": "grpc",
                            "protocol": "TCP",
                            "appProtocol": "grpc",
                        },
                        {
                            "name": "metrics",
                            "port": naming.METRICS_PORT,
                            "targetPort": "metrics",
                            "protocol": "TCP",
                        },
                    ],
                }
            ),
            # An imported (adopted) Service's state holds the cluster IP the API server gave it;
            # the program sets none, and pulumi-kubernetes replaces a Service whose
            # spec.clusterIP changes (measured: tests/e2e/test_e2e_f_adoption_up.py). Keep it.
            opts=pulumi.ResourceOptions.merge(
                child, pulumi.ResourceOptions(ignore_changes=SERVICE_IGNORED)
            ),
        )
        for policy, spec in network.tenant_policies(args.namespace, args.metrics_namespace).items():
            NetworkPolicy(
                f"{name}-netpol-{policy.removeprefix('openshell-')}",
                metadata=meta(policy),
                spec=wire(spec),
                opts=child,
            )
        self.register_outputs({})

    def _credential_store(
        self,
        name: str,
        args: WorkloadArgs,
        meta: Callable[[str], Any],
        gateway_subject: list[dict[str, Any]],
    ) -> tuple[Secret | None, pulumi.Output[str] | None]:
        """The default driver's KEK Secret and its key (returned), or the kubernetes-secrets
        driver's Role and RoleBinding in the credential namespace; the Vault driver needs
        neither."""
        driver = args.credentials
        match driver:
            case KekCredentials():
                return self._kek(name, args, meta)
            case credentials.KubernetesSecretsCredentials():
                self._secrets_role(name, args, driver, gateway_subject)
                return None, None
            case credentials.VaultCredentials():
                return None, None
            case _:
                assert_never(driver)

    def _kek(
        self, name: str, args: WorkloadArgs, meta: Callable[[str], Any]
    ) -> tuple[Secret, pulumi.Output[str]]:
        """The KEK Secret of the default driver and its key."""
        kek = random.RandomBytes(
            f"{name}-kek-bytes",
            length=32,
            keepers=rotation.keepers(args.kek_rotation),
            opts=pulumi.ResourceOptions(parent=self),
        )
        secret = Secret(
            f"{name}-kek",
            metadata=meta(naming.KEK_SECRET),
            type="Opaque",
            string_data={credentials.KEK_KEY: kek.base64},
            # Create-only, never updated (upstream's rule): the gateway encrypts stored
            # credentials with this key, so an adopted namespace's key must survive `up`.
            # Rotated by replacing it with its bytes (docs/running.md, "Rotating keys"):
            # deleted first, since a forced replace gets no replace reason from the provider
            # and the engine would otherwise create "the replacement" onto the same object
            # and then delete it (e2e/divergences.py, create-takes-over). A raised
            # ``spec.rotation.kek`` replaces it with its bytes: ``replace_with`` from 1 up
            # (components.rotation; none at 0, so no deployed stack changes).
            opts=pulumi.ResourceOptions(
                parent=self,
                ignore_changes=["data", "stringData"],
                delete_before_replace=True,
                replace_with=[kek] if args.kek_rotation > 0 else None,
            ),
        )
        return secret, kek.base64

    def _secrets_role(
        self,
        name: str,
        args: WorkloadArgs,
        driver: credentials.KubernetesSecretsCredentials,
        gateway_subject: list[dict[str, Any]],
    ) -> None:
        """The kubernetes-secrets driver's Role and RoleBinding in the credential namespace."""
        external = credentials.external_namespace(driver, args.namespace)
        where = args.namespace_ref if external is None else external
        child = pulumi.ResourceOptions(parent=self)
        role = Role(
            f"{name}-credential-secrets-role",
            metadata=wire(
                metadata(credentials.CREDENTIAL_SECRETS_ROLE, args.labels, namespace=where)
            ),
            rules=wire(credentials.CREDENTIAL_SECRETS_RULES),
            opts=child,
        )
        RoleBinding(
            f"{name}-credential-secrets-rb",
            metadata=wire(
                metadata(
                    credentials.CREDENTIAL_SECRETS_ROLE,
                    args.labels,
                    namespace=where,
                    annotations=credentials.SCAN_SUPPRESSION,
                )
            ),
            role_ref=wire(rbac.role_ref("Role", role.metadata.name)),
            subjects=wire(gateway_subject),
            opts=child,
        )

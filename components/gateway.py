"""The ``Gateway`` component: one tenant's OpenShell Gateway, composed of small parts."""

from __future__ import annotations

from dataclasses import replace

import pulumi
from pulumi_kubernetes.core.v1 import Namespace

from components import naming, tokens
from components.console import Console
from components.console_types import ConsoleArgs
from components.database import Database, DatabaseArgs
from components.exposure import Exposure, ExposureArgs
from components.gateway_types import GatewayArgs
from components.hostnames import grpcs_address
from components.identity import Identity
from components.metadata import metadata
from components.pki import Pki, PkiArgs
from components.wire import wire
from components.workload import Workload, WorkloadArgs


class Gateway(pulumi.ComponentResource):
    """One tenant gateway. Creates: the Namespace; ``Pki``; ``Database``; ``Workload``;
    ``Exposure``; with Keycloak, ``Identity`` and, when enabled, ``Console``. The Kubernetes
    and PostgreSQL providers of the gateway's cluster are passed in ``opts.providers`` and
    inherited by every child; the Keycloak provider in ``args.keycloak_provider``.

    Outputs: ``namespace``, ``hostname``, ``address`` (``grpcs://<host>:443`` or None),
    ``ca_certificate`` (public PEM), ``database_name``, ``issuer`` and ``client_id`` (None
    when no person signs in; the client id is the OIDC audience), ``roles`` (the admin and
    user role names the gateway reads from tokens), ``console_address`` (``https://<host>`` of
    the web console, None without one or when it is not exposed). ``identity`` is the
    ``Identity`` component or None; ``console`` the ``Console`` or None.
    """

    namespace: pulumi.Output[str]
    hostname: pulumi.Output[str | None]
    address: pulumi.Output[str | None]
    ca_certificate: pulumi.Output[str]
    database_name: pulumi.Output[str]
    issuer: pulumi.Output[str | None]
    client_id: pulumi.Output[str | None]
    roles: pulumi.Output[list[str]]
    console_address: pulumi.Output[str | None]
    identity: Identity | None
    console: Console | None

    def __init__(self, name: str, args: GatewayArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(tokens.GATEWAY, name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        labels = naming.standard_labels(name)
        host = args.exposure.host

        namespace = Namespace(
            f"{name}-ns",
            metadata=wire(
                metadata(
                    args.namespace,
                    {
                        "app.kubernetes.io/managed-by": labels["app.kubernetes.io/managed-by"],
                        naming.MANAGED_LABEL: "true",
                        naming.GATEWAY_LABEL: name,
                    },
                )
            ),
            opts=child,
        )
        ns = namespace.metadata.name

        sans = naming.service_names(args.namespace) + ((host,) if host else ())
        pki = Pki(
            f"{name}-pki",
            PkiArgs(namespace=ns, server_dns_names=sans, labels=labels, rotation=args.rotation),
            opts=child,
        )
        database = Database(
            f"{name}-database",
            DatabaseArgs(
                identifier=args.database_name,
                namespace=ns,
                host=args.database_host,
                port=args.database_port,
                endpoint=args.database_endpoint,
                retain_on_delete=args.retain_database,
                labels=naming.standard_labels(name, component="database"),
                rotation=args.rotation.database_password,
            ),
            opts=child,
        )
        workload = Workload(
            f"{name}-workload",
            WorkloadArgs(
                namespace=args.namespace,
                namespace_ref=ns,
                gateway_image=args.images.gateway,
                supervisor_image=args.images.supervisor,
                sandbox_image=args.images.sandbox,
                settings=args.settings,
                server_sans=sans,
                db_secret=database.credentials_secret,
                db_uri=database.credentials_uri,
                jwt_secret=pki.jwt_secret,
                server_tls_secret=pki.server_tls_secret,
                cert_pems=pulumi.Output.all(pki.ca_cert_pem, pki.server_cert_pem),
                node_reader_cluster_role=args.node_reader_cluster_role,
                openshift=args.openshift,
                metrics_namespace=args.metrics_namespace,
                labels=labels,
                credentials=args.credentials,
                oidc=args.oidc,
                trusted_ca_bundle=args.trusted_ca_bundle,
                kek_rotation=args.rotation.kek,
            ),
            opts=child,
        )
        self.identity = (
            Identity(
                f"{name}-identity",
                replace(args.identity, provider=args.keycloak_provider),
                opts=child,
            )
            if args.identity is not None
            else None
        )
        Exposure(
            f"{name}-exposure",
            ExposureArgs(
                exposure=args.exposure,
                namespace=args.namespace,
                namespace_ref=ns,
                ca_cert_pem=pki.ca_cert_pem,
                labels=labels,
            ),
            opts=child,
        )

        self.console = (
            self._console(name, args, ns, pki, workload, child)
            if args.console is not None and self.identity is not None
            else None
        )

        self.namespace = ns
        self.hostname = pulumi.Output.from_input(host)
        self.address = pulumi.Output.from_input(grpcs_address(host) if host else None)
        self.ca_certificate = pki.ca_cert_pem
        self.database_name = database.database_name
        oidc = args.oidc
        self.issuer = pulumi.Output.from_input(oidc.issuer if oidc is not None else None)
        self.client_id = (
            self.identity.client_id
            if self.identity is not None
            else pulumi.Output.from_input(oidc.audience if oidc is not None else None)
        )
        self.roles = pulumi.Output.from_input(
            [r for r in (oidc.admin_role, oidc.user_role) if r] if oidc is not None else []
        )
        self.console_address = (
            self.console.address if self.console is not None else pulumi.Output.from_input(None)
        )
        self.register_outputs(
            {
                "console_address": self.console_address,
                "roles": self.roles,
                "issuer": self.issuer,
                "client_id": self.client_id,
                "namespace": self.namespace,
                "hostname": self.hostname,
                "address": self.address,
                "ca_certificate": self.ca_certificate,
                "database_name": self.database_name,
            }
        )

    def _console(
        self,
        name: str,
        args: GatewayArgs,
        ns: pulumi.Output[str],
        pki: Pki,
        workload: Workload,
        child: pulumi.ResourceOptions,
    ) -> Console:
        identity = self.identity
        assert identity is not None and args.identity is not None and args.console is not None
        return Console(
            f"{name}-console",
            ConsoleArgs(
                settings=args.console,
                namespace=args.namespace,
                namespace_ref=ns,
                realm=args.identity.realm,
                issuer=args.identity.issuer,
                gateway_client_id=args.identity.client_id,
                gateway_role_ids=tuple(role.id for _, role in sorted(identity.roles.items())),
                openshift=args.openshift,
                server_tls_secret=pki.server_tls_secret,
                client_tls_secret=pki.client_tls_secret,
                trusted_ca_config_map=workload.trusted_ca_config_map,
                labels=naming.standard_labels(name, component="console"),
                provider=args.keycloak_provider,
                rotation=args.rotation,
            ),
            opts=child,
        )

"""The tenant's PostgreSQL role and database (pulumi-postgresql + pulumi-random).

Upstream drops both when a gateway is deleted; here they are retained unless the declaration
says ``deletionPolicy: Delete`` (docs/upstream-differences.md, "6. Declarative, and tenant
data retained").

The PUBLIC revoke runs as the tenant role itself, through a provider that logs in as it
(docs/design-notes.md, "Tenant databases are isolated by their owner"): only a database's
owner can revoke PUBLIC's default CONNECT and TEMPORARY, and the cluster's admin is not the
owner and keeps no inheriting membership in tenant roles.
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass

import pulumi
import pulumi_postgresql as postgresql
import pulumi_random as random
from pulumi_kubernetes.core.v1 import Secret

from components import naming, rotation, tokens
from components.database_types import DatabaseEndpoint
from components.metadata import metadata
from components.wire import wire


@dataclass(frozen=True, kw_only=True)
class DatabaseArgs:
    identifier: str
    """Role and database name, ``gw_<name>``."""
    namespace: pulumi.Input[str]
    """Tenant namespace that receives the credentials Secret."""
    host: str
    """Database host as the gateway pods reach it."""
    port: int
    """Database port as the gateway pods reach it."""
    endpoint: DatabaseEndpoint
    """The server as Pulumi reaches it, for the provider that logs in as the tenant role."""
    retain_on_delete: bool
    """Keep the role and database in PostgreSQL when the gateway is deleted."""
    labels: dict[str, str]
    """Labels for the credentials Secret."""
    rotation: int = 0
    """``spec.rotation.databasePassword``: raised, the password is replaced
    (:mod:`components.rotation`)."""


def _uri(user: str, password: str, host: str, port: int, dbname: str) -> str:
    quoted = urllib.parse.quote(password, safe="")
    return f"postgresql://{user}:{quoted}@{host}:{port}/{dbname}?sslmode=require"


class Database(pulumi.ComponentResource):
    """Creates: a random password; Role ``gw_<name>`` (login); Database ``gw_<name>`` owned by
    it; a ``postgresql`` provider ``<name>-db-owner`` (a child of the stack, not of this
    component: see below) that logs in as that role to that database
    (``sslmode=verify-full``); a Grant, through it, revoking every privilege from PUBLIC;
    Secret ``openshell-gateway-db-credentials`` (host, port, dbname, user, password, uri with
    ``sslmode=require``).

    The Role and Database use the ``postgresql`` provider handed down by the parent (the
    cluster's admin provider, ``sslmode=verify-full``)."""

    database_name: pulumi.Output[str]
    credentials_secret: pulumi.Output[str]

    def __init__(self, name: str, args: DatabaseArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(tokens.DATABASE, name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        # Retain: deleting a declaration must not drop a tenant's data
        # (docs/upstream-differences.md, "6. Declarative, and tenant data retained").
        keep = pulumi.ResourceOptions(parent=self, retain_on_delete=args.retain_on_delete)

        # A raised counter replaces the password (keepers: components.rotation); the Role's
        # password, the owner's provider, the Secret and the pod's hash follow.
        password = random.RandomPassword(
            f"{name}-db-password",
            length=40,
            special=False,
            keepers=rotation.keepers(args.rotation),
            opts=child,
        )
        role = postgresql.Role(
            f"{name}-db-role",
            name=args.identifier,
            login=True,
            password=password.result,
            opts=keep,
        )
        database = postgresql.Database(
            f"{name}-db", name=args.identifier, owner=role.name, opts=keep
        )
        # Only the owner can revoke PUBLIC's default CONNECT and TEMPORARY: run as anyone else,
        # REVOKE only warns, and the Grant then reads back [CONNECT, TEMPORARY] for PUBLIC on
        # every refresh. For object_type "database" the provider grants itself no owner role
        # first (terraform-provider-postgresql, resource_postgresql_grant.go, getRolesToGrant
        # returns none; resourcePostgreSQLGrantCreateOrUpdate then runs createRevokeQuery's
        # REVOKE ALL PRIVILEGES ON DATABASE as the provider's user), so the Grant goes through
        # a provider that logs in as the owner. Its configuration is lazy (provider.go,
        # providerConfigure opens no connection; helpers.go, PGResourceFunc connects at the
        # first operation), and it is used only by the Grant, which depends on the Database,
        # which depends on the Role: the engine runs the Grant's steps after theirs (and after
        # the Role's password is set). username and database are the identifier itself, not
        # the Role's and Database's outputs, so that the provider depends on the password
        # alone: the engine creates every provider of a targeted `up` (step_generator.go,
        # isImplicitlyTargetedResource), and adoption's `up --target` (docs/adoption.md)
        # must create it before the import adopts the Role and Database.
        # database: the tenant's own, so the role needs CONNECT nowhere else (the Grant's
        # transactions use it too: helpers.go, startTransaction reuses the provider's client
        # when the database is the configured one).
        # On a new gateway's first preview the password is unknown, so this provider is
        # unconfigured: the engine then previews the Grant's outputs as unknown instead of
        # calling the provider (pulumi/pulumi pkg/resource/deploy/providers/registry.go, the
        # provider's config with unknowns; CHANGELOG: "Fix the preview experience for
        # unconfigured providers ... the engine will treat all outputs as unknown").
        owner = postgresql.Provider(
            f"{name}-db-owner",
            host=args.endpoint.host,
            port=args.endpoint.port,
            username=args.identifier,
            password=password.result,
            database=args.identifier,
            sslmode="verify-full",
            sslrootcert=args.endpoint.ssl_root_cert,
            superuser=False,
            # Outside the gateway's subtree (a child of the stack), so that `pulumi state move`
            # of the Gateway component can move its shard: the CLI never moves a provider
            # (pulumi/pulumi v3.274.0 pkg/cmd/pulumi/state/state_move.go, "cannot move
            # providers"; the moved resources' providers are copied into the destination,
            # re-parented to its stack when their parent stays), so a provider left behind
            # under a moved parent fails the snapshot's integrity check. The alias keeps the
            # URN it had as the Database component's child: no deployed stack replaces it
            # (an aliased provider is the same provider to the resources that use it:
            # pkg/resource/deploy/step_generator.go, providerChanged reads sg.aliased).
            opts=pulumi.ResourceOptions(aliases=[pulumi.Alias(parent=self)]),
        )
        postgresql.Grant(
            f"{name}-db-revoke-public",
            database=database.name,
            role="public",
            object_type="database",
            privileges=[],
            # The owner's provider: deleted after this Grant, which is deleted before the
            # Database and Role it depends on, so a Delete revokes as the owner too.
            opts=pulumi.ResourceOptions(parent=self, provider=owner),
        )

        uri: pulumi.Output[str] = pulumi.Output.all(
            role.name, password.result, database.name
        ).apply(lambda v: _uri(v[0], v[1], args.host, args.port, v[2]))
        credentials = Secret(
            f"{name}-db-credentials",
            metadata=wire(metadata(naming.DB_SECRET, args.labels, namespace=args.namespace)),
            type="Opaque",
            string_data={
                "host": args.host,
                "port": str(args.port),
                "dbname": database.name,
                "user": role.name,
                "password": password.result,
                "uri": uri,  # secret: derived from the password
            },
            opts=child,
        )

        self.database_name = database.name
        self.credentials_secret = credentials.metadata.name
        self.credentials_uri = uri
        self.register_outputs({"database_name": self.database_name})

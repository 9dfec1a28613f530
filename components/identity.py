"""Sign-in for one gateway through the cluster's Keycloak (upstream §7.5, declaratively).

Upstream's control plane creates, per gateway, a public OpenID client with two client roles and
three protocol mappers (``internal/keycloak/client.go``); here they are Pulumi resources of the
pulumi-keycloak provider (which bridges keycloak/terraform-provider-keycloak v5.9.0), so a
changed declaration changes them and a deleted gateway deletes them. Who holds the roles is
declared too: each principal of ``spec.access`` is looked up (never created) and gets one role
mapping resource of its own.

Provider behaviour this module relies on (terraform-provider-keycloak, ``provider/``):

- ``resource_keycloak_openid_client.go``, ``getOpenidClientFromData``: ``access_type`` PUBLIC
  sets ``publicClient``; ``valid_redirect_uris`` need the standard flow (it is on);
  ``pkce_code_challenge_method`` and ``oauth2_device_authorization_grant_enabled`` are client
  attributes; ``full_scope_allowed`` defaults to true, so it is set to false explicitly.
- ``resource_keycloak_openid_client_default_scopes.go``, create: attaches the listed scopes and
  detaches every other default scope of the client (the list is the whole truth).
- ``resource_keycloak_group_roles.go`` / ``resource_keycloak_user_roles.go``: ``exhaustive``
  defaults to true, which removes every role mapping the resource does not list, other
  gateways' included. With false the resource adds its ``role_ids``, removes from Keycloak
  exactly the ids dropped from its list (``Reconcile``: ``role_ids`` change), and on delete
  removes only its own ids. One resource per principal per gateway, so removing a principal
  from the declaration deletes exactly its mapping.
- ``data_source_keycloak_group.go`` (``group_path``, ``GetGroupByPath``: "group not found at
  path: <path>") and ``data_source_keycloak_user.go`` ("user with username <name> not
  found"): a principal that does not exist fails the preview with its name.
"""

from __future__ import annotations

import pulumi
import pulumi_keycloak as keycloak

from components import keycloak_client, tokens
from components.identity_types import (
    ADMIN_ROLE,
    REDIRECT_URIS,
    ROLES_CLAIM,
    USER_ROLE,
    IdentityArgs,
    KeycloakServerArgs,
    grants,
    principal_suffix,
    server_key,
)


def keycloak_provider(args: KeycloakServerArgs) -> keycloak.Provider:
    """The provider of one Keycloak server (terraform-provider-keycloak ``provider/provider.go``:
    ``client_id`` + ``client_secret`` with no user name is the client-credentials grant;
    ``realm`` is the realm the admin client logs in to; ``root_ca_certificate`` is PEM text)."""
    return keycloak.Provider(
        server_key(args.url, args.realm, args.admin_client_id),
        url=args.url,
        realm=args.realm,
        client_id=args.admin_client_id,
        client_secret=args.admin_client_secret,
        root_ca_certificate=args.root_ca_certificate,
        # Keycloak 17+ serves the admin API without the legacy /auth prefix.
        base_path="",
    )


class Identity(pulumi.ComponentResource):
    """The gateway's Keycloak client. Creates: the public OpenID client; its default scopes;
    client roles ``openshell-admin`` and ``openshell-user``; protocol mappers (audience = the
    client id in the access token, ``sub``, client roles into the multivalued claim
    ``hypershell.roles``); one role mapping per declared principal (looked up, not created).
    The Keycloak provider comes in ``args.provider``.

    Outputs: ``client_id``, ``issuer``, ``client`` (the resource, for a second client or a
    console to build on), ``roles`` (role name → role resource) and ``provider``.
    """

    client_id: pulumi.Output[str]
    issuer: pulumi.Output[str]

    def __init__(self, name: str, args: IdentityArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(tokens.IDENTITY, name, None, opts)
        provider = self.provider = args.provider
        child = pulumi.ResourceOptions(parent=self, provider=provider)
        realm = args.realm
        self.client = keycloak_client.client(
            name,
            realm=realm,
            client_id=args.client_id,
            access_type="PUBLIC",
            direct_access_grants=True,
            redirect_uris=REDIRECT_URIS,
            device_grant=True,
            opts=child,
        )
        keycloak_client.default_scopes(name, realm=realm, client=self.client, opts=child)
        self.roles = {
            role: keycloak.Role(
                f"{name}-{suffix}",
                realm_id=realm,
                client_id=self.client.id,
                name=role,
                description=description,
                opts=child,
            )
            for role, suffix, description in (
                (ADMIN_ROLE, "admin-role", "Administers the OpenShell gateway"),
                (USER_ROLE, "user-role", "Uses the OpenShell gateway"),
            )
        }
        keycloak.openid.AudienceProtocolMapper(
            f"{name}-audience",
            realm_id=realm,
            client_id=self.client.id,
            name="audience",
            included_client_audience=self.client.client_id,
            add_to_access_token=True,
            add_to_id_token=False,
            opts=child,
        )
        keycloak.openid.SubProtocolMapper(
            f"{name}-sub",
            realm_id=realm,
            client_id=self.client.id,
            name="sub",
            add_to_access_token=True,
            opts=child,
        )
        keycloak.openid.UserClientRoleProtocolMapper(
            f"{name}-roles-claim",
            realm_id=realm,
            client_id=self.client.id,
            name="client roles",
            claim_name=ROLES_CLAIM,
            claim_value_type="String",
            multivalued=True,
            client_id_for_role_mappings=self.client.client_id,
            add_to_access_token=True,
            add_to_id_token=True,
            add_to_userinfo=True,
            opts=child,
        )
        lookup = pulumi.InvokeOutputOptions(parent=self, provider=provider)
        for principal, roles in grants(args).items():
            role_ids = [self.roles[role].id for role in roles]
            resource = f"{name}-access-{principal_suffix(principal)}"
            # Only these roles: other gateways' (and people's) mappings stay (above).
            if principal.kind == "group":
                group = keycloak.get_group_output(
                    realm_id=realm, group_path=principal.name, opts=lookup
                )
                keycloak.GroupRoles(
                    resource,
                    realm_id=realm,
                    group_id=group.id,
                    role_ids=role_ids,
                    exhaustive=False,
                    opts=child,
                )
            else:
                user = keycloak.get_user_output(
                    realm_id=realm, username=principal.name, opts=lookup
                )
                keycloak.UserRoles(
                    resource,
                    realm_id=realm,
                    user_id=user.id,
                    role_ids=role_ids,
                    exhaustive=False,
                    opts=child,
                )
        self.client_id = self.client.client_id
        self.issuer = pulumi.Output.from_input(args.issuer)
        self.register_outputs({"client_id": self.client_id, "issuer": self.issuer})

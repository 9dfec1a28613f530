"""The pieces a Keycloak OpenID client of ours is made of, in one place: the client, its default
scopes and its protocol mappers (audience, ``sub``, the client roles claim). The gateway's
public client (``components.identity``) and the console's confidential one
(``components.console_client``) register them, each in its own order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import pulumi
import pulumi_keycloak as keycloak

from components.identity_types import DEFAULT_SCOPES, PKCE_METHOD, ROLES_CLAIM


def client(
    name: str,
    *,
    realm: pulumi.Input[str],
    client_id: str,
    access_type: Literal["PUBLIC", "CONFIDENTIAL"],
    direct_access_grants: bool,
    redirect_uris: Sequence[str],
    opts: pulumi.ResourceOptions,
    web_origins: Sequence[str] | None = None,
    device_grant: bool | None = None,
) -> keycloak.openid.Client:
    """``<name>-client``: the standard flow with PKCE, no implicit flow, no service account and
    only the scopes it is given (``full_scope_allowed=False``).

    ``web_origins`` and ``device_grant`` left None are not sent: the SDK drops an input that
    serializes to None (pulumi ``runtime/rpc.py`` ``serialize_properties``: "We treat properties
    that serialize to None as if they don't exist"), so the provider keeps its default, as when
    the argument is not given; test_e2e_d_keycloak and test_e2e_h_console create both clients
    for real."""
    return keycloak.openid.Client(
        f"{name}-client",
        realm_id=realm,
        client_id=client_id,
        name=client_id,
        enabled=True,
        access_type=access_type,
        standard_flow_enabled=True,
        direct_access_grants_enabled=direct_access_grants,
        implicit_flow_enabled=False,
        service_accounts_enabled=False,
        full_scope_allowed=False,
        valid_redirect_uris=list(redirect_uris),
        web_origins=list(web_origins) if web_origins is not None else None,
        pkce_code_challenge_method=PKCE_METHOD,
        oauth2_device_authorization_grant_enabled=device_grant,
        opts=opts,
    )


def default_scopes(
    name: str,
    *,
    realm: pulumi.Input[str],
    client: keycloak.openid.Client,
    opts: pulumi.ResourceOptions,
) -> keycloak.openid.ClientDefaultScopes:
    return keycloak.openid.ClientDefaultScopes(
        f"{name}-client-scopes",
        realm_id=realm,
        client_id=client.id,
        default_scopes=list(DEFAULT_SCOPES),
        opts=opts,
    )


def audience_mapper(
    name: str,
    *,
    realm: pulumi.Input[str],
    client: keycloak.openid.Client,
    audience: pulumi.Input[str],
    opts: pulumi.ResourceOptions,
) -> keycloak.openid.AudienceProtocolMapper:
    """``audience``: the gateway's client id in the access token's ``aud``."""
    return keycloak.openid.AudienceProtocolMapper(
        f"{name}-audience",
        realm_id=realm,
        client_id=client.id,
        name="audience",
        included_client_audience=audience,
        add_to_access_token=True,
        add_to_id_token=False,
        opts=opts,
    )


def sub_mapper(
    name: str,
    *,
    realm: pulumi.Input[str],
    client: keycloak.openid.Client,
    opts: pulumi.ResourceOptions,
) -> keycloak.openid.SubProtocolMapper:
    """``sub`` in the access token."""
    return keycloak.openid.SubProtocolMapper(
        f"{name}-sub",
        realm_id=realm,
        client_id=client.id,
        name="sub",
        add_to_access_token=True,
        opts=opts,
    )


def roles_claim_mapper(
    name: str,
    *,
    realm: pulumi.Input[str],
    client: keycloak.openid.Client,
    mapper_name: str,
    roles_of: pulumi.Input[str],
    opts: pulumi.ResourceOptions,
) -> keycloak.openid.UserClientRoleProtocolMapper:
    """The user's roles of client ``roles_of`` as the multivalued :data:`ROLES_CLAIM`, in the
    access and ID tokens."""
    return keycloak.openid.UserClientRoleProtocolMapper(
        f"{name}-roles-claim",
        realm_id=realm,
        client_id=client.id,
        name=mapper_name,
        claim_name=ROLES_CLAIM,
        claim_value_type="String",
        multivalued=True,
        client_id_for_role_mappings=roles_of,
        add_to_access_token=True,
        add_to_id_token=True,
        opts=opts,
    )

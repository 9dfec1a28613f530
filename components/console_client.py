"""The console's sign-in: its confidential Keycloak client (default scopes, protocol mappers,
scope mappings of the gateway client's roles) and Secret ``openshell-console-oauth2`` holding
the client secret and oauth2-proxy's cookie secret.

Provider behaviour relied on:

- terraform-provider-keycloak ``provider/resource_keycloak_openid_client.go``: ``access_type``
  CONFIDENTIAL (``publicClient`` false); with no ``client_secret`` given, Keycloak generates one
  and the resource reads it back into ``client_secret``, which the schema marks ``Sensitive``
  and pulumi-keycloak lists in ``additional_secret_outputs`` (``sdk/python/pulumi_keycloak/
  openid/client.py``: ``clientSecret``), so it stays a secret Output into the Secret.
- ``resource_keycloak_generic_role_mapper.go``: one scope mapping (``role_id`` on ``client_id``)
  per resource; with ``full_scope_allowed`` false only mapped roles reach the token, so the
  console client gets the gateway client's two roles (upstream's ``addConsoleScopeMappings``).
- hashicorp/terraform-provider-random ``internal/provider/resource_bytes.go``: ``length`` and
  ``keepers`` force a new resource; otherwise the bytes are read from the state on every run,
  so the cookie secret is generated once and kept (sessions survive ``pulumi up``). ``base64``
  is ``Sensitive`` (a secret Output here).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pulumi
import pulumi_keycloak as keycloak
import pulumi_random as random
from pulumi_kubernetes.core.v1 import Secret

from components import keycloak_client, rotation
from components.console_types import (
    CALLBACK_PATH,
    CLIENT_SECRET_KEY,
    COOKIE_BYTES,
    COOKIE_SECRET_KEY,
    SECRET,
    ConsoleArgs,
    console_url,
)


def console_client(
    name: str, args: ConsoleArgs, client_id: str, opts: pulumi.ResourceOptions
) -> keycloak.openid.Client:
    """The confidential client ``client_id``, its default scopes, three protocol mappers and
    one scope mapping per role of the gateway client; ``opts`` carry the Keycloak provider."""
    realm = args.realm
    url = console_url(args.settings.exposure)
    client = keycloak_client.client(
        name,
        realm=realm,
        client_id=client_id,
        access_type="CONFIDENTIAL",
        direct_access_grants=False,
        # The console's own callback only (issue 13).
        redirect_uris=[url + CALLBACK_PATH],
        web_origins=[url],
        opts=opts,
    )
    keycloak_client.default_scopes(name, realm=realm, client=client, opts=opts)
    keycloak_client.audience_mapper(
        name, realm=realm, client=client, audience=args.gateway_client_id, opts=opts
    )
    keycloak_client.roles_claim_mapper(
        name,
        realm=realm,
        client=client,
        mapper_name="client-roles",
        roles_of=args.gateway_client_id,
        opts=opts,
    )
    keycloak_client.sub_mapper(name, realm=realm, client=client, opts=opts)
    for index, role_id in enumerate(args.gateway_role_ids):
        keycloak.GenericRoleMapper(
            f"{name}-scope-{index}",
            realm_id=realm,
            client_id=client.id,
            role_id=role_id,
            opts=opts,
        )
    return client


def _url_safe(standard: str) -> str:
    """Standard base64 with padding → base64url without padding (Go's RawURLEncoding, which
    upstream's ``generateConsoleCookieSecret`` uses)."""
    return standard.replace("+", "-").replace("/", "_").rstrip("=")


def oauth2_secret(
    name: str,
    client: keycloak.openid.Client,
    meta: Callable[..., Any],
    opts: pulumi.ResourceOptions,
    counter: int = 0,
) -> Secret:
    """The cookie secret's random bytes and Secret ``openshell-console-oauth2``; ``counter``
    (``spec.rotation.consoleCookie``) raised, new bytes (:mod:`components.rotation`)."""
    cookie = random.RandomBytes(
        f"{name}-cookie-bytes",
        length=COOKIE_BYTES,
        keepers=rotation.keepers(counter),
        opts=opts,
    )
    return Secret(
        f"{name}-oauth2",
        metadata=meta(SECRET),
        type="Opaque",
        string_data={
            # Both are secret outputs (module docstring), and ``apply`` keeps them so.
            CLIENT_SECRET_KEY: client.client_secret,
            COOKIE_SECRET_KEY: cookie.base64.apply(_url_safe),
        },
        opts=opts,
    )

"""The README's Keycloak prerequisites, against a real Keycloak (e2e/keycloak.py).

The keycloak provider cannot be built here (e2e/engine.py), so its calls are made directly:
each is the admin REST call terraform-provider-keycloak makes for the resource named beside
it (keycloak/terraform-provider-keycloak, ``keycloak/*.go``), with the values the program
registers for the ``e2e-local`` stack's ``dev-build`` gateway (its offline plan). The claim
under test is the README's: a provisioning client holding exactly the listed
``realm-management`` roles can make every one of them, and without ``manage-users`` it cannot
grant the gateway's roles.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from e2e import build
from e2e.keycloak import Keycloak
from e2e.project import E2EProject
from tests.e2e.lane import rendered

REALM = "hypershell"
ADMIN_CLIENT = "hypershell-gateways-admin"  # Pulumi.local.yaml: identity.keycloak.adminClientId
README_ROLES = [
    "manage-clients",
    "view-clients",
    "query-groups",
    "view-users",
    "manage-users",
    "view-realm",
]


def _ok(response: Any, *codes: int) -> Any:
    assert response.status_code in codes, (
        response.request.method,
        response.url,
        response.status_code,
        response.text[:500],
    )
    return response


def _provisioner(kc: Keycloak, admin: str, client_id: str, roles: list[str]) -> str:
    """A confidential client with service accounts and ``roles`` of realm-management; its secret."""
    _ok(
        kc.admin(
            "POST",
            f"/{REALM}/clients",
            admin,
            json={
                "clientId": client_id,
                "publicClient": False,
                "serviceAccountsEnabled": True,
                "standardFlowEnabled": False,
                "directAccessGrantsEnabled": False,
            },
        ),
        201,
    )
    uuid = _ok(
        kc.admin("GET", f"/{REALM}/clients", admin, params={"clientId": client_id}), 200
    ).json()[0]["id"]
    account = _ok(
        kc.admin("GET", f"/{REALM}/clients/{uuid}/service-account-user", admin), 200
    ).json()
    management = _ok(
        kc.admin("GET", f"/{REALM}/clients", admin, params={"clientId": "realm-management"}), 200
    ).json()[0]
    available = _ok(
        kc.admin("GET", f"/{REALM}/clients/{management['id']}/roles", admin), 200
    ).json()
    chosen = [r for r in available if r["name"] in roles]
    assert sorted(r["name"] for r in chosen) == sorted(roles)
    _ok(
        kc.admin(
            "POST",
            f"/{REALM}/users/{account['id']}/role-mappings/clients/{management['id']}",
            admin,
            json=chosen,
        ),
        204,
    )
    return str(
        _ok(kc.admin("GET", f"/{REALM}/clients/{uuid}/client-secret", admin), 200).json()["value"]
    )


@pytest.fixture(scope="module")
def realm(keycloak: Keycloak) -> dict[str, str]:
    return make_realm(keycloak)


def make_realm(keycloak: Keycloak) -> dict[str, str]:
    """The README's prerequisites 1-3, made by the bootstrap administrator; the secrets of a
    provisioner with exactly the README's roles and of one without ``manage-users``."""
    admin = keycloak.admin_token()
    _ok(keycloak.admin("POST", "", admin, json={"realm": REALM, "enabled": True}), 201)
    _ok(keycloak.admin("POST", f"/{REALM}/groups", admin, json={"name": "team-a"}), 201)
    _ok(
        keycloak.admin(
            "POST", f"/{REALM}/users", admin, json={"username": "alice", "enabled": True}
        ),
        201,
    )
    return {
        "full": _provisioner(keycloak, admin, ADMIN_CLIENT, README_ROLES),
        "no-manage-users": _provisioner(
            keycloak,
            admin,
            f"{ADMIN_CLIENT}-lesser",
            [r for r in README_ROLES if r != "manage-users"],
        ),
    }


def _client_inputs(project: E2EProject, gateway: str) -> dict[str, Any]:
    plan = json.loads(rendered(project).files["plan.json"])
    clients = [
        r
        for r in plan["resources"]
        if r["type"] == "keycloak:openid/client:Client"
        and r["name"] == f"{gateway}-identity-client"
    ]
    assert len(clients) == 1, [
        r["name"] for r in plan["resources"] if r["type"].startswith("keycloak:")
    ]
    return dict(clients[0]["inputs"])


def _as(keycloak: Keycloak, client_id: str, secret: str) -> str:
    return keycloak.token(
        realm=REALM, grant_type="client_credentials", client_id=client_id, client_secret=secret
    )


def test_provisioner_with_the_readme_roles_makes_every_call(
    keycloak: Keycloak, realm: dict[str, str], projects: dict[str, E2EProject]
) -> None:
    inputs = _client_inputs(projects["e2e-local"], "dev-build")
    token = _as(keycloak, ADMIN_CLIENT, realm["full"])
    # keycloak_openid_client (openid_client.go, NewOpenidClient: POST /clients)
    _ok(
        keycloak.admin(
            "POST",
            f"/{REALM}/clients",
            token,
            json={
                "clientId": inputs["clientId"],
                "publicClient": inputs["accessType"] == "PUBLIC",
                "standardFlowEnabled": inputs["standardFlowEnabled"],
                "directAccessGrantsEnabled": inputs["directAccessGrantsEnabled"],
                "fullScopeAllowed": inputs["fullScopeAllowed"],
                "redirectUris": inputs["validRedirectUris"],
                "attributes": {
                    "pkce.code.challenge.method": inputs["pkceCodeChallengeMethod"],
                    "oauth2.device.authorization.grant.enabled": str(
                        inputs["oauth2DeviceAuthorizationGrantEnabled"]
                    ).lower(),
                },
            },
        ),
        201,
    )
    client = _ok(
        keycloak.admin("GET", f"/{REALM}/clients", token, params={"clientId": inputs["clientId"]}),
        200,
    ).json()
    assert len(client) == 1
    uuid = client[0]["id"]
    # keycloak_role (role.go: POST /clients/{id}/roles)
    for role in ("openshell-admin", "openshell-user"):
        _ok(
            keycloak.admin("POST", f"/{REALM}/clients/{uuid}/roles", token, json={"name": role}),
            201,
        )
    # keycloak_openid_audience_protocol_mapper
    # (generic_protocol_mapper.go: POST protocol-mappers/models)
    _ok(
        keycloak.admin(
            "POST",
            f"/{REALM}/clients/{uuid}/protocol-mappers/models",
            token,
            json={
                "name": "audience",
                "protocol": "openid-connect",
                "protocolMapper": "oidc-audience-mapper",
                "config": {
                    "included.client.audience": inputs["clientId"],
                    "access.token.claim": "true",
                },
            },
        ),
        201,
    )
    # keycloak_openid_client_default_scopes
    # (openid_client.go: GET client-scopes, PUT default-client-scopes/{id})
    scopes = {
        s["name"]: s["id"]
        for s in _ok(keycloak.admin("GET", f"/{REALM}/client-scopes", token), 200).json()
    }
    _ok(
        keycloak.admin(
            "PUT", f"/{REALM}/clients/{uuid}/default-client-scopes/{scopes['profile']}", token
        ),
        204,
    )
    # data keycloak_group / keycloak_user (group.go GetGroupByPath, user.go GetUserByUsername)
    group = _ok(keycloak.admin("GET", f"/{REALM}/group-by-path/team-a", token), 200).json()
    # user.go GetUserByUsername sends no `exact`: Keycloak answers every user whose name
    # contains it, and the provider keeps the one whose name is the same (lower-cased).
    found = _ok(
        keycloak.admin("GET", f"/{REALM}/users", token, params={"username": "alice"}), 200
    ).json()
    users = [u for u in found if u["username"].lower() == "alice"]
    assert [u["username"] for u in users] == ["alice"]
    # keycloak_group_roles / keycloak_user_roles (group_roles.go: POST role-mappings/clients/{id})
    roles = _ok(keycloak.admin("GET", f"/{REALM}/clients/{uuid}/roles", token), 200).json()
    _ok(
        keycloak.admin(
            "POST", f"/{REALM}/groups/{group['id']}/role-mappings/clients/{uuid}", token, json=roles
        ),
        204,
    )
    _ok(
        keycloak.admin(
            "POST",
            f"/{REALM}/users/{users[0]['id']}/role-mappings/clients/{uuid}",
            token,
            json=[r for r in roles if r["name"] == "openshell-user"],
        ),
        204,
    )
    mapped = _ok(
        keycloak.admin("GET", f"/{REALM}/groups/{group['id']}/role-mappings/clients/{uuid}", token),
        200,
    ).json()
    assert sorted(r["name"] for r in mapped) == ["openshell-admin", "openshell-user"]
    # deleting the gateway deletes its client (openid_client.go: DELETE /clients/{id})
    _ok(keycloak.admin("DELETE", f"/{REALM}/clients/{uuid}", token), 204)


def test_without_manage_users_the_roles_cannot_be_granted(
    keycloak: Keycloak, realm: dict[str, str]
) -> None:
    token = _as(keycloak, f"{ADMIN_CLIENT}-lesser", realm["no-manage-users"])
    _ok(
        keycloak.admin(
            "POST",
            f"/{REALM}/clients",
            token,
            json={"clientId": "openshell-probe", "publicClient": True},
        ),
        201,
    )
    uuid = _ok(
        keycloak.admin("GET", f"/{REALM}/clients", token, params={"clientId": "openshell-probe"}),
        200,
    ).json()[0]["id"]
    _ok(
        keycloak.admin(
            "POST", f"/{REALM}/clients/{uuid}/roles", token, json={"name": "openshell-user"}
        ),
        201,
    )
    group = _ok(keycloak.admin("GET", f"/{REALM}/group-by-path/team-a", token), 200).json()
    roles = _ok(keycloak.admin("GET", f"/{REALM}/clients/{uuid}/roles", token), 200).json()
    refused = keycloak.admin(
        "POST", f"/{REALM}/groups/{group['id']}/role-mappings/clients/{uuid}", token, json=roles
    )
    assert refused.status_code == 403
    assert build.load_versions()["keycloak"]["version"].startswith("26.")

"""Keycloak, for real (e2e/keycloak.py): the README's prerequisites, and the program's Keycloak
objects made, read, updated, deleted and imported by the engine through the keycloak stand-in
(e2e/providers/keycloak.py).

The README's claim: a provisioning client holding exactly the listed ``realm-management``
roles can make every call the provider makes (each named beside it: keycloak/terraform-
provider-keycloak v5.9.0, ``keycloak/*.go``), and without ``manage-users`` it cannot grant the
gateway's roles (realm ``readme``, the values the ``e2e-local`` stack's ``dev-build`` gateway
registers in its offline plan).

The engine's claim: stack ``e2e-kc`` (made from ``local``, gateway ``dev-build`` with its
console, realm ``kc``) brought up by the real engine has its client, roles, mappers, default
scopes, scope mappings and role mappings in Keycloak as declared; ``refresh
--expect-no-changes`` passes; a changed principal is an in-place update; a drifted client is
healed by ``up --refresh`` through the stand-in's Update; a client deleted behind Pulumi's back
is seen by refresh and made again by ``up``; an existing client is imported by ``pulumi
import``; a deleted declaration's client is deleted from Keycloak.
"""

from __future__ import annotations

import base64
import json
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.identity_types import DEFAULT_SCOPES, REDIRECT_URIS
from e2e import build
from e2e.cluster import Cluster
from e2e.engine import Engine, Result, client_runtime
from e2e.keycloak import Keycloak
from e2e.project import CLUSTERS, E2EProject, make_project
from tests.e2e import realms
from tests.e2e.lane import figure, pulumi, rendered
from tests.e2e.realms import README_ROLES, make_provisioner
from tests.e2e.realms import ok as _ok

REALM = "readme"
ADMIN_CLIENT = "hypershell-gateways-admin"  # Pulumi.local.yaml: identity.keycloak.adminClientId


@pytest.fixture(scope="module")
def realm(keycloak: Keycloak) -> dict[str, str]:
    return make_realm(keycloak)


def make_realm(keycloak: Keycloak, realm: str = REALM) -> dict[str, str]:
    """The README's prerequisites 1-3 in ``realm``, made by the bootstrap administrator; the
    secrets of a provisioner with exactly the README's roles and of one without
    ``manage-users``."""
    admin = keycloak.admin_token()
    _ok(keycloak.admin("POST", "", admin, json={"realm": realm, "enabled": True}), 201)
    _ok(keycloak.admin("POST", f"/{realm}/groups", admin, json={"name": "team-a"}), 201)
    _ok(
        keycloak.admin(
            "POST", f"/{realm}/users", admin, json={"username": "alice", "enabled": True}
        ),
        201,
    )
    return {
        "full": make_provisioner(keycloak, admin, realm, ADMIN_CLIENT, secret=None),
        "no-manage-users": make_provisioner(
            keycloak,
            admin,
            realm,
            f"{ADMIN_CLIENT}-lesser",
            secret=None,
            roles=[r for r in README_ROLES if r != "manage-users"],
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


# --- the program's Keycloak objects, through the engine and the keycloak stand-in -------------

KC_STACK = "e2e-kc"
KC_REALM = "kc"
KC_GATEWAY = "kc-gw"
KC_CLIENT = f"openshell-{KC_GATEWAY}"  # gatewayctl/resolve/signin_plan.py: openshell-<name>
KC_NAMESPACE = f"openshell-{KC_GATEWAY}"
FRONT = "https://keycloak.hypershell.localhost"  # Pulumi.local.yaml: identity.keycloak.url
CLIENT_TYPE = "keycloak:openid/client:Client"


class Admin:
    """The bootstrap administrator's view of realm ``kc`` (what the tests compare with)."""

    def __init__(self, keycloak: Keycloak) -> None:
        self.keycloak = keycloak

    def call(self, method: str, path: str, *codes: int, **kwargs: Any) -> Any:
        token = self.keycloak.admin_token()
        response = _ok(self.keycloak.admin(method, f"/{KC_REALM}{path}", token, **kwargs), *codes)
        return response.json() if response.content else None

    def clients(self, client_id: str) -> list[dict[str, Any]]:
        return list(self.call("GET", "/clients", 200, params={"clientId": client_id}))

    def client(self, client_id: str) -> dict[str, Any]:
        (found,) = self.clients(client_id)
        return found

    def user_id(self, username: str) -> str:
        found = self.call("GET", "/users", 200, params={"username": username, "exact": "true"})
        return str(found[0]["id"])

    def user_roles(self, username: str, client: dict[str, Any]) -> list[str]:
        mapped = self.call(
            "GET", f"/users/{self.user_id(username)}/role-mappings/clients/{client['id']}", 200
        )
        return sorted(r["name"] for r in mapped)


def _declare_kc(project: E2EProject, access: dict[str, list[str]]) -> None:
    project.write_declaration(
        KC_GATEWAY,
        {
            "apiVersion": "hypershell.redhat.io/v1alpha1",
            "kind": "Gateway",
            "metadata": {"name": KC_GATEWAY},
            "spec": {"access": access, "console": {"enabled": True}},
        },
    )


@dataclass
class KcStack:
    project: E2EProject
    env: dict[str, str]
    engine: Engine
    admin: Admin
    up: Result

    def run(self, *args: str, program: bool = True, check: bool = True) -> Result:
        return pulumi(self.engine, self.project, self.env, *args, program=program, check=check)

    def state(self) -> dict[str, Any]:
        exported = self.run("stack", "export", "--show-secrets", program=False).json()
        return {r["urn"]: r for r in exported["deployment"]["resources"]}


@pytest.fixture(scope="module")
def kc(
    engine: Engine,
    cluster: Cluster,
    keycloak: Keycloak,
    lane_keycloak: dict[str, Any],
    workdir: Path,
    kube_env: dict[str, str],
) -> KcStack:
    """Realm ``kc`` with its provisioning client and two users, then stack ``e2e-kc`` up."""
    admin = keycloak.admin_token()
    realms.make_realm(keycloak, admin, KC_REALM, FRONT)
    realms.make_provisioner(keycloak, admin, KC_REALM, ADMIN_CLIENT)
    for user in ("developer", "dana"):
        realms.make_user(keycloak, admin, KC_REALM, user)
    project = make_project(
        workdir / "projects", stack=KC_STACK, source="local", context=cluster.context(), gateways=[]
    )
    document = yaml.safe_load(project.config_file.read_text())
    for config in document["config"][CLUSTERS].values():
        config["identity"]["keycloak"]["realm"] = KC_REALM
    project.config_file.write_text(yaml.safe_dump(document, sort_keys=False))
    _declare_kc(project, {"admins": ["user:developer"]})
    engine.run(
        ["stack", "init", KC_STACK, "--cwd", str(project.root)], cwd=project.root, env=kube_env
    )
    started = time.monotonic()
    up = pulumi(engine, project, kube_env, "up", "--yes", "--skip-preview", "--json")
    figure(f"keycloak: e2e-kc up from empty in {time.monotonic() - started:.1f} s")
    return KcStack(project, kube_env, engine, Admin(keycloak), up)


def _keycloak_urns(state: dict[str, Any]) -> dict[str, str]:
    """type-qualified logical name → URN of every keycloak resource of the state."""
    return {
        urn.split("::")[-1]: urn
        for urn, r in state.items()
        if r["type"].startswith("keycloak:") and not r["type"].startswith("pulumi:")
    }


def test_up_makes_the_declared_objects(kc: KcStack, cluster: Cluster) -> None:
    summary = kc.up.summary()
    state = kc.state()
    made = sorted(r["type"] for r in state.values() if r["type"].startswith("keycloak:"))
    # The gateway's client, its scopes, 2 roles, 3 mappers, 1 user's role mapping; the
    # console's client, its scopes, 3 mappers and 2 scope mappings.
    assert Counter(made) == {
        CLIENT_TYPE: 2,
        "keycloak:openid/clientDefaultScopes:ClientDefaultScopes": 2,
        "keycloak:index/role:Role": 2,
        "keycloak:openid/audienceProtocolMapper:AudienceProtocolMapper": 2,
        "keycloak:openid/subProtocolMapper:SubProtocolMapper": 2,
        "keycloak:openid/userClientRoleProtocolMapper:UserClientRoleProtocolMapper": 2,
        "keycloak:index/userRoles:UserRoles": 1,
        "keycloak:index/genericRoleMapper:GenericRoleMapper": 2,
    }
    assert "pulumi:providers:keycloak" in {r["type"] for r in state.values()}
    client = kc.admin.client(KC_CLIENT)
    assert (client["publicClient"], client["fullScopeAllowed"]) == (True, False)
    assert (client["standardFlowEnabled"], client["directAccessGrantsEnabled"]) == (True, True)
    assert (client["implicitFlowEnabled"], client["serviceAccountsEnabled"]) == (False, False)
    assert sorted(client["redirectUris"]) == sorted(REDIRECT_URIS)
    assert client["attributes"]["pkce.code.challenge.method"] == "S256"
    assert client["attributes"]["oauth2.device.authorization.grant.enabled"] == "true"
    roles = kc.admin.call("GET", f"/clients/{client['id']}/roles", 200)
    assert sorted((r["name"], r["description"]) for r in roles) == [
        ("openshell-admin", "Administers the OpenShell gateway"),
        ("openshell-user", "Uses the OpenShell gateway"),
    ]
    mappers = {m["name"]: m for m in client["protocolMappers"]}
    assert sorted(mappers) == ["audience", "client roles", "sub"]
    assert mappers["audience"]["config"]["included.client.audience"] == KC_CLIENT
    assert mappers["audience"]["config"]["id.token.claim"] == "false"
    assert mappers["client roles"]["config"]["claim.name"] == "hypershell.roles"
    assert mappers["client roles"]["config"]["multivalued"] == "true"
    scopes = kc.admin.call("GET", f"/clients/{client['id']}/default-client-scopes", 200)
    assert sorted(s["name"] for s in scopes) == sorted(DEFAULT_SCOPES)
    assert kc.admin.user_roles("developer", client) == ["openshell-admin", "openshell-user"]
    # The console's confidential client: its secret, generated by Keycloak, is the state's
    # secret output and the Secret the engine applied; its scope mappings are the two roles.
    [console] = [
        c
        for c in kc.admin.call("GET", "/clients", 200)
        if c["clientId"].startswith(KC_CLIENT) and c["clientId"] != KC_CLIENT
    ]
    assert console["publicClient"] is False
    secret = kc.admin.call("GET", f"/clients/{console['id']}/client-secret", 200)["value"]
    [console_state] = [
        r for r in state.values() if r["type"] == CLIENT_TYPE and r["id"] == console["id"]
    ]
    assert console_state["outputs"]["clientSecret"]["plaintext"] == json.dumps(secret)
    applied = cluster.get("secret", "openshell-console-oauth2", namespace=KC_NAMESPACE)
    assert base64.b64decode(applied["data"]["client-secret"]).decode() == secret
    scoped = kc.admin.call(
        "GET", f"/clients/{console['id']}/scope-mappings/clients/{client['id']}", 200
    )
    assert sorted(r["name"] for r in scoped) == ["openshell-admin", "openshell-user"]
    figure(
        f"keycloak: up made {len(made)} Keycloak objects through the stand-in"
        f" ({summary.get('create', 0)} resources created)"
    )


def test_refresh_after_up_changes_nothing(kc: KcStack) -> None:
    done = kc.run("refresh", "--yes", "--expect-no-changes", "--json", program=False, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


def test_a_changed_principal_is_updated_in_place(kc: KcStack) -> None:
    _declare_kc(kc.project, {"users": ["user:developer"]})
    preview = kc.run("preview", "--json", "--diff")
    steps = {
        s["urn"].split("::")[-1]: s["op"]
        for s in preview.json()["steps"]
        if s["op"] != "same" and "keycloak:" in s["urn"]
    }
    [(name, op)] = steps.items()
    assert (name.startswith(f"{KC_GATEWAY}-identity-access-user-"), op) == (True, "update")
    kc.run("up", "--yes", "--skip-preview", "--json")
    client = kc.admin.client(KC_CLIENT)
    assert kc.admin.user_roles("developer", client) == ["openshell-user"]


def test_a_drifted_client_is_updated_by_up_refresh(kc: KcStack) -> None:
    client = kc.admin.client(KC_CLIENT)
    drifted = {**client, "redirectUris": ["https://elsewhere.example/*"], "fullScopeAllowed": True}
    kc.admin.call("PUT", f"/clients/{client['id']}", 204, json=drifted)
    seen = kc.run("refresh", "--yes", "--expect-no-changes", program=False, check=False)
    assert seen.returncode != 0  # refresh sees it
    kc.run("up", "--yes", "--skip-preview", "--refresh", "--json")
    healed = kc.admin.client(KC_CLIENT)
    assert healed["id"] == client["id"]  # updated in place (PUT), not replaced
    assert sorted(healed["redirectUris"]) == sorted(REDIRECT_URIS)
    assert healed["fullScopeAllowed"] is False


def test_a_client_deleted_behind_pulumis_back_is_seen_by_refresh(kc: KcStack) -> None:
    client = kc.admin.client(KC_CLIENT)
    before = _keycloak_urns(kc.state())
    kc.admin.call("DELETE", f"/clients/{client['id']}", 204)
    kc.run("refresh", "--yes", "--json", program=False)
    after = _keycloak_urns(kc.state())
    gone = sorted(set(before) - set(after))
    # The client and what Keycloak deleted with it: its roles, mappers and default scopes.
    assert f"{KC_GATEWAY}-identity-client" in gone
    assert {f"{KC_GATEWAY}-identity-admin-role", f"{KC_GATEWAY}-identity-user-role"} <= set(gone)
    kc.run("up", "--yes", "--skip-preview", "--json")
    again = kc.admin.client(KC_CLIENT)
    assert again["id"] != client["id"]
    assert kc.admin.user_roles("developer", again) == ["openshell-user"]
    done = kc.run("refresh", "--yes", "--expect-no-changes", program=False, check=False)
    assert done.returncode == 0, done.stdout[-3000:]


def test_an_existing_client_is_imported(kc: KcStack) -> None:
    created = kc.admin.keycloak.admin(
        "POST",
        f"/{KC_REALM}/clients",
        kc.admin.keycloak.admin_token(),
        json={"clientId": "kc-imported", "publicClient": True, "redirectUris": ["http://a/*"]},
    )
    uuid = _ok(created, 201).headers["Location"].rsplit("/", 1)[-1]
    provider = next(
        f"{urn}" for urn, r in kc.state().items() if r["type"] == "pulumi:providers:keycloak"
    )
    path = kc.project.root / "build" / "kc-import.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    provider_id = kc.state()[provider]["id"]
    path.write_text(
        json.dumps(
            {
                "nameTable": {"kc": provider},
                "resources": [
                    {
                        "type": CLIENT_TYPE,
                        "name": "kc-imported",
                        "id": f"{KC_REALM}/{uuid}",
                        "provider": "kc",
                    }
                ],
            }
        )
    )
    assert provider_id
    with client_runtime(kc.project.root, kc.project.program()):
        imported = kc.run(
            "import",
            "--yes",
            "--file",
            str(path),
            "--protect=false",
            "--generate-code=false",
            program=False,
        )
    assert imported.returncode == 0
    [row] = [r for r in kc.state().values() if r["type"] == CLIENT_TYPE and r["id"] == uuid]
    assert row["inputs"]["clientId"] == "kc-imported"
    assert row["inputs"]["accessType"] == "PUBLIC"
    assert row["inputs"]["realmId"] == KC_REALM
    assert row["inputs"]["validRedirectUris"] == ["http://a/*"]
    assert row["inputs"]["import"] is False


def test_a_deleted_declaration_deletes_its_clients(kc: KcStack) -> None:
    (kc.project.declarations / f"{KC_GATEWAY}.yaml").unlink()
    kc.run("up", "--yes", "--skip-preview", "--json")
    # The gateway's and the console's clients, and the imported one the program never declared.
    left = [c["clientId"] for c in kc.admin.call("GET", "/clients", 200)]
    assert not [c for c in left if c.startswith(KC_CLIENT) or c == "kc-imported"], left
    assert ADMIN_CLIENT in left
    assert not _keycloak_urns(kc.state())

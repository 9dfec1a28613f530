"""The Keycloak prerequisites of docs/sign-in.md, made by the bootstrap administrator before any
``up`` (e2e/keycloak.py): a realm whose ``frontendUrl`` is the stack's Keycloak URL, the
provisioning client holding the README's ``realm-management`` roles with the secret the lane's
stack config carries (e2e/project.py: ``e2e-local-<key>``), and the groups and users each
gateway's ``spec.access`` names (the program looks them up, never creates them).

The stand-in keycloak plugin (e2e/providers/keycloak.py) then makes every gateway's client,
roles, mappers, scopes and role mappings during ``up`` with that client's credentials, sending
the stack URL's requests to the loopback server (:func:`urls_env`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests
import yaml

from e2e.keycloak import Keycloak
from e2e.project import CLUSTERS, E2EProject
from e2e.providers.keycloak import URLS_ENV

README_ROLES = (
    "manage-clients",
    "view-clients",
    "query-groups",
    "view-users",
    "manage-users",
    "view-realm",
)
"""docs/sign-in.md: the provisioning client's roles of ``realm-management``."""
ADMIN_SECRET = "e2e-local-keycloakAdminClientSecret"
"""e2e/project.py: the lane's value of every stack's ``keycloakAdminClientSecret``."""


def ok(response: requests.Response, *codes: int) -> requests.Response:
    assert response.status_code in codes, (
        response.request.method,
        response.url,
        response.status_code,
        response.text[:500],
    )
    return response


@dataclass
class Server:
    """One Keycloak server a stack's config names: its URL, realm and provisioning clients."""

    url: str
    realm: str
    admin_clients: set[str] = field(default_factory=set)
    groups: set[str] = field(default_factory=set)
    users: set[str] = field(default_factory=set)


def servers(projects: Iterable[E2EProject]) -> dict[str, Server]:
    """Every (realm) the projects' clusters name, with what their declarations look up."""
    found: dict[str, Server] = {}
    for project in projects:
        config = yaml.safe_load(project.config_file.read_text())["config"]
        realms = set()
        for cluster in config[CLUSTERS].values():
            server = (cluster.get("identity") or {}).get("keycloak")
            if not server:
                continue
            entry = found.setdefault(server["realm"], Server(server["url"], server["realm"]))
            entry.admin_clients.add(server["adminClientId"])
            realms.add(server["realm"])
        for path in sorted(project.declarations.glob("*.yaml")):
            access = (yaml.safe_load(path.read_text()).get("spec") or {}).get("access") or {}
            for principal in [*access.get("admins", []), *access.get("users", [])]:
                kind, _, name = principal.partition(":")
                for realm in realms:
                    (found[realm].groups if kind == "group" else found[realm].users).add(name)
    return found


def urls_env(keycloak: Keycloak, urls: Iterable[str]) -> dict[str, str]:
    """The engine's environment that sends each stack URL's requests to ``keycloak``."""
    return {URLS_ENV: json.dumps({u.rstrip("/"): keycloak.url for u in sorted(set(urls))})}


def committed_urls(root: Path) -> set[str]:
    """Every Keycloak URL of the committed stacks (the lane's stacks are made from them)."""
    urls = set()
    for path in sorted(root.glob("Pulumi.*.yaml")):
        config = (yaml.safe_load(path.read_text()) or {}).get("config") or {}
        for cluster in (config.get(CLUSTERS) or {}).values():
            server = (cluster.get("identity") or {}).get("keycloak")
            if server:
                urls.add(server["url"])
    return urls


def make_realm(kc: Keycloak, admin: str, realm: str, front: str) -> None:
    body = {"realm": realm, "enabled": True, "attributes": {"frontendUrl": front}}
    ok(kc.admin("POST", "", admin, json=body), 201)


def make_provisioner(
    kc: Keycloak,
    admin: str,
    realm: str,
    client_id: str,
    *,
    secret: str | None = ADMIN_SECRET,
    roles: Iterable[str] = README_ROLES,
) -> str:
    """A confidential client with a service account holding ``roles`` of realm-management;
    its secret (``secret``, or the one Keycloak generates when None)."""
    body: dict[str, Any] = {
        "clientId": client_id,
        "publicClient": False,
        "serviceAccountsEnabled": True,
        "standardFlowEnabled": False,
        "directAccessGrantsEnabled": False,
    }
    if secret is not None:
        body["secret"] = secret
    created = ok(kc.admin("POST", f"/{realm}/clients", admin, json=body), 201)
    uuid = created.headers["Location"].rsplit("/", 1)[-1]
    account = ok(kc.admin("GET", f"/{realm}/clients/{uuid}/service-account-user", admin), 200)
    management = ok(
        kc.admin("GET", f"/{realm}/clients", admin, params={"clientId": "realm-management"}), 200
    ).json()[0]
    available = ok(kc.admin("GET", f"/{realm}/clients/{management['id']}/roles", admin), 200)
    wanted = set(roles)
    chosen = [r for r in available.json() if r["name"] in wanted]
    assert sorted(r["name"] for r in chosen) == sorted(wanted)
    ok(
        kc.admin(
            "POST",
            f"/{realm}/users/{account.json()['id']}/role-mappings/clients/{management['id']}",
            admin,
            json=chosen,
        ),
        204,
    )
    value = ok(kc.admin("GET", f"/{realm}/clients/{uuid}/client-secret", admin), 200)
    return str(value.json()["value"])


def make_group(kc: Keycloak, admin: str, realm: str, path: str) -> str:
    """The group at ``path`` and its parents (made where missing); its id."""
    parent: str | None = None
    for depth, name in enumerate(path.strip("/").split("/")):
        here = "/".join(path.strip("/").split("/")[: depth + 1])
        found = kc.admin("GET", f"/{realm}/group-by-path/{here}", admin)
        if found.status_code == 200:
            parent = str(found.json()["id"])
            continue
        where = f"/{realm}/groups" if parent is None else f"/{realm}/groups/{parent}/children"
        made = ok(kc.admin("POST", where, admin, json={"name": name}), 201)
        parent = made.headers["Location"].rsplit("/", 1)[-1]
    assert parent is not None
    return parent


def make_user(kc: Keycloak, admin: str, realm: str, username: str) -> str:
    made = ok(
        kc.admin("POST", f"/{realm}/users", admin, json={"username": username, "enabled": True}),
        201,
    )
    return made.headers["Location"].rsplit("/", 1)[-1]


def prepare(kc: Keycloak, wanted: dict[str, Server]) -> None:
    """Each server's realm, provisioning clients, groups and users (module docstring)."""
    admin = kc.admin_token()
    for server in wanted.values():
        make_realm(kc, admin, server.realm, server.url)
        for client in sorted(server.admin_clients):
            make_provisioner(kc, admin, server.realm, client)
        for group in sorted(server.groups):
            make_group(kc, admin, server.realm, group)
        for user in sorted(server.users):
            make_user(kc, admin, server.realm, user)

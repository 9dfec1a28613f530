"""A person signs in, for real: issue 24 item 4.

A stack ``e2e-signin`` (made from ``local``, one gateway ``signin`` whose ``spec.access`` names
a nested group of admins, a group of users and one user) is brought up by the real engine
against the real API server. The keycloak provider cannot be built here (e2e/engine.py): the
stand-in plugin the engine starts (e2e/providers/keycloak.py) answers its two look-ups
(``getGroup``, ``getUser``) and creates its resources in the real Keycloak with the admin calls
the provider makes, during the ``up``. Then a script plays each person: the device
authorization grant with PKCE S256 (RFC 8628 and RFC 7636, as the OpenShell CLI signs in where
no browser is at hand: docs/sign-in.md, "A user's sign-in flow"), the login form and the
consent screen Keycloak serves, and the token request. Each access token is verified against
the realm's keys and compared with the ``[openshell.gateway.oidc]`` table of the gateway's
``gateway.toml`` as the API server holds it (the ConfigMap the engine applied).

The realm's ``frontendUrl`` is the stack's Keycloak URL (``https://keycloak.hypershell.localhost``,
Pulumi.local.yaml), as a Keycloak behind that host name is configured: tokens carry that
issuer while the requests go to the loopback server.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
import secrets
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jwt
import pytest
import requests
import yaml

from e2e.cluster import Cluster
from e2e.engine import Engine, Result
from e2e.keycloak import Keycloak
from e2e.project import CLUSTERS, E2EProject, make_project
from e2e.providers.base import ProviderError
from e2e.providers.keycloak import Connection, get_user
from tests.e2e.lane import diagnostics, export, figure, rendered
from tests.e2e.realms import ok as _ok

STACK = "e2e-signin"
REALM = "signin"
GATEWAY = "signin"
NAMESPACE = f"openshell-{GATEWAY}"
CLIENT_ID = f"openshell-{GATEWAY}"
FRONT = "https://keycloak.hypershell.localhost"  # Pulumi.local.yaml: identity.keycloak.url
ADMIN_CLIENT = "hypershell-gateways-admin"  # Pulumi.local.yaml: adminClientId
ADMIN_SECRET = "e2e-local-keycloakAdminClientSecret"  # e2e/project.py: the lane's local secret
README_ROLES = [
    "manage-clients",
    "view-clients",
    "query-groups",
    "view-users",
    "manage-users",
    "view-realm",
]
PREFIXED = 120
"""Users ``sam000`` ... ``sam119``: ``sam`` is a prefix of more than 100 other user names."""
CONTAINED = 101
"""Users ``alee000`` ... ``alee100``: ``lee`` is inside 101 names that sort before it."""
ACCESS = {"admins": ["group:/ops/admins"], "users": ["group:/team-a", "user:sam"]}
PEOPLE = {
    # user name: (groups, roles the token must carry for the gateway)
    "olga": (["/ops/admins"], ["openshell-admin", "openshell-user"]),
    "alice": (["/team-a"], ["openshell-user"]),
    "sam": ([], ["openshell-user"]),
    "bob": ([], []),  # in no group of spec.access: no role for this gateway
}


def _password(user: str) -> str:
    return f"e2e-{user}-only"  # a dev-mem server on loopback, gone after the run


def _user(kc: Keycloak, token: str, name: str, groups: tuple[str, ...] | list[str] = ()) -> str:
    """A person as the realm's administrators make one: verified email, names, a password (so
    Keycloak's default user profile asks nothing more at the first login)."""
    body = {
        "username": name,
        "enabled": True,
        "email": f"{name}@example.com",
        "emailVerified": True,
        "firstName": name.title(),
        "lastName": "E2e",
        "credentials": [{"type": "password", "value": _password(name), "temporary": False}],
        "groups": list(groups),
    }
    created = _ok(kc.admin("POST", f"/{REALM}/users", token, json=body), 201)
    return created.headers["Location"].rsplit("/", 1)[-1]


@pytest.fixture(scope="module")
def realm(keycloak: Keycloak) -> dict[str, Any]:
    """docs/sign-in.md's Keycloak prerequisites for realm ``signin`` (its frontend URL the stack's
    Keycloak URL), the groups and people of ``PEOPLE``, and the prefix users."""
    admin = keycloak.admin_token()
    body = {"realm": REALM, "enabled": True, "attributes": {"frontendUrl": FRONT}}
    _ok(keycloak.admin("POST", "", admin, json=body), 201)
    client = {
        "clientId": ADMIN_CLIENT,
        "publicClient": False,
        "secret": ADMIN_SECRET,
        "serviceAccountsEnabled": True,
        "standardFlowEnabled": False,
        "directAccessGrantsEnabled": False,
    }
    location = _ok(keycloak.admin("POST", f"/{REALM}/clients", admin, json=client), 201)
    uuid = location.headers["Location"].rsplit("/", 1)[-1]
    account = _ok(
        keycloak.admin("GET", f"/{REALM}/clients/{uuid}/service-account-user", admin), 200
    ).json()
    management = _ok(
        keycloak.admin("GET", f"/{REALM}/clients", admin, params={"clientId": "realm-management"}),
        200,
    ).json()[0]
    roles = _ok(keycloak.admin("GET", f"/{REALM}/clients/{management['id']}/roles", admin), 200)
    _ok(
        keycloak.admin(
            "POST",
            f"/{REALM}/users/{account['id']}/role-mappings/clients/{management['id']}",
            admin,
            json=[r for r in roles.json() if r["name"] in README_ROLES],
        ),
        204,
    )
    _ok(keycloak.admin("POST", f"/{REALM}/groups", admin, json={"name": "team-a"}), 201)
    ops = _ok(keycloak.admin("POST", f"/{REALM}/groups", admin, json={"name": "ops"}), 201)
    ops_id = ops.headers["Location"].rsplit("/", 1)[-1]
    _ok(
        keycloak.admin(
            "POST", f"/{REALM}/groups/{ops_id}/children", admin, json={"name": "admins"}
        ),
        201,
    )
    started = time.monotonic()
    # The prefix users first, so "sam" is the newest of them: Keycloak's order is by name.
    for index in range(PREFIXED):
        _ok(
            keycloak.admin(
                "POST",
                f"/{REALM}/users",
                admin,
                json={"username": f"sam{index:03d}", "enabled": True},
            ),
            201,
        )
    for index in range(CONTAINED):
        _ok(
            keycloak.admin(
                "POST",
                f"/{REALM}/users",
                admin,
                json={"username": f"alee{index:03d}", "enabled": True},
            ),
            201,
        )
    ids = {name: _user(keycloak, admin, name, groups) for name, (groups, _) in PEOPLE.items()}
    ids["lee"] = _user(keycloak, admin, "lee")
    figure(
        f"signin: realm with {PREFIXED + CONTAINED + len(ids)} users made in"
        f" {time.monotonic() - started:.1f} s"
    )
    return {"ids": ids, "admin": admin}


def _project(base: Path, cluster: Cluster, access: dict[str, list[str]]) -> E2EProject:
    project = make_project(
        base, stack=STACK, source="local", context=cluster.context(), gateways=[]
    )
    document = yaml.safe_load(project.config_file.read_text())
    for config in document["config"][CLUSTERS].values():
        config["identity"]["keycloak"]["realm"] = REALM
    project.config_file.write_text(yaml.safe_dump(document, sort_keys=False))
    _declare(project, access)
    return project


def _declare(project: E2EProject, access: dict[str, list[str]]) -> None:
    project.write_declaration(
        GATEWAY,
        {
            "apiVersion": "hypershell.redhat.io/v1alpha1",
            "kind": "Gateway",
            "metadata": {"name": GATEWAY},
            "spec": {"access": access},
        },
    )


class Up:
    def __init__(self, project: E2EProject, result: Result, seconds: float) -> None:
        self.project, self.result, self.seconds = project, result, seconds


@pytest.fixture(scope="module")
def signin_up(
    engine: Engine,
    cluster: Cluster,
    keycloak: Keycloak,
    realm: dict[str, Any],
    workdir: Path,
    kube_env: dict[str, str],
    lane_keycloak: dict[str, Any],
) -> Iterator[Up]:
    """The stack brought up by the real engine; the keycloak stand-in makes its Keycloak
    objects in the real Keycloak (``lane_keycloak``: the engine's host map)."""
    project = _project(workdir / "projects", cluster, ACCESS)
    engine.run(["stack", "init", STACK, "--cwd", str(project.root)], cwd=project.root, env=kube_env)
    started = time.monotonic()
    result = engine.run(
        ["up", "--yes", "--skip-preview", "--json", "--stack", STACK, "--cwd", str(project.root)],
        cwd=project.root,
        program=project.program(),
        env=kube_env,
    )
    assert result.returncode == 0 and diagnostics(result) == []
    yield Up(project, result, time.monotonic() - started)


@pytest.fixture(scope="module")
def client(
    signin_up: Up, engine: Engine, keycloak: Keycloak, kube_env: dict[str, str]
) -> dict[str, Any]:
    """The gateway's Keycloak resources as the engine holds them, and the provider's own
    connection (its credentials; the one liberty, e2e/providers/keycloak.py: the host)."""
    deployment = export(engine, signin_up.project, kube_env)["deployment"]
    resources = [r for r in deployment["resources"] if r["type"].startswith("keycloak:")]
    (provider,) = [r for r in deployment["resources"] if r["type"] == "pulumi:providers:keycloak"]
    assert (provider["inputs"]["url"], provider["inputs"]["realm"]) == (FRONT, REALM)
    (gateway,) = [r for r in resources if r["urn"].endswith(f"::{GATEWAY}-identity-client")]
    connection = Connection(
        url=FRONT,
        realm=REALM,
        client_id=ADMIN_CLIENT,
        client_secret=ADMIN_SECRET,
        server=keycloak.url,
    )
    return {"resources": resources, "id": gateway["id"], "connection": connection}


def _gateway_toml(cluster: Cluster) -> dict[str, Any]:
    config = cluster.get("configmap", "openshell-gateway-config", namespace=NAMESPACE)
    return tomllib.loads(config["data"]["gateway.toml"])


def _challenge(verifier: str) -> str:
    """RFC 7636 S256: BASE64URL(SHA256(verifier)) without padding."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


class Browser:
    """A person's browser, reduced to what Keycloak's device pages need: follows redirects,
    keeps Keycloak's cookies (sent by hand: they are ``Secure``, for the https frontend URL,
    and requests' cookie jar keeps them from the loopback's http), and maps the frontend
    host to the loopback server."""

    def __init__(self, keycloak: Keycloak) -> None:
        self.url = keycloak.url
        self.cookies: dict[str, str | None] = {}

    def _local(self, url: str) -> str:
        return self.url + url if url.startswith("/") else url.replace(FRONT, self.url, 1)

    def go(self, method: str, url: str, **kwargs: Any) -> requests.Response:
        while True:
            cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
            response = requests.request(
                method,
                self._local(url),
                headers={"Cookie": cookie},
                allow_redirects=False,
                timeout=60,
                **kwargs,
            )
            self.cookies.update(response.cookies.get_dict())
            if not response.is_redirect:
                return response
            method, url, kwargs = "GET", response.headers["Location"], {}


def _form(page: str, marker: str) -> str:
    """The action of the page's form holding ``marker`` (Keycloak's login and consent pages)."""
    for form in re.findall(r"<form\b[^>]*>.*?</form>", page, re.S):
        if marker in form:
            # Keycloak's login and consent forms carry an action.
            return html.unescape(re.search(r'action="([^"]+)"', form).group(1))  # type: ignore[union-attr]
    raise AssertionError(f"no form with {marker!r} in: {page[:1500]}")


def _text(page: str) -> str:
    page = re.sub(r"(?s)<(script|style)\b.*?</\1>", " ", page)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page))).strip()


def device_sign_in(keycloak: Keycloak, client_id: str, user: str) -> dict[str, Any]:
    """The device authorization grant with PKCE S256 (RFC 8628 §3.1-3.4, RFC 7636 §4), the
    person's part in a browser: the verification URI, the login form, the consent screen."""
    endpoint = f"{keycloak.url}/realms/{REALM}/protocol/openid-connect"
    verifier = secrets.token_urlsafe(64)
    device = _ok(
        requests.post(
            f"{endpoint}/auth/device",
            data={
                "client_id": client_id,
                "scope": "openid",
                "code_challenge": _challenge(verifier),
                "code_challenge_method": "S256",
            },
            timeout=60,
        ),
        200,
    ).json()
    assert device["verification_uri"] == f"{FRONT}/realms/{REALM}/device"
    browser = Browser(keycloak)
    login = _ok(browser.go("GET", device["verification_uri_complete"]), 200)
    page = _ok(
        browser.go(
            "POST",
            _form(login.text, 'id="kc-form-login"'),
            data={"username": user, "password": _password(user), "credentialId": ""},
        ),
        200,
    )
    assert f"Grant Access to {client_id}" in _text(page.text), _text(page.text)[:500]
    done = _ok(browser.go("POST", _form(page.text, 'name="accept"'), data={"accept": "Yes"}), 200)
    assert "Device Login Successful" in _text(done.text), _text(done.text)[:500]
    token = requests.post(
        f"{endpoint}/token",
        data={
            "grant_type": "urn:ietf:params:oauth:grant-type:device_code",
            "device_code": device["device_code"],
            "client_id": client_id,
            "code_verifier": verifier,
        },
        timeout=60,
    )
    return dict(_ok(token, 200).json())


def _claims(keycloak: Keycloak, oidc: dict[str, Any], access_token: str) -> dict[str, Any]:
    """The token verified as the gateway verifies it: the realm's signing key (its JWKS), the
    issuer and the audience of ``[openshell.gateway.oidc]``."""
    jwks = jwt.PyJWKClient(f"{keycloak.url}/realms/{REALM}/protocol/openid-connect/certs")
    key = jwks.get_signing_key_from_jwt(access_token)
    return dict(
        jwt.decode(
            access_token,
            key.key,
            algorithms=["RS256"],
            audience=oidc["audience"],
            issuer=oidc["issuer"],
        )
    )


def _roles(claims: dict[str, Any], path: str) -> list[str] | None:
    """The claim at a dotted path (Keycloak nests a claim name at each '.'), None if absent."""
    value: Any = claims
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return sorted(value)


def test_the_engine_holds_every_keycloak_resource_the_program_declares(
    client: dict[str, Any], signin_up: Up
) -> None:
    made = sorted(r["type"] for r in client["resources"])
    # client, default scopes, two roles, three mappers, one mapping per principal (3)
    assert len(made) == 10, made
    assert all(r["id"] for r in client["resources"])
    figure(
        f"signin: up of 1 gateway in {signin_up.seconds:.1f} s; {len(made)} keycloak"
        " resources created in the real Keycloak by the engine through the stand-in"
    )


def test_gateway_toml_names_the_realm_issuer_and_the_client(
    client: dict[str, Any], cluster: Cluster, keycloak: Keycloak, signin_up: Up
) -> None:
    oidc = _gateway_toml(cluster)["openshell"]["gateway"]["oidc"]
    assert oidc == {
        "issuer": f"{FRONT}/realms/{REALM}",
        "audience": CLIENT_ID,
        "jwks_ttl_secs": 3600,
        "roles_claim": "hypershell.roles",
        "admin_role": "openshell-admin",
        "user_role": "openshell-user",
    }
    # The offline render writes the same table (the live ConfigMap came from the engine).
    files = rendered(signin_up.project).files
    manifest = yaml.safe_load(
        files[f"manifests/kind/{NAMESPACE}/configmap-openshell-gateway-config.yaml"]
    )
    offline = tomllib.loads(manifest["data"]["gateway.toml"])
    assert offline["openshell"]["gateway"]["oidc"] == oidc
    # Keycloak's discovery document names the same issuer.
    discovery = _ok(
        requests.get(f"{keycloak.url}/realms/{REALM}/.well-known/openid-configuration", timeout=60),
        200,
    ).json()
    assert discovery["issuer"] == oidc["issuer"]


@pytest.mark.parametrize("user", sorted(PEOPLE))
def test_a_person_signs_in_with_the_device_grant_and_pkce(
    client: dict[str, Any], cluster: Cluster, keycloak: Keycloak, user: str
) -> None:
    oidc = _gateway_toml(cluster)["openshell"]["gateway"]["oidc"]
    started = time.monotonic()
    tokens = device_sign_in(keycloak, CLIENT_ID, user)
    claims = _claims(keycloak, oidc, tokens["access_token"])
    assert claims["iss"] == oidc["issuer"]
    assert claims["aud"] == oidc["audience"]
    assert claims["azp"] == CLIENT_ID
    assert claims["preferred_username"] == user
    expected = PEOPLE[user][1]
    assert _roles(claims, oidc["roles_claim"]) == (expected or None)
    if expected:
        assert {oidc["admin_role"], oidc["user_role"]} >= set(expected)
    figure(
        f"signin: {user} signed in (device grant, PKCE S256) in"
        f" {time.monotonic() - started:.1f} s; {oidc['roles_claim']} = {expected}"
    )


def test_the_client_refuses_a_device_grant_without_pkce(
    client: dict[str, Any], keycloak: Keycloak
) -> None:
    response = requests.post(
        f"{keycloak.url}/realms/{REALM}/protocol/openid-connect/auth/device",
        data={"client_id": CLIENT_ID, "scope": "openid"},
        timeout=60,
    )
    assert response.status_code == 400
    assert response.json() == {
        "error": "invalid_request",
        "error_description": "Missing parameter: code_challenge_method",
    }


def test_user_lookup_finds_a_name_that_prefixes_more_than_100_others(
    client: dict[str, Any], realm: dict[str, Any]
) -> None:
    connection: Connection = client["connection"]
    everyone = connection.call("GET", f"/{REALM}/users", username="sam")
    # Keycloak's answer to the provider's query: 100 of the 121 names containing "sam" (its
    # default max), in name order, so "sam" itself comes first.
    assert len(everyone) == 100
    assert [u["username"] for u in everyone[:2]] == ["sam", "sam000"]
    found = get_user(REALM, "sam", connection)
    assert found["id"] == realm["ids"]["sam"]
    figure(f"signin: user:sam found among {PREFIXED} names it prefixes (Keycloak answered 100)")
    # and the mapping the program made for user:sam is on that user, not on sam000
    mapped = connection.call(
        "GET", f"/{REALM}/users/{realm['ids']['sam']}/role-mappings/clients/{client['id']}"
    )
    assert [r["name"] for r in mapped] == ["openshell-user"]


def test_user_lookup_misses_a_name_inside_100_names_that_sort_before_it(
    client: dict[str, Any], realm: dict[str, Any]
) -> None:
    """The provider's look-up has no ``exact=true``: a user whose name is inside more than 100
    names that sort before it is not found (docs/sign-in.md, "Sign-in", names the limit)."""
    connection: Connection = client["connection"]
    with pytest.raises(ProviderError) as missed:
        get_user(REALM, "lee", connection)
    assert str(missed.value) == "user with username lee not found"
    exact = connection.call("GET", f"/{REALM}/users", username="lee", exact="true")
    assert [u["id"] for u in exact] == [realm["ids"]["lee"]]


@pytest.mark.parametrize(
    ("principal", "message"),
    [
        ("user:nobody", "user with username nobody not found"),
        ("group:/team-b", "group not found at path: /team-b"),
        ("group:/ops/nobody", "group not found at path: /ops/nobody"),
    ],
)
def test_a_principal_that_does_not_exist_fails_the_preview_with_its_name(
    engine: Engine,
    keycloak: Keycloak,
    signin_up: Up,
    kube_env: dict[str, str],
    principal: str,
    message: str,
) -> None:
    project = signin_up.project
    _declare(project, {**ACCESS, "users": [*ACCESS["users"], principal]})
    try:
        result = engine.run(
            ["preview", "--stack", STACK, "--cwd", str(project.root)],
            cwd=project.root,
            program=project.program(),
            env=kube_env,
            check=False,
        )
    finally:
        _declare(project, ACCESS)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    lines = [line.strip() for line in output.splitlines() if message in line]
    assert lines, (result.stdout[-3000:], result.stderr)
    figure(f"signin: {principal} fails the preview (exit {result.returncode}): {lines[0]}")

"""The console signs a person in, in a real browser (issue 24, item 5).

Real servers only: Keycloak 26.7.0 (e2e/keycloak.py), oauth2-proxy built from its Go module
(e2e/versions.toml: v7.15.6, the served one nearest the console's pin v7.7.1) and Debian's
headless Chromium driven through its own chromedriver. What is not real is the upstream the
proxy protects: a small HTTP server on loopback standing in for the OpenShell dashboard, which
answers with what the proxy passed it.

Everything the proxy runs with is read from the offline render of the committed ``local``
stack's ``dev-build`` gateway (its console is exposed by port-forward): the ``oauth2-proxy``
container's environment in ``deployment-openshell-console.yaml`` (it has no args), its Secret's
two keys, and the Keycloak resources in ``plan.json``. Only these are substituted, each checked
to hold the rendered value first (``SUBSTITUTED``): the console's address
``http://localhost:4180`` (a free port, in the proxy's redirect URL and in the client's
redirect URI and web origin alike), the listen address ``0.0.0.0:4180`` (loopback), the
dashboard's ``http://127.0.0.1:8000`` (the stand-in's port), the issuer (this Keycloak's URL)
and the trusted CA's mount path (a file with the rendered ConfigMap's bundle).

The keycloak provider cannot be built here (e2e/engine.py), so each Keycloak resource is made
with the admin REST call terraform-provider-keycloak makes for it, from exactly the inputs the
program registers, by the provisioning client holding the README's roles (test_e2e_d's realm).
The mapping, from keycloak/terraform-provider-keycloak (``keycloak/*.go`` for the calls and
JSON, ``provider/resource_*.go`` for the schema defaults of inputs the program leaves unset):

- ``openid/client:Client`` (openid_client.go ``NewOpenidClient``: POST ``/clients``;
  resource_keycloak_openid_client.go ``getOpenidClientFromData``): ``accessType`` PUBLIC sets
  ``publicClient``, BEARER-ONLY ``bearerOnly``, CONFIDENTIAL neither; ``validRedirectUris`` →
  ``redirectUris``; ``pkceCodeChallengeMethod`` and ``oauth2DeviceAuthorizationGrantEnabled``
  → the attributes ``pkce.code.challenge.method`` and
  ``oauth2.device.authorization.grant.enabled``; the secret Keycloak generates is read back
  (openid_client.go: GET ``/clients/{id}/client-secret``, ``value``).
- ``index/role:Role`` (role.go ``CreateRole``: POST ``/clients/{id}/roles``, then GET
  ``roles/{name}`` for its id).
- ``openid/clientDefaultScopes`` (resource_keycloak_openid_client_default_scopes.go
  reconcile: the client's default scopes not listed are detached, DELETE
  ``default-client-scopes/{scope}``; the listed attached, PUT).
- the protocol mappers (protocol_mapper.go's config keys; POST ``protocol-mappers/models``):
  ``oidc-audience-mapper`` (openid_audience_protocol_mapper.go;
  ``add_to_token_introspection`` defaults true), ``oidc-usermodel-client-role-mapper``
  (openid_user_client_role_protocol_mapper.go; ``add_to_userinfo`` defaults true) and
  ``oidc-sub-mapper`` (openid_sub_protocol_mapper.go; introspection defaults true).
- ``index/genericRoleMapper`` on a client (role_scope_mapping.go ``CreateRoleScopeMapping``:
  POST ``/clients/{id}/scope-mappings/clients/{role's client}``).
- ``index/userRoles`` (user_role_mappings.go ``AddClientRolesToUser``: POST
  ``/users/{id}/role-mappings/clients/{client}``),
  the user looked up by name as ``data keycloak_user`` does (user.go ``GetUserByUsername``).

Screenshots of each step go to ``build/e2e/console/`` for a reviewer.
"""

from __future__ import annotations

import base64
import contextlib
import http.server
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
import yaml
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from components.console_client import _url_safe
from e2e import build
from e2e.cluster import free_port
from e2e.keycloak import Keycloak, running_keycloak
from gatewayctl.engine import render
from gatewayctl.resolve import preparation
from tests.e2e.lane import figure, need
from tests.e2e.realms import ok as _ok
from tests.e2e.test_e2e_d_keycloak import ADMIN_CLIENT, make_realm

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "build" / "e2e" / "console"
STACK, GATEWAY = "local", "dev-build"
MANIFESTS = f"manifests/kind/openshell-{GATEWAY}"
PASSWORD = "e2e-console-only"  # users of a dev-mem realm on loopback, gone after the run
PERMITTED = "developer"  # gateways/local/dev-build.yaml: access.admins [user:developer]
OUTSIDER = "outsider"  # a user of the realm in no access list
REALM = "hypershell"  # Pulumi.local.yaml: identity.keycloak.realm


# --- the render ----------------------------------------------------------------------------


@dataclass
class Render:
    env: list[dict[str, Any]]
    secret: dict[str, Any]
    ca_bundle: str
    resources: list[dict[str, Any]]
    gateway: dict[str, Any]


@pytest.fixture(scope="module")
def rendered() -> Render:
    out = render.execute(preparation.prepare(ROOT, STACK))
    deployment = yaml.safe_load(out.files[f"{MANIFESTS}/deployment-openshell-console.yaml"])
    [proxy] = [
        c
        for c in deployment["spec"]["template"]["spec"]["containers"]
        if c["name"] == "oauth2-proxy"
    ]
    # The image's own entrypoint with no arguments: everything is in the environment.
    assert "args" not in proxy and "command" not in proxy, proxy
    plan = json.loads(out.files["plan.json"])
    [gateway] = [g for g in plan["gateways"] if g["name"] == GATEWAY]
    ca = yaml.safe_load(out.files[f"{MANIFESTS}/configmap-gateway-trusted-ca.yaml"])
    return Render(
        env=proxy["env"],
        secret=yaml.safe_load(out.files[f"{MANIFESTS}/secret-openshell-console-oauth2.yaml"]),
        ca_bundle=ca["data"]["ca-bundle.crt"],
        resources=[
            r
            for r in plan["resources"]
            if r["type"].startswith("keycloak:") and r["name"].startswith(f"{GATEWAY}-")
        ],
        gateway=gateway,
    )


# --- Keycloak: the console's resources, made the way the provider makes them ----------------


class Provisioner:
    """Makes each registered Keycloak resource with the provider's admin call; ``ids`` maps
    the render's placeholder ids (``<resource name>-id``) to Keycloak's."""

    def __init__(self, kc: Keycloak, token: str, substitute: Callable[[Any], Any]) -> None:
        self.kc, self.token, self.substitute = kc, token, substitute
        self.ids: dict[str, str] = {}
        self.client_ids: dict[str, str] = {}  # Keycloak uuid → clientId
        self.made: list[str] = []
        self.access: list[str] = []  # the gateway's access list, as the plan states it

    def call(self, method: str, path: str, *codes: int, **kwargs: Any) -> requests.Response:
        return _ok(self.kc.admin(method, f"/{REALM}{path}", self.token, **kwargs), *codes)

    def ref(self, value: str) -> str:
        return self.ids[value]

    def make(self, resource: dict[str, Any]) -> None:
        inputs = self.substitute(dict(resource["inputs"]))
        assert inputs.pop("realmId") == REALM
        kind = resource["type"].split(":", 1)[1]
        handler = {
            "openid/client:Client": self.client,
            "index/role:Role": self.role,
            "openid/clientDefaultScopes:ClientDefaultScopes": self.default_scopes,
            "openid/audienceProtocolMapper:AudienceProtocolMapper": self.audience,
            "openid/userClientRoleProtocolMapper:UserClientRoleProtocolMapper": self.roles_claim,
            "openid/subProtocolMapper:SubProtocolMapper": self.sub,
            "index/genericRoleMapper:GenericRoleMapper": self.scope_mapping,
            "index/userRoles:UserRoles": self.user_roles,
        }[kind]
        made = handler(inputs)
        # Every input the program registers was used: a new one must get its mapping here.
        assert not inputs, (resource["name"], sorted(inputs))
        if made is not None:
            self.ids[f"{resource['name']}-id"] = made
        self.made.append(f"{kind} {resource['name']}")

    def client(self, i: dict[str, Any]) -> str:
        access = i.pop("accessType")
        body = {
            "protocol": "openid-connect",
            "clientId": i.pop("clientId"),
            "name": i.pop("name"),
            "enabled": i.pop("enabled"),
            "publicClient": access == "PUBLIC",
            "bearerOnly": access == "BEARER-ONLY",
            "clientAuthenticatorType": "client-secret",  # the schema's default
            "standardFlowEnabled": i.pop("standardFlowEnabled"),
            "implicitFlowEnabled": i.pop("implicitFlowEnabled"),
            "directAccessGrantsEnabled": i.pop("directAccessGrantsEnabled"),
            "serviceAccountsEnabled": i.pop("serviceAccountsEnabled"),
            "fullScopeAllowed": i.pop("fullScopeAllowed"),
            "redirectUris": i.pop("validRedirectUris", []),
            "webOrigins": i.pop("webOrigins", []),
            "attributes": {
                "pkce.code.challenge.method": i.pop("pkceCodeChallengeMethod", ""),
                "oauth2.device.authorization.grant.enabled": str(
                    i.pop("oauth2DeviceAuthorizationGrantEnabled", False)
                ).lower(),
            },
        }
        self.call("POST", "/clients", 201, json=body)
        [made] = self.call("GET", "/clients", 200, params={"clientId": body["clientId"]}).json()
        self.client_ids[made["id"]] = body["clientId"]
        return str(made["id"])

    def role(self, i: dict[str, Any]) -> str:
        client = self.ref(i.pop("clientId"))
        name = i.pop("name")
        body = {"name": name, "description": i.pop("description")}
        self.call("POST", f"/clients/{client}/roles", 201, json=body)
        return str(self.call("GET", f"/clients/{client}/roles/{name}", 200).json()["id"])

    def default_scopes(self, i: dict[str, Any]) -> None:
        client = self.ref(i.pop("clientId"))
        wanted = i.pop("defaultScopes")
        scopes = {s["name"]: s["id"] for s in self.call("GET", "/client-scopes", 200).json()}
        path = f"/clients/{client}/default-client-scopes"
        for attached in self.call("GET", path, 200).json():
            if attached["name"] not in wanted:
                self.call("DELETE", f"{path}/{attached['id']}", 204)
        for name in wanted:
            self.call("PUT", f"{path}/{scopes[name]}", 204)
        now = sorted(s["name"] for s in self.call("GET", path, 200).json())
        assert now == sorted(wanted)

    def _mapper(self, i: dict[str, Any], mapper: str, config: dict[str, Any]) -> str:
        client = self.ref(i.pop("clientId"))
        name = i.pop("name")
        body = {
            "name": name,
            "protocol": "openid-connect",
            "protocolMapper": mapper,
            "config": {k: str(v).lower() if isinstance(v, bool) else v for k, v in config.items()},
        }
        path = f"/clients/{client}/protocol-mappers/models"
        self.call("POST", path, 201, json=body)
        [made] = [m for m in self.call("GET", path, 200).json() if m["name"] == name]
        return str(made["id"])

    def audience(self, i: dict[str, Any]) -> str:
        config = {
            "id.token.claim": i.pop("addToIdToken", True),
            "access.token.claim": i.pop("addToAccessToken", True),
            "introspection.token.claim": i.pop("addToTokenIntrospection", True),
            "included.client.audience": i.pop("includedClientAudience", ""),
            "included.custom.audience": i.pop("includedCustomAudience", ""),
        }
        return self._mapper(i, "oidc-audience-mapper", config)

    def roles_claim(self, i: dict[str, Any]) -> str:
        config = {
            "id.token.claim": i.pop("addToIdToken", True),
            "access.token.claim": i.pop("addToAccessToken", True),
            "userinfo.token.claim": i.pop("addToUserinfo", True),
            "claim.name": i.pop("claimName"),
            "jsonType.label": i.pop("claimValueType", "String"),
            "multivalued": i.pop("multivalued", False),
            "usermodel.clientRoleMapping.clientId": i.pop("clientIdForRoleMappings", ""),
            "usermodel.clientRoleMapping.rolePrefix": i.pop("clientRolePrefix", ""),
        }
        return self._mapper(i, "oidc-usermodel-client-role-mapper", config)

    def sub(self, i: dict[str, Any]) -> str:
        config = {
            "access.token.claim": i.pop("addToAccessToken", True),
            "introspection.token.claim": i.pop("addToTokenIntrospection", True),
        }
        return self._mapper(i, "oidc-sub-mapper", config)

    def _role(self, role_id: str) -> dict[str, Any]:
        return dict(self.kc.admin("GET", f"/{REALM}/roles-by-id/{role_id}", self.token).json())

    def scope_mapping(self, i: dict[str, Any]) -> None:
        client = self.ref(i.pop("clientId"))
        role = self._role(self.ref(i.pop("roleId")))
        assert role["clientRole"], role
        path = f"/clients/{client}/scope-mappings/clients/{role['containerId']}"
        self.call("POST", path, 204, json=[role])

    def user_roles(self, i: dict[str, Any]) -> None:
        i.pop("userId")  # the offline mock's answer for the looked-up user (below)
        assert i.pop("exhaustive") is False
        [username] = [a.split(":", 1)[1] for a in self.access if a.startswith("user:")]
        [user] = self.call(
            "GET", "/users", 200, params={"username": username, "exact": "true"}
        ).json()
        roles = [self._role(self.ref(r)) for r in i.pop("roleIds")]
        [container] = {r["containerId"] for r in roles}
        self.call("POST", f"/users/{user['id']}/role-mappings/clients/{container}", 204, json=roles)


# The console's resources and what they need (the gateway's client, its two roles and the
# access grants); the gateway client's own mappers and scopes play no part in the console's
# tokens (a mapper belongs to its client), so they are not made.
NEEDED = (
    "identity-client",
    "identity-admin-role",
    "identity-user-role",
    "identity-access-",
    "console-",
)


# --- the proxy, the stand-in upstream and the browser --------------------------------------


@dataclass
class Upstream:
    """Answers every request with a page naming what oauth2-proxy passed it; keeps the headers."""

    port: int = field(default_factory=free_port)
    seen: list[dict[str, str]] = field(default_factory=list)

    BODY = (
        "<!doctype html><html><head><title>stand-in upstream</title></head><body>"
        "<h1>stand-in upstream</h1><pre id='seen'>{text}</pre></body></html>"
    )

    @staticmethod
    def text(headers: dict[str, str]) -> str:
        names = ("X-Forwarded-User", "X-Forwarded-Email", "X-Forwarded-Preferred-Username")
        lines = [f"{n}: {headers.get(n, '-')}" for n in names]
        groups = sorted(g for g in headers.get("X-Forwarded-Groups", "").split(",") if g)
        return "\n".join([*lines, f"X-Forwarded-Groups: {','.join(groups) or '-'}"])

    @contextlib.contextmanager
    def serving(self) -> Iterator[Upstream]:
        upstream = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                headers = dict(self.headers.items())
                headers[":path"] = self.path
                upstream.seen.append(headers)
                body = Upstream.BODY.format(text=Upstream.text(headers)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            server.shutdown()
            server.server_close()


RENDERED_ADDRESS = "http://localhost:4180"  # components/console_types.PORT_FORWARD_ORIGIN
RENDERED_ISSUER = "https://keycloak.hypershell.localhost/realms/hypershell"


@dataclass
class Console:
    url: str
    issuer: str
    proxy_log: Path
    upstream: Upstream
    kc: Keycloak
    admin: str
    provisioned: list[str]
    env: dict[str, str]


def substitutions(port: int, upstream: Upstream, kc: Keycloak, ca_file: Path) -> dict[str, str]:
    return {
        RENDERED_ADDRESS: f"http://localhost:{port}",
        "0.0.0.0:4180": f"127.0.0.1:{port}",
        "http://127.0.0.1:8000": f"http://127.0.0.1:{upstream.port}",
        RENDERED_ISSUER: f"{kc.url}/realms/{REALM}",
        "/etc/openshell-tls/oidc/ca-bundle.crt": str(ca_file),
    }


SUBSTITUTED = {
    "OAUTH2_PROXY_REDIRECT_URL": RENDERED_ADDRESS + "/oauth2/callback",
    "OAUTH2_PROXY_HTTP_ADDRESS": "0.0.0.0:4180",
    "OAUTH2_PROXY_UPSTREAMS": "http://127.0.0.1:8000",
    "OAUTH2_PROXY_OIDC_ISSUER_URL": RENDERED_ISSUER,
    "OAUTH2_PROXY_PROVIDER_CA_FILES": "/etc/openshell-tls/oidc/ca-bundle.crt",
}


def replace_all(value: Any, table: dict[str, str]) -> Any:
    if isinstance(value, str):
        for old, new in table.items():
            value = value.replace(old, new)
        return value
    if isinstance(value, list):
        return [replace_all(v, table) for v in value]
    if isinstance(value, dict):
        return {k: replace_all(v, table) for k, v in value.items()}
    return value


def proxy_environment(
    rendered: Render, table: dict[str, str], secret: dict[str, str]
) -> dict[str, str]:
    """The container's environment, its secretKeyRefs read from the Secret's data."""
    assert rendered.secret["metadata"]["name"] == "openshell-console-oauth2"
    assert sorted(rendered.secret["stringData"]) == sorted(secret)
    env: dict[str, str] = {}
    for entry in rendered.env:
        name = entry["name"]
        if "valueFrom" in entry:
            ref = entry["valueFrom"]["secretKeyRef"]
            assert ref["name"] == rendered.secret["metadata"]["name"]
            env[name] = secret[ref["key"]]
        else:
            if name in SUBSTITUTED:
                assert entry["value"] == SUBSTITUTED[name], (name, entry["value"])
            env[name] = replace_all(entry["value"], table)
    assert set(SUBSTITUTED) <= set(env)
    return env


@pytest.fixture(scope="module")
def keycloak(paths: dict[str, dict[str, Any]], workdir: Path) -> Iterator[Keycloak]:
    need(paths, "keycloak")
    with running_keycloak(Path(paths["keycloak"]["home"]), workdir / "console-keycloak") as kc:
        yield kc


@pytest.fixture(scope="module")
def console(
    paths: dict[str, dict[str, Any]], workdir: Path, keycloak: Keycloak, rendered: Render
) -> Iterator[Console]:
    need(paths, "oauth2_proxy", "chromium")
    here = workdir / "console"
    here.mkdir(parents=True, exist_ok=True)
    ca_file = here / "ca-bundle.crt"
    ca_file.write_text(rendered.ca_bundle)
    upstream = Upstream()
    port = free_port()
    table = substitutions(port, upstream, keycloak, ca_file)

    secrets = make_realm(keycloak, REALM)  # the realm and the README's provisioning client
    token = keycloak.token(
        realm=REALM,
        grant_type="client_credentials",
        client_id=ADMIN_CLIENT,
        client_secret=secrets["full"],
    )
    admin = keycloak.admin_token()
    make_users(keycloak, admin)
    provisioner = Provisioner(keycloak, token, lambda v: replace_all(v, table))
    provisioner.access = [
        *rendered.gateway["access"]["admins"],
        *rendered.gateway["access"]["users"],
    ]
    needed = [
        r
        for r in rendered.resources
        if r["name"].startswith(tuple(f"{GATEWAY}-{n}" for n in NEEDED))
    ]
    order = ["openid/client:", "index/role:"]  # what the others refer to, first
    needed.sort(key=lambda r: next((n for n, p in enumerate(order) if p in r["type"]), len(order)))
    for resource in needed:
        provisioner.make(resource)
    console_uuid = provisioner.ids[f"{GATEWAY}-console-client-id"]
    client_secret = provisioner.call("GET", f"/clients/{console_uuid}/client-secret", 200).json()[
        "value"
    ]
    # random.RandomBytes.base64 is standard base64 of the bytes; the program makes it url-safe.
    cookie_secret = _url_safe(base64.b64encode(os.urandom(32)).decode())
    env = proxy_environment(
        rendered, table, {"client-secret": client_secret, "cookie-secret": cookie_secret}
    )
    binary = paths["oauth2_proxy"]["oauth2-proxy"]
    log = here / "oauth2-proxy.log"
    with upstream.serving(), log.open("w") as out:
        proc = subprocess.Popen(
            [binary],
            env={"PATH": os.environ.get("PATH", ""), "HOME": str(here), **env},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            url = table[RENDERED_ADDRESS]
            wait_ready(url, proc, log)
            yield Console(
                url=url,
                issuer=env["OAUTH2_PROXY_OIDC_ISSUER_URL"],
                proxy_log=log,
                upstream=upstream,
                kc=keycloak,
                admin=admin,
                provisioned=provisioner.made,
                env=env,
            )
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)


def wait_ready(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    """The container's readiness probe, ``GET /ready``, until 200."""
    deadline = time.monotonic() + 60
    while True:
        if proc.poll() is not None:
            raise AssertionError(f"oauth2-proxy exited {proc.returncode}: {log.read_text()}")
        with contextlib.suppress(requests.RequestException):
            if requests.get(f"{url}/ready", timeout=5).status_code == 200:
                return
        if time.monotonic() > deadline:
            raise AssertionError(f"oauth2-proxy not ready: {log.read_text()}")
        time.sleep(0.5)


def make_users(kc: Keycloak, admin: str) -> None:
    """The permitted user (email not verified yet) and a user in no access list."""
    for username, verified in ((PERMITTED, False), (OUTSIDER, True)):
        _ok(
            kc.admin(
                "POST",
                f"/{REALM}/users",
                admin,
                json={
                    "username": username,
                    "enabled": True,
                    "email": f"{username}@hypershell.test",
                    "emailVerified": verified,
                    "firstName": username.title(),
                    "lastName": "Tester",
                    "credentials": [{"type": "password", "value": PASSWORD, "temporary": False}],
                },
            ),
            201,
        )


def user(kc: Keycloak, admin: str, username: str) -> dict[str, Any]:
    [found] = _ok(
        kc.admin("GET", f"/{REALM}/users", admin, params={"username": username, "exact": "true"}),
        200,
    ).json()
    return dict(found)


@contextlib.contextmanager
def browser() -> Iterator[webdriver.Chrome]:
    """A fresh headless Chromium (no cookies) with its network log for the HTTP statuses."""
    table = build.load_versions()["chromium"]
    chromium, chromedriver = table["binaries"]
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in (
        "--headless=new",
        "--no-sandbox",  # root in a container: Chromium's sandbox needs user namespaces
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1100,900",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    driver = webdriver.Chrome(service=Service(chromedriver), options=options)
    driver.set_page_load_timeout(120)
    try:
        yield driver
    finally:
        driver.quit()


def statuses(driver: webdriver.Chrome) -> list[tuple[str, int]]:
    """Every document response the browser received since the last call: (url, status)."""
    found = []
    # selenium's get_log is not annotated
    for entry in driver.get_log("performance"):  # type: ignore[no-untyped-call]
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.responseReceived":
            params = message["params"]
            if params["type"] == "Document":
                found.append((params["response"]["url"], int(params["response"]["status"])))
    return found


def shot(driver: webdriver.Chrome, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(SHOTS / f"{name}.png"))


@dataclass
class SignIn:
    final_url: str
    body: str
    title: str
    documents: list[tuple[str, int]]
    login_query: dict[str, list[str]]
    seconds: float


def sign_in(console: Console, username: str, step: str) -> SignIn:
    """Open the console, be sent to Keycloak's login page, sign in; where the browser ends."""
    started = time.monotonic()
    with browser() as driver:
        driver.get(console.url + "/")
        login = urlsplit(driver.current_url)
        assert f"{login.scheme}://{login.netloc}{login.path}" == (
            f"{console.issuer}/protocol/openid-connect/auth"
        ), driver.current_url
        WebDriverWait(driver, 60).until(lambda d: d.find_elements(By.ID, "username"))
        shot(driver, f"{step}-1-keycloak-login")
        driver.find_element(By.ID, "username").send_keys(username)
        driver.find_element(By.ID, "password").send_keys(PASSWORD)
        shot(driver, f"{step}-2-credentials")
        driver.find_element(By.ID, "kc-login").click()
        WebDriverWait(driver, 60).until(lambda d: d.current_url.startswith(console.url))
        WebDriverWait(driver, 60).until(
            lambda d: d.execute_script("return document.readyState") == "complete"
        )
        shot(driver, f"{step}-3-result")
        return SignIn(
            final_url=driver.current_url,
            body=driver.find_element(By.TAG_NAME, "body").text,
            title=driver.title,
            documents=statuses(driver),
            login_query=parse_qs(login.query),
            seconds=time.monotonic() - started,
        )


def claims(jwt: str) -> dict[str, Any]:
    """The payload of a token the upstream received (its signature was the proxy's to check)."""
    payload = jwt.split(".")[1]
    return dict(json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))))


# --- the tests ------------------------------------------------------------------------------


def test_the_console_is_provisioned_from_the_render(console: Console, rendered: Render) -> None:
    types = sorted(p.split()[0] for p in console.provisioned)
    assert types.count("openid/client:Client") == 2
    assert [p for p in console.provisioned if "console" in p.split()[1]] == [
        p for p in console.provisioned if p.split()[1].startswith(f"{GATEWAY}-console-")
    ]
    console_made = sorted(p.split()[1] for p in console.provisioned if "-console-" in p)
    console_registered = sorted(
        r["name"] for r in rendered.resources if r["name"].startswith(f"{GATEWAY}-console-")
    )
    assert console_made == console_registered
    figure(f"console: {len(console.provisioned)} Keycloak resources made from the render")


def test_an_unverified_email_is_refused_then_the_permitted_user_reaches_the_upstream(
    console: Console,
) -> None:
    seen_before = len(console.upstream.seen)
    refused = sign_in(console, PERMITTED, "1-unverified")
    callback = f"{console.url}/oauth2/callback"
    assert refused.login_query["client_id"] == ["openshell-dev-build-console"]
    assert refused.login_query["redirect_uri"] == [callback]
    assert refused.login_query["scope"] == ["openid profile email roles"]
    assert refused.login_query["code_challenge_method"] == ["S256"]
    [status] = [s for u, s in refused.documents if u.startswith(callback)]
    assert status == 403, refused.documents
    assert refused.title == "403 Forbidden", refused.title
    assert len(console.upstream.seen) == seen_before  # the upstream was never reached
    log = console.proxy_log.read_text()
    assert f"email in id_token ({PERMITTED}@hypershell.test) isn't verified" in log

    person = user(console.kc, console.admin, PERMITTED)
    _ok(
        console.kc.admin(
            "PUT",
            f"/{REALM}/users/{person['id']}",
            console.admin,
            json={**person, "emailVerified": True},
        ),
        204,
    )
    admitted = sign_in(console, PERMITTED, "2-permitted")
    assert admitted.final_url == console.url + "/"
    assert admitted.body == "\n".join(
        [
            "stand-in upstream",
            f"X-Forwarded-User: {person['id']}",
            f"X-Forwarded-Email: {PERMITTED}@hypershell.test",
            f"X-Forwarded-Preferred-Username: {PERMITTED}",
            "X-Forwarded-Groups: openshell-admin,openshell-user",
        ]
    )
    headers = console.upstream.seen[-1]
    token = claims(headers["X-Forwarded-Access-Token"])
    assert token["iss"] == console.issuer
    assert token["azp"] == "openshell-dev-build-console"
    assert token["sub"] == person["id"]
    assert "openshell-dev-build" in (
        [token["aud"]] if isinstance(token["aud"], str) else token["aud"]
    )
    # Keycloak nests a dotted claim name: "hypershell.roles" is {"hypershell": {"roles": ...}}.
    assert sorted(token["hypershell"]["roles"]) == ["openshell-admin", "openshell-user"], token
    figure(f"console: browser sign-in of a permitted user {admitted.seconds:.1f} s")


def test_a_user_outside_access_is_refused(console: Console) -> None:
    """A user of the realm with a verified email but no role of this gateway: the proxy's
    allowed groups (the gateway's two roles, read from the roles claim) refuse it."""
    seen_before = len(console.upstream.seen)
    refused = sign_in(console, OUTSIDER, "3-outsider")
    callback = f"{console.url}/oauth2/callback"
    [status] = [s for u, s in refused.documents if u.startswith(callback)]
    assert status == 403, refused.documents
    assert refused.title == "403 Forbidden", refused.title
    assert len(console.upstream.seen) == seen_before  # the upstream was never reached
    [line] = [
        line
        for line in console.proxy_log.read_text().splitlines()
        if "Invalid authentication via OAuth2: unauthorized" in line
    ]
    assert f"{OUTSIDER}@hypershell.test" in line, line
    assert console.env["OAUTH2_PROXY_ALLOWED_GROUPS"] == "openshell-admin,openshell-user"
    assert console.env["OAUTH2_PROXY_OIDC_GROUPS_CLAIM"] == "hypershell.roles"

"""The web console of a gateway (issue 13, components/console.py, gatewayctl/resolve/console.py):
its resolution and refusals, the objects it renders in each ingress mode, its address in the
outputs, the plan and the summary, the policy that keeps it on TLS, and its secrets' leaks."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml

from components.console_client import _url_safe
from components.console_types import ConsoleHttpRoute, ConsolePortForward, ConsoleRoute
from gatewayctl.engine import program, render
from gatewayctl.engine.offline import Recording, is_secret, run_program
from gatewayctl.inputs.stackfile import PROJECT
from gatewayctl.inputs.yamlfile import SECRETS_KEY
from gatewayctl.resolve.console import DEFAULT_DASHBOARD_IMAGE, DEFAULT_OAUTH2_PROXY_IMAGE
from policy.hypershell_policies import POLICIES
from tests import builders
from tests.builders import (
    BASE_DOMAIN,
    DECLARATIONS,
    PREFIX,
    STACK,
    cluster,
    digest,
    edited_config,
    gateway_api_cluster,
    write_gateway,
    write_release,
    write_text,
)
from tests.helpers import load, load_problems, one, only_gateway
from tests.hostile_helpers import (
    leaks,
    render_cli,
    reported_problems,
    run_cli,
    tree,
    validate_cli,
)
from tests.policy_helpers import violations

KEYCLOAK = {
    "keycloak": {"url": "https://sso.example.com", "realm": "hypershell", "adminClientId": "p"}
}
NS = "openshell-acme"
FILE = f"{DECLARATIONS}/acme.yaml"
CONSOLE = {"console": {"enabled": True}}
HOST = f"console-{NS}.{BASE_DOMAIN}"
CLIENT = "keycloak:openid/client:Client"
SECRET_KEYS = ["client-secret", "cookie-secret"]
PEM = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ2E=\n-----END CERTIFICATE-----\n"


def write_stack(root: Path, *, clusters: dict[str, Any], **more: Any) -> str:
    """``tests.builders.write_stack`` with the Keycloak admin secret of every cluster."""
    secrets = {c: {"dbAdminPassword": "pw", "keycloakAdminClientSecret": "kc"} for c in clusters}
    return builders.write_stack(root, clusters=clusters, secrets=secrets, **more)


def project(root: Path, spec: dict[str, Any] | None = None, **changes: Any) -> Path:
    """One cluster (route mode with Keycloak unless ``changes`` say otherwise), gateway acme."""
    write_stack(root, clusters={"c1": cluster(**{"identity": KEYCLOAK, **changes})})
    write_gateway(root, "acme", CONSOLE if spec is None else spec)
    return root


def rendered(root: Path) -> render.Rendered:
    return render.execute(render.prepare(root, STACK))


def manifest(result: render.Rendered, kind: str, name: str) -> dict[str, Any]:
    text = result.files[f"manifests/c1/{NS}/{kind.lower()}-{name}.yaml"]
    document: dict[str, Any] = yaml.safe_load(text)
    return document


def console_objects(result: render.Rendered) -> list[str]:
    return sorted(
        path.rsplit("/", 1)[1]
        for path in result.files
        if path.startswith(f"manifests/c1/{NS}/") and "console" in path
    )


# --- resolution ------------------------------------------------------------------------------


def test_off_by_default(tmp_path: Path) -> None:
    project(tmp_path, {})
    gateway = only_gateway(tmp_path)
    assert gateway.args.console is None
    result = rendered(tmp_path)
    assert console_objects(result) == []
    assert not [r for r in result.recording.resources.values() if "console" in r.name]
    assert json.loads(result.files["plan.json"])["gateways"][0]["console"] is None


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({}, ConsoleRoute(host=HOST, router_namespace="openshift-ingress")),
        (
            {"ingress": {"routerNamespace": "routers"}},
            ConsoleRoute(host=HOST, router_namespace="routers"),
        ),
        (
            {"capabilities": {"openshift": False}, "ingress": {"mode": "none"}},
            ConsolePortForward(),
        ),
    ],
)
def test_the_cluster_mode_decides_the_exposure(
    tmp_path: Path, changes: dict[str, Any], expected: object
) -> None:
    project(tmp_path, **changes)
    settings = only_gateway(tmp_path).args.console
    assert settings is not None
    assert settings.exposure == expected
    assert settings.dashboard_image == DEFAULT_DASHBOARD_IMAGE
    assert settings.proxy_image == DEFAULT_OAUTH2_PROXY_IMAGE


@pytest.mark.parametrize(("section", "expected"), [(None, "https"), ("tls-web", "tls-web")])
def test_gateway_api_attaches_to_the_https_listener(
    tmp_path: Path, section: str | None, expected: str
) -> None:
    shared: dict[str, Any] = {"name": "shared-gw"}
    if section is not None:
        shared["httpsSectionName"] = section
    write_stack(
        tmp_path,
        clusters={"c1": gateway_api_cluster(identity=KEYCLOAK, ingress={"gateway": shared})},
    )
    write_gateway(tmp_path, "acme", CONSOLE)
    settings = only_gateway(tmp_path).args.console
    assert settings is not None
    exposure = settings.exposure
    assert isinstance(exposure, ConsoleHttpRoute)
    assert (exposure.host, exposure.gateway.name, exposure.gateway.namespace) == (
        HOST,
        "shared-gw",
        "openshift-ingress",
    )
    assert exposure.gateway.section_name == expected


def test_https_listener_must_not_be_the_grpc_one(tmp_path: Path) -> None:
    write_stack(
        tmp_path,
        clusters={
            "c1": gateway_api_cluster(
                identity=KEYCLOAK, ingress={"gateway": {"name": "g", "httpsSectionName": "grpc"}}
            )
        },
    )
    problems = load_problems(tmp_path)
    assert problems == [
        (
            "Pulumi.test.yaml",
            f"{PREFIX}clusters.c1.ingress.gateway",
            "httpsSectionName and sectionName are both 'grpc': consoles (HTTPRoute) and"
            " gateways (GRPCRoute) attach to two listeners of their own",
        )
    ]


KEYCLOAK_ONLY = "the console signs people in with the cluster's Keycloak: "


@pytest.mark.parametrize(
    ("spec", "changes", "field", "message"),
    [
        (
            CONSOLE,
            {"identity": {}},
            "spec.console.enabled",
            KEYCLOAK_ONLY + "cluster 'c1' has no identity.keycloak",
        ),
        (
            {**CONSOLE, "oidc": {"issuer": "https://login.example.com"}},
            {},
            "spec.console.enabled",
            KEYCLOAK_ONLY + "the gateway brings its own issuer (spec.oidc)",
        ),
        (
            {**CONSOLE, "signIn": "none"},
            {},
            "spec.console.enabled",
            KEYCLOAK_ONLY + "the gateway declares signIn: none",
        ),
        (
            {**CONSOLE, "exposure": {"enabled": False}},
            {},
            "spec.console.enabled",
            "the console needs an exposed gateway, and spec.exposure.enabled is false",
        ),
        (
            {**CONSOLE, "exposure": {"host": "gw.vanity.example.org"}},
            {"baseDomain": None},
            "spec.console.enabled",
            "the console's host is console-<namespace>.<baseDomain>, and cluster 'c1' has no"
            " baseDomain",
        ),
        (
            {**CONSOLE, "namespace": "n" * 56},
            {},
            "spec.console.enabled",
            f"console host 'console-{'n' * 56}.{BASE_DOMAIN}': label 'console-{'n' * 56}' is 64"
            " characters; at most 63",
        ),
    ],
)
def test_refused_with_path_field_and_problem(
    tmp_path: Path, spec: dict[str, Any], changes: dict[str, Any], field: str, message: str
) -> None:
    identity = changes.pop("identity", KEYCLOAK)
    write_stack(tmp_path, clusters={"c1": {**cluster(identity=identity), **changes}})
    if changes.get("baseDomain", "") is None:
        write_stack(
            tmp_path,
            clusters={
                "c1": {k: v for k, v in cluster(identity=identity).items() if k != "baseDomain"}
            },
        )
    write_gateway(tmp_path, "acme", spec)
    assert load_problems(tmp_path) == [(FILE, field, message)]
    outcome = validate_cli(tmp_path)
    assert outcome.code == 2
    assert "Traceback" not in outcome.err
    # Without Keycloak and without spec.oidc, validate also says that no one can sign in.
    nobody = [
        "spec.signIn: no person can sign in: cluster 'c1' has no identity.keycloak and the"
        " gateway declares no spec.oidc; declare spec.oidc (your issuer) or spec.signIn: none"
    ]
    assert [p.rest for p in reported_problems(outcome.err, [FILE])] == [
        f"{field}: {message}",
        *(nobody if identity == {} else []),
    ]
    out = tmp_path / "out"
    assert render_cli(tmp_path, out).code == 2
    assert not out.exists()


def test_two_consoles_on_one_host_are_refused(tmp_path: Path) -> None:
    # Two clusters on one base domain: the same namespace there is the same console host.
    write_stack(
        tmp_path,
        clusters={"c1": cluster(identity=KEYCLOAK), "c2": cluster(identity=KEYCLOAK)},
    )
    write_gateway(
        tmp_path, "acme", {**CONSOLE, "cluster": "c1", "exposure": {"host": "a.example.org"}}
    )
    write_gateway(
        tmp_path,
        "other",
        {**CONSOLE, "cluster": "c2", "namespace": NS, "exposure": {"host": "b.example.org"}},
    )
    assert load_problems(tmp_path) == [
        (
            f"{DECLARATIONS}/other.yaml",
            "spec.console.enabled",
            f"console host {HOST!r} is already used by {FILE}",
        )
    ]


def test_images_from_the_declaration_then_the_release_then_upstream(tmp_path: Path) -> None:
    dashboard = f"quay.io/acme/dashboard:2@{digest('dash')}"
    proxy = f"quay.io/acme/proxy:2@{digest('proxy')}"
    path = tmp_path / write_release(tmp_path, "r1")
    document = yaml.safe_load(path.read_text())
    document["spec"]["images"].update(console=dashboard, oauth2Proxy=proxy)
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    own = f"quay.io/own/proxy:3@{digest('own')}"
    write_stack(
        tmp_path,
        clusters={
            "c1": cluster(
                identity=KEYCLOAK,
                release="r1",
                registryMirrors={"quay.io/acme": "mirror.example.com:5000/acme"},
            )
        },
    )
    write_gateway(tmp_path, "acme", {"console": {"enabled": True, "images": {"oauth2Proxy": own}}})
    settings = only_gateway(tmp_path).args.console
    assert settings is not None
    # The release's dashboard through the mirror (digest kept); the declaration's own proxy.
    assert settings.dashboard_image == f"mirror.example.com:5000/acme/dashboard:2@{digest('dash')}"
    assert settings.proxy_image == own


def test_a_release_without_console_images_still_reads(tmp_path: Path) -> None:
    write_release(tmp_path, "r1")
    write_stack(tmp_path, clusters={"c1": cluster(identity=KEYCLOAK, release="r1")})
    write_gateway(tmp_path, "acme", CONSOLE)
    settings = only_gateway(tmp_path).args.console
    assert settings is not None
    assert (settings.dashboard_image, settings.proxy_image) == (
        DEFAULT_DASHBOARD_IMAGE,
        DEFAULT_OAUTH2_PROXY_IMAGE,
    )
    release = load(tmp_path).releases["r1"].release
    assert (release.console_image("dashboard"), release.console_image("oauth2Proxy")) == (
        None,
        None,
    )


def test_a_production_stack_needs_console_images_by_digest(tmp_path: Path) -> None:
    write_release(tmp_path, "r1")
    write_stack(
        tmp_path,
        clusters={"c1": cluster(identity=KEYCLOAK, release="r1")},
        extra={f"{PREFIX}production": True},
    )
    write_gateway(tmp_path, "acme", CONSOLE)
    assert load_problems(tmp_path) == [
        (
            FILE,
            "spec.console.images.oauth2Proxy",
            f"{DEFAULT_OAUTH2_PROXY_IMAGE!r} (the built-in default) has no digest: the stack is"
            " production, so the console runs images by digest: set"
            " spec.console.images.oauth2Proxy @sha256:..., or pin a release whose"
            " spec.images.oauth2Proxy has one",
        )
    ]
    pinned = f"quay.io/oauth2-proxy/oauth2-proxy:v7.7.1@{digest('p')}"
    write_gateway(
        tmp_path, "acme", {"console": {"enabled": True, "images": {"oauth2Proxy": pinned}}}
    )
    settings = only_gateway(tmp_path).args.console
    assert settings is not None and settings.proxy_image == pinned


# --- hostile input ---------------------------------------------------------------------------

HOSTILE_VALUES: list[tuple[str, Any, str]] = [
    ("enabled", "yes", "Input should be a valid boolean"),
    ("enabled", 1, "Input should be a valid boolean"),
    ("enabled", None, "Input should be a valid boolean"),
    ("images", {"dashboard": "quay.io/x/y:1;rm$(id)"}, "shell metacharacters"),
    ("images", {"oauth2Proxy": "quay.io/x/y:1\n"}, "contains whitespace"),
    ("images", {"oauth2Proxy": "Quay.IO/X/Y"}, "lowercase repository path"),
    ("images", {"dashboard": ["a"]}, "Input should be a valid string"),
    ("images", {"sidecar": "quay.io/x/y:1"}, "unknown field"),
    ("enabeld", True, "unknown field; did you mean 'enabled'?"),
]


@pytest.mark.parametrize(("key", "value", "fragment"), HOSTILE_VALUES)
def test_hostile_console_fields_exit_2_naming_the_field(
    tmp_path: Path, key: str, value: Any, fragment: str
) -> None:
    project(tmp_path, {"console": {key: value}})
    outcome = validate_cli(tmp_path)
    assert outcome.code == 2
    assert "Traceback" not in outcome.err
    field = f"spec.console.{key}"
    if isinstance(value, dict):
        field += f".{next(iter(value))}"
    found = reported_problems(outcome.err, [FILE])
    assert len(found) == 1, outcome.err
    assert found[0].names(FILE, field, fragment), (found, field)
    # Nothing of a hostile value is echoed as control characters.
    assert "\n" not in found[0].rest


def test_console_field_is_not_a_mapping(tmp_path: Path) -> None:
    project(tmp_path, {"console": True})
    assert [p[:2] for p in load_problems(tmp_path)] == [(FILE, "spec.console")]


# --- rendering -------------------------------------------------------------------------------


def test_route_mode_renders_the_console_behind_an_edge_route(tmp_path: Path) -> None:
    result = rendered(project(tmp_path))
    assert console_objects(result) == [
        "deployment-openshell-console.yaml",
        "networkpolicy-openshell-console-allow-router.yaml",
        "networkpolicy-openshell-gateway-allow-console.yaml",
        "route-openshell-console.yaml",
        "secret-openshell-console-oauth2.yaml",
        "service-openshell-console.yaml",
    ]
    route = manifest(result, "Route", "openshell-console")
    assert route["spec"] == {
        "host": HOST,
        "to": {"kind": "Service", "name": "openshell-console", "weight": 100},
        "port": {"targetPort": "http"},
        "tls": {"termination": "edge", "insecureEdgeTerminationPolicy": "Redirect"},
        "wildcardPolicy": "None",
    }
    assert route["metadata"]["annotations"] == {
        "pulumi.com/waitFor": (
            'jsonpath={.status.ingress[0].conditions[?(@.type=="Admitted")].status}=True'
        )
    }
    allow = manifest(result, "NetworkPolicy", "openshell-console-allow-router")["spec"]
    assert allow == {
        "podSelector": {
            "matchLabels": {
                "app.kubernetes.io/name": "openshell",
                "app.kubernetes.io/instance": "openshell-console",
            }
        },
        "policyTypes": ["Ingress"],
        "ingress": [
            {
                "from": [
                    {
                        "namespaceSelector": {
                            "matchLabels": {"kubernetes.io/metadata.name": "openshift-ingress"}
                        }
                    },
                    {
                        "namespaceSelector": {
                            "matchLabels": {"policy-group.network.openshift.io/ingress": ""}
                        }
                    },
                ],
                "ports": [{"protocol": "TCP", "port": 4180}],
            }
        ],
    }
    to_gateway = manifest(result, "NetworkPolicy", "openshell-gateway-allow-console")["spec"]
    assert to_gateway["podSelector"]["matchLabels"]["app.kubernetes.io/instance"] == (
        "openshell-gateway"
    )
    assert to_gateway["ingress"] == [
        {
            "from": [
                {
                    "podSelector": {
                        "matchLabels": {
                            "app.kubernetes.io/name": "openshell",
                            "app.kubernetes.io/instance": "openshell-console",
                        }
                    }
                }
            ],
            "ports": [{"protocol": "TCP", "port": 8080}],
        }
    ]
    service = manifest(result, "Service", "openshell-console")["spec"]
    assert service["ports"] == [
        {"name": "http", "port": 4180, "targetPort": "http", "protocol": "TCP"}
    ]
    assert service["selector"]["app.kubernetes.io/instance"] == "openshell-console"


def test_the_deployment(tmp_path: Path) -> None:
    result = rendered(project(tmp_path))
    spec = manifest(result, "Deployment", "openshell-console")["spec"]
    pod = spec["template"]["spec"]
    assert spec["template"]["metadata"]["labels"]["app.kubernetes.io/instance"] == (
        "openshell-console"
    )
    dashboard, proxy = pod["containers"]
    assert (dashboard["name"], dashboard["image"]) == ("dashboard", DEFAULT_DASHBOARD_IMAGE)
    assert (proxy["name"], proxy["image"]) == ("oauth2-proxy", DEFAULT_OAUTH2_PROXY_IMAGE)
    # A digest cannot move; a tag can (checkov CKV_K8S_15 on the local stack).
    assert (dashboard["imagePullPolicy"], proxy["imagePullPolicy"]) == ("IfNotPresent", "Always")
    assert [p["containerPort"] for p in dashboard["ports"]] == [8000]
    assert [p["containerPort"] for p in proxy["ports"]] == [4180]
    for container in (dashboard, proxy):
        assert container["securityContext"] == {
            "runAsNonRoot": True,
            "readOnlyRootFilesystem": True,
            "allowPrivilegeEscalation": False,
            "seccompProfile": {"type": "RuntimeDefault"},
            "capabilities": {"drop": ["ALL"]},
        }
        assert container["resources"] == {
            "requests": {"cpu": "10m", "memory": "64Mi"},
            "limits": {"cpu": "200m", "memory": "128Mi"},
        }
        assert set(container) >= {"readinessProbe", "livenessProbe"}
    assert proxy["readinessProbe"]["httpGet"] == {"path": "/ready", "port": 4180}
    assert proxy["livenessProbe"]["httpGet"] == {"path": "/ping", "port": 4180}
    env = {e["name"]: e.get("value", e.get("valueFrom")) for e in proxy["env"]}
    assert env["OAUTH2_PROXY_CLIENT_ID"] == "openshell-acme-console"
    assert env["OAUTH2_PROXY_OIDC_ISSUER_URL"] == "https://sso.example.com/realms/hypershell"
    assert env["OAUTH2_PROXY_REDIRECT_URL"] == f"https://{HOST}/oauth2/callback"
    assert env["OAUTH2_PROXY_COOKIE_SECURE"] == "true"
    assert env["OAUTH2_PROXY_CLIENT_SECRET"] == {
        "secretKeyRef": {"name": "openshell-console-oauth2", "key": "client-secret"}
    }
    assert env["OAUTH2_PROXY_COOKIE_SECRET"] == {
        "secretKeyRef": {"name": "openshell-console-oauth2", "key": "cookie-secret"}
    }
    assert "OAUTH2_PROXY_PROVIDER_CA_FILES" not in env
    # Only holders of the gateway's roles are let in (tests/e2e/test_e2e_h_console.py).
    assert env["OAUTH2_PROXY_OIDC_GROUPS_CLAIM"] == "hypershell.roles"
    assert env["OAUTH2_PROXY_ALLOWED_GROUPS"] == "openshell-admin,openshell-user"
    dashboard_env = {e["name"]: e["value"] for e in dashboard["env"]}
    assert dashboard_env["OPENSHELL_GATEWAY_URL"] == (
        f"grpcs://openshell-gateway.{NS}.svc.cluster.local:8080"
    )
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["gateway-ca"]["secret"] == {
        "secretName": "openshell-server-tls",
        "items": [{"key": "ca.crt", "path": "ca.crt"}],
    }
    assert volumes["gateway-client"]["secret"]["secretName"] == "openshell-client-tls"
    # OpenShift: the SCC assigns the fsGroup.
    assert pod["securityContext"] == {
        "runAsNonRoot": True,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    assert pod["automountServiceAccountToken"] is False


def test_the_trusted_ca_and_a_fixed_fs_group_off_openshift(tmp_path: Path) -> None:
    write_text(tmp_path, "certs/ca.pem", PEM)
    project(
        tmp_path,
        capabilities={"openshift": False},
        ingress={"mode": "none"},
        trustedCaBundleFile="certs/ca.pem",
    )
    result = rendered(tmp_path)
    pod = manifest(result, "Deployment", "openshell-console")["spec"]["template"]["spec"]
    assert pod["securityContext"]["fsGroup"] == 1001
    proxy = pod["containers"][1]
    env = {e["name"]: e.get("value") for e in proxy["env"]}
    assert env["OAUTH2_PROXY_PROVIDER_CA_FILES"] == "/etc/openshell-tls/oidc/ca-bundle.crt"
    assert {
        "name": "oidc-trusted-ca",
        "mountPath": "/etc/openshell-tls/oidc/ca-bundle.crt",
        "subPath": "ca-bundle.crt",
        "readOnly": True,
    } in proxy["volumeMounts"]
    volume = next(v for v in pod["volumes"] if v["name"] == "oidc-trusted-ca")
    assert volume["configMap"]["name"] == "gateway-trusted-ca"


def test_gateway_api_mode_renders_an_httproute(tmp_path: Path) -> None:
    write_stack(tmp_path, clusters={"c1": gateway_api_cluster(identity=KEYCLOAK)})
    write_gateway(tmp_path, "acme", CONSOLE)
    result = rendered(tmp_path)
    route = manifest(result, "HTTPRoute", "openshell-console")
    assert route["spec"] == {
        "parentRefs": [
            {"name": "shared-gw", "namespace": "openshift-ingress", "sectionName": "https"}
        ],
        "hostnames": [HOST],
        "rules": [{"backendRefs": [{"name": "openshell-console", "port": 4180}]}],
    }
    assert json.loads(route["metadata"]["annotations"]["pulumi.com/waitFor"]) == [
        'jsonpath={.status.parents[0].conditions[?(@.type=="Accepted")].status}=True',
        'jsonpath={.status.parents[0].conditions[?(@.type=="ResolvedRefs")].status}=True',
    ]
    allow = manifest(result, "NetworkPolicy", "openshell-console-allow-router")["spec"]
    assert allow["ingress"][0]["from"] == [
        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "openshift-ingress"}}}
    ]
    assert f"manifests/c1/{NS}/route-openshell-console.yaml" not in result.files


def test_mode_none_deploys_for_port_forward(tmp_path: Path) -> None:
    result = rendered(
        project(tmp_path, capabilities={"openshift": False}, ingress={"mode": "none"})
    )
    assert console_objects(result) == [
        "deployment-openshell-console.yaml",
        "networkpolicy-openshell-gateway-allow-console.yaml",
        "secret-openshell-console-oauth2.yaml",
        "service-openshell-console.yaml",
    ]
    client = one(result.recording, CLIENT, "acme-console-client").inputs
    assert client["validRedirectUris"] == ["http://localhost:4180/oauth2/callback"]
    proxy = manifest(result, "Deployment", "openshell-console")["spec"]["template"]["spec"][
        "containers"
    ][1]
    env = {e["name"]: e.get("value") for e in proxy["env"]}
    assert env["OAUTH2_PROXY_COOKIE_SECURE"] == "false"
    plan = json.loads(result.files["plan.json"])["gateways"][0]
    assert plan["console"]["address"] is None
    assert plan["console"]["exposure"] == "port-forward"
    assert result.gateways[0].console == "port-forward"


def test_the_confidential_client_and_its_scope(tmp_path: Path) -> None:
    result = rendered(project(tmp_path))
    recording = result.recording
    client = one(recording, CLIENT, "acme-console-client").inputs
    assert client == {
        "realmId": "hypershell",
        "clientId": "openshell-acme-console",
        "name": "openshell-acme-console",
        "enabled": True,
        "accessType": "CONFIDENTIAL",
        "standardFlowEnabled": True,
        "directAccessGrantsEnabled": False,
        "implicitFlowEnabled": False,
        "serviceAccountsEnabled": False,
        "fullScopeAllowed": False,
        "validRedirectUris": [f"https://{HOST}/oauth2/callback"],
        "webOrigins": [f"https://{HOST}"],
        "pkceCodeChallengeMethod": "S256",
    }
    mappers = sorted(
        r.inputs["roleId"]
        for r in recording.resources.values()
        if r.type == "keycloak:index/genericRoleMapper:GenericRoleMapper"
    )
    roles = one(recording, "keycloak:index/role:Role", "acme-identity-admin-role")
    user = one(recording, "keycloak:index/role:Role", "acme-identity-user-role")
    # The mock's id of a resource is "<name>-id" (gatewayctl.engine.offline).
    assert mappers == sorted([f"{roles.name}-id", f"{user.name}-id"])
    audience = one(
        recording,
        "keycloak:openid/audienceProtocolMapper:AudienceProtocolMapper",
        "acme-console-audience",
    )
    assert audience.inputs["includedClientAudience"] == "openshell-acme"
    # Console resources are the Console component's children, under the Gateway.
    console = next(
        r for r in recording.resources.values() if r.type == "hypershell:gateway:Console"
    )
    assert console.parent is not None and console.parent.endswith("::acme")


def test_the_secret_its_keys_and_the_kept_cookie(tmp_path: Path) -> None:
    result = rendered(project(tmp_path))
    secret = manifest(result, "Secret", "openshell-console-oauth2")
    assert secret["stringData"] == dict.fromkeys(SECRET_KEYS, "[secret]")
    cookie = one(
        result.recording, "random:index/randomBytes:RandomBytes", "acme-console-cookie-bytes"
    )
    # No keepers: the bytes are made once and read back from the state on every run.
    assert cookie.inputs == {"length": 32}
    raw = one(result.recording, "kubernetes:core/v1:Secret", "acme-console-oauth2").inputs
    assert is_secret(raw["stringData"])
    assert sorted(raw["stringData"]["value"]) == SECRET_KEYS


@pytest.mark.parametrize("data", [bytes(range(32)), b"\xfb\xff" * 16, b"\x00" * 32])
def test_cookie_secret_is_base64url_without_padding(data: bytes) -> None:
    standard = base64.b64encode(data).decode()
    encoded = _url_safe(standard)
    assert encoded == base64.urlsafe_b64encode(data).decode().rstrip("=")
    assert len(encoded) == 43
    assert base64.urlsafe_b64decode(encoded + "=") == data


def test_address_in_outputs_plan_and_summary(tmp_path: Path) -> None:
    result = rendered(project(tmp_path))
    plan = json.loads(result.files["plan.json"])["gateways"][0]
    assert plan["console"] == {
        "address": f"https://{HOST}",
        "exposure": "route",
        "clientId": "openshell-acme-console",
        "images": {"dashboard": DEFAULT_DASHBOARD_IMAGE, "oauth2Proxy": DEFAULT_OAUTH2_PROXY_IMAGE},
    }
    assert result.gateways[0].console == f"https://{HOST}"
    out = str(tmp_path / "out")
    outcome = run_cli("--root", str(tmp_path), "render", STACK, "--out", out, "-o", "wide")
    assert outcome.code == 0
    # The console's address is a long column: -o wide's.
    assert outcome.out.splitlines()[1].split()[-3:] == ["ADDRESS", "CONSOLE", "RELEASE"]
    assert f"https://{HOST}  " in outcome.out


def test_the_stack_outputs_gain_the_console_address(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_stack(
        tmp_path,
        clusters={
            "c1": cluster(identity=KEYCLOAK),
            "c2": builders.cluster(
                identity=KEYCLOAK, capabilities={"openshift": False}, ingress={"mode": "none"}
            ),
        },
    )
    write_gateway(tmp_path, "acme", {**CONSOLE, "cluster": "c1"})
    write_gateway(tmp_path, "bravo", {**CONSOLE, "cluster": "c2"})
    write_gateway(tmp_path, "charlie", {"cluster": "c1"})
    exported: dict[str, Any] = {}
    monkeypatch.setattr(pulumi, "export", lambda name, value: exported.setdefault(name, value))
    prepared = render.prepare(tmp_path, STACK)

    def main() -> Any:
        program.main(tmp_path)
        return exported["gateways"]

    _, outputs = run_program(
        main,
        project=PROJECT,
        stack=STACK,
        config=prepared.config,
        secret_keys=[f"{PROJECT}:{SECRETS_KEY}"],
    )
    assert {name: o["consoleAddress"] for name, o in sorted(outputs.items())} == {
        "acme": f"https://{HOST}",
        "bravo": None,  # port-forward: deployed, no address
        "charlie": None,
    }


# --- policy ----------------------------------------------------------------------------------

BY_NAME = {p.name: p for p in POLICIES}


def policy_messages(recording: Recording, config: dict[str, Any] | None = None) -> list[str]:
    return [v.message for v in violations([BY_NAME["console-tls-only"]], recording, config)]


def test_policy_refuses_a_console_route_without_tls(tmp_path: Path) -> None:
    recording = rendered(project(tmp_path)).recording
    assert policy_messages(recording) == []
    route = one(recording, "kubernetes:route.openshift.io/v1:Route", "acme-console-route")
    route.inputs["spec"]["tls"] = {
        "termination": "passthrough",
        "insecureEdgeTerminationPolicy": "Allow",
    }
    assert policy_messages(recording) == [
        f"Route {NS}/openshell-console: spec.tls.termination is 'passthrough'; the console's"
        " Route must be 'edge' or 'reencrypt' (TLS at the router: the console serves plain HTTP"
        " in the pod)",
        f"Route {NS}/openshell-console: spec.tls.insecureEdgeTerminationPolicy is 'Allow'; must"
        " be 'Redirect' or 'None' (the console is never served over plain HTTP)",
    ]
    del route.inputs["spec"]["tls"]
    assert len(policy_messages(recording)) == 2
    # The gateway's own passthrough rule does not judge the console's Route.
    passthrough = violations([BY_NAME["route-passthrough-tls"]], recording)
    assert passthrough == []


def test_policy_keeps_httproutes_on_https_listeners(tmp_path: Path) -> None:
    write_stack(tmp_path, clusters={"c1": gateway_api_cluster(identity=KEYCLOAK)})
    write_gateway(tmp_path, "acme", CONSOLE)
    recording = rendered(tmp_path).recording
    assert policy_messages(recording) == []
    route = one(
        recording, "kubernetes:gateway.networking.k8s.io/v1:HTTPRoute", "acme-console-httproute"
    )
    route.inputs["spec"]["parentRefs"][0]["sectionName"] = "http"
    route.inputs["spec"]["parentRefs"].append({"name": "shared-gw"})
    assert policy_messages(recording) == [
        f"HTTPRoute {NS}/openshell-console: spec.parentRefs[0].sectionName is 'http'; an"
        " HTTPRoute attaches only to an HTTPS listener (https)",
        f"HTTPRoute {NS}/openshell-console: spec.parentRefs[1].sectionName is not set; an"
        " HTTPRoute attaches only to an HTTPS listener (https)",
    ]
    config = {"console-tls-only": {"httpsListeners": ["http", "https"]}}
    assert len(policy_messages(recording, config)) == 1


def test_policy_refuses_a_plain_http_callback(tmp_path: Path) -> None:
    recording = rendered(project(tmp_path)).recording
    client = one(recording, CLIENT, "acme-console-client")
    client.inputs["validRedirectUris"] = [f"http://{HOST}/oauth2/callback"]
    client.inputs["fullScopeAllowed"] = True
    assert policy_messages(recording) == [
        f"Keycloak client acme-console-client: redirect URI 'http://{HOST}/oauth2/callback' is"
        " not an https /oauth2/callback (or the loopback one of a port-forward)",
        "Keycloak client acme-console-client: fullScopeAllowed must be false",
    ]


# --- leaks -----------------------------------------------------------------------------------


def generated_console_secrets(recording: Recording) -> list[str]:
    client = [r for r in recording.resources.values() if r.type == CLIENT and "console" in r.name]
    cookie = [r for r in recording.resources.values() if r.name.endswith("console-cookie-bytes")]
    values = [r.outputs["clientSecret"] for r in client]
    values += [r.outputs[k] for r in cookie for k in ("base64", "hex")]
    assert values and all(is_secret(v) for v in values)
    return [v["value"] for v in values]


def test_console_secrets_never_leave_the_recording_in_the_clear(tmp_path: Path) -> None:
    write_stack(
        tmp_path,
        clusters={
            "c1": cluster(identity=KEYCLOAK),
            "c2": gateway_api_cluster(identity=KEYCLOAK, baseDomain="west.example.com"),
        },
    )
    write_gateway(tmp_path, "acme", {**CONSOLE, "cluster": "c1"})
    write_gateway(tmp_path, "bravo", {**CONSOLE, "cluster": "c2"})
    result = rendered(tmp_path)
    values = generated_console_secrets(result.recording)
    assert len(values) == 6
    out = tmp_path / "out"
    rendered_cli = render_cli(tmp_path, out, quiet=False)
    validated = validate_cli(tmp_path)
    assert (rendered_cli.code, validated.code) == (0, 0)
    texts: list[str | bytes] = [
        rendered_cli.out,
        rendered_cli.err,
        validated.out,
        validated.err,
        *tree(out).values(),
    ]
    assert leaks(texts, values) == []
    # In the recording the Secret carries them only wrapped as secrets.
    for resource in result.recording.resources.values():
        if resource.type == "kubernetes:core/v1:Secret" and "console" in resource.name:
            assert is_secret(resource.inputs["stringData"])


def test_console_secrets_stay_out_of_an_error_and_the_diff(tmp_path: Path) -> None:
    from gatewayctl.diff.compare import compare
    from gatewayctl.diff.report import build_report
    from gatewayctl.diff.sides import Side, render_head, stack_secrets

    base_root, head_root = tmp_path / "base", tmp_path / "head"
    project(base_root)
    project(head_root)
    write_gateway(head_root, "acme", {"console": {"enabled": True}, "replicas": 2})
    base_render = rendered(base_root)
    head_render = rendered(head_root)
    values = generated_console_secrets(base_render.recording)
    values += generated_console_secrets(head_render.recording)
    base = Side(files=base_render.files, secrets=stack_secrets(base_root, STACK))
    head = render_head(render.prepare(head_root, STACK))
    report = build_report([compare(STACK, base, head)], base_label="base", command="diff")
    assert "acme" in report
    assert leaks([report], values) == []
    # A problem next to the console prints neither the secrets nor a traceback.
    with edited_config(head_root, STACK) as config:
        config[f"{PREFIX}clusters"]["c1"]["identity"] = {}
    outcome = validate_cli(head_root)
    assert outcome.code == 2
    assert "Traceback" not in outcome.err
    assert leaks([outcome.out, outcome.err], values) == []

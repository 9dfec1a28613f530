"""The web console of a gateway (issue 13, components/console.py and its parts): the objects it
renders in each ingress mode, its address in the outputs, the plan and the summary, the policy
that keeps it on TLS, and its secrets' leaks. Its resolution and refusals are
tests/test_resolve_console.py's."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml

from components.console_client import _url_safe
from gatewayctl.engine import program, render
from gatewayctl.engine.offline import Recording, is_secret, run_program
from gatewayctl.inputs.stackfile import PROJECT
from gatewayctl.inputs.yamlfile import SECRETS_KEY
from gatewayctl.resolve import preparation
from gatewayctl.resolve.console_plan import DEFAULT_DASHBOARD_IMAGE, DEFAULT_OAUTH2_PROXY_IMAGE
from policy.hypershell_policies import POLICIES
from tests import builders
from tests.builders import (
    PREFIX,
    STACK,
    cluster,
    edited_config,
    gateway_api_cluster,
    write_gateway,
    write_text,
)
from tests.console_helpers import (
    CONSOLE,
    HOST,
    KEYCLOAK,
    NS,
    console_objects,
    project,
    rendered,
    write_stack,
)
from tests.helpers import one
from tests.hostile_helpers import (
    leaks,
    render_cli,
    run_cli,
    tree,
    validate_cli,
)
from tests.policy_helpers import violations

CLIENT = "keycloak:openid/client:Client"
SECRET_KEYS = ["client-secret", "cookie-secret"]
PEM = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ2E=\n-----END CERTIFICATE-----\n"


def manifest(result: render.Rendered, kind: str, name: str) -> dict[str, Any]:
    text = result.files[f"manifests/c1/{NS}/{kind.lower()}-{name}.yaml"]
    document: dict[str, Any] = yaml.safe_load(text)
    return document


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
    prepared = preparation.prepare(tmp_path, STACK)

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
    head = render_head(preparation.prepare(head_root, STACK))
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

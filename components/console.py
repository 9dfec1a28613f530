"""The web console of one gateway (issue 13; upstream §4.4 "Console", declaratively).

Upstream's control plane (openshift-online/hypershell,
``components/control-plane/internal/gateway/console.go`` and ``internal/keycloak/client.go``)
deploys, per Keycloak-enabled gateway, the OpenShell dashboard behind an oauth2-proxy sidecar:
a confidential Keycloak client ``<gateway client>-console``, Secret ``openshell-console-oauth2``
(``client-secret``, ``cookie-secret``), Deployment and Service ``openshell-console`` (the proxy's
port 4180 only), an HTTPRoute ``console-<namespace>.<baseDomain>`` on the shared Gateway's
HTTPS listener and two NetworkPolicies. Names, ports, env variables, mounts, probes and
resources here are upstream's; where this differs, it says why.

Differences: the console follows the cluster's ingress mode (upstream creates an HTTPRoute in
every mode, which route-mode clusters reject, §7.2 "Gaps"): an edge Route in ``route`` mode,
nothing in ``none`` (reached with ``kubectl port-forward``); the client, its mappers and its
scope mappings are Pulumi resources, so a deleted gateway deletes them; and the proxy admits
only a holder of one of the gateway's two roles (upstream's flags admit every user of the realm
whose email is verified, who then reaches the dashboard with no role): its groups claim is the
roles claim (``hypershell.roles``, which Keycloak writes nested as ``{"hypershell": {"roles":
[...]}}`` and oauth2-proxy reads as a dotted path, ``getClaimFrom`` in
``pkg/providers/util/claim_extractor.go``, v7.7.1 as v7.15.6) and the allowed groups are the
two roles, so anyone else gets oauth2-proxy's 403 at ``/oauth2/callback``
(tests/e2e/test_e2e_h_console.py, against the real proxy, Keycloak and Chromium).

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
- pulumi-kubernetes ``provider/pkg/metadata/overrides.go``: a ``pulumi.com/waitFor`` JSON array
  waits until every condition holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_keycloak as keycloak
import pulumi_random as random
from pulumi_kubernetes.apiextensions import CustomResource
from pulumi_kubernetes.apps.v1 import Deployment
from pulumi_kubernetes.core.v1 import Secret, Service
from pulumi_kubernetes.networking.v1 import NetworkPolicy

from components import naming, tokens, trusted_ca
from components.console_types import (
    ALLOW_CONSOLE as ALLOW_CONSOLE,
)
from components.console_types import (
    ALLOW_ROUTER as ALLOW_ROUTER,
)
from components.console_types import (
    CALLBACK_PATH as CALLBACK_PATH,
)
from components.console_types import (
    CLIENT_SECRET_KEY as CLIENT_SECRET_KEY,
)
from components.console_types import (
    COOKIE_BYTES as COOKIE_BYTES,
)
from components.console_types import (
    COOKIE_SECRET_KEY as COOKIE_SECRET_KEY,
)
from components.console_types import (
    DASHBOARD_PORT as DASHBOARD_PORT,
)
from components.console_types import (
    GATEWAY_CA_DIR as GATEWAY_CA_DIR,
)
from components.console_types import (
    GATEWAY_CLIENT_DIR as GATEWAY_CLIENT_DIR,
)
from components.console_types import (
    HOST_PREFIX as HOST_PREFIX,
)
from components.console_types import (
    HTTPROUTE_READY as HTTPROUTE_READY,
)
from components.console_types import (
    NAME as NAME,
)
from components.console_types import (
    OIDC_CA_PATH as OIDC_CA_PATH,
)
from components.console_types import (
    PORT_FORWARD_ORIGIN as PORT_FORWARD_ORIGIN,
)
from components.console_types import (
    PROXY_PORT as PROXY_PORT,
)
from components.console_types import (
    SECRET as SECRET,
)
from components.console_types import (
    ConsoleExposure as ConsoleExposure,
)
from components.console_types import (
    ConsoleHttpRoute as ConsoleHttpRoute,
)
from components.console_types import (
    ConsolePortForward as ConsolePortForward,
)
from components.console_types import (
    ConsoleRoute as ConsoleRoute,
)
from components.console_types import (
    ConsoleSettings as ConsoleSettings,
)
from components.console_types import (
    console_address as console_address,
)
from components.console_types import (
    console_client_id as console_client_id,
)
from components.console_types import (
    console_host as console_host,
)
from components.console_types import (
    console_url as console_url,
)
from components.deployment import RESTRICTED_CONTAINER_SECURITY_CONTEXT, UPSTREAM_FS_GROUP
from components.exposure import ROUTE_ADMITTED, WAIT_FOR
from components.identity import (
    ADMIN_ROLE,
    DEFAULT_SCOPES,
    PKCE_METHOD,
    ROLES_CLAIM,
    USER_ROLE,
)
from components.metadata import metadata
from components.network import OPENSHIFT_INGRESS_POLICY_GROUP
from components.wire import wire


@dataclass(frozen=True, kw_only=True)
class ConsoleArgs:
    settings: ConsoleSettings
    namespace: str
    """Tenant namespace (already validated)."""
    namespace_ref: pulumi.Input[str]
    realm: str
    issuer: str
    """The issuer the gateway trusts; oauth2-proxy must see the same ``iss``."""
    gateway_client_id: str
    """The gateway's client id: the audience of the console's tokens and the owner of the
    roles mapped into ``hypershell.roles``."""
    gateway_role_ids: tuple[pulumi.Input[str], ...]
    """Keycloak's ids of the gateway client's roles, mapped into the console's scope."""
    openshift: bool
    server_tls_secret: pulumi.Input[str]
    client_tls_secret: pulumi.Input[str]
    trusted_ca_config_map: pulumi.Input[str] | None
    labels: dict[str, str]
    provider: keycloak.Provider | None = None


def console_labels(labels: dict[str, str]) -> dict[str, str]:
    return {**labels, "app.kubernetes.io/component": "console", **selector_labels()}


def selector_labels() -> dict[str, str]:
    return {"app.kubernetes.io/name": "openshell", "app.kubernetes.io/instance": NAME}


def pull_policy(image: str) -> str:
    """``IfNotPresent`` for an image pinned by digest (it cannot change; upstream's policy),
    ``Always`` for a tag, which can move (the gateway's reason, ``components.deployment``)."""
    return "IfNotPresent" if "@" in image else "Always"


def _env(name: str, value: pulumi.Input[str]) -> dict[str, Any]:
    return {"name": name, "value": value}


def _secret_env(name: str, secret: pulumi.Input[str], key: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"secretKeyRef": {"name": secret, "key": key}}}


# Upstream's requests and memory limit; a CPU limit as well, which the policy pack requires of
# every container (policy/hypershell_policies/pods.py).
RESOURCES = {
    "requests": {"cpu": "10m", "memory": "64Mi"},
    "limits": {"cpu": "200m", "memory": "128Mi"},
}


def deployment_spec(
    *,
    args: ConsoleArgs,
    client_id: str,
    secret: pulumi.Input[str],
) -> dict[str, Any]:
    """Upstream's ``buildConsoleDeployment``, with the gateway's restricted pod security
    (no fixed fsGroup on OpenShift, whose SCC assigns one) and ``secret`` as an output so the
    Deployment waits for the Secret."""
    settings = args.settings
    url = console_url(settings.exposure)
    exposed = settings.exposure.host is not None
    pod_security: dict[str, Any] = {
        "runAsNonRoot": True,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    if not args.openshift:
        pod_security["fsGroup"] = UPSTREAM_FS_GROUP
    dashboard = {
        "name": "dashboard",
        "image": settings.dashboard_image,
        "imagePullPolicy": pull_policy(settings.dashboard_image),
        "env": [
            _env("PORT", str(DASHBOARD_PORT)),
            _env(
                "OPENSHELL_GATEWAY_URL",
                f"grpcs://{naming.service_fqdn(args.namespace)}:{naming.GRPC_PORT}",
            ),
            _env("GATEWAY_CA_CERT", f"{GATEWAY_CA_DIR}/ca.crt"),
            _env("GATEWAY_CLIENT_CERT", f"{GATEWAY_CLIENT_DIR}/tls.crt"),
            _env("GATEWAY_CLIENT_KEY", f"{GATEWAY_CLIENT_DIR}/tls.key"),
            _env("AUTH_DISABLED", "false"),
            _env("AUTH_TOKEN_HEADER", "X-Forwarded-Access-Token"),
            _env("AUTH_USER_HEADER", "X-Forwarded-User"),
            _env("ADMIN_ROLE", "openshell-admin"),
            _env("LOGOUT_URL", "/oauth2/sign_out"),
        ],
        "ports": [{"name": "dashboard", "containerPort": DASHBOARD_PORT, "protocol": "TCP"}],
        "readinessProbe": {
            "tcpSocket": {"port": DASHBOARD_PORT},
            "initialDelaySeconds": 5,
            "periodSeconds": 10,
        },
        "livenessProbe": {
            "tcpSocket": {"port": DASHBOARD_PORT},
            "initialDelaySeconds": 10,
            "periodSeconds": 20,
        },
        "volumeMounts": [
            {"name": "gateway-ca", "mountPath": GATEWAY_CA_DIR, "readOnly": True},
            {"name": "gateway-client", "mountPath": GATEWAY_CLIENT_DIR, "readOnly": True},
            {"name": "tmp-dashboard", "mountPath": "/tmp"},
        ],
        "securityContext": RESTRICTED_CONTAINER_SECURITY_CONTEXT,
        "resources": RESOURCES,
    }
    proxy_env = [
        _env("OAUTH2_PROXY_PROVIDER", "oidc"),
        _env("OAUTH2_PROXY_OIDC_ISSUER_URL", args.issuer),
        _env("OAUTH2_PROXY_CLIENT_ID", client_id),
        _secret_env("OAUTH2_PROXY_CLIENT_SECRET", secret, CLIENT_SECRET_KEY),
        _secret_env("OAUTH2_PROXY_COOKIE_SECRET", secret, COOKIE_SECRET_KEY),
        _env("OAUTH2_PROXY_CODE_CHALLENGE_METHOD", PKCE_METHOD),
        _env("OAUTH2_PROXY_REDIRECT_URL", url + CALLBACK_PATH),
        _env("OAUTH2_PROXY_UPSTREAMS", f"http://127.0.0.1:{DASHBOARD_PORT}"),
        _env("OAUTH2_PROXY_HTTP_ADDRESS", f"0.0.0.0:{PROXY_PORT}"),
        _env("OAUTH2_PROXY_REVERSE_PROXY", "true"),
        _env("OAUTH2_PROXY_PASS_ACCESS_TOKEN", "true"),
        _env("OAUTH2_PROXY_PASS_USER_HEADERS", "true"),
        _env("OAUTH2_PROXY_SKIP_PROVIDER_BUTTON", "true"),
        # Secure cookies need HTTPS; through a port-forward the browser speaks plain HTTP
        # to localhost (the tunnel to the API server is TLS).
        _env("OAUTH2_PROXY_COOKIE_SECURE", "true" if exposed else "false"),
        _env("OAUTH2_PROXY_COOKIE_REFRESH", "2m"),
        _env("OAUTH2_PROXY_EMAIL_DOMAINS", "*"),
        _env("OAUTH2_PROXY_SCOPE", "openid profile email roles"),
        # Only holders of one of the gateway's roles get in (module docstring).
        _env("OAUTH2_PROXY_OIDC_GROUPS_CLAIM", ROLES_CLAIM),
        _env("OAUTH2_PROXY_ALLOWED_GROUPS", f"{ADMIN_ROLE},{USER_ROLE}"),
    ]
    proxy_mounts: list[dict[str, Any]] = [{"name": "tmp-proxy", "mountPath": "/tmp"}]
    volumes: list[dict[str, Any]] = [
        {
            "name": "gateway-ca",
            "secret": {
                "secretName": args.server_tls_secret,
                "items": [{"key": "ca.crt", "path": "ca.crt"}],
            },
        },
        {
            "name": "gateway-client",
            "secret": {
                "secretName": args.client_tls_secret,
                "items": [
                    {"key": "tls.crt", "path": "tls.crt"},
                    {"key": "tls.key", "path": "tls.key"},
                ],
                "defaultMode": 0o440,
            },
        },
        {"name": "tmp-dashboard", "emptyDir": {}},
        {"name": "tmp-proxy", "emptyDir": {}},
    ]
    if args.trusted_ca_config_map is not None:
        proxy_env.append(_env("OAUTH2_PROXY_PROVIDER_CA_FILES", OIDC_CA_PATH))
        proxy_mounts.append(
            {
                "name": "oidc-trusted-ca",
                "mountPath": OIDC_CA_PATH,
                "subPath": trusted_ca.KEY,
                "readOnly": True,
            }
        )
        volumes.append(
            {
                "name": "oidc-trusted-ca",
                "configMap": {
                    "name": args.trusted_ca_config_map,
                    "items": [{"key": trusted_ca.KEY, "path": trusted_ca.KEY}],
                },
            }
        )
    proxy = {
        "name": "oauth2-proxy",
        "image": settings.proxy_image,
        "imagePullPolicy": pull_policy(settings.proxy_image),
        "env": proxy_env,
        "ports": [{"name": "http", "containerPort": PROXY_PORT, "protocol": "TCP"}],
        "readinessProbe": {
            "httpGet": {"path": "/ready", "port": PROXY_PORT},
            "initialDelaySeconds": 5,
            "periodSeconds": 10,
        },
        "livenessProbe": {
            "httpGet": {"path": "/ping", "port": PROXY_PORT},
            "initialDelaySeconds": 10,
            "periodSeconds": 20,
        },
        "volumeMounts": proxy_mounts,
        "securityContext": RESTRICTED_CONTAINER_SECURITY_CONTEXT,
        "resources": RESOURCES,
    }
    return {
        "replicas": 1,
        "selector": {"matchLabels": selector_labels()},
        "template": {
            "metadata": {"labels": console_labels(args.labels)},
            "spec": {
                "automountServiceAccountToken": False,
                "securityContext": pod_security,
                "containers": [dashboard, proxy],
                "volumes": volumes,
            },
        },
    }


def _url_safe(standard: str) -> str:
    """Standard base64 with padding → base64url without padding (Go's RawURLEncoding, which
    upstream's ``generateConsoleCookieSecret`` uses)."""
    return standard.replace("+", "-").replace("/", "_").rstrip("=")


class Console(pulumi.ComponentResource):
    """Creates: the confidential Keycloak client ``<client id>-console``, its default scopes,
    three protocol mappers and the scope mappings of the gateway client's roles; the cookie
    secret's random bytes; Secret ``openshell-console-oauth2``; Deployment and Service
    ``openshell-console``; NetworkPolicies ``openshell-console-allow-router`` (exposed only)
    and ``openshell-gateway-allow-console``; the Route or HTTPRoute by the cluster's mode.

    Outputs: ``address`` (``https://<host>`` or None) and ``client_id``.
    """

    address: pulumi.Output[str | None]
    client_id: pulumi.Output[str]

    def __init__(self, name: str, args: ConsoleArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(tokens.CONSOLE, name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        kc = pulumi.ResourceOptions(parent=self, provider=args.provider)
        settings, realm = args.settings, args.realm
        url = console_url(settings.exposure)
        client_id = console_client_id(args.gateway_client_id)
        labels = {**args.labels, "app.kubernetes.io/component": "console"}

        client = keycloak.openid.Client(
            f"{name}-client",
            realm_id=realm,
            client_id=client_id,
            name=client_id,
            enabled=True,
            access_type="CONFIDENTIAL",
            standard_flow_enabled=True,
            direct_access_grants_enabled=False,
            implicit_flow_enabled=False,
            service_accounts_enabled=False,
            full_scope_allowed=False,
            # The console's own callback only (issue 13).
            valid_redirect_uris=[url + CALLBACK_PATH],
            web_origins=[url],
            pkce_code_challenge_method=PKCE_METHOD,
            opts=kc,
        )
        keycloak.openid.ClientDefaultScopes(
            f"{name}-client-scopes",
            realm_id=realm,
            client_id=client.id,
            default_scopes=list(DEFAULT_SCOPES),
            opts=kc,
        )
        keycloak.openid.AudienceProtocolMapper(
            f"{name}-audience",
            realm_id=realm,
            client_id=client.id,
            name="audience",
            included_client_audience=args.gateway_client_id,
            add_to_access_token=True,
            add_to_id_token=False,
            opts=kc,
        )
        keycloak.openid.UserClientRoleProtocolMapper(
            f"{name}-roles-claim",
            realm_id=realm,
            client_id=client.id,
            name="client-roles",
            claim_name=ROLES_CLAIM,
            claim_value_type="String",
            multivalued=True,
            client_id_for_role_mappings=args.gateway_client_id,
            add_to_access_token=True,
            add_to_id_token=True,
            opts=kc,
        )
        keycloak.openid.SubProtocolMapper(
            f"{name}-sub",
            realm_id=realm,
            client_id=client.id,
            name="sub",
            add_to_access_token=True,
            opts=kc,
        )
        for index, role_id in enumerate(args.gateway_role_ids):
            keycloak.GenericRoleMapper(
                f"{name}-scope-{index}",
                realm_id=realm,
                client_id=client.id,
                role_id=role_id,
                opts=kc,
            )

        cookie = random.RandomBytes(f"{name}-cookie-bytes", length=COOKIE_BYTES, opts=child)
        ns = args.namespace_ref

        def meta(object_name: str, annotations: dict[str, str] | None = None) -> Any:
            return metadata(object_name, labels, namespace=ns, annotations=annotations)

        secret = Secret(
            f"{name}-oauth2",
            metadata=meta(SECRET),
            type="Opaque",
            string_data={
                # Both are secret outputs (module docstring), and ``apply`` keeps them so.
                CLIENT_SECRET_KEY: client.client_secret,
                COOKIE_SECRET_KEY: cookie.base64.apply(_url_safe),
            },
            opts=child,
        )
        Deployment(
            f"{name}-deploy",
            metadata=meta(NAME),
            spec=wire(deployment_spec(args=args, client_id=client_id, secret=secret.metadata.name)),
            opts=child,
        )
        # The Route and HTTPRoute name the Service by its fixed name, as the gateway's do (the
        # policy pack recognises the console's Route by it, known in every preview).
        Service(
            f"{name}-svc",
            metadata=meta(NAME),
            spec=wire(
                {
                    "type": "ClusterIP",
                    "selector": selector_labels(),
                    "ports": [
                        {
                            "name": "http",
                            "port": PROXY_PORT,
                            "targetPort": "http",
                            "protocol": "TCP",
                        }
                    ],
                }
            ),
            opts=child,
        )
        NetworkPolicy(
            f"{name}-netpol-allow-console",
            metadata=meta(ALLOW_CONSOLE),
            spec=wire(
                {
                    "podSelector": {"matchLabels": naming.selector_labels()},
                    "policyTypes": ["Ingress"],
                    "ingress": [
                        {
                            "from": [{"podSelector": {"matchLabels": selector_labels()}}],
                            "ports": [{"protocol": "TCP", "port": naming.GRPC_PORT}],
                        }
                    ],
                }
            ),
            opts=child,
        )
        match settings.exposure:
            case ConsoleRoute() as route:
                self._allow(name, meta, route.router_namespace, openshift_router=True)
                CustomResource(
                    f"{name}-route",
                    api_version="route.openshift.io/v1",
                    kind="Route",
                    metadata=meta(NAME, {WAIT_FOR: ROUTE_ADMITTED}),
                    spec={
                        "host": route.host,
                        "to": {"kind": "Service", "name": NAME, "weight": 100},
                        "port": {"targetPort": "http"},
                        # TLS ends at the router with its certificate for the base domain;
                        # plain HTTP is redirected, never served.
                        "tls": {"termination": "edge", "insecureEdgeTerminationPolicy": "Redirect"},
                        "wildcardPolicy": "None",
                    },
                    opts=child,
                )
            case ConsoleHttpRoute() as http_route:
                shared = http_route.gateway
                self._allow(name, meta, shared.namespace, openshift_router=False)
                CustomResource(
                    f"{name}-httproute",
                    api_version="gateway.networking.k8s.io/v1",
                    kind="HTTPRoute",
                    metadata=meta(NAME, {WAIT_FOR: HTTPROUTE_READY}),
                    spec={
                        "parentRefs": [
                            {
                                "name": shared.name,
                                "namespace": shared.namespace,
                                "sectionName": shared.section_name,
                            }
                        ],
                        "hostnames": [http_route.host],
                        "rules": [{"backendRefs": [{"name": NAME, "port": PROXY_PORT}]}],
                    },
                    opts=child,
                )
            case ConsolePortForward():
                pass

        self.client_id = client.client_id
        self.address = pulumi.Output.from_input(console_address(settings.exposure))
        self.register_outputs({"address": self.address, "client_id": self.client_id})

    def _allow(self, name: str, meta: Any, source: str, *, openshift_router: bool) -> None:
        peers: list[dict[str, Any]] = [
            {"namespaceSelector": {"matchLabels": {naming.NAMESPACE_NAME_LABEL: source}}}
        ]
        if openshift_router:
            peers.append(
                {"namespaceSelector": {"matchLabels": {OPENSHIFT_INGRESS_POLICY_GROUP: ""}}}
            )
        NetworkPolicy(
            f"{name}-netpol-allow-router",
            metadata=meta(ALLOW_ROUTER),
            spec=wire(
                {
                    "podSelector": {"matchLabels": selector_labels()},
                    "policyTypes": ["Ingress"],
                    "ingress": [
                        {"from": peers, "ports": [{"protocol": "TCP", "port": PROXY_PORT}]}
                    ],
                }
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )

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

The parts: ``components.console_client`` (the Keycloak client and the oauth2 Secret),
``components.console_deployment`` (the pod, its containers in ``components.console_containers``),
``components.console_exposure`` (Service, Route or HTTPRoute) and ``components.console_network``
(its NetworkPolicies); each names the provider behaviour it relies on.
"""

from __future__ import annotations

from typing import Any

import pulumi

from components import tokens
from components.console_client import console_client, oauth2_secret
from components.console_deployment import console_deployment
from components.console_exposure import console_ingress, console_service
from components.console_network import allow_console
from components.console_types import ConsoleArgs, console_address, console_client_id
from components.metadata import metadata


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
        client_id = console_client_id(args.gateway_client_id)
        labels = {**args.labels, "app.kubernetes.io/component": "console"}
        ns = args.namespace_ref

        def meta(object_name: str, annotations: dict[str, str] | None = None) -> Any:
            return metadata(object_name, labels, namespace=ns, annotations=annotations)

        client = console_client(name, args, client_id, kc)
        secret = oauth2_secret(name, client, meta, child, args.rotation.console_cookie)
        console_deployment(
            name, args, client_id=client_id, secret=secret.metadata.name, meta=meta, opts=child
        )
        console_service(name, meta, child)
        allow_console(name, meta, child)
        console_ingress(name, args.settings.exposure, meta, child)

        self.client_id = client.client_id
        self.address = pulumi.Output.from_input(console_address(args.settings.exposure))
        self.register_outputs({"address": self.address, "client_id": self.client_id})

"""The console's Deployment ``openshell-console``: one pod of the dashboard and its oauth2-proxy
(``components.console_containers``), the gateway's certificates mounted from its Secrets."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pulumi
from pulumi_kubernetes.apps.v1 import Deployment

from components.console_containers import dashboard_container, proxy_container
from components.console_types import NAME, ConsoleArgs, console_labels, selector_labels
from components.deployment import UPSTREAM_FS_GROUP
from components.rotation import pod_annotations
from components.wire import wire


def deployment_spec(
    *,
    args: ConsoleArgs,
    client_id: str,
    secret: pulumi.Input[str],
) -> dict[str, Any]:
    """Upstream's ``buildConsoleDeployment``, with the gateway's restricted pod security
    (no fixed fsGroup on OpenShift, whose SCC assigns one) and ``secret`` as an output so the
    Deployment waits for the Secret."""
    pod_security: dict[str, Any] = {
        "runAsNonRoot": True,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    if not args.openshift:
        pod_security["fsGroup"] = UPSTREAM_FS_GROUP
    rolled = pod_annotations(args.rotation)
    dashboard = dashboard_container(args)
    proxy, proxy_volumes = proxy_container(args=args, client_id=client_id, secret=secret)
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
        *proxy_volumes,
    ]
    return {
        "replicas": 1,
        "selector": {"matchLabels": selector_labels()},
        "template": {
            "metadata": {
                "labels": console_labels(args.labels),
                **({"annotations": rolled} if rolled is not None else {}),
            },
            "spec": {
                "automountServiceAccountToken": False,
                "securityContext": pod_security,
                "containers": [dashboard, proxy],
                "volumes": volumes,
            },
        },
    }


def console_deployment(
    name: str,
    args: ConsoleArgs,
    *,
    client_id: str,
    secret: pulumi.Input[str],
    meta: Callable[..., Any],
    opts: pulumi.ResourceOptions,
) -> Deployment:
    return Deployment(
        f"{name}-deploy",
        metadata=meta(NAME),
        spec=wire(deployment_spec(args=args, client_id=client_id, secret=secret)),
        opts=opts,
    )

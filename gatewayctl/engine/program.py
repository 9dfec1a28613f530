"""The program body: validated stack → one ``Cluster`` per cluster, one ``Gateway`` per declaration.

``main()`` is what ``__main__.py`` runs under the Pulumi CLI; the offline render runs the same
``main()`` under the mock runtime. ``build()`` is the part tests call with a loaded stack.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pulumi
import pulumi_keycloak as keycloak

from components.cluster import Cluster, ClusterArgs
from components.gateway import Gateway
from components.identity import keycloak_provider
from components.identity_types import KeycloakServerArgs, server_key
from gatewayctl import ROOT
from gatewayctl.engine import drain, sdk_debug
from gatewayctl.errors import InvalidInputError, printable
from gatewayctl.inputs import windows
from gatewayctl.inputs.environment import with_environment
from gatewayctl.inputs.secrets import ClusterSecrets, all_cluster_secrets
from gatewayctl.inputs.stackfile import (
    BOOL_KEYS,
    OBJECT_KEYS,
    PROJECT,
    STRING_KEYS,
    parse_stack_config,
    stack_file,
)
from gatewayctl.inputs.yamlfile import SECRETS_KEY
from gatewayctl.resolve.resolved import LoadedStack
from gatewayctl.resolve.stack import load_stack

LAZY_SDK_MODULES = {
    "pulumi_keycloak.openid": "Client",
    "pulumi_kubernetes.meta.v1": "ObjectMetaArgs",
}
"""Modules the SDKs import lazily (their ``_utilities.lazy_import``: ``pulumi._utils._LazyModule``)
that a run loads on first use, each with a name it defines: the OpenID clients and mappers of
the sign-in, and the ObjectMeta types the SDK reads from the Kubernetes output classes'
annotations to translate outputs (``pulumi._types.resource_types``)."""


def load_ahead() -> None:
    """Load :data:`LAZY_SDK_MODULES` now: the render's workers are forked from this process after
    it, and each would load them again on its first use (``tests/test_parallel.py``)."""
    for name, defined in LAZY_SDK_MODULES.items():
        # Reading a name the module defines executes it (``_LazyModule.__getattribute__``).
        getattr(importlib.import_module(name), defined)


def build(stack: LoadedStack, secrets: Mapping[str, ClusterSecrets]) -> dict[str, Gateway]:
    """Register every cluster and gateway of a validated stack; return the gateways by name.

    ``secrets`` come from ``all_cluster_secrets``: validated, one entry per cluster. They enter
    the program as secret Outputs, so the engine encrypts them in the state and masks them."""
    clusters: dict[str, Cluster] = {}
    for name, cluster in sorted(stack.config.clusters.items()):
        picked = secrets[name]
        clusters[name] = Cluster(
            name,
            ClusterArgs(
                kubeconfig_context=cluster.kubeconfig_context,
                # None leaves the provider on the operator's kubeconfig (and kubeconfigContext).
                kubeconfig=(
                    pulumi.Output.secret(picked.kubeconfig)
                    if picked.kubeconfig is not None
                    else None
                ),
                database_admin_host=cluster.database.admin_host,
                database_admin_port=cluster.database.admin_port,
                database_admin_user=cluster.database.admin_user,
                database_admin_password=pulumi.Output.secret(picked.db_admin_password),
                database_ssl_root_cert=cluster.database.ssl_root_cert,
                delete_unreachable=cluster.delete_unreachable,
            ),
        )
    servers = keycloak_providers(stack, secrets)
    gateways: dict[str, Gateway] = {}
    for gateway in stack.gateways:
        target = clusters[gateway.cluster]
        gateways[gateway.name] = Gateway(
            gateway.name,
            # The args were decided at resolution; only the role's name becomes the Cluster's
            # output, so each binding waits for its role.
            replace(
                gateway.args,
                node_reader_cluster_role=target.node_reader_cluster_role,
                keycloak_provider=servers.get(gateway.cluster),
            ),
            opts=pulumi.ResourceOptions(providers=[target.kubernetes, target.postgresql]),
        )
    return gateways


def keycloak_providers(
    stack: LoadedStack, secrets: Mapping[str, ClusterSecrets]
) -> dict[str, keycloak.Provider]:
    """One Keycloak provider per server (URL, realm, admin client), by cluster: clusters that
    share a server share its provider. The first cluster (by name) of a server gives its
    secret and CA bundle; every cluster naming the server names the same admin client."""
    made: dict[str, keycloak.Provider] = {}
    by_cluster: dict[str, keycloak.Provider] = {}
    for name, cluster in sorted(stack.config.clusters.items()):
        server = cluster.identity.keycloak
        if server is None:
            continue
        key = server_key(server.url, server.realm, server.admin_client_id)
        if key not in made:
            secret = secrets[name].keycloak_admin_client_secret
            assert secret is not None  # all_cluster_secrets requires it for this cluster
            bundles = stack.bundles.get(name)
            made[key] = keycloak_provider(
                KeycloakServerArgs(
                    url=server.url,
                    realm=server.realm,
                    admin_client_id=server.admin_client_id,
                    admin_client_secret=pulumi.Output.secret(secret),
                    root_ca_certificate=bundles.keycloak if bundles is not None else None,
                )
            )
        by_cluster[name] = made[key]
    return by_cluster


def export(gateways: Mapping[str, Gateway]) -> None:
    """Stack outputs keyed by gateway name."""
    pulumi.export(
        "gateways",
        {
            name: {
                "namespace": gw.namespace,
                "hostname": gw.hostname,
                "address": gw.address,
                "caCertificate": gw.ca_certificate,
                "database": gw.database_name,
                "issuer": gw.issuer,
                "clientId": gw.client_id,
                "roles": gw.roles,
                "consoleAddress": gw.console_address,
            }
            for name, gw in sorted(gateways.items())
        },
    )


def main(
    root: Path = ROOT, *, only: frozenset[str] | None = None, loaded: LoadedStack | None = None
) -> dict[str, Gateway]:
    """Read the stack's config through ``pulumi.Config``, validate, build and export.

    ``only``: build these gateways of the validated stack and no other (every stack-level
    resource is built whatever it holds). The offline render runs one stack's gateways in
    several worker processes, each on its share (``gatewayctl.engine.shares``); ``pulumi up`` never
    passes it. ``loaded``: the stack as the offline render's preparation loaded it from
    ``root`` in this process (``preparation.prepare``), used when the config read here is the
    config it was loaded with (see :func:`_stack`); ``pulumi up`` never passes it."""
    config = pulumi.Config(PROJECT)
    raw = (
        {key: config.get(key) for key in STRING_KEYS}
        | {key: config.get_object(key) for key in OBJECT_KEYS}
        | {key: config.get_object(key) for key in BOOL_KEYS}  # JSON true/false, as written
    )
    own = {k: v for k, v in raw.items() if v is not None}
    # The environment the stack names brings the keys its stacks share (its file in the
    # project, read here as the tools read it: gatewayctl.inputs.environment).
    merged = with_environment(root, stack_file(pulumi.get_stack()), own, project=PROJECT)
    stack = _stack(root, merged, loaded)
    # The plain value, read only to validate its structure before any resource is registered;
    # ``build`` wraps every value back into a secret Output. (pulumi.Config.get_object on a
    # secret key returns the decrypted value; the SDK's warning for that is disabled,
    # pulumi/pulumi sdk/python/lib/pulumi/config.py ``_get``, TODO #7127.)
    secrets = all_cluster_secrets(
        config.get_object(SECRETS_KEY),
        stack.config.clusters,
        stack.config_path,
        [n for n, c in stack.config.clusters.items() if c.identity.keycloak is not None],
        stack=stack.name,
    )
    if only is not None:
        stack = replace(stack, gateways=tuple(g for g in stack.gateways if g.name in only))
    gateways = build(stack, secrets)
    export(gateways)
    return gateways


def run(root: Path = ROOT) -> None:
    """What ``__main__.py`` runs under the CLI (and the lane, ``e2e/project.py``): the SDK's
    output drain made linear (:mod:`gatewayctl.engine.drain`) and its per-resource debug
    messages kept off the wire (:mod:`gatewayctl.engine.sdk_debug`; a warning for each where
    the SDK is not the version it was read from), then :func:`main`, invalid input ending the
    run with its problems alone (``RunError``: one line per problem, no traceback)."""
    for not_installed in (drain.install(), sdk_debug.install()):
        if not_installed is not None:
            pulumi.log.warn(not_installed)
    try:
        # The engine's dry-run flag, set for preview and unset for up (pulumi 3.272.0
        # sdk/python/lib/pulumi/runtime/settings.py, is_dry_run: "doing a preview").
        if not pulumi.runtime.is_dry_run():
            window_open(root, pulumi.get_stack(), datetime.now(UTC), os.environ)
        main(root)
    except InvalidInputError as error:
        raise pulumi.RunError(f"invalid stack input:\n{error}") from None


WINDOW_OVERRIDE = "HYPERSHELL_WINDOW_OVERRIDE"
"""The reason for an update inside a closed change window (``deploy/windows.yaml``)."""


def window_open(
    root: Path,
    stack: str,
    now: datetime,
    env: Mapping[str, str],
    warn: Callable[[str], None] = pulumi.log.warn,
) -> None:
    """An update (``up``, not a preview; the offline render calls :func:`main`) of a stack that
    a change window closes is refused before anything is registered, whoever runs it: CI checks
    the window itself, and the Pulumi Kubernetes Operator retries a failed update with backoff
    until the window opens (pulumi-kubernetes-operator CHANGELOG 2.2.0, #827: default retries,
    ``retryMaxBackoffDurationSeconds``). Its ``Stack`` could be held by preview mode
    (``spec.preview``, 2.3.0 #1012; in reference/crds/pulumi.com/stack_v1.json, v2.9.0), but
    something would have to set and clear it at each window's edges; refused here, the window
    in git is the one switch. ``HYPERSHELL_WINDOW_OVERRIDE`` (a reason) lets it run, with a
    warning that names the reason."""
    decision = windows.decide(windows.read(root).get(stack), now)
    if decision.open:
        return
    reason = env.get(WINDOW_OVERRIDE, "").strip()
    if reason:
        warn(f"change window closed ({decision.why}); overridden: {printable(reason)}")
        return
    until = decision.until.isoformat() if decision.until else "no opening found"
    raise pulumi.RunError(
        f"change window closed: {decision.why}; opens again at {until} ({windows.SETTINGS});"
        f" an emergency update sets {WINDOW_OVERRIDE} to its reason"
    )


def _stack(root: Path, raw: Mapping[str, Any], loaded: LoadedStack | None) -> LoadedStack:
    """The stack of the config ``raw``: ``loaded`` when it is this stack and ``raw`` parses to
    its config (0.5 ms), else loaded here. Reading and resolving every declaration again is what
    ``loaded`` saves: 0.3 s of 500 gateways, once more in each worker of a split render."""
    name = pulumi.get_stack()
    if loaded is not None and loaded.name == name:
        try:
            same = parse_stack_config(loaded.config_path, raw) == loaded.config
        except InvalidInputError:
            same = False  # load_stack reports it, with the declarations' problems
        if same:
            return loaded
    return load_stack(root, name, raw)

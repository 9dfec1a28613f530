"""A declaration's ``spec.credentials`` resolved for the component, and the rules that need more
than one field: the namespace of the kubernetes-secrets driver, and the Vault role and mount.

That namespace, when it is not the gateway's own, receives a Role that lets the gateway read,
create, patch and delete every Secret in it. So it may not be a namespace the stack config
names (router, shared Gateway, metrics, database service: ``ClusterConfig.
referenced_namespaces``), another gateway's namespace, or another gateway's credential
namespace on the same cluster (two tenants would read each other's credentials, and upstream's
fixed Role name would collide). The model already refuses system namespaces. Within a stack
:func:`clashes` checks it (called by ``gatewayctl.resolve.stack``); across the stacks of a
repository, :func:`shared_clashes` (called by ``gatewayctl.resolve.inventory`` with its own notion
of one cluster).
"""

from __future__ import annotations

import ipaddress
import urllib.parse
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Protocol, TypeVar, assert_never

from components.credentials import (
    DEFAULT_CREDENTIALS,
    GatewayCredentials,
    KubernetesSecretsCredentials,
    VaultCredentials,
    external_namespace,
)
from components.hostnames import endpoint
from components.settings import from_fields
from gatewayctl.errors import Problem
from gatewayctl.inputs.clusters import ClusterConfig
from gatewayctl.inputs.gateway_declaration import CredentialsSpec
from gatewayctl.inputs.reserved import namespace_owner

FIELD = "spec.credentials.kubernetesSecrets.namespace"


def resolve(spec: CredentialsSpec, namespace: str) -> GatewayCredentials:
    """The component's credentials for a declaration whose tenant namespace is ``namespace``."""
    match spec.driver:
        case "kek":
            return DEFAULT_CREDENTIALS
        case "kubernetes-secrets":
            chosen = spec.kubernetes_secrets.namespace if spec.kubernetes_secrets else None
            return KubernetesSecretsCredentials(namespace=chosen or namespace)
        case "vault":
            assert spec.vault is not None  # CredentialsSpec requires the block with this driver
            return from_fields(VaultCredentials, spec.vault)
        case _:
            assert_never(spec.driver)


def reserved(
    display: str,
    credentials: GatewayCredentials,
    namespace: str,
    cluster_name: str,
    cluster: ClusterConfig,
    project: Mapping[str, tuple[str, str]],
) -> list[Problem]:
    """The stack config's own namespaces and the project's (``gatewayctl.inputs.reserved``: the
    operator's) are not a credential store, as they are not a gateway's namespace."""
    external = external_namespace(credentials, namespace)
    if external is None:
        return []
    found = namespace_owner(external, cluster.referenced_namespaces(), project)
    if found is None:
        return []
    what, field, of_cluster = found
    where = f" of cluster {cluster_name!r}" if of_cluster else ""
    return [
        Problem(
            display,
            FIELD,
            f"{external!r} is {what}{where} ({field}); the gateway would be granted every"
            " Secret in it",
        )
    ]


class _Gateway(Protocol):
    @property
    def source(self) -> str: ...
    @property
    def namespace(self) -> str: ...
    @property
    def credentials(self) -> GatewayCredentials: ...


def store(gateway: _Gateway) -> str | None:
    """The gateway's credential namespace when it is not its own, else None."""
    return external_namespace(gateway.credentials, gateway.namespace)


def clash(a: _Gateway, b: _Gateway, where: str) -> str | None:
    """Why ``a``'s credential namespace cannot be used next to ``b`` (on one cluster), or None.
    ``where`` names ``b`` in the message (its file, and more across stacks)."""
    external = store(a)
    if external is None or a is b:
        return None
    if external == b.namespace:
        return f"{external!r} is the namespace of the gateway declared in {where}; {_OWN}"
    if external == store(b):
        return (
            f"{external!r} is also the credential namespace of the gateway declared in"
            f" {where}; {_OWN}"
        )
    return None


_OWN = "a gateway's credentials need a namespace no other gateway uses"


G = TypeVar("G", bound=_Gateway)


def clashes(gateways: Sequence[G], cluster_of: Callable[[G], str]) -> list[Problem]:
    """Within one stack: every gateway whose credential namespace another gateway on its
    cluster uses (as its namespace or credential namespace), naming the other's file."""
    # Only a gateway with a credential namespace of its own can clash (``clash``), so the
    # work grows with those times their cluster's gateways, not with the stack's square.
    on_cluster: dict[str, list[G]] = {}
    for gateway in gateways:
        on_cluster.setdefault(cluster_of(gateway), []).append(gateway)
    problems = []
    for a in gateways:
        if store(a) is None:
            continue
        for b in on_cluster[cluster_of(a)]:
            if a is not b:
                message = clash(a, b, b.source)
                if message is not None:
                    problems.append(Problem(a.source, FIELD, message))
    return problems


P = TypeVar("P")


def shared_clashes(
    placed: Iterable[P],
    gateway_of: Callable[[P], _Gateway],
    describe: Callable[[P], str],
    one_cluster: Callable[[P, P], str | None],
    wanted: Callable[[P], bool],
) -> list[Problem]:
    """Across stacks: what :func:`clashes` checks, for gateways of different stacks on clusters
    that ``one_cluster`` says are one (returning why), each described by ``describe``."""
    items = list(placed)
    problems = []
    for a in items:
        if not wanted(a) or store(gateway_of(a)) is None:
            continue
        for b in items:
            reason = one_cluster(a, b) if a is not b else None
            if reason is None:
                continue
            message = clash(gateway_of(a), gateway_of(b), f"{describe(b)}, one cluster by {reason}")
            if message is not None:
                problems.append(Problem(gateway_of(a).source, FIELD, message))
    return problems


def trespasses(
    display: str,
    credentials: GatewayCredentials,
    namespace: str,
    others: Iterable[tuple[str, ClusterConfig, str]],
) -> list[Problem]:
    """Across stacks: the credential namespace is a namespace another stack's config names on
    the same cluster. ``others`` holds (cluster key, its config, the stack file) of the clusters
    that are this gateway's cluster."""
    external = external_namespace(credentials, namespace)
    if external is None:
        return []
    problems = []
    for key, config, path in others:
        referenced = config.referenced_namespaces().get(external)
        if referenced is not None:
            what, field = referenced
            problems.append(
                Problem(
                    display,
                    FIELD,
                    f"{external!r} is {what} of cluster {key!r} in {path} ({field}); the"
                    " gateway would be granted every Secret in it",
                )
            )
    return problems


# --- Vault: one role and one mount per gateway ----------------------------------------------

VAULT_ROLE = "spec.credentials.vault.role"
VAULT_MOUNT = "spec.credentials.vault.mount"
_IN_CLUSTER_SUFFIXES = (".svc", ".svc.cluster.local")


def vault_server(address: str) -> tuple[str, bool]:
    """One Vault server however its address is written (``components.hostnames.endpoint``:
    the one normal form of every endpoint a uniqueness rule compares), and whether the
    address names it only inside the gateway's cluster: a Service
    (``<svc>.<namespace>.svc[.cluster.local]``), a single label (resolved through the pod's
    search domains) or a loopback address, which on another cluster is another server. The
    model has checked the address already."""
    host = (urllib.parse.urlsplit(address).hostname or "").removesuffix(".")
    try:
        in_cluster = ipaddress.ip_address(host).is_loopback
    except ValueError:  # a name
        local = host == "localhost" or "." not in host
        in_cluster = local or host.endswith((".localhost", *_IN_CLUSTER_SUFFIXES))
    return endpoint(address), in_cluster


def _vault_uses(gateway: _Gateway) -> list[tuple[str, tuple[str, ...], str, str]]:
    """What a gateway takes of its Vault server, each (field, key, what it is, why no other
    gateway may take it).

    The role is one of the server's Kubernetes auth method, bound to the gateway's
    ServiceAccount and namespace; Vault looks roles up in lowercase
    (hashicorp/vault-plugin-auth-kubernetes backend.go ``role``: ``strings.ToLower(name)``).
    The mount is where the gateway's Vault driver keeps the credentials."""
    stored = gateway.credentials
    if not isinstance(stored, VaultCredentials):
        return []
    server, address = vault_server(stored.address)[0], stored.address
    return [
        (
            VAULT_ROLE,
            (server, "role", stored.role.lower()),
            f"Vault role {stored.role!r} on {address} is also the role",
            "a role is bound to one gateway's ServiceAccount and namespace, and one role would"
            " give both the same policy: each the other's credentials",
        ),
        (
            VAULT_MOUNT,
            (server, "mount", stored.mount),
            f"KV mount {stored.mount!r} on {address} is also the mount",
            "each would read and overwrite the other's credentials: give each gateway a mount"
            " of its own",
        ),
    ]


def vault_clashes(
    items: Sequence[P],
    gateway_of: Callable[[P], _Gateway],
    describe: Callable[[P], str],
    one_cluster: Callable[[P, P], bool],
    pair: Callable[[P, P], bool] = lambda a, b: True,
    wanted: Callable[[P], bool] = lambda item: True,
) -> list[Problem]:
    """Every gateway (of the ``wanted`` items) whose Vault role or mount another gateway on
    the same Vault server uses, naming the other (``describe``). ``pair`` says which two
    items are compared (within a stack: all; across stacks: gateways of different stacks and
    files). Vault is outside the clusters: one address is one server whatever the clusters,
    except an address that names a server only inside the cluster (:func:`vault_server`),
    compared only between gateways on ``one_cluster``."""
    taken: dict[tuple[str, ...], list[tuple[P, str, str, str]]] = {}
    for item in items:
        for field, key, what, why in _vault_uses(gateway_of(item)):
            taken.setdefault(key, []).append((item, field, what, why))
    problems = []
    for (server, *_), members in taken.items():
        local = _in_cluster(server)
        for a, field, what, why in members:
            if not wanted(a):
                continue
            problems += [
                Problem(
                    gateway_of(a).source,
                    field,
                    f"{what} of the gateway declared in {describe(b)}; {why}",
                )
                for b, *_ in members
                if a is not b and pair(a, b) and (not local or one_cluster(a, b))
            ]
    return problems


def _in_cluster(server: str) -> bool:
    return vault_server(server)[1]

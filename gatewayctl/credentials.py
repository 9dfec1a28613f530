"""A declaration's ``spec.credentials`` resolved for the component, and the rules that need more
than one field: the namespace of the kubernetes-secrets driver.

That namespace, when it is not the gateway's own, receives a Role that lets the gateway read,
create, patch and delete every Secret in it. So it may not be a namespace the stack config
names (router, shared Gateway, metrics, database service: ``ClusterConfig.
referenced_namespaces``), another gateway's namespace, or another gateway's credential
namespace on the same cluster (two tenants would read each other's credentials, and upstream's
fixed Role name would collide). The model already refuses system namespaces. Within a stack
:func:`clashes` checks it (called by ``gatewayctl.resolve``); across the stacks of a repository,
:func:`shared_clashes` (called by ``gatewayctl.inventory`` with its own notion of one cluster).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Protocol, TypeVar

from components.credentials import (
    DEFAULT_CREDENTIALS,
    GatewayCredentials,
    KubernetesSecretsCredentials,
    VaultCredentials,
    external_namespace,
)
from gatewayctl.errors import Problem
from gatewayctl.models import ClusterConfig, CredentialsSpec
from gatewayctl.reserved import namespace_owner

FIELD = "spec.credentials.kubernetesSecrets.namespace"


def resolve(spec: CredentialsSpec, namespace: str) -> GatewayCredentials:
    """The component's credentials for a declaration whose tenant namespace is ``namespace``."""
    if spec.driver == "kubernetes-secrets":
        chosen = spec.kubernetes_secrets.namespace if spec.kubernetes_secrets else None
        return KubernetesSecretsCredentials(namespace=chosen or namespace)
    if spec.driver == "vault":
        assert spec.vault is not None  # CredentialsSpec requires the block with this driver
        vault = spec.vault
        return VaultCredentials(
            address=vault.address,
            role=vault.role,
            mount=vault.mount,
            auth_method=vault.auth_method,
            kubernetes_auth_mount=vault.kubernetes_auth_mount,
            timeout_seconds=vault.timeout_seconds,
        )
    return DEFAULT_CREDENTIALS


def reserved(
    display: str,
    credentials: GatewayCredentials,
    namespace: str,
    cluster_name: str,
    cluster: ClusterConfig,
    project: Mapping[str, tuple[str, str]],
) -> list[Problem]:
    """The stack config's own namespaces and the project's (``gatewayctl.reserved``: the
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
    problems = []
    for a in gateways:
        for b in gateways:
            if a is not b and cluster_of(a) == cluster_of(b):
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

"""What the stacks of a repository share besides declarations.

Stacks also share clusters and database servers without sharing declarations (a staging and a
production stack on one cluster, two clouds' stacks on one PostgreSQL). What one stack's rules
make unique within it (``gatewayctl.resolve.stack``) is checked here across every stack of the
repository: hosts (DNS is global), namespaces per cluster, roles and databases per database server,
and no gateway takes another stack's base domain, configured namespaces or admin role.

What makes two clusters of different stacks one cluster (``same_cluster``): the same
``kubeconfigContext`` (the context names the cluster: give each cluster its own name across
the repository), the same ``baseDomain`` (the cluster's ingress domain: its tenant slots are
one DNS space), or the same key in a shared inventory (where ``spec.cluster`` names one cluster
for every stack that reads it). A database server is its ``adminHost:adminPort``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from gatewayctl.errors import InvalidInputError, Problem
from gatewayctl.inputs.clusters import ClusterConfig
from gatewayctl.inputs.declarations import real_path
from gatewayctl.inputs.stackfile import (
    all_stacks,
)
from gatewayctl.resolve import credential_drivers
from gatewayctl.resolve.resolved import LoadedStack, ResolvedGateway
from gatewayctl.resolve.signin_plan import Realm, clients_of, realm_of
from gatewayctl.resolve.stack import load_stack


@dataclass(frozen=True, kw_only=True)
class _Cluster:
    """One cluster of one stack."""

    stack: str
    config_path: str
    key: str
    config: ClusterConfig
    declarations_dir: str
    inventory: Path
    """``declarations_dir`` resolved: stacks with the same one read a shared inventory."""

    @property
    def server(self) -> str:
        database = self.config.database
        return f"{database.admin_host}:{database.admin_port}"


@dataclass(frozen=True, kw_only=True)
class _Placed:
    """A gateway of one stack on one of its clusters."""

    cluster: _Cluster
    gateway: ResolvedGateway
    file: Path
    """The declaration resolved: one file taken by two stacks is reported as coverage."""


def same_cluster(a: _Cluster, b: _Cluster) -> str | None:
    """Why two clusters of different stacks are one cluster, or None (module docstring)."""
    context = a.config.kubeconfig_context
    if context is not None and context == b.config.kubeconfig_context:
        return f"the same kubeconfigContext {context!r}"
    domain = a.config.base_domain
    if domain is not None and domain == b.config.base_domain:
        return f"the same baseDomain {domain!r}"
    if a.key == b.key and a.inventory == b.inventory:
        return f"the same key in the shared inventory {a.declarations_dir}"
    return None


def _placed(
    root: Path, known: Mapping[str, LoadedStack] | None = None
) -> tuple[list[_Cluster], list[_Placed]]:
    """Every cluster and gateway of every stack that loads; a stack that does not is reported
    when it is validated itself. ``known``: stacks already loaded (``load_stack``), by name."""
    known = known or {}
    clusters: list[_Cluster] = []
    placed: list[_Placed] = []
    for stack in all_stacks(root):
        loaded = known.get(stack)
        if loaded is None:
            try:
                loaded = load_stack(root, stack)
            except InvalidInputError:
                continue
        directory = loaded.config.declarations_dir
        own = {
            key: _Cluster(
                stack=stack,
                config_path=loaded.config_path,
                key=key,
                config=config,
                declarations_dir=directory,
                inventory=real_path(root, directory),
            )
            for key, config in sorted(loaded.config.clusters.items())
        }
        clusters += own.values()
        placed += [
            _Placed(cluster=own[g.cluster], gateway=g, file=real_path(root, g.source))
            for g in loaded.gateways
        ]
    return clusters, placed


def _namespace_clash(a: _Placed, b: _Placed) -> str | None:
    reason = same_cluster(a.cluster, b.cluster)
    if reason is None:
        return None
    return (
        f"namespace {a.gateway.namespace!r} on cluster {a.cluster.key!r} is also used by"
        f" {b.gateway.source} (cluster {b.cluster.key!r} of {b.cluster.config_path}, one"
        f" cluster by {reason})"
    )


def _database_clash(a: _Placed, b: _Placed) -> str:
    return (
        f"database {a.gateway.database_name!r} on server {a.cluster.server} is also used by"
        f" {b.gateway.source} (cluster {b.cluster.key!r} of {b.cluster.config_path})"
    )


def _host_clash(a: _Placed, b: _Placed) -> str:
    return (
        f"host {a.gateway.hostname!r} is also used by {b.gateway.source}"
        f" (cluster {b.cluster.key!r} of {b.cluster.config_path})"
    )


_Rule = tuple[str, Callable[[_Placed], object], Callable[[_Placed, _Placed], str | None]]
_CLASHES: tuple[_Rule, ...] = (
    ("spec.namespace", lambda p: p.gateway.namespace, _namespace_clash),
    ("spec.databaseName", lambda p: (p.cluster.server, p.gateway.database_name), _database_clash),
    ("spec.exposure.host", lambda p: p.gateway.hostname, _host_clash),
)


def _clashes(placed: list[_Placed], wanted: set[str]) -> list[Problem]:
    """Gateways of different stacks with one host, one namespace on one cluster, or one
    role and database on one server: each side is reported, naming the other."""
    problems = []
    for field, key, clash in _CLASHES:
        groups: dict[object, list[_Placed]] = {}
        for item in placed:
            value = key(item)
            if value is not None:
                groups.setdefault(value, []).append(item)
        for members in groups.values():
            for a, b in itertools.permutations(members, 2):
                if a.cluster.stack not in wanted or a.cluster.stack == b.cluster.stack:
                    continue  # within a stack: gatewayctl.resolve.stack's rules
                if a.file == b.file:
                    continue  # one declaration taken by two stacks: a coverage problem
                message = clash(a, b)
                if message is not None:
                    problems.append(Problem(a.gateway.source, field, message))
    return problems


_OWN = "a gateway needs its own"


def _trespasses(item: _Placed, other: _Cluster) -> list[Problem]:
    """What ``item`` takes from a cluster of another stack: a namespace its config refers
    to (on the same cluster), its admin role (on the same server), a host under its base
    domain (unless the host is under the gateway's own base domain, where the hijack guard
    already holds it to its own slot)."""
    gateway, own = item.gateway, item.cluster
    problems = []
    reason = same_cluster(own, other)
    referenced = other.config.referenced_namespaces().get(gateway.namespace)
    if reason is not None and referenced is not None:
        what, field = referenced
        problems.append(
            Problem(
                gateway.source,
                "spec.namespace",
                f"{gateway.namespace!r} is {what} of cluster {other.key!r} in"
                f" {other.config_path} ({field}; one cluster by {reason}); {_OWN}",
            )
        )
    if other.server == own.server and other.config.database.admin_user == gateway.database_name:
        problems.append(
            Problem(
                gateway.source,
                "spec.databaseName",
                f"{gateway.database_name!r} is the database server's admin user"
                f" (database.adminUser of cluster {other.key!r} in {other.config_path}): the"
                " gateway would take over that role (reset its password) and, with"
                " deletionPolicy Delete, drop it; a gateway needs a role and database of its own",
            )
        )
    host, domain = gateway.hostname, other.config.base_domain
    if host is not None and _under(host, domain) and not _under(host, own.config.base_domain):
        problems.append(
            Problem(
                gateway.source,
                "spec.exposure.host",
                f"host {host!r} is under the base domain {domain!r} of cluster {other.key!r}"
                f" in {other.config_path}; a gateway on {own.key!r} of {own.config_path} may"
                " not use it",
            )
        )
    return problems


def _under(host: str, domain: str | None) -> bool:
    return domain is not None and (host == domain or host.endswith("." + domain))


def shared_problems(
    root: Path, stacks: Iterable[str], known: Mapping[str, LoadedStack] | None = None
) -> list[Problem]:
    """What the gateways of ``stacks`` take that another stack of the repository has.

    Hosts are unique across all stacks, namespaces across the stacks' clusters that are one
    cluster (``same_cluster``), roles and databases across the stacks' clusters on one
    database server; and no gateway takes another stack's configured namespaces (router,
    shared Gateway, metrics, database service) on its cluster, its admin role on its server or
    a host under its base domain; nor does it share a Vault role or mount with another stack's
    gateway (one Vault server, whatever the clusters). Each problem names the gateway's file and
    field and the other file. Stacks that do not load are left out (they are reported on their
    own). ``known``: stacks already loaded, by name (the others are loaded here).
    """
    wanted = set(stacks)
    clusters, placed = _placed(root, known)
    problems = _clashes(placed, wanted)
    for item in placed:
        if item.cluster.stack not in wanted:
            continue
        for other in clusters:
            if other.stack != item.cluster.stack:
                problems += _trespasses(item, other)
                problems += _credential_trespasses(item, other)
    problems += credential_drivers.shared_clashes(
        placed,
        lambda p: p.gateway,
        lambda p: f"{p.gateway.source} (cluster {p.cluster.key!r} of {p.cluster.config_path})",
        _other_stack_same_cluster,
        lambda p: p.cluster.stack in wanted,
    )
    problems += _client_clashes(clusters, placed, wanted)
    problems += credential_drivers.vault_clashes(
        placed,
        lambda p: p.gateway,
        lambda p: f"{p.gateway.source} (of {p.cluster.config_path})",
        lambda a, b: same_cluster(a.cluster, b.cluster) is not None,
        lambda a, b: a.cluster.stack != b.cluster.stack and a.file != b.file,
        lambda p: p.cluster.stack in wanted,
    )
    return problems


def _client_clashes(
    clusters: list[_Cluster], placed: list[_Placed], wanted: set[str]
) -> list[Problem]:
    """Stacks whose clusters name one Keycloak server and realm share its client ids: a
    gateway's clients (its own, its console's) may be neither another stack's gateway's nor
    another stack's admin client (``gatewayctl.resolve.signin_plan.client_clashes`` within a
    stack)."""
    owners: dict[tuple[Realm, str], list[tuple[_Placed, str, str]]] = {}
    for item in placed:
        server = item.cluster.config.identity.keycloak
        if server is None:
            continue
        for client_id, field, what in clients_of(item.gateway):
            owners.setdefault((realm_of(server), client_id), []).append((item, field, what))
    admins: dict[tuple[Realm, str], list[_Cluster]] = {}
    for cluster in clusters:
        server = cluster.config.identity.keycloak
        if server is not None:
            admins.setdefault((realm_of(server), server.admin_client_id), []).append(cluster)
    problems = []
    for key, members in owners.items():
        client_id, realm = key[1], key[0][1]
        for item, field, _ in members:
            if item.cluster.stack not in wanted:
                continue
            for other, _, what in members:
                if other.cluster.stack == item.cluster.stack or other.file == item.file:
                    continue  # within a stack: gatewayctl.resolve.signin_plan; one file: coverage
                problems.append(
                    Problem(
                        item.gateway.source,
                        field,
                        f"client {client_id!r} of realm {realm!r} is also used by"
                        f" {other.gateway.source}{what} (cluster {other.cluster.key!r} of"
                        f" {other.cluster.config_path}, on the same Keycloak realm)",
                    )
                )
            for cluster in admins.get(key, []):
                if cluster.stack == item.cluster.stack:
                    continue  # within a stack: gatewayctl.resolve.signin_plan
                problems.append(
                    Problem(
                        item.gateway.source,
                        field,
                        f"client {client_id!r} of realm {realm!r} is the admin client Pulumi"
                        f" signs in with for {cluster.config_path} (identity.keycloak."
                        f"adminClientId of cluster {cluster.key!r}); the gateway would take it"
                        " over, and deleting the gateway would delete it",
                    )
                )
    return problems


def _other_stack_same_cluster(a: _Placed, b: _Placed) -> str | None:
    """Why two gateways of different stacks (and files) are on one cluster, or None."""
    if a.cluster.stack == b.cluster.stack or a.file == b.file:
        return None
    return same_cluster(a.cluster, b.cluster)


def _credential_trespasses(item: _Placed, other: _Cluster) -> list[Problem]:
    """The credential namespace is one another stack's config names on the same cluster."""
    reason = same_cluster(item.cluster, other)
    if reason is None:
        return []
    where = f"{other.config_path}, one cluster by {reason}"
    gateway = item.gateway
    return credential_drivers.trespasses(
        gateway.source, gateway.credentials, gateway.namespace, [(other.key, other.config, where)]
    )

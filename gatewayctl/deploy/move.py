"""Moving a gateway between two stacks of one environment (its shards) without touching the
tenant: ``gatewayctl move`` (issue 39 point 4, rebalancing).

A gateway is one ``Gateway`` component whose children are every resource of the tenant
(namespace, certificates, database role and database, Keycloak client, workload, route), so
its state moves with one URN: ``pulumi state move`` moves a resource with all its children
(pulumi/pulumi v3.274.0 ``pkg/cmd/pulumi/state/state_move.go``, "include all children in the
list of resources to move"; ``pkg/resource/graph/dependency_graph.go`` ``ChildrenOf`` is every
descendant), copies the providers they use into the destination, or uses the destination's
own when its inputs are equal ("the provider is equal for the purpose of resources depending
on it"), and drops dependencies on resources it leaves behind (printed as broken). A copied
provider whose parent does not move is re-parented to the stack (``r.Parent =
rootStack.URN``), so it is not the provider the destination's program declares under its
cluster component: the next ``up`` moves the resources to the declared one (equal inputs, no
change) and deletes the copy, which owns nothing. The real-engine lane showed exactly that
while the gateway owned no provider resource.

The one provider resource of a gateway's own, its database owner's (``<name>-db-owner``), is a
child of the stack (components/database.py): the CLI never moves a provider, and one left in the
source under a moved parent fails the snapshot's integrity check (the real-engine lane,
tests/e2e/test_e2e_i_shards.py, found that while it was the Database component's child). Now
the move copies it into the destination under the URN the destination's program declares, and
the source's next ``up`` deletes its own, which nothing uses. Nothing is
deleted or created in the cluster, PostgreSQL or Keycloak: the next ``up`` of the destination
finds every resource in its state with the same inputs, and the source's finds none of them.

What the tool checks before printing the commands (the move is offline; the commands are
run by the operator):

- the working tree already gives the gateway to the destination (its labels match the
  destination's selector) and no longer to the source;
- the gateway's cluster is the same cluster in both stacks (same ``kubeconfigContext``), with
  the same database server (``adminHost:adminPort``) and, when it signs in through Keycloak,
  the same server and realm: otherwise the destination's program would manage other objects,
  and a state move would not keep the tenant.

The window between the state move and the merge of the relabelling is the one moment the two
stacks disagree with ``main``; the printed procedure says what not to run then.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from components import tokens
from gatewayctl import lazy
from gatewayctl.errors import InvalidInputError, Problem
from gatewayctl.inputs.clusters import ClusterConfig, StackConfig
from gatewayctl.inputs.stackfile import PROJECT, parse_stack_config, read_stack_config, stack_file


@dataclass(frozen=True, kw_only=True)
class MovePlan:
    gateway: str
    source: str
    dest: str
    cluster: str
    namespace: str
    database: str
    database_server: str
    urn: str
    """The ``Gateway`` component's URN in the source stack: the one argument of the move."""

    def commands(self) -> list[str]:
        """The operator's commands, in order."""
        return [
            f"pulumi state move --source {self.source} --dest {self.dest} --yes '{self.urn}'",
            f"pulumi preview --stack {self.dest}",
            f"pulumi preview --stack {self.source}",
        ]

    def document(self) -> dict[str, object]:
        return {
            "gateway": self.gateway,
            "source": self.source,
            "dest": self.dest,
            "cluster": self.cluster,
            "namespace": self.namespace,
            "database": self.database,
            "databaseServer": self.database_server,
            "urn": self.urn,
            "commands": self.commands(),
        }


def gateway_urn(stack: str, gateway: str) -> str:
    """The ``Gateway`` component's URN: a child of the stack (no parent type in it)."""
    return f"urn:pulumi:{stack}::{PROJECT}::{tokens.GATEWAY}::{gateway}"


def _config(root: Path, stack: str) -> StackConfig:
    display, raw = read_stack_config(root, stack)
    return parse_stack_config(display, raw)


def _same_cluster(source: ClusterConfig, dest: ClusterConfig) -> list[str]:
    """What differs between the cluster as the two stacks declare it (empty: one cluster)."""
    differences = []
    if source.kubeconfig_context != dest.kubeconfig_context:
        differences.append(
            f"kubeconfigContext {source.kubeconfig_context!r} != {dest.kubeconfig_context!r}"
        )
    servers = [(c.database.admin_host, c.database.admin_port) for c in (source, dest)]
    if servers[0] != servers[1]:
        differences.append("the database server (adminHost:adminPort) differs")
    realms = [
        (k.url, k.realm) if (k := c.identity.keycloak) is not None else None for c in (source, dest)
    ]
    if realms[0] != realms[1]:
        differences.append("the Keycloak server or realm differs")
    return differences


def plan_move(root: Path, gateway: str, source: str, dest: str) -> MovePlan:
    """Check that ``gateway`` can move from ``source`` to ``dest`` with its state (module
    docstring) and return the plan; InvalidInputError naming each problem."""

    if source == dest:
        raise InvalidInputError([Problem("--from", "", f"the gateway is already in {dest!r}")])
    loaded = lazy.stack.load_stack(root, dest)  # validates the destination with the gateway in it
    found = [g for g in loaded.gateways if g.name == gateway]
    if not found:
        raise InvalidInputError(
            [
                Problem(
                    stack_file(dest),
                    "",
                    f"stack {dest!r} does not take gateway {gateway!r}: change its declaration's"
                    " metadata.labels to match this stack's selector first, in the same pull"
                    " request",
                )
            ]
        )
    (resolved,) = found
    source_loaded = lazy.stack.load_stack(root, source)
    if any(g.name == gateway for g in source_loaded.gateways):
        raise InvalidInputError(
            [
                Problem(
                    resolved.source,
                    "metadata.labels",
                    f"stack {source!r} still takes gateway {gateway!r}: its labels must match"
                    f" the selector of {dest!r} alone",
                )
            ]
        )
    source_clusters = _config(root, source).clusters
    if resolved.cluster not in source_clusters:
        raise InvalidInputError(
            [
                Problem(
                    stack_file(source),
                    f"{PROJECT}:clusters",
                    f"has no cluster {resolved.cluster!r}: a gateway moves between stacks of"
                    " one cluster only (its objects stay where they are)",
                )
            ]
        )
    dest_cluster = loaded.cluster(resolved.cluster)
    differences = _same_cluster(source_clusters[resolved.cluster], dest_cluster)
    if differences:
        raise InvalidInputError(
            [
                Problem(
                    stack_file(dest),
                    f"{PROJECT}:clusters.{resolved.cluster}",
                    f"is not the cluster {source!r} names so: {difference}",
                )
                for difference in differences
            ]
        )
    database = dest_cluster.database
    return MovePlan(
        gateway=gateway,
        source=source,
        dest=dest,
        cluster=resolved.cluster,
        namespace=resolved.namespace,
        database=resolved.database_name,
        database_server=f"{database.admin_host}:{database.admin_port}",
        urn=gateway_urn(source, gateway),
    )


def procedure(plan: MovePlan) -> list[str]:
    """What ``gatewayctl move`` prints: the plan, then the steps with their commands."""
    state_move, preview_dest, preview_source = plan.commands()
    return [
        f"Move gateway {plan.gateway} from stack {plan.source} to stack {plan.dest}"
        f" (cluster {plan.cluster}, namespace {plan.namespace}, database {plan.database} on"
        f" {plan.database_server}), keeping every object: only the state moves.",
        "",
        "1. From the pull request's checkout (the gateway labelled for the destination), and"
        f" while nothing deploys {plan.source} or {plan.dest} (no push to main, no drift"
        " correction), move the gateway's state, its children with it:",
        f"   {state_move}",
        "2. Check both stacks: neither may create, update, replace or delete anything of the"
        " gateway. The only steps allowed are deletes of provider resources: the copies the"
        " move made (re-parented to the stack, so not the providers the program declares) or"
        " left behind; a provider owns nothing in the cluster.",
        f"   {preview_dest}",
        f"   {preview_source}",
        "3. Merge the pull request at once: each stack's next `up` then finds the gateway where"
        " the program declares it. Before the merge, an `up` of the destination from main would"
        " delete the gateway, and one of the source would try to create it again.",
    ]

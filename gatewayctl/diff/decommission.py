"""The diff's refusal of a removal that loses the only copy of a retained database's key
(issue 45 item 2; docs/decommissioning.md).

A removed gateway of :attr:`~.compare.StackDiff.key_only_copies` passes when
``deploy/decommissions.yaml`` (:mod:`gatewayctl.inputs.decommissions`, read from the working
tree: the pull request's own) records it, and the report's risks say what the record says. A
gateway that another stack of the working tree declares in the same namespace, on the same
cluster and database server, is a move between shards and passes too. Any other is refused:
the report says so under **Decommissions**, and ``gatewayctl diff`` exits
:data:`~gatewayctl.cli.exits.EXIT_REFUSED` after writing the report, so the pull request's
check fails with the report in its comment.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from components import naming
from gatewayctl import lazy
from gatewayctl.diff.compare import StackDiff
from gatewayctl.diff.risks import code_span
from gatewayctl.errors import InvalidInputError
from gatewayctl.inputs import decommissions
from gatewayctl.inputs.clusters import StackConfig
from gatewayctl.inputs.stackfile import all_stacks


@dataclass(frozen=True, kw_only=True)
class Refusal:
    stack: str
    gateway: str
    namespace: str
    declaration: str
    """The removed declaration's path (``gateways/<stack>/<gateway>.yaml``)."""

    def message(self) -> str:
        """Names the gateway, its file, the records' file and the two ways out."""
        key = f"{self.stack}/{self.gateway}"
        return (
            f"refused: removing gateway {self.gateway} of stack {self.stack}"
            f" ({self.declaration}) deletes its KEK Secret {naming.KEK_SECRET}, the only copy"
            " of the key of the credentials in its database, which is retained (deletionPolicy"
            f" Retain). Either export the key (kubectl -n {self.namespace} get secret"
            f" {naming.KEK_SECRET} -o yaml) and record it in"
            f" {decommissions.SETTINGS} as `{key}: {{kek: exported, exportedTo: <where the copy"
            f" is kept>}}`, or record there that the credentials may go: `{key}: {{data:"
            ' discard}` (docs/decommissioning.md, "The record")'
        )


def says(record: decommissions.Record) -> str:
    """What ``record`` says, for the report: its free text as code spans."""
    parts = [f"by {code_span(record.by)}" if record.by else "", record.date]
    signed = ", ".join(p for p in parts if p)
    signed = f" ({signed})" if signed else ""
    if record.discard:
        return f"`data: discard`{signed}: the credentials stored in the database may be lost"
    where = code_span(record.exported_to or "")
    return f"`kek: exported`{signed}: the copy of the key is kept at {where}"


def declaration(directory: str, gateway: str) -> str:
    return f"{directory.rstrip('/')}/{gateway}.yaml"


def _moved_to(root: Path, stack: str, gateway: str, namespace: str, cluster: str) -> str | None:
    """Another stack of the working tree that declares ``gateway`` in ``namespace`` on the same
    cluster (``kubeconfigContext``) and database server (``adminHost:adminPort``) as ``stack``'s
    cluster ``cluster``, the removed gateway's own: a move between shards (``gatewayctl move``,
    docs/scale-out.md), whose state move keeps the KEK Secret and the database. Read only for a
    removal that would be refused: loading every stack costs what ``validate --all`` does."""

    def where(config: StackConfig, cluster: str) -> tuple[object, ...] | None:
        found = config.clusters.get(cluster)
        if found is None:
            return None
        return (found.kubeconfig_context, found.database.admin_host, found.database.admin_port)

    try:
        source = lazy.stack.load_stack(root, stack)
    except InvalidInputError:
        return None
    for other in all_stacks(root):
        if other == stack:
            continue
        try:
            loaded = lazy.stack.load_stack(root, other)
        except InvalidInputError:
            continue  # its own diff and `validate` say why
        for declared in loaded.gateways:
            if declared.name != gateway or declared.namespace != namespace:
                continue
            there = where(loaded.config, declared.cluster)
            if there is not None and there == where(source.config, cluster):
                return other
    return None


def apply(
    root: Path, diffs: Sequence[StackDiff], directories: Mapping[str, str]
) -> tuple[list[StackDiff], list[Refusal]]:
    """``diffs`` with the report's lines of each removal that loses the only key of a retained
    database, and the refusals among them. ``directories``: each stack's declarations
    directory. InvalidInputError for a records file that cannot be read."""
    records = decommissions.read(root)
    found: list[StackDiff] = []
    refused: list[Refusal] = []
    for diff in diffs:
        lines = []
        for gateway in diff.key_only_copies:
            record = records.get(f"{diff.stack}/{gateway}")
            who = f"gateway `{gateway}` is removed, its database retained and its KEK deleted"
            if record is not None:
                lines.append(f"{who}: `{decommissions.SETTINGS}` records {says(record)}")
                continue
            directory = directories.get(diff.stack, f"gateways/{diff.stack}")
            namespaces = {g.name: str(g.namespace) for g in diff.gateways}
            clusters = {g.name: str(g.cluster) for g in diff.gateways}
            namespace = namespaces.get(gateway, naming.default_namespace(gateway))
            moved = _moved_to(root, diff.stack, gateway, namespace, clusters.get(gateway, ""))
            if moved is not None:
                lines.append(
                    f"gateway `{gateway}` leaves this stack for stack `{moved}`, which declares it"
                    f" in namespace `{namespace}` on the same cluster and database server: a move"
                    " (`gatewayctl move`, docs/scale-out.md), whose state move keeps its KEK"
                    " Secret and database; not refused. Without the state move first, the next"
                    " `up` of this stack deletes them"
                )
                continue
            refusal = Refusal(
                stack=diff.stack,
                gateway=gateway,
                namespace=namespace,
                declaration=declaration(directory, gateway),
            )
            refused.append(refusal)
            lines.append(
                f"**refused**: {who}, and `{decommissions.SETTINGS}` has no record of"
                f" `{diff.stack}/{gateway}`: add `kek: exported` with `exportedTo: <where the"
                " copy is kept>` after exporting the key, or `data: discard` if the credentials"
                " may go"
            )
        found.append(dataclasses.replace(diff, decommissions=tuple(lines)) if lines else diff)
    return found, refused

"""``gatewayctl graph``: a picture of stacks → clusters → gateways and what the clusters share:
database servers, Keycloak realms and base domains (issue 25 item 7).

The stacks are read offline and validated as ``validate`` validates them (the same problems,
exit 2); no provider SDK is loaded. The picture holds only names, hosts, realms, URLs and
domains, never a secret, and is the same byte for byte for the same input whatever the order
of the files: every list is sorted.

A database server is its ``adminHost:adminPort`` and a realm its server URL and name, as
``gatewayctl.resolve.inventory`` and ``gatewayctl.resolve.signin_plan`` compare them, so clusters of
different stacks that share one point at one node. Node ids are built from the names with every byte
outside ``a-z0-9`` escaped (``_`` and two hex digits), which keeps them valid in Mermaid and
DOT and tells distinct names apart; labels are escaped for each format.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from gatewayctl import lazy
from gatewayctl.cli import arguments
from gatewayctl.cli.exits import EXIT_OK
from gatewayctl.cli.prepared import _prepare_all
from gatewayctl.errors import InvalidInputError, Problem

if TYPE_CHECKING:
    from rich.console import Console

    from gatewayctl.resolve.preparation import Prepared
    from gatewayctl.resolve.resolved import LoadedStack

Format = Literal["mermaid", "dot"]
FORMATS: tuple[Format, ...] = ("mermaid", "dot")
Kind = Literal["stack", "cluster", "gateway", "database", "realm", "domain"]

MERMAID_HEADER = "%% gatewayctl graph: stacks, clusters, gateways and what they share"
DOT_HEADER = "// gatewayctl graph: stacks, clusters, gateways and what they share"
"""First lines of what the command writes: ``--output`` overwrites only such a file."""


@dataclass(frozen=True, kw_only=True)
class Node:
    id: str
    kind: Kind
    lines: tuple[str, ...]
    """The label, one entry per line."""


@dataclass(frozen=True, kw_only=True)
class Edge:
    source: str
    target: str
    shared: bool
    """A cluster's database server, realm or base domain (drawn dotted), not a part of it."""


@dataclass(frozen=True, kw_only=True)
class Graph:
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]


_ID_SAFE = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789")


def _id_part(text: str) -> str:
    return "".join(
        chr(byte) if byte in _ID_SAFE else f"_{byte:02x}" for byte in text.encode("utf-8")
    )


def node_id(kind: Kind, *parts: str) -> str:
    """``kind__part__part``, each part escaped: an escape is ``_`` and two hex digits, so
    ``__`` only ever separates parts and two different names never share an id."""
    return "__".join([kind, *(_id_part(part) for part in parts)])


def build(stacks: Iterable[LoadedStack]) -> Graph:
    """The graph of validated stacks, sorted: stacks by name, their clusters by key, the
    gateways of each cluster by name; then the shared nodes by kind and id."""

    nodes: list[Node] = []
    edges: list[Edge] = []
    shared: dict[str, Node] = {}
    uses: list[Edge] = []
    for loaded in sorted(stacks, key=lambda s: s.name):
        stack = node_id("stack", loaded.name)
        nodes.append(Node(id=stack, kind="stack", lines=(f"stack {loaded.name}",)))
        for key, config in sorted(loaded.config.clusters.items()):
            cluster = node_id("cluster", loaded.name, key)
            nodes.append(Node(id=cluster, kind="cluster", lines=(f"cluster {key}",)))
            edges.append(Edge(source=stack, target=cluster, shared=False))
            for gateway in sorted(
                (g for g in loaded.gateways if g.cluster == key), key=lambda g: g.name
            ):
                leaf = node_id("gateway", loaded.name, gateway.name)
                nodes.append(Node(id=leaf, kind="gateway", lines=(gateway.name,)))
                edges.append(Edge(source=cluster, target=leaf, shared=False))
            server = f"{config.database.admin_host}:{config.database.admin_port}"
            used = [
                Node(id=node_id("database", server), kind="database", lines=("PostgreSQL", server))
            ]
            if config.identity.keycloak is not None:
                url, realm = lazy.signin_plan.realm_of(config.identity.keycloak)
                used.append(
                    Node(
                        id=node_id("realm", url, realm),
                        kind="realm",
                        lines=(f"Keycloak realm {realm}", url),
                    )
                )
            if config.base_domain is not None:
                domain = config.base_domain
                used.append(
                    Node(id=node_id("domain", domain), kind="domain", lines=("base domain", domain))
                )
            for node in used:
                shared[node.id] = node
                uses.append(Edge(source=cluster, target=node.id, shared=True))
    order: dict[Kind, int] = {"database": 0, "realm": 1, "domain": 2}
    nodes += sorted(shared.values(), key=lambda n: (order[n.kind], n.id))
    return Graph(nodes=tuple(nodes), edges=(*edges, *uses))


# --- Mermaid ----------------------------------------------------------------------------------

_MERMAID_SHAPES: dict[Kind, tuple[str, str]] = {
    "stack": ("([", "])"),
    "cluster": ("[", "]"),
    "gateway": ("(", ")"),
    "database": ("[(", ")]"),
    "realm": ("{{", "}}"),
    "domain": ("[/", "/]"),
}
_LABEL_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .:/_-@")


def mermaid_label(lines: Sequence[str]) -> str:
    """A quoted Mermaid label: characters outside letters, digits and `` .:/_-@`` as entity
    codes (``#34;``), so no name can close the quote or the shape, or be read as HTML; lines
    joined with ``<br>``."""
    escaped = ("".join(c if c in _LABEL_SAFE else f"#{ord(c)};" for c in line) for line in lines)
    return '"' + "<br>".join(escaped) + '"'


def mermaid(graph: Graph) -> str:
    """A Mermaid flowchart, left to right (GitHub renders a ```` ```mermaid ```` block)."""
    lines = [MERMAID_HEADER, "flowchart LR"]
    for node in graph.nodes:
        opening, closing = _MERMAID_SHAPES[node.kind]
        lines.append(f"    {node.id}{opening}{mermaid_label(node.lines)}{closing}")
    for edge in graph.edges:
        arrow = "-.->" if edge.shared else "-->"
        lines.append(f"    {edge.source} {arrow} {edge.target}")
    return "\n".join(lines) + "\n"


# --- DOT --------------------------------------------------------------------------------------

_DOT_SHAPES: dict[Kind, str] = {
    "stack": 'shape=box, style="rounded,bold"',
    "cluster": "shape=box",
    "gateway": 'shape=box, style="rounded"',
    "database": "shape=cylinder",
    "realm": "shape=hexagon",
    "domain": "shape=note",
}


def dot_string(text: str) -> str:
    """A quoted DOT string: backslashes and quotes escaped, so none is read as an escape
    sequence of the label (``\\n``, ``\\l``) or closes the string; control characters as
    spaces."""
    body = "".join(" " if ord(c) < 32 or ord(c) == 127 else c for c in text)
    return '"' + body.replace("\\", "\\\\").replace('"', '\\"') + '"'


def dot(graph: Graph) -> str:
    """A Graphviz digraph, left to right (``dot -Tsvg``)."""
    lines = [DOT_HEADER, "digraph gateways {", "    rankdir=LR;"]
    for node in graph.nodes:
        label = "\\n".join(dot_string(line)[1:-1] for line in node.lines)
        lines.append(f'    "{node.id}" [label="{label}", {_DOT_SHAPES[node.kind]}];')
    for edge in graph.edges:
        style = " [style=dashed]" if edge.shared else ""
        lines.append(f'    "{edge.source}" -> "{edge.target}"{style};')
    lines.append("}")
    return "\n".join(lines) + "\n"


def formatted(graph: Graph, format: Format) -> str:
    """The graph as ``format`` writes it."""
    return mermaid(graph) if format == "mermaid" else dot(graph)


def is_graph(text: str) -> bool:
    """True for a file this command wrote (its first line): ``--output`` overwrites only such
    a file."""
    return text.startswith((MERMAID_HEADER + "\n", DOT_HEADER + "\n"))


# --- reading the stacks -------------------------------------------------------------------------


def requested(root: Path, names: Sequence[str]) -> list[str]:
    """The stacks named (each checked as ``validate`` checks its one), sorted and once each;
    every stack when none is named."""

    if not names:
        return lazy.stackfile.requested_stacks(root, None)
    found: list[str] = []
    problems: list[Problem] = []
    for name in dict.fromkeys(names):
        try:
            found += lazy.stackfile.requested_stacks(root, name)
        except InvalidInputError as error:
            problems += error.problems
    if problems:
        raise InvalidInputError(problems)
    return sorted(found)


def validated(
    root: Path,
    stacks: Sequence[str],
    prepare_all: Callable[[Path, Sequence[str]], list[Prepared]],
) -> list[LoadedStack]:
    """The stacks as ``validate`` checks them (``gatewayctl.cli.validate.cmd_validate``, without
    ``--deploy``): ``prepare_all`` (``gatewayctl.cli.prepared._prepare_all``: each stack, the
    rules across stacks and ``validate``'s own). InvalidInputError with the same problems, in
    the same order, as ``validate``."""
    return [item.loaded for item in prepare_all(root, stacks)]


GRAPH_EPILOG = """\
exit codes: 0 ok; 2 invalid input (the problems `validate` reports, every one listed as
`path: field: problem`, or an output file the tool may not write; nothing written); 1 any
other error.

examples:
  gatewayctl graph --all                       # Mermaid, for a Markdown page
  gatewayctl graph aws ibm --format dot -o build/gateways.dot
  gatewayctl graph --all --format dot | dot -Tsvg > gateways.svg
"""


def add(commands: arguments.Commands) -> None:
    gra = commands.add_parser(
        "graph",
        help="draw stacks, clusters, gateways and the database servers, realms and base"
        " domains they share (Mermaid or DOT)",
        description="Write a graph of stacks → clusters → gateways, and of each cluster's"
        " database server, Keycloak realm and base domain (one node for what clusters share),"
        " read from the stack files and declarations and validated as `validate` does. Only"
        " names, hosts, realms and domains appear, never a secret; sorted, so the same input"
        " gives the same bytes.",
        epilog=GRAPH_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    arguments.many_stacks_arguments(gra)
    gra.add_argument(
        "--format", choices=["mermaid", "dot"], default="mermaid", help="default mermaid"
    )
    arguments.output_argument(
        gra,
        "-o",
        "--output",
        metavar="FILE",
        help="write the graph to FILE (a new file, or a graph it wrote) instead of stdout",
    )
    gra.set_defaults(func=cmd_graph)


def cmd_graph(args: argparse.Namespace, console: Console) -> int:
    """Stacks, clusters, gateways and what they share, as a Mermaid or DOT graph."""

    arguments.check_many_stacks(args)
    names = requested(args.root, args.stacks)
    jobs = arguments.jobs(args, len(names))
    stacks = validated(args.root, names, lambda root, s: _prepare_all(root, s, jobs))
    if args.output is not None:
        arguments.check_file(args.output, args.root, ours=is_graph, kind="a graph", flag="--output")
    text = formatted(build(stacks), args.format)
    if args.output is None:
        sys.stdout.write(text)  # raw: rich would read `[` as markup
    else:
        lazy.write_guard.write_file(args.output, text)
        console.print(f"{args.output}", markup=False, soft_wrap=True)
    return EXIT_OK

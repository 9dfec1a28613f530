"""Resolve a stack: its config and its declarations, validated together before any resource
(one declaration at a time by :mod:`gatewayctl.resolve.per_gateway`, then the rules across them).

Every problem of every file is collected and raised at once as ``InvalidInputError``; nothing is
returned half-valid. Cross-file rules: the cluster exists (or is the only one), names,
namespaces and hosts are unique, hosts obey the one hostname function, images resolve, no
gateway takes a namespace or role the stack config refers to, no two share a credential
namespace or a Vault role or mount. The files themselves are read by
:mod:`gatewayctl.inputs.stackfile` and :mod:`gatewayctl.inputs.declarations`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from gatewayctl.errors import InvalidInputError, Problem
from gatewayctl.inputs import reserved
from gatewayctl.inputs.clusters import StackConfig
from gatewayctl.inputs.declarations import load_declarations
from gatewayctl.inputs.gateway_declaration import GatewayDeclaration
from gatewayctl.inputs.model import is_inside_project
from gatewayctl.inputs.release_files import load_releases
from gatewayctl.inputs.stackfile import PROJECT, parse_stack_config, read_stack_config, stack_file
from gatewayctl.resolve import credential_drivers
from gatewayctl.resolve.per_gateway import pick_cluster, resolve_gateway, service_namespaces
from gatewayctl.resolve.release_bindings import binding_problems
from gatewayctl.resolve.resolved import LoadedStack, ResolvedGateway
from gatewayctl.resolve.signin_plan import (
    client_clashes,
    kept_client_problem,
    no_sign_in,
    no_sign_in_problem,
    read_bundles,
)


def selects(config: StackConfig, declaration: GatewayDeclaration) -> bool:
    """A shared inventory's rule: on one of the stack's clusters, with every selector label."""
    wanted = config.selector.match_labels.items() if config.selector else ()
    return declaration.spec.cluster in config.clusters and all(
        declaration.metadata.labels.get(k) == v for k, v in wanted
    )


def _select(
    declarations: list[tuple[str, GatewayDeclaration]], config: StackConfig
) -> tuple[list[tuple[str, GatewayDeclaration]], list[Problem]]:
    problems = [
        Problem(source, "spec.cluster", "required in a shared inventory")
        for source, declaration in declarations
        if declaration.spec.cluster is None
    ]
    return [(s, d) for s, d in declarations if selects(config, d)], problems


def _duplicates(gateways: Sequence[ResolvedGateway], config: StackConfig) -> list[Problem]:
    """Names, namespaces (per cluster), databases and their roles (per database server, which
    clusters may share) and hosts (DNS is global) are unique."""

    def server(gateway: ResolvedGateway) -> str:
        database = config.clusters[gateway.cluster].database
        return f"{database.admin_host}:{database.admin_port}"

    rules: tuple[
        tuple[str, Callable[[ResolvedGateway], object], Callable[[ResolvedGateway], str]], ...
    ] = (
        ("metadata.name", lambda g: g.name, lambda g: f"gateway {g.name!r} is already declared in"),
        (
            "spec.namespace",
            lambda g: (g.cluster, g.namespace),
            lambda g: f"namespace {g.namespace!r} on cluster {g.cluster!r} is already used by",
        ),
        (
            "spec.databaseName",
            lambda g: (server(g), g.database_name),
            lambda g: f"database {g.database_name!r} on server {server(g)} is already used by",
        ),
        (
            "spec.exposure.host",
            lambda g: g.hostname,
            lambda g: f"host {g.hostname!r} is already used by",
        ),
        (
            "spec.console.enabled",
            lambda g: g.console_host,
            lambda g: f"console host {g.console_host!r} is already used by",
        ),
    )
    problems = []
    for field, key, clash in rules:
        seen: dict[object, str] = {}
        for gateway in gateways:
            value = key(gateway)
            if value is None:
                continue
            if value in seen:
                problems.append(Problem(gateway.source, field, f"{clash(gateway)} {seen[value]}"))
            else:
                seen[value] = gateway.source
    return problems


def _linked_outside(root: Path, display: str, config: StackConfig) -> list[Problem]:
    """``database.sslRootCert`` files that a symbolic link leads out of the project: ``pulumi
    up`` would hand the provider a file of the machine running it (the model refuses absolute
    paths and ``..``)."""
    problems = []
    for name, cluster in sorted(config.clusters.items()):
        path = cluster.database.ssl_root_cert
        if path is None:
            continue
        field = f"{PROJECT}:clusters.{name}.database.sslRootCert"
        try:
            inside = (root / path).resolve().is_relative_to(root.resolve())
        except (OSError, RuntimeError) as error:  # a link loop is a RuntimeError before 3.13
            reason = getattr(error, "strerror", None) or "a loop of symbolic links"
            problems.append(Problem(display, field, f"{path!r} cannot be resolved: {reason}"))
            continue
        if not inside:
            problems.append(
                Problem(
                    display,
                    field,
                    f"{path!r} leads outside the project through a symbolic link; it must be a"
                    " file inside the project",
                )
            )
    return problems


def _declaration_problems(root: Path, display: str, raw_config: Mapping[str, Any]) -> list[Problem]:
    """With the stack config broken, still check each declaration on its own (no clusters)."""
    directory = raw_config.get("declarationsDir")
    if not isinstance(directory, str) or not is_inside_project(directory):
        return []
    return load_declarations(root, directory, None, config_path=display)[1]


def validate_rules(root: Path, stack: str) -> list[Problem]:
    """``validate``'s own rules (``gatewayctl.resolve.signin_plan.validate_rules``:
    nobody can sign in,
    an adopted client without its ids) for a stack that does not load: every declaration valid on
    its own whose cluster is known, so that the rules are reported with the stack's other
    problems, not only once they are fixed."""
    try:
        display, raw = read_stack_config(root, stack)
        config = parse_stack_config(display, raw)
    except (InvalidInputError, OSError):
        return []  # the stack file's own problems; its declarations cannot be placed
    inventory = config.selector is not None
    declarations, _ = load_declarations(
        root, config.declarations_dir, None if inventory else config.clusters, config_path=display
    )
    if inventory:
        declarations, _ = _select(declarations, config)
    problems = []
    for source, declaration in declarations:
        spec = declaration.spec
        cluster_name, _ = pick_cluster(source, spec.cluster, config)
        if cluster_name is None:
            continue
        cluster = config.clusters[cluster_name]
        if no_sign_in(spec, cluster):
            problems.append(no_sign_in_problem(source, cluster_name))
        # Without the cluster's Keycloak, spec.keycloak is a problem of its own.
        if spec.namespace is not None and spec.keycloak and cluster.identity.keycloak is not None:
            name, kept = declaration.metadata.name, spec.keycloak
            found = kept_client_problem(source, name, kept.client_id, kept.import_ids)
            problems += [found] if found is not None else []
    return problems


def load_stack(root: Path, stack: str, raw_config: Mapping[str, Any] | None = None) -> LoadedStack:
    """Validate a stack's config and all its declarations; raise InvalidInputError on problems.

    ``raw_config`` is the project's config keys without prefix (from ``pulumi.Config`` in a
    real run); when None it is read from ``Pulumi.<stack>.yaml``.
    """
    display = stack_file(stack)
    if raw_config is None:
        display, raw_config = read_stack_config(root, stack)
    try:
        config = parse_stack_config(display, raw_config)
    except InvalidInputError as error:
        raise InvalidInputError(
            error.problems + _declaration_problems(root, display, raw_config)
        ) from None
    inventory = config.selector is not None
    declarations, problems = load_declarations(
        root, config.declarations_dir, None if inventory else config.clusters, config_path=display
    )
    releases, release_problems = load_releases(root)
    problems += release_problems + binding_problems(display, config, releases)
    problems += _linked_outside(root, display, config)
    bundles, found = read_bundles(root, display, config)
    problems += found
    # Every declaration's services, selected or not: each names its cluster's namespaces.
    project = service_namespaces(declarations) | reserved.project_namespaces(root)
    if inventory:
        declarations, missing = _select(declarations, config)
        problems += missing
    gateways: list[ResolvedGateway] = []
    for source, declaration in declarations:
        gateway, found = resolve_gateway(
            source, declaration, config, display, releases, bundles, project
        )
        problems += found
        if gateway is not None:
            gateways.append(gateway)
    problems += _duplicates(gateways, config)
    problems += credential_drivers.clashes(gateways, lambda g: g.cluster)
    problems += credential_drivers.vault_clashes(
        gateways, lambda g: g, lambda g: g.source, lambda a, b: a.cluster == b.cluster
    )
    problems += client_clashes(gateways, config)
    if problems:
        raise InvalidInputError(problems)
    return LoadedStack(
        name=stack,
        config_path=display,
        config=config,
        gateways=tuple(sorted(gateways, key=lambda g: g.name)),
        releases=releases,
        bundles=bundles,
    )

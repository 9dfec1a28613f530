"""A stack validated and its program's config built, before anything runs (docs/render.md): what
``validate`` needs and ``render`` starts from. No provider SDK is imported here, so validating
a stack does not load one (issue 23); ``gatewayctl.engine.render`` runs the program.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gatewayctl.errors import InvalidInputError, Problem
from gatewayctl.inputs import stackfile
from gatewayctl.inputs.environment import with_environment
from gatewayctl.inputs.secrets import (
    KEYCLOAK_SECRET,
    SECURE_PLACEHOLDER,
    all_cluster_secrets,
    is_secure,
    replace_secure,
    set_secret,
)
from gatewayctl.inputs.stackfile import PROJECT, read_stack_config
from gatewayctl.inputs.yamlfile import SECRETS_KEY
from gatewayctl.resolve.release_bindings import history_problems
from gatewayctl.resolve.resolved import LoadedStack
from gatewayctl.resolve.stack import load_stack

_LOOPBACK = {"localhost", "127.0.0.1", "::1"}


def plaintext_notes(loaded: LoadedStack, secrets: Any) -> tuple[str, ...]:
    """Warnings for ``clusterSecrets`` values written in plaintext in the committed stack file.

    They are still read as secrets and redacted everywhere, but they are in git. A cluster
    whose database is on this machine (a local kind stack) is exempt.
    """
    if not isinstance(secrets, dict):
        return ()
    warnings: list[str] = []
    for cluster, values in sorted(secrets.items(), key=lambda item: str(item[0])):
        config = loaded.config.clusters.get(cluster)
        if not isinstance(values, dict) or (
            config is not None and config.database.admin_host in _LOOPBACK
        ):
            continue
        warnings += [
            f"{loaded.config_path}: {SECRETS_KEY}.{cluster}.{key}: plaintext in a file kept in"
            f" git; set it with {set_secret(loaded.name, f'{SECRETS_KEY}.{cluster}.{key}')}"
            for key, value in sorted(values.items(), key=lambda item: str(item[0]))
            if not is_secure(value)
        ]
    return tuple(warnings)


def keycloak_clusters(clusters: Any) -> list[str]:
    """The clusters of a raw ``clusters`` value that name a Keycloak server (their secrets need
    its admin client's); tolerant of a malformed value, which the stack's validation reports."""
    if not isinstance(clusters, dict):
        return []
    return sorted(
        (
            str(name)
            for name, cluster in clusters.items()
            if isinstance(cluster, dict)
            and isinstance(cluster.get("identity"), dict)
            and cluster["identity"].get("keycloak") is not None
        ),
    )


def _secret_problems(
    stack: str, display: str, secrets: Any, clusters: list[str], keycloak: list[str]
) -> list[Problem]:
    try:
        all_cluster_secrets(secrets, clusters, display, keycloak, stack=stack)
    except InvalidInputError as error:
        return error.problems
    return []


def offline_config(
    root: Path, stack: str, text: str | None = None
) -> tuple[LoadedStack, dict[str, str], int, tuple[str, ...]]:
    """Validate the stack and build the config map a real ``pulumi up`` would hand the program;
    also count its ``secure:`` values and warn of its plaintext secrets. ``text``: the stack
    file's content about to be written (``promote``), instead of the file's.

    Declaration, config and secret problems are reported together.
    """
    # The program is handed the stack file's own keys, as `pulumi up` hands them; it reads the
    # environment they name itself (gatewayctl.engine.program), as the checks here do.
    display, own = read_stack_config(root, stack, text, merge=False)
    raw = with_environment(root, display, own, project=PROJECT)
    problems: list[Problem] = []
    try:
        loaded: LoadedStack | None = load_stack(root, stack, raw)
    except InvalidInputError as error:
        problems += error.problems
        loaded = None
    notes = plaintext_notes(loaded, raw.get(SECRETS_KEY)) if loaded is not None else ()
    counter = [0]
    own = replace_secure(own, counter)
    clusters = raw.get("clusters")
    names = sorted(clusters, key=str) if isinstance(clusters, dict) else []
    if own.get(SECRETS_KEY) == SECURE_PLACEHOLDER:
        # The whole object is one `secure:` value: its shape is unknown offline.
        own[SECRETS_KEY] = {
            name: {"dbAdminPassword": SECURE_PLACEHOLDER}
            | ({KEYCLOAK_SECRET: SECURE_PLACEHOLDER} if name in keycloak_clusters(clusters) else {})
            for name in names
        }
    if names:  # else the clusters are the problem: no secret can be matched to one
        problems += _secret_problems(
            stack, display, own.get(SECRETS_KEY), names, keycloak_clusters(clusters)
        )
    if problems or loaded is None:
        raise InvalidInputError(problems)
    config = {
        f"{PROJECT}:{key}": value if isinstance(value, str) else json.dumps(value)
        for key, value in own.items()
    }
    return loaded, config, counter[0], notes


@dataclass(frozen=True, kw_only=True)
class Prepared:
    """A validated stack and the config map its program will read."""

    root: Path
    loaded: LoadedStack
    config: dict[str, str]
    secure_placeholders: int
    plaintext_notes: tuple[str, ...] = ()
    """Warnings for plaintext ``clusterSecrets`` (see ``secrets.plaintext_notes``)."""
    release_notes: tuple[str, ...] = ()
    """What could not be checked of the releases' history (``releases.history_problems``)."""


RECOMMENDED_GATEWAYS_PER_STACK = 10
"""The most gateways one stack should hold for ``pulumi up`` on a backend without journaling
(file, S3, GCS, Azure Blob): there the CLI saves the whole snapshot after every step
(pulumi/pulumi v3.274.0 pkg/backend/snapshot.go, ``defaultServiceLoop``), so an ``up`` costs
the square of the stack. The size is the engine bench's (``make engine-bench``,
docs/performance.md, "The real engine"): the largest measured whose preview took <= 30 s and
whose up from empty <= 2 min on 2 cores, with every resource in the engine (2026-12-06: 10
gateways 14.1 s and 71.7 s; 25 gateways 29.6 s and 364.4 s). It also bounds the plugin
processes of a stack: the engine starts one per provider resource, and each gateway has its
own database owner's provider."""


def size_notes(loaded: LoadedStack) -> list[str]:
    """A warning for a stack larger than :data:`RECOMMENDED_GATEWAYS_PER_STACK`."""
    count = len(loaded.gateways)
    if count <= RECOMMENDED_GATEWAYS_PER_STACK:
        return []
    return [
        f"{loaded.config_path}: {count} gateways in one stack, more than the"
        f" {RECOMMENDED_GATEWAYS_PER_STACK} recommended: `pulumi up` on a self-managed backend"
        " grows with the square of a stack; split its gateways over several stacks"
        " (docs/scale-out.md, docs/performance.md)"
    ]


def absent_ca_bundles(root: Path, loaded: LoadedStack) -> list[str]:
    """Warnings for ``database.sslRootCert`` files that are not in the project directory.

    The offline render never connects, so it does not need them; ``pulumi up`` does (the
    PostgreSQL provider verifies the admin connection with the bundle, ``verify-full``).
    """
    return [
        f"{loaded.config_path}: clusters.{name}.database.sslRootCert:"
        f" {cluster.database.ssl_root_cert!r} is not in the project directory;"
        " `pulumi up` needs it to verify the database server (the offline render does not)"
        for name, cluster in sorted(loaded.config.clusters.items())
        if cluster.database.ssl_root_cert is not None
        and not (root / cluster.database.ssl_root_cert).is_file()
    ]


def prepare(root: Path, stack: str) -> Prepared:
    """Validate config, declarations and secrets; raise InvalidInputError with every problem."""
    if problems := stackfile.stack_name_problems(stack):
        raise InvalidInputError(problems)  # before its name makes a path
    loaded, config, placeholders, notes = offline_config(root, stack)
    # Immutability needs git: checked by the tooling (validate, render, diff, promote), not by
    # the program that `pulumi up` runs (docs/design-notes.md, "Releases").
    problems, release_notes = history_problems(root, loaded.releases)
    if problems:
        raise InvalidInputError(problems)
    return Prepared(
        root=root,
        loaded=loaded,
        config=config,
        secure_placeholders=placeholders,
        plaintext_notes=notes,
        release_notes=tuple(release_notes),
    )

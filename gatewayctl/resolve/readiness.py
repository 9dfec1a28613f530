"""Deploy readiness: what a real ``pulumi up`` needs that the offline render does not.

The offline render never connects to a database and never decrypts a secret, so it renders a
stack whose CA bundles are absent and whose ``secure:`` values are stand-ins. ``pulumi up``
would apply the Kubernetes objects first and fail at the first PostgreSQL role, halfway.
``validate --deploy`` (in ``deploy.yml`` and ``drift.yml``) and ``operator-manifests`` (for the
stacks it hands the operator) refuse such a stack before anything is applied.

Checked, per stack: every ``database.sslRootCert`` is a PEM certificate bundle inside the
project; no ``secure:`` value of the stack file is a placeholder
(:func:`gatewayctl.inputs.secrets.is_placeholder`); each cluster has its ``clusterSecrets`` entry
(the structural validation already requires it). Problems name the file and the key, never a value.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from gatewayctl.errors import InvalidInputError, Problem
from gatewayctl.inputs.pem import NO_CERTIFICATE, bundle_problem
from gatewayctl.inputs.secrets import placeholder_problems
from gatewayctl.inputs.stackfile import PROJECT
from gatewayctl.resolve.preparation import Prepared
from gatewayctl.resolve.resolved import LoadedStack

CA_BUNDLE_LIMIT = 4 * 1024 * 1024
"""A CA bundle larger than this is not one (AWS's global RDS bundle is about 160 KB)."""

DOCS_CA = 'docs/running.md, "CA bundles for the admin connection"'


def _bundle_problem(root: Path, relative: str) -> str | None:
    """What keeps ``relative`` from being the CA bundle ``pulumi up`` verifies with, if anything."""
    # A link out of the project is refused for every command (gatewayctl.resolve.stack.load_stack).
    shown = repr(relative)
    path = root / relative
    if path.is_symlink() and not path.exists():
        return f"{shown} is a broken symbolic link"
    if not path.exists():
        return (
            f"{shown} is not in the project, and `pulumi up` verifies the admin connection with"
            f" it: add the database server's public CA bundle ({DOCS_CA})"
        )
    if not path.is_file():
        return f"{shown} is not a regular file"
    try:
        size = path.stat().st_size
        if size > CA_BUNDLE_LIMIT:
            return f"{shown} is larger than {CA_BUNDLE_LIMIT // (1024 * 1024)} MiB; not a CA bundle"
        data = path.read_bytes()
    except OSError as error:
        return f"{shown} cannot be read: {error.strerror}"
    problem = bundle_problem(data)
    if problem is None:
        return None
    return f"{shown} {problem}" + ("; not a CA bundle" if problem == NO_CERTIFICATE else "")


def ca_bundle_problems(root: Path, loaded: LoadedStack) -> list[Problem]:
    """Every cluster's ``database.sslRootCert`` that is not a PEM bundle inside the project."""
    problems = []
    for name, cluster in sorted(loaded.config.clusters.items()):
        relative = cluster.database.ssl_root_cert
        if relative is None:
            continue  # the system trust store
        wrong = _bundle_problem(root, relative)
        if wrong is not None:
            field = f"{PROJECT}:clusters.{name}.database.sslRootCert"
            problems.append(Problem(loaded.config_path, field, wrong))
    return problems


Prepare = Callable[[Path, Sequence[str]], list[Prepared]]
"""Validates the named stacks with every rule (the CLI's), raising InvalidInputError."""


def check(root: Path, stacks: Sequence[str], prepare: Prepare) -> list[Prepared]:
    """Validate ``stacks`` with ``prepare`` and check that each is ready for ``pulumi up``.

    Raises InvalidInputError with every problem at once: the validation's, the placeholders'
    (found even when the stack is otherwise invalid) and the CA bundles' (of valid stacks).
    """
    problems = [problem for stack in stacks for problem in placeholder_problems(root, stack)]
    try:
        prepared = prepare(root, stacks)
    except InvalidInputError as error:
        raise InvalidInputError([*error.problems, *problems]) from None
    problems += [p for item in prepared for p in ca_bundle_problems(root, item.loaded)]
    if problems:
        raise InvalidInputError(problems)
    return prepared

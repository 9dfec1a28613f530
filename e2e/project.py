"""A copy of the project pointed at the lane's servers: one directory per e2e stack.

Each e2e stack is made from a committed one (its ``Pulumi.<stack>.yaml`` and declarations),
changed only where it must be to reach this machine: every cluster's ``kubeconfigContext``
names the lane's API server, every cluster's ``database.adminHost``/``adminPort`` the lane's
PostgreSQL for the project (its TLS front, ``e2e/pgtls.py``) and ``database.sslRootCert`` the
lane's CA, written into the project's ``certs/`` (:data:`DATABASE_CA`), and the secret values
(``secure:`` in git, which only the owners' passphrase opens) become plain local ones. The
program, components, releases and the other certificates are the repository's own.
"""

from __future__ import annotations

import copy
import shutil
import subprocess
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
PROJECT = "hypershell-gateways"
SECRETS = f"{PROJECT}:clusterSecrets"
CLUSTERS = f"{PROJECT}:clusters"
DATABASE_CA = "certs/e2e-postgres-ca.pem"
"""The lane CA that issued the PostgreSQL front's certificate, as ``database.sslRootCert``."""


def secret_value(key: str) -> str:
    """The lane's plain value for every cluster's secret ``key`` (``dbAdminPassword``...)."""
    return f"e2e-local-{key}"


@dataclass(frozen=True)
class LaneDatabase:
    """Where the program reaches the lane's PostgreSQL for one project: the TLS front."""

    host: str
    port: int
    ca_pem: str


DatabaseFor = Callable[[str, Mapping[str, str]], LaneDatabase]
"""The lane's PostgreSQL for a new project: called with the stack and each admin user's
password (``database.adminUser`` → the stack's ``dbAdminPassword``), which it creates."""
database_for: DatabaseFor | None = None
"""Set by the real-engine suite (tests/e2e/conftest.py) for the session: every project
:func:`make_project` makes is pointed at a PostgreSQL of its own (stacks share gateway names,
and so role and database names). Unset, the committed database settings are kept."""


def e2e_config(
    source: str, *, stack: str, context: str, clusters: Iterable[str] | None = None
) -> dict[str, Any]:
    """``Pulumi.<source>.yaml`` for the lane: clusters on ``context``, secrets local."""
    document = yaml.safe_load((ROOT / f"Pulumi.{source}.yaml").read_text())
    config = copy.deepcopy(document["config"])
    kept = set(clusters) if clusters is not None else set(config[CLUSTERS])
    config[CLUSTERS] = {k: v for k, v in config[CLUSTERS].items() if k in kept}
    for cluster in config[CLUSTERS].values():
        cluster["kubeconfigContext"] = context
    secrets: dict[str, dict[str, str]] = {}
    for name, values in config.get(SECRETS, {}).items():
        if name in kept:
            secrets[name] = {key: secret_value(key) for key in values}
    config[SECRETS] = secrets
    config[f"{PROJECT}:declarationsDir"] = f"gateways/{stack}"
    return {"config": config}


@dataclass
class E2EProject:
    """One stack's project directory (``root``) and the program the engine runs in it."""

    root: Path
    stack: str

    @property
    def declarations(self) -> Path:
        return self.root / "gateways" / self.stack

    @property
    def config_file(self) -> Path:
        return self.root / f"Pulumi.{self.stack}.yaml"

    def write_declaration(self, name: str, document: Mapping[str, Any]) -> Path:
        path = self.declarations / f"{name}.yaml"
        path.write_text(yaml.safe_dump(dict(document), sort_keys=False))
        return path

    def program(self) -> Callable[[], Any]:
        """The project's program, run as ``__main__.py`` runs it, with this directory as root."""
        root = self.root

        def run() -> None:
            from gatewayctl.engine.program import run

            run(root)  # as __main__.py does

        return run


def admins(config: Mapping[str, Any]) -> dict[str, str]:
    """Each cluster's ``database.adminUser`` and the lane's password for it."""
    found: dict[str, str] = {}
    for name, cluster in config["config"][CLUSTERS].items():
        user = cluster["database"]["adminUser"]
        password = config["config"][SECRETS].get(name, {}).get("dbAdminPassword")
        assert found.get(user, password) == password, f"{user}: two passwords"
        found[user] = password or secret_value("dbAdminPassword")
    return found


def point_at_database(root: Path, config: dict[str, Any], database: LaneDatabase) -> None:
    """Every cluster's admin endpoint at ``database``, its CA at :data:`DATABASE_CA`."""
    (root / DATABASE_CA).write_text(database.ca_pem)
    for cluster in config["config"][CLUSTERS].values():
        cluster["database"]["adminHost"] = database.host
        cluster["database"]["adminPort"] = database.port
        cluster["database"]["sslRootCert"] = DATABASE_CA


def make_project(
    base: Path,
    *,
    stack: str,
    source: str,
    context: str,
    clusters: Iterable[str] | None = None,
    gateways: Iterable[str] | None = None,
) -> E2EProject:
    """A project directory for e2e stack ``stack`` made from committed stack ``source``."""
    root = base / stack
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    shutil.copyfile(ROOT / "Pulumi.yaml", root / "Pulumi.yaml")
    for folder in ("releases", "certs"):
        shutil.copytree(ROOT / folder, root / folder)
    config = e2e_config(source, stack=stack, context=context, clusters=clusters)
    if database_for is not None:
        point_at_database(root, config, database_for(stack, admins(config)))
    (root / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    project = E2EProject(root, stack)
    project.declarations.mkdir(parents=True)
    kept = set(config["config"][CLUSTERS])
    for path in sorted((ROOT / "gateways" / source).glob("*.yaml")):
        document = yaml.safe_load(path.read_text())
        if gateways is not None and document["metadata"]["name"] not in set(gateways):
            continue
        if document.get("spec", {}).get("cluster", next(iter(kept))) not in kept:
            continue
        shutil.copyfile(path, project.declarations / path.name)
    # The tooling's release-immutability check reads git history
    # (gatewayctl/resolve/release_bindings.py).
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(
        [
            "git",
            "-c",
            "user.name=e2e",
            "-c",
            "user.email=e2e@example.invalid",
            "commit",
            "-qm",
            "e2e",
        ],
        cwd=root,
        check=True,
    )
    return project

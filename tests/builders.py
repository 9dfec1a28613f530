"""One way to build a project for a test: stack files and their declarations, copies of the
committed project (optionally made ready to deploy), edits of a copy's stack file.

A built stack starts from a valid baseline (one OpenShift cluster in route mode with a base
domain, a plaintext password per cluster, declarations in ``gateways/<stack>``) so that a test
states only what differs from it. Files are written as a person writes them: keys in the order
given, UTF-8.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import hashlib
import os
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from gatewayctl.inputs.release_files import RELEASES_DIR
from gatewayctl.inputs.stackfile import stack_file
from tests.support import ROOT

STACK = "test"
PREFIX = "hypershell-gateways:"
API_VERSION = "hypershell.redhat.io/v1alpha1"
BASE_DOMAIN = "apps.example.com"
EAST_DOMAIN = "east.example.com"
WEST_DOMAIN = "west.example.com"


def declarations_dir(stack: str) -> str:
    """The declarations directory a built (or committed) ``stack`` reads."""
    return f"gateways/{stack}"


CONFIG_FILE = stack_file(STACK)
DECLARATIONS = declarations_dir(STACK)

DROP: Any = object()
"""In ``merged`` changes: remove this key from the baseline; as ``write_stack``'s ``secrets``:
no ``clusterSecrets`` key at all."""
_PER_CLUSTER: Any = object()


# --- values ---------------------------------------------------------------------------------


def merged(base: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``changes`` merged in depth; a ``DROP`` value removes the key."""
    result = copy.deepcopy(dict(base))
    for key, value in changes.items():
        if value is DROP:
            result.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(result.get(key), Mapping):
            result[key] = merged(result[key], value)
        else:
            result[key] = copy.deepcopy(value)
    return result


def cluster(**changes: Any) -> dict[str, Any]:
    """A valid OpenShift cluster in route mode with a base domain, plus ``changes``."""
    baseline = {
        "kubeconfigContext": "ctx",
        "capabilities": {"openshift": True},
        "ingress": {"mode": "route"},
        "baseDomain": BASE_DOMAIN,
        "database": {
            "adminHost": "db.example.com",
            "adminUser": "admin",
            "host": "postgres.db.svc.cluster.local",
        },
    }
    return merged(baseline, changes)


GATEWAY_API = {
    "capabilities": {"openshift": True, "gatewayApi": True},
    "ingress": {"mode": "gateway-api", "gateway": {"name": "shared-gw"}},
}
"""The changes that make ``cluster()`` expose through the Gateway API (a shared Gateway)."""


def gateway_api_cluster(**changes: Any) -> dict[str, Any]:
    """``cluster()`` exposing through the shared Gateway ``shared-gw``, plus ``changes``."""
    return cluster(**merged(GATEWAY_API, changes))


def one_cluster(**changes: Any) -> dict[str, Any]:
    return {"c1": cluster(**changes)}


def two_clusters() -> dict[str, Any]:
    return {"east": cluster(baseDomain=EAST_DOMAIN), "west": cluster(baseDomain=WEST_DOMAIN)}


def secrets_for(clusters: Mapping[str, Any]) -> dict[str, Any]:
    return {name: {"dbAdminPassword": f"pw-{name}"} for name in clusters}


# --- files ----------------------------------------------------------------------------------


def write_text(root: Path, relative: str, content: str | bytes) -> Path:
    """Write ``content`` (text as UTF-8, bytes as they are) at ``root/relative``."""
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def write_stack(
    root: Path,
    *,
    stack: str = STACK,
    clusters: Mapping[str, Any] | None = None,
    secrets: Any = _PER_CLUSTER,
    stack_images: Mapping[str, Any] | None = None,
    selector: Mapping[str, str] | None = None,
    directory: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> str:
    """Write ``Pulumi.<stack>.yaml`` reading ``directory`` (``gateways/<stack>`` unless given,
    created empty) and return its name.

    ``clusters`` defaults to ``one_cluster()``; ``secrets`` to a password per cluster (``DROP``
    leaves the key out, any other value is written as it is); ``selector`` gives
    ``selector.matchLabels``; ``extra`` adds or replaces config keys, last.
    """
    clusters = one_cluster() if clusters is None else clusters
    directory = directory or declarations_dir(stack)
    config: dict[str, Any] = {
        f"{PREFIX}declarationsDir": directory,
        f"{PREFIX}clusters": dict(clusters),
    }
    if secrets is not DROP:
        chosen = secrets_for(clusters) if secrets is _PER_CLUSTER else secrets
        config[f"{PREFIX}clusterSecrets"] = chosen
    if stack_images is not None:
        config[f"{PREFIX}images"] = dict(stack_images)
    if selector is not None:
        config[f"{PREFIX}selector"] = {"matchLabels": dict(selector)}
    config.update(extra or {})
    (root / directory).mkdir(parents=True, exist_ok=True)
    name = stack_file(stack)
    write_text(root, name, yaml.safe_dump({"config": config}, sort_keys=False))
    return name


def declaration(
    name: str,
    spec: Mapping[str, Any] | None = None,
    *,
    labels: Mapping[str, str] | None = None,
    **top: Any,
) -> dict[str, Any]:
    """A Gateway declaration: ``spec`` when given, ``metadata.labels`` when given, and ``top``
    merged in depth."""
    metadata: dict[str, Any] = {"name": name}
    if labels is not None:
        metadata["labels"] = dict(labels)
    document: dict[str, Any] = {"apiVersion": API_VERSION, "kind": "Gateway", "metadata": metadata}
    if spec is not None:
        document["spec"] = dict(spec)
    return merged(document, top)


def declaration_text(
    name: str,
    spec: Mapping[str, Any] | None = None,
    *,
    labels: Mapping[str, str] | None = None,
    **top: Any,
) -> str:
    """``declaration(...)`` as YAML text."""
    return yaml.safe_dump(declaration(name, spec, labels=labels, **top), sort_keys=False)


def write_gateway(
    root: Path,
    name: str,
    spec: Mapping[str, Any] | None = None,
    *,
    stack: str = STACK,
    directory: str | None = None,
    file: str | None = None,
    labels: Mapping[str, str] | None = None,
    **top: Any,
) -> str:
    """Write one declaration into ``directory`` (``gateways/<stack>`` unless given), file
    ``<name>.yaml`` unless ``file``; return its display path."""
    relative = f"{directory or declarations_dir(stack)}/{file or name + '.yaml'}"
    write_text(root, relative, declaration_text(name, spec, labels=labels, **top))
    return relative


def write_declaration_text(
    root: Path, file: str, content: str | bytes, *, stack: str = STACK
) -> str:
    """Write ``content`` as the file ``file`` of the stack's declarations; return its path."""
    relative = f"{declarations_dir(stack)}/{file}"
    write_text(root, relative, content)
    return relative


def head(text: str) -> str:
    """Hand-written declaration text up to and including ``metadata.name``."""
    return f"apiVersion: {API_VERSION}\nkind: Gateway\nmetadata:\n  name: {text}\n"


def write_secrets_text(root: Path, text: str) -> int:
    """The built stack with ``text``, as written, for the value of ``clusterSecrets`` (its
    entries, indented by four spaces); returns the line number of the text's first line."""
    write_stack(root, secrets={"c1": {"dbAdminPassword": "placeholder"}})
    config = (root / CONFIG_FILE).read_text(encoding="utf-8")
    before, _, _ = config.partition("    c1:\n      dbAdminPassword: placeholder\n")
    assert before.endswith(f"{PREFIX}clusterSecrets:\n"), config
    write_text(root, CONFIG_FILE, before + text)
    return before.count("\n") + 1


@contextlib.contextmanager
def edited_config(root: Path, stack: str) -> Iterator[dict[str, Any]]:
    """The ``config`` mapping of ``root``'s stack file, to change in place; written back on exit."""
    path = root / stack_file(stack)
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    yield document["config"]
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")


# --- copies of the committed project --------------------------------------------------------


def copy_releases(destination: Path) -> None:
    """The committed releases (``releases/``), which the stacks bind."""
    shutil.copytree(ROOT / RELEASES_DIR, destination / RELEASES_DIR, dirs_exist_ok=True)


def copy_stack(stack: str, destination: Path) -> Path:
    """One committed stack (its stack file, declarations, the releases and the committed CA
    bundles) as a project root of its own."""
    destination.mkdir(parents=True, exist_ok=True)
    shutil.copy2(ROOT / stack_file(stack), destination / stack_file(stack))
    shutil.copytree(ROOT / declarations_dir(stack), destination / declarations_dir(stack))
    copy_releases(destination)
    copy_certs(destination)
    return destination


def copy_certs(destination: Path) -> None:
    """The CA bundles committed in ``certs/`` (the local stack's Keycloak CA), which the
    program reads into its resources; the ones it only names (``BUNDLES``) are not there."""
    for source in sorted((ROOT / "certs").glob("*.pem")):
        target = destination / "certs" / source.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, target)


def copy_project(destination: Path, *, ready: bool = False, reverse: bool = False) -> Path:
    """The committed project's stack files, declarations (created in file-name order, or in
    reverse), releases, operator settings and CLI version file; ``ready``: made ready to
    deploy."""
    destination.mkdir(parents=True, exist_ok=True)
    for source in ROOT.glob("Pulumi*.yaml"):
        shutil.copy(source, destination / source.name)
    for source in sorted(ROOT.glob("gateways/*/*.yaml"), reverse=reverse):
        target = destination / source.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, target)
    copy_releases(destination)
    (destination / "deploy").mkdir(exist_ok=True)
    shutil.copy(ROOT / "deploy" / "operator.yaml", destination / "deploy" / "operator.yaml")
    shutil.copy(ROOT / ".pulumi.version", destination / ".pulumi.version")
    copy_certs(destination)
    return make_ready(destination) if ready else destination


ADOPTED_NS = "openshell-b5a1cd34b5f99d11"
ADOPTED_DB = "gw_0ujtsycgvstl8pauadqwysmnlov"


def adopting_project(root: Path, gateway: str = "legacy") -> Path:
    """The ibm stack with one more declaration, ``gateway``, adopting an upstream namespace."""
    copy_stack("ibm", root)
    write_gateway(root, gateway, {"namespace": ADOPTED_NS, "databaseName": ADOPTED_DB}, stack="ibm")
    return root


# --- ready to deploy: CA bundles and ciphertext-shaped `secure:` values ----------------------

PLACEHOLDER = "v1:cmVwbGFjZS1tZS13aXRoLXB1bHVtaS1jb25maWctc2V0LS1zZWNyZXQ="
"""The ``secure:`` placeholder of the committed samples."""
BUNDLES = ("certs/aws-rds-global-bundle.pem", "certs/ibm-databases-for-postgresql-ca.pem")
"""The CA bundles the committed stacks name (absent from the repository)."""


def random_bytes(seed: str, size: int) -> bytes:
    """Deterministic bytes that look random (ciphertext, nonces, certificate bodies)."""
    out = b""
    counter = 0
    while len(out) < size:
        out += hashlib.sha256(f"{seed}/{counter}".encode()).digest()
        counter += 1
    return out[:size]


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def passphrase_ciphertext(seed: str, sealed: int = 40) -> str:
    """The passphrase/KMS providers' shape: ``v1:<12-byte nonce>:<sealed>``."""
    return f"v1:{b64(random_bytes(seed + 'n', 12))}:{b64(random_bytes(seed, sealed))}"


def service_ciphertext(seed: str, sealed: int = 48) -> str:
    """Pulumi Cloud's shape: base64 of the sealed bytes."""
    return b64(random_bytes(seed, sealed))


def pem_bundle(seed: str, certificates: int = 2) -> str:
    blocks = []
    for i in range(certificates):
        body = b64(random_bytes(f"{seed}/{i}", 600))
        lines = [body[j : j + 64] for j in range(0, len(body), 64)]
        blocks.append("-----BEGIN CERTIFICATE-----\n" + "\n".join(lines))
        blocks[-1] += "\n-----END CERTIFICATE-----\n"
    return "".join(blocks)


def make_ready(root: Path) -> Path:
    """Put the CA bundles in place and replace every placeholder with ciphertext."""
    for relative in BUNDLES:
        write_text(root, relative, pem_bundle(relative))
    for path in root.glob(stack_file("*")):
        text = path.read_text(encoding="utf-8")
        for i in range(text.count(PLACEHOLDER)):
            text = text.replace(PLACEHOLDER, passphrase_ciphertext(f"{path.name}/{i}"), 1)
        path.write_text(text, encoding="utf-8")
    return root


# --- a git repository of the checkout ---------------------------------------------------------

NOT_COPIED = shutil.ignore_patterns(
    ".git",
    ".venv",
    ".tools",
    "build",
    "tests",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".hypothesis",
)
"""What a copy of the checkout leaves out: git's and the tools' own files, and the tests."""


def git(repo: Path, *args: str) -> str:
    """``git -C REPO ARGS`` as a test author, without the user's or the system's git config;
    its output, stripped."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "test",
        "GIT_AUTHOR_EMAIL": "test@example.invalid",
        "GIT_COMMITTER_NAME": "test",
        "GIT_COMMITTER_EMAIL": "test@example.invalid",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    done = subprocess.run(
        ["git", "-C", str(repo), *args], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


# --- releases -----------------------------------------------------------------------------------


def digest(seed: str) -> str:
    """A well-formed sha256 digest (not of any image)."""
    return "sha256:" + hashlib.sha256(seed.encode()).hexdigest()


def release(name: str, *, note: str = "a test release", **images: str) -> dict[str, Any]:
    """A Release document; each image ``ghcr.io/acme/<which>:<name>@<digest>`` unless given."""
    spec_images = {
        which: images.get(which, f"ghcr.io/acme/{which}:{name}@{digest(name + which)}")
        for which in ("gateway", "supervisor", "sandbox")
    }
    return {
        "apiVersion": API_VERSION,
        "kind": "Release",
        "metadata": {"name": name},
        "spec": {"note": note, "images": spec_images},
    }


def write_release(
    root: Path, name: str, *, file: str | None = None, note: str = "a test release", **images: str
) -> str:
    """Write ``releases/<name>.yaml`` (or ``file``); return its path relative to ``root``."""
    relative = f"{RELEASES_DIR}/{file or name + '.yaml'}"
    document = release(name, note=note, **images)
    write_text(root, relative, yaml.safe_dump(document, sort_keys=False))
    return relative

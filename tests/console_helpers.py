"""What the console's tests share (tests/test_console.py, tests/test_resolve_console.py): a
project of one cluster with Keycloak and gateway ``acme`` whose console is enabled, its render
and the console's objects in it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gatewayctl.engine import render
from gatewayctl.resolve import preparation
from tests import builders
from tests.builders import (
    BASE_DOMAIN,
    DECLARATIONS,
    STACK,
    cluster,
    write_gateway,
)

KEYCLOAK = {
    "keycloak": {"url": "https://sso.example.com", "realm": "hypershell", "adminClientId": "p"}
}
NS = "openshell-acme"
FILE = f"{DECLARATIONS}/acme.yaml"
CONSOLE = {"console": {"enabled": True}}
HOST = f"console-{NS}.{BASE_DOMAIN}"


def write_stack(root: Path, *, clusters: dict[str, Any], **more: Any) -> str:
    """``tests.builders.write_stack`` with the Keycloak admin secret of every cluster."""
    secrets = {c: {"dbAdminPassword": "pw", "keycloakAdminClientSecret": "kc"} for c in clusters}
    return builders.write_stack(root, clusters=clusters, secrets=secrets, **more)


def project(root: Path, spec: dict[str, Any] | None = None, **changes: Any) -> Path:
    """One cluster (route mode with Keycloak unless ``changes`` say otherwise), gateway acme."""
    write_stack(root, clusters={"c1": cluster(**{"identity": KEYCLOAK, **changes})})
    write_gateway(root, "acme", CONSOLE if spec is None else spec)
    return root


def rendered(root: Path) -> render.Rendered:
    return render.execute(preparation.prepare(root, STACK))


def console_objects(result: render.Rendered) -> list[str]:
    return sorted(
        path.rsplit("/", 1)[1]
        for path in result.files
        if path.startswith(f"manifests/c1/{NS}/") and "console" in path
    )

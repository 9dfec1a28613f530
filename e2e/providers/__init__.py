"""The lane's stand-in providers: plugin processes the real engine starts.

The Go module proxy serves no version of the tls, random, postgresql and keycloak providers
(``e2e/engine.py`` names the commands that failed), so the lane runs stand-ins that speak the
provider gRPC protocol through the Pulumi SDK's own provider helpers (``base.py``) and have
real effects (each module says what it follows in the real provider's source). The engine
finds each as ``pulumi-resource-<package>`` on PATH (:func:`install`; pulumi/pulumi
``sdk/go/common/workspace/plugins.go`` ``GetPluginPath``: an ambient plugin on PATH is used
unless ``PULUMI_IGNORE_AMBIENT_PLUGINS``), reports the version uv.lock pins (the SDK
package's ``pulumi-plugin.json``) and starts it with the engine's address as its argument.
"""

from __future__ import annotations

import importlib
import importlib.resources
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("tls", "random", "postgresql", "keycloak")
"""Packages served by a stand-in plugin: every bridged package the program uses
(``e2e.engine.BRIDGED_PACKAGES``)."""


def plugin_version(package: str) -> str:
    """The version the program's SDK package registers its resources with."""
    text = importlib.resources.files(f"pulumi_{package}").joinpath("pulumi-plugin.json")
    return str(json.loads(text.read_text())["version"])


def install(directory: Path) -> Path:
    """Write ``pulumi-resource-<package>`` for each of :data:`PACKAGES` into ``directory``
    (put on the engine's PATH): a script running this checkout's stand-in with this Python."""
    directory.mkdir(parents=True, exist_ok=True)
    for package in PACKAGES:
        path = directory / f"pulumi-resource-{package}"
        path.write_text(
            "#!/bin/sh\n"
            f"PYTHONPATH={_quote(str(ROOT))} exec {_quote(sys.executable)}"
            f' -m e2e.providers {package} "$@"\n'
        )
        path.chmod(0o755)
    return directory


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def main(argv: list[str]) -> None:
    package = argv[0] if argv else ""
    if package not in PACKAGES:
        print(f"usage: python -m e2e.providers {{{','.join(PACKAGES)}}} ENGINE", file=sys.stderr)
        raise SystemExit(2)
    sys.argv = [f"pulumi-resource-{package}", *argv[1:]]
    # Each package's module (e2e/providers/<package>.py) serves it with its main().
    importlib.import_module(f"e2e.providers.{package}").main()

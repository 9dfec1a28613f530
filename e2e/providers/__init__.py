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
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("tls", "random", "postgresql", "keycloak")
"""Packages served by a stand-in plugin: every bridged package the program uses
(``e2e.engine.BRIDGED_PACKAGES``)."""


def plugin_version(package: str) -> str:
    """The version the program's SDK package registers its resources with."""
    text = importlib.resources.files(f"pulumi_{package}").joinpath("pulumi-plugin.json")
    return str(json.loads(text.read_text())["version"])


def install(directory: Path, server: Path | None = None) -> Path:
    """Write ``pulumi-resource-<package>`` for each of :data:`PACKAGES` into ``directory``
    (put on the engine's PATH): a script handing the plugin to the fork server listening at
    ``server`` (``forkserver.py``), or, with none listening, running this checkout's stand-in
    with this Python."""
    directory.mkdir(parents=True, exist_ok=True)
    launcher = ROOT / "e2e" / "providers" / "launch.py"
    socket = str(server) if server is not None else ""
    for package in PACKAGES:
        path = directory / f"pulumi-resource-{package}"
        path.write_text(
            "#!/bin/sh\n"
            f"exec {_quote(sys.executable)} -I -S {_quote(str(launcher))} {_quote(socket)}"
            f' {_quote(str(ROOT))} {package} "$@"\n'
        )
        path.chmod(0o755)
    return directory


def start_server() -> tuple[subprocess.Popen[bytes], Path]:
    """Start the fork server (``forkserver.py``) on a socket of its own; it stops when this
    process closes its standard input (or exits)."""
    # A short path: a Unix socket's is limited to 107 bytes (sun_path).
    socket = Path(tempfile.mkdtemp(prefix="hs-sp-")) / "s"
    proc = subprocess.Popen(
        [sys.executable, "-m", "e2e.providers.forkserver", str(socket)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if line.strip() != b"ready":
        proc.kill()
        raise RuntimeError(f"the stand-ins' fork server did not start (said {line!r})")
    return proc, socket


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

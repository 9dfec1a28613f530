"""A real Keycloak on loopback: the Maven Central distribution in ``start-dev`` (``dev-mem``).

The first start of a distribution runs Quarkus' build step (minutes on 2 cores; its result is
kept in the distribution's directory, so later starts with the same options skip it). The
bootstrap administrator is a temporary ``master`` user (``KC_BOOTSTRAP_ADMIN_USERNAME`` /
``_PASSWORD``: Keycloak's "Bootstrapping admin" guide), used only to make the realm and the
provisioning client the prerequisites of docs/sign-in.md describe.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

from e2e.cluster import free_port

BOOTSTRAP_USER = "e2e-bootstrap"
BOOTSTRAP_PASSWORD = "e2e-bootstrap-only"  # a dev-mem server on loopback, gone after the run


@dataclass
class Keycloak:
    url: str
    log: Path

    def token(self, *, realm: str = "master", **form: str) -> str:
        response = requests.post(
            f"{self.url}/realms/{realm}/protocol/openid-connect/token", data=form, timeout=300
        )
        response.raise_for_status()
        return str(response.json()["access_token"])

    def admin_token(self) -> str:
        return self.token(
            grant_type="password",
            client_id="admin-cli",
            username=BOOTSTRAP_USER,
            password=BOOTSTRAP_PASSWORD,
        )

    def admin(self, method: str, path: str, token: str, **kwargs: Any) -> requests.Response:
        return requests.request(
            method,
            f"{self.url}/admin/realms{path}",
            headers={"Authorization": f"Bearer {token}"},
            timeout=300,
            **kwargs,
        )


@contextlib.contextmanager
def running_keycloak(
    home: Path,
    workdir: Path,
    *,
    java_home: str | None = None,
    timeout: float = 1200,
    log: Any = print,
) -> Iterator[Keycloak]:
    workdir.mkdir(parents=True, exist_ok=True)
    port, management = free_port(), free_port()
    out = workdir / "keycloak.log"
    env = {
        **os.environ,
        "KC_BOOTSTRAP_ADMIN_USERNAME": BOOTSTRAP_USER,
        "KC_BOOTSTRAP_ADMIN_PASSWORD": BOOTSTRAP_PASSWORD,
    }
    if java_home:
        env["JAVA_HOME"] = java_home
    started = time.monotonic()
    with out.open("w") as handle:
        proc = subprocess.Popen(
            [
                str(home / "bin" / "kc.sh"),
                "start-dev",
                "--db=dev-mem",
                "--http-host=127.0.0.1",
                f"--http-port={port}",
                f"--http-management-port={management}",
                "--health-enabled=true",
            ],
            env=env,
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = Keycloak(f"http://127.0.0.1:{port}", out)
    try:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"keycloak exited {proc.returncode}: {out.read_text()[-3000:]}")
            with contextlib.suppress(requests.RequestException):
                if requests.get(f"{server.url}/realms/master", timeout=5).status_code == 200:
                    break
            if time.monotonic() - started > timeout:
                raise RuntimeError(
                    f"keycloak not ready after {timeout:.0f} s: {out.read_text()[-3000:]}"
                )
            time.sleep(2)
        log(f"[e2e] keycloak ready at {server.url} in {time.monotonic() - started:.0f} s")
        yield server
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)

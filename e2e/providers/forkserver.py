"""Start the stand-in plugins by forking one process that has already imported them.

A stand-in plugin is a Python process, and most of its start is importing the SDK, gRPC and
the provider's libraries: 0.41 CPU-s of 0.48 and about 50 MiB each (``python -X importtime``
of ``e2e.providers.postgresql``). The engine starts one plugin per provider resource
(pulumi/pulumi ``pkg/resource/deploy/providers/registry.go``, ``loadProvider`` through
``host.Provider``), and the program makes one PostgreSQL provider per gateway, so a
100-gateway preview started about 104 of them: some 50 CPU-s that a Go provider binary does not
spend and that no figure of the engine should carry.

Here one server imports every stand-in once (:func:`serve`). ``pulumi-resource-<package>``
(``e2e.providers.install``) runs :mod:`e2e.providers.launch` with ``python -I -S``, stdlib
only, which connects to this server's Unix socket and hands over its standard streams,
arguments, environment and directory (``SCM_RIGHTS``: ``socket.send_fds``). The server forks;
the child takes the streams as its own, names itself ``sp-<package>`` (``/proc/self/comm``: the
bench's sampler counts every ``sp-`` process as a stand-in's) and runs the package's
``main()``: the same plugin, printing its port to the engine's pipe and serving the provider
protocol, with its own effects. The launcher stays until the child ends, so the engine still
has one process per plugin to stop: it interrupts the launcher's process group and waits up to
5 s (pulumi/pulumi v3.274.0 ``sdk/go/common/resource/plugin/plugin.go``: the ``kill`` function
sends ``InterruptChildren``, then ``KillChildren``), then waits for the plugin's stdout and
stderr to close (``Close``). The child watches its end of the socket and exits as soon as the
launcher is gone, closing both.

The server never starts gRPC, a thread or a connection before it forks (gRPC's core is
initialised by the first server or channel, in the child), and it exits when its standard input
closes: its parent, the lane's or the bench's process, is gone.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import selectors
import socket
import sys
import threading
from pathlib import Path
from types import ModuleType

from e2e.providers import PACKAGES

MESSAGE_LIMIT = 1 << 20
"""The largest hand-over (arguments, environment, directory) read from a launcher."""


SERVER_NAME = "sp-forkserver"
"""This server's process name; the plugins it forks are ``sp-<package>``."""


def comm_name(package: str) -> str:
    """The process name a forked stand-in takes (at most 15 bytes: ``/proc/<pid>/comm``)."""
    return f"sp-{package}"[:15]


def serve(path: Path) -> int:
    """Serve launchers at ``path`` until standard input closes; then remove the socket, and
    its directory if that is left empty (``e2e.providers.start_server`` makes one for it)."""
    modules = {p: importlib.import_module(f"e2e.providers.{p}") for p in PACKAGES}
    with contextlib.suppress(OSError):
        Path("/proc/self/comm").write_text(SERVER_NAME)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(64)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(sys.stdin.fileno(), selectors.EVENT_READ, "parent")
    print("ready", flush=True)
    while True:
        for key, _ in selector.select(timeout=1.0):
            if key.data == "parent":
                if not os.read(sys.stdin.fileno(), 4096):
                    listener.close()
                    with contextlib.suppress(FileNotFoundError):
                        path.unlink()
                    with contextlib.suppress(OSError):  # its own directory, once empty
                        path.parent.rmdir()
                    return 0
                continue
            conn, _ = listener.accept()
            if os.fork() == 0:  # the child never returns
                listener.close()
                selector.close()
                _child(conn, modules)
            conn.close()
        _reap()


def _reap() -> None:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass


def _child(conn: socket.socket, modules: dict[str, ModuleType]) -> None:
    code = 1
    try:
        message, fds, _, _ = socket.recv_fds(conn, MESSAGE_LIMIT, 3)
        request = json.loads(message)
        for target, fd in enumerate(fds):  # the launcher's stdin, stdout, stderr
            os.dup2(fd, target)
            os.close(fd)
        package = request["package"]
        if package not in modules:
            raise SystemExit(f"no stand-in for {package!r}")
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        sys.argv = [f"pulumi-resource-{package}", *request["args"]]
        with contextlib.suppress(OSError):
            Path("/proc/self/comm").write_text(comm_name(package))
        # The launcher gone (interrupted or killed by the engine), the plugin goes too.
        threading.Thread(target=_exit_on_eof, args=(conn,), daemon=True).start()
        modules[package].main()
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
        if stop.code is not None and not isinstance(stop.code, int):
            print(stop.code, file=sys.stderr)
    except BaseException:  # a plugin that fails says why on the engine's stderr pipe
        import traceback

        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        with contextlib.suppress(OSError):
            conn.sendall(f"{code}\n".encode())  # the launcher exits with it
        os._exit(code)


def _exit_on_eof(conn: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while conn.recv(4096):
            pass
    with contextlib.suppress(Exception):
        sys.stderr.flush()
    os._exit(0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m e2e.providers.forkserver", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("socket", type=Path, help="the Unix socket the launchers connect to")
    args = parser.parse_args(argv)
    return serve(args.socket)


if __name__ == "__main__":
    sys.exit(main())

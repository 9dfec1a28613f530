"""``pulumi-resource-<package>``'s body: hand this process's plugin over to the fork server.

Run as ``python -I -S launch.py SOCKET PYTHONPATH PACKAGE ENGINE...`` (standard library only,
so it starts in a few milliseconds: ``e2e/providers/forkserver.py`` says why). It connects to
the fork server at SOCKET, sends its standard streams, arguments, environment and directory, and
waits until the forked plugin ends, exiting with its status. When no server listens there, it
runs the stand-in itself, as ``python -m e2e.providers PACKAGE ENGINE...`` with PYTHONPATH.
"""

import json
import os
import socket
import sys


def main(argv: list[str]) -> int:
    path, pythonpath, package, *args = argv
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
    except OSError:
        conn.close()
        env = {**os.environ, "PYTHONPATH": pythonpath}
        command = [sys.executable, "-m", "e2e.providers", package, *args]
        os.execve(sys.executable, command, env)
    request = {"package": package, "args": args, "env": dict(os.environ), "cwd": os.getcwd()}
    socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2])
    # The plugin writes to the engine's pipes itself; this process only marks its lifetime.
    for fd in (0, 1, 2):
        os.close(fd)
    said = b""
    try:
        while chunk := conn.recv(4096):
            said += chunk
    except KeyboardInterrupt:  # the engine's interrupt: closing the socket stops the plugin
        return 0
    # The plugin's exit status, sent as it ended (none if it was killed).
    return int(said) if said.strip().isdigit() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The stand-in plugins started as forks of one server (``e2e/providers/forkserver.py``),
launched as the engine launches a plugin: the script on PATH with the engine's address, in a
process group of its own, interrupted through that group when the engine is done with it."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import psutil
import pytest
from google.protobuf import empty_pb2
from pulumi.runtime.proto import provider_pb2_grpc

from e2e.providers import install, plugin_version, start_server
from e2e.providers.forkserver import SERVER_NAME, comm_name


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    proc, socket = start_server()
    yield proc, socket
    if proc.stdin is not None and not proc.stdin.closed:
        proc.stdin.close()
    proc.wait(10)


def launch(script: Path, *args: str) -> subprocess.Popen[str]:
    """As the engine starts a plugin: its own process group (``RegisterProcessGroup``)."""
    return subprocess.Popen(
        [str(script), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def serving(port: int) -> str:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        info = provider_pb2_grpc.ResourceProviderStub(channel).GetPluginInfo(empty_pb2.Empty())
    return str(info.version)


def gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False


def test_a_plugin_is_a_fork_of_the_server_named_for_its_package(
    server: tuple[subprocess.Popen[bytes], Path], tmp_path: Path
) -> None:
    proc, socket = server
    script = install(tmp_path / "bin", socket) / "pulumi-resource-random"
    launcher = launch(script, "127.0.0.1:1")
    try:
        assert launcher.stdout is not None
        port = int(launcher.stdout.readline())
        assert serving(port) == plugin_version("random")
        plugins = [c for c in psutil.Process(proc.pid).children() if c.status() != "zombie"]
        assert [c.name() for c in plugins] == [comm_name("random")] == ["sp-random"]
        assert psutil.Process(proc.pid).name() == SERVER_NAME
        # The launcher serves nothing itself: it only marks the plugin's lifetime.
        assert psutil.Process(launcher.pid).children() == []
        assert psutil.Process(launcher.pid).cmdline()[1:3] == ["-I", "-S"]
    finally:
        os.killpg(launcher.pid, signal.SIGINT)
        launcher.wait(10)


def test_the_plugin_ends_when_the_engine_interrupts_its_launcher(
    server: tuple[subprocess.Popen[bytes], Path], tmp_path: Path
) -> None:
    proc, socket = server
    script = install(tmp_path / "bin", socket) / "pulumi-resource-tls"
    launcher = launch(script, "127.0.0.1:1")
    assert launcher.stdout is not None
    port = int(launcher.stdout.readline())
    assert serving(port) == plugin_version("tls")
    (plugin,) = [c for c in psutil.Process(proc.pid).children() if c.name() == "sp-tls"]
    # pulumi v3.274.0 plugin.go: InterruptChildren(pid) is SIGINT to the process group.
    os.killpg(launcher.pid, signal.SIGINT)
    assert launcher.wait(10) == 0
    assert gone(plugin.pid)
    # Close waits for the plugin's stdout and stderr to close: both reach their end.
    assert launcher.stdout.read() == ""
    assert launcher.stderr is not None and launcher.stderr.read() == ""


def test_two_plugins_are_two_processes_with_their_own_ports(
    server: tuple[subprocess.Popen[bytes], Path], tmp_path: Path
) -> None:
    _, socket = server
    script = install(tmp_path / "bin", socket) / "pulumi-resource-postgresql"
    launchers = [launch(script, "127.0.0.1:1") for _ in range(2)]
    try:
        ports = []
        for launcher in launchers:
            assert launcher.stdout is not None
            ports.append(int(launcher.stdout.readline()))
        assert len(set(ports)) == 2
        assert [serving(port) for port in ports] == [plugin_version("postgresql")] * 2
    finally:
        for launcher in launchers:
            os.killpg(launcher.pid, signal.SIGINT)
            launcher.wait(10)


def test_a_failing_plugin_says_why_on_the_engines_stderr_and_exits_with_its_status(
    server: tuple[subprocess.Popen[bytes], Path], tmp_path: Path
) -> None:
    _, socket = server
    script = install(tmp_path / "bin", socket) / "pulumi-resource-keycloak"
    launcher = launch(script)  # no engine address: the SDK's server refuses to start
    _, err = launcher.communicate(timeout=30)
    assert launcher.returncode == 2
    assert "the following arguments are required: engine" in err


def test_without_a_server_the_script_runs_the_stand_in_itself(tmp_path: Path) -> None:
    script = install(tmp_path / "bin", tmp_path / "no-server") / "pulumi-resource-random"
    launcher = launch(script, "127.0.0.1:1")
    try:
        assert launcher.stdout is not None
        port = int(launcher.stdout.readline())
        assert serving(port) == plugin_version("random")
        assert psutil.Process(launcher.pid).cmdline()[1:4] == ["-m", "e2e.providers", "random"]
    finally:
        os.killpg(launcher.pid, signal.SIGINT)
        launcher.wait(10)


def test_the_server_stops_and_removes_its_socket_when_its_parent_closes_its_input() -> None:
    proc, socket = start_server()
    assert socket.exists()
    assert proc.stdin is not None
    proc.stdin.close()
    assert proc.wait(10) == 0
    assert not socket.exists() and not socket.parent.exists()

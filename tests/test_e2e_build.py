"""e2e/build.py's check of the Debian packages the browser sign-in needs (no package installed
or built here: the check's refusal names the command that installs the pinned version)."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

import pytest

from e2e import build
from gatewayctl.resolve.console_plan import DEFAULT_OAUTH2_PROXY_IMAGE


def test_a_debian_package_at_another_version_is_refused_with_the_install_command() -> None:
    table = {
        "packages": ["chromium", "chromium-driver"],
        "version": "0.0-not-a-debian-version",
        "binaries": ["/usr/bin/chromium"],
    }
    with pytest.raises(build.BuildError) as raised:
        build.check_debian_packages(table)
    message = str(raised.value)
    assert message.startswith("chromium 0.0-not-a-debian-version is needed, found ")
    assert message.endswith(
        "run `apt-get update && apt-get install -y chromium=0.0-not-a-debian-version"
        " chromium-driver=0.0-not-a-debian-version`"
    )


def test_the_versions_debian_serves_are_read_from_apt_cache_madison() -> None:
    text = (
        "  chromium | 156.0.8078.129-1~deb12u1 | http://deb.debian.org/debian-security"
        " bookworm-security/main amd64 Packages\n"
        "  chromium | 150.0.7871.100-1~deb12u1 | http://deb.debian.org/debian bookworm/main"
        " amd64 Packages\n"
        "  chromium | 150.0.7871.100-1~deb12u1 | http://mirror/debian bookworm/main amd64"
        " Packages\n"
        "N: unrelated note\n"
    )
    assert build.madison_versions(text) == [
        "156.0.8078.129-1~deb12u1",
        "150.0.7871.100-1~deb12u1",
    ]
    assert build.madison_versions("") == []


def test_the_chromium_item_is_checked_on_every_run_not_cached() -> None:
    assert "chromium" in build.Builder.CHECKED_EVERY_RUN
    assert build.load_versions()["chromium"]["packages"] == ["chromium", "chromium-driver"]


def test_the_oauth2_proxy_item_names_the_version_the_console_pins() -> None:
    """versions.toml says which pin it stands for; a new default image makes this fail, so
    the served version is looked up again."""
    assert DEFAULT_OAUTH2_PROXY_IMAGE.endswith(
        ":" + build.load_versions()["oauth2_proxy"]["pinned"]
    )


def test_sigterm_unwinds_like_ctrl_c_so_the_servers_are_stopped() -> None:
    """A terminated e2e run or bench leaves no server running: SIGTERM raises KeyboardInterrupt,
    so the context managers that stop the servers run (e2e/cluster.py)."""
    import os
    import signal

    from e2e.cluster import terminate_as_interrupt

    before = signal.getsignal(signal.SIGTERM)
    stopped: list[str] = []
    try:
        terminate_as_interrupt()
        with pytest.raises(KeyboardInterrupt):
            try:
                os.kill(os.getpid(), signal.SIGTERM)
                signal.pause()  # the handler runs here at the latest
            finally:
                stopped.append("servers")
    finally:
        signal.signal(signal.SIGTERM, before)
    assert stopped == ["servers"]


# --- scheduling: two at a time, the deadline, a failure stops the rest ------------------------


class Scripted(build.Builder):
    """A builder whose items run shell commands through the real ``run`` (its process group,
    its deadline and abort), with no Go module or download."""

    scripts: dict[str, str]

    def __getattr__(self, attr: str) -> Any:
        if not attr.startswith("build_"):
            raise AttributeError(attr)
        name = attr.removeprefix("build_")

        def build_item(item: build.Item) -> dict[str, Any]:
            item.dir.mkdir(parents=True, exist_ok=True)
            script = self.scripts[name].format(dir=item.dir)
            self.run(name, ["sh", "-c", script], cwd=item.dir, env=dict(os.environ))
            return {"dir": str(item.dir)}

        return build_item


def scripted(
    tmp_path: Path, scripts: dict[str, str], deadline: float | None = None
) -> tuple[Scripted, list[str]]:
    lines: list[str] = []
    builder = Scripted(
        tmp_path / "cache",
        {name: {"version": "v1", "script": script} for name, script in scripts.items()},
        log=lines.append,
        deadline=deadline,
    )
    builder.scripts = scripts
    return builder, lines


def test_every_item_of_versions_toml_has_its_place_in_the_build_order() -> None:
    assert sorted(build.BUILD_ORDER) == sorted(build.load_versions())
    assert len(set(build.BUILD_ORDER)) == len(build.BUILD_ORDER)


def test_two_items_build_at_the_same_time(tmp_path: Path) -> None:
    """Each waits (at most 20 s) until the other has started: both end only if they overlap."""
    meet = tmp_path / "meet"
    meet.mkdir()
    wait_for = (
        "i=0; while [ ! -e {peer} ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i+1)); done;"
        " test -e {peer}"
    )
    scripts = {
        "a": f"touch {meet}/a; " + wait_for.format(peer=meet / "b"),
        "b": f"touch {meet}/b; " + wait_for.format(peer=meet / "a"),
    }
    builder, lines = scripted(tmp_path, scripts)
    result = builder.ensure_all(jobs=2)
    assert sorted(result) == ["a", "b"]
    assert [line for line in lines if "built in" in line] != []
    assert builder.item("a").done.exists() and builder.item("b").done.exists()
    # A second run builds nothing.
    lines.clear()
    builder.ensure_all(jobs=2)
    assert len(lines) == 2
    assert all(re.fullmatch(r"\[e2e build\] [ab]: cached \(\d+\.\d s\)", line) for line in lines)


def test_at_the_deadline_a_build_is_stopped_and_the_next_not_started(tmp_path: Path) -> None:
    pid_file = tmp_path / "slow.pid"
    scripts = {
        "quick": "true",
        "slow": f"echo $$ > {pid_file}; exec sleep 600",
        "later": "true",
    }
    builder, lines = scripted(tmp_path, scripts, deadline=time.time() + 3)
    result = builder.ensure_all(jobs=1)
    assert sorted(result) == ["quick"]
    assert not builder.item("slow").done.exists()
    assert not builder.item("later").done.exists()
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # stopped (and reaped), not left running
    assert any(
        line.startswith("[e2e build] slow: not built, stopped at the build deadline after ")
        and line.endswith("what it compiled stays in the Go build cache for the next run")
        for line in lines
    )
    assert "[e2e build] later: not started, the build deadline has passed" in lines
    assert lines[-1] == (
        "[e2e build] not built before the deadline: later, slow; the e2e tests that need them"
        ' are skipped (docs/real-engine.md, "CI")'
    )


def test_a_failure_stops_the_item_building_beside_it_and_is_raised(tmp_path: Path) -> None:
    pid_file = tmp_path / "slow.pid"
    scripts = {
        "slow": f"echo $$ > {pid_file}; exec sleep 600",
        "broken": f"while [ ! -s {pid_file} ]; do sleep 0.1; done; echo no such module; exit 3",
    }
    builder, _ = scripted(tmp_path, scripts)
    with pytest.raises(build.BuildError) as raised:
        builder.ensure_all(jobs=2)
    assert str(raised.value).startswith("broken: `sh -c ")
    assert " exited 3 (log: " in str(raised.value)
    assert str(raised.value).endswith("\nno such module")
    assert not builder.item("slow").done.exists()
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)


def test_without_the_deadline_env_nothing_is_partial(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(build.DEADLINE_ENV, raising=False)
    assert build.deadline_from_env() is None
    monkeypatch.setenv(build.DEADLINE_ENV, "1764650000")
    assert build.deadline_from_env() == 1764650000.0
    monkeypatch.setenv(build.DEADLINE_ENV, "soon")
    with pytest.raises(SystemExit) as raised:
        build.deadline_from_env()
    assert str(raised.value) == (
        "HYPERSHELL_E2E_BUILD_DEADLINE='soon': not a number of seconds since the epoch"
    )


def test_a_test_needing_an_unbuilt_item_is_skipped_naming_it(tmp_path: Path) -> None:
    from tests.e2e.lane import need

    need({"keycloak": {}}, "keycloak")  # built: nothing happens
    with pytest.raises(pytest.skip.Exception) as raised:
        need({"keycloak": {}}, "pulumi", "keycloak", "kwok")
    assert str(raised.value.msg) == (
        "not built in this run: pulumi, kwok (CI's build deadline on a cold cache,"
        ' docs/real-engine.md "CI"; `make e2e` without a deadline builds everything)'
    )


def test_built_paths_partial_lists_only_what_is_built(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    versions = build.load_versions()
    item = build.Item("keycloak", versions["keycloak"], root)
    item.dir.mkdir(parents=True)
    item.done.write_text(json.dumps({"paths": {"home": "/kc"}}))
    assert build.built_paths(root) is None
    assert build.built_paths(root, partial=True) == {"keycloak": {"home": "/kc"}}


def test_free_ports_are_below_the_ephemeral_range_and_not_given_twice() -> None:
    """The cluster's and Keycloak's ports: a port in the ephemeral range could be taken by an
    outgoing connection's source port before its server binds it (e2e/cluster.py)."""
    import socket

    from e2e.cluster import free_port

    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    ports = [free_port() for _ in range(50)]
    assert len(set(ports)) == 50
    assert all(10_000 <= port < low for port in ports)
    with socket.socket() as s:  # free: it binds
        s.bind(("127.0.0.1", ports[-1]))

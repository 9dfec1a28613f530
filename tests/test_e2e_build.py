"""e2e/build.py's check of the Debian packages the browser sign-in needs (no package installed
or built here: the check's refusal names the command that installs the pinned version)."""

from __future__ import annotations

import pytest

from e2e import build
from gatewayctl.console import DEFAULT_OAUTH2_PROXY_IMAGE


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

"""The SDK's per-resource debug messages are not sent to the engine once
``gatewayctl/engine/sdk_debug.py`` is installed; the program's own still are, and all of them with
``HYPERSHELL_SDK_DEBUG=1``; it replaces the SDK's only for the version it was read from, and
that is the version uv.lock pins.

The program runs on the SDK's own mocks (``pulumi.runtime.mocks``), whose engine passes each
``LogRequest`` to a logger: the same ``pulumi.log`` path as under the CLI, with the engine's
``Log`` counted."""

from __future__ import annotations

import logging
import tomllib
from collections.abc import Iterator
from typing import Any

import pulumi
import pulumi.log
import pytest
from pulumi.runtime import mocks

from gatewayctl.engine import sdk_debug
from gatewayctl.engine.shortcuts import CHECKED_AGAINST
from tests.support import ROOT


class Recorder(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


class Mocks(pulumi.runtime.Mocks):
    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        return f"{args.name}-id", dict(args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], None]:
        return {}, None


@pytest.fixture(autouse=True)
def _sdks_back() -> Iterator[None]:
    sdk_debug.uninstall()  # whatever ran before (program.run installs it)
    yield
    sdk_debug.uninstall()


def engine_log() -> Recorder:
    """Mocks whose engine logs every message it is sent, at DEBUG, into the returned recorder."""
    logger = logging.getLogger("tests.test_sdk_debug.engine")
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    logger.handlers.clear()
    recorder = Recorder()
    logger.addHandler(recorder)
    mocks.set_mocks(Mocks(), project="p", stack="s", preview=True, logger=logger)
    return recorder


def run_three_resources() -> None:
    @pulumi.runtime.test  # type: ignore[untyped-decorator]  # the SDK's decorator is unannotated
    def program() -> pulumi.Output[Any]:
        pulumi.log.debug("the program's own")
        resources = [pulumi.CustomResource("test:index:Thing", f"t{i}", {}) for i in range(3)]
        return pulumi.Output.all(*(r.urn for r in resources))

    program()


def things(recorder: Recorder, prefix: str) -> list[str]:
    """The names of the test resources in the messages starting with ``prefix``."""
    found = []
    for message in recorder.messages:
        if message.startswith(prefix + "ty=test:index:Thing, "):
            rest = message.split(", ", 1)[1]  # "name=t0, custom=..." or "urn=...::t0"
            found.append(rest.split(",")[0].split("::")[-1].removeprefix("name="))
    return sorted(found)


def test_the_sdks_messages_reach_the_engine_as_shipped() -> None:
    recorder = engine_log()
    run_three_resources()
    assert things(recorder, "registering resource: ") == ["t0", "t1", "t2"]
    assert things(recorder, "resource registration successful: ") == ["t0", "t1", "t2"]
    assert "the program's own" in recorder.messages


def test_installed_the_sdks_messages_stay_and_the_programs_own_go() -> None:
    recorder = engine_log()
    assert sdk_debug.install() is None
    assert pulumi.log.debug is sdk_debug.debug
    run_three_resources()
    assert recorder.messages == ["the program's own"]


def test_kept_on_purpose_with_the_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HYPERSHELL_SDK_DEBUG", "1")
    recorder = engine_log()
    assert sdk_debug.install() is None
    assert pulumi.log.debug is sdk_debug._sdk_debug
    run_three_resources()
    assert things(recorder, "registering resource: ") == ["t0", "t1", "t2"]


@pytest.mark.parametrize(
    ("module", "sdk"),
    [
        ("pulumi", True),
        ("pulumi.runtime.resource", True),
        ("pulumi.log", True),
        ("pulumi_kubernetes.core.v1", False),
        ("components.gateway", False),
        ("", False),
    ],
)
def test_only_the_pulumi_package_counts_as_the_sdk(module: str, sdk: bool) -> None:
    assert sdk_debug.from_the_sdk(module) is sdk


def test_installed_only_for_the_sdk_version_it_was_read_from() -> None:
    reason = sdk_debug.install("3.999.0")
    assert reason == (
        "pulumi SDK 3.999.0: dropping its per-resource debug messages was read from 3.272.0 and "
        "is not done (each is a blocking call to the CLI; gatewayctl/engine/sdk_debug.py)"
    )
    assert pulumi.log.debug is sdk_debug._sdk_debug
    sdk_debug.uninstall()
    assert pulumi.log.debug is sdk_debug._sdk_debug


def test_the_locked_sdk_is_the_version_it_was_read_from() -> None:
    # Upgrading pulumi in uv.lock fails here until log.py and resource.py are read again.
    lock = tomllib.loads((ROOT / "uv.lock").read_text())
    (locked,) = [p["version"] for p in lock["package"] if p["name"] == "pulumi"]
    assert locked in CHECKED_AGAINST

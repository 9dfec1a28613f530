"""The SDK's own debug messages kept off the engine's wire under the real engine.

pulumi 3.272.0's ``register_resource`` logs three debug messages for every resource
(``pulumi/runtime/resource.py`` lines 1133, 1196 and 1372: "registering resource", "resource
registration prepared", "resource registration successful"), each an ``Engine.Log`` call made
synchronously on the program's event loop (``pulumi/log.py``, ``_log``: ``engine.Log(req)``):
a round trip to the CLI during which the program does nothing else. The CLI turns each into a
diagnostic event (pulumi/pkg v3.274.0 ``host/host_server.go``, ``Log``, to the diag sink, to
``engine/events.go``, ``diagEvent``, which passes the message through the secrets filter) that
its display drops unless the command runs with ``--debug``
(``backend/display/progress.go`` line 1546: ``payload.Severity == diag.Debug &&
!display.opts.Debug``). About 14,000 of them in a 100-gateway preview, for nothing shown.
Measured with py-spy (``--gil``) on a 50-gateway preview: 20% of the program's Python time was
in ``pulumi.log.debug``; ``docs/performance.md`` has the bench before and after.

:func:`install` puts :func:`debug` in place of ``pulumi.log.debug`` (the SDK's modules call it
through the module, ``log.debug(...)``, so the replacement is seen at once): a message whose
caller is a module of the ``pulumi`` package itself is dropped; any other (the program's own)
goes to the engine as before. With ``HYPERSHELL_SDK_DEBUG=1`` in the environment nothing is
installed, so ``pulumi up --debug`` shows the SDK's messages again. As with the output drain
(:mod:`gatewayctl.engine.drain`), only for the SDK version it was read from: any other keeps
the SDK's and says why (``tests/test_sdk_debug.py`` fails when uv.lock pins another).
``__main__.py`` and the lane's program install it (``program.run``); the offline render has its
own (``gatewayctl/engine/shortcuts.py``, ``debug``).
"""

from __future__ import annotations

import importlib.metadata
import os
import sys
from typing import Any

import pulumi.log

from gatewayctl.engine.shortcuts import CHECKED_AGAINST

KEEP = "HYPERSHELL_SDK_DEBUG"
"""Set to ``1`` to keep the SDK's debug messages (for ``pulumi up --debug``)."""

_sdk_debug = pulumi.log.debug


def from_the_sdk(module: str) -> bool:
    """Whether ``module`` (a ``__name__``) is part of the ``pulumi`` package."""
    return module == "pulumi" or module.startswith("pulumi.")


def debug(msg: str, *args: Any, **kwargs: Any) -> None:
    """``pulumi.log.debug`` for any caller but the SDK's own modules."""
    if not from_the_sdk(sys._getframe(1).f_globals.get("__name__", "")):
        _sdk_debug(msg, *args, **kwargs)


def install(version: str | None = None) -> str | None:
    """Put :func:`debug` in the SDK's place; ``None`` when done (or kept on purpose with
    ``HYPERSHELL_SDK_DEBUG=1``), else the reason it was not (another SDK version: ``version``,
    default the installed one)."""
    if os.environ.get(KEEP) == "1":
        return None
    running = importlib.metadata.version("pulumi") if version is None else version
    if running not in CHECKED_AGAINST:
        return (
            f"pulumi SDK {running}: dropping its per-resource debug messages was read from "
            f"{', '.join(CHECKED_AGAINST)} and is not done (each is a blocking call to the CLI; "
            "gatewayctl/engine/sdk_debug.py)"
        )
    pulumi.log.debug = debug
    return None


def uninstall() -> None:
    """Put the SDK's own back."""
    pulumi.log.debug = _sdk_debug

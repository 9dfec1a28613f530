"""The modules the tool imports when first used, not when it starts: one table.

``gatewayctl --help`` and the commands that do not run the program must start without the
provider SDKs, pydantic's models or rich (``tests/test_startup.py``; ``bench/scale_bench.py``
prints the figures). A module that needs one of these writes ``lazy.<name>.<attribute>`` at
the point of use; the first such access imports the module named in :data:`MODULES` (PEP 562's
module ``__getattr__``) and keeps it here, so later accesses are plain attribute reads. The
type checker reads the same table from the ``TYPE_CHECKING`` imports below, so
``lazy.render.run`` is checked as ``gatewayctl.engine.render.run`` (and a name missing from
the table is an error). ``tests/test_lazy.py`` keeps the two lists equal and refuses an
import inside a function anywhere else in the tool; ``tests/architecture.py`` counts
``lazy.<name>`` as an import of its module, so the phases' order still holds.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ctypes
    import difflib
    import shutil
    import subprocess
    import tempfile
    import threading
    from importlib import metadata as importlib_metadata

    import yaml
    from rich import cells as rich_cells
    from rich import console as rich_console
    from rich import text as rich_text

    from gatewayctl import errors, interrupts, printing, typos
    from gatewayctl.cli import arguments as cli_arguments
    from gatewayctl.cli import driver as cli_driver
    from gatewayctl.cli import main as cli_main
    from gatewayctl.cli import progress as cli_progress
    from gatewayctl.deploy import (
        adoption,
        changed,
        deploy_history,
        deployed,
        gitrepo,
        move,
        notify,
        operator,
        promote,
        pulumicli,
        rollback,
        rotate,
        soak,
    )
    from gatewayctl.diff import cache, diff_command, incremental, report, steps, summary
    from gatewayctl.engine import offline, parallel, program, render, shares, write_guard
    from gatewayctl.inputs import (
        decommissions,
        gateway_declaration,
        history_records,
        model,
        operator_settings,
        promotion,
        reference,
        rollout,
        rotation_secrets,
        schema,
        stackfile,
        stackschema,
        status_records,
        windows,
    )
    from gatewayctl.resolve import (
        inventory,
        preparation,
        readiness,
        release_bindings,
        signin_plan,
        stack,
        waves,
    )
    from gatewayctl.status import progression, status_command

# name -> the module it imports on first use
MODULES: dict[str, str] = {
    "adoption": "gatewayctl.deploy.adoption",
    "cache": "gatewayctl.diff.cache",
    "changed": "gatewayctl.deploy.changed",
    "cli_arguments": "gatewayctl.cli.arguments",
    "cli_driver": "gatewayctl.cli.driver",
    "cli_main": "gatewayctl.cli.main",
    "cli_progress": "gatewayctl.cli.progress",
    "ctypes": "ctypes",
    "decommissions": "gatewayctl.inputs.decommissions",
    "deploy_history": "gatewayctl.deploy.deploy_history",
    "deployed": "gatewayctl.deploy.deployed",
    "diff_command": "gatewayctl.diff.diff_command",
    "difflib": "difflib",
    "errors": "gatewayctl.errors",
    "gateway_declaration": "gatewayctl.inputs.gateway_declaration",
    "gitrepo": "gatewayctl.deploy.gitrepo",
    "history_records": "gatewayctl.inputs.history_records",
    "importlib_metadata": "importlib.metadata",
    "incremental": "gatewayctl.diff.incremental",
    "interrupts": "gatewayctl.interrupts",
    "inventory": "gatewayctl.resolve.inventory",
    "model": "gatewayctl.inputs.model",
    "move": "gatewayctl.deploy.move",
    "notify": "gatewayctl.deploy.notify",
    "offline": "gatewayctl.engine.offline",
    "operator": "gatewayctl.deploy.operator",
    "operator_settings": "gatewayctl.inputs.operator_settings",
    "parallel": "gatewayctl.engine.parallel",
    "preparation": "gatewayctl.resolve.preparation",
    "printing": "gatewayctl.printing",
    "program": "gatewayctl.engine.program",
    "progression": "gatewayctl.status.progression",
    "promote": "gatewayctl.deploy.promote",
    "promotion": "gatewayctl.inputs.promotion",
    "pulumicli": "gatewayctl.deploy.pulumicli",
    "readiness": "gatewayctl.resolve.readiness",
    "reference": "gatewayctl.inputs.reference",
    "release_bindings": "gatewayctl.resolve.release_bindings",
    "render": "gatewayctl.engine.render",
    "report": "gatewayctl.diff.report",
    "rich_cells": "rich.cells",
    "rich_console": "rich.console",
    "rich_text": "rich.text",
    "rollback": "gatewayctl.deploy.rollback",
    "rollout": "gatewayctl.inputs.rollout",
    "rotate": "gatewayctl.deploy.rotate",
    "rotation_secrets": "gatewayctl.inputs.rotation_secrets",
    "schema": "gatewayctl.inputs.schema",
    "shares": "gatewayctl.engine.shares",
    "shutil": "shutil",
    "signin_plan": "gatewayctl.resolve.signin_plan",
    "soak": "gatewayctl.deploy.soak",
    "stack": "gatewayctl.resolve.stack",
    "stackfile": "gatewayctl.inputs.stackfile",
    "stackschema": "gatewayctl.inputs.stackschema",
    "status_command": "gatewayctl.status.status_command",
    "status_records": "gatewayctl.inputs.status_records",
    "steps": "gatewayctl.diff.steps",
    "subprocess": "subprocess",
    "summary": "gatewayctl.diff.summary",
    "tempfile": "tempfile",
    "threading": "threading",
    "typos": "gatewayctl.typos",
    "waves": "gatewayctl.resolve.waves",
    "windows": "gatewayctl.inputs.windows",
    "write_guard": "gatewayctl.engine.write_guard",
    "yaml": "yaml",
}

__all__ = [
    "adoption",
    "cache",
    "changed",
    "cli_arguments",
    "cli_driver",
    "cli_main",
    "cli_progress",
    "ctypes",
    "decommissions",
    "deploy_history",
    "deployed",
    "diff_command",
    "difflib",
    "errors",
    "gateway_declaration",
    "gitrepo",
    "history_records",
    "importlib_metadata",
    "incremental",
    "interrupts",
    "inventory",
    "model",
    "move",
    "notify",
    "offline",
    "operator",
    "operator_settings",
    "parallel",
    "preparation",
    "printing",
    "program",
    "progression",
    "promote",
    "promotion",
    "pulumicli",
    "readiness",
    "reference",
    "release_bindings",
    "render",
    "report",
    "rich_cells",
    "rich_console",
    "rich_text",
    "rollback",
    "rollout",
    "rotate",
    "rotation_secrets",
    "schema",
    "shares",
    "shutil",
    "signin_plan",
    "soak",
    "stack",
    "stackfile",
    "stackschema",
    "status_command",
    "status_records",
    "steps",
    "subprocess",
    "summary",
    "tempfile",
    "threading",
    "typos",
    "waves",
    "windows",
    "write_guard",
    "yaml",
]

if not TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        try:
            dotted = MODULES[name]
        except KeyError:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
        # ``__import__``, not ``importlib.import_module``: the import statement's own path, which
        # ``python -X importtime`` reports (import_module's pure-Python path is not timed:
        # CPython's ``Python/import.c``, ``PyImport_ImportModuleLevelObject``), and the start-up
        # tests and benchmarks read that report.
        __import__(dotted)
        module = sys.modules[dotted]
        globals()[name] = module
        return module

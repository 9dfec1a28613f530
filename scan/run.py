"""``make scan``: checkov over every stack's rendered manifests, the production stacks without
the skips production does not grant.

checkov applies a configuration's skips to every directory it scans (``skip-check`` is global
per check), so each stack is scanned in a run of its own: the production stacks (marked
``hypershell-gateways:production`` in their stack file) with ``scan/checkov.yaml`` minus
:data:`PRODUCTION_ENFORCED`, the others with it as written. Usage (after ``python -m gatewayctl
render --all --out RENDERED``)::

    python scan/run.py --checkov .tools/checkov/bin/checkov RENDERED
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: the project's packages
    sys.path.insert(0, str(ROOT))

from gatewayctl.inputs.stackfile import (  # noqa: E402
    all_stacks,
    parse_stack_config,
    read_stack_config,
)

CONFIG = ROOT / "scan" / "checkov.yaml"
PRODUCTION_ENFORCED = ("CKV_K8S_43",)
"""Checks skipped for the other stacks but enforced on production stacks: CKV_K8S_43 (image
by digest), which releases pinned by digest satisfy (gatewayctl.inputs.release_files)."""


def production_stacks(root: Path = ROOT) -> list[str]:
    """The stacks whose stack file sets ``hypershell-gateways:production: true``."""
    found = []
    for stack in all_stacks(root):
        display, raw = read_stack_config(root, stack)
        if parse_stack_config(display, raw).production:
            found.append(stack)
    return found


def production_config(config: dict[str, Any]) -> dict[str, Any]:
    """``config`` without the skips of :data:`PRODUCTION_ENFORCED`."""
    skips = [c for c in config.get("skip-check", []) if c not in PRODUCTION_ENFORCED]
    return {**config, "skip-check": skips}


def runs(
    checkov: str, rendered: Path, production_config_file: Path, root: Path = ROOT
) -> list[list[str]]:
    """The checkov command lines, one per stack (checkov 3.3.30 given several ``-d`` reported
    the first directory's results twice and not the second's), in stack order."""
    production = production_stacks(root)
    return [
        [
            checkov,
            "--config-file",
            str(production_config_file if stack in production else CONFIG),
            "-d",
            str(rendered / stack),
        ]
        for stack in all_stacks(root)
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkov", required=True, help="the checkov executable")
    parser.add_argument("rendered", type=Path, help="directory of the rendered stacks")
    args = parser.parse_args(argv)
    config = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="checkov-production-") as directory:
        production_file = Path(directory) / "checkov-production.yaml"
        production_file.write_text(yaml.safe_dump(production_config(config)), encoding="utf-8")
        failed = 0
        for command in runs(args.checkov, args.rendered, production_file):
            print("$ " + " ".join(command), flush=True)
            failed |= subprocess.run(command, check=False).returncode
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

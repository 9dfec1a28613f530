"""Benchmark how fast hostile YAML is refused: ``python -m gatewayctl validate`` on a stack whose
one declaration is oversized, too deep or too full, next to a valid one (the floor: interpreter
start-up and imports).

Every case runs in a fresh interpreter (``--child``) so peak memory (``ru_maxrss``) is its own.
The child times the whole CLI run and, separately, the reader alone
(``gatewayctl.inputs.yamlfile.read_yaml_mapping``) on the declaration. Run from the repository
root::

    .venv/bin/python bench/read_bench.py [--cases 10MB-labels,deep] [--json FILE]

Issue 10 measured, before the reader's limits: a 2 MB declaration with many nodes took 32 s
and 0.8 GB before any check; 10 MB, 190 s and 3.5 GB.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
STACK = "bench"
PROJECT = (
    "hypershell-gateways"  # gatewayctl.inputs.stackfile.PROJECT; the parent does not import the SDK
)
RESULT_PREFIX = "BENCH-RESULT "
MIB = 1024 * 1024
HEAD = "apiVersion: hypershell.redhat.io/v1alpha1\nkind: Gateway\nmetadata:\n  name: team-a\n"
CONFIG = f"""config:
  {PROJECT}:declarationsDir: gateways
  {PROJECT}:clusters:
    c1:
      capabilities: {{openshift: true}}
      ingress: {{mode: route}}
      baseDomain: apps.example.com
      database: {{adminHost: db.example.com, adminUser: admin, host: db.example.com}}
  {PROJECT}:clusterSecrets:
    c1: {{dbAdminPassword: bench}}
"""


def _labels(size: int) -> str:
    """A declaration of ``size`` bytes, nearly all of it labels: many small nodes."""
    lines, total, index = [HEAD, "  labels:\n"], len(HEAD) + 10, 0
    while total < size:
        line = f"    k{index}: v{index}\n"
        lines.append(line)
        total += len(line)
        index += 1
    return "".join(lines)


def _fill(unit: str, size: int) -> str:
    return unit * ((size - len(HEAD) - 32) // len(unit))


CASES: dict[str, Callable[[], str]] = {
    "valid (floor)": lambda: HEAD,
    "10MB-labels": lambda: _labels(10_000_000),
    "2MB-labels": lambda: _labels(2_000_000),
    "1MiB-flow-list": lambda: HEAD + "spec: [" + _fill("1,", MIB) + "1]\n",
    "1MiB-one-scalar": lambda: HEAD + "spec: {host: " + _fill("x", MIB) + "}\n",
    "1MiB-blank-lines": lambda: HEAD + _fill("\n", MIB),
    "5000-deep": lambda: HEAD + "spec: " + "[" * 5000 + "]" * 5000 + "\n",
}


def _peak_kib() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak // 1024 if sys.platform == "darwin" else peak


def child(root: Path) -> dict[str, Any]:
    """Validate the stack under ``root`` through the CLI, then read its declaration alone."""
    import contextlib
    import io

    sys.path.insert(0, str(ROOT))
    from gatewayctl.cli import main as cli
    from gatewayctl.errors import InvalidInputError

    try:
        from gatewayctl.inputs.yamlfile import read_yaml_mapping
    except ImportError:  # a tree from before gatewayctl.inputs.yamlfile, to measure what it cost
        from gatewayctl.inputs.yamlfile import read_yaml_mapping

    start = time.perf_counter()
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = cli.main(["--root", str(root), "validate", STACK])
    cli_seconds = time.perf_counter() - start
    path = root / "gateways" / "team-a.yaml"
    start = time.perf_counter()
    with contextlib.suppress(InvalidInputError, RecursionError):  # the latter: older trees
        read_yaml_mapping(path, "team-a.yaml")
    return {
        "exit": code,
        "cli_seconds": cli_seconds,
        "read_seconds": time.perf_counter() - start,
        "peak_kib": _peak_kib(),
        "first_line": err.getvalue().split("\n", 1)[0][:120],
    }


def measure(name: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        (root / "gateways").mkdir()
        (root / f"Pulumi.{STACK}.yaml").write_text(CONFIG, encoding="utf-8")
        text = CASES[name]()
        (root / "gateways" / "team-a.yaml").write_text(text, encoding="utf-8")
        started = time.perf_counter()
        run = subprocess.run(
            [sys.executable, __file__, "--child", str(root)],
            capture_output=True,
            text=True,
            check=True,
        )
        wall = time.perf_counter() - started
    (line,) = [x for x in run.stdout.splitlines() if x.startswith(RESULT_PREFIX)]
    return {"case": name, "bytes": len(text.encode()), "wall_seconds": wall} | json.loads(
        line.removeprefix(RESULT_PREFIX)
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated case names")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the figures")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(RESULT_PREFIX + json.dumps(child(args.child)))
        return 0
    results = []
    print(
        f"{'case':18} {'size':>10} {'exit':>4} {'wall s':>7} {'cli s':>7} {'read s':>7}"
        f" {'peak MiB':>8}  first line"
    )
    for name in args.cases.split(","):
        result = measure(name)
        results.append(result)
        print(
            f"{name:18} {result['bytes']:>10,} {result['exit']:>4} {result['wall_seconds']:7.2f}"
            f" {result['cli_seconds']:7.3f} {result['read_seconds']:7.3f}"
            f" {result['peak_kib'] / 1024:8.1f}  {result['first_line']}",
            flush=True,
        )
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

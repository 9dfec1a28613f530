"""Benchmark ``python -m gatewayctl status`` as the state grows: the JSON the Pulumi CLI
writes (``pulumi stack export`` and ``pulumi refresh --preview-only --json``, built by
``tests/status_builders.py`` from pulumi/pulumi's apitype shapes) for N resources, read
(``gatewayctl.status.inputs.read``), turned into the status (``gatewayctl.status.core.build``)
and printed as JSON and Markdown (``gatewayctl.status.formats``). Prints figures; it asserts
nothing (the structural check that the work is linear is
``tests/test_status.py::test_the_status_reads_each_resource_a_bounded_number_of_times``).
Run from the repository root::

    .venv/bin/python bench/status_bench.py [--resources 10000,40000] [--repeat 3]

Issue 21 measured before the fix: 10,000 resources 28 s, 40,000 resources 339 s (the address
of each gateway without one in the stack outputs was looked up by a pass over every resource).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gatewayctl.status import core, formats, inputs, selfheal  # noqa: E402
from tests import status_builders as builders  # noqa: E402

NOW = datetime(2026, 12, 1, 5, 30, tzinfo=UTC)


def write_inputs(directory: Path, resources: int) -> tuple[int, int, list[Path]]:
    """A state and a clean refresh of about ``resources`` resources, gateways unexposed on
    every 2nd (no address: the case that was quadratic). Returns the gateway and resource
    counts and the two files."""
    per_gateway = (
        len(builders.gateway_resources("g")) + len(builders.gateway_resources("g", exposed=False))
    ) / 2
    count = max(1, round(resources / per_gateway))
    names = [f"tenant-{i:05d}" for i in range(count)]
    entries = builders.stack_resources(
        {n: None if i % 2 else f"grpcs://gw-{n}.example.com:443" for i, n in enumerate(names)}
    )
    for i, name in enumerate(names):
        entries += builders.gateway_resources(name, exposed=i % 2 == 0)
    state = directory / "state.json"
    refresh = directory / "refresh.json"
    state.write_text(json.dumps(builders.export(entries)), encoding="utf-8")
    steps = [builders.refresh_step(entry) for entry in entries]
    refresh.write_text(json.dumps(builders.digest(steps)), encoding="utf-8")
    return count, len(entries), [refresh, state]


def measure(files: list[Path], names: list[str]) -> dict[str, float]:
    started = time.perf_counter()
    read = inputs.read(files, stack=builders.STACK, project=builders.PROJECT)
    parsed = time.perf_counter()
    status = core.build(builders.STACK, read, NOW, names)
    built = time.perf_counter()
    remedy = selfheal.remedy(status, False)
    formats.as_json(status, remedy, "synced", False)
    formats.markdown(status, remedy)
    done = time.perf_counter()
    return {
        "read": parsed - started,
        "build": built - parsed,
        "format": done - built,
        "total": done - started,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resources", default="10000,40000", help="comma-separated sizes")
    parser.add_argument("--repeat", type=int, default=3, help="runs per size (median shown)")
    args = parser.parse_args(argv)
    sizes = sorted({int(s) for s in args.resources.split(",") if s.strip()})
    print("| resources | gateways | MiB of JSON | read s | build s | format s | total s |")
    print("|--:|--:|--:|--:|--:|--:|--:|")
    totals: dict[int, float] = {}
    for size in sizes:
        with tempfile.TemporaryDirectory() as temporary:
            gateways, count, files = write_inputs(Path(temporary), size)
            names = [f"tenant-{i:05d}" for i in range(gateways)]
            runs = [measure(files, names) for _ in range(args.repeat)]
            mib = sum(f.stat().st_size for f in files) / 2**20
        median = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        totals[count] = median["total"]
        print(
            f"| {count:,} | {gateways:,} | {mib:,.1f} | {median['read']:.2f} |"
            f" {median['build']:.2f} | {median['format']:.2f} | {median['total']:.2f} |"
        )
    if len(totals) > 1:
        (small, t_small), *_, (large, t_large) = sorted(totals.items())
        print(
            f"\ntime x{t_large / t_small:.2f} for resources x{large / small:.2f}"
            " (linear: at most about the resources' ratio)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

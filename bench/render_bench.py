"""Benchmark the offline render against a floor: the mock runtime alone, with no program logic.

For each size N a synthetic stack of N gateways (the AWS stack's shape: two clusters in
gateway-api mode) is generated in a temporary directory and rendered with
``render.execute(preparation.prepare(root, "bench"))``. The floor registers the same total number of
bare ``CustomResource`` objects through the same ``gatewayctl.engine.offline.run_program``, so the
ratio program/floor is the cost of our program logic on top of what the Pulumi SDK and the mock
engine cost anyway.

Every measurement runs in a fresh interpreter (``--child``) so peak memory (``ru_maxrss``) and
the event loop are not shared between runs. Each is repeated ``--repeat`` times; the table shows
the median time and the largest peak memory.

The same run then measures what users wait for beyond one stack (``parallel_bench.py``):
``render --all`` serial against parallel on three equal stacks, ``diff`` with the base render
uncached against cached, and the parallel run's peak memory (``--parallel-gateways 0`` skips it).

Run from the repository root::

    .venv/bin/python bench/render_bench.py [--sizes 10,100,500] [--repeat 3] [--strict]
                                           [--parallel-gateways 100] [--json FILE]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
STACK = "bench"
PROJECT = (
    "hypershell-gateways"  # gatewayctl.inputs.stackfile.PROJECT; the parent does not import the SDK
)
RESULT_PREFIX = "BENCH-RESULT "

DEFAULT_SIZES = (10, 100, 500)
MAX_RATIO = 1.5
RATIO_AT = 500
GROWTH_FROM, GROWTH_TO = 100, 500
MAX_GROWTH = 6.0

GATEWAY_IMAGE = "ghcr.io/nvidia/openshell/gateway"


# --- the synthetic stack --------------------------------------------------------------------


def _cluster(context: str, domain: str, rds: str) -> dict[str, Any]:
    """One ROSA cluster as in Pulumi.aws.yaml: OpenShift, Gateway API, an RDS database, Keycloak."""
    return {
        "kubeconfigContext": context,
        "capabilities": {"openshift": True, "gatewayApi": True},
        "ingress": {
            "mode": "gateway-api",
            "gateway": {
                "name": "openshell-grpc-gateway",
                "namespace": "openshift-ingress",
                "sectionName": "grpc",
            },
        },
        "baseDomain": domain,
        "database": {
            "adminHost": rds,
            "adminUser": "hypershell_admin",
            "host": rds,
            "sslRootCert": "certs/aws-rds-global-bundle.pem",
        },
        "storageClass": "gp3-csi",
        "metricsNamespace": "openshift-user-workload-monitoring",
        # Sign-in as on AWS: every gateway gets its Keycloak client, roles and mappers.
        "identity": {
            "keycloak": {
                "url": "https://keycloak.openshell.example.com",
                "realm": "openshell",
                "adminClientId": "hypershell-gateways-provisioner",
            }
        },
    }


CLUSTERS = {
    "rosa-us-east-1": _cluster(
        "openshell-prod-use1",
        "use1.openshell.example.com",
        "openshell-gateways.cluster-c9xk2mq4ab1z.us-east-1.rds.amazonaws.com",
    ),
    "rosa-us-west-2": _cluster(
        "openshell-prod-usw2",
        "usw2.openshell.example.com",
        "openshell-gateways.cluster-d41pq7rs8tuv.us-west-2.rds.amazonaws.com",
    ),
}


def stack_config() -> dict[str, Any]:
    """``Pulumi.bench.yaml``; secrets in plaintext since there is no secrets provider here."""
    return {
        "config": {
            f"{PROJECT}:declarationsDir": "gateways",
            f"{PROJECT}:clusters": CLUSTERS,
            f"{PROJECT}:clusterSecrets": {
                name: {
                    "dbAdminPassword": f"bench-password-{name}",
                    "keycloakAdminClientSecret": f"bench-keycloak-secret-{name}",
                }
                for name in CLUSTERS
            },
        }
    }


def declaration(index: int) -> dict[str, Any]:
    """Gateway ``tenant-NNNN``: clusters alternate; exposure, images, replicas and policy vary."""
    clusters = sorted(CLUSTERS)
    spec: dict[str, Any] = {"cluster": clusters[index % len(clusters)]}
    if index % 4 == 0:
        spec["exposure"] = {"enabled": False}
    if index % 3 == 0:
        spec["images"] = {"gateway": f"{GATEWAY_IMAGE}:1.{index % 7}.{index}"}
    if index % 5 == 0:
        spec["replicas"] = 2
    if index % 2 == 0:
        spec["deletionPolicy"] = "Delete"
    return {
        "apiVersion": "hypershell.redhat.io/v1alpha1",
        "kind": "Gateway",
        "metadata": {"name": f"tenant-{index:04d}"},
        "spec": spec,
    }


def write_stack(root: Path, gateways: int) -> None:
    """Write ``Pulumi.bench.yaml`` and ``gateways/tenant-*.yaml`` under ``root``."""
    (root / f"Pulumi.{STACK}.yaml").write_text(
        yaml.safe_dump(stack_config(), sort_keys=False), encoding="utf-8"
    )
    directory = root / "gateways"
    directory.mkdir()
    for index in range(1, gateways + 1):
        document = declaration(index)
        path = directory / f"{document['metadata']['name']}.yaml"
        path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")


# --- children: one measurement per fresh interpreter ----------------------------------------


def _peak_kib() -> int:
    """Peak resident set of this process so far, in KiB (macOS reports bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak // 1024 if sys.platform == "darwin" else peak


def child_program(root: Path) -> dict[str, Any]:
    """Validate and render the stack under ``root``; time the two parts separately."""
    sys.path.insert(0, str(ROOT))
    from gatewayctl.engine import render
    from gatewayctl.resolve import preparation

    baseline = _peak_kib()
    start = time.perf_counter()
    prepared = preparation.prepare(root, STACK)
    prepared_at = time.perf_counter()
    rendered = render.execute(prepared)
    done = time.perf_counter()
    return {
        "seconds": done - prepared_at,
        "prepare_seconds": prepared_at - start,
        "peak_kib": _peak_kib(),
        "baseline_kib": baseline,
        "resources": len(rendered.recording.resources),
        "gateways": len(rendered.gateways),
        "gateway_resources": sum(g.resources for g in rendered.gateways),
    }


def _time_registrations(what: str, count: int, program: Callable[[], None]) -> dict[str, Any]:
    """Run ``program`` (which registers ``count`` resources) through the offline engine, timed."""
    sys.path.insert(0, str(ROOT))
    from gatewayctl.engine.offline import run_program

    baseline = _peak_kib()
    start = time.perf_counter()
    recording, _ = run_program(program, project=PROJECT, stack=STACK)
    done = time.perf_counter()
    if len(recording.resources) != count:
        raise RuntimeError(f"{what} registered {len(recording.resources)} of {count} resources")
    return {
        "seconds": done - start,
        "prepare_seconds": 0.0,
        "peak_kib": _peak_kib(),
        "baseline_kib": baseline,
        "resources": count,
        "gateways": 0,
        "gateway_resources": 0,
    }


def child_floor(count: int) -> dict[str, Any]:
    """Register ``count`` bare custom resources through the same mock runtime."""
    import pulumi

    def program() -> None:
        for i in range(count):
            pulumi.CustomResource("bench:index:Bare", f"r{i}", {"name": f"r{i}", "value": i})

    return _time_registrations("floor", count, program)


def child_typed_floor(count: int) -> dict[str, Any]:
    """Register ``count`` typed ConfigMaps with constant inputs through the same mock runtime.

    The least any program pays per resource once it uses the provider SDKs' typed classes, as
    the program's components do: no program logic, no Output passed between resources.
    """
    from pulumi_kubernetes.core.v1 import ConfigMap

    labels = {"app.kubernetes.io/name": "openshell-gateway"}

    def program() -> None:
        for i in range(count):
            ConfigMap(
                f"r{i}",
                metadata={"name": f"r{i}", "namespace": "bench", "labels": labels},
                data={"key": f"value-{i}"},
            )

    return _time_registrations("typed floor", count, program)


@dataclass(frozen=True)
class Sample:
    """What one child measured."""

    seconds: float
    prepare_seconds: float
    peak_kib: int
    baseline_kib: int
    resources: int
    gateways: int
    gateway_resources: int


def run_child(*args: str) -> Sample:
    completed = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode != 0:
        sys.stderr.write(completed.stdout + completed.stderr)
        raise SystemExit(f"child {' '.join(args)} failed with exit code {completed.returncode}")
    for line in reversed(completed.stdout.splitlines()):
        if line.startswith(RESULT_PREFIX):
            return Sample(**json.loads(line.removeprefix(RESULT_PREFIX)))
    sys.stderr.write(completed.stdout + completed.stderr)
    raise SystemExit(f"child {' '.join(args)} printed no result")


# --- the parent: generate, measure, report --------------------------------------------------


@dataclass(frozen=True)
class Row:
    """One size: medians of the times, maxima of the peaks."""

    gateways: int
    resources: int
    resources_per_gateway: float
    prepare_seconds: float
    program_seconds: float
    floor_seconds: float
    ratio: float
    typed_floor_seconds: float
    typed_ratio: float
    program_peak_mib: float
    floor_peak_mib: float
    program_baseline_mib: float
    program_runs: list[float]
    floor_runs: list[float]
    typed_floor_runs: list[float]


@dataclass(frozen=True)
class Check:
    name: str
    value: float | None
    limit: float
    passed: bool | None  # None: not measured (the sizes did not include it)

    @property
    def verdict(self) -> str:
        return {True: "PASS", False: "FAIL", None: "SKIP"}[self.passed]


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def measure(gateways: int, repeat: int) -> Row:
    programs: list[Sample] = []
    floors: list[Sample] = []
    typed: list[Sample] = []
    with tempfile.TemporaryDirectory(prefix=f"render-bench-{gateways}-") as tmp:
        root = Path(tmp)
        write_stack(root, gateways)
        for run in range(1, repeat + 1):
            programs.append(run_child("program", "--root", str(root)))
            _progress(f"  N={gateways} run {run}/{repeat}: program {programs[-1].seconds:.3f}s")
            floors.append(run_child("floor", "--count", str(programs[0].resources)))
            _progress(f"  N={gateways} run {run}/{repeat}: floor   {floors[-1].seconds:.3f}s")
            typed.append(run_child("typed-floor", "--count", str(programs[0].resources)))
            _progress(f"  N={gateways} run {run}/{repeat}: typed   {typed[-1].seconds:.3f}s")
    counts = {(s.resources, s.gateways, s.gateway_resources) for s in programs}
    if len(counts) != 1:
        raise SystemExit(f"N={gateways}: runs registered different resources: {counts}")
    first = programs[0]
    if first.gateways != gateways:
        raise SystemExit(f"N={gateways}: the render has {first.gateways} gateways")
    program_seconds = statistics.median(s.seconds for s in programs)
    floor_seconds = statistics.median(s.seconds for s in floors)
    typed_floor_seconds = statistics.median(s.seconds for s in typed)
    return Row(
        gateways=gateways,
        resources=first.resources,
        resources_per_gateway=first.gateway_resources / gateways,
        prepare_seconds=statistics.median(s.prepare_seconds for s in programs),
        program_seconds=program_seconds,
        floor_seconds=floor_seconds,
        ratio=program_seconds / floor_seconds,
        typed_floor_seconds=typed_floor_seconds,
        typed_ratio=program_seconds / typed_floor_seconds,
        program_peak_mib=max(s.peak_kib for s in programs) / 1024,
        floor_peak_mib=max(s.peak_kib for s in floors) / 1024,
        program_baseline_mib=max(s.baseline_kib for s in programs) / 1024,
        program_runs=[s.seconds for s in programs],
        floor_runs=[s.seconds for s in floors],
        typed_floor_runs=[s.seconds for s in typed],
    )


def checks(rows: Sequence[Row]) -> list[Check]:
    by_size = {row.gateways: row for row in rows}
    at = by_size.get(RATIO_AT)
    ratio = at.ratio if at else None
    low, high = by_size.get(GROWTH_FROM), by_size.get(GROWTH_TO)
    time_growth = high.program_seconds / low.program_seconds if low and high else None
    mem_growth = high.program_peak_mib / low.program_peak_mib if low and high else None
    growth = f"N={GROWTH_TO} / N={GROWTH_FROM}"
    return [
        Check(f"ratio program/floor at N={RATIO_AT}", ratio, MAX_RATIO, _within(ratio, MAX_RATIO)),
        Check(f"time {growth}", time_growth, MAX_GROWTH, _within(time_growth, MAX_GROWTH)),
        Check(f"peak memory {growth}", mem_growth, MAX_GROWTH, _within(mem_growth, MAX_GROWTH)),
    ]


def _within(value: float | None, limit: float) -> bool | None:
    return None if value is None else value <= limit


HEADERS = (
    "N",
    "resources",
    "res/gateway",
    "program s",
    "floor s",
    "ratio",
    "typed floor s",
    "ratio typed",
    "peak MiB program",
    "peak MiB floor",
    "prepare s",
)


def table(rows: Sequence[Row]) -> str:
    """A Markdown table (readable in a terminal and pasteable into the README)."""
    cells = [
        (
            str(row.gateways),
            str(row.resources),
            f"{row.resources_per_gateway:.1f}",
            f"{row.program_seconds:.3f}",
            f"{row.floor_seconds:.3f}",
            f"{row.ratio:.2f}",
            f"{row.typed_floor_seconds:.3f}",
            f"{row.typed_ratio:.2f}",
            f"{row.program_peak_mib:.1f}",
            f"{row.floor_peak_mib:.1f}",
            f"{row.prepare_seconds:.3f}",
        )
        for row in rows
    ]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(HEADERS)]
    lines = [
        "| " + " | ".join(h.rjust(w) for h, w in zip(HEADERS, widths, strict=True)) + " |",
        "|" + "|".join("-" * (w + 1) + ":" for w in widths) + "|",
    ]
    lines += [
        "| " + " | ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)) + " |"
        for row in cells
    ]
    return "\n".join(lines)


def machine() -> dict[str, Any]:
    return {
        "nproc": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def report(rows: Sequence[Row], results: Sequence[Check], repeat: int) -> str:
    host = machine()
    lines = [
        f"offline render benchmark, {datetime.date.today().isoformat()},"
        f" nproc {host['nproc']}, Python {host['python']}, {repeat} run(s) per figure"
        " (median time, max peak)",
        "",
        table(rows),
        "",
        "resources: everything the render registered (both clusters' resources included);",
        "res/gateway: each Gateway component and its descendants, averaged; the floor registers",
        "the same total number of bare CustomResources, the typed floor as many typed ConfigMaps",
        "with constant inputs; prepare s: validation, not in the ratios.",
        "",
    ]
    for check in results:
        value = "n/a" if check.value is None else f"{check.value:.2f}"
        lines.append(f"{check.verdict}  {check.name}: {value} (target <= {check.limit:g})")
    for row in rows:
        if row.gateways == RATIO_AT:
            lines.append(
                f"INFO  typed floor / floor at N={RATIO_AT}:"
                f" {row.typed_floor_seconds / row.floor_seconds:.2f} (no target: what the typed"
                " SDK classes cost with no program logic at all)"
            )
    return "\n".join(lines)


def parse_sizes(text: str) -> list[int]:
    try:
        sizes = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected comma-separated integers") from None
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: sizes must be positive")
    return sorted(set(sizes))


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--sizes",
        type=parse_sizes,
        default=list(DEFAULT_SIZES),
        help="gateway counts, comma-separated (default: 10,100,500)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (default: 3)")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the figures here")
    parser.add_argument(
        "--parallel-gateways",
        type=int,
        default=100,
        metavar="N",
        help="gateways of each of the three stacks of render --all and of the diff's stack"
        " (default: 100; 0: skip those measurements)",
    )
    parser.add_argument(
        "--child", choices=("program", "floor", "typed-floor"), help=argparse.SUPPRESS
    )
    parser.add_argument("--root", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child == "program":
        print(RESULT_PREFIX + json.dumps(child_program(args.root)))
        return 0
    if args.child == "floor":
        print(RESULT_PREFIX + json.dumps(child_floor(args.count)))
        return 0
    if args.child == "typed-floor":
        print(RESULT_PREFIX + json.dumps(child_typed_floor(args.count)))
        return 0

    rows = []
    for size in args.sizes:
        _progress(f"N={size}: generating and measuring")
        rows.append(measure(size, args.repeat))
    results = checks(rows)
    print(report(rows, results, args.repeat))
    parallel = None
    if args.parallel_gateways > 0:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import parallel_bench

        _progress(f"render --all and diff: 3 stacks of {args.parallel_gateways} gateways")
        parallel = parallel_bench.measure(args.parallel_gateways, args.repeat, _progress)
        print()
        print(parallel_bench.report(parallel))
        missed = [v for v in parallel_bench.verdicts(parallel) if not v.passed]
    else:
        missed = []
    if args.json is not None:
        figures = {
            "date": datetime.date.today().isoformat(),
            "machine": machine(),
            "repeat": args.repeat,
            "rows": [asdict(row) for row in rows],
            "checks": [{**asdict(check), "verdict": check.verdict} for check in results],
            "parallel": asdict(parallel) if parallel is not None else None,
        }
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    failed = any(check.passed is False for check in results) or bool(missed)
    return 1 if args.strict and failed else 0


if __name__ == "__main__":
    sys.exit(main())

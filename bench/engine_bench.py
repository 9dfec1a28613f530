"""Real figures: `pulumi preview` and `pulumi up` from empty on the real engine and API server.

For each size N, a stack of N gateways shaped like the committed ``local`` stack's ``dev``
gateway (sign-in, KEK credentials, no ingress) is made from ``Pulumi.local.yaml`` in a
temporary project (``e2e/project.py``) and run by the real CLI, with the real
pulumi-kubernetes provider, against a kwok-backed control plane started for the run
(``e2e/cluster.py``; the bridged providers are answered by the offline mocks, as in the e2e
suite: ``e2e/engine.py``). Beside each, the offline render of the same project, so the ratio
real/offline is the engine's, the provider's and the API server's cost on top of the program.

Prints a table; never a timed test. Targets (issue: the real-engine lane): a 100-gateway stack
previews in <= 60 s and comes up from empty in <= 5 min on 2 cores. Also prints the build
times recorded by e2e/build.py (cold: each item's first build; warm: a second run).

    .venv/bin/python bench/engine_bench.py [--sizes 10,50,100] [--skip-checkpoints]

Where the time goes: the CPU seconds of each command, split between the program (this
process: the Python SDK's language server and the program run in it), the CLI and the
pulumi-kubernetes provider (its children, from ``getrusage``: exact), and the API server and
etcd (sampled every 0.5 s with psutil). ``--skip-checkpoints`` runs the engine with
``PULUMI_SKIP_CHECKPOINTS=true``, which writes the state once at the end instead of after every
step (pulumi/pulumi sdk/go/common/env/env.go ``SkipCheckpoints``; pkg/backend/snapshot.go
``NewSnapshotManager`` picks ``unsafeServiceLoop``), to show what the ``file://`` backend's
whole-snapshot write per step costs.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from e2e import build  # noqa: E402
from e2e.cluster import StatusStandIn, running_cluster, terminate_as_interrupt  # noqa: E402
from e2e.engine import Engine  # noqa: E402
from e2e.project import make_project  # noqa: E402
from gatewayctl.engine import render  # noqa: E402
from gatewayctl.resolve import preparation  # noqa: E402

SHAPE = "dev"  # gateways/local/dev.yaml


def declaration(name: str) -> dict[str, object]:
    import yaml

    document = yaml.safe_load((ROOT / "gateways" / "local" / f"{SHAPE}.yaml").read_text())
    document["metadata"]["name"] = name
    spec = document.setdefault("spec", {})
    spec.pop("namespace", None)
    keycloak = spec.get("keycloak")
    if isinstance(keycloak, dict):
        keycloak.pop("clientId", None)
    return document


SERVERS = ("kube-apiserver", "etcd")
"""Processes sampled for their CPU seconds (by the name of their executable)."""


class CpuSampler:
    """The CPU seconds of the control plane's servers, sampled while a command runs."""

    def __init__(self) -> None:
        self._last: dict[int, tuple[str, float]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        for proc in psutil.process_iter(["pid", "exe", "cpu_times"]):
            name = os.path.basename(proc.info["exe"] or "")
            times = proc.info["cpu_times"]
            if name in SERVERS and times is not None:
                self._last[proc.info["pid"]] = (name, times.user + times.system)

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            self._sample()

    def totals(self) -> dict[str, float]:
        self._sample()
        out: dict[str, float] = {}
        for name, seconds in self._last.values():
            out[name] = out.get(name, 0.0) + seconds
        return out

    def __enter__(self) -> CpuSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


@contextmanager
def cpu_split(sampler: CpuSampler, into: dict[str, float]) -> Iterator[None]:
    """Add the CPU seconds spent while the block runs to ``into``, by who spent them."""
    me, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    servers = sampler.totals()
    yield
    me2, children2 = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    servers2 = sampler.totals()
    into["program"] = me2.ru_utime + me2.ru_stime - me.ru_utime - me.ru_stime
    # The CLI waits for its plugins, so their time is in the CLI's children's.
    into["cli+provider"] = (
        children2.ru_utime + children2.ru_stime - children.ru_utime - children.ru_stime
    )
    for name in SERVERS:
        into[name] = servers2.get(name, 0.0) - servers.get(name, 0.0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10,50,100")
    parser.add_argument(
        "--skip-checkpoints",
        action="store_true",
        help="run the engine with PULUMI_SKIP_CHECKPOINTS=true (state written once, at the end)",
    )
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    terminate_as_interrupt()  # a terminated bench stops its cluster too
    paths = build.built_paths()
    if paths is None:
        print("build first: python e2e/build.py (or make e2e-build)", file=sys.stderr)
        return 1
    rows = []
    cpu_rows: list[tuple[int, str, float, dict[str, float]]] = []
    with tempfile.TemporaryDirectory(prefix="engine-bench-") as tmp:
        work = Path(tmp)
        version = build.load_versions()["kubernetes"]["version"]
        with (
            running_cluster(paths, work / "cluster", kube_version=version) as cluster,
            StatusStandIn(cluster),
            CpuSampler() as sampler,
        ):
            provider = Path(paths["kubernetes_provider"]["pulumi-resource-kubernetes"])
            engine = Engine(
                pulumi=Path(paths["pulumi"]["pulumi"]),
                plugin_dirs=[provider.parent],
                home=work / "home",
                backend=work / "state",
            )
            engine.backend.mkdir()
            env = {"KUBECONFIG": str(cluster.kubeconfig)}
            if args.skip_checkpoints:
                env["PULUMI_SKIP_CHECKPOINTS"] = "true"
            for n in sizes:
                stack = f"bench-{n}"
                project = make_project(
                    work / "projects",
                    stack=stack,
                    source="local",
                    context=cluster.context(),
                    gateways=[],
                )
                for i in range(n):
                    name = f"b{n}-{i:04d}"
                    project.write_declaration(name, declaration(name))
                subprocess.run(["git", "add", "-A"], cwd=project.root, check=True)
                started = time.monotonic()
                offline = render.execute(preparation.prepare(project.root, stack))
                offline_s = time.monotonic() - started
                resources = len(offline.recording.resources)
                engine.run(["stack", "init", stack], cwd=project.root, env=env)
                preview_cpu: dict[str, float] = {}
                up_cpu: dict[str, float] = {}
                started = time.monotonic()
                with cpu_split(sampler, preview_cpu):
                    engine.run(
                        ["preview", "--stack", stack],
                        cwd=project.root,
                        env=env,
                        program=project.program(),
                    )
                preview_s = time.monotonic() - started
                started = time.monotonic()
                with cpu_split(sampler, up_cpu):
                    up = engine.run(
                        ["up", "--yes", "--skip-preview", "--json", "--stack", stack],
                        cwd=project.root,
                        env=env,
                        program=project.program(),
                    )
                up_s = time.monotonic() - started
                cpu_rows.append((n, "preview", preview_s, preview_cpu))
                cpu_rows.append((n, "up", up_s, up_cpu))
                created = up.summary().get("create", 0)
                rows.append((n, resources, created, offline_s, preview_s, up_s))
                print(
                    f"[engine-bench] N={n}: offline {offline_s:.1f} s, preview {preview_s:.1f} s, "
                    f"up {up_s:.1f} s ({created} created)",
                    file=sys.stderr,
                    flush=True,
                )
    print(
        "| gateways | resources (program) | created by the engine | offline render s | "
        "preview s | up s | preview/offline | up/offline | up resources/s |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n, resources, created, offline_s, preview_s, up_s in rows:
        print(
            f"| {n} | {resources} | {created} | {offline_s:.1f} | {preview_s:.1f} | {up_s:.1f} | "
            f"{preview_s / offline_s:.1f}x | {up_s / offline_s:.1f}x | {created / up_s:.1f} |"
        )
    if 100 in sizes:
        _, _, _, _, preview_s, up_s = next(r for r in rows if r[0] == 100)
        print(
            f"targets at 100 gateways: preview {preview_s:.0f} s (<= 60: "
            f"{'met' if preview_s <= 60 else 'NOT met'}), up {up_s:.0f} s (<= 300: "
            f"{'met' if up_s <= 300 else 'NOT met'})"
        )
    print()
    print(
        "CPU seconds by process"
        + (" (PULUMI_SKIP_CHECKPOINTS=true)" if args.skip_checkpoints else "")
        + ": the program and SDK (this process), the CLI with the kubernetes provider, "
        "the API server and etcd (sampled)"
    )
    print("| gateways | command | wall s | program | cli+provider | kube-apiserver | etcd |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    for n, command, wall, cpu in cpu_rows:
        print(
            f"| {n} | {command} | {wall:.1f} | {cpu['program']:.1f} | {cpu['cli+provider']:.1f} | "
            f"{cpu['kube-apiserver']:.1f} | {cpu['etcd']:.1f} |"
        )
    print()
    print("| built item | version | first build s |")
    print("|---|---|---:|")
    for name, table in build.load_versions().items():
        done = build.Item(name, table, build.cache_root()).done
        if done.exists():
            record = json.loads(done.read_text())
            # An item checked, not built (Debian's chromium), records no build time.
            seconds = f"{record['seconds']:.0f}" if "seconds" in record else "not built"
            print(f"| {name} | {table.get('version', '')} | {seconds} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

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

    .venv/bin/python bench/engine_bench.py [--sizes 10,50,100]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from e2e import build  # noqa: E402
from e2e.cluster import StatusStandIn, running_cluster, terminate_as_interrupt  # noqa: E402
from e2e.engine import Engine  # noqa: E402
from e2e.project import make_project  # noqa: E402
from gatewayctl import render  # noqa: E402

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10,50,100")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    terminate_as_interrupt()  # a terminated bench stops its cluster too
    paths = build.built_paths()
    if paths is None:
        print("build first: python e2e/build.py (or make e2e-build)", file=sys.stderr)
        return 1
    rows = []
    with tempfile.TemporaryDirectory(prefix="engine-bench-") as tmp:
        work = Path(tmp)
        version = build.load_versions()["kubernetes"]["version"]
        with (
            running_cluster(paths, work / "cluster", kube_version=version) as cluster,
            StatusStandIn(cluster),
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
                offline = render.execute(render.prepare(project.root, stack))
                offline_s = time.monotonic() - started
                resources = len(offline.recording.resources)
                engine.run(["stack", "init", stack], cwd=project.root, env=env)
                started = time.monotonic()
                engine.run(
                    ["preview", "--stack", stack],
                    cwd=project.root,
                    env=env,
                    program=project.program(),
                )
                preview_s = time.monotonic() - started
                started = time.monotonic()
                up = engine.run(
                    ["up", "--yes", "--skip-preview", "--json", "--stack", stack],
                    cwd=project.root,
                    env=env,
                    program=project.program(),
                )
                up_s = time.monotonic() - started
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

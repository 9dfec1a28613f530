"""Real figures: `pulumi preview` and `pulumi up` from empty on the real engine and API server.

For each size N, ``preview`` and ``up`` from empty, then ``update``: an ``up`` that changes
every gateway (2 replicas: each Deployment updated, as a release bump would). A stack of N
gateways shaped like the committed ``local`` stack's ``dev`` gateway (sign-in, KEK
credentials, no ingress: no route, so no route status stand-in runs) is made from
``Pulumi.local.yaml`` in a temporary project (``e2e/project.py``) and run by the real
CLI, with the real pulumi-kubernetes provider, against a kwok-backed control plane started for
the run (``e2e/cluster.py``). The four providers that cannot be built here are stand-in plugins
the engine starts (``e2e/providers``), so the engine holds every resource the program
registers: both counts are printed, to show it.

Two columns, side by side in one run (issue 39, point 6):
- **after**: the project as it is: the program's output drain linear
  (``gatewayctl/engine/drain.py``), the SDK's per-resource debug messages not sent
  (``gatewayctl/engine/sdk_debug.py``) and checkpoints skipped on the preview (``e2e/engine.py``,
  ``SKIP_CHECKPOINTS``);
- **before** (``--before-sizes``): the SDK's own drain and debug messages, checkpoints
  written on the preview too, as before issue 39.
Each (size, column) is a stack of its own, with gateways of their own names, in one cluster.

Where the time goes, by process, with nothing of the bench's own in any column:
- **program**: this process's CPU (``getrusage(RUSAGE_SELF)``): the Python SDK's language
  server and the program run in it; the bench runs no thread of its own while a command runs;
- **CLI + plugins**: the CLI's, with the plugins it waits for (``RUSAGE_CHILDREN``: it is the
  only child reaped meanwhile), split into the kubernetes provider's (sampled) and the rest
  (the CLI, and the stand-ins' launchers: a stdlib-only Python each);
- **stand-ins**: the stand-in plugins themselves, forks of one server that has imported them
  (``e2e/providers/forkserver.py``), so that their start costs about what a provider binary's
  does, not a Python interpreter's imports; they are the server's children, so in none of the
  columns above (sampled, by their ``sp-`` names);
- **kube-apiserver**, **etcd**: their cumulative CPU read before and after (exact);
- **peak MiB**: the whole process tree (this process, the CLI, its plugins, the stand-ins and
  their server) at its largest, as proportional set sizes (shared pages counted once), and the
  most plugin processes at once, sampled every 0.2 s by ``bench/tree_sampler.py`` in a process
  of its own (its CPU is reaped after the last measurement, so it is in no column).

Prints tables, the growth exponents between sizes (``log(t2/t1) / log(n2/n1)``: 1 is linear, 2
quadratic) and the program's CPU per registered resource at the largest size against the
smallest; never a timed test.

    .venv/bin/python bench/engine_bench.py [--sizes 10,25,50,100] [--before-sizes 10,25,50]
        [--preview-only-sizes 100] [--json FILE]
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from e2e import build  # noqa: E402
from e2e import project as e2e_project  # noqa: E402
from e2e.cluster import running_cluster, terminate_as_interrupt  # noqa: E402
from e2e.engine import CommandFailedError, Engine  # noqa: E402
from e2e.keycloak import running_keycloak  # noqa: E402
from e2e.project import E2EProject, make_project  # noqa: E402
from e2e.providers.forkserver import SERVER_NAME  # noqa: E402
from gatewayctl.engine import drain, render, sdk_debug  # noqa: E402
from gatewayctl.resolve import preparation  # noqa: E402
from tests.e2e.databases import LaneDatabases  # noqa: E402  (the lane's PostgreSQL per project)

SHAPE = "dev"  # gateways/local/dev.yaml
SERVERS = ("kube-apiserver", "etcd")
PROVIDER = "pulumi-resource-kubernetes"
STANDIN_PREFIX = "sp-"  # e2e/providers/forkserver.py: the server and each plugin it forks
PREVIEW_TARGET_S, UP_TARGET_S = 30.0, 120.0  # a shard of the recommended size (issue 39)
FLEET, RUNNERS = 1000, 10  # the fleet-wide change of issue 39's targets


def declaration(name: str, replicas: int | None = None) -> dict[str, object]:
    import yaml

    document = yaml.safe_load((ROOT / "gateways" / "local" / f"{SHAPE}.yaml").read_text())
    document["metadata"]["name"] = name
    spec = document.setdefault("spec", {})
    if replicas is not None:
        spec["replicas"] = replicas
    spec.pop("namespace", None)
    keycloak = spec.get("keycloak")
    if isinstance(keycloak, dict):
        keycloak.pop("clientId", None)
    return document


@dataclass
class Figures:
    """One command of one column at one size."""

    size: int
    column: str
    command: str
    wall: float
    program: float
    cli_and_plugins: float
    provider: float
    servers: dict[str, float]
    peak_tree_mib: float
    peak_program_mib: float
    plugin_processes: int
    standins: float = 0.0
    """CPU seconds of the stand-in plugins (``sp-*`` processes, forked by their server)."""
    standin_processes: int = 0
    """The most stand-in plugins alive at one sample."""
    extra: dict[str, Any] = field(default_factory=dict)


class TreeSampler:
    """``bench/tree_sampler.py`` over this process's tree (module docstring)."""

    def __init__(
        self, under: str = "pulumi", interval: float = 0.2, prefix: str = STANDIN_PREFIX
    ) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                str(ROOT / "bench" / "tree_sampler.py"),
                *("--pid", str(os.getpid()), "--under", under, "--interval", str(interval)),
                *("--prefix", prefix),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def _ask(self, word: str) -> str:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(word + "\n")
        self.proc.stdin.flush()
        return self.proc.stdout.readline()

    def start(self) -> None:
        assert self._ask("start").strip() == "started"

    def stop(self) -> dict[str, Any]:
        report: dict[str, Any] = json.loads(self._ask("stop"))
        return report

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.close()
        self.proc.wait(timeout=30)


def server_cpu() -> dict[str, float]:
    """The cumulative CPU seconds of the control plane's servers (long-lived: exact)."""
    out = dict.fromkeys(SERVERS, 0.0)
    for proc in psutil.process_iter(["exe", "cpu_times"]):
        name = os.path.basename(proc.info["exe"] or "")
        times = proc.info["cpu_times"]
        if name in out and times is not None:
            out[name] += times.user + times.system
    return out


def measure(
    sampler: TreeSampler, size: int, column: str, command: str, run: Callable[[], Any]
) -> tuple[Figures, Any]:
    servers = server_cpu()
    sampler.start()
    me = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    result = run()
    wall = time.monotonic() - started
    me2 = resource.getrusage(resource.RUSAGE_SELF)
    children2 = resource.getrusage(resource.RUSAGE_CHILDREN)
    tree = sampler.stop()
    servers2 = server_cpu()
    program_name = psutil.Process().name()
    figures = Figures(
        size=size,
        column=column,
        command=command,
        wall=wall,
        program=me2.ru_utime + me2.ru_stime - me.ru_utime - me.ru_stime,
        cli_and_plugins=(
            children2.ru_utime + children2.ru_stime - children.ru_utime - children.ru_stime
        ),
        provider=float(tree["cpu_seconds"].get(PROVIDER, 0.0)),
        servers={name: servers2[name] - servers[name] for name in SERVERS},
        peak_tree_mib=float(tree["peak_tree_mib"]),
        peak_program_mib=float(tree["peak_mib"].get(program_name, 0.0)),
        plugin_processes=int(tree["most_processes"].get(PROVIDER, 0)),
        standins=sum(
            float(v) for k, v in tree["cpu_seconds"].items() if k.startswith(STANDIN_PREFIX)
        ),
        standin_processes=sum(
            int(v)
            for k, v in tree["most_processes"].items()
            if k.startswith(STANDIN_PREFIX) and k != SERVER_NAME
        ),
    )
    return figures, result


def before_program(program: Callable[[], None]) -> Callable[[], None]:
    """``program`` with the SDK's debug messages sent (``HYPERSHELL_SDK_DEBUG=1``) and ending
    with the SDK's own output drain (the "before" column)."""

    def run() -> None:
        os.environ[sdk_debug.KEEP] = "1"
        try:
            program()
        finally:
            del os.environ[sdk_debug.KEEP]
        drain.uninstall()  # program.run installed the linear one; the drain runs after this

    return run


def sdk_as_shipped() -> None:
    """The SDK's own drain and debug messages back, after a column's commands."""
    drain.uninstall()
    sdk_debug.uninstall()


def run_column(
    engine: Engine,
    sampler: TreeSampler,
    project: E2EProject,
    names: list[str],
    column: str,
    env: dict[str, str],
    full: bool = True,
) -> list[Figures]:
    """Preview and up from empty of ``names``, then an up changing every one of them (the
    preview alone unless ``full``)."""
    size = len(names)
    stack = project.stack
    engine.skip_dry_run_checkpoints = column == "after"
    program = project.program()
    if column == "before":
        program = before_program(program)
    engine.run(["stack", "init", stack], cwd=project.root, env=env)

    def cli(command: str, *args: str) -> tuple[Figures, Any]:
        return measure(
            sampler,
            size,
            column,
            command,
            lambda: engine.run(
                [*args, "--stack", stack],
                cwd=project.root,
                env=env,
                program=program,
            ),
        )

    up_args = ("up", "--yes", "--skip-preview", "--json")
    preview, _ = cli("preview", "preview")
    if not full:
        sdk_as_shipped()
        print(f"[engine-bench] N={size} {column}: preview {preview.wall:.1f} s", file=sys.stderr)
        return [preview]
    up, result = cli("up", *up_args)
    exported = engine.run(["stack", "export", "--stack", stack], cwd=project.root, env=env)
    held = len(exported.json()["deployment"]["resources"])
    created = result.summary().get("create", 0)
    up.extra = {"created": created, "held": held}
    # A change to every gateway (2 replicas: each Deployment updated), as a release bump is.
    for name in names:
        project.write_declaration(name, declaration(name, replicas=2))
    try:
        update, result = cli("update", *up_args)
    except CommandFailedError as failed:  # printed, and the figures so far are kept
        sdk_as_shipped()
        print(f"[engine-bench] N={size} {column}: update failed: {failed}"[:2000], file=sys.stderr)
        return [preview, up]
    sdk_as_shipped()
    update.extra = {"updated": result.summary().get("update", 0)}
    print(
        f"[engine-bench] N={size} {column}: preview {preview.wall:.1f} s, up {up.wall:.1f} s "
        f"({held} held by the engine), update of every "
        f"gateway {update.wall:.1f} s ({update.extra['updated']} updated)",
        file=sys.stderr,
        flush=True,
    )
    return [preview, up, update]


def exponent(rows: list[Figures], command: str, value: Callable[[Figures], float]) -> list[str]:
    found = sorted((f for f in rows if f.command == command), key=lambda f: f.size)
    out = []
    for a, b in itertools.pairwise(found):
        if value(a) > 0 and value(b) > 0:
            k = math.log(value(b) / value(a)) / math.log(b.size / a.size)
            out.append(f"{a.size}->{b.size}: {k:.2f}")
    return out


def report(rows: list[Figures], counts: dict[int, int], offline: dict[int, float]) -> None:
    print(
        "| gateways | column | command | wall s | program CPU s | CLI CPU s | provider CPU s | "
        "stand-ins CPU s (most at once) |"
    )
    print("|---:|---|---|---:|---:|---:|---:|---:|")
    for f in rows:
        cli = f.cli_and_plugins - f.provider
        print(
            f"| {f.size} | {f.column} | {f.command} | {f.wall:.1f} | {f.program:.1f} | "
            f"{cli:.1f} | {f.provider:.1f} | {f.standins:.1f} ({f.standin_processes}) |"
        )
    print()
    print(
        "| gateways | column | command | kube-apiserver CPU s | etcd CPU s | peak tree MiB | "
        "peak program MiB | provider processes |"
    )
    print("|---:|---|---|---:|---:|---:|---:|---:|")
    for f in rows:
        print(
            f"| {f.size} | {f.column} | {f.command} | {f.servers['kube-apiserver']:.1f} | "
            f"{f.servers['etcd']:.1f} | {f.peak_tree_mib:.0f} | {f.peak_program_mib:.0f} | "
            f"{f.plugin_processes} |"
        )
    print()
    print("| gateways | program registers | engine holds | offline s |")
    print("|---:|---:|---:|---:|")
    for f in rows:
        if f.command == "up" and f.column == "after":
            print(f"| {f.size} | {counts[f.size]} | {f.extra['held']} | {offline[f.size]:.1f} |")
    print()
    for column in ("before", "after"):
        mine = [f for f in rows if f.column == column]
        if len({f.size for f in mine}) < 2:
            continue
        for command in ("preview", "up", "update"):
            wall = ", ".join(exponent(mine, command, lambda f: f.wall))
            cpu = ", ".join(exponent(mine, command, lambda f: f.program))
            print(f"growth ({column}, {command}): wall {wall}; program CPU {cpu}")
        for command in ("preview", "up"):
            ran = sorted((f for f in mine if f.command == command), key=lambda f: f.size)
            if len(ran) < 2:
                continue
            small, large = ran[0], ran[-1]
            per_small = small.program / counts[small.size]
            per_large = large.program / counts[large.size]
            print(
                f"program CPU per registered resource ({column}, {command}): "
                f"{per_small * 1000:.2f} ms at {small.size}, {per_large * 1000:.2f} ms at "
                f"{large.size} ({per_large / per_small:.2f}x; issue 39 asks <= 1.5x)"
            )
    after = {(f.size, f.command): f.wall for f in rows if f.column == "after"}
    fitting = [
        n
        for n in sorted({n for n, _ in after})
        if after.get((n, "preview"), math.inf) <= PREVIEW_TARGET_S
        and after.get((n, "up"), math.inf) <= UP_TARGET_S
    ]
    print(
        f"largest size measured within a shard's targets (preview <= {PREVIEW_TARGET_S:.0f} s, "
        f"up <= {UP_TARGET_S:.0f} s): {fitting[-1] if fitting else 'none'}"
    )
    if fitting:
        shard = fitting[-1]
        shards = math.ceil(FLEET / shard)
        rounds = math.ceil(shards / RUNNERS)
        update = after.get((shard, "update"), math.nan)
        print(
            f"computed, not measured: a change to every one of {FLEET:,} gateways as {shards} "
            f"shards of {shard}, {RUNNERS} runners at a time: {rounds} rounds x {update:.1f} s "
            f"(the update of every gateway of one shard) = {rounds * update / 60:.1f} min; a "
            f"one-gateway pull request: the offline diff (bench/scale_bench.py) plus one "
            f"shard's preview, {after[(shard, 'preview')]:.1f} s"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10,25,50,100", help="sizes of the after column")
    parser.add_argument("--before-sizes", default="10,25,50", help="sizes of the before column")
    parser.add_argument(
        "--preview-only-sizes",
        default="",
        help="sizes (of either column) measured by their preview alone (an up of 100 gateways "
        "takes a quarter of an hour here)",
    )
    parser.add_argument("--json", type=Path, help="also write every figure as JSON")
    args = parser.parse_args(argv)
    after = [int(s) for s in args.sizes.split(",") if s]
    before = [int(s) for s in args.before_sizes.split(",") if s]
    preview_only = {int(s) for s in args.preview_only_sizes.split(",") if s}
    terminate_as_interrupt()  # a terminated bench stops its cluster too
    paths = build.built_paths()
    if paths is None:
        print("build first: python e2e/build.py (or make e2e-build)", file=sys.stderr)
        return 1
    rows: list[Figures] = []
    counts: dict[int, int] = {}
    offline: dict[int, float] = {}
    sampler = TreeSampler()
    # Each bench project reaches a PostgreSQL of its own, as the lane's do (the postgresql
    # stand-in plugin makes every gateway's role, database and grant: e2e/providers).
    databases = LaneDatabases()
    e2e_project.database_for = databases
    try:
        with tempfile.TemporaryDirectory(prefix="engine-bench-") as tmp:
            work = Path(tmp)
            version = build.load_versions()["kubernetes"]["version"]
            with (
                running_cluster(paths, work / "cluster", kube_version=version) as cluster,
                # The keycloak stand-in makes each gateway's Keycloak objects during `up`
                # (e2e/providers/keycloak.py): a real Keycloak with the local stack's realm.
                running_keycloak(Path(paths["keycloak"]["home"]), work / "keycloak") as keycloak,
            ):
                from tests.e2e import realms

                provider = Path(paths["kubernetes_provider"]["pulumi-resource-kubernetes"])
                engine = Engine(
                    pulumi=Path(paths["pulumi"]["pulumi"]),
                    plugin_dirs=[provider.parent],
                    home=work / "home",
                    backend=work / "state",
                    guard_takeovers=False,  # the lane's check; an operator's `up` has no log
                )
                engine.extra_env.update(realms.urls_env(keycloak, realms.committed_urls(ROOT)))
                engine.backend.mkdir()
                prepared = False
                env = {"KUBECONFIG": str(cluster.kubeconfig)}
                for size in sorted(set(after) | set(before)):
                    for column in ("before", "after"):
                        if size not in (before if column == "before" else after):
                            continue
                        stack = f"bench-{size}-{column}"
                        project = make_project(
                            work / "projects",
                            stack=stack,
                            source="local",
                            context=cluster.context(),
                            gateways=[],
                        )
                        if not prepared:
                            realms.prepare(keycloak, realms.servers([project]))
                            prepared = True
                        names = [f"b{size}{column[0]}-{i:04d}" for i in range(size)]
                        for name in names:
                            project.write_declaration(name, declaration(name))
                        subprocess.run(["git", "add", "-A"], cwd=project.root, check=True)
                        if size not in counts:
                            started = time.monotonic()
                            done = render.execute(preparation.prepare(project.root, stack))
                            offline[size] = time.monotonic() - started
                            counts[size] = len(done.recording.resources)
                        full = size not in preview_only
                        rows.extend(run_column(engine, sampler, project, names, column, env, full))
                engine.close()
    finally:
        sampler.close()
        e2e_project.database_for = None
        databases.close()
    report(rows, counts, offline)
    if args.json is not None:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=2) + "\n")
    print()
    print("| built item | version | first build s |")
    print("|---|---|---:|")
    for name, table in build.load_versions().items():
        done_file = build.Item(name, table, build.cache_root()).done
        if done_file.exists():
            record = json.loads(done_file.read_text())
            seconds = f"{record['seconds']:.0f}" if "seconds" in record else "not built"
            print(f"| {name} | {table.get('version', '')} | {seconds} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Build what the real-engine lane needs, into a cache outside the repository.

    python e2e/build.py            # build what is missing, one line per step with its time
    python e2e/build.py --paths    # print where each built item is (JSON), building nothing
    python e2e/build.py --deadline EPOCH   # CI: build what fits before EPOCH (below)

Everything comes from the registries this machine reaches, through their ordinary clients:
Go modules through ``go`` (the module proxy), Keycloak through ``mvn`` (Maven Central). Each
item of ``e2e/versions.toml`` is built into ``<cache>/<item>-<key>/``, where ``key`` hashes the
item's table, and is marked done there with what was built and how long it took; a second run
builds nothing. The Go module and build caches live under ``<cache>/go`` too, so deleting the
cache directory is a cold start.

Cache: ``$HYPERSHELL_E2E_CACHE``, else ``$XDG_CACHE_HOME/hypershell-e2e``, else
``~/.cache/hypershell-e2e``.

Go wrappers (why each exists, from each module's go.mod; ``go install mod@version`` refuses a
module whose go.mod has replace directives, and a dependency's replaces are ignored, so a
small wrapper module repeats the proxy-hosted ones and substitutes the local ones):
- pulumi: ``pkg/v3`` replaces ``sdk/v3 => ../sdk`` (required at the same version instead) and
  ``atotto/clipboard`` (repeated).
- kubernetes_provider: ``sdk/v4 => ../sdk`` (required at a served version instead); its main
  package embeds ``schema-embed.json``, which is gitignored upstream and so not in the module
  zip: the ``cmd`` directory is copied out of the module cache and its own ``generate.go`` run.
- kubernetes: every ``k8s.io/<staging>`` module is ``=> ./staging/...``; replaced by its
  published ``v0.34.x`` copy.
- etcd: ``server/v3`` replaces its siblings with ``../``; required at the same version.
- oauth2_proxy: no replaces, so ``go install mod@version`` with the version ldflag.

With ``--jobs 2`` two items build at a time: much of a first build waits on the module proxy
(``go get`` and the build's own downloads), which the other item's compiling can overlap. The
go command's module and build caches are safe for concurrent use by several go processes
(``go help cache``; cmd/go/internal/lockedfile). The default is one at a time, the way the
cold build was measured (docs/real-engine.md, "CI"); two at a time is not measured cold yet.
Items start in ``BUILD_ORDER``.

With a deadline (``--deadline`` or ``$HYPERSHELL_E2E_BUILD_DEADLINE``, seconds since the
epoch; ``.ci/run`` sets it) an item not started by then is not started, and one still building
then is stopped; the packages it compiled stay in the Go build cache, so the next run goes on
from there. What is not built is listed, the run exits 0, and the e2e tests that need it are
skipped naming it (tests/e2e/conftest.py). Without a deadline everything is built or the run
fails.

Debian packages (``chromium``) are not built: each run checks the installed version (it can
change under the cache) and fails with the ``apt-get install`` command when it differs, or with
``--apt`` (``make e2e-build``) runs that command itself.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Callable, Mapping
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
VERSIONS = HERE / "versions.toml"


class BuildError(RuntimeError):
    """A step failed; the message names the step and the command."""


class DeadlineReachedError(BuildError):
    """The build deadline passed while an item was building; its process was stopped."""


DEADLINE_ENV = "HYPERSHELL_E2E_BUILD_DEADLINE"

BUILD_ORDER = (
    # Debian's packages, checked (or installed) first: quick, and the console's tests need
    # nothing else but Keycloak and oauth2-proxy (tests/e2e/test_e2e_h_console.py).
    "chromium",
    "keycloak",
    "oauth2_proxy",
    "gateway_api",
    "openshift_api",
    # The engine lane, in the order its cold build was measured in one run (2026-12-02, 2 cores,
    # 2,909 s for everything: pulumi 606 s, provider 1,153 s, kubernetes 698 s, etcd 77 s,
    # kwok 236 s; a later item reuses what an earlier one compiled at the same version).
    "pulumi",
    "kubernetes_provider",
    "kubernetes",
    "etcd",
    "kwok",
)
"""The order items start in; every item of versions.toml is here (tests/test_e2e_build.py)."""


def cache_root() -> Path:
    explicit = os.environ.get("HYPERSHELL_E2E_CACHE")
    if explicit:
        return Path(explicit).expanduser().resolve()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return (Path(base) / "hypershell-e2e").resolve()


def load_versions(path: Path = VERSIONS) -> dict[str, dict[str, Any]]:
    with path.open("rb") as handle:
        return tomllib.load(handle)


def item_key(table: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(table, sort_keys=True).encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Item:
    name: str
    table: dict[str, Any]
    root: Path

    @property
    def dir(self) -> Path:
        return self.root / f"{self.name}-{item_key(self.table)}"

    @property
    def bin(self) -> Path:
        return self.dir / "bin"

    @property
    def done(self) -> Path:
        return self.dir / ".done.json"


class Builder:
    def __init__(
        self,
        root: Path,
        versions: dict[str, dict[str, Any]],
        *,
        log: Any,
        apt: bool = False,
        deadline: float | None = None,
    ) -> None:
        self.root = root
        self.apt = apt
        self.versions = versions
        self.log = log
        self.deadline = deadline
        """Seconds since the epoch after which nothing more is built (module docstring)."""
        self._abort = threading.Event()
        """Set when an item failed: the others stop (``_wait``)."""
        self.go_env = {
            **os.environ,
            "GOMODCACHE": str(root / "go" / "mod"),
            "GOCACHE": str(root / "go" / "build"),
            "GOPATH": str(root / "go" / "path"),
            "GOFLAGS": "-mod=mod",
            "CGO_ENABLED": "0",
            "GOTOOLCHAIN": "local",
        }

    def item(self, name: str) -> Item:
        return Item(name, self.versions[name], self.root)

    # --- running commands ------------------------------------------------------------------

    def run(
        self, step: str, args: list[str], *, cwd: Path, env: Mapping[str, str] | None = None
    ) -> str:
        log_file = self.root / "logs" / f"{step}.log"
        log_file.parent.mkdir(parents=True, exist_ok=True)
        with log_file.open("a") as out:
            out.write(f"$ {' '.join(args)}\n")
            out.flush()
            # Its own process group, so a stop at the deadline stops go's compilers too.
            proc = subprocess.Popen(
                args,
                cwd=cwd,
                env=dict(env or self.go_env),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                start_new_session=True,
            )
            try:
                stdout = self._wait(proc, step, args, out, log_file)
            except BaseException:  # Ctrl-C, the deadline, another item's failure
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                raise
            out.write(stdout)
        if proc.returncode != 0:
            tail = "\n".join(stdout.strip().splitlines()[-15:])
            raise BuildError(
                f"{step}: `{' '.join(args)}` exited {proc.returncode} (log: {log_file})\n{tail}"
            )
        return stdout

    def _wait(
        self, proc: subprocess.Popen[str], step: str, args: list[str], out: Any, log_file: Path
    ) -> str:
        """The command's output once it ends; raises, for the caller to stop it, when the
        deadline passes or another item failed. (Retrying ``communicate`` after its timeout
        loses no output: Python's subprocess documentation.)"""
        while True:
            try:
                stdout, _ = proc.communicate(timeout=1.0)
                return str(stdout)
            except subprocess.TimeoutExpired:
                if self._abort.is_set():
                    raise BuildError(f"{step}: stopped, another item failed") from None
                if self.past_deadline():
                    raise DeadlineReachedError(
                        f"{step}: stopped at the build deadline: `{' '.join(args)}`"
                        f" (log: {log_file})"
                    ) from None

    def past_deadline(self) -> bool:
        return self.deadline is not None and time.time() >= self.deadline

    def go(self, step: str, args: list[str], *, cwd: Path) -> str:
        return self.run(step, ["go", *args], cwd=cwd)

    def wrapper(self, item: Item) -> Path:
        """A fresh Go module for ``item``'s wrapper."""
        work = item.dir / "wrapper"
        if work.exists():
            shutil.rmtree(work)
        work.mkdir(parents=True)
        self.go(item.name, ["mod", "init", f"example.invalid/e2e/{item.name}"], cwd=work)
        return work

    def module_dir(self, step: str, module: str, *, cwd: Path) -> Path:
        out = self.go(step, ["list", "-m", "-f", "{{.Dir}}", module], cwd=cwd)
        return Path(out.strip().splitlines()[-1])

    def download(self, step: str, module: str, version: str) -> Path:
        """The module's directory in the module cache (downloaded, not built)."""
        out = self.go(step, ["mod", "download", "-json", f"{module}@{version}"], cwd=self.root)
        return Path(json.loads(out)["Dir"])

    # --- the items ---------------------------------------------------------------------------

    def build_pulumi(self, item: Item) -> dict[str, Any]:
        t = item.table
        work = self.wrapper(item)
        for replace in t["replace"]:
            self.go(item.name, ["mod", "edit", f"-replace={replace}"], cwd=work)
        self.go(
            item.name,
            ["get", f"{t['module']}@{t['version']}", f"{t['sdk']}@{t['version']}"],
            cwd=work,
        )
        item.bin.mkdir(parents=True, exist_ok=True)
        self.go(
            item.name,
            [
                "build",
                "-trimpath",
                "-ldflags",
                f"-X {t['version_ldflag']}={t['version']}",
                "-o",
                str(item.bin / "pulumi"),
                t["main"],
            ],
            cwd=work,
        )
        return {"pulumi": str(item.bin / "pulumi")}

    def build_kubernetes_provider(self, item: Item) -> dict[str, Any]:
        t = item.table
        work = self.wrapper(item)
        self.go(
            item.name,
            ["mod", "edit", f"-replace={t['sdk']}={t['sdk']}@{t['sdk_version']}"],
            cwd=work,
        )
        self.go(item.name, ["get", f"{t['module']}@{t['version']}"], cwd=work)
        source = self.module_dir(item.name, t["module"], cwd=work)
        cmd = work / "cmd" / "pulumi-resource-kubernetes"
        shutil.copytree(source / "cmd" / "pulumi-resource-kubernetes", cmd)
        for path in [cmd, *cmd.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        # generate.go writes the gitignored schema-embed.json / terraform-mapping-embed.json
        # from the committed schema.json (pulumi-kubernetes provider/cmd/.../generate.go).
        self.run(
            item.name,
            ["go", "run", "generate.go"],
            cwd=cmd,
            env={**self.go_env, "VERSION": t["plugin_version"]},
        )
        item.bin.mkdir(parents=True, exist_ok=True)
        self.go(
            item.name,
            [
                "build",
                "-trimpath",
                "-ldflags",
                f"-X {t['version_ldflag']}={t['plugin_version']}",
                "-o",
                str(item.bin / "pulumi-resource-kubernetes"),
                "./cmd/pulumi-resource-kubernetes",
            ],
            cwd=work,
        )
        return {
            "pulumi-resource-kubernetes": str(item.bin / "pulumi-resource-kubernetes"),
            "plugin_version": t["plugin_version"],
        }

    def build_kubernetes(self, item: Item) -> dict[str, Any]:
        t = item.table
        work = self.wrapper(item)
        edits = [f"-replace=k8s.io/{m}=k8s.io/{m}@{t['staging_version']}" for m in t["staging"]]
        self.go(item.name, ["mod", "edit", *edits], cwd=work)
        self.go(item.name, ["get", f"{t['module']}@{t['version']}"], cwd=work)
        major, minor = t["version"].lstrip("v").split(".")[:2]
        flags = []
        for package in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
            flags += [
                f"-X {package}.gitVersion={t['version']}",
                f"-X {package}.gitMajor={major}",
                f"-X {package}.gitMinor={minor}",
                f"-X {package}.gitTreeState=clean",
            ]
        item.bin.mkdir(parents=True, exist_ok=True)
        self.go(
            item.name,
            [
                "build",
                "-trimpath",
                "-ldflags",
                " ".join(flags),
                "-o",
                f"{item.bin}/",
                *[f"k8s.io/kubernetes/cmd/{b}" for b in t["binaries"]],
            ],
            cwd=work,
        )
        return {b: str(item.bin / b) for b in t["binaries"]}

    def build_etcd(self, item: Item) -> dict[str, Any]:
        t = item.table
        work = self.wrapper(item)
        self.go(
            item.name,
            ["get", *[f"{m}@{t['version']}" for m in [t["module"], *t["siblings"]]]],
            cwd=work,
        )
        item.bin.mkdir(parents=True, exist_ok=True)
        self.go(
            item.name, ["build", "-trimpath", "-o", str(item.bin / "etcd"), t["module"]], cwd=work
        )
        return {"etcd": str(item.bin / "etcd")}

    def build_kwok(self, item: Item) -> dict[str, Any]:
        t = item.table
        item.bin.mkdir(parents=True, exist_ok=True)
        self.run(
            item.name,
            ["go", "install", *[f"{t['module']}/cmd/{b}@{t['version']}" for b in t["binaries"]]],
            cwd=self.root,
            env={**self.go_env, "GOBIN": str(item.bin)},
        )
        stages = self.download(item.name, t["module"], t["version"]) / "kustomize" / "stage"
        return {**{b: str(item.bin / b) for b in t["binaries"]}, "stages": str(stages)}

    def _crds(self, item: Item) -> dict[str, Any]:
        t = item.table
        source = self.download(item.name, t["module"], t["version"])
        out = item.dir / "crds"
        out.mkdir(parents=True, exist_ok=True)
        for rel in t["crds"]:
            shutil.copyfile(source / rel, out / Path(rel).name)
        return {"crds": [str(out / Path(rel).name) for rel in t["crds"]]}

    build_gateway_api = _crds
    build_openshift_api = _crds

    def build_keycloak(self, item: Item) -> dict[str, Any]:
        t = item.table
        coordinate = f"{t['group']}:{t['artifact']}:{t['version']}:{t['packaging']}"
        item.dir.mkdir(parents=True, exist_ok=True)
        self.run(
            item.name,
            [
                "mvn",
                "-B",
                "-q",
                "dependency:copy",
                f"-Dartifact={coordinate}",
                f"-DoutputDirectory={item.dir}",
            ],
            cwd=item.dir,
            env=dict(os.environ),
        )
        archive = item.dir / f"{t['artifact']}-{t['version']}.{t['packaging']}"
        self.run(
            item.name,
            ["python3", "-m", "zipfile", "-e", str(archive), str(item.dir)],
            cwd=item.dir,
            env=dict(os.environ),
        )
        archive.unlink()
        home = item.dir / f"keycloak-{t['version']}"
        for script in (home / "bin").glob("*.sh"):
            script.chmod(0o755)
        return {"home": str(home), "kc.sh": str(home / "bin" / "kc.sh")}

    def build_oauth2_proxy(self, item: Item) -> dict[str, Any]:
        t = item.table
        item.bin.mkdir(parents=True, exist_ok=True)
        self.run(
            item.name,
            [
                "go",
                "install",
                "-trimpath",
                "-ldflags",
                f"-X {t['version_ldflag']}={t['version']}",
                f"{t['module']}@{t['version']}",
            ],
            cwd=self.root,
            env={**self.go_env, "GOBIN": str(item.bin)},
        )
        return {"oauth2-proxy": str(item.bin / "oauth2-proxy")}

    def build_chromium(self, item: Item) -> dict[str, Any]:
        """Debian's packages: checked; installed with apt-get only when asked (``--apt``, as
        ``make e2e-build`` does: CI and a fresh machine run as root)."""
        try:
            return check_debian_packages(item.table)
        except BuildError:
            if not self.apt:
                raise
        t = item.table
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        self.run(item.name, ["apt-get", "update", "-q"], cwd=self.root, env=env)
        pinned = [f"{p}={t['version']}" for p in t["packages"]]
        try:
            self.run(item.name, ["apt-get", "install", "-y", "-q", *pinned], cwd=self.root, env=env)
        except BuildError as error:
            offered = served(t["packages"][0])
            if t["version"] in offered:
                raise
            # Debian's security archive keeps only a package's latest build: a pin it
            # superseded is gone (apt-cache madison lists what the archives serve).
            raise BuildError(
                f"{error}\nDebian no longer serves {t['packages'][0]} {t['version']}; it serves"
                f" {', '.join(offered) or 'none'}: set [chromium] version in e2e/versions.toml"
            ) from None
        return check_debian_packages(t)

    # --- driving ------------------------------------------------------------------------------

    CHECKED_EVERY_RUN = frozenset({"chromium"})
    """Installed outside the cache (Debian packages): checked again on every run."""

    def ensure(self, name: str) -> dict[str, Any]:
        item = self.item(name)
        started = time.monotonic()
        if name in self.CHECKED_EVERY_RUN:
            item.dir.mkdir(parents=True, exist_ok=True)
            paths = getattr(self, f"build_{name}")(item)
            item.done.write_text(json.dumps({"item": name, "paths": paths}, sort_keys=True))
            self.log(
                f"[e2e build] {name} {item.table['version']}: installed"
                f" ({time.monotonic() - started:.1f} s)"
            )
            return dict(paths)
        if item.done.exists():
            return dict(json.loads(item.done.read_text())["paths"])
        self.log(f"[e2e build] {name} {item.table.get('version', '')}: building ...")
        builder: Callable[[Item], dict[str, Any]] = getattr(self, f"build_{name}")
        paths = builder(item)
        seconds = round(time.monotonic() - started, 1)
        item.done.write_text(
            json.dumps(
                {"item": name, "table": item.table, "seconds": seconds, "paths": paths},
                indent=2,
                sort_keys=True,
            )
        )
        self.log(f"[e2e build] {name}: built in {seconds:.0f} s")
        return paths

    def ensure_all(
        self, names: list[str] | None = None, *, jobs: int = 1
    ) -> dict[str, dict[str, Any]]:
        """Build (or check) each item, ``jobs`` at a time in ``BUILD_ORDER``; what is built.

        A failure stops the run (the items building are stopped too). With a deadline,
        an item the deadline stops or does not reach is left out of the result and logged."""
        self.root.mkdir(parents=True, exist_ok=True)
        wanted = names or list(self.versions)
        order = [n for n in BUILD_ORDER if n in wanted] + [
            n for n in wanted if n not in BUILD_ORDER
        ]
        result: dict[str, dict[str, Any]] = {}
        not_built: list[str] = []
        lock = threading.Lock()

        def one(name: str) -> None:
            if self.past_deadline():
                with lock:
                    not_built.append(name)
                self.log(f"[e2e build] {name}: not started, the build deadline has passed")
                return
            started = time.monotonic()
            cached = self.item(name).done.exists() and name not in self.CHECKED_EVERY_RUN
            try:
                paths = self.ensure(name)
            except DeadlineReachedError as stopped:
                with lock:
                    not_built.append(name)
                self.log(
                    f"[e2e build] {name}: not built, stopped at the build deadline after "
                    f"{time.monotonic() - started:.0f} s ({stopped}); what it compiled stays "
                    "in the Go build cache for the next run"
                )
                return
            with lock:
                result[name] = paths
            if cached:
                self.log(f"[e2e build] {name}: cached ({time.monotonic() - started:.1f} s)")

        with ThreadPoolExecutor(max_workers=max(jobs, 1), thread_name_prefix="e2e-build") as pool:
            futures: list[Future[None]] = [pool.submit(one, name) for name in order]
            done, _ = wait(futures, return_when=FIRST_EXCEPTION)
            failed = [f for f in done if f.exception() is not None]
            if failed:
                self._abort.set()
                for future in futures:
                    future.cancel()
        if failed:
            error = failed[0].exception()
            assert error is not None
            raise error
        if not_built:
            self.log(
                f"[e2e build] not built before the deadline: {', '.join(sorted(not_built))}; "
                'the e2e tests that need them are skipped (docs/real-engine.md, "CI")'
            )
        return result


def served(package: str) -> list[str]:
    """The versions of ``package`` the configured archives serve, newest first
    (``apt-cache madison``: ``package | version | archive`` a line)."""
    proc = subprocess.run(
        ["apt-cache", "madison", package],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        check=False,
    )
    return madison_versions(proc.stdout)


def madison_versions(text: str) -> list[str]:
    """The versions ``apt-cache madison`` prints, each once, in its order."""
    found: list[str] = []
    for line in text.splitlines():
        fields = [f.strip() for f in line.split("|")]
        if len(fields) >= 3 and fields[1] and fields[1] not in found:
            found.append(fields[1])
    return found


def check_debian_packages(table: Mapping[str, Any]) -> dict[str, Any]:
    """The installed version of each of ``table['packages']`` is ``table['version']`` and its
    binaries exist, or a BuildError telling how to install them."""
    wanted = str(table["version"])
    install = "apt-get update && apt-get install -y " + " ".join(
        f"{p}={wanted}" for p in table["packages"]
    )
    for package in table["packages"]:
        proc = subprocess.run(
            ["dpkg-query", "-W", "-f", "${Version}", package],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            check=False,
        )
        found = proc.stdout.strip() if proc.returncode == 0 else "not installed"
        if found != wanted:
            raise BuildError(f"{package} {wanted} is needed, found {found}: run `{install}`")
    missing = [b for b in table["binaries"] if not Path(b).exists()]
    if missing:
        raise BuildError(f"{', '.join(missing)} missing: run `{install}`")
    return {Path(b).name: b for b in table["binaries"]}


def built_paths(
    root: Path | None = None, *, partial: bool = False
) -> dict[str, dict[str, Any]] | None:
    """Where each item was built, or None when something is missing (build first); with
    ``partial``, the items that are built, whatever is missing."""
    root = root or cache_root()
    versions = load_versions()
    result = {}
    for name, table in versions.items():
        done = Item(name, table, root).done
        if not done.exists():
            if partial:
                continue
            return None
        result[name] = json.loads(done.read_text())["paths"]
    return result


def deadline_from_env() -> float | None:
    """``$HYPERSHELL_E2E_BUILD_DEADLINE`` (seconds since the epoch), or None when unset."""
    value = os.environ.get(DEADLINE_ENV, "").strip()
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        raise SystemExit(
            f"{DEADLINE_ENV}={value!r}: not a number of seconds since the epoch"
        ) from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--paths", action="store_true", help="print built paths as JSON; build nothing"
    )
    parser.add_argument("--only", action="append", help="build only this item (repeatable)")
    parser.add_argument(
        "--apt", action="store_true", help="install missing Debian packages with apt-get (root)"
    )
    parser.add_argument("--jobs", type=int, default=1, help="items built at a time (default 1)")
    parser.add_argument(
        "--deadline",
        type=float,
        help=f"seconds since the epoch: build nothing after it (default ${DEADLINE_ENV})",
    )
    args = parser.parse_args(argv)
    deadline = args.deadline if args.deadline is not None else deadline_from_env()
    root = cache_root()
    if args.paths:
        paths = built_paths(root)
        if paths is None:
            print("not built yet: run `python e2e/build.py`", file=sys.stderr)
            return 1
        print(json.dumps(paths, indent=2, sort_keys=True))
        return 0

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    started = time.monotonic()
    try:
        builder = Builder(root, load_versions(), log=log, apt=args.apt, deadline=deadline)
        builder.ensure_all(args.only, jobs=args.jobs)
    except BuildError as error:
        print(f"[e2e build] FAILED {error}", file=sys.stderr)
        return 1
    log(f"[e2e build] all items ready in {root} ({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Drive the real Pulumi CLI over the project's program.

The real CLI (built by ``e2e/build.py``) runs every command against a local ``file://``
backend in a temporary folder; nothing dials out (``PULUMI_SKIP_UPDATE_CHECK``,
``PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION``).

How the program runs. The CLI normally starts the Python language host
(``pulumi-language-python``), which starts ``python __main__.py``. The Go module proxy serves
no version of the language host's module, so the lane uses the other way the real CLI runs a
Python program: the Python SDK's own language server (``pulumi.automation._server``, what the
Automation API starts for an inline program) listens on loopback in this process, and each
command gets ``--client=127.0.0.1:<port>`` (pulumi/pulumi pkg/engine/plugin_host.go,
``connectToLanguageRuntime``: the engine asks that server to ``Run`` the program instead of
launching a language plugin). The program is the project's own ``gatewayctl.engine.program.main``,
run exactly as ``__main__.py`` runs it.

What is not real. The four bridged providers the program uses (tls, random, postgresql,
keycloak) cannot be built here: the module proxy serves no version of
``github.com/pulumi/pulumi-{tls,random,postgresql,keycloak}/provider`` (every tag commit of the
last 60 releases of each tried: 403), nor of the Terraform providers three of them wrap
(``cyrilgdn/terraform-provider-postgresql``, ``keycloak/terraform-provider-keycloak``,
``hashicorp/terraform-provider-tls`` at the pinned commit). All four are served by stand-in
plugins the engine starts (``e2e/providers``: the provider protocol, real keys, certificates
and random values, real roles, databases and grants made with the provider's SQL on the lane's
PostgreSQL through a TLS front, ``e2e/pgtls.py``, and the Keycloak objects made, read, updated
and deleted through the admin API of the lane's real Keycloak), so the program registers every
resource with the real engine, and the state holds every one with its dependencies.
"""

from __future__ import annotations

import contextlib
import datetime
import gc
import json
import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent import futures
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import psutil
import yaml
from pulumi.automation._server import LanguageServer
from pulumi.runtime.proto import language_pb2_grpc

from e2e import providers as standins

BRIDGED_PACKAGES = frozenset({"tls", "random", "postgresql", "keycloak"})
"""The program's packages whose real providers cannot be built here (module docstring): each
is served by a stand-in plugin (``e2e.providers.PACKAGES``)."""


def package_of(type_or_token: str) -> str:
    """``tls`` for ``tls:index/privateKey:PrivateKey`` and for ``pulumi:providers:tls``."""
    parts = type_or_token.split(":")
    if parts[:2] == ["pulumi", "providers"] and len(parts) == 3:
        return parts[2]
    return parts[0]


@contextlib.contextmanager
def language_server(program: Callable[[], Any]) -> Iterator[str]:
    """The SDK's language server for ``program`` on a free loopback port; yields its address."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    language_pb2_grpc.add_LanguageRuntimeServicer_to_server(LanguageServer(program), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.stop(60).wait()
        # A program the engine gave up on (a preview that failed in the engine) leaves its
        # coroutine suspended in a closed event loop. Collected at a random allocation, its
        # finaliser once ran inside pytest's ast.parse and broke CPython 3.11.7's AST recursion
        # check ("SystemError: AST constructor recursion depth mismatch"); collect it here.
        gc.collect()


@contextlib.contextmanager
def client_runtime(project_dir: Path, program: Callable[[], Any]) -> Iterator[None]:
    """The project's runtime set to the in-process language server, for commands that have no
    ``--client`` flag (``pulumi import``). ``--client`` does exactly this to the project it
    loads (pulumi/pulumi pkg/cmd/pulumi/operations/io.go, ``readProjectForUpdate``: runtime
    ``client`` with option ``address``), and the engine then connects to that address instead
    of launching a language plugin (pkg/engine/deployment.go, ``ProjectInfoContext``)."""
    path = project_dir / "Pulumi.yaml"
    original = path.read_text()
    with language_server(program) as address:
        document = yaml.safe_load(original)
        document["runtime"] = {"name": "client", "options": {"address": address}}
        path.write_text(yaml.safe_dump(document, sort_keys=False))
        try:
            yield
        finally:
            path.write_text(original)


@dataclass
class Result:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)

    def events(self) -> list[dict[str, Any]]:
        """`up`/`destroy --json` print the engine's events, one JSON object a line
        (pulumi/pulumi sdk/go/common/apitype/events.go, EngineEvent)."""
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]

    def summary(self) -> dict[str, int]:
        """The ``resourceChanges`` of the one ``summaryEvent`` (apitype SummaryEventData)."""
        found = [e["summaryEvent"] for e in self.events() if "summaryEvent" in e]
        if len(found) != 1:
            raise AssertionError(f"{len(found)} summary events in: {self.stdout[-2000:]}")
        return dict(found[0]["resourceChanges"])


DEBUG_COMMANDS = "PULUMI_DEBUG_COMMANDS"
"""Set on a guarded ``up`` so that it accepts ``--event-log`` (sdk/go/common/env/env.go
``DebugCommands``: it lists debugging commands and flags, and changes nothing else)."""

TAKEOVER_MARGIN_S = 1.0
"""``creationTimestamp`` has whole seconds: an object made during the command is stamped no
earlier than the second it started in."""


def takeovers(events: Sequence[Mapping[str, Any]], started: float) -> list[str]:
    """The Kubernetes objects an ``up`` created (``create``, ``create-replacement``) whose
    ``creationTimestamp`` is older than the command: a create the lane's provider ran as a
    server-side apply onto an object that was there, which the pinned provider refuses with
    AlreadyExists (``e2e/divergences.py``, ``create-takes-over``). Patch resources take objects
    over by design and are left out. The engine's events carry each step's new outputs
    (pulumi/pulumi sdk/go/common/apitype/events.go, ``StepEventStateMetadata.Outputs``)."""
    found = []
    for event in events:
        meta = (event.get("resOutputsEvent") or {}).get("metadata") or {}
        kind = str(meta.get("type", ""))
        if meta.get("op") not in ("create", "create-replacement"):
            continue
        if not kind.startswith("kubernetes:") or kind.endswith("Patch"):
            continue
        outputs = (meta.get("new") or {}).get("outputs") or {}
        stamp = (outputs.get("metadata") or {}).get("creationTimestamp")
        if not isinstance(stamp, str):
            continue
        made = datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
        if made < started - TAKEOVER_MARGIN_S:
            found.append(f"{kind} {str(meta.get('urn', '')).rsplit('::', 1)[-1]} (made {stamp})")
    return found


def _read_events(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


class CommandFailedError(AssertionError):
    pass


SKIP_CHECKPOINTS = "PULUMI_SKIP_CHECKPOINTS"
"""Set to ``true`` for a dry run only (:func:`is_dry_run`). A dry run persists nothing: the
backend gives its snapshot manager a ``DiscardPersister`` for preview and ``--preview-only``
(pulumi/pulumi v3.274.0 pkg/backend/diy/backend.go, ``kind == apitype.PreviewUpdate ||
opts.DryRun``; pkg/backend/httpstate/backend.go likewise), yet the manager still serialises the
whole snapshot after every step (pkg/backend/snapshot.go ``defaultServiceLoop`` ->
``saveSnapshot``) unless checkpoints are skipped (``NewSnapshotManager``: ``env.SkipCheckpoints``
picks ``unsafeServiceLoop``, one save at the end, discarded too; sdk/go/common/env/env.go
``SKIP_CHECKPOINTS``). On a write it would leave the state unsaved until the end, so ``up``,
``refresh``, ``destroy`` and ``import`` never get it."""

DRY_RUN_FLAG_COMMANDS = frozenset({"refresh", "destroy", "import"})
"""Commands that are dry runs with ``--preview-only`` (``preview`` always is)."""


def is_dry_run(args: Sequence[str]) -> bool:
    """``pulumi ARGS`` persists nothing: ``preview``, or refresh/destroy/import
    ``--preview-only``."""
    command = args[0] if args else ""  # the lane and the bench name the command first
    if command == "preview":
        return True
    return command in DRY_RUN_FLAG_COMMANDS and "--preview-only" in args


def checkpoint_env(
    args: Sequence[str], env: Mapping[str, str], *, skip: bool = True
) -> dict[str, str]:
    """``env`` with checkpoints skipped for a dry run (unless ``skip`` is False); a write given
    them is refused."""
    if is_dry_run(args):
        return {**env, SKIP_CHECKPOINTS: "true"} if skip else dict(env)
    if SKIP_CHECKPOINTS in env:
        raise ValueError(f"`pulumi {' '.join(args)}` writes the state: no {SKIP_CHECKPOINTS}")
    return dict(env)


def run_whole(
    command: list[str], *, cwd: Path, env: Mapping[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    """``subprocess.run(command)`` with its output captured, and when it runs out of time or
    the caller is interrupted, the CLI killed with every process under it: ``subprocess.run``'s
    timeout kills the CLI alone, and its plugins, each in a process group of its own (pulumi
    v3.274.0 ``sdk/go/common/resource/plugin/plugin.go``: ``cmdutil.RegisterProcessGroup``),
    then wait for ever (measured: 104 stand-in plugins left by a preview that timed out in the
    bench). A stand-in's fork exits with its launcher (``e2e/providers/forkserver.py``)."""
    proc = subprocess.Popen(
        command, cwd=cwd, env=dict(env), text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except BaseException:  # TimeoutExpired, KeyboardInterrupt: nothing of it outlives the run
        with contextlib.suppress(psutil.Error):
            for child in psutil.Process(proc.pid).children(recursive=True):
                with contextlib.suppress(psutil.Error):
                    child.kill()
        proc.kill()
        proc.communicate()
        raise
    return subprocess.CompletedProcess(command, proc.returncode, stdout, stderr)


@dataclass
class Engine:
    """The real CLI with its own home, backend and plugins; one per test session."""

    pulumi: Path
    plugin_dirs: list[Path]
    home: Path
    backend: Path
    passphrase: str = "e2e-local-only"
    extra_env: dict[str, str] = field(default_factory=dict)
    skip_dry_run_checkpoints: bool = True
    """False only for the engine bench's "before" column (checkpoints written on dry runs too)."""
    guard_takeovers: bool = True
    """Check every ``up`` for creates that took over an existing object (:func:`takeovers`);
    the engine bench turns it off (its event log is work an operator's ``up`` does not do)."""

    forkserver: subprocess.Popen[bytes] | None = field(default=None, init=False, repr=False)
    """The stand-ins' fork server (``e2e/providers/forkserver.py``), stopped by :meth:`close`
    or when this process exits."""

    def __post_init__(self) -> None:
        # The stand-in plugins (e2e/providers), found on PATH as the kubernetes plugin is,
        # each started as a fork of one process that has imported them all.
        self.forkserver, socket = standins.start_server()
        directory = standins.install(self.home / "standin-plugins", socket)
        self.plugin_dirs = [*self.plugin_dirs, directory]

    def close(self) -> None:
        """Stop the stand-ins' fork server (the plugins it started end with their commands)."""
        if self.forkserver is not None and self.forkserver.stdin is not None:
            self.forkserver.stdin.close()
            self.forkserver.wait(timeout=30)
            self.forkserver = None

    def env(self, project_dir: Path) -> dict[str, str]:
        path = os.pathsep.join(
            [*map(str, self.plugin_dirs), str(self.pulumi.parent), os.environ["PATH"]]
        )
        return {
            **{k: v for k, v in os.environ.items() if not k.startswith("PULUMI_")},
            "PATH": path,
            "PULUMI_HOME": str(self.home),
            "PULUMI_BACKEND_URL": f"file://{self.backend}",
            "PULUMI_CONFIG_PASSPHRASE": self.passphrase,
            "PULUMI_SKIP_UPDATE_CHECK": "true",
            "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
            "PULUMI_DISABLE_REGISTRY_RESOLVE": "true",
            "PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK": "true",
            # The ambient kubernetes plugin on PATH is what the lane built (versions.toml).
            "PULUMI_IGNORE_AMBIENT_PLUGINS": "false",
            **self.extra_env,
        }

    def run(
        self,
        args: list[str],
        *,
        cwd: Path,
        program: Callable[[], Any] | None = None,
        check: bool = True,
        env: Mapping[str, str] | None = None,
        timeout: float = 1800,
        allow_takeover: bool = False,
    ) -> Result:
        """``pulumi ARGS`` in ``cwd``; with ``program``, the program is served in-process. An
        ``up`` whose create took over an existing object fails (:func:`takeovers`) unless
        ``allow_takeover``: the test then proves the lane's provider's behaviour only."""
        command = [str(self.pulumi), *args, "--non-interactive"]
        with contextlib.ExitStack() as stack:
            log: Path | None = None
            extra: dict[str, str] = {}
            if self.guard_takeovers and not allow_takeover and args[:1] == ["up"]:
                log = Path(stack.enter_context(tempfile.TemporaryDirectory())) / "events.jsonl"
                command += ["--event-log", str(log)]
                # `--event-log` exists only with debug commands on (pulumi v3.274.0
                # pkg/cmd/pulumi/operations/up.go: registered under env.DebugCommands).
                extra[DEBUG_COMMANDS] = "true"
            started = time.time()
            if program is not None:
                address = stack.enter_context(language_server(program))
                command.append(f"--client={address}")
            proc = run_whole(
                command,
                cwd=cwd,
                env=checkpoint_env(
                    args,
                    {**self.env(cwd), **(env or {}), **extra},
                    skip=self.skip_dry_run_checkpoints,
                ),
                timeout=timeout,
            )
            taken = takeovers(_read_events(log), started) if log is not None else []
        result = Result(command, proc.returncode, proc.stdout, proc.stderr)
        if check and proc.returncode != 0:
            raise CommandFailedError(
                f"`pulumi {' '.join(args)}` exited {proc.returncode}\n"
                f"--- stdout (tail)\n{proc.stdout[-6000:]}\n"
                f"--- stderr (tail)\n{proc.stderr[-4000:]}"
            )
        if taken:
            raise CommandFailedError(
                f"`pulumi {' '.join(args)}` created over objects that existed before it started: "
                f"{'; '.join(taken)}. The lane's pulumi-kubernetes takes an existing object over; "
                "the pinned one fails such a create with AlreadyExists (e2e/divergences.py, "
                "create-takes-over)"
            )
        return result

"""A real Kubernetes control plane on loopback: kwokctl running the lane's own binaries.

``kwokctl create cluster --runtime binary`` starts etcd, kube-apiserver,
kube-controller-manager, kube-scheduler and the kwok controller as processes (no containers),
from the paths ``e2e/build.py`` built; kwok simulates the nodes and the pods on them, so the
scheduler binds pods, ReplicaSets fill and Deployments become Available. Every component binds
127.0.0.1 on a free port (kwokctl's default bind address is 0.0.0.0:
sigs.k8s.io/kwok pkg/apis/config/v1alpha1, ``bindAddress`` default). Admission and RBAC are on,
and Pod Security admission enforces ``restricted`` by default in every namespace but
kube-system (an ``AdmissionConfiguration`` with ``PodSecurityConfiguration`` defaults), so every
tenant pod is admitted or refused at the level the gateways claim.

The controllers that cannot run here (the OpenShift router, a Gateway API implementation) are
stood in for by ``e2e.routestatus.StatusStandIn``: it sets the status those controllers set,
admitting only what they admit, and nothing else.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ADMISSION = {
    "apiVersion": "apiserver.config.k8s.io/v1",
    "kind": "AdmissionConfiguration",
    "plugins": [
        {
            "name": "PodSecurity",
            "configuration": {
                "apiVersion": "pod-security.admission.config.k8s.io/v1",
                "kind": "PodSecurityConfiguration",
                "defaults": {
                    "enforce": "restricted",
                    "enforce-version": "latest",
                    "audit": "restricted",
                    "audit-version": "latest",
                    "warn": "restricted",
                    "warn-version": "latest",
                },
                "exemptions": {
                    "usernames": [],
                    "runtimeClasses": [],
                    "namespaces": ["kube-system"],
                },
            },
        }
    ],
}


_EPHEMERAL = Path("/proc/sys/net/ipv4/ip_local_port_range")
_LOWEST_PORT = 10_000
_given: set[int] = set()


def free_port() -> int:
    """A loopback port free now, below the kernel's ephemeral range, not given before.

    A port that ``bind(0)`` hands out lies in the ephemeral range (32768-60999 here), which is
    also where the kernel picks the source port of every outgoing connection: between this
    call and the server's own bind, another connection could take it (seen on 2026-12-04: the
    controller manager's "bind: address already in use", so no Deployment ever became ready
    and every deploy waited out its timeout). No source port is taken below the range."""
    try:
        low = int(_EPHEMERAL.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32_768
    choices = random.SystemRandom()
    for _ in range(500):
        port = choices.randrange(_LOWEST_PORT, max(low, _LOWEST_PORT + 1_000))
        if port in _given:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _given.add(port)
        return port
    raise RuntimeError(f"no free loopback port between {_LOWEST_PORT} and {low}")


class KubectlError(AssertionError):
    pass


@dataclass
class Cluster:
    """One kwokctl cluster; ``kubectl`` runs against it."""

    name: str
    workdir: Path
    kubeconfig: Path
    kubectl_bin: Path
    kwokctl_bin: Path
    env: dict[str, str] = field(default_factory=dict)

    def run(self, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.kubectl_bin), f"--kubeconfig={self.kubeconfig}", *args],
            input=input,
            text=True,
            capture_output=True,
            check=False,
            timeout=120,
        )

    def kubectl(self, *args: str, input: str | None = None, check: bool = True) -> str:
        proc = self.run(*args, input=input)
        if check and proc.returncode != 0:
            raise KubectlError(
                f"kubectl {' '.join(args)}: exit {proc.returncode}: {proc.stderr.strip()}"
            )
        return proc.stdout

    def get(self, kind: str, name: str | None = None, namespace: str | None = None) -> Any:
        args = ["get", kind, "-o", "json"]
        if name:
            args.insert(2, name)
        args += ["-n", namespace] if namespace else (["-A"] if not name else [])
        return json.loads(self.kubectl(*args))

    def apply(self, documents: list[Mapping[str, Any]] | str) -> str:
        text = documents if isinstance(documents, str) else yaml.safe_dump_all(list(documents))
        return self.kubectl("apply", "--server-side", "--force-conflicts", "-f", "-", input=text)

    def context(self) -> str:
        config = yaml.safe_load(self.kubeconfig.read_text())
        return str(config["current-context"])

    def stop(self) -> None:
        subprocess.run(
            [
                str(self.kwokctl_bin),
                "delete",
                "cluster",
                "--name",
                self.name,
                f"--kubeconfig={self.kubeconfig}",
            ],
            env=self.env,
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )


def kwokctl_config(
    paths: Mapping[str, Mapping[str, Any]], admission: Path, kube_version: str
) -> dict[str, Any]:
    kube = paths["kubernetes"]
    return {
        "apiVersion": "config.kwok.x-k8s.io/v1alpha1",
        "kind": "KwokctlConfiguration",
        "options": {
            "runtime": "binary",
            "kubeVersion": kube_version,
            "bindAddress": "127.0.0.1",
            "securePort": True,
            "kubeAuthorization": True,
            "kubeAdmission": True,
            "kubeApiserverPort": free_port(),
            "etcdPort": free_port(),
            "etcdPeerPort": free_port(),
            "kubeControllerManagerPort": free_port(),
            "kubeSchedulerPort": free_port(),
            "kwokControllerPort": free_port(),
            "kubeApiserverBinary": kube["kube-apiserver"],
            "kubeControllerManagerBinary": kube["kube-controller-manager"],
            "kubeSchedulerBinary": kube["kube-scheduler"],
            "kubectlBinary": kube["kubectl"],
            "etcdBinary": paths["etcd"]["etcd"],
            "kwokControllerBinary": paths["kwok"]["kwok"],
        },
        "componentsPatches": [
            {
                "name": "kube-apiserver",
                "extraArgs": [{"key": "admission-control-config-file", "value": str(admission)}],
            }
        ],
    }


def terminate_as_interrupt() -> None:
    """Make SIGTERM (a CI job cancelled, ``timeout``, ``kill``) unwind like Ctrl-C: Python's
    default for SIGTERM ends the process at once, skipping every ``finally`` and context
    manager, so the servers started here (each in a process group of its own) were left
    running. Measured: a terminated run left its etcd, kube-apiserver, controller manager,
    scheduler and kwok running. Call it once, in the main thread, before servers start."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, interrupt)


@contextlib.contextmanager
def running_cluster(
    paths: Mapping[str, Mapping[str, Any]],
    workdir: Path,
    *,
    name: str = "e2e",
    nodes: int = 2,
    kube_version: str,
    log: Any = print,
) -> Iterator[Cluster]:
    """Create a kwokctl cluster in ``workdir`` (its own KWOK_WORKDIR), yield it, delete it."""
    workdir.mkdir(parents=True, exist_ok=True)
    admission = workdir / "admission.yaml"
    admission.write_text(yaml.safe_dump(ADMISSION))
    config = workdir / "kwokctl.yaml"
    config.write_text(yaml.safe_dump(kwokctl_config(paths, admission, kube_version)))
    kubeconfig = workdir / "kubeconfig"
    kube_bin = Path(paths["kubernetes"]["kubectl"]).parent
    env = {
        **os.environ,
        "KWOK_WORKDIR": str(workdir / "kwok"),
        # kwokctl looks for kubectl on PATH first (runtime/binary cluster_operation.go).
        "PATH": os.pathsep.join([str(kube_bin), os.environ["PATH"]]),
    }
    cluster = Cluster(
        name=name,
        workdir=workdir,
        kubeconfig=kubeconfig,
        kubectl_bin=Path(paths["kubernetes"]["kubectl"]),
        kwokctl_bin=Path(paths["kwok"]["kwokctl"]),
        env=env,
    )
    started = time.monotonic()
    proc = subprocess.run(
        [
            str(cluster.kwokctl_bin),
            "create",
            "cluster",
            "--name",
            name,
            "--config",
            str(config),
            f"--kubeconfig={kubeconfig}",
            "--wait=120s",
        ],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    try:
        if proc.returncode != 0:
            raise RuntimeError(
                f"kwokctl create cluster exited {proc.returncode}:\n"
                f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
            )
        subprocess.run(
            [str(cluster.kwokctl_bin), "scale", "node", "--name", name, "--replicas", str(nodes)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        log(
            f"[e2e] cluster {name} up in {time.monotonic() - started:.0f} s "
            f"({cluster.kubectl('version', '-o', 'json').count('gitVersion')} versions reported)"
        )
        yield cluster
    finally:
        cluster.stop()
        if os.environ.get("HYPERSHELL_E2E_KEEP") != "1":
            shutil.rmtree(workdir / "kwok", ignore_errors=True)

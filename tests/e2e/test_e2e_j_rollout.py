"""A release rolled out wave after wave on the real engine (``gatewayctl rollout``'s loop,
gatewayctl/status/progression.py, driving the lane's Pulumi CLI): ``e2e-route`` moves from
openshell-0.0.109 to openshell-0.0.110 in three waves of its plan (``deploy/rollout.yaml``).

The second wave's gateway is made unavailable right after its ``up``, through kwok: its nodes
cordoned and its pods replaced, the new pod cannot be scheduled, and kwok runs only pods bound
to its nodes. The rollout stops there: wave 1 runs the new release, wave 3 the old one. After
the fix (the nodes schedulable, the pod running) the same command goes on from wave 2 and
completes.

Runs after the other stacks' tests (the file name sorts last but teardown): it moves the
stack's release.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from e2e.cluster import Cluster
from e2e.engine import Engine
from e2e.project import E2EProject
from gatewayctl.inputs import rollout
from gatewayctl.resolve import waves
from gatewayctl.resolve.stack import load_stack
from gatewayctl.status import progression
from tests.e2e.lane import Deployed, export, figure, pulumi, write_json

STACK = "e2e-route"
CLUSTERS = "hypershell-gateways:clusters"
BEFORE, AFTER = "openshell-0.0.109", "openshell-0.0.110"
PLAN = {
    "stacks": {
        STACK: {
            "healthDeadline": "5m",
            "waves": [
                {"name": "canary", "gateways": ["research"]},
                {"name": "second", "gateways": ["team-a"]},
                # canary pins its own release (it does not roll) and rides along.
                {"name": "third", "gateways": ["batch-jobs", "canary"]},
            ],
        }
    }
}
BROKEN = "team-a"


@dataclass
class LaneCli:
    """:class:`gatewayctl.status.progression.Engine` on the lane's CLI (the program in
    process, ``pulumi ... --client``), with ``after_up`` called after each ``up``."""

    engine: Engine
    project: E2EProject
    env: dict[str, str]
    out: Path
    after_up: Callable[[Sequence[str]], None]
    ups: list[list[str]] = field(default_factory=list)
    refreshed: list[list[str]] = field(default_factory=list)

    def observe(self, refresh: Sequence[str]) -> Sequence[Path]:
        preview = pulumi(self.engine, self.project, self.env, "preview", "--json", check=False)
        assert preview.returncode == 0, preview.stderr[-3000:]
        (self.out / "preview.json").write_text(preview.stdout)
        write_json(self.out / "state.json", export(self.engine, self.project, self.env))
        if not refresh:
            return (self.out / "preview.json", self.out / "state.json")
        targets = [f"--target={u}" for u in refresh]
        live = pulumi(
            self.engine,
            self.project,
            self.env,
            "refresh",
            "--preview-only",
            "--json",
            *targets,
            program=False,
            check=False,
        )
        assert live.returncode == 0, live.stderr[-3000:]
        (self.out / "refresh.json").write_text(live.stdout)
        self.refreshed.append(list(refresh))
        return (self.out / "preview.json", self.out / "state.json", self.out / "refresh.json")

    def up(self, urns: Sequence[str]) -> None:
        targets = [f"--target={u}" for u in urns]
        pulumi(self.engine, self.project, self.env, "up", "--yes", "--skip-preview", *targets)
        self.ups.append(list(urns))
        self.after_up(urns)


def _images(cluster: Cluster) -> dict[str, str]:
    found = {}
    for name in ("research", "team-a", "batch-jobs", "canary"):
        deployment = cluster.get("deployment", "openshell-gateway", namespace=f"openshell-{name}")
        containers = deployment["spec"]["template"]["spec"]["containers"]
        found[name] = next(c["image"] for c in containers if c["name"] == "openshell-gateway")
    return found


def _release_of(image: str) -> str:
    return AFTER if ":0.0.110" in image else BEFORE if ":0.0.109" in image else image


def _pods(cluster: Cluster, namespace: str) -> list[dict[str, Any]]:
    items = cluster.get("pods", namespace=namespace)["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


def _nodes(cluster: Cluster) -> list[str]:
    return [n["metadata"]["name"] for n in cluster.get("nodes")["items"]]


def break_pods(cluster: Cluster, namespace: str) -> int:
    """The gateway unavailable: kwok's nodes cordoned and its pods replaced, so that the new
    ones cannot be scheduled (kwok runs only pods bound to its nodes)."""
    for node in _nodes(cluster):
        cluster.kubectl("cordon", node)
    pods = _pods(cluster, namespace)
    for pod in pods:
        cluster.kubectl("delete", "pod", pod["metadata"]["name"], "-n", namespace, "--wait=false")
    # The ReplicaSet and deployment controllers count it unavailable (a minute at most).
    for _ in range(60):
        deployment = cluster.get("deployment", "openshell-gateway", namespace=namespace)
        if not deployment["status"].get("availableReplicas"):
            return len(pods)
        time.sleep(1)
    raise AssertionError(f"still available: {deployment['status']}")


def test_a_release_rolls_out_in_waves_and_stops_at_a_degraded_one(
    deployed: dict[str, Deployed],
    engine: Engine,
    cluster: Cluster,
    kube_env: dict[str, str],
    tmp_path: Path,
) -> None:
    project = deployed[STACK].project
    assert {_release_of(i) for n, i in _images(cluster).items() if n != "canary"} == {BEFORE}
    config = yaml.safe_load(project.config_file.read_text())
    for settings in config["config"][CLUSTERS].values():
        settings["release"] = AFTER
    project.config_file.write_text(yaml.safe_dump(config, sort_keys=False))
    (project.root / "deploy").mkdir(exist_ok=True)
    (project.root / rollout.SETTINGS).write_text(yaml.safe_dump(PLAN, sort_keys=False))

    loaded = load_stack(project.root, STACK)
    planned = waves.plan(loaded, rollout.read(project.root)[STACK])
    assert [(w.number, w.gateways) for w in planned] == [
        (0, ()),
        (1, ("research",)),
        (2, ("team-a",)),
        (3, ("batch-jobs", "canary")),
    ]
    declared = [g.name for g in loaded.gateways]
    broken: list[int] = []

    def after_up(urns: Sequence[str]) -> None:
        if any(u.endswith(f"::{BROKEN}-workload-deploy") for u in urns) and not broken:
            broken.append(break_pods(cluster, f"openshell-{BROKEN}"))

    lane = LaneCli(engine, project, kube_env, tmp_path, after_up)
    log: list[str] = []
    try:
        first = progression.run(STACK, planned, lane, declared, log=log.append, poll=3)
    finally:
        if broken:  # whatever happened: the nodes schedulable again for the tests after this
            for node in _nodes(cluster):
                cluster.kubectl("uncordon", node)

    stop = first.stopped
    assert stop is not None, log
    assert broken and broken[0] >= 1
    assert (stop.wave.number, stop.why.split(":")[0]) == (2, f"{BROKEN} Degraded"), stop.why
    # The refresh's own words (gatewayctl.status.health.UNHEALTHY): the step kept its state.
    assert "the refresh found it unhealthy:" in stop.why, stop.why
    assert "[MinimumReplicasUnavailable]" in stop.why, stop.why
    assert [o.result for o in first.waves] == ["done", "done", "stopped", "untouched"]
    assert len(lane.ups) == 2  # waves 1 and 2: a release moves no shared resource
    images = {n: _release_of(i) for n, i in _images(cluster).items()}
    assert images == {"research": AFTER, "team-a": AFTER, "batch-jobs": BEFORE, "canary": AFTER}

    # The fix (the nodes schedulable again, above): the pending pod runs.
    cluster.kubectl(
        "rollout",
        "status",
        "deployment/openshell-gateway",
        "-n",
        f"openshell-{BROKEN}",
        "--timeout=120s",
    )
    second = progression.run(STACK, planned, lane, declared, log=log.append, poll=3)
    assert second.stopped is None, (second.summary(), log)
    assert [o.updated > 0 for o in second.waves] == [False, False, False, True]
    images = {n: _release_of(i) for n, i in _images(cluster).items()}
    assert images == {n: AFTER for n in images}
    figure(
        f"rollout: {len(planned) - 1} waves, stopped at wave {stop.wave.number}"
        f" ({stop.why.split(':')[0]}), wave 3 untouched; resumed: all Healthy"
    )

"""A release change rolled back on the real engine (docs/history.md, "Rolling back"): the
lane's ``e2e-route`` project (a git repository, e2e/project.py) has its clusters' binding
moved to the other release, committed and brought up; ``gatewayctl history --record`` records
both states; ``gatewayctl rollback`` to the earlier commit the history names makes a branch
that moves the binding back, and its ``up`` puts the previous image back into each
Deployment on the real API server.

After test_e2e_j_rollout.py the stack runs openshell-0.0.110 (alone, 0.0.109): the change goes
to the other one and the rollback returns to the release it found, so the stack is left as the
files after this one expect it (only the teardown follows).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import yaml

from e2e.cluster import Cluster
from e2e.engine import Engine
from tests.e2e.lane import Deployed, figure, pulumi
from tests.hostile_helpers import run_cli

STACK = "e2e-route"
CLUSTERS = "hypershell-gateways:clusters"
RELEASES = ("openshell-0.0.109", "openshell-0.0.110")
GATEWAYS = ("batch-jobs", "canary", "research", "team-a")
PINNED = "canary"  # pins its own release: neither change moves it


def _images(cluster: Cluster) -> dict[str, str]:
    found = {}
    for name in GATEWAYS:
        deployment = cluster.get("deployment", "openshell-gateway", namespace=f"openshell-{name}")
        containers = deployment["spec"]["template"]["spec"]["containers"]
        found[name] = next(c["image"] for c in containers if c["name"] == "openshell-gateway")
    return found


def test_a_rollback_branch_restores_the_previous_image(
    deployed: dict[str, Deployed],
    engine: Engine,
    cluster: Cluster,
    kube_env: dict[str, str],
    tmp_path: Path,
) -> None:
    project = deployed[STACK].project
    root = project.root

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid", *args],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout

    def record(outcome: str) -> None:
        out = run_cli(
            "--root", str(root), "history", STACK, "--record",
            str(tmp_path / "history" / f"{STACK}.jsonl"), "--outcome", outcome,
        )  # fmt: skip
        assert (out.code, out.err) == (0, ""), out.err

    # What the stack runs now (the earlier files' changes included), committed: the point to
    # return to, recorded as the up that made it.
    (tmp_path / "history").mkdir()
    git("add", "-A")
    git("commit", "-q", "--allow-empty", "-m", "as deployed")
    record("succeeded")
    found = _images(cluster)
    config = yaml.safe_load(project.config_file.read_text())
    (bound,) = {settings["release"] for settings in config["config"][CLUSTERS].values()}
    other = RELEASES[1 - RELEASES.index(bound)]

    # The release change, as a merged promotion and its up.
    for settings in config["config"][CLUSTERS].values():
        settings["release"] = other
    project.config_file.write_text(yaml.safe_dump(config, sort_keys=False))
    git("commit", "-q", "-am", f"promote {other}")
    pulumi(engine, project, kube_env, "up", "--yes", "--skip-preview")
    record("succeeded")
    moved = _images(cluster)
    assert moved[PINNED] == found[PINNED]
    for name in set(GATEWAYS) - {PINNED}:
        assert moved[name] != found[name] and other.removeprefix("openshell-") in moved[name]

    # The history names the earlier up's commit; rollback makes the branch back to it.
    shown = run_cli(
        "--root", str(root), "history", STACK, "--records", str(tmp_path), "-o", "json"
    )  # fmt: skip
    ups = json.loads(shown.out)["ups"]
    assert [u["commit"] for u in ups] == [
        git("rev-parse", "HEAD").strip(),
        git("rev-parse", "HEAD~1").strip(),
    ]
    assert {g["release"] for g in ups[0]["gateways"] if g["name"] != PINNED} == {other}
    target = ups[1]["commit"]
    head = git("rev-parse", "HEAD").strip()
    out = run_cli("--root", str(root), "rollback", STACK, "--to", target, "--branch", "rollback")
    assert (out.code, out.err) == (0, ""), out.err
    assert out.out.splitlines()[1] == (
        f"  {CLUSTERS}.roks-us-east.release: {other} → {bound} (moved back)"
    )
    assert git("rev-parse", "HEAD").strip() == head  # the checkout untouched
    assert git("status", "--porcelain") == ""
    assert git("diff", "--name-only", "HEAD", "rollback").split() == [project.config_file.name]

    # The pull request merged: its up puts the previous image back on the API server.
    git("checkout", "-q", "rollback")
    pulumi(engine, project, kube_env, "up", "--yes", "--skip-preview")
    assert _images(cluster) == found
    figure(
        f"rollback: {STACK} {bound} → {other} → {bound} by `gatewayctl rollback --to"
        f" {target[:12]}`; {len(GATEWAYS) - 1} Deployments back on their previous image"
    )

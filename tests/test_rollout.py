"""Rollout waves: the plan (deploy/rollout.yaml), the waves it makes of a stack, and the loop
that applies them (gatewayctl/status/progression.py) against a scripted engine whose files
are status's own fixtures; the real engine runs it in tests/e2e/test_e2e_j_rollout.py."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

from gatewayctl.deploy import pulumicli
from gatewayctl.diff import diff_command, report
from gatewayctl.diff.compare import GatewayChange, StackDiff
from gatewayctl.diff.operations import Operation
from gatewayctl.errors import InvalidInputError
from gatewayctl.inputs import rollout
from gatewayctl.resolve import waves
from gatewayctl.resolve.stack import load_stack
from gatewayctl.status import health, progression
from tests.builders import copy_project
from tests.hostile_helpers import run_cli
from tests.status_builders import (
    STACK_URN,
    _digest_state,
    by_name,
    deployment_object,
    digest,
    export,
    gateway_resources,
    refresh_step,
    stack_resources,
)
from tests.support import ROOT

IBM = ("batch-jobs", "canary", "research", "team-a")
BROKEN_WARNING = (
    "warning: Refreshed resource is in an unhealthy state:\n* Resource 'openshell-gateway' was"
    " created but failed to initialize\n* [MinimumReplicasUnavailable] Deployment does not have"
    " minimum availability.\n"
)


def plan_of(**stack: Any) -> dict[str, Any]:
    return {"stacks": {"ibm": stack}}


def write_plan(root: Path, document: Any) -> None:
    (root / "deploy").mkdir(exist_ok=True)
    (root / rollout.SETTINGS).write_text(yaml.safe_dump(document, sort_keys=False))


# --- the plan ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("document", "field", "message"),
    [
        ({"stack": {}}, "stack", "unknown key; expected one of stacks, promotion"),
        (plan_of(waves=[]), "stacks.ibm.waves", "expected a list of waves, the canary first"),
        (
            plan_of(waves=[{"name": "Canary", "gateways": ["canary"]}]),
            "stacks.ibm.waves.0.name",
            "'Canary' is no wave name (a DNS label: canary)",
        ),
        (
            plan_of(waves=[{"name": "canary"}]),
            "stacks.ibm.waves.0",
            "choose its gateways: gateways, clusters or labels",
        ),
        (
            plan_of(waves=[{"name": "a", "gateways": ["canary"], "maxGateways": 0}]),
            "stacks.ibm.waves.0.maxGateways",
            "expected a whole number from 1 to 10000",
        ),
        (
            plan_of(healthDeadline="soon", waves=[{"name": "a", "clusters": ["roks-us-east"]}]),
            "stacks.ibm.healthDeadline",
            "expected a duration such as 10m, 1h30m (at most 31d)",
        ),
        (
            plan_of(waves=[{"name": "a", "gateways": ["x"]}, {"name": "a", "gateways": ["y"]}]),
            "stacks.ibm.waves.1.name",
            "wave 'a' is named twice",
        ),
        (
            plan_of(waves=[{"name": "a", "labels": {"tier": 1}}]),
            "stacks.ibm.waves.0.labels",
            "expected a mapping: label: value",
        ),
    ],
)
def test_a_bad_plan_is_refused_naming_its_field(
    tmp_path: Path, document: Any, field: str, message: str
) -> None:
    root = copy_project(tmp_path)
    write_plan(root, document)
    with pytest.raises(InvalidInputError) as error:
        rollout.read(root)
    assert [(p.path, p.field, p.message) for p in error.value.problems] == [
        (rollout.SETTINGS, field, message)
    ]


def test_validate_names_a_gateway_the_stack_lacks_with_its_line(tmp_path: Path) -> None:
    root = copy_project(tmp_path)
    write_plan(root, plan_of(waves=[{"name": "canary", "gateways": ["canary", "team-b"]}]))
    out = run_cli("--root", str(root), "validate", "ibm")
    assert out.code == 2
    assert out.err.splitlines()[0] == (
        f"error: {rollout.SETTINGS}:7:9: stacks.ibm.waves.0.gateways.1: stack ibm has no"
        " gateway 'team-b'"
    )


# --- the waves -----------------------------------------------------------------------------------


def test_waves_follow_the_plan_caps_and_the_rest(tmp_path: Path) -> None:
    root = copy_project(tmp_path)
    write_plan(
        root,
        plan_of(
            healthDeadline="20m",
            maxGateways=1,
            waves=[
                {"name": "canary", "gateways": ["canary"]},
                {"name": "nobody", "gateways": ["canary"]},  # taken already: left out
                {"name": "east", "clusters": ["roks-us-east"], "gateways": ["research", "team-a"]},
            ],
        ),
    )
    planned = waves.plan(load_stack(root, "ibm"), rollout.read(root)["ibm"])
    assert [(w.number, w.name, w.gateways) for w in planned] == [
        (0, "shared", ()),
        (1, "canary", ("canary",)),
        (2, "east", ("research", "team-a")),
        (3, "rest", ("batch-jobs",)),
    ]
    assert {w.deadline for w in planned} == {timedelta(minutes=20)}
    write_plan(
        root, plan_of(waves=[{"name": "all", "clusters": ["roks-us-east"], "maxGateways": 3}])
    )
    planned = waves.plan(load_stack(root, "ibm"), rollout.read(root)["ibm"])
    assert [(w.name, w.gateways) for w in planned[1:]] == [
        ("all 1/2", ("batch-jobs", "canary", "research")),
        ("all 2/2", ("team-a",)),
    ]
    assert waves.lines(planned, {"team-a"}) == [
        "wave 1 (all 1/2): unchanged",
        "wave 2 (all 2/2): `team-a`",
    ]
    assert waves.lines(planned, {None, "canary"})[0] == (
        "wave 0 (shared): the stack's shared resources, first"
    )


def test_waves_choose_by_label_and_a_pattern_names_no_typos(tmp_path: Path) -> None:
    root = copy_project(tmp_path)
    path = root / "gateways" / "ibm" / "research.yaml"
    document = yaml.safe_load(path.read_text())
    document["metadata"]["labels"] = {"tier": "gold"}
    path.write_text(yaml.safe_dump(document))
    write_plan(
        root,
        {
            "stacks": {
                "ib*": {
                    "waves": [
                        {"name": "gold", "labels": {"tier": "gold"}},
                        {"name": "x", "gateways": ["elsewhere"]},
                    ]
                }
            }
        },
    )
    planned = waves.plan(load_stack(root, "ibm"), rollout.read(root)["ibm"])
    assert [(w.name, w.gateways) for w in planned[1:]] == [
        ("gold", ("research",)),
        ("rest", ("batch-jobs", "canary", "team-a")),
    ]


def test_a_stack_without_a_plan_is_one_wave_after_the_shared_one() -> None:
    planned = waves.plan(load_stack(ROOT, "ibm"), None)
    assert [(w.number, w.gateways) for w in planned] == [(0, ()), (1, IBM)]
    out = run_cli("--root", str(ROOT), "rollout", "ibm", "--plan", "--format", "json")
    assert out.code == 0
    assert [(w["wave"], w["name"], w["gateways"]) for w in json.loads(out.out)["waves"]] == [
        (0, "shared", []),
        (1, "canary", ["canary"]),
        (2, "roks-us-east 1/2", ["batch-jobs", "research"]),
        (3, "roks-us-east 2/2", ["team-a"]),
    ]
    assert run_cli("--root", str(ROOT), "rollout", "ibm", "--poll", "0").code == 2


# --- the loop ------------------------------------------------------------------------------------


def test_pods_unavailable_after_a_finished_rollout_are_degraded() -> None:
    # As the lane's second wave (kwok's pod status set not ready): the deployment controller
    # never measures a finished rollout against its deadline again, so it is not Progressing.
    live = deployment_object("ns", replicas=1, available=0)
    finished = "0/1 available after the rollout finished (NewReplicaSetAvailable)"
    assert health.deployment(live) == ("Degraded", finished)
    live = deployment_object(
        "ns", replicas=2, available=1, progressing=("True", "ReplicaSetUpdated")
    )
    assert health.deployment(live) == (
        "Progressing",
        "rollout under way: 1/2 available, 2/2 updated",
    )


class Scripted:
    """An engine over status's fixtures: each gateway's Deployment is at the old image until
    an ``up`` targets it; ``health`` says how its Deployment reads after that."""

    def __init__(self, out: Path, health: dict[str, str] | None = None) -> None:
        self.out = out
        self.health = health or {}
        self.applied: set[str] = set()
        self.shared_pending = False
        self.sticky: set[str] = set()
        self.ups: list[list[str]] = []
        self.refreshed: list[list[str]] = []

    def _deployment(self, name: str) -> dict[str, Any]:
        kind = self.health.get(name, "ok") if name in self.applied else "ok"
        if kind == "slow":
            return deployment_object(
                f"openshell-{name}", available=0, progressing=("True", "ReplicaSetUpdated")
            )
        return deployment_object(f"openshell-{name}")

    def resources(self) -> list[dict[str, Any]]:
        found = stack_resources({g: None for g in IBM})
        for name in IBM:
            found += gateway_resources(name, deployment=self._deployment(name))
        return found

    def observe(self, refresh: Sequence[str]) -> Sequence[Path]:
        resources = self.resources()
        steps: list[dict[str, Any]] = [{"op": "same", "urn": STACK_URN}]
        pending = [f"{g}-workload-deploy" for g in IBM if g not in self.applied]
        pending += ["roks-us-east-k8s"] if self.shared_pending else []
        for name in pending:
            entry = by_name(resources, name)
            state = _digest_state(entry)
            step = {"op": "update", "urn": entry["urn"], "oldState": state, "newState": state}
            steps.append(step | {"diffReasons": ["spec"]})
        (self.out / "preview.json").write_text(json.dumps(digest(steps)))
        (self.out / "state.json").write_text(json.dumps(export(resources)))
        files = [self.out / "preview.json", self.out / "state.json"]
        if refresh:
            self.refreshed.append(list(refresh))
            live = digest([refresh_step(r) for r in resources if r["urn"] in refresh])
            # As the engine reports a Deployment below its minimum availability: a warning,
            # the step unchanged (gatewayctl.status.health.UNHEALTHY).
            live["diagnostics"] += [
                {"urn": u, "severity": "warning", "message": BROKEN_WARNING}
                for g, kind in self.health.items()
                if kind == "broken" and g in self.applied
                for u in refresh
                if u.endswith(f"::{g}-workload-deploy")
            ]
            (self.out / "refresh.json").write_text(json.dumps(live))
            files.append(self.out / "refresh.json")
        return files

    def up(self, urns: Sequence[str]) -> None:
        self.ups.append(list(urns))
        for name in IBM:
            if name not in self.sticky and any(
                u.endswith(f"::{name}-workload-deploy") for u in urns
            ):
                self.applied.add(name)
        if any(u.endswith("::roks-us-east-k8s") for u in urns):
            self.shared_pending = False


def three_waves() -> tuple[waves.Wave, ...]:
    groups = [(), ("research",), ("team-a",), ("batch-jobs", "canary")]
    names = ["shared", "canary", "second", "third"]
    return tuple(
        waves.Wave(number=i, name=n, gateways=g, deadline=timedelta(minutes=5))
        for i, (n, g) in enumerate(zip(names, groups, strict=True))
    )


def test_a_degraded_wave_stops_the_rollout_and_a_rerun_resumes_there(tmp_path: Path) -> None:
    engine = Scripted(tmp_path, {"team-a": "broken"})
    log: list[str] = []
    first = progression.run("ibm", three_waves(), engine, IBM, log=log.append, sleep=lambda _: None)
    assert first.summary() == (
        "ibm: 3 waves, stopped at wave 2 (team-a Degraded: Deployment team-a-workload-deploy:"
        " the refresh found it unhealthy: Resource 'openshell-gateway' was created but failed"
        " to initialize; [MinimumReplicasUnavailable] Deployment does not have minimum"
        " availability.), wave 3 untouched"
    )
    assert [o.result for o in first.waves] == ["done", "done", "stopped", "untouched"]
    # Each up targets exactly the wave's changed resources; the third's never ran.
    assert [[u.rsplit("::", 1)[1] for u in urns] for urns in engine.ups] == [
        ["research-workload-deploy"],
        ["team-a-workload-deploy"],
    ]
    assert engine.applied == {"research", "team-a"}
    # Health read live: the wave's own resources refreshed, nobody else's.
    assert all(
        any("research" in u for u in urns) != any("team-a" in u for u in urns)
        for urns in engine.refreshed
    )
    engine.health = {}  # the fix
    second = progression.run("ibm", three_waves(), engine, IBM, sleep=lambda _: None)
    assert second.summary() == "ibm: 3 waves, all Healthy"
    assert [o.updated for o in second.waves] == [0, 0, 0, 2]  # batch-jobs and canary
    assert engine.applied == set(IBM)


def test_a_wave_not_healthy_by_its_deadline_stops_it(tmp_path: Path) -> None:
    engine = Scripted(tmp_path, {"research": "slow"})
    ticks = iter(range(0, 10_000, 120))
    slept: list[float] = []
    outcome = progression.run(
        "ibm", three_waves(), engine, IBM, clock=lambda: next(ticks), sleep=slept.append, poll=7
    )
    stop = outcome.stopped
    assert stop is not None and stop.wave.number == 1
    assert stop.why == (
        "research Progressing: Deployment research-workload-deploy: rollout under way: 0/1"
        " available, 1/1 updated after its health deadline of 0:05:00"
    )
    assert slept and set(slept) == {7}
    assert [o.result for o in outcome.waves[2:]] == ["untouched", "untouched"]


def test_shared_resources_go_first_and_a_change_that_never_lands_stops(tmp_path: Path) -> None:
    engine = Scripted(tmp_path)
    engine.shared_pending = True
    engine.sticky = {"team-a"}
    outcome = progression.run("ibm", three_waves(), engine, IBM, sleep=lambda _: None)
    assert [u.rsplit("::", 1)[1] for u in engine.ups[0]] == ["roks-us-east-k8s"]
    stop = outcome.stopped
    assert stop is not None and stop.wave.number == 2
    assert stop.why.startswith("still out of sync after its update: urn:pulumi:ibm::")
    assert stop.why.endswith("::team-a-workload-deploy")


# --- the pull request's diff ---------------------------------------------------------------------


def test_the_diff_report_shows_the_waves_a_change_goes_through(tmp_path: Path) -> None:
    root = copy_project(tmp_path)
    write_plan(root, {"stacks": {"aws": {"waves": [{"name": "canary", "gateways": ["audit"]}]}}})
    change = GatewayChange(name="search", status="changed", fields=("spec",))
    shared = Operation(
        type="pulumi:providers:kubernetes", name="k8s", gateway=None, op="update", because=()
    )
    diffs = [
        StackDiff(
            stack=s,
            base_note=None,
            head_note=None,
            gateways=(change,),
            objects=(),
            resources=(),
            operations=(shared,),
        )
        for s in ("aws", "ibm")
    ]
    prepared = {s: SimpleNamespace(loaded=load_stack(root, s)) for s in ("aws", "ibm")}
    # A stand-in for Prepared: _with_waves reads only its loaded stack.
    aws, ibm = diff_command._with_waves(root, prepared, diffs)  # type: ignore[arg-type]
    assert aws.waves == (
        "wave 0 (shared): the stack's shared resources, first",
        "wave 1 (canary): unchanged",
        "wave 2 (rest): `search`",
    )
    assert ibm.waves == ()  # the plan does not name it: one wave, nothing to show
    text = report.build_report([aws], base_label="main", command="diff", limit=0)
    assert (
        "**Rollout** (deploy/rollout.yaml), wave after wave, each Healthy first:\n\n"
        "- wave 0 (shared): the stack's shared resources, first\n"
        "- wave 1 (canary): unchanged\n"
        "- wave 2 (rest): `search`\n"
    ) in text
    assert "**Rollout**" not in report.build_report(
        [ibm], base_label="main", command="diff", limit=0
    )


def test_the_pulumi_cli_engine_runs_what_the_rollout_asks(tmp_path: Path) -> None:
    calls: list[tuple[list[str], str | None]] = []

    def run(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        calls.append((command, kwargs["env"].get("PULUMI_SKIP_CHECKPOINTS")))
        if "stdout" in kwargs:
            kwargs["stdout"].write("{}")
        failed = command[1] == "up" and "bad" in command
        return subprocess.CompletedProcess(command, 3 if failed else 0, "", "boom: no such URN")

    cli = pulumicli.PulumiCli(
        stack="acme/aws",
        cwd=tmp_path,
        workdir=tmp_path / "w",
        up_args=["--policy-pack", "policy"],
        run=run,
    )
    assert [p.name for p in cli.observe(["u1"])] == ["preview.json", "state.json", "refresh.json"]
    cli.up(["u1", "u2"])
    tail = ["--stack", "acme/aws", "--non-interactive"]
    assert calls == [
        (["pulumi", "preview", "--json", *tail], "true"),
        (["pulumi", "stack", "export", *tail], None),
        (["pulumi", "refresh", "--preview-only", "--json", "--target", "u1", *tail], "true"),
        (
            [
                "pulumi",
                "up",
                "--yes",
                "--skip-preview",
                "--policy-pack",
                "policy",
                "--target",
                "u1",
                "--target",
                "u2",
                *tail,
            ],
            None,
        ),
    ]
    assert oct((tmp_path / "w").stat().st_mode & 0o777) == "0o700"
    with pytest.raises(
        pulumicli.CommandError, match=r"^pulumi up --yes --target \.\.\. exited with code 3: boom"
    ):
        cli.up(["bad"])

"""The workflows at fleet scale (issue 39): every dry run the workflows and the lane run skips
the engine's per-step checkpoints and no write ever does (e2e/engine.py, ``SKIP_CHECKPOINTS``,
cites the engine source: a dry run persists nothing, yet serialises the whole snapshot after
every step unless told not to); stacks deploy and are checked for drift ten at a time."""

from __future__ import annotations

import re
from typing import Any

import pytest

from e2e.engine import SKIP_CHECKPOINTS, checkpoint_env, is_dry_run
from tests.workflow_helpers import FILES, load

PULUMI_ACTION = "pulumi/actions@"
COMMAND = re.compile(
    r"(?:^|&&|\|\||;|\||\(|\bthen\b|\bdo\b)\s*"  # where a command starts, not in a string
    r"(?P<assign>(?:[A-Z_][A-Z0-9_]*=\S*\s+)*)pulumi\s+(?P<args>[^|;&>]*)"
)
NEUTRAL = frozenset({"login", "logout", "stack", "config", "whoami", "version", "plugin", "about"})


def _env(*scopes: dict[str, Any]) -> dict[str, str]:
    merged: dict[str, str] = {}
    for scope in scopes:
        merged.update({str(k): str(v) for k, v in (scope.get("env") or {}).items()})
    return merged


def runs(workflow: dict[str, Any]) -> list[tuple[str, bool, bool]]:
    """Each pulumi command of ``workflow``: (where, is it a dry run, are checkpoints skipped)."""
    found: list[tuple[str, bool, bool]] = []
    for job_name, job in workflow.get("jobs", {}).items():
        for step in job.get("steps", []):
            where = f"{job_name}: {step.get('name', step.get('uses', '?'))}"
            env = _env(workflow, job, step)
            skipped = env.get(SKIP_CHECKPOINTS) == "true"
            if str(step.get("uses", "")).startswith(PULUMI_ACTION):
                command = str((step.get("with") or {}).get("command", ""))
                if command:  # without one the action only installs the CLI
                    found.append((where, command == "preview", skipped))
            for line in str(step.get("run", "")).splitlines():
                code = line.split("#", 1)[0]
                if "export " + SKIP_CHECKPOINTS in code:
                    found.append((f"{where}: {code.strip()}", False, True))
                for match in COMMAND.finditer(code):
                    args = match["args"].split()
                    if not args or args[0] in NEUTRAL:
                        continue
                    on_line = f"{SKIP_CHECKPOINTS}=true" in match["assign"].split()
                    found.append(
                        (f"{where}: pulumi {args[0]}", is_dry_run(args), on_line or skipped)
                    )
    return found


def problems(workflow: dict[str, Any]) -> list[str]:
    out = []
    for where, dry, skipped in runs(workflow):
        if dry and not skipped:
            out.append(f"{where}: a dry run without {SKIP_CHECKPOINTS}=true")
        if not dry and skipped:
            out.append(f"{where}: a write with {SKIP_CHECKPOINTS}")
    return out


@pytest.mark.parametrize("name", FILES)
def test_every_dry_run_skips_checkpoints_and_no_write_does(name: str) -> None:
    assert problems(load(name)) == []


def test_the_workflows_dry_runs_and_writes_are_the_ones_expected() -> None:
    found = {name: [(w, dry) for w, dry, _ in runs(load(name))] for name in FILES}
    assert [w for w, dry in found["pull-request.yml"] if dry] == [
        "preview: pulumi preview --diff (with the policy pack)"
    ]
    # deploy's writes are its rollout's `pulumi up --target`s (gatewayctl/deploy/pulumicli.py
    # skips checkpoints for its previews alone: tests/test_rollout.py).
    assert [w for w, dry in found["deploy.yml"]] == [
        "up: pulumi preview with the policy pack (the gate before the up)",
    ]
    assert [w for w, dry in found["deploy.yml"] if dry] == [found["deploy.yml"][0][0]]
    drift = found["drift.yml"]
    assert sum(dry for _, dry in drift) == 2  # refresh --preview-only and the self-heal's preview
    assert sum(not dry for _, dry in drift) == 1  # the self-heal's up (a reissue is a pull request)
    assert (
        "refresh: Status (pulumi refresh --preview-only --json, pulumi stack export, "
        in (drift[0][0])
    )


def test_the_check_finds_a_dry_run_without_and_a_write_with_skipped_checkpoints() -> None:
    workflow = {
        "env": {},
        "jobs": {
            "j": {
                "steps": [
                    {"name": "p", "uses": "pulumi/actions@x", "with": {"command": "preview"}},
                    {
                        "name": "u",
                        "uses": "pulumi/actions@x",
                        "with": {"command": "up"},
                        "env": {SKIP_CHECKPOINTS: "true"},
                    },
                    {"name": "r", "run": "pulumi refresh --preview-only --json > r.json"},
                    {"name": "d", "run": f"{SKIP_CHECKPOINTS}=true pulumi destroy --yes"},
                    {"name": "e", "run": f"export {SKIP_CHECKPOINTS}=true"},
                    {"name": "ok", "run": f"{SKIP_CHECKPOINTS}=true pulumi preview --diff"},
                ]
            }
        },
    }
    assert problems(workflow) == [
        f"j: p: a dry run without {SKIP_CHECKPOINTS}=true",
        f"j: u: a write with {SKIP_CHECKPOINTS}",
        f"j: r: pulumi refresh: a dry run without {SKIP_CHECKPOINTS}=true",
        f"j: d: pulumi destroy: a write with {SKIP_CHECKPOINTS}",
        f"j: e: export {SKIP_CHECKPOINTS}=true: a write with {SKIP_CHECKPOINTS}",
    ]


@pytest.mark.parametrize(
    ("args", "dry"),
    [
        (["preview", "--json"], True),
        (["preview", "--stack", "s", "--expect-no-changes"], True),
        (["refresh", "--preview-only", "--json"], True),
        (["destroy", "--preview-only"], True),
        (["import", "--file", "f.json", "--preview-only"], True),
        (["up", "--yes", "--skip-preview"], False),
        (["refresh", "--yes", "--json"], False),
        (["destroy", "--yes"], False),
        (["import", "--file", "f.json", "--yes"], False),
        (["stack", "export"], False),
    ],
)
def test_the_lane_skips_checkpoints_on_dry_runs_only(args: list[str], dry: bool) -> None:
    assert is_dry_run(args) is dry
    env = checkpoint_env(args, {"PATH": "/bin"})
    assert env == ({"PATH": "/bin", SKIP_CHECKPOINTS: "true"} if dry else {"PATH": "/bin"})


def test_the_lane_refuses_skipped_checkpoints_on_a_write() -> None:
    with pytest.raises(ValueError, match="`pulumi up --yes` writes the state"):
        checkpoint_env(["up", "--yes"], {SKIP_CHECKPOINTS: "true"})


def test_the_stacks_deployed_and_checked_for_drift_run_ten_at_a_time_at_most() -> None:
    jobs = {("deploy.yml", "up"), ("drift.yml", "refresh")}
    found = {
        (name, job_name): job["strategy"].get("max-parallel")
        for name in FILES
        for job_name, job in load(name)["jobs"].items()
        if (name, job_name) in jobs
    }
    assert found == dict.fromkeys(jobs, 10)

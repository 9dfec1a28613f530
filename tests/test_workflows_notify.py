"""The change window and notification steps of the deploy and drift workflows: a closed window
holds back every change, an override is recorded, and what the notify step sends is the
commit status and the webhook message alone."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from gatewayctl.deploy.notify import HEADLINES, Event
from tests.support import ROOT
from tests.test_workflows import triggers
from tests.workflow_helpers import fake, index_of, load, needs_bash, run_script, step, steps_of

FAKE_WINDOW_PYTHON = """\
echo "$*" >> python-calls
printf '{"stack": "ibm", "open": %s, "why": "inside the deny window",' "$FAKE_OPEN"
printf ' "until": "2026-12-07T08:00:00+01:00", "overridden": %s,' "$FAKE_OVERRIDDEN"
printf ' "overrideReason": %s}\\n' "$FAKE_REASON"
exit "$FAKE_CODE"
"""


@needs_bash
@pytest.mark.parametrize(
    ("name", "job", "override", "fakes", "proceed", "summary"),
    [
        (
            "deploy.yml",
            "up",
            "",
            {"FAKE_CODE": "6", "FAKE_OPEN": "false", "FAKE_OVERRIDDEN": "false"},
            "false",
            "Change window of ibm: closed (inside the deny window); opens again at"
            " 2026-12-07T08:00:00+01:00",
        ),
        (
            "deploy.yml",
            "up",
            "INC-1: revoke; $(touch pwned)",
            {"FAKE_CODE": "0", "FAKE_OPEN": "false", "FAKE_OVERRIDDEN": "true"},
            "true",
            "Change window of ibm: closed (inside the deny window); opens again at"
            " 2026-12-07T08:00:00+01:00; OVERRIDDEN: INC-1: revoke; $(touch pwned)",
        ),
        (
            "drift.yml",
            "refresh",
            "",
            {"FAKE_CODE": "0", "FAKE_OPEN": "true", "FAKE_OVERRIDDEN": "false"},
            "true",
            "Change window of ibm: open (inside the deny window)",
        ),
    ],
)
def test_the_change_window_step_holds_back_changes_and_records_an_override(
    tmp_path: Path,
    name: str,
    job: str,
    override: str,
    fakes: dict[str, str],
    proceed: str,
    summary: str,
) -> None:
    window = step(name, job, "Change window")
    expected = "${{ inputs.override }}" if name == "deploy.yml" else ""
    assert window["env"] == {"OVERRIDE": expected}
    fake(tmp_path / ".venv" / "bin", "python", FAKE_WINDOW_PYTHON)
    env = {
        "STACK": "ibm",
        "OVERRIDE": override,
        "FAKE_REASON": json.dumps(override) if override else "null",
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        **fakes,
    }
    code, outputs = run_script(window["run"], tmp_path, env)
    assert (code, outputs) == (0, {"proceed": proceed})
    call = (tmp_path / "python-calls").read_text(encoding="utf-8").splitlines()
    rest = f" --override {override}" if override else ""
    assert call == [f"-m gatewayctl window ibm{rest} --format json"]
    assert (tmp_path / "summary.md").read_text(encoding="utf-8") == summary + "\n"
    assert not (tmp_path / "pwned").exists()
    fakes = {**fakes, "FAKE_CODE": "2"}
    code, outputs = run_script(window["run"], tmp_path, {**env, **fakes})
    assert (code, outputs) == (1, {})


def test_the_window_gates_the_deploys_preview_and_up() -> None:
    steps = steps_of("deploy.yml", "up")
    order = [index_of(steps, part) for part in ("Change window", "pulumi preview", "Roll out")]
    assert order == sorted(order)
    for part in ("Policy pack virtualenv", "pulumi preview", "Log in", "Roll out"):
        assert steps[index_of(steps, part)]["if"] == "steps.window.outputs.proceed == 'true'"
    dispatch = triggers(load("deploy.yml"))["workflow_dispatch"]
    assert dispatch["inputs"]["override"]["required"] is False


FAKE_SENDERS = """\
case "$(basename "$0")" in
  gh) echo "$*" >> gh-calls; cat > gh-body.json ;;
  curl) echo "$*" >> curl-calls; cat > curl-body.json ;;
esac
"""


@needs_bash
@pytest.mark.parametrize(
    ("name", "job", "env", "event", "state", "posted"),
    [
        ("deploy.yml", "up", {"UP": "success", "PROCEED": "true"}, "deployed", "success", True),
        ("deploy.yml", "up", {"UP": "skipped", "PROCEED": "false"}, "held", "pending", True),
        ("deploy.yml", "up", {"UP": "failure", "PROCEED": "true"}, "failed", "error", True),
        (
            "deploy.yml",
            "up",
            {"UP": "failure", "STOPPED": "true", "PROCEED": "true"},
            "degraded",
            "failure",
            True,
        ),
        ("drift.yml", "refresh", {"event": "drift"}, "drift", "failure", True),
        ("drift.yml", "refresh", {"event": "green"}, "green", "success", False),
    ],
)
def test_the_notify_step_sends_the_commit_status_and_the_webhook_message_alone(
    tmp_path: Path,
    name: str,
    job: str,
    env: dict[str, str],
    event: Event,
    state: str,
    posted: bool,
) -> None:
    notify_step = step(name, job, "Notify (")
    assert notify_step["if"].startswith("always()")
    assert notify_step["env"]["WEBHOOK"] == "${{ secrets.NOTIFY_WEBHOOK_URL }}"
    for tool in ("gh", "curl"):
        fake(tmp_path / "bin", tool, FAKE_SENDERS)
    # The real command: its payloads are what the workflow sends.
    fake(tmp_path / ".venv" / "bin", "python", f'exec {sys.executable} "$@"\n')
    status = {"gateways": [{"name": "team-a", "sync": "OutOfSync", "health": "Healthy"}]}
    (tmp_path / "status.json").write_text(json.dumps(status))
    webhook = "https://hooks.example/services/T0/B0/very-secret-token"
    run_env = {
        "STACK": "ibm",
        "GITHUB_REPOSITORY": "acme/gateways",
        "GITHUB_SHA": "abc123",
        "RUN_URL": "https://github.example/acme/gateways/actions/runs/9",
        "WEBHOOK": webhook,
        "GH_TOKEN": "ghs_token_value",
        "PYTHONPATH": str(ROOT),
        "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
        **env,
    }
    script = notify_step["run"].replace("-m gatewayctl", f"-m gatewayctl --root {ROOT}")
    code, _ = run_script(script, tmp_path, run_env)
    assert code == 0
    assert (tmp_path / "gh-calls").read_text().splitlines() == [
        "api repos/acme/gateways/statuses/abc123 --input -"
    ]
    sent = json.loads((tmp_path / "gh-body.json").read_text())
    workflow = "deploy" if name == "deploy.yml" else "drift"
    assert (sent["state"], sent["context"]) == (state, f"hypershell/{workflow}/ibm")
    assert sent["target_url"] == run_env["RUN_URL"]
    bodies = (tmp_path / "gh-body.json").read_text()
    if posted:
        assert (tmp_path / "curl-calls").read_text().splitlines() == [
            f"-fsS -X POST -H Content-Type: application/json --data-binary @- {webhook}"
        ]
        message = json.loads((tmp_path / "curl-body.json").read_text())
        assert message["text"].startswith(f"ibm: {HEADLINES[event]}")
        bodies += (tmp_path / "curl-body.json").read_text()
    else:
        assert not (tmp_path / "curl-calls").exists()
    assert "very-secret-token" not in bodies and "ghs_token_value" not in bodies


FAKE_GH_APPENDS = """\
echo "$*" >> gh-calls
cat >> gh-bodies.jsonl
"""


@needs_bash
def test_the_deploy_sends_a_commit_status_per_wave_of_its_rollout(tmp_path: Path) -> None:
    notify_step = step("deploy.yml", "up", "Notify (")
    fake(tmp_path / "bin", "gh", FAKE_GH_APPENDS)
    fake(tmp_path / ".venv" / "bin", "python", f'exec {sys.executable} "$@"\n')
    waves = [
        {"wave": 0, "name": "shared", "gateways": [], "result": "done"},
        {"wave": 1, "name": "canary", "gateways": ["team-a"], "result": "done"},
        {"wave": 2, "name": "rest", "gateways": ["research"], "result": "stopped"},
    ]
    (tmp_path / "rollout.json").write_text(json.dumps({"stack": "ibm", "waves": waves}))
    run_env = {
        "STACK": "ibm",
        "GITHUB_REPOSITORY": "acme/gateways",
        "GITHUB_SHA": "abc123",
        "RUN_URL": "https://github.example/acme/gateways/actions/runs/9",
        "WEBHOOK": "",
        "GH_TOKEN": "ghs_token_value",
        "PYTHONPATH": str(ROOT),
        "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "UP": "failure",
        "STOPPED": "true",
        "PROCEED": "true",
    }
    script = notify_step["run"].replace("-m gatewayctl", f"-m gatewayctl --root {ROOT}")
    code, _ = run_script(script, tmp_path, run_env)
    assert code == 0
    assert (tmp_path / "gh-calls").read_text().splitlines() == [
        "api repos/acme/gateways/statuses/abc123 --input -"
    ] * 3
    text, sent, decoder = (tmp_path / "gh-bodies.jsonl").read_text(), [], json.JSONDecoder()
    while text.strip():  # the stack's status pretty-printed by jq, then one line per wave
        body, end = decoder.raw_decode(text.strip())
        sent.append(body)
        text = text.strip()[end:]
    assert [(s["state"], s["context"]) for s in sent] == [
        ("failure", "hypershell/deploy/ibm"),
        ("success", "hypershell/deploy/ibm/wave-1"),
        ("failure", "hypershell/deploy/ibm/wave-2"),
    ]
    assert not (tmp_path / "curl-calls").exists()  # no webhook secret: nothing posted

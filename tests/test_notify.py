"""Notifications (gatewayctl/deploy/notify.py, ``gatewayctl notify``): the commit status and the
webhook message hold the stack, the event, the run's link, counts and gateway names, escaped,
and nothing else of the status document."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gatewayctl.deploy import notify
from tests.hostile_helpers import run_cli

RUN = "https://github.example/acme/gateways/actions/runs/7"
SECRETISH = "postgresql://admin:hunter2@db"


def status_document(names: list[tuple[str, str, str]], due: int = 0) -> dict[str, Any]:
    return {
        "stack": "ibm",
        "state": "out-of-sync",
        "gateways": [
            {
                "name": name,
                "sync": sync,
                "health": health,
                "address": SECRETISH,  # never copied: only names, sync and health go out
                "changes": [{"paths": [SECRETISH]}],
                "parts": [{"message": SECRETISH}],
            }
            for name, sync, health in names
        ],
        "certificatesDue": [{"name": f"c{i}"} for i in range(due)],
        "remedy": {"action": "none", "heal": [{"command": SECRETISH}]},
    }


def test_a_drift_message_names_the_gateways_not_green_and_escapes_them() -> None:
    status = status_document(
        [
            ("team-a", "OutOfSync", "Healthy"),
            ("b<&>", "Synced", "Degraded"),
            ("ok", "Synced", "Healthy"),
        ],
        due=2,
    )
    made = notify.payloads("ibm", "drift", RUN, status, "drift")
    assert made == {
        "commitStatus": {
            "state": "failure",
            "context": "hypershell/drift/ibm",
            "description": "ibm: drift: live resources differ from the stack's state; 2 of 3"
            " gateway(s) not synced and healthy, 2 certificate(s) due",
            "target_url": RUN,
        },
        "webhook": {
            "text": "ibm: drift: live resources differ from the stack's state; 2 of 3 gateway(s)"
            f" not synced and healthy, 2 certificate(s) due (<{RUN}|drift run>)",
            "blocks": [
                {
                    "type": "section",
                    "text": {
                        "type": "mrkdwn",
                        "text": "ibm: drift: live resources differ from the stack's state; 2 of 3"
                        " gateway(s) not synced and healthy, 2 certificate(s) due"
                        f" (<{RUN}|drift run>)",
                    },
                },
                {
                    "type": "section",
                    "text": {
                        "type": "mrkdwn",
                        "text": "• `team-a` OutOfSync, Healthy\n"
                        "• `b&lt;&amp;&gt;` Synced, Degraded",
                    },
                },
            ],
        },
    }
    assert "hunter2" not in json.dumps(made)


def test_a_deploy_without_a_status_is_one_line_and_many_gateways_are_counted() -> None:
    made = notify.payloads("aws", "deployed", RUN, None, "deploy")
    assert made["commitStatus"]["state"] == "success"
    assert made["webhook"]["text"] == f"aws: deployed (<{RUN}|deploy run>)"
    assert len(made["webhook"]["blocks"]) == 1
    many = status_document([(f"g{i:02}", "OutOfSync", "Healthy") for i in range(12)])
    lines = notify.webhook("ibm", "drift", RUN, many, "drift")["blocks"][1]["text"]["text"]
    assert lines.splitlines()[-1] == "• and 2 more"
    assert len(lines.splitlines()) == notify.NAMES_SHOWN + 1


@pytest.mark.parametrize(
    ("event", "state"),
    [("failed", "error"), ("held", "pending"), ("renewal", "success"), ("degraded", "failure")],
)
def test_each_event_sets_its_commit_state(event: notify.Event, state: str) -> None:
    assert notify.commit_status("ibm", event, RUN, None, "deploy")["state"] == state


def test_a_long_description_is_cut_to_githubs_limit() -> None:
    status = status_document([("x", "OutOfSync", "Healthy")], due=3)
    made = notify.commit_status("a" * 120, "drift", RUN, status, "drift")
    assert len(made["description"]) == notify.DESCRIPTION_LONGEST
    assert made["description"].endswith("...")


def test_the_command_prints_both_and_refuses_a_bad_url_or_file(tmp_path: Path) -> None:
    path = tmp_path / "status.json"
    path.write_text(json.dumps(status_document([("team-a", "Missing", "Missing")])))
    out = run_cli(
        "notify",
        "ibm",
        "--event",
        "drift",
        "--workflow",
        "drift",
        "--run-url",
        RUN,
        "--status",
        str(path),
    )
    assert out.code == 0
    assert json.loads(out.out) == notify.payloads(
        "ibm", "drift", RUN, json.loads(path.read_text()), "drift"
    )
    bad = run_cli("notify", "ibm", "--event", "drift", "--workflow", "drift", "--run-url", "x|y")
    assert bad.code == 2 and "--run-url 'x|y': expected one http(s) address" in bad.err
    path.write_text("[]")
    out = run_cli(
        "notify",
        "ibm",
        "--event",
        "drift",
        "--workflow",
        "drift",
        "--run-url",
        RUN,
        "--status",
        str(path),
    )
    assert out.code == 2 and "not the document `gatewayctl status --format json` prints" in out.err


def test_a_hand_made_status_cannot_smuggle_text_through_names_sync_or_health() -> None:
    status = {
        "gateways": [
            {
                "name": "x` *bold* https://evil.example `",
                "sync": ["OutOfSync", "token=abc"],
                "health": {"status": "Degraded", "message": "password=hunter2"},
            },
        ]
    }
    lines = notify.webhook("ibm", "drift", RUN, status, "drift")["blocks"][1]["text"]["text"]
    assert lines == "• `x' *bold* https://evil.example '` ?, ?"


@pytest.mark.parametrize(
    "url", ["https://x\u202eexe.gpj", "https://x\u200b", "https://a b", "https://a|b"]
)
def test_a_run_url_must_be_printable_ascii(url: str) -> None:
    out = run_cli("notify", "ibm", "--event", "drift", "--workflow", "drift", "--run-url", url)
    assert out.code == 2 and "expected one http(s) address" in out.err


ROLLOUT = {
    "stack": "aws",
    "completed": False,
    "summary": "aws: 3 waves, stopped at wave 2 (payments Degraded: Deployment x: 0/1)",
    "waves": [
        {"wave": 0, "name": "shared", "gateways": [], "result": "done", "why": None},
        {"wave": 1, "name": "canary", "gateways": ["audit"], "result": "done", "why": None},
        {
            "wave": 2,
            "name": "us-east-1",
            "gateways": ["payments"],
            "result": "stopped",
            "why": SECRETISH,
        },
        {
            "wave": 3,
            "name": "us-west-2",
            "gateways": ["a", "b"],
            "result": "untouched",
            "why": None,
        },
    ],
}


def test_a_rollout_sets_a_commit_status_per_wave_and_nothing_of_its_reasons(tmp_path: Path) -> None:
    path = tmp_path / "rollout.json"
    path.write_text(json.dumps(ROLLOUT))
    out = run_cli(
        "notify",
        "aws",
        "--event",
        "degraded",
        "--workflow",
        "deploy",
        "--run-url",
        RUN,
        "--rollout",
        str(path),
    )
    assert out.code == 0, out.err
    document = json.loads(out.out)
    assert document["commitStatus"]["state"] == "failure"
    assert [(s["state"], s["context"], s["description"]) for s in document["waveStatuses"]] == [
        ("success", "hypershell/deploy/aws/wave-1", "wave 1 (canary): done, 1 gateway(s)"),
        ("failure", "hypershell/deploy/aws/wave-2", "wave 2 (us-east-1): stopped, 1 gateway(s)"),
        ("pending", "hypershell/deploy/aws/wave-3", "wave 3 (us-west-2): untouched, 2 gateway(s)"),
    ]
    assert {s["target_url"] for s in document["waveStatuses"]} == {RUN}
    assert "hunter2" not in out.out and "payments Degraded" not in out.out
    # Without --rollout: no wave statuses at all.
    out = run_cli("notify", "aws", "--event", "deployed", "--workflow", "deploy", "--run-url", RUN)
    assert "waveStatuses" not in json.loads(out.out)


def test_a_file_that_is_no_rollout_document_is_bad_input(tmp_path: Path) -> None:
    path = tmp_path / "rollout.json"
    path.write_text(json.dumps({"gateways": []}))
    out = run_cli(
        "notify",
        "aws",
        "--event",
        "deployed",
        "--workflow",
        "deploy",
        "--run-url",
        RUN,
        "--rollout",
        str(path),
    )
    assert out.code == 2
    assert out.err.splitlines()[0] == (
        f"error: {path}: waves: not the document `gatewayctl rollout --format json` prints"
    )
    strange = {
        "waves": [{"wave": True, "result": "done"}, {"wave": 4, "name": "x\u202e", "result": 7}]
    }
    assert notify.wave_statuses("aws", RUN, strange, "deploy") == [
        {
            "state": "error",
            "context": "hypershell/deploy/aws/wave-4",
            "description": "wave 4 (x\\u202e): ?, 0 gateway(s)",
            "target_url": RUN,
        }
    ]

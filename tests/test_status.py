"""``python -m gatewayctl status``: sync, health, certificates and address per gateway from the
JSON the Pulumi CLI writes (fixtures built from pulumi/pulumi's apitype and preview-digest
types: ``tests.status_builders``)."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from gatewayctl.status import certificates, core, health, inputs, selfheal
from gatewayctl.status.core import state
from gatewayctl.status.models import PreviewDigest, ResourceV3, UnreadableError, UntypedDeployment
from gatewayctl.status.tree import Tree
from tests.builders import copy_project, edited_config
from tests.hostile_helpers import run_cli, unlocated
from tests.status_builders import (
    FIXTURES,
    SECRET_TEXT,
    SIG,
    deployment_object,
    digest,
    export,
    gateway_resources,
    refresh_step,
    route_object,
    stack_resources,
    write_fixtures,
)

NOW = "2026-12-01T05:30:00Z"
DRIFT = str(FIXTURES / "refresh-drift.json")
CLEAN = str(FIXTURES / "refresh-clean.json")
PREVIEW = str(FIXTURES / "preview.json")
STATE = str(FIXTURES / "state.json")


def status_json(*files: str, now: str = NOW, root: Path | None = None) -> tuple[int, Any]:
    prefix = ["--root", str(root)] if root else []
    out = run_cli(*prefix, "status", "ibm", "--from", *files, "--now", now, "--format", "json")
    assert out.err == ""
    return out.code, json.loads(out.out)


def gateway(document: dict[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any]
    (found,) = [g for g in document["gateways"] if g["name"] == name]
    return found


def test_the_committed_fixtures_are_what_the_builders_write(tmp_path: Path) -> None:
    write_fixtures(tmp_path)
    committed = {p.name: p.read_bytes() for p in FIXTURES.iterdir()}
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == committed


# --- the drift scenario, end to end -----------------------------------------------------------


def test_drift_degraded_and_missing_per_gateway() -> None:
    code, doc = status_json(DRIFT, STATE)
    assert code == 4  # degraded wins over out of sync
    assert doc["state"] == "degraded"
    assert doc["liveState"] == "refresh"
    rows = {g["name"]: (g["sync"], g["health"]) for g in doc["gateways"]}
    assert rows == {
        "batch-jobs": ("OutOfSync", "Degraded"),
        "team-a": ("OutOfSync", "Healthy"),
        "canary": ("Synced", "Healthy"),
        "research": ("Missing", "Missing"),
    }
    team_a = gateway(doc, "team-a")
    assert [(c["name"], c["op"], c["source"], c["paths"]) for c in team_a["changes"]] == [
        ("team-a-pki-server-tls", "update", "live", ["data.tls.key"]),
        ("team-a-workload-deploy", "update", "live", ["spec.template.spec.containers[0].image"]),
    ]
    team_c = gateway(doc, "research")
    assert [(c["name"], c["op"], c["paths"]) for c in team_c["changes"]] == [
        ("research-exposure-route", "missing", [])
    ]
    assert [(p["name"], p["health"]) for p in team_c["parts"] if p["health"] != "Healthy"] == [
        ("research-exposure-route", "Missing")
    ]
    batch = gateway(doc, "batch-jobs")
    (deploy,) = [p for p in batch["parts"] if p["type"] == health.DEPLOYMENT]
    assert deploy["health"] == "Degraded"
    assert "ProgressDeadlineExceeded" in deploy["message"]
    assert team_a["address"] == "grpcs://gw-openshell-team-a.apps.example.com:443"
    assert batch["address"] is None
    # The read and discard steps of a resource the program never registered change nothing.
    assert doc["otherChanges"] == []


def test_no_secret_value_reaches_any_format() -> None:
    for fmt in ("table", "markdown", "json"):
        out = run_cli("status", "ibm", "--from", DRIFT, STATE, "--now", NOW, "--format", fmt)
        assert out.code == 4
        text = out.out + out.err
        assert "data.tls.key" in text
        for leaked in (SECRET_TEXT, SECRET_TEXT.encode().hex(), SIG[next(iter(SIG))], "[secret]"):
            assert leaked not in text, (fmt, leaked)


def test_clean_refresh_with_certificates_due_exits_5_and_lists_them() -> None:
    code, doc = status_json(CLEAN, STATE)
    assert code == 5
    assert doc["state"] == "renewal-due"
    assert {(g["name"], g["sync"], g["health"]) for g in doc["gateways"]} == {
        (name, "Synced", "Healthy") for name in ("batch-jobs", "team-a", "canary", "research")
    }
    assert [
        (c["name"], c["daysLeft"], c["expires"], c["renewsFrom"]) for c in doc["certificatesDue"]
    ] == [
        ("team-a-pki-client-cert", 18, "2026-12-20T00:00:00+00:00", "2026-11-20T00:00:00+00:00"),
        ("team-a-pki-server-cert", 18, "2026-12-20T00:00:00+00:00", "2026-11-20T00:00:00+00:00"),
    ]
    out = run_cli("status", "ibm", "--from", CLEAN, STATE, "--now", NOW, "--format", "markdown")
    assert "| `team-a` | Synced | Healthy | 18 days (team-a-pki-client-cert), renewal due |" in (
        out.out
    )
    assert "### Certificates inside their renewal window" in out.out


def test_before_the_renewal_window_everything_is_green() -> None:
    # The state alone: the fixtures' refresh ran inside team-a's window (NOW), where the
    # provider's Read had set readyForRenewal.
    code, doc = status_json(STATE, now="2026-11-19T23:59:59Z")
    assert (code, doc["state"], doc["certificatesDue"]) == (0, "synced", [])
    code, doc = status_json(STATE, now="2026-11-20T00:00:00Z")  # the window opens
    assert (code, len(doc["certificatesDue"])) == (5, 2)


def test_a_preview_shows_what_git_would_change_and_gateways_not_deployed() -> None:
    code, doc = status_json(PREVIEW, STATE)
    assert code == 3
    assert doc["liveState"] == "state"
    team_b = gateway(doc, "canary")
    assert team_b["sync"] == "OutOfSync"
    assert [(c["op"], c["source"], c["paths"]) for c in team_b["changes"]] == [
        ("update", "git", ["spec.template.spec.containers[0].image"])
    ]
    team_d = gateway(doc, "team-d")
    assert (team_d["sync"], team_d["health"]) == ("Missing", "Missing")
    assert len(team_d["changes"]) == 12  # every custom resource of the new gateway, created
    assert {c["op"] for c in team_d["changes"]} == {"create"}


# --- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("", "empty file; expected the JSON of"),
        ("  \n", "empty file; expected the JSON of"),
        ('{"version": 3, "deployment": {"resources": [', "truncated JSON (it ends at line 1"),
        ("[1, 2]", "a JSON list, not an object; expected"),
        ('{"hello": 1}', "neither `steps` nor `deployment` at the top; expected"),
        ("{'a': 1}", "not valid JSON (Expecting property name enclosed in double quotes,"),
    ],
)
def test_unusable_files_exit_2_naming_the_file(tmp_path: Path, content: str, problem: str) -> None:
    path = tmp_path / "in.json"
    path.write_text(content, encoding="utf-8")
    out = run_cli("status", "ibm", "--from", str(path))
    assert out.code == 2
    assert out.out == ""
    assert out.err.startswith(f"error: {path}: {problem}")
    assert "Traceback" not in out.err


def test_fields_of_the_wrong_type_are_named(tmp_path: Path) -> None:
    path = tmp_path / "in.json"
    path.write_text(json.dumps({"steps": [{"op": "update", "urn": 7}]}), encoding="utf-8")
    out = run_cli("status", "ibm", "--from", str(path))
    assert out.code == 2
    assert out.err.splitlines()[0] == f"error: {path}: steps.0.urn: Input should be a valid string"


def test_a_newer_deployment_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text(json.dumps({"version": 5, "deployment": {}}), encoding="utf-8")
    out = run_cli("status", "ibm", "--from", str(path))
    assert out.code == 2
    assert out.err.splitlines()[0] == (
        f"error: {path}: version: deployment version 5; this reads versions 3 and 4"
        " (`pulumi stack export` of CLI 3.x)"
    )


def test_a_version_4_export_after_a_taint_is_read(tmp_path: Path) -> None:
    # `pulumi state taint` marks the resource and the CLI writes version 4 with the feature
    # listed (pulumi/pulumi pkg/resource/stack/deployment.go, taintFeature).
    document = json.loads(Path(STATE).read_text(encoding="utf-8"))
    document["version"] = 4
    document["features"] = ["taint"]
    for entry in document["deployment"]["resources"]:
        if entry["urn"].endswith("::canary-workload-deploy"):
            entry["taint"] = True
    path = tmp_path / "state.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    assert status_json(str(path), now="2026-11-01T00:00:00Z") == status_json(
        STATE, now="2026-11-01T00:00:00Z"
    )
    code, doc = status_json(CLEAN, str(path))
    assert (code, doc["state"]) == (5, "renewal-due")
    document["features"] = ["taint", "quantumState", "aardvark"]
    path.write_text(json.dumps(document), encoding="utf-8")
    out = run_cli("status", "ibm", "--from", str(path))
    assert out.code == 2
    assert out.err.splitlines()[0] == (
        f"error: {path}: features: the deployment uses feature(s) this reader does not know:"
        " 'aardvark', 'quantumState' (a newer CLI wrote it)"
    )


def test_every_file_problem_is_listed_and_two_of_a_kind_refused(tmp_path: Path) -> None:
    out = run_cli(
        "status",
        "ibm",
        "--from",
        str(FIXTURES / "empty.json"),
        str(FIXTURES / "truncated.json"),
        "--from",
        str(tmp_path / "absent.json"),
    )
    assert out.code == 2
    assert sorted(line.split(": ", 2)[1] for line in out.err.splitlines()[:3]) == sorted(
        [
            str(FIXTURES / "empty.json"),
            str(FIXTURES / "truncated.json"),
            str(tmp_path / "absent.json"),
        ]
    )
    assert out.err.splitlines()[3] == "3 problem(s); nothing written"
    out = run_cli("status", "ibm", "--from", DRIFT, CLEAN)
    assert out.code == 2
    assert f"error: {CLEAN}: a second refresh (the first is {DRIFT}); give one" in out.err


def test_unknown_fields_are_ignored() -> None:
    parsed = ResourceV3.model_validate(
        {"urn": "urn:pulumi:s::p::t::n", "type": "t", "brandNew": {"x": 1}, "custom": True}
    )
    assert (parsed.urn, parsed.custom, parsed.outputs) == ("urn:pulumi:s::p::t::n", True, {})
    document = json.loads(Path(DRIFT).read_text(encoding="utf-8"))
    assert "futureSummary" in document and "futureField" in document["steps"][0]["oldState"]
    assert PreviewDigest.model_validate(document).is_refresh


# --- health --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({}, ("Healthy", "1/1 available")),
        ({"replicas": 3, "available": 3}, ("Healthy", "3/3 available")),
        (
            {"replicas": 3, "available": 1, "updated": 2},
            ("Progressing", "rollout under way: 1/3 available, 2/3 updated"),
        ),
        (
            {"replicas": 2, "available": 1, "progressing": ("False", "ReplicaSetUpdated")},
            ("Degraded", "1/2 available, 2/2 updated, no rollout under way"),
        ),
        (
            {"available": 0, "progressing": ("False", "ProgressDeadlineExceeded")},
            ("Degraded", "rollout exceeded its progress deadline (ProgressDeadlineExceeded)"),
        ),
        (
            {"generation": 4, "observed": 3},
            ("Progressing", "rollout: the controller has not observed the newest spec yet"),
        ),
    ],
)
def test_deployment_health(kwargs: dict[str, Any], expected: tuple[str, str]) -> None:
    assert health.deployment(deployment_object("ns", **kwargs)) == expected


def test_a_replica_failure_with_every_count_met_is_named_not_degraded() -> None:
    # As the lane's heal left it: a ReplicaSet's PodSecurity refusal copied to the Deployment
    # after the pods it was about had been replaced.
    live = deployment_object("ns")
    failure = {"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate"}
    live["status"]["conditions"].append(failure)
    assert health.deployment(live) == (
        "Healthy",
        "1/1 available (a ReplicaSet reports ReplicaFailure: FailedCreate)",
    )
    live = deployment_object("ns", replicas=2, available=1, progressing=("False", "X"))
    live["status"]["conditions"].append(failure)
    assert health.deployment(live)[0] == "Degraded"  # the counts decide


def test_available_false_with_nothing_under_way_is_degraded() -> None:
    live = deployment_object("ns")
    live["status"]["conditions"][0] = {"type": "Available", "status": "False", "reason": "X"}
    assert health.deployment(live) == ("Degraded", "Available is False: X")


@pytest.mark.parametrize(
    ("admitted", "expected"),
    [
        ("True", ("Healthy", "Admitted")),
        ("False", ("Degraded", "Admitted is False")),
        (None, ("Progressing", "no router has reported a status yet")),
    ],
)
def test_route_health(admitted: str | None, expected: tuple[str, str]) -> None:
    assert health.route(route_object("ns", "h", admitted)) == expected


def _grpc(accepted: str, resolved: str, reason: str = "") -> dict[str, Any]:
    conditions = [
        {"type": "Accepted", "status": accepted},
        {"type": "ResolvedRefs", "status": resolved, "reason": reason},
    ]
    return {"status": {"parents": [{"parentRef": {"name": "gw"}, "conditions": conditions}]}}


def test_grpc_route_health() -> None:
    assert health.grpc_route(_grpc("True", "True")) == ("Healthy", "Accepted and ResolvedRefs")
    assert health.grpc_route(_grpc("True", "False", "BackendNotFound")) == (
        "Degraded",
        "ResolvedRefs is False (BackendNotFound)",
    )
    assert health.grpc_route(_grpc("True", "Unknown")) == (
        "Progressing",
        "waiting for Accepted and ResolvedRefs",
    )
    assert health.grpc_route({"status": {}}) == (
        "Progressing",
        "no parent Gateway has reported a status yet",
    )


def test_a_terminating_namespace_and_a_missing_object() -> None:
    assert health.part(health.NAMESPACE, {"status": {"phase": "Terminating"}}) == (
        "Degraded",
        "Terminating",
    )
    assert health.part(health.PG_ROLE, None) == ("Missing", "the live object is gone")
    assert health.part(health.PG_DATABASE, {"name": "gw_x"}) == ("Healthy", "present")
    assert health.worst(["Healthy", "Missing", "Progressing"]) == "Missing"
    assert health.worst(["Missing", "Degraded"]) == "Degraded"


def test_a_dropped_database_is_missing() -> None:
    resources = stack_resources({"x": None}) + gateway_resources("x", exposed=False)
    steps = [
        refresh_step(r, op="delete" if r["urn"].endswith("::x-database-db") else "refresh")
        for r in resources
    ]
    built = _build(export(resources), digest(steps))
    (gw,) = built.gateways
    assert (gw.sync, gw.health) == ("Missing", "Missing")
    assert [(p.name, p.health) for p in gw.parts if p.health != "Healthy"] == [
        ("x-database-db", "Missing")
    ]


# --- certificates ----------------------------------------------------------------------------


def _now(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_certificate_days_and_window() -> None:
    outputs = {"validityEndTime": "2026-12-31T00:00:00Z", "earlyRenewalHours": 720}
    cert = certificates.certificate("u", "n", {}, outputs, _now("2026-12-01T00:00:01Z"))
    assert cert is not None and (cert.days_left, cert.due) == (29, True)
    cert = certificates.certificate("u", "n", {}, outputs, _now("2026-11-30T23:59:59Z"))
    assert cert is not None and (cert.days_left, cert.due) == (30, False)
    expired = certificates.certificate("u", "n", {}, outputs, _now("2027-01-01T12:00:00Z"))
    assert expired is not None and (expired.days_left, expired.due) == (-2, True)
    # The window comes from the resource (its inputs when the outputs lack it); 0 without.
    no_window = {"validityEndTime": "2026-12-31T00:00:00Z"}
    cert = certificates.certificate("u", "n", {}, no_window, _now("2026-12-30T00:00:00Z"))
    assert cert is not None and cert.due is False
    cert = certificates.certificate(
        "u", "n", {"earlyRenewalHours": 48}, no_window, _now("2026-12-30T00:00:00Z")
    )
    assert cert is not None and cert.due is True
    ready = {**no_window, "readyForRenewal": True}
    cert = certificates.certificate("u", "n", {}, ready, _now("2026-01-01T00:00:00Z"))
    assert cert is not None and cert.due is True
    with pytest.raises(UnreadableError) as missing:
        certificates.certificate("u", "n", {}, {}, _now(NOW))
    assert (missing.value.field, missing.value.reason) == (
        "outputs.validityEndTime",
        "missing: the certificate's expiry is unknown",
    )


# --- self-heal -------------------------------------------------------------------------------


def _build(checkpoint: dict[str, Any], refresh: dict[str, Any] | None = None) -> core.StackStatus:
    parsed = inputs.Inputs(
        checkpoint=UntypedDeployment.model_validate(checkpoint).deployment,
        refresh=PreviewDigest.model_validate(refresh) if refresh is not None else None,
    )
    return core.build("ibm", parsed, _now(NOW))


def test_remedy_rules() -> None:
    resources = stack_resources({"x": None}) + gateway_resources("x", exposed=False)
    drift = [
        refresh_step(r, op="update", paths=["data.k"])
        if r["urn"].endswith("::x-pki-server-tls")
        else refresh_step(r)
        for r in resources
    ]
    drifted = _build(export(resources), digest(drift))
    assert state(drifted) == "out-of-sync"
    assert selfheal.remedy(drifted, True) == selfheal.Remedy(action="up-refresh")
    assert selfheal.remedy(drifted, False) == selfheal.Remedy(action="none")
    # Without a refresh the live state is not known: no self-heal.
    assert selfheal.remedy(_build(export(resources)), True).action == "none"
    due = stack_resources({"y": None}) + gateway_resources(
        "y", exposed=False, cert_end="2026-12-10T00:00:00Z"
    )
    degraded_due = [
        refresh_step(
            r,
            op="update",
            live=deployment_object("ns", available=0, progressing=("False", "X")),
            paths=["spec.replicas"],
        )
        if r["urn"].endswith("::y-workload-deploy")
        else refresh_step(r)
        for r in due
    ]
    built = _build(export(due), digest(degraded_due))
    assert state(built) == "degraded"
    remedy = selfheal.remedy(built, True)
    assert remedy.action == "reissue"
    (renewal,) = remedy.renewals
    assert [c.name for c in renewal.certificates] == ["y-pki-client-cert", "y-pki-server-cert"]
    assert renewal.command() == (
        "python -m gatewayctl rotate y server-certificate client-certificate --stack ibm"
    )
    # Self-heal off: the same renewals named, for a person to run; nothing done.
    assert selfheal.remedy(built, False) == dataclasses.replace(remedy, action="none")


def test_self_heal_is_read_from_the_stack_and_refused_for_the_operators(tmp_path: Path) -> None:
    root = copy_project(tmp_path / "project")
    code, doc = status_json(DRIFT, STATE, root=root)
    command = "python -m gatewayctl rotate team-a server-certificate client-certificate --stack ibm"
    assert (doc["selfHeal"], doc["remedy"]["action"], doc["remedy"]["heal"]) == (False, "none", [])
    assert [r["command"] for r in doc["remedy"]["renewals"]] == [command]
    with edited_config(root, "ibm") as config:
        config["hypershell-gateways:selfHeal"] = True
    code, doc = status_json(DRIFT, STATE, root=root)
    assert code == 4 and doc["selfHeal"] is True
    # Degraded, with team-a's certificates due: only the certificates are reissued.
    assert doc["remedy"]["action"] == "reissue"
    assert [r["command"] for r in doc["remedy"]["renewals"]] == [command]
    with edited_config(root, "aws") as config:
        config["hypershell-gateways:selfHeal"] = True
    out = run_cli("--root", str(root), "status", "aws", "--from", STATE)
    assert out.code == 2
    assert unlocated(out.err).splitlines()[0] == (
        "error: Pulumi.aws.yaml: hypershell-gateways:selfHeal: the operator owns this stack"
        " (deploy/operator.yaml stacks) and corrects its drift itself; self-heal from CI would"
        " race it: remove the key"
    )
    with edited_config(root, "aws") as config:
        config["hypershell-gateways:selfHeal"] = "yes"
    out = run_cli("--root", str(root), "status", "aws", "--from", STATE)
    assert out.code == 2
    assert "hypershell-gateways:selfHeal: Input should be a valid boolean" in out.err


def test_the_help_documents_the_exit_codes() -> None:
    from gatewayctl.cli import status as status_command

    text = status_command.STATUS_EPILOG
    for phrase in (
        "0 synced and healthy",
        "3 out of sync",
        "4 degraded",
        "5 certificates",
        "2 invalid",
    ):
        assert phrase in text
    assert state is not None and UTC is not None


def test_the_program_reads_self_heal_as_a_boolean_and_renders_the_same(tmp_path: Path) -> None:
    from gatewayctl.engine import render
    from gatewayctl.resolve import preparation

    root = copy_project(tmp_path / "project")
    before = render.execute(preparation.prepare(root, "local")).files
    with edited_config(root, "local") as config:
        config["hypershell-gateways:selfHeal"] = True
    prepared = preparation.prepare(root, "local")
    assert prepared.loaded.config.self_heal is True
    assert render.execute(prepared).files == before  # a workflow setting, not a resource


def test_names_and_addresses_are_text_not_markup(tmp_path: Path) -> None:
    declared = ("batch-jobs", "canary", "research", "team-a")  # gateways/ibm
    addresses = dict.fromkeys(declared) | {"team-a": "[bold]grpcs://x:443[/bold]"}
    resources = stack_resources(addresses)
    for name in declared:
        resources += gateway_resources(name)
    path = tmp_path / "state.json"
    path.write_text(json.dumps(export(resources)), encoding="utf-8")
    out = run_cli("status", "ibm", "-o", "wide", "--from", str(path), "--now", NOW)
    assert out.code == 0
    assert "[bold]grpcs://x:443[/bold]" in out.out


def test_the_markdown_keeps_the_table_whole_and_counts_what_does_not_fit() -> None:
    from gatewayctl.status import formats

    names = [f"gw-{i:03d}" for i in range(150)]
    resources = stack_resources(dict.fromkeys(names)) + [
        r for n in names for r in gateway_resources(n, exposed=False)
    ]
    steps = [
        refresh_step(r, op="update", paths=[f"data.key-{i}" for i in range(30)])
        if r["type"] == "kubernetes:core/v1:ConfigMap"
        else refresh_step(r)
        for r in resources
    ]
    built = _build(export(resources), digest(steps))
    text = formats.markdown(built, selfheal.Remedy(action="none"), limit=20_000)
    assert len(text) <= 20_000
    for name in names:
        assert f"| `{name}` | OutOfSync | Healthy |" in text
    shown = text.count("(live) update: data.key-0, ")
    assert 0 < shown < 150
    note = f"> **Note:** {150 - shown} detail line(s) omitted to stay under 20,000 characters;"
    assert note in text
    assert "and 18 more" in text  # 30 paths: 12 shown per resource


def test_a_rollout_under_way_is_progressing_and_not_green() -> None:
    rolling = deployment_object("openshell-x", generation=4, observed=3)
    resources = stack_resources({"x": None}) + gateway_resources(
        "x", exposed=False, deployment=rolling
    )
    built = _build(export(resources))  # no refresh: health from the state
    (gw,) = built.gateways
    assert (built.live, gw.sync, gw.health) == ("state", "Synced", "Progressing")
    assert state(built) == "degraded"


# --- another stack's files (issue 21, item 10) ---------------------------------------------------


def _rewritten(tmp_path: Path, source: str, old: str, new: str) -> str:
    path = tmp_path / Path(source).name
    path.write_text(Path(source).read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    return str(path)


def test_another_stacks_state_or_refresh_is_refused(tmp_path: Path) -> None:
    aws_state = _rewritten(tmp_path, STATE, "urn:pulumi:ibm::", "urn:pulumi:aws::")
    count = len(json.loads(Path(STATE).read_text(encoding="utf-8"))["deployment"]["resources"])
    out = run_cli("status", "ibm", "--from", aws_state, "--now", NOW)
    assert (out.code, out.out) == (2, "")
    assert out.err.splitlines() == [
        f"error: {aws_state}: deployment.resources.0.urn: a resource of stack 'aws', not of"
        " stack 'ibm': this file is another stack's; give this stack's"
        f" ({count - 1} more like it)",
        "1 problem(s); nothing written",
    ]
    # A refresh of this stack and the state of another are never merged.
    out = run_cli("status", "ibm", "--from", CLEAN, aws_state, "--now", NOW)
    assert out.code == 2
    assert out.err.splitlines()[0].startswith(f"error: {aws_state}: deployment.resources.0.urn:")
    aws_refresh = _rewritten(tmp_path, DRIFT, "urn:pulumi:ibm::", "urn:pulumi:aws::")
    out = run_cli("status", "ibm", "--from", aws_refresh, STATE, "--now", NOW)
    assert out.code == 2
    assert out.err.splitlines()[0].startswith(
        f"error: {aws_refresh}: steps.0.urn: a resource of stack 'aws', not of stack 'ibm'"
    )


def test_another_projects_file_and_a_file_without_urns_are_refused(tmp_path: Path) -> None:
    other = _rewritten(tmp_path, PREVIEW, "::hypershell-gateways::", "::someone-else::")
    out = run_cli("status", "ibm", "--from", other, STATE, "--now", NOW)
    assert out.code == 2
    assert out.err.splitlines()[0].startswith(
        f"error: {other}: steps.0.urn: a resource of project 'someone-else', not"
        " 'hypershell-gateways': this file is another project's ("
    )
    path = tmp_path / "odd.json"
    path.write_text(json.dumps({"steps": [{"op": "same", "urn": "team-a"}]}), encoding="utf-8")
    out = run_cli("status", "ibm", "--from", str(path))
    assert out.code == 2
    assert out.err.splitlines()[0] == (
        f"error: {path}: steps.0.urn: not a Pulumi URN (urn:pulumi:<stack>::<project>::...)"
    )


# --- a preview alone (issue 21, item 11) ---------------------------------------------------


def test_a_preview_alone_lists_the_declared_gateways_and_what_it_changes() -> None:
    code, doc = status_json(PREVIEW)
    assert (code, doc["state"], doc["liveState"]) == (3, "out-of-sync", "none")
    rows = {g["name"]: (g["sync"], g["health"]) for g in doc["gateways"]}
    assert rows == {
        "batch-jobs": ("Synced", "Unknown"),  # declared (gateways/ibm), not changed
        "canary": ("OutOfSync", "Unknown"),
        "research": ("Synced", "Unknown"),
        "team-a": ("Synced", "Unknown"),
        "team-d": ("Missing", "Missing"),  # the preview creates it
    }
    assert [
        (c["name"], c["op"], c["source"], c["paths"]) for c in gateway(doc, "canary")["changes"]
    ] == [("canary-workload-deploy", "update", "git", ["spec.template.spec.containers[0].image"])]
    assert doc["otherChanges"] == []


def test_a_broken_parent_chain_is_read_from_the_urn_and_the_names() -> None:
    def urn(chain: str, name: str) -> str:
        return f"urn:pulumi:ibm::hypershell-gateways::{chain}::{name}"

    gw = "hypershell:gateway:Gateway"
    deploy = urn(f"{gw}$hypershell:gateway:Workload$kubernetes:apps/v1:Deployment", "team-a-x")
    cert = urn(f"{gw}$hypershell:gateway:Pki$tls:index/selfSignedCert:SelfSignedCert", "")
    tree = Tree([], gateways=["team", "team-pki"])
    # The part's suffix tells `team`'s CA from `team-pki`'s.
    assert tree.gateway_of(cert + "team-pki-ca") == "team"
    assert tree.gateway_of(cert + "team-pki-pki-ca") == "team-pki"
    assert tree.gateway_of(urn(f"{gw}$kubernetes:core/v1:Namespace", "team-pki-ns")) == "team-pki"
    assert tree.gateway_of(urn(f"{gw}$kubernetes:core/v1:Namespace", "team-ns")) == "team"
    # No gateway known by that name: the name before the part's suffix.
    assert Tree([]).gateway_of(deploy.replace("team-a-x", "new-one-workload-deploy")) == "new-one"
    assert Tree([]).gateway_of(urn("pulumi:providers:kubernetes", "roks-k8s")) is None


# --- the renewal window in a refresh (issue 21, item 12) ----------------------------------------


def test_a_refresh_inside_the_renewal_window_is_renewal_not_drift() -> None:
    refresh = json.loads(Path(CLEAN).read_text(encoding="utf-8"))
    renewing = [s for s in refresh["steps"] if s["op"] == "update"]
    # What the CLI prints: an update of readyForRenewal, nothing else.
    assert sorted(s["urn"].rsplit("::", 1)[-1] for s in renewing) == [
        "team-a-pki-client-cert",
        "team-a-pki-server-cert",
    ]
    assert {tuple(s["detailedDiff"]) for s in renewing} == {("readyForRenewal",)}
    built = _build(json.loads(Path(STATE).read_text(encoding="utf-8")), refresh)
    assert (state(built), built.out_of_sync, built.other_changes) == ("renewal-due", False, ())
    assert [c.name for c in built.due] == ["team-a-pki-client-cert", "team-a-pki-server-cert"]
    remedy = selfheal.remedy(built, True)
    assert (remedy.action, [r.argv() for r in remedy.renewals]) == (
        "reissue",
        [["team-a", "server-certificate", "client-certificate", "--stack", "ibm"]],
    )


def test_a_certificate_with_other_live_changes_is_drift_of_those_paths() -> None:
    resources = stack_resources({"x": None}) + gateway_resources(
        "x", exposed=False, cert_end="2026-12-10T00:00:00Z"
    )
    steps = [
        refresh_step(r, op="update", paths=["readyForRenewal", "subject.commonName"])
        if r["urn"].endswith("::x-pki-server-cert")
        else refresh_step(r)
        for r in resources
    ]
    built = _build(export(resources), digest(steps))
    (gw,) = built.gateways
    assert [(c.name, c.paths) for c in gw.changes] == [
        ("x-pki-server-cert", ("subject.commonName",))
    ]
    assert state(built) == "out-of-sync"


# --- unreadable input (issue 21, item 13) -----------------------------------------------------


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (None, "missing: the certificate's expiry is unknown"),
        ("next tuesday", "not an RFC 3339 time (such as 2027-01-01T00:00:00Z): the certificate's"),
        ({**SIG, "ciphertext": SECRET_TEXT}, "not an RFC 3339 time (such as 2027-01-01T00:00:00Z)"),
    ],
)
def test_a_certificate_whose_expiry_cannot_be_read_is_bad_input(
    tmp_path: Path, value: Any, reason: str
) -> None:
    document = json.loads(Path(STATE).read_text(encoding="utf-8"))
    resources = document["deployment"]["resources"]
    (index,) = [i for i, r in enumerate(resources) if r["urn"].endswith("::canary-pki-ca")]
    if value is None:
        del resources[index]["outputs"]["validityEndTime"]
    else:
        resources[index]["outputs"]["validityEndTime"] = value
    path = tmp_path / "state.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    out = run_cli("status", "ibm", "--from", str(path), "--now", NOW)
    assert (out.code, out.out) == (2, "")
    assert out.err.startswith(
        f"error: {path}: deployment.resources.{index}.outputs.validityEndTime: {reason}"
    )
    assert SECRET_TEXT not in out.err and "next tuesday" not in out.err
    # From a refresh, the step that holds the live state is named.
    refresh = json.loads(Path(CLEAN).read_text(encoding="utf-8"))
    (step_index,) = [
        i for i, s in enumerate(refresh["steps"]) if s["urn"].endswith("::canary-pki-ca")
    ]
    del refresh["steps"][step_index]["oldState"]["outputs"]["validityEndTime"]
    path = tmp_path / "refresh.json"
    path.write_text(json.dumps(refresh), encoding="utf-8")
    out = run_cli("status", "ibm", "--from", str(path), STATE, "--now", NOW)
    assert out.code == 2
    assert out.err.splitlines()[0] == (
        f"error: {path}: steps.{step_index}.oldState.outputs.validityEndTime: missing: the"
        " certificate's expiry is unknown"
    )


@pytest.mark.parametrize("depth", [100_000, 5_000])
def test_deeply_nested_json_is_bad_input_not_a_crash(tmp_path: Path, depth: int) -> None:
    path = tmp_path / "deep.json"
    path.write_text('{"steps": ' + "[" * depth + "]" * depth + "}", encoding="utf-8")
    out = run_cli("status", "ibm", "--from", str(path))
    assert (out.code, out.out) == (2, "")
    assert out.err.splitlines()[0] == (
        f"error: {path}: JSON nested too deeply to read; expected the JSON of `pulumi preview"
        " --json`, `pulumi refresh --preview-only --json` or `pulumi stack export`"
    )


def _calls(monkeypatch: pytest.MonkeyPatch, count: int) -> tuple[int, int]:
    """URN reads (``type_of``, ``name_of``, ``gateway_of`` and its parent steps) while building
    the status of ``count`` unexposed gateways (no address in the stack outputs: the case that
    once scanned every resource per gateway), and how many resources that is."""
    from gatewayctl.status import tree as tree_module

    calls = [0]

    def counted(function: Any) -> Any:
        def wrapper(*args: Any) -> Any:
            calls[0] += 1
            return function(*args)

        return wrapper

    names = [f"gw-{i:04d}" for i in range(count)]
    resources = stack_resources(dict.fromkeys(names))
    for name in names:
        resources += gateway_resources(name, exposed=False)
    checkpoint = export(resources)
    refresh = digest([refresh_step(r) for r in resources])
    with monkeypatch.context() as patch:
        for module in (core, tree_module):
            for function in ("type_of", "name_of", "parse_urn"):
                if hasattr(module, function):
                    patch.setattr(module, function, counted(getattr(module, function)))
        patch.setattr(Tree, "gateway_of", counted(Tree.gateway_of))
        _build(checkpoint, refresh)
    return calls[0], len(resources)


def test_the_status_reads_each_resource_a_bounded_number_of_times(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    small, small_resources = _calls(monkeypatch, 10)
    large, large_resources = _calls(monkeypatch, 80)
    # Linear: the same number of reads per resource (within the stack's own few resources),
    # never a pass over every resource per gateway.
    assert small / small_resources <= 20
    assert large / large_resources <= small / small_resources * 1.1


def test_a_deployed_gateway_no_longer_declared_is_out_of_sync(tmp_path: Path) -> None:
    document = json.loads(Path(STATE).read_text(encoding="utf-8"))
    document["deployment"]["resources"] += gateway_resources("retired")
    path = tmp_path / "state.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    code, doc = status_json(str(path), now="2026-11-01T00:00:00Z")
    assert (code, doc["state"]) == (3, "out-of-sync")
    retired = gateway(doc, "retired")
    assert (retired["sync"], retired["health"]) == ("OutOfSync", "Healthy")
    assert [(c["type"], c["name"], c["op"], c["source"]) for c in retired["changes"]] == [
        ("hypershell:gateway:Gateway", "retired", "delete", "git")
    ]
    assert {
        g["name"]: g["sync"] for g in doc["gateways"] if g["name"] != "retired"
    } == dict.fromkeys(("batch-jobs", "canary", "research", "team-a"), "Synced")

"""``python -m gatewayctl status``: sync, health, certificates and address per gateway from the
JSON the Pulumi CLI writes (fixtures built from pulumi/pulumi's apitype and preview-digest
types: ``tests.status_builders``)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from gatewayctl.status import certificates, core, health, inputs, selfheal, state
from gatewayctl.status.models import PreviewDigest, ResourceV3
from gatewayctl.status.tree import Tree, parse_urn
from tests.builders import copy_project, edited_config
from tests.hostile_helpers import run_cli
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
        "team-b": ("Synced", "Healthy"),
        "team-c": ("Missing", "Missing"),
    }
    team_a = gateway(doc, "team-a")
    assert [(c["name"], c["op"], c["source"], c["paths"]) for c in team_a["changes"]] == [
        ("team-a-pki-server-tls", "update", "live", ["data.tls.key"]),
        ("team-a-workload-deploy", "update", "live", ["spec.template.spec.containers[0].image"]),
    ]
    team_c = gateway(doc, "team-c")
    assert [(c["name"], c["op"], c["paths"]) for c in team_c["changes"]] == [
        ("team-c-exposure-route", "missing", [])
    ]
    assert [(p["name"], p["health"]) for p in team_c["parts"] if p["health"] != "Healthy"] == [
        ("team-c-exposure-route", "Missing")
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
        (name, "Synced", "Healthy") for name in ("batch-jobs", "team-a", "team-b", "team-c")
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
    code, doc = status_json(CLEAN, STATE, now="2026-11-19T23:59:59Z")
    assert (code, doc["state"], doc["certificatesDue"]) == (0, "synced", [])
    code, doc = status_json(CLEAN, STATE, now="2026-11-20T00:00:00Z")  # the window opens
    assert (code, len(doc["certificatesDue"])) == (5, 2)


def test_a_preview_shows_what_git_would_change_and_gateways_not_deployed() -> None:
    code, doc = status_json(PREVIEW, STATE)
    assert code == 3
    assert doc["liveState"] == "state"
    team_b = gateway(doc, "team-b")
    assert team_b["sync"] == "OutOfSync"
    assert [(c["op"], c["source"], c["paths"]) for c in team_b["changes"]] == [
        ("update", "git", ["spec.template.spec.containers[0].image"])
    ]
    team_d = gateway(doc, "team-d")
    assert (team_d["sync"], team_d["health"]) == ("Missing", "Missing")
    assert len(team_d["changes"]) == 12  # every custom resource of the new gateway, created
    assert {c["op"] for c in team_d["changes"]} == {"create"}


def test_the_table_names_every_gateway_and_the_details() -> None:
    out = run_cli("status", "ibm", "--from", DRIFT, "--from", STATE, "--now", NOW)
    assert out.code == 4
    for name in ("batch-jobs", "team-a", "team-b", "team-c"):
        assert f"│ {name} " in out.out
    assert (
        "team-c: kubernetes:route.openshift.io/v1:Route team-c-exposure-route (live)"
        " live object missing" in out.out
    )


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
    path.write_text(json.dumps({"version": 4, "deployment": {}}), encoding="utf-8")
    out = run_cli("status", "ibm", "--from", str(path))
    assert out.code == 2
    assert out.err.splitlines()[0] == (
        f"error: {path}: version: deployment version 4; this reads version 3"
        " (`pulumi stack export` of CLI 3.x)"
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


# --- the parent chain ----------------------------------------------------------------------------


def test_urn_names_may_hold_double_colons_and_the_parent_chain_finds_the_gateway() -> None:
    parsed = parse_urn("urn:pulumi:s::p::a:b:C$d:e:F::name::with::colons")
    assert parsed is not None and (parsed.type, parsed.name) == ("d:e:F", "name::with::colons")
    assert parse_urn("not-a-urn") is None
    resources = [ResourceV3.model_validate(r) for r in gateway_resources("x")]
    tree = Tree(resources)
    owners = {tree.gateway_of(r.urn) for r in resources}
    assert owners == {"x"}
    provider = ResourceV3.model_validate(stack_resources({})[2])
    assert Tree([*resources, provider]).gateway_of(provider.urn) is None


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
    assert certificates.certificate("u", "n", {}, {}, _now(NOW)) is None


# --- self-heal -------------------------------------------------------------------------------


def _build(checkpoint: dict[str, Any], refresh: dict[str, Any] | None = None) -> core.StackStatus:
    parsed = inputs.Inputs(
        checkpoint=inputs.UntypedDeployment.model_validate(checkpoint).deployment,
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
    assert [t.rsplit("::", 1)[-1] for t in remedy.targets] == [
        "y-pki-client-cert",
        "y-pki-server-cert",
    ]


def test_self_heal_is_read_from_the_stack_and_refused_for_the_operators(tmp_path: Path) -> None:
    root = copy_project(tmp_path / "project")
    code, doc = status_json(DRIFT, STATE, root=root)
    assert (doc["selfHeal"], doc["remedy"]) == (False, {"action": "none", "targets": []})
    with edited_config(root, "ibm") as config:
        config["hypershell-gateways:selfHeal"] = True
    code, doc = status_json(DRIFT, STATE, root=root)
    assert code == 4 and doc["selfHeal"] is True
    # Degraded, with team-a's certificates due: only the certificates are reissued.
    assert doc["remedy"]["action"] == "reissue"
    assert [t.rsplit("::", 1)[-1] for t in doc["remedy"]["targets"]] == [
        "team-a-pki-client-cert",
        "team-a-pki-server-cert",
    ]
    with edited_config(root, "aws") as config:
        config["hypershell-gateways:selfHeal"] = True
    out = run_cli("--root", str(root), "status", "aws", "--from", STATE)
    assert out.code == 2
    assert out.err.splitlines()[0] == (
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
    from gatewayctl import cli

    text = cli.STATUS_EPILOG
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
    from gatewayctl import render

    root = copy_project(tmp_path / "project")
    before = render.execute(render.prepare(root, "local")).files
    with edited_config(root, "local") as config:
        config["hypershell-gateways:selfHeal"] = True
    prepared = render.prepare(root, "local")
    assert prepared.loaded.config.self_heal is True
    assert render.execute(prepared).files == before  # a workflow setting, not a resource


def test_names_and_addresses_are_text_not_markup(tmp_path: Path) -> None:
    resources = stack_resources({"x": "[bold]grpcs://x:443[/bold]"}) + gateway_resources("x")
    path = tmp_path / "state.json"
    path.write_text(json.dumps(export(resources)), encoding="utf-8")
    out = run_cli("status", "ibm", "--from", str(path), "--now", NOW)
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

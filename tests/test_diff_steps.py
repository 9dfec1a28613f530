"""``gatewayctl diff --json``: the predicted step of every resource, by URN (issue 24)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from gatewayctl.diff.operations import predict
from gatewayctl.diff.steps import (
    JSON_FORMAT,
    document,
    is_document,
    predicted_steps,
    stack_urn,
    urn_of,
)
from gatewayctl.inputs.stackfile import PROJECT
from tests.diff_helpers import clone, declare, run_diff
from tests.support import rendered


@pytest.fixture(scope="module")
def local_plan() -> dict[str, Any]:
    return dict(json.loads(rendered("local").files["plan.json"]))


def test_urns_are_the_engines() -> None:
    # As the real engine named them (tests/fixtures/engine/local-change-preview.json, recorded
    # as the local stack: tests/e2e/test_e2e_b_drift.py, record).
    fixture = Path(__file__).parent / "fixtures" / "engine" / "local-change-preview.json"
    steps = json.loads(fixture.read_text())["steps"]
    deployment = next(s for s in steps if s["op"] == "update")
    stack = next(
        s for s in steps if s["urn"].endswith("::pulumi:pulumi:Stack::" + PROJECT + "-local")
    )
    assert stack["urn"] == stack_urn("local", PROJECT)
    parent = (
        "urn:pulumi:local::hypershell-gateways::hypershell:gateway:Gateway"
        "$hypershell:gateway:Workload::dev-workload"
    )
    resource = {
        "type": "kubernetes:apps/v1:Deployment",
        "name": "dev-workload-deploy",
        "parent": parent,
    }
    assert urn_of(resource, "local", PROJECT) == deployment["urn"]
    top = {"type": "hypershell:gateway:Gateway", "name": "dev", "parent": stack["urn"]}
    assert urn_of(top, "local", PROJECT) == (
        "urn:pulumi:local::hypershell-gateways::hypershell:gateway:Gateway::dev"
    )


def test_every_resource_has_one_step(local_plan: dict[str, Any]) -> None:
    head = copy.deepcopy(local_plan)
    resources = head["resources"]
    (deploy,) = [r for r in resources if r["name"] == "dev-workload-deploy"]
    deploy["inputs"]["spec"]["replicas"] = 2
    gone = [r for r in resources if r["name"] == "offline-workload-svc"]
    resources.remove(gone[0])
    added = copy.deepcopy(gone[0])
    added["name"] = "offline-workload-service"
    resources.append(added)
    steps = predicted_steps(
        local_plan, head, predict(local_plan, head), stack="local", project=PROJECT
    )
    by_name = {s.name: s for s in steps}
    assert len(steps) == len(local_plan["resources"]) + 2  # the stack's root, one created
    assert by_name[f"{PROJECT}-local"].op == "same"
    assert (by_name["dev-workload-deploy"].op, by_name["dev-workload-deploy"].because) == (
        "update",
        ("spec.replicas",),
    )
    assert by_name["offline-workload-svc"].op == "delete"
    assert by_name["offline-workload-service"].op == "create"
    others = {
        s.op
        for s in steps
        if s.name not in {"dev-workload-deploy", "offline-workload-svc", "offline-workload-service"}
    }
    assert others == {"same"}
    assert [s.urn for s in steps] == sorted(s.urn for s in steps)


def test_a_side_with_no_resources_creates_or_deletes_everything(local_plan: dict[str, Any]) -> None:
    created = predicted_steps({}, local_plan, [], stack="local", project=PROJECT)
    assert {s.op for s in created} == {"create"}
    assert len(created) == len(local_plan["resources"]) + 1
    deleted = predicted_steps(local_plan, {}, [], stack="local", project=PROJECT)
    assert {s.op for s in deleted} == {"delete"}
    assert predicted_steps({}, {}, [], stack="local", project=PROJECT) == ()


def test_diff_writes_the_steps_and_the_changed_objects(pristine: Path, tmp_path: Path) -> None:
    repo = clone(pristine, tmp_path / "repo")
    declare(repo, "local", "extra")
    out = repo / "build" / "steps.json"
    run = run_diff(repo, "local", "--base", "main", "--json", str(out))
    assert run.code == 3, run.err
    written = json.loads(out.read_text())
    assert is_document(out.read_text())
    assert written["format"] == JSON_FORMAT
    (stack,) = written["stacks"]
    assert stack["stack"] == "local"
    ops = {s["name"]: s["op"] for s in stack["steps"]}
    assert ops["extra"] == "create"
    assert {op for name, op in ops.items() if not name.startswith("extra")} == {"same"}
    assert {o["status"] for o in stack["objects"]} == {"added"}
    assert all("openshell-extra" in o["path"] for o in stack["objects"])
    assert run.result is not None
    assert written == document(run.result.diffs)


def test_diff_json_refuses_to_overwrite_another_file(pristine: Path, tmp_path: Path) -> None:
    repo = clone(pristine, tmp_path / "repo")
    out = repo / "notes.json"
    out.write_text('{"mine": true}\n')
    run = run_diff(repo, "local", "--base", "main", "--json", str(out))
    assert run.code == 2
    assert "--json" in run.err
    assert out.read_text() == '{"mine": true}\n'
    assert not is_document("not json") and not is_document("[]")


# --- a Secret's redacted data (the real engine's answer to "database host for pods") ---------


def test_a_change_of_a_secrets_redacted_data_is_predicted_an_update(tmp_path: Path) -> None:
    """The render redacts every Secret's data, so without its digest the diff saw no change
    where the engine updates the credentials Secret (tests/e2e/test_e2e_e_predictions.py,
    "database host for pods")."""
    from gatewayctl.diff.compare import compare
    from gatewayctl.diff.sides import Side
    from gatewayctl.engine import render
    from gatewayctl.resolve import preparation
    from tests.builders import copy_project, edited_config

    root = copy_project(tmp_path / "project")
    before = render.execute(preparation.prepare(root, "local"))
    with edited_config(root, "local") as config:
        config["hypershell-gateways:clusters"]["kind"]["database"]["host"] = "pg.example.com"
    after = render.execute(preparation.prepare(root, "local"))
    diff = compare("local", Side(files=before.files), Side(files=after.files))
    secrets = sorted(
        (o.name, o.op, o.because) for o in diff.operations if o.type.endswith(":Secret")
    )
    assert secrets == [
        (f"{name}-database-db-credentials", "update", ("stringData.(dataDigest)",))
        for name in ("dev-build", "dev", "offline")
    ]
    changed = sorted(o.path for o in diff.objects if o.kind == "Secret")
    assert changed == [
        f"manifests/kind/openshell-{name}/secret-openshell-gateway-db-credentials.yaml"
        for name in ("dev-build", "dev", "offline")
    ]
    # The manifests themselves read the same: their data is redacted.
    assert all(before.files[p] == after.files[p] for p in changed)


def test_no_secret_of_the_stack_reaches_a_kubernetes_secret() -> None:
    """What ``data_digest`` hashes is never a ``clusterSecrets`` value: every stack's Secrets
    hold plain config and the offline placeholders only (``local`` has plaintext secrets)."""
    from gatewayctl.diff.sides import stack_secrets
    from gatewayctl.engine.render import _revealed
    from tests.support import ROOT

    checked = 0
    for stack in ("aws", "ibm", "local"):
        result = rendered(stack)
        secrets = stack_secrets(ROOT, stack)
        assert secrets or stack != "local"
        for resource in result.recording.resources.values():
            if resource.type != "kubernetes:core/v1:Secret":
                continue
            text = json.dumps(_revealed(resource.inputs), default=str)
            checked += 1
            assert not [s for s in secrets if s in text], resource.name
    assert checked > 20

"""Rotation by pull request (issue 45 items 1 and 5) through the real engine, on
``e2e-local``'s ``dev`` gateway: its declaration's ``spec.rotation.databasePassword`` raised,
the offline prediction (``gatewayctl.diff``: the operations and steps ``diff`` reports) made
from the two renders, then the real ``preview`` and ``up``. The engine's steps must be exactly
the predicted ones; the tenant's database then accepts the new password and refuses the old
one, and the Secret the pod reads holds it; nothing else changed. Then ``spec.rotation.kek``
the same way: the KEK's bytes replaced through random's ``keepers`` and its create-only Secret
through ``replace_with`` (components/rotation.py), deleted first. Then ``spec.rotation.ca``:
the CA key under a new name, the CA and both leaf certificates reissued.

The counters stay raised at the end: the state is the declaration's, and lowering a counter is
what ``diff`` refuses (it would rotate again, not restore). Only test_e2e_z_teardown.py runs
after this file; it destroys what the state holds.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

import yaml

from components import naming
from components.credentials import KEK_KEY
from e2e.cluster import Cluster
from e2e.engine import Engine, Result
from e2e.project import E2EProject
from gatewayctl.diff.operations import predict
from gatewayctl.diff.rotation_risks import changes
from gatewayctl.diff.steps import predicted_steps
from gatewayctl.inputs.stackfile import PROJECT
from tests.e2e.databases import LaneDatabases
from tests.e2e.lane import (
    SHOW_ALL,
    Deployed,
    engine_ops,
    figure,
    pulumi,
    refresh_changes_nothing,
    rendered,
)
from tests.e2e.test_e2e_a_postgres import assert_password_rotated, credentials
from tests.e2e.test_e2e_a_rotation import signed_by, tls

GATEWAY = "dev"
NAMESPACE = "openshell-dev"


def raise_counter(project: E2EProject, counter: str) -> int:
    """``spec.rotation.<counter>`` of the declaration one higher; the new value."""
    path = project.declarations / f"{GATEWAY}.yaml"
    document = yaml.safe_load(path.read_text())
    spec = document.get("spec") or {}
    rotation = spec.get("rotation") or {}
    rotation[counter] = int(rotation.get(counter, 0)) + 1
    document["spec"] = {**spec, "rotation": rotation}
    project.write_declaration(GATEWAY, document)
    return int(rotation[counter])


@dataclass(frozen=True)
class Prediction:
    steps: dict[str, str]
    """The predicted non-``same`` step of each URN (what ``gatewayctl diff --json`` lists)."""
    preview_only: frozenset[str]
    """URNs predicted as updates only because their provider is unknown in a preview (the
    owner's provider, logging in with the new password): the ``up`` knows the provider's new
    configuration and diffs them, finding nothing to do."""
    rotations: list[str]
    """The report's rotation counters (gateway, counter, old -> new)."""


def prediction(project: E2EProject, counter: str) -> Prediction:
    """The counter raised in the project's declaration, and the offline diff's prediction."""
    base = json.loads(rendered(project).files["plan.json"])
    raise_counter(project, counter)
    head = json.loads(rendered(project).files["plan.json"])
    operations = predict(base, head)
    steps = predicted_steps(base, head, operations, stack=project.stack, project=PROJECT)
    return Prediction(
        steps={s.urn: s.op for s in steps if s.op != "same"},
        preview_only=frozenset(
            s.urn for s in steps if s.op == "update" and s.because == ("provider",)
        ),
        rotations=[f"{c.gateway}:{c.counter}:{c.old}->{c.new}" for c in changes(base, head)],
    )


def up_ops(up: Result) -> dict[str, str]:
    """The engine's operation per URN in an ``up``'s events, as :func:`engine_ops` reads a
    preview's steps (a ``ResourcePreEvent`` per step)."""
    steps = [
        {
            "urn": e["resourcePreEvent"]["metadata"]["urn"],
            "op": e["resourcePreEvent"]["metadata"]["op"],
        }
        for e in up.events()
        if "resourcePreEvent" in e
    ]
    return {u: op for u, op in engine_ops({"steps": steps}).items() if op != "same"}


def judged(project: E2EProject, engine: Engine, env: dict[str, str], ours: Prediction) -> Result:
    """The real preview lists exactly the predicted steps; the ``up`` the same, but for the
    updates a preview shows only for an unknown provider (:attr:`Prediction.preview_only`)."""
    preview = pulumi(engine, project, env, "preview", "--json", *SHOW_ALL)
    theirs = {u: op for u, op in engine_ops(preview.json()).items() if op != "same"}
    assert theirs == ours.steps, (theirs, ours.steps)
    up = pulumi(engine, project, env, "up", "--yes", "--skip-preview", "--json", *SHOW_ALL)
    done = {u: op for u, op in ours.steps.items() if u not in ours.preview_only}
    assert up_ops(up) == done, (up_ops(up), done)
    return up


def short(ops: dict[str, str]) -> dict[str, str]:
    return {urn.rsplit("::", 1)[-1]: op for urn, op in ops.items()}


def pod_hash(cluster: Cluster) -> str:
    deployment = cluster.get("deployment", naming.GATEWAY, namespace=NAMESPACE)
    annotations = deployment["spec"]["template"]["metadata"]["annotations"]
    return str(annotations[naming.CONFIG_HASH_ANNOTATION])


def live_secrets(cluster: Cluster) -> dict[str, dict[str, Any]]:
    """Every Secret of the gateway's namespace, by name: its data and uid."""
    listed = cluster.get("secrets", namespace=NAMESPACE)["items"]
    return {
        s["metadata"]["name"]: {"data": s.get("data"), "uid": s["metadata"]["uid"]} for s in listed
    }


def test_a_database_password_rotation_by_pull_request(
    deployed: dict[str, Deployed],
    databases: LaneDatabases,
    engine: Engine,
    cluster: Cluster,
    kube_env: dict[str, str],
) -> None:
    project = deployed["e2e-local"].project
    before = credentials(cluster, project)["gw_dev"]
    secrets_before, hash_before = live_secrets(cluster), pod_hash(cluster)
    ours = prediction(project, "databasePassword")
    assert ours.rotations == ["dev:databasePassword:0->1"]
    # The revoke Grant: an update in the preview (its provider, the owner's, logs in with the
    # new password, unknown until the up), nothing to do in the up (measured).
    assert short({u: "" for u in ours.preview_only}) == {"dev-database-db-revoke-public": ""}
    assert short(ours.steps) == {
        "dev-database-db-password": "replace",
        "dev-database-db-role": "update",
        "dev-database-db-owner": "update",
        "dev-database-db-revoke-public": "update",
        "dev-database-db-credentials": "update",
        "dev-workload-deploy": "update",
    }
    up = judged(project, engine, kube_env, ours)

    after = credentials(cluster, project)["gw_dev"]
    assert_password_rotated(databases, project, before, after)
    # The pod rolls (its hash covers the URI); no other Secret of the namespace changed.
    assert pod_hash(cluster) != hash_before
    secrets_after = live_secrets(cluster)
    assert set(secrets_after) == set(secrets_before)
    assert [n for n in secrets_after if secrets_after[n] != secrets_before[n]] == [naming.DB_SECRET]
    refresh_changes_nothing(engine, project, kube_env)
    figure(f"e2e-local: db password rotated by its counter: {json.dumps(up.summary())}")


def test_a_kek_rotation_by_pull_request_replaces_its_secret_delete_first(
    deployed: dict[str, Deployed], engine: Engine, cluster: Cluster, kube_env: dict[str, str]
) -> None:
    project = deployed["e2e-local"].project
    secret = cluster.get("secret", naming.KEK_SECRET, namespace=NAMESPACE)
    key_before, hash_before = secret["data"][KEK_KEY], pod_hash(cluster)
    ours = prediction(project, "kek")
    assert ours.rotations == ["dev:kek:0->1"] and not ours.preview_only
    assert short(ours.steps) == {
        "dev-workload-kek-bytes": "replace",
        "dev-workload-kek": "replace-delete-first",
        "dev-workload-deploy": "update",
    }
    up = judged(project, engine, kube_env, ours)
    after = cluster.get("secret", naming.KEK_SECRET, namespace=NAMESPACE)
    assert after["metadata"]["uid"] != secret["metadata"]["uid"]
    key_after = after["data"][KEK_KEY]
    assert key_after != key_before
    assert len(base64.b64decode(base64.b64decode(key_after))) == 32
    assert pod_hash(cluster) != hash_before
    refresh_changes_nothing(engine, project, kube_env)
    figure(f"e2e-local: KEK rotated by its counter: {json.dumps(up.summary())}")


def test_a_ca_rotation_by_pull_request_is_a_new_key_and_reissued_certificates(
    deployed: dict[str, Deployed], engine: Engine, cluster: Cluster, kube_env: dict[str, str]
) -> None:
    """``spec.rotation.ca``: the key under its new name (``-pki-ca-key-r1``) created, the CA
    and both leaf certificates replaced, the old key deleted last; the new leaves verify
    against the new CA only."""
    project = deployed["e2e-local"].project
    before = {n: tls(cluster, n) for n in (naming.SERVER_TLS_SECRET, naming.CLIENT_TLS_SECRET)}
    hash_before = pod_hash(cluster)
    ours = prediction(project, "ca")
    assert ours.rotations == ["dev:ca:0->1"] and not ours.preview_only
    assert short(ours.steps) == {
        "dev-pki-ca-key-r1": "create",
        "dev-pki-ca-key": "delete",
        "dev-pki-ca": "replace",
        "dev-pki-server-cert": "replace",
        "dev-pki-client-cert": "replace",
        "dev-pki-server-tls": "update",
        "dev-pki-client-tls": "update",
        "dev-workload-deploy": "update",
    }
    up = judged(project, engine, kube_env, ours)
    after = {name: tls(cluster, name) for name in before}
    new_ca = after[naming.SERVER_TLS_SECRET]["ca.crt"]
    assert new_ca != before[naming.SERVER_TLS_SECRET]["ca.crt"]
    for name, certs in after.items():
        assert certs["ca.crt"] == new_ca, name
        assert signed_by(certs["tls.crt"], new_ca), name
        assert not signed_by(certs["tls.crt"], before[name]["ca.crt"]), name
    assert pod_hash(cluster) != hash_before
    refresh_changes_nothing(engine, project, kube_env)
    figure(f"e2e-local: tenant CA rotated by its counter: {json.dumps(up.summary())}")

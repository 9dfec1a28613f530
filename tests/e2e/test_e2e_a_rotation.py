"""KEK rotation by the documented command (docs/running.md, "Rotating keys"): ``pulumi up
--replace`` of the gateway's ``-workload-kek-bytes`` and ``-workload-kek`` through the real
engine, pulumi-kubernetes and the random stand-in, on ``e2e-local``'s ``dev`` gateway (the
default credential driver)."""

from __future__ import annotations

import base64
import json
from typing import Any

from components import naming
from components.credentials import KEK_KEY
from e2e.cluster import Cluster
from e2e.engine import Engine
from tests.e2e.lane import Deployed, export, figure, pulumi, refresh_changes_nothing, up_summary

NAMESPACE = "openshell-dev"


def live_key(cluster: Cluster) -> str:
    secret = cluster.get("secret", naming.KEK_SECRET, namespace=NAMESPACE)
    return base64.b64decode(secret["data"][KEK_KEY]).decode()


def pod_hash(cluster: Cluster) -> str:
    deployment = cluster.get("deployment", naming.GATEWAY, namespace=NAMESPACE)
    return str(
        deployment["spec"]["template"]["metadata"]["annotations"][naming.CONFIG_HASH_ANNOTATION]
    )


def test_the_kek_rotates_with_its_secret_and_rolls_the_pod(
    deployed: dict[str, Deployed], engine: Engine, cluster: Cluster, kube_env: dict[str, str]
) -> None:
    project = deployed["e2e-local"].project
    resources: list[dict[str, Any]] = export(engine, project, kube_env)["deployment"]["resources"]
    urns = {r["urn"].rsplit("::", 1)[-1]: r["urn"] for r in resources}
    key_before, hash_before = live_key(cluster), pod_hash(cluster)
    assert len(base64.b64decode(key_before)) == 32

    up = pulumi(
        engine,
        project,
        kube_env,
        "up",
        "--yes",
        "--skip-preview",
        "--json",
        f"--replace={urns['dev-workload-kek-bytes']}",
        f"--replace={urns['dev-workload-kek']}",
    )
    summary = up_summary(up)
    changed = [
        (e["resOutputsEvent"]["metadata"]["op"], e["resOutputsEvent"]["metadata"]["urn"])
        for e in up.events()
        if e.get("resOutputsEvent", {}).get("metadata", {}).get("op") not in (None, "same")
    ]
    # The bytes and the Secret replaced; the Deployment updated in place (its hash), not
    # replaced: nothing of its inputs is made from the Secret (components/workload.py).
    assert (summary.get("replace"), summary.get("update")) == (2, 1), (summary, changed)
    # Deleted before it is made again (components/workload.py), never created onto itself:
    # the engine's steps for the Secret, in the order it started them.
    secret_ops = [
        e["resourcePreEvent"]["metadata"]["op"]
        for e in up.events()
        if e.get("resourcePreEvent", {}).get("metadata", {}).get("urn") == urns["dev-workload-kek"]
    ]
    assert "delete-replaced" in secret_ops and "create-replacement" in secret_ops, secret_ops
    assert secret_ops.index("delete-replaced") < secret_ops.index("create-replacement"), secret_ops

    key_after = live_key(cluster)
    assert key_after != key_before and len(base64.b64decode(key_after)) == 32
    shown = pulumi(engine, project, kube_env, "stack", "export", "--show-secrets", program=False)
    (kek_bytes,) = [
        r
        for r in shown.json()["deployment"]["resources"]
        if r["urn"] == urns["dev-workload-kek-bytes"]
    ]
    # A secret output in a `--show-secrets` export: its JSON text under "plaintext"
    # (pulumi/pulumi sdk/go/common/apitype/core.go, SecretV1).
    assert json.loads(kek_bytes["outputs"]["base64"]["plaintext"]) == key_after
    # The pod template's hash covers the key: the Deployment rolled.
    assert pod_hash(cluster) != hash_before
    refresh_changes_nothing(engine, project, kube_env)
    figure(
        f"e2e-local: KEK rotated with up --replace of its bytes and Secret: {json.dumps(summary)}"
    )

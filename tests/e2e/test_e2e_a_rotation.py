"""Key rotation by the documented commands (docs/running.md, "Rotating keys"), through the real
engine, pulumi-kubernetes and the tls and random stand-ins, on ``e2e-local``'s ``dev`` gateway
(the default credential driver): ``pulumi up --replace`` of its ``-pki-ca-key`` (the tenant CA)
and of its ``-workload-kek-bytes`` with ``-workload-kek`` (the KEK). The database password's is
in test_e2e_a_postgres.py."""

from __future__ import annotations

import base64
import json
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric import ec

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


def tls(cluster: Cluster, name: str) -> dict[str, x509.Certificate]:
    data = cluster.get("secret", name, namespace=NAMESPACE)["data"]
    return {
        key: x509.load_pem_x509_certificate(base64.b64decode(data[key]))
        for key in ("ca.crt", "tls.crt")
    }


def signed_by(cert: x509.Certificate, ca: x509.Certificate) -> bool:
    public = ca.public_key()
    assert isinstance(public, ec.EllipticCurvePublicKey)
    assert cert.signature_hash_algorithm is not None
    try:
        public.verify(
            cert.signature, cert.tbs_certificate_bytes, ec.ECDSA(cert.signature_hash_algorithm)
        )
    except InvalidSignature:
        return False
    return True


def test_a_new_tenant_ca_reissues_both_certificates_and_rolls_the_pod(
    deployed: dict[str, Deployed], engine: Engine, cluster: Cluster, kube_env: dict[str, str]
) -> None:
    project = deployed["e2e-local"].project
    resources: list[dict[str, Any]] = export(engine, project, kube_env)["deployment"]["resources"]
    (ca_key,) = [r["urn"] for r in resources if r["urn"].endswith("::dev-pki-ca-key")]
    before = {
        name: tls(cluster, name) for name in (naming.SERVER_TLS_SECRET, naming.CLIENT_TLS_SECRET)
    }
    hash_before = pod_hash(cluster)
    up = pulumi(
        engine, project, kube_env, "up", "--yes", "--skip-preview", "--json", f"--replace={ca_key}"
    )
    summary = up_summary(up)
    # The key, the CA and both leaf certificates replaced (their requests are made from the
    # leaf keys: unchanged); both TLS Secrets and the Deployment updated (docs/running.md's
    # table; predicted in test_e2e_e_predictions.py, "CA rotation").
    assert (summary.get("replace"), summary.get("update")) == (4, 3), summary
    after = {name: tls(cluster, name) for name in before}
    new_ca = after[naming.SERVER_TLS_SECRET]["ca.crt"]
    assert new_ca != before[naming.SERVER_TLS_SECRET]["ca.crt"]
    for name, certs in after.items():
        assert certs["ca.crt"] == new_ca, name
        assert signed_by(certs["tls.crt"], new_ca), name
        assert not signed_by(certs["tls.crt"], before[name]["ca.crt"]), name
    assert pod_hash(cluster) != hash_before
    refresh_changes_nothing(engine, project, kube_env)
    figure(f"e2e-local: tenant CA rotated with up --replace of its key: {json.dumps(summary)}")


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

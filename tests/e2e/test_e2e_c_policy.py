"""The policy pack under the real CLI: `pulumi preview --policy-pack`.

The CLI runs a Python pack through the Python language host's ``RunPlugin``, which starts
``python -u -m pulumi.policy <args…> <pack directory>`` in the pack's virtualenv (pulumi/pulumi
sdk/python/cmd/pulumi-language-python/main.go, ``RunPlugin``, analyzer kind: "we need to send
the program directory as an argument _last_"). That host cannot be built here (e2e/engine.py),
so the pack is given to the CLI as an executable analyzer that runs exactly that command
(pulumi/pulumi pkg/resource/plugin/analyzer_plugin.go: a ``--policy-pack`` path that is an
executable file is launched as a binary analyzer plugin with the engine's address).

What the pack sees here is what the real engine registers: the Kubernetes objects, the
components, the providers and the tls, random and keycloak resources (the lane's stand-in
plugins, e2e/providers), so server-cert-covers-host reads each exposed gateway's real
CertRequest and keycloak-public-client each real client; the postgresql resources are answered
by the offline mocks (e2e/engine.py) and never reach the analyzer, so the policy that reads
them (postgresql-admin-verify-full) is judged only by the offline policy tests.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from e2e.cluster import Cluster, KubectlError
from e2e.engine import Engine, Result
from e2e.project import ROOT
from tests.e2e.conftest import E2E_STACKS
from tests.e2e.lane import Deployed, pulumi

POLICY = ROOT / "policy"


@pytest.fixture(scope="module")
def analyzer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("policy") / "hypershell-policy-analyzer"
    path.write_text(
        "#!/bin/sh\n"
        "# What pulumi-language-python's RunPlugin runs for a Python policy pack.\n"
        f'exec "{sys.executable}" -u -m pulumi.policy "$@" "{POLICY}"\n'
    )
    path.chmod(0o755)
    return path


def _preview(
    engine: Engine, deployed: Deployed, env: dict[str, str], analyzer: Path, source: str
) -> Result:
    return pulumi(
        engine,
        deployed.project,
        env,
        "preview",
        "--policy-pack",
        str(analyzer),
        "--policy-pack-config",
        str(POLICY / "config" / f"{source}.json"),
        check=False,
    )


@pytest.mark.parametrize("stack", sorted(E2E_STACKS))
def test_committed_stacks_pass_the_pack(
    deployed: dict[str, Deployed],
    engine: Engine,
    kube_env: dict[str, str],
    analyzer: Path,
    stack: str,
) -> None:
    source = E2E_STACKS[stack][0]
    result = _preview(engine, deployed[stack], kube_env, analyzer, source)
    assert "hypershell" in result.stdout  # the pack ran and reported
    violated = set(re.findall(r"\[mandatory\]\s+(\S+)\s+\((\S+): (\S+)\)", result.stdout))
    # Every exposed gateway's certificate request reaches the analyzer (the stand-in tls
    # plugin), so server-cert-covers-host judges it here too, and nothing is violated.
    assert violated == set(), result.stdout[-4000:]
    assert result.returncode == 0


def test_mandatory_violation_fails_the_preview_before_any_change(
    deployed: dict[str, Deployed],
    engine: Engine,
    kube_env: dict[str, str],
    analyzer: Path,
    cluster: Cluster,
) -> None:
    project = deployed["e2e-local"].project
    # A registry outside policy/config/local.json's allowedRegistries: `validate` accepts any
    # OCI reference, the mandatory `allowed-image-registries` policy refuses it.
    path = project.write_declaration(
        "evil",
        {
            "apiVersion": "hypershell.redhat.io/v1alpha1",
            "kind": "Gateway",
            "metadata": {"name": "evil"},
            "spec": {"images": {"gateway": "registry.evil.example/openshell/gateway:1.0"}},
        },
    )
    try:
        result = _preview(engine, deployed["e2e-local"], kube_env, analyzer, "local")
    finally:
        path.unlink()
    assert result.returncode != 0
    assert "allowed-image-registries" in result.stdout
    assert "mandatory" in result.stdout.lower()
    with pytest.raises(KubectlError):
        cluster.get("namespace", "openshell-evil")

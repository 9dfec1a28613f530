"""What the real providers and engine do that the mock runtime does not.

Each test pins one provider setting or program shape that the real engine depends on; the
source each relies on is cited beside the code in ``components/cluster.py`` and
``gatewayctl/engine/program.py``.
"""

from __future__ import annotations

import json
import runpy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml

from gatewayctl.engine import drain, program, render
from gatewayctl.engine.offline import RecordedResource, Recording
from gatewayctl.errors import InvalidInputError
from gatewayctl.resolve import preparation
from tests.builders import PREFIX, cluster, write_gateway, write_stack
from tests.support import ROOT, STACKS, rendered

K8S_PROVIDER = "pulumi:providers:kubernetes"


def _write_stack(root: Path, stack: str, gateways: list[str], **changes: Any) -> None:
    """Stack ``stack`` on the cluster ``shared`` (context ``prod``), with ``gateways``."""
    shared = cluster(kubeconfigContext="prod", database={"host": "db.example.com"}, **changes)
    write_stack(
        root,
        stack=stack,
        clusters={"shared": shared},
        secrets={"shared": {"dbAdminPassword": "x"}},
    )
    for name in gateways:
        write_gateway(root, name, stack=stack)


def _cluster_scoped(recording: Recording) -> dict[tuple[str, str], RecordedResource]:
    """Cluster-scoped Kubernetes objects by (kind, name)."""
    return {
        (r.inputs["kind"], r.inputs["metadata"]["name"]): r
        for r in recording.resources.values()
        if r.type.startswith("kubernetes:")
        and r.custom
        and not r.inputs.get("metadata", {}).get("namespace")
    }


# --- shared cluster objects -----------------------------------------------------------------


def test_two_stacks_on_one_cluster_share_only_patches(tmp_path: Path) -> None:
    # pulumi-kubernetes >= 4.29 creates client-side: an object both stacks create would be
    # AlreadyExists for the second. Only server-side apply Patches may be shared.
    _write_stack(tmp_path, "east-a", ["a"])
    _write_stack(tmp_path, "east-b", ["b"])
    first = _cluster_scoped(render.execute(preparation.prepare(tmp_path, "east-a")).recording)
    second = _cluster_scoped(render.execute(preparation.prepare(tmp_path, "east-b")).recording)

    shared = sorted(set(first) & set(second))

    assert shared == [("ClusterRole", "openshell-gateway-node-reader")]
    for key in shared:
        for resource in (first[key], second[key]):
            assert resource.type == "kubernetes:rbac.authorization.k8s.io/v1:ClusterRolePatch"
            assert resource.retain_on_delete is True
            annotations = resource.inputs["metadata"]["annotations"]
            assert annotations == {"pulumi.com/patchForce": "true"}
        assert first[key].inputs == second[key].inputs
    # Each tenant's own cluster-scoped objects are its own.
    assert sorted(set(first) - set(second)) == [
        ("ClusterRoleBinding", "openshell-gateway-node-reader-openshell-a"),
        ("Namespace", "openshell-a"),
    ]


@pytest.mark.parametrize("stack", STACKS)
def test_no_committed_stack_creates_the_shared_cluster_role(stack: str) -> None:
    types = {r.type for r in rendered(stack).recording.resources.values()}
    assert "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole" not in types
    assert "kubernetes:rbac.authorization.k8s.io/v1:ClusterRolePatch" in types


# --- the Kubernetes provider's settings -----------------------------------------------------


@pytest.mark.parametrize("stack", STACKS)
def test_config_maps_and_secrets_update_in_place(stack: str) -> None:
    providers = rendered(stack).recording.of_type(K8S_PROVIDER)
    assert providers
    for provider in providers:
        # Provider inputs travel as JSON strings, as the Kubernetes SDK sends them.
        assert provider.inputs["enableConfigMapMutable"] == "true"
        assert provider.inputs["enableSecretMutable"] == "true"
        assert provider.inputs["deleteUnreachable"] == "false"


def test_delete_unreachable_is_set_per_cluster(tmp_path: Path) -> None:
    _write_stack(tmp_path, "gone", ["a"], deleteUnreachable=True)

    recording = render.execute(preparation.prepare(tmp_path, "gone")).recording

    [provider] = recording.of_type(K8S_PROVIDER)
    assert provider.inputs["deleteUnreachable"] == "true"


def test_delete_unreachable_must_be_a_boolean(tmp_path: Path) -> None:
    _write_stack(tmp_path, "gone", ["a"], deleteUnreachable="yes")

    with pytest.raises(InvalidInputError) as caught:
        preparation.prepare(tmp_path, "gone")

    assert [str(p) for p in caught.value.problems] == [
        "Pulumi.gone.yaml: hypershell-gateways:clusters.shared.deleteUnreachable:"
        " Input should be a valid boolean"
    ]


# --- clusterSecrets are checked before anything is registered ---------------------------------


class _Mocks(pulumi.runtime.Mocks):
    def __init__(self) -> None:
        self.registered: list[str] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.registered.append(args.typ)
        return f"{args.name}-id", dict(args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[Any]]:
        return {}, []


@pytest.mark.parametrize(
    ("secrets", "expected"),
    [
        (
            {},
            "Pulumi.s.yaml: hypershell-gateways:clusterSecrets.shared: missing; set it with"
            " `pulumi config set --stack s --secret --path"
            " 'clusterSecrets.shared.dbAdminPassword'`",
        ),
        (
            {"shared": {"dbAdminPassword": 5}},
            "Pulumi.s.yaml: hypershell-gateways:clusterSecrets.shared.dbAdminPassword:"
            " Input should be a valid string",
        ),
        (
            ["x"],
            "Pulumi.s.yaml: hypershell-gateways:clusterSecrets: expected a mapping of cluster"
            " name to its secrets, found list",
        ),
    ],
    ids=["missing-entry", "wrong-type", "not-a-mapping"],
)
def test_the_program_raises_before_registering_anything(
    tmp_path: Path, secrets: Any, expected: str
) -> None:
    # Under the real CLI a problem raised inside an apply is an "unhandled exception" with a
    # traceback; raised from main() it becomes a RunError (``__main__.py``): one clean message.
    _write_stack(tmp_path, "s", ["a"])
    mocks = _Mocks()
    pulumi.runtime.set_mocks(mocks, project="hypershell-gateways", stack="s", preview=False)
    config = yaml.safe_load((tmp_path / "Pulumi.s.yaml").read_text())["config"]
    config[f"{PREFIX}clusterSecrets"] = secrets
    pulumi.runtime.set_all_config(
        {k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()},
        [f"{PREFIX}clusterSecrets"],
    )
    try:
        with pytest.raises(InvalidInputError) as caught:
            program.main(tmp_path)
    finally:
        pulumi.runtime.set_all_config({}, [])

    assert [str(p) for p in caught.value.problems] == [expected]
    assert mocks.registered == []


def test_main_module_turns_invalid_input_into_a_run_error() -> None:
    # The Pulumi language host prints a RunError's message alone, without a traceback
    # (pulumi/pulumi sdk/python/lib/pulumi/errors.py ``RunError``).
    mocks = _Mocks()
    pulumi.runtime.set_mocks(mocks, project="hypershell-gateways", stack="local", preview=False)
    config = yaml.safe_load((ROOT / "Pulumi.local.yaml").read_text())["config"]
    config[f"{PREFIX}clusterSecrets"] = {"kind": {}}
    pulumi.runtime.set_all_config(
        {k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()},
        [f"{PREFIX}clusterSecrets"],
    )
    try:
        with pytest.raises(pulumi.RunError) as caught:
            runpy.run_path(str(ROOT / "__main__.py"))
        # The entry point put the linear output drain in the SDK's place (tests/test_drain.py).
        assert pulumi.runtime.stack.wait_for_rpcs is drain.wait_for_rpcs
    finally:
        drain.uninstall()
        pulumi.runtime.set_all_config({}, [])

    assert str(caught.value) == (
        "invalid stack input:\n"
        "Pulumi.local.yaml: hypershell-gateways:clusterSecrets.kind.dbAdminPassword:"
        " required field is missing"
    )
    assert mocks.registered == []


def test_the_real_program_does_not_load_the_offline_engine() -> None:
    # The offline engine reads Pulumi SDK internals (the wire form of secrets): an SDK upgrade
    # that renames them may break the offline render, never a real `pulumi up`.
    code = (
        "import sys, gatewayctl.engine.program;"
        " print(sorted(m for m in sys.modules if 'offline' in m))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=Path(__file__).resolve().parent.parent,
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout == "[]\n"

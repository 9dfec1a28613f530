"""Scale-out: stacks selecting from a shared inventory; Pulumi Kubernetes Operator Stacks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from stacks import cli, inventory, operator, render
from stacks.errors import InvalidInputError
from stacks.loader import load_stack
from tests.conftest import ROOT, shared_or_skip

PREFIX = "hypershell-gateways:"
INVENTORY = "inventory/gateways"


def cluster(domain: str) -> dict[str, Any]:
    return {
        "capabilities": {"openshift": True},
        "ingress": {"mode": "route"},
        "baseDomain": domain,
        "database": {"adminHost": "db.example.com", "adminUser": "admin", "host": "db.example.com"},
    }


def write_stack(root: Path, name: str, clusters: list[str], labels: dict[str, str] | None) -> None:
    config: dict[str, Any] = {
        f"{PREFIX}declarationsDir": INVENTORY,
        f"{PREFIX}clusters": {c: cluster(f"{c}.example.com") for c in clusters},
        f"{PREFIX}clusterSecrets": {c: {"dbAdminPassword": "x"} for c in clusters},
    }
    if labels is not None:
        config[f"{PREFIX}selector"] = {"matchLabels": labels}
    (root / f"Pulumi.{name}.yaml").write_text(yaml.safe_dump({"config": config}))


def write_gateway(root: Path, name: str, cluster_name: str, labels: dict[str, str]) -> str:
    path = root / INVENTORY / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "apiVersion": "hypershell.redhat.io/v1alpha1",
        "kind": "Gateway",
        "metadata": {"name": name, "labels": labels},
        "spec": {"cluster": cluster_name},
    }
    path.write_text(yaml.safe_dump(document))
    return f"{INVENTORY}/{name}.yaml"


@pytest.fixture
def fleet(tmp_path: Path) -> Path:
    """Two clusters split over three stacks: gold and standard tenants on east, all of west."""
    write_stack(tmp_path, "east-gold", ["east"], {"tier": "gold"})
    write_stack(tmp_path, "east-standard", ["east"], {"tier": "standard"})
    write_stack(tmp_path, "west", ["west"], {})
    write_gateway(tmp_path, "a", "east", {"tier": "gold"})
    write_gateway(tmp_path, "b", "east", {"tier": "standard"})
    write_gateway(tmp_path, "c", "west", {"tier": "gold"})
    write_gateway(tmp_path, "d", "west", {})
    return tmp_path


def names(root: Path, stack: str) -> list[str]:
    return [g.name for g in load_stack(root, stack).gateways]


def test_each_stack_takes_its_clusters_and_labels(fleet: Path) -> None:
    assert names(fleet, "east-gold") == ["a"]
    assert names(fleet, "east-standard") == ["b"]
    assert names(fleet, "west") == ["c", "d"]
    assert inventory.coverage_problems(fleet, ["west"]) == []


def test_a_gateway_taken_by_no_stack_is_reported(fleet: Path) -> None:
    source = write_gateway(fleet, "e", "east", {"tier": "bronze"})
    problems = inventory.coverage_problems(fleet, ["east-gold"])
    assert [(p.path, p.field, p.message) for p in problems] == [
        (
            source,
            "metadata.labels",
            f"taken by no stack of the inventory {INVENTORY}"
            " (stacks: east-gold, east-standard, west)",
        )
    ]


def test_a_gateway_taken_by_two_stacks_is_reported(fleet: Path) -> None:
    write_stack(fleet, "east-all", ["east"], {})
    problems = inventory.coverage_problems(fleet, ["west"])
    assert [(p.path, p.message) for p in problems] == [
        (
            f"{INVENTORY}/a.yaml",
            "taken by stacks east-all and east-gold; a gateway belongs to exactly one",
        ),
        (
            f"{INVENTORY}/b.yaml",
            "taken by stacks east-all and east-standard; a gateway belongs to exactly one",
        ),
    ]


def test_inventories_not_read_by_the_requested_stacks_are_not_checked(fleet: Path) -> None:
    write_gateway(fleet, "e", "east", {"tier": "bronze"})
    (fleet / "stacks/solo/gateways").mkdir(parents=True)
    config = {
        f"{PREFIX}declarationsDir": "stacks/solo/gateways",
        f"{PREFIX}clusters": {"solo": cluster("solo.example.com")},
    }
    (fleet / "Pulumi.solo.yaml").write_text(yaml.safe_dump({"config": config}))
    assert inventory.coverage_problems(fleet, ["solo"]) == []


def test_inventory_declarations_must_name_their_cluster(fleet: Path) -> None:
    path = fleet / INVENTORY / "f.yaml"
    path.write_text(
        "apiVersion: hypershell.redhat.io/v1alpha1\nkind: Gateway\nmetadata:\n  name: f\n"
    )
    with pytest.raises(InvalidInputError) as caught:
        load_stack(fleet, "west")
    assert [str(p) for p in caught.value.problems] == [
        f"{INVENTORY}/f.yaml: spec.cluster: required in a shared inventory"
    ]


def test_bad_labels_are_reported(fleet: Path) -> None:
    write_gateway(fleet, "g", "west", {"tier": "not a value!"})
    with pytest.raises(InvalidInputError) as caught:
        load_stack(fleet, "west")
    assert [str(p) for p in caught.value.problems] == [
        f"{INVENTORY}/g.yaml: metadata.labels.tier: 'not a value!' is not a Kubernetes label value"
    ]


# --- operator --------------------------------------------------------------------------------


def test_one_operator_stack_per_project_stack() -> None:
    files = operator.operator_manifests(ROOT)
    assert sorted(files) == ["stack-aws.yaml", "stack-ibm.yaml"]  # local is excluded
    ibm = yaml.safe_load(files["stack-ibm.yaml"])
    assert ibm["metadata"] == {
        "name": "hypershell-gateways-ibm",
        "namespace": "pulumi-operator",
        "labels": {
            "app.kubernetes.io/part-of": "hypershell-gateways",
            "app.kubernetes.io/instance": "ibm",
        },
    }
    spec = ibm["spec"]
    assert spec["stack"] == "example-org/hypershell-gateways/ibm"
    assert spec["projectRepo"] == "https://github.com/example-org/hypershell-gateways.git"
    assert (spec["refresh"], spec["continueResyncOnCommitMatch"], spec["destroyOnFinalize"]) == (
        True,
        True,
        False,
    )
    assert spec["resyncFrequencySeconds"] == 600
    assert spec["envRefs"] == {
        "PULUMI_ACCESS_TOKEN": {
            "type": "Secret",
            "secret": {"name": "pulumi-api-token", "key": "accessToken"},
        }
    }
    assert spec["gitAuth"] == {
        "accessToken": {"type": "Secret", "secret": {"name": "git-credentials", "key": "token"}}
    }
    aws = yaml.safe_load(files["stack-aws.yaml"])
    assert aws["spec"]["envRefs"]["AWS_ROLE_ARN"] == {
        "type": "Secret",
        "secret": {"name": "hypershell-aws", "key": "roleArn"},
    }


def test_operator_stacks_pass_the_crd_schema(tmp_path: Path) -> None:
    tool = shared_or_skip("tools/validate_manifests.py")
    for name, text in operator.operator_manifests(ROOT).items():
        (tmp_path / name).write_text(text)
    done = subprocess.run(
        [sys.executable, str(tool), str(tmp_path)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout
    assert done.stdout.splitlines()[-1] == "2 passed, 0 failed"


def test_bad_operator_settings_name_the_field(tmp_path: Path) -> None:
    (tmp_path / "deploy").mkdir()
    settings = yaml.safe_load((ROOT / operator.SETTINGS).read_text())
    settings["projectRepo"] = "not a url"
    del settings["accessToken"]
    (tmp_path / operator.SETTINGS).write_text(yaml.safe_dump(settings))
    with pytest.raises(InvalidInputError) as caught:
        operator.load_settings(tmp_path)
    assert [(p.path, p.field) for p in caught.value.problems] == [
        ("deploy/operator.yaml", "accessToken"),
        ("deploy/operator.yaml", "projectRepo"),
    ]


def test_the_program_reads_the_selector_from_pulumi_config(fleet: Path) -> None:
    # The render hands the stack's config to stacks.program.main() as the CLI would.
    rendered = render.execute(render.prepare(fleet, "east-gold"))
    assert [g.name for g in rendered.gateways] == ["a"]
    gateways = {
        r.name
        for r in rendered.recording.resources.values()
        if r.type == "hypershell:gateway:Gateway"
    }
    assert gateways == {"a"}


def test_cli_validate_fails_on_an_orphan_gateway(
    fleet: Path, capsys: pytest.CaptureFixture[str]
) -> None:

    assert cli.main(["--root", str(fleet), "validate", "--all"]) == 0
    write_gateway(fleet, "e", "east", {"tier": "bronze"})
    assert cli.main(["--root", str(fleet), "validate", "west"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"error: {INVENTORY}/e.yaml: metadata.labels: taken by no stack of the inventory"
        f" {INVENTORY} (stacks: east-gold, east-standard, west)",
        "1 problem(s); nothing written",
    ]


def test_cli_writes_operator_manifests(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:

    assert cli.main(["operator-manifests", "--out", str(tmp_path / "op")]) == 0
    assert sorted(p.name for p in (tmp_path / "op").iterdir()) == [
        "stack-aws.yaml",
        "stack-ibm.yaml",
    ]
    assert capsys.readouterr().out.splitlines() == [
        f"{tmp_path}/op/stack-aws.yaml",
        f"{tmp_path}/op/stack-ibm.yaml",
    ]

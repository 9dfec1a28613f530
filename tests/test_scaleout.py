"""Scale-out: stacks selecting from a shared inventory; Pulumi Kubernetes Operator Stacks."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from components import tokens
from gatewayctl import cli, inventory, operator, render
from gatewayctl.errors import InvalidInputError
from gatewayctl.resolve import load_stack
from tests.builders import (
    DROP,
    PREFIX,
    cluster,
    copy_project,
    copy_stack,
    passphrase_ciphertext,
    write_gateway,
    write_stack,
)
from tests.support import ROOT, shared_or_skip

INVENTORY = "inventory/gateways"


def site(domain: str) -> dict[str, Any]:
    """A cluster known by its key alone (no kubeconfigContext) on the database server
    db.example.com."""
    return cluster(baseDomain=domain, kubeconfigContext=DROP, database={"host": "db.example.com"})


def inventory_stack(
    root: Path, name: str, clusters: list[str], labels: dict[str, str] | None
) -> None:
    """``Pulumi.<name>.yaml`` reading the shared inventory, with ``labels`` as its selector."""
    write_stack(
        root,
        stack=name,
        clusters={c: site(f"{c}.example.com") for c in clusters},
        secrets={c: {"dbAdminPassword": "x"} for c in clusters},
        selector=labels,
        directory=INVENTORY,
    )


def inventory_gateway(root: Path, name: str, cluster_name: str, labels: dict[str, str]) -> str:
    return write_gateway(root, name, {"cluster": cluster_name}, directory=INVENTORY, labels=labels)


@pytest.fixture
def fleet(tmp_path: Path) -> Path:
    """Two clusters split over three stacks: gold and standard tenants on east, all of west."""
    inventory_stack(tmp_path, "east-gold", ["east"], {"tier": "gold"})
    inventory_stack(tmp_path, "east-standard", ["east"], {"tier": "standard"})
    inventory_stack(tmp_path, "west", ["west"], {})
    inventory_gateway(tmp_path, "a", "east", {"tier": "gold"})
    inventory_gateway(tmp_path, "b", "east", {"tier": "standard"})
    inventory_gateway(tmp_path, "c", "west", {"tier": "gold"})
    inventory_gateway(tmp_path, "d", "west", {})
    return tmp_path


def names(root: Path, stack: str) -> list[str]:
    return [g.name for g in load_stack(root, stack).gateways]


def test_each_stack_takes_its_clusters_and_labels(fleet: Path) -> None:
    assert names(fleet, "east-gold") == ["a"]
    assert names(fleet, "east-standard") == ["b"]
    assert names(fleet, "west") == ["c", "d"]
    assert inventory.coverage_problems(fleet, ["west"]) == []


def test_a_gateway_taken_by_no_stack_is_reported(fleet: Path) -> None:
    source = inventory_gateway(fleet, "e", "east", {"tier": "bronze"})
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
    inventory_stack(fleet, "east-all", ["east"], {})
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


SHARING = "stacks sharing declarations need a selector each (a shared inventory)"


def test_stacks_sharing_declarations_without_selectors_are_reported(tmp_path: Path) -> None:
    # The three read one directory, spelled two ways: compared by resolved path.
    inventory_stack(tmp_path, "one", ["east"], None)
    inventory_stack(tmp_path, "two", ["east"], None)
    inventory_stack(tmp_path, "three", ["east"], None)
    three = tmp_path / "Pulumi.three.yaml"
    three.write_text(three.read_text().replace(INVENTORY, f"./{INVENTORY}/"))
    inventory_gateway(tmp_path, "a", "east", {})
    problems = inventory.coverage_problems(tmp_path, ["one"])
    assert [str(p) for p in problems] == [
        "Pulumi.one.yaml: declarationsDir: 'inventory/gateways' is also read by"
        f" Pulumi.three.yaml and Pulumi.two.yaml; {SHARING}",
        "Pulumi.three.yaml: declarationsDir: './inventory/gateways/' is also read by"
        f" Pulumi.one.yaml and Pulumi.two.yaml; {SHARING}",
        "Pulumi.two.yaml: declarationsDir: 'inventory/gateways' is also read by"
        f" Pulumi.one.yaml and Pulumi.three.yaml; {SHARING}",
    ]


def test_a_stack_without_selector_in_a_shared_inventory_is_reported(fleet: Path) -> None:
    inventory_stack(fleet, "east-all", ["east"], None)  # takes every declaration of the directory
    problems = inventory.coverage_problems(fleet, ["east-all"])
    assert [str(p) for p in problems] == [
        "Pulumi.east-all.yaml: declarationsDir: 'inventory/gateways' is also read by"
        f" Pulumi.east-gold.yaml, Pulumi.east-standard.yaml and Pulumi.west.yaml; {SHARING}",
        f"{INVENTORY}/a.yaml: metadata.labels: taken by stacks east-all and east-gold;"
        " a gateway belongs to exactly one",
        f"{INVENTORY}/b.yaml: metadata.labels: taken by stacks east-all and east-standard;"
        " a gateway belongs to exactly one",
        f"{INVENTORY}/c.yaml: metadata.labels: taken by stacks east-all and west;"
        " a gateway belongs to exactly one",
        f"{INVENTORY}/d.yaml: metadata.labels: taken by stacks east-all and west;"
        " a gateway belongs to exactly one",
    ]


def test_a_symlinked_declarations_directory_is_the_same_inventory(tmp_path: Path) -> None:
    inventory_stack(tmp_path, "one", ["east"], None)
    inventory_stack(tmp_path, "two", ["east"], None)
    two = tmp_path / "Pulumi.two.yaml"
    two.write_text(two.read_text().replace(INVENTORY, "alias"))
    (tmp_path / INVENTORY).mkdir(parents=True, exist_ok=True)
    (tmp_path / "alias").symlink_to(tmp_path / INVENTORY, target_is_directory=True)
    problems = inventory.coverage_problems(tmp_path, ["two"])
    assert [(p.path, p.field) for p in problems] == [
        ("Pulumi.one.yaml", "declarationsDir"),
        ("Pulumi.two.yaml", "declarationsDir"),
    ]
    assert problems[1].message == f"'alias' is also read by Pulumi.one.yaml; {SHARING}"


def test_cli_validate_fails_on_a_copied_stack_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `cp Pulumi.ibm.yaml Pulumi.prod.yaml`: both stacks would manage every ibm gateway.
    copy_stack("ibm", tmp_path)
    assert cli.main(["--root", str(tmp_path), "validate", "--all"]) == 0
    shutil.copy(ROOT / "Pulumi.ibm.yaml", tmp_path / "Pulumi.prod.yaml")
    capsys.readouterr()
    assert cli.main(["--root", str(tmp_path), "validate", "--all"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "error: Pulumi.ibm.yaml: declarationsDir: 'gateways/ibm' is also read by"
        f" Pulumi.prod.yaml; {SHARING}",
        "error: Pulumi.prod.yaml: declarationsDir: 'gateways/ibm' is also read by"
        f" Pulumi.ibm.yaml; {SHARING}",
        "2 problem(s); nothing written",
    ]
    # A directory of its own with the same gateways on the same cluster and database server:
    # each gateway's namespace, role, database and host would have two owners.
    shutil.copytree(ROOT / "gateways" / "ibm", tmp_path / "gateways" / "prod")
    prod = tmp_path / "Pulumi.prod.yaml"
    prod.write_text(prod.read_text().replace("gateways/ibm", "gateways/prod"))
    capsys.readouterr()
    assert cli.main(["--root", str(tmp_path), "validate", "--all"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == "22 problem(s); nothing written"
    assert err[0].startswith(
        "error: gateways/ibm/batch-jobs.yaml: spec.databaseName: database"
        " 'gw_batch_jobs' on server "
    )
    assert err[0].endswith(
        " is also used by gateways/prod/batch-jobs.yaml (cluster 'roks-us-east' of"
        " Pulumi.prod.yaml)"
    )
    # On a cluster and database server of its own, the copy is fine.
    text = prod.read_text()
    for old, new in (
        ("hysh-ibm-01/", "hysh-ibm-02/"),  # kubeconfigContext
        ("hysh-ibm-01-", "hysh-ibm-02-"),  # baseDomain
        ("5e4b1c7a-", "6f5c2d8b-"),  # the database server
    ):
        assert old in text
        text = text.replace(old, new)
    prod.write_text(text)
    capsys.readouterr()
    assert cli.main(["--root", str(tmp_path), "validate", "--all"]) == 2
    assert capsys.readouterr().err.splitlines() == [  # DNS is global: one vanity host, one owner
        "error: gateways/ibm/research.yaml: spec.exposure.host: host"
        " 'openshell.research.example.org' is also used by gateways/prod/research.yaml"
        " (cluster 'roks-us-east' of Pulumi.prod.yaml)",
        "error: gateways/prod/research.yaml: spec.exposure.host: host"
        " 'openshell.research.example.org' is also used by gateways/ibm/research.yaml"
        " (cluster 'roks-us-east' of Pulumi.ibm.yaml)",
        "2 problem(s); nothing written",
    ]
    research = tmp_path / "gateways" / "prod" / "research.yaml"
    research.write_text(research.read_text().replace("openshell.research", "prod.research"))
    assert cli.main(["--root", str(tmp_path), "validate", "--all"]) == 0


def test_inventories_not_read_by_the_requested_stacks_are_not_checked(fleet: Path) -> None:
    inventory_gateway(fleet, "e", "east", {"tier": "bronze"})
    write_stack(fleet, stack="solo", clusters={"solo": site("solo.example.com")}, secrets=DROP)
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
    inventory_gateway(fleet, "g", "west", {"tier": "not a value!"})
    with pytest.raises(InvalidInputError) as caught:
        load_stack(fleet, "west")
    assert [str(p) for p in caught.value.problems] == [
        f"{INVENTORY}/g.yaml: metadata.labels.tier: 'not a value!' is not a Kubernetes label value"
    ]


# --- operator --------------------------------------------------------------------------------


ACCOUNT_FILES = [
    "clusterrolebinding-hypershell-gateways-deployer-auth-delegator.yaml",
    "serviceaccount-hypershell-gateways-deployer.yaml",
]


def test_one_operator_stack_per_stack_the_operator_owns(tmp_path: Path) -> None:
    files = operator.operator_manifests(copy_project(tmp_path / "p", ready=True), cli._prepare_all)
    assert sorted(files) == [*ACCOUNT_FILES, "stack-aws.yaml"]  # the settings: stacks [aws]
    aws = yaml.safe_load(files["stack-aws.yaml"])
    assert aws["metadata"] == {
        "name": "hypershell-gateways-aws",
        "namespace": "pulumi-operator",
        "labels": {
            "app.kubernetes.io/part-of": "hypershell-gateways",
            "app.kubernetes.io/instance": "aws",
        },
    }
    spec = aws["spec"]
    assert spec["stack"] == "example-org/hypershell-gateways/aws"
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
        },
        "AWS_ROLE_ARN": {"type": "Secret", "secret": {"name": "hypershell-aws", "key": "roleArn"}},
    }
    assert spec["gitAuth"] == {
        "accessToken": {"type": "Secret", "secret": {"name": "git-credentials", "key": "token"}}
    }


def test_operator_manifests_pass_the_schemas(tmp_path: Path) -> None:
    tool = shared_or_skip("tools/validate_manifests.py")
    project = copy_project(tmp_path / "p", ready=True)
    document = yaml.safe_load((project / operator.SETTINGS).read_text())
    document["stacks"] = ["aws", "ibm"]
    (project / operator.SETTINGS).write_text(yaml.safe_dump(document))
    out = tmp_path / "out"
    out.mkdir()
    for name, text in operator.operator_manifests(project, cli._prepare_all).items():
        (out / name).write_text(text)
    done = subprocess.run(
        [sys.executable, str(tool), str(out)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout
    assert done.stdout.splitlines()[-1] == "4 passed, 0 failed"


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
    # The render hands the stack's config to gatewayctl.program.main() as the CLI would.
    rendered = render.execute(render.prepare(fleet, "east-gold"))
    assert [g.name for g in rendered.gateways] == ["a"]
    gateways = {r.name for r in rendered.recording.resources.values() if r.type == tokens.GATEWAY}
    assert gateways == {"a"}


def test_cli_validate_fails_on_an_orphan_gateway(
    fleet: Path, capsys: pytest.CaptureFixture[str]
) -> None:

    assert cli.main(["--root", str(fleet), "validate", "--all"]) == 0
    inventory_gateway(fleet, "e", "east", {"tier": "bronze"})
    assert cli.main(["--root", str(fleet), "validate", "west"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"error: {INVENTORY}/e.yaml: metadata.labels: taken by no stack of the inventory"
        f" {INVENTORY} (stacks: east-gold, east-standard, west)",
        "1 problem(s); nothing written",
    ]


def test_cli_writes_operator_manifests(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = copy_project(tmp_path / "p", ready=True)
    assert (
        cli.main(["--root", str(project), "operator-manifests", "--out", str(tmp_path / "op")]) == 0
    )
    written = (p.name for p in (tmp_path / "op").iterdir())
    assert sorted(n for n in written if not n.startswith(".")) == [*ACCOUNT_FILES, "stack-aws.yaml"]
    assert capsys.readouterr().out.splitlines() == [
        f"{tmp_path}/op/{ACCOUNT_FILES[0]}",
        f"{tmp_path}/op/{ACCOUNT_FILES[1]}",
        f"{tmp_path}/op/stack-aws.yaml",
    ]


def test_cli_refuses_a_stack_the_operator_owns_that_is_not_ready(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The committed aws stack: placeholder secrets, no CA bundle; the workspace would apply the
    # Kubernetes objects and fail at the first PostgreSQL role.
    out = tmp_path / "op"
    assert cli.main(["operator-manifests", "--out", str(out)]) == 2
    assert not out.exists()
    err = capsys.readouterr().err.splitlines()
    assert [line.split(": ")[1:3] for line in err[:-1]] == [
        ["Pulumi.aws.yaml", f"{PREFIX}clusterSecrets.rosa-us-east-1.dbAdminPassword"],
        ["Pulumi.aws.yaml", f"{PREFIX}clusterSecrets.rosa-us-west-2.dbAdminPassword"],
        ["Pulumi.aws.yaml", f"{PREFIX}clusters.rosa-us-east-1.database.sslRootCert"],
        ["Pulumi.aws.yaml", f"{PREFIX}clusters.rosa-us-west-2.database.sslRootCert"],
    ]
    assert err[-1] == "4 problem(s); nothing written"


def minimal_stack(root: Path, stack: str, index: int) -> None:
    """A valid, deploy-ready stack without gateways (its own declarations directory)."""
    write_stack(
        root,
        stack=stack,
        clusters={f"c{index}": site(f"c{index}.example.com")},
        secrets={f"c{index}": {"dbAdminPassword": {"secure": passphrase_ciphertext(stack)}}},
        directory=f"gateways/s{index}",
    )


def operator_project(root: Path, names: list[str], **settings: Any) -> Path:
    """A project with the committed operator settings (``settings`` replacing keys; None
    removes one) and a minimal deploy-ready ``Pulumi.<stack>.yaml`` per stack.

    The committed settings name aws, so ``names`` includes it."""
    (root / "deploy").mkdir(parents=True)
    document = yaml.safe_load((ROOT / operator.SETTINGS).read_text()) | settings
    document = {key: value for key, value in document.items() if value is not None}
    (root / operator.SETTINGS).write_text(yaml.safe_dump(document))
    shutil.copy(ROOT / operator.PULUMI_VERSION_FILE, root / operator.PULUMI_VERSION_FILE)
    for index, stack in enumerate(names):
        minimal_stack(root, stack, index)
    return root


STACK_NAME_RULE = "is not a DNS-1123 label (lowercase a-z, 0-9, inner '-', at most 63)"


@pytest.mark.parametrize("stack", ["Prod_EU", "prod-", "eu.", "a..b", "prod eu", "eu.west", ""])
def test_a_stack_name_that_is_no_kubernetes_name_is_a_problem(tmp_path: Path, stack: str) -> None:
    root = operator_project(tmp_path, ["aws", "local", stack], stacks=["aws"])
    with pytest.raises(InvalidInputError) as caught:
        operator.operator_manifests(root, cli._prepare_all)
    assert [str(p) for p in caught.value.problems] == [
        f"Pulumi.{stack}.yaml: stack name {stack!r} {STACK_NAME_RULE}"
    ]


@pytest.mark.parametrize("stack", ["prod-eu", "p1", "prod--eu", "a" * 22])
def test_stack_names_that_make_kubernetes_names_are_written(tmp_path: Path, stack: str) -> None:
    root = operator_project(tmp_path, ["aws", "local", stack], stacks=["aws", stack])
    files = operator.operator_manifests(root, cli._prepare_all)
    assert sorted(files) == sorted([*ACCOUNT_FILES, "stack-aws.yaml", f"stack-{stack}.yaml"])
    obj = yaml.safe_load(files[f"stack-{stack}.yaml"])
    assert obj["metadata"]["name"] == f"hypershell-gateways-{stack}"


def test_every_operator_name_problem_is_reported_at_once(tmp_path: Path) -> None:
    long = "a" * 23  # 20 + 23 = 43 characters, one more than the CRD allows
    # The older form: every stack but the excluded ones.
    root = operator_project(
        tmp_path,
        ["aws", "local", "Prod_EU", long, "Local"],
        stacks=None,
        exclude=["local"],
    )
    with pytest.raises(InvalidInputError) as caught:
        operator.operator_manifests(root, cli._prepare_all)
    assert [str(p) for p in caught.value.problems] == [
        f"Pulumi.Local.yaml: stack name 'Local' {STACK_NAME_RULE}",
        f"Pulumi.Prod_EU.yaml: stack name 'Prod_EU' {STACK_NAME_RULE}",
        f"Pulumi.{long}.yaml: operator Stack name 'hypershell-gateways-{long}' is longer"
        " than 42 characters",
    ]


def test_operator_settings_naming_no_stack_are_problems(tmp_path: Path) -> None:
    secret = {"name": "hypershell-aws", "key": "roleArn"}
    root = operator_project(
        tmp_path,
        ["aws", "ibm", "local"],
        stacks=["aws", "lcoal"],
        envFromSecrets={"awz": {"AWS_ROLE_ARN": secret}, "ibm": {"IC_API_KEY": secret}},
    )
    with pytest.raises(InvalidInputError) as caught:
        operator.operator_manifests(root, cli._prepare_all)
    assert [str(p) for p in caught.value.problems] == [
        "deploy/operator.yaml: envFromSecrets.awz: 'awz' names no stack of this project"
        " (no Pulumi.awz.yaml; stacks: aws, ibm, local)",
        "deploy/operator.yaml: envFromSecrets.ibm: the operator does not own stack 'ibm'"
        " (it owns: aws)",
        "deploy/operator.yaml: stacks.1: 'lcoal' names no stack of this project"
        " (no Pulumi.lcoal.yaml; stacks: aws, ibm, local)",
    ]


def test_cli_operator_manifests_writes_nothing_on_a_settings_typo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = operator_project(tmp_path / "project", ["aws", "local"], stacks=["aws", "lcoal"])
    out = tmp_path / "out"
    assert cli.main(["--root", str(root), "operator-manifests", "--out", str(out)]) == 2
    assert not out.exists()
    assert capsys.readouterr().err.splitlines() == [
        "error: deploy/operator.yaml: stacks.1: 'lcoal' names no stack of this project"
        " (no Pulumi.lcoal.yaml; stacks: aws, local)",
        "1 problem(s); nothing written",
    ]

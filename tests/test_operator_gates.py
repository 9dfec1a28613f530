"""Issue 25 item 7 (b): what ``docs/operator.md`` states about the Pulumi Kubernetes Operator
path, checked against the code, the workflows and the operator's CRDs, and its citations."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from gatewayctl.cli import main as cli
from gatewayctl.deploy import operator
from gatewayctl.deploy.deployed import deployed_stacks
from gatewayctl.inputs import operator_settings
from gatewayctl.resolve.stack import load_stack
from tests.builders import cluster, write_gateway, write_stack
from tests.support import REFERENCE, ROOT

PAGE = ROOT / "docs" / "operator.md"


def policy_keys(names: list[str]) -> list[str]:
    """The names that would configure a policy pack (``policyPacks``, ``policy``), not a
    retention policy (``workspaceReclaimPolicy``)."""
    return [n for n in names if re.fullmatch(r"polic(y|ies)\w*|\w*policypacks?\w*", n, re.I)]


def keys(value: Any) -> list[str]:
    """Every mapping key in ``value``, at any depth."""
    if isinstance(value, dict):
        return [*map(str, value), *(k for v in value.values() for k in keys(v))]
    if isinstance(value, list):
        return [k for v in value for k in keys(v)]
    return []


def workflow(name: str) -> dict[str, Any]:
    document = yaml.safe_load((ROOT / ".github" / "workflows" / name).read_text(encoding="utf-8"))
    assert isinstance(document, dict)
    return document


def test_the_operators_stack_names_no_policy_pack() -> None:
    stack = operator.stack_object(operator_settings.load_settings(ROOT), "aws", "3.0.0")
    assert stack["kind"] == "Stack"
    assert policy_keys(keys(stack)) == []


@pytest.mark.parametrize(
    "crd", ["pulumi.com/stack_v1.json", "auto.pulumi.com/update_v1alpha1.json"]
)
def test_neither_the_stack_nor_the_update_crd_has_a_policy_field(crd: str) -> None:
    schema = json.loads((REFERENCE / "crds" / crd).read_text(encoding="utf-8"))
    spec = schema["properties"]["spec"]["properties"]
    assert "refresh" in spec  # the field the operator's Stack does set
    assert policy_keys(list(spec)) == []
    assert policy_keys(["policyPacks", "policy", "workspaceReclaimPolicy"]) == [
        "policyPacks",
        "policy",
    ]


def test_only_ci_stacks_are_previewed_with_the_pack_before_their_up() -> None:
    jobs = workflow("deploy.yml")["jobs"]
    ready = jobs["operator-ready"]["steps"]
    assert not [s for s in ready if "pulumi/actions" in s.get("uses", "")]
    assert [s["run"].strip().splitlines()[-1] for s in ready if "run" in s] == [
        '.venv/bin/python -m gatewayctl validate "$STACK" --deploy'
    ]
    pulumi = [s for s in jobs["up"]["steps"] if "pulumi/actions" in s.get("uses", "")]
    assert [(s["with"]["command"], s["with"]["policyPacks"]) for s in pulumi] == [
        ("preview", "policy")
    ]
    # The up: gatewayctl rollout's `pulumi up --target`s, with the same pack.
    (rollout,) = [s for s in jobs["up"]["steps"] if "gatewayctl rollout" in s.get("run", "")]
    assert "--policy-pack policy --policy-pack-config" in rollout["run"]


def test_the_pull_request_preview_with_the_pack_covers_the_operators_stack() -> None:
    jobs = workflow("pull-request.yml")["jobs"]
    preview = jobs["preview"]
    owned = operator_settings.load_settings(ROOT).stacks
    assert owned == ["aws"]
    # The preview runs for the deployed stacks whose render changes, the operator's among them
    # (`changed`: stacks --changed --deployed; deploy/stacks.yaml lists aws).
    assert (
        preview["strategy"]["matrix"]["stack"] == "${{ fromJSON(needs.changed.outputs.preview) }}"
    )
    assert set(owned) <= set(deployed_stacks(ROOT))
    (step,) = [s for s in preview["steps"] if "pulumi/actions" in s.get("uses", "")]
    assert (step["with"]["command"], step["with"]["policyPacks"]) == ("preview", "policy")


def split_stacks(root: Path) -> Path:
    """Stacks ``one`` and ``two``, each valid alone; together they route one host twice, and
    ``one`` has a gateway no person can sign in to."""
    for index, stack in enumerate(["one", "two"]):
        clusters = {"c1": cluster(kubeconfigContext=f"ctx-{stack}", baseDomain=f"{stack}.test")}
        write_stack(root, stack=stack, clusters=clusters)
        host = {"exposure": {"host": "gw.vanity.example.org"}, "signIn": "none"}
        write_gateway(root, f"gw-{index}", host, stack=stack)
    write_gateway(root, "nobody", {"exposure": {"enabled": False}}, stack="one")
    return root


def test_the_programs_own_validation_lacks_the_sign_in_rule_and_the_rules_across_stacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = split_stacks(tmp_path / "p")
    # What the workspace's `pulumi up` runs (gatewayctl.engine.program.main): one stack, accepted.
    assert [g.name for g in load_stack(root, "one").gateways] == ["gw-0", "nobody"]
    assert [g.name for g in load_stack(root, "two").gateways] == ["gw-1"]
    # What `validate` (the pull request's `make validate`) adds refuses both.
    assert cli.main(["--root", str(root), "validate", "--all"]) == 2
    problems = [
        line.split(": ")[1:3]
        for line in capsys.readouterr().err.splitlines()
        if line.startswith("error: ")
    ]
    assert problems == [
        ["gateways/one/gw-0.yaml:7:11", "spec.exposure.host"],
        ["gateways/one/nobody.yaml:5:1", "spec.signIn"],
        ["gateways/two/gw-1.yaml:7:11", "spec.exposure.host"],
    ]


# --- the page's citations ---------------------------------------------------------------------


def page() -> str:
    return PAGE.read_text(encoding="utf-8")


def test_every_file_the_page_cites_exists() -> None:
    cited = sorted(set(re.findall(r"`((?:\.\./|\.github/|[\w]+/)[\w./-]*\.\w+)`", page())))
    ours = [c for c in cited if not c.startswith("agent/")]  # agent/: the operator's repository
    assert len(ours) >= 10
    assert "reference/crds/pulumi.com/stack_v1.json" in ours
    assert [c for c in ours if not (ROOT / c).is_file()] == []


def test_every_function_the_page_cites_is_defined_where_it_says() -> None:
    pairs = re.findall(r"`((?:gatewayctl|components)/[\w/]+\.py)`,? `(\w+)`", page())
    assert len(pairs) >= 8
    missing = [
        (path, name)
        for path, name in pairs
        if not re.search(rf"^def {name}\(", (ROOT / path).read_text(encoding="utf-8"), re.M)
    ]
    assert missing == []

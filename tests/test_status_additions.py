"""Live additions another manager made, which the refresh's diff cannot see
(gatewayctl/status/additions.py): found from a state's outputs against its inputs."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest

from gatewayctl.status import core, inputs, selfheal
from gatewayctl.status.additions import NETWORK_POLICY, additions
from gatewayctl.status.formats import change_line
from gatewayctl.status.models import PreviewDigest
from tests.status_builders import digest, export, gateway_resources, refresh_step, stack_resources

DEPLOYMENT = "kubernetes:apps/v1:Deployment"


def policy(selector: dict[str, Any]) -> dict[str, Any]:
    return {"spec": {"podSelector": selector, "policyTypes": ["Ingress"]}}


def workload(containers: list[str], volumes: list[str], **defaults: Any) -> dict[str, Any]:
    return {
        "spec": {
            "template": {
                "spec": {
                    "containers": [{"name": c, **defaults} for c in containers],
                    "volumes": [{"name": v, **defaults} for v in volumes],
                }
            }
        }
    }


def test_a_narrowed_default_deny_selector_is_an_addition() -> None:
    declared = policy({})
    live = policy({"matchLabels": {"nobody": "here"}})
    assert additions(NETWORK_POLICY, declared, live) == ("spec.podSelector",)


def test_a_selector_as_declared_is_none() -> None:
    declared = policy({"matchLabels": {"app": "gateway"}})
    assert additions(NETWORK_POLICY, declared, copy.deepcopy(declared)) == ()


@pytest.mark.parametrize(
    ("containers", "volumes", "expected"),
    [
        (["gateway", "sidecar"], ["tmp"], ("spec.template.spec.containers",)),
        (["gateway"], ["tmp", "host"], ("spec.template.spec.volumes",)),
        (
            ["gateway", "sidecar"],
            ["tmp", "host"],
            ("spec.template.spec.containers", "spec.template.spec.volumes"),
        ),
    ],
)
def test_an_added_container_or_volume_is_an_addition(
    containers: list[str], volumes: list[str], expected: tuple[str, ...]
) -> None:
    declared = workload(["gateway"], ["tmp"])
    assert additions(DEPLOYMENT, declared, workload(containers, volumes)) == expected


def test_server_defaults_inside_declared_items_are_not_additions() -> None:
    declared = workload(["gateway"], ["tmp"])
    live = workload(["gateway"], ["tmp"], terminationMessagePath="/dev/termination-log")
    assert additions(DEPLOYMENT, declared, live) == ()


def test_a_resource_without_outputs_or_of_another_type_is_not_read() -> None:
    assert additions(NETWORK_POLICY, policy({}), {}) == ()
    assert additions("kubernetes:core/v1:Service", policy({}), policy({"x": {}})) == ()


def test_a_workload_whose_inputs_hold_no_pod_template_is_not_read() -> None:
    assert additions(DEPLOYMENT, {"spec": {"replicas": 1}}, workload(["gateway"], [])) == ()


def test_an_addition_is_drift_the_self_heal_leaves_alone() -> None:
    """``up --refresh`` would leave another manager's addition in place: no self-heal."""
    resources = stack_resources({"x": None}) + gateway_resources("x", exposed=False)
    (deploy,) = [r for r in resources if r["type"] == DEPLOYMENT]
    deploy["inputs"] = workload(["gateway"], ["tmp"])
    deploy["outputs"] = workload(["gateway", "miner"], ["tmp"])
    parsed = inputs.Inputs(
        checkpoint=inputs.UntypedDeployment.model_validate(export(resources)).deployment,
        refresh=PreviewDigest.model_validate(digest([refresh_step(r) for r in resources])),
    )
    status = core.build("ibm", parsed, datetime(2026, 6, 1, tzinfo=UTC))
    (gateway,) = status.gateways
    assert gateway.sync == "OutOfSync"
    assert [(c.name, c.op, c.source, c.paths) for c in gateway.changes] == [
        ("x-workload-deploy", "addition", "live", ("spec.template.spec.containers",))
    ]
    assert selfheal.remedy(status, True) == selfheal.Remedy(action="none")
    assert change_line(gateway.changes[0]) == (
        "kubernetes:apps/v1:Deployment x-workload-deploy (live) added by another manager"
        " (up leaves it: delete the object, then pulumi up --refresh):"
        " spec.template.spec.containers"
    )

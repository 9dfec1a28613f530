"""``spec.resources``: the gateway container's requests and limits, from the declaration to the
Deployment (issue 22 item 3: a per-gateway setting is its declaration field, its field and use
in components/deployment.py, and this test)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from components.deployment import WorkloadSettings
from gatewayctl.engine import render
from gatewayctl.inputs.gateway_declaration import GatewaySpec
from gatewayctl.resolve import preparation
from tests.builders import STACK, write_gateway, write_stack
from tests.helpers import k8s, load_problems

NS = "openshell-acme"


def container_resources(root: Path, spec: dict[str, Any]) -> dict[str, Any]:
    write_stack(root)
    write_gateway(root, "acme", {"signIn": "none", **spec})
    result = render.execute(preparation.prepare(root, STACK))
    deployment = k8s(result.recording, "Deployment", "openshell-gateway", NS)
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    resources: dict[str, Any] = container["resources"]
    return resources


def test_the_gateway_container_gets_upstream_s_resources_by_default(tmp_path: Path) -> None:
    assert container_resources(tmp_path, {}) == {
        "requests": {"cpu": "100m", "memory": "256Mi"},
        "limits": {"cpu": "500m", "memory": "512Mi"},
    }


def test_declared_resources_replace_upstream_s_value_by_value(tmp_path: Path) -> None:
    spec = {"resources": {"requests": {"cpu": "250m"}, "limits": {"memory": "1Gi"}}}
    assert container_resources(tmp_path, spec) == {
        "requests": {"cpu": "250m", "memory": "256Mi"},
        "limits": {"cpu": "500m", "memory": "1Gi"},
    }


def test_a_yaml_number_is_a_quantity(tmp_path: Path) -> None:
    spec = {"resources": {"requests": {"cpu": 1}, "limits": {"cpu": 2}}}
    assert container_resources(tmp_path, spec) == {
        "requests": {"cpu": "1", "memory": "256Mi"},
        "limits": {"cpu": "2", "memory": "512Mi"},
    }


def test_a_value_that_is_no_quantity_is_named(tmp_path: Path) -> None:
    write_stack(tmp_path)
    source = write_gateway(tmp_path, "acme", {"resources": {"limits": {"memory": "lots"}}})
    assert load_problems(tmp_path) == [
        (
            source,
            "spec.resources.limits.memory",
            "'lots' is not a quantity: a number with an optional suffix (m for thousandths;"
            " k, M, G or Ki, Mi, Gi, ...), such as 500m or 256Mi",
        )
    ]


def test_a_request_above_its_limit_is_refused_before_any_resource(tmp_path: Path) -> None:
    write_stack(tmp_path)
    spec = {"resources": {"requests": {"memory": "1Gi", "cpu": "0.5"}, "limits": {"cpu": "500m"}}}
    source = write_gateway(tmp_path, "acme", spec)
    assert load_problems(tmp_path) == [
        (
            source,
            "spec.resources",
            "requests.memory 1Gi is more than limits.memory 512Mi: Kubernetes refuses a request"
            " above its limit",
        )
    ]


def test_a_request_equal_to_its_limit_in_other_units_is_no_problem(tmp_path: Path) -> None:
    # In floats 9 * 0.001 is 0.009000000000000001, more than 0.009: the comparison is exact.
    spec = {"resources": {"requests": {"cpu": "9m"}, "limits": {"cpu": "0.009"}}}
    assert container_resources(tmp_path, spec) == {
        "requests": {"cpu": "9m", "memory": "256Mi"},
        "limits": {"cpu": "0.009", "memory": "512Mi"},
    }


def test_every_workload_setting_is_a_field_of_the_declaration_s_spec() -> None:
    """The resolution copies the settings from the spec by name (settings.from_fields)."""
    names = {field.name for field in dataclasses.fields(WorkloadSettings)}
    assert {"replicas", "resources"} <= names <= set(GatewaySpec.model_fields)

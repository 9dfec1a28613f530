"""Run the policy pack against a recording, the way the policy analyzer would.

The analyzer (``pulumi_policy.policy._PolicyAnalyzerServicer``) receives each resource as a
protobuf Struct, turns it into Python with ``deserialize_properties`` (secret wrappers dropped:
policies see plain values) and wraps it in ``unknown_checking_proxy``. Resource policies get the
registration's inputs with its provider's inputs; stack policies get every resource's outputs,
with parents linked to the other ``PolicyResource`` objects. This module builds exactly those
arguments from the offline engine's recording, so the policies run on what ``pulumi preview``
would hand them, without the CLI.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from google.protobuf import json_format, struct_pb2
from pulumi_policy import (
    Policy,
    PolicyCustomTimeouts,
    PolicyProviderResource,
    PolicyResource,
    PolicyResourceOptions,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.deserialize import deserialize_properties
from pulumi_policy.proxy import unknown_checking_proxy

from gatewayctl.engine.offline import RecordedResource, Recording
from tests.support import ROOT

POLICY_DIR = ROOT / "policy"
PolicyConfig = Mapping[str, Mapping[str, Any]]


@dataclass(frozen=True)
class Violation:
    policy: str
    urn: str
    message: str


def struct(value: Mapping[str, Any]) -> struct_pb2.Struct:
    """A property map as it travels to the analyzer (numbers become doubles)."""
    message = struct_pb2.Struct()
    message.update(dict(value))
    return message


def props(value: Mapping[str, Any]) -> Mapping[str, Any]:
    """The analyzer's view of a property map: secrets unwrapped, unknowns guarded."""
    plain = deserialize_properties(json_format.MessageToDict(struct(value)))
    result: Mapping[str, Any] = unknown_checking_proxy(plain)
    return result


def stack_config(stack: str) -> dict[str, dict[str, Any]]:
    """Per-policy properties of ``policy/config/<stack>.json``, as the analyzer's Configure
    hands them over (the enforcement level is not a property)."""
    raw = json.loads((POLICY_DIR / "config" / f"{stack}.json").read_text())
    return {
        name: {k: v for k, v in value.items() if k != "enforcementLevel"}
        for name, value in raw.items()
        if isinstance(value, dict)
    }


def _options(resource: RecordedResource, *, with_parent: bool) -> PolicyResourceOptions:
    return PolicyResourceOptions(
        protect=resource.protect,
        ignore_changes=[],
        delete_before_replace=None,
        aliases=[],
        custom_timeouts=PolicyCustomTimeouts(0, 0, 0),
        additional_secret_outputs=list(resource.secret_outputs),
        parent=resource.parent if with_parent else None,
    )


def _provider(recording: Recording, resource: RecordedResource) -> PolicyProviderResource | None:
    provider = recording.resources.get(resource.provider or "")
    if provider is None:
        return None
    return PolicyProviderResource(
        provider.type, props(provider.inputs), provider.urn, provider.name
    )


def resource_args(
    recording: Recording, resource: RecordedResource, config: Mapping[str, Any] | None = None
) -> ResourceValidationArgs:
    return ResourceValidationArgs(
        resource.type,
        props(resource.inputs),
        resource.urn,
        resource.name,
        _options(resource, with_parent=True),
        _provider(recording, resource),
        dict(config) if config else None,
    )


def stack_args(
    recording: Recording, config: Mapping[str, Any] | None = None
) -> StackValidationArgs:
    resources = {
        r.urn: PolicyResource(
            r.type,
            props(r.outputs),
            r.urn,
            r.name,
            _options(r, with_parent=False),
            _provider(recording, r),
            None,
            [],
            {},
        )
        for r in recording.resources.values()
    }
    for r in recording.resources.values():
        resources[r.urn].parent = resources.get(r.parent or "")
    return StackValidationArgs(list(resources.values()), dict(config) if config else None)


def _reporter(found: list[Violation], policy: str, urn: str | None) -> ReportViolation:
    """Collects into ``found``. Resource policies: ``urn`` is the resource's (the analyzer
    ignores the urn a resource policy reports). Stack policies: ``urn`` is None and the reported
    urn counts (none: the stack as a whole)."""

    def report(message: str, reported: str | None = None) -> None:
        found.append(Violation(policy, urn or reported or "", message))

    return report


def violations(
    policies: Sequence[Policy], recording: Recording, config: PolicyConfig | None = None
) -> list[Violation]:
    """Every violation the policies report: policy by policy, resources in registration order."""
    found: list[Violation] = []
    for policy in policies:
        policy_config = (config or {}).get(policy.name)
        if isinstance(policy, ResourceValidationPolicy):
            for resource in recording.resources.values():
                args = resource_args(recording, resource, policy_config)
                policy.validate(args, _reporter(found, policy.name, resource.urn))
        elif isinstance(policy, StackValidationPolicy):
            stack = stack_args(recording, policy_config)
            policy.validate(stack, _reporter(found, policy.name, None))
    return found

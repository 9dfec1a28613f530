"""Pulumi Kubernetes Operator ``Stack`` objects: each stack in its own workspace pod.

Settings come from ``deploy/operator.yaml``; nothing here is secret (Secrets are referenced by
name). The objects validate against the operator's CRD (pulumi.com/v1 Stack).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field, ValidationError

from stacks.errors import InvalidInputError, Problem, from_validation_error
from stacks.inventory import all_stacks, stack_file_problems
from stacks.loader import PROJECT, read_yaml_mapping
from stacks.models import DnsLabel, Model

SETTINGS = "deploy/operator.yaml"
STACK_NAME_MAX = 42  # the CRD's CEL rule on metadata.name
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
"""A Kubernetes object name (DNS-1123 subdomain, at most 253 characters)."""


class SecretKey(Model):
    name: DnsLabel
    key: str = Field(min_length=1)


class OperatorSettings(Model):
    namespace: DnsLabel
    project_repo: str = Field(alias="projectRepo", pattern=r"^(https://|ssh://|git@)\S+$")
    branch: str = Field(min_length=1)
    organization: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    service_account_name: DnsLabel = Field(alias="serviceAccountName")
    resync_frequency_seconds: int = Field(alias="resyncFrequencySeconds", ge=60)
    access_token: SecretKey = Field(alias="accessToken")
    git_token: SecretKey | None = Field(None, alias="gitToken")
    exclude: list[str] = Field(default_factory=list)
    env_from_secrets: dict[str, dict[str, SecretKey]] = Field(
        default_factory=dict, alias="envFromSecrets"
    )


def load_settings(root: Path) -> OperatorSettings:
    document = read_yaml_mapping(root / SETTINGS, SETTINGS)
    try:
        return OperatorSettings.model_validate(document, by_alias=True)
    except ValidationError as error:
        raise InvalidInputError(from_validation_error(SETTINGS, error)) from None


def _secret_ref(ref: SecretKey) -> dict[str, Any]:
    return {"type": "Secret", "secret": {"name": ref.name, "key": ref.key}}


def stack_object(settings: OperatorSettings, stack: str) -> dict[str, Any]:
    """The ``Stack`` custom resource that runs ``pulumi up`` for one stack from git."""
    env = {"PULUMI_ACCESS_TOKEN": _secret_ref(settings.access_token)}
    env |= {k: _secret_ref(v) for k, v in sorted(settings.env_from_secrets.get(stack, {}).items())}
    spec: dict[str, Any] = {
        "stack": f"{settings.organization}/{PROJECT}/{stack}",
        "projectRepo": settings.project_repo,
        "branch": settings.branch,
        "serviceAccountName": settings.service_account_name,
        "envRefs": env,
        # Refresh before each update and keep resyncing when git has not moved: that is what
        # corrects drift. The stack's resources are never destroyed by deleting this object.
        "refresh": True,
        "continueResyncOnCommitMatch": True,
        "resyncFrequencySeconds": settings.resync_frequency_seconds,
        "destroyOnFinalize": False,
    }
    if settings.git_token is not None:
        spec["gitAuth"] = {"accessToken": _secret_ref(settings.git_token)}
    return {
        "apiVersion": "pulumi.com/v1",
        "kind": "Stack",
        "metadata": {
            "name": f"{PROJECT}-{stack}",
            "namespace": settings.namespace,
            "labels": {"app.kubernetes.io/part-of": PROJECT, "app.kubernetes.io/instance": stack},
        },
        "spec": spec,
    }


def settings_problems(settings: OperatorSettings, stacks: Sequence[str]) -> list[Problem]:
    """Stack names in ``exclude`` and ``envFromSecrets`` that name no ``Pulumi.<stack>.yaml``.

    A typo there is silent otherwise: the stack meant to be left out gets a ``Stack`` object,
    or the stack meant to get credentials runs without them.
    """
    known = set(stacks)
    named = [(f"exclude.{i}", stack) for i, stack in enumerate(settings.exclude)]
    named += [(f"envFromSecrets.{stack}", stack) for stack in settings.env_from_secrets]
    listed = ", ".join(stacks) if stacks else "none"
    return [
        Problem(
            SETTINGS,
            field,
            f"{stack!r} names no stack of this project (no Pulumi.{stack}.yaml; stacks: {listed})",
        )
        for field, stack in named
        if stack not in known
    ]


def name_problems(name: str, stack: str) -> list[Problem]:
    """``metadata.name`` of the operator ``Stack`` must be a Kubernetes name the CRD accepts."""
    display = f"Pulumi.{stack}.yaml"
    problems = []
    if not _DNS_SUBDOMAIN.fullmatch(name) or len(name) > 253:
        message = (
            f"operator Stack name {name!r} (from the stack name) is not a valid Kubernetes name:"
            " lowercase letters, digits, '-' and '.', starting and ending with a letter or digit"
        )
        problems.append(Problem(display, "", message))
    if len(name) > STACK_NAME_MAX:
        message = f"operator Stack name {name!r} is longer than {STACK_NAME_MAX} characters"
        problems.append(Problem(display, "", message))
    return problems


def operator_manifests(root: Path) -> dict[str, str]:
    """File name → YAML of one ``Stack`` object per stack not excluded.

    Raises InvalidInputError with every problem (unknown stack names in the settings, stack
    names that make no valid Kubernetes name) before anything is returned.
    """
    settings = load_settings(root)
    stacks = all_stacks(root)
    problems = settings_problems(settings, stacks) + stack_file_problems(root)
    files = {}
    for stack in stacks:
        if stack in settings.exclude:
            continue
        obj = stack_object(settings, stack)
        found = name_problems(obj["metadata"]["name"], stack)
        problems += found
        if not found:
            files[f"stack-{stack}.yaml"] = yaml.safe_dump(obj, sort_keys=False)
    if problems:
        raise InvalidInputError(problems)
    return files

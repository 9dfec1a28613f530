"""Pulumi Kubernetes Operator ``Stack`` objects: each stack the operator owns in its own
workspace pod, from the settings of ``gatewayctl.inputs.operator_settings``. Nothing here is
secret (Secrets are referenced by name). The objects validate against the operator's CRD
(pulumi.com/v1 Stack).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from gatewayctl.errors import InvalidInputError, Problem
from gatewayctl.inputs.operator_settings import (
    OperatorSettings,
    SecretKey,
    cli_version,
    load_settings,
    owned_stacks,
    settings_problems,
)
from gatewayctl.inputs.stackfile import PROJECT, all_stacks, stack_file, stack_file_problems
from gatewayctl.resolve import readiness

WORKSPACE_IMAGE = "pulumi/pulumi:{version}-nonroot"
"""The operator's default workspace image, pinned: the ``restricted`` security profile's
default is ``pulumi/pulumi:latest-nonroot`` (pulumi-kubernetes-operator
``operator/internal/webhook/auto/v1alpha1/workspace_webhook.go``), an image that moves. The
full image carries Python 3.11 and uv, which Pulumi.yaml's uv toolchain needs
(pulumi-docker-containers ``docker/pulumi/Dockerfile``)."""

AUTH_DELEGATOR = "system:auth-delegator"
"""The operator v2 requires it for each workspace's service account: the workspace agent checks
the operator's calls with TokenReview and SubjectAccessReview (pulumi-kubernetes-operator
``docs/migration.md``, "Service Account"; ``agent/pkg/server/auth.go``)."""

STACK_NAME_MAX = 42  # the CRD's CEL rule on metadata.name
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
"""A Kubernetes object name (DNS-1123 subdomain, at most 253 characters)."""

# --- the objects ------------------------------------------------------------------------------


def _secret_ref(ref: SecretKey) -> dict[str, Any]:
    return {"type": "Secret", "secret": {"name": ref.name, "key": ref.key}}


def _labels(stack: str | None = None) -> dict[str, str]:
    labels = {"app.kubernetes.io/part-of": PROJECT}
    if stack is not None:
        labels["app.kubernetes.io/instance"] = stack
    return labels


def stack_object(settings: OperatorSettings, stack: str, version: str) -> dict[str, Any]:
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
        # The CLI the workflows install, not the operator's moving default image.
        "workspaceTemplate": {"spec": {"image": WORKSPACE_IMAGE.format(version=version)}},
    }
    if settings.git_token is not None:
        spec["gitAuth"] = {"accessToken": _secret_ref(settings.git_token)}
    return {
        "apiVersion": "pulumi.com/v1",
        "kind": "Stack",
        "metadata": {
            "name": f"{PROJECT}-{stack}",
            "namespace": settings.namespace,
            "labels": _labels(stack),
        },
        "spec": spec,
    }


def workspace_account(settings: OperatorSettings) -> dict[str, dict[str, Any]]:
    """File name → the workspaces' ServiceAccount and its ``system:auth-delegator`` binding."""
    account, namespace = settings.service_account_name, settings.namespace
    return {
        f"serviceaccount-{account}.yaml": {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": account, "namespace": namespace, "labels": _labels()},
        },
        f"clusterrolebinding-{account}-auth-delegator.yaml": {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            # The name the operator's own error message suggests (agent/pkg/server/auth.go).
            "metadata": {"name": f"{namespace}:{account}:{AUTH_DELEGATOR}", "labels": _labels()},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": AUTH_DELEGATOR,
            },
            "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
        },
    }


def name_problems(name: str, stack: str) -> list[Problem]:
    """``metadata.name`` of the operator ``Stack`` must be a Kubernetes name the CRD accepts."""
    display = stack_file(stack)
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


def operator_manifests(root: Path, prepare: readiness.Prepare) -> dict[str, str]:
    """File name → YAML of one ``Stack`` object per stack the operator owns, and of the
    workspaces' ServiceAccount and its ``system:auth-delegator`` binding.

    The owned stacks must be deploy-ready (:func:`gatewayctl.resolve.readiness.check`, with
    ``prepare`` validating them): the workspace runs ``pulumi up`` from git and cannot run the check
    itself. Raises InvalidInputError with every problem (settings, stack names that make no
    Kubernetes name, the CLI version, readiness) before anything is returned.
    """
    settings = load_settings(root)
    stacks = all_stacks(root)
    problems = settings_problems(settings, stacks) + stack_file_problems(root)
    try:
        version = cli_version(root)
    except InvalidInputError as error:
        problems += error.problems
        version = "0.0.0"
    owned = owned_stacks(settings, stacks)
    objects: dict[str, dict[str, Any]] = {}
    for stack in owned:
        obj = stack_object(settings, stack, version)
        found = name_problems(obj["metadata"]["name"], stack)
        problems += found
        if not found:
            objects[f"stack-{stack}.yaml"] = obj
    if owned:
        try:
            readiness.check(root, owned, prepare)
        except InvalidInputError as error:
            problems += error.problems
        objects |= workspace_account(settings)
    if problems:
        raise InvalidInputError(problems)
    return {name: yaml.safe_dump(obj, sort_keys=False) for name, obj in objects.items()}

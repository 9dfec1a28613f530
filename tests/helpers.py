"""Helpers for asserting on what the loader made of a built project and on what a program
registered."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gatewayctl.engine.offline import RecordedResource, Recording, is_secret
from gatewayctl.engine.redaction import clean
from gatewayctl.engine.write_guard import MARKER
from gatewayctl.errors import InvalidInputError
from gatewayctl.resolve.resolved import LoadedStack, ResolvedGateway
from gatewayctl.resolve.stack import load_stack
from tests.builders import STACK

Problems = list[tuple[str, str, str]]
"""``(path, field, message)`` of each problem, in the order reported."""


# --- what the loader made of a project ------------------------------------------------------


def load(root: Path) -> LoadedStack:
    """The built stack (``tests.builders.STACK``) of ``root``, loaded."""
    return load_stack(root, STACK)


def problems_of(call: Callable[[], object]) -> Problems:
    """The problems of the ``InvalidInputError`` that ``call`` must raise."""
    with pytest.raises(InvalidInputError) as caught:
        call()
    return [(p.path, p.field, p.message) for p in caught.value.problems]


def load_problems(root: Path) -> Problems:
    return problems_of(lambda: load(root))


def located_problems(root: Path) -> Problems:
    """``(path[:line:column], field, message)`` of each problem of loading ``root``: where
    each problem is, as printed."""
    with pytest.raises(InvalidInputError) as caught:
        load(root)
    return [(p.where, p.field, p.message) for p in caught.value.problems]


def where(problems: Problems) -> list[tuple[str, str]]:
    return [(path, field) for path, field, _ in problems]


def only_gateway(root: Path) -> ResolvedGateway:
    (gateway,) = load(root).gateways
    return gateway


# --- what a render wrote -------------------------------------------------------------------


def written_files(directory: Path) -> dict[str, str]:
    """Every file under ``directory`` but the output marker, as text."""
    return {
        p.relative_to(directory).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(directory.rglob("*"))
        if p.is_file() and p.relative_to(directory).as_posix() != MARKER
    }


# --- what a program registered --------------------------------------------------------------


def k8s(recording: Recording, kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
    """The one Kubernetes object of ``kind``/``name`` in ``namespace``, cleaned as rendered."""
    found = [
        r
        for r in recording.resources.values()
        if r.type.startswith("kubernetes:")
        and r.inputs.get("kind") == kind
        and r.inputs.get("metadata", {}).get("name") == name
        and (namespace is None or r.inputs["metadata"].get("namespace") == namespace)
    ]
    assert len(found) == 1, f"expected one {kind}/{name} in {namespace}, found {len(found)}"
    obj: dict[str, Any] = clean(found[0].inputs)
    return obj


def raw(
    recording: Recording, kind: str, name: str, namespace: str | None = None
) -> RecordedResource:
    """The registration (uncleaned inputs, secret wrappers kept) of one Kubernetes object."""
    found = [
        r
        for r in recording.resources.values()
        if r.inputs.get("kind") == kind
        and r.inputs.get("metadata", {}).get("name") == name
        and (namespace is None or r.inputs["metadata"].get("namespace") == namespace)
    ]
    assert len(found) == 1
    return found[0]


def kinds(recording: Recording, namespace: str) -> list[str]:
    """Sorted ``Kind/name`` of the Kubernetes objects in a namespace."""
    return sorted(
        f"{r.inputs['kind']}/{r.inputs['metadata']['name']}"
        for r in recording.resources.values()
        if r.type.startswith("kubernetes:")
        and r.custom
        and r.inputs.get("metadata", {}).get("namespace") == namespace
    )


def one(recording: Recording, type_: str, name: str) -> RecordedResource:
    found = [r for r in recording.resources.values() if r.type == type_ and r.name == name]
    assert len(found) == 1, f"expected one {type_} {name}, found {len(found)}"
    return found[0]


def secret_paths(value: Any, path: str = "") -> list[str]:
    """Dotted paths of every secret-wrapped value inside ``value``."""
    if is_secret(value):
        return [path]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in secret_paths(v, f"{path}.{k}" if path else k)]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in secret_paths(v, f"{path}.{i}")]
    return []


def typed_program() -> None:
    """Three resources of one class whose args are typed (input types: unwrap_type is asked
    for their properties) and one of another."""
    import pulumi_kubernetes as k8s

    for index in range(3):
        k8s.core.v1.ConfigMap(
            f"config-{index}",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=f"config-{index}", labels={"a": "b"}),
            data={"key": f"value-{index}"},
        )
    k8s.core.v1.Namespace("tenant", metadata={"name": "tenant"})

"""Object metadata as wire-format data: one shape for every Kubernetes object of the program."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi


def metadata(
    name: pulumi.Input[str],
    labels: Mapping[str, str],
    *,
    namespace: pulumi.Input[str] | None = None,
    annotations: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """``metadata`` of an object: its name and labels, its namespace unless it is cluster-scoped,
    its annotations when there are any (an empty mapping is left out, not sent)."""
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    meta["labels"] = dict(labels)
    if annotations:
        meta["annotations"] = dict(annotations)
    return meta

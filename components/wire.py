"""Kubernetes objects as wire-format data.

Kubernetes inputs in this project are plain mappings with the API's own camelCase keys, so
they read like the YAML an operator knows and reach the provider exactly as written (the SDK
passes such keys verbatim; snake_case keys inside lists are not translated). The SDK's type
hints expect its snake_case TypedDicts, so ``wire`` marks the hand-over point for the type
checker; it does not change the value.
"""

from __future__ import annotations

from typing import Any


def wire(obj: Any) -> Any:
    """Return ``obj`` unchanged, typed as ``Any`` for the Kubernetes SDK's input parameters."""
    return obj

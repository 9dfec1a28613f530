"""A gateway's CPU and memory (``spec.resources`` of a declaration): Kubernetes quantities,
upstream's values by default, each request within its limit as the API server requires."""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Annotated

from pydantic import BeforeValidator, model_validator

from gatewayctl.inputs.model import JsonSchema, Model, unnamed

# Kubernetes' quantity grammar without the exponent form (k8s.io/apimachinery
# pkg/api/resource/quantity.go: <signedNumber><suffix>, suffix binary Ki..Ei or decimal m, k..E).
_QUANTITY = re.compile(r"(?P<number>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?P<suffix>[KMGTPE]i|[mkMGTPE])?")
_SCALE = {"m": Fraction(1, 1000)} | {
    unit: Fraction(1000) ** (i + 1) for i, unit in enumerate("kMGTPE")
}
_SCALE |= {f"{unit}i": Fraction(1024) ** (i + 1) for i, unit in enumerate("KMGTPE")}


def _quantity(value: object) -> object:
    """A CPU or memory quantity as Kubernetes writes it (``500m``, ``1``, ``256Mi``); a YAML
    number is its decimal text."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)
    if isinstance(value, str) and not _QUANTITY.fullmatch(value):
        raise ValueError(
            f"{value[:40]!r} is not a quantity: a number with an optional suffix"
            " (m for thousandths; k, M, G or Ki, Mi, Gi, ...), such as 500m or 256Mi"
        )
    return value


def _amount(quantity: str) -> Fraction:
    """The exact amount, as the API server compares quantities (``Quantity.Cmp``): ``9m``
    and ``0.009`` are equal."""
    match = _QUANTITY.fullmatch(quantity)
    assert match is not None  # validated by _quantity
    return Fraction(match["number"]) * _SCALE.get(match["suffix"] or "", Fraction(1))


Quantity = Annotated[
    str,
    BeforeValidator(_quantity),
    JsonSchema(
        {
            # A YAML number is its decimal text: any non-negative number reads as one.
            "type": ["string", "number"],
            "pattern": unnamed(f"^{_QUANTITY.pattern}$"),
            "minimum": 0,
        }
    ),
]


class ResourceRequests(Model):
    cpu: Quantity = "100m"
    """CPU the scheduler reserves for the gateway container; upstream's ``100m``."""
    memory: Quantity = "256Mi"
    """Memory the scheduler reserves; upstream's ``256Mi``."""


class ResourceLimits(Model):
    cpu: Quantity = "500m"
    """CPU the container may use at most; upstream's ``500m``."""
    memory: Quantity = "512Mi"
    """Memory the container may use at most (it is killed above); upstream's ``512Mi``."""


class ResourcesSpec(Model):
    requests: ResourceRequests = ResourceRequests()
    """What the scheduler reserves; each value defaults to upstream's on its own."""
    limits: ResourceLimits = ResourceLimits()
    """The most the container may use; each value defaults to upstream's on its own."""

    @model_validator(mode="after")
    def _requests_within_limits(self) -> ResourcesSpec:
        # The API server refuses a pod whose request exceeds its limit (kubernetes
        # pkg/apis/core/validation/validation.go ValidateResourceRequirements: quantity.Cmp(limit)
        # > 0 is "must be less than or equal to <name> limit"): refused here, before any
        # resource is registered. Not shown by the real-engine lane.
        for key in ("cpu", "memory"):
            request, limit = getattr(self.requests, key), getattr(self.limits, key)
            if _amount(request) > _amount(limit):
                raise ValueError(
                    f"requests.{key} {request} is more than limits.{key} {limit}:"
                    " Kubernetes refuses a request above its limit"
                )
        return self

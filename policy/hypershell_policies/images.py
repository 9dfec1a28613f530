"""Production stacks run images by digest only: what ``gatewayctl validate`` requires of a stack
marked ``hypershell-gateways:production`` (a release on every cluster, no per-gateway image
without a digest), checked again on what the program actually sends (after registry mirrors).

The policy cannot read the stack's config, so each stack's policy config says whether it is
production (``policy/config/<stack>.json``: ``{"images-pinned-by-digest": {"production":
true}}``); tests/test_policy.py checks that it agrees with every ``Pulumi.<stack>.yaml``.
"""

from __future__ import annotations

import re

from pulumi_policy import (
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
)

from ._props import describe
from .pods import _images

PINNED = re.compile(r"@sha256:[0-9a-f]{64}")
"""The digest the gateway accepts (upstream ValidateImageReference: ``@sha256:`` and exactly 64
lowercase hex characters), at the end of the reference."""


def is_pinned(image: str) -> bool:
    match = PINNED.search(image)
    return match is not None and match.end() == len(image)


def validate_pinned(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.get_config().get("production") is not True:
        return
    what = describe(args.resource_type, args.props, args.name)
    for where, image in _images(args):
        if not is_pinned(image):
            report(
                f"{what}: {where} {image!r} is not pinned by digest; a production stack runs"
                " images by digest only (@sha256: and 64 lowercase hex characters: bind a"
                " release, or pin the gateway's own image by digest)",
                None,
            )


images_pinned = ResourceValidationPolicy(
    name="images-pinned-by-digest",
    description="In a production stack every image (containers, gateway.toml) is pinned by digest.",
    validate=validate_pinned,
    config_schema=PolicyConfigSchema(
        properties={
            "production": {
                "description": (
                    "The stack is production (hypershell-gateways:production in its stack"
                    " file): every image must carry a sha256 digest."
                ),
                "type": "boolean",
                "default": False,
            }
        }
    ),
)

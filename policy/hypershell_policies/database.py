"""Every PostgreSQL connection verifies the server: ``sslmode=verify-full``.

That is the cluster's admin provider and each tenant's owner provider (the one that revokes
PUBLIC as the database owner): both send a password.
"""

from __future__ import annotations

import json
from typing import Any

from pulumi_policy import ReportViolation, ResourceValidationArgs, ResourceValidationPolicy

from ._props import get

POSTGRESQL_PROVIDER = "pulumi:providers:postgresql"
REQUIRED_SSLMODE = "verify-full"


def provider_value(value: Any) -> Any:
    """A provider input as written: the engine may hand provider inputs over JSON-encoded
    (``'"verify-full"'``, ``'31245'``) or as plain values."""
    if isinstance(value, str) and value.startswith('"'):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def validate_sslmode(args: ResourceValidationArgs, report: ReportViolation) -> None:
    # Explicit and default providers alike are registered, and so analyzed, as this type.
    if args.resource_type != POSTGRESQL_PROVIDER:
        return
    sslmode = provider_value(get(args.props, "sslmode"))
    if sslmode != REQUIRED_SSLMODE:
        got = "not set" if sslmode is None else repr(sslmode)
        report(
            f"PostgreSQL provider {args.name}: sslmode is {got}; every PostgreSQL connection must"
            f" use {REQUIRED_SSLMODE!r} (verify the server certificate and its host name)",
            None,
        )


postgresql_verify_full = ResourceValidationPolicy(
    name="postgresql-admin-verify-full",
    description="Every PostgreSQL provider (admin and tenant owner) uses sslmode=verify-full.",
    validate=validate_sslmode,
)

"""Where PostgreSQL is, as data (``components.database`` creates the role and database). No
provider SDK is imported here, so validating a stack does not load one (issue 23)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class DatabaseEndpoint:
    """PostgreSQL as Pulumi reaches it: the cluster admin connection's host, port and CA."""

    host: str
    """Host Pulumi connects to (``database.adminHost``)."""
    port: int
    """Port Pulumi connects to (``database.adminPort``)."""
    ssl_root_cert: str | None
    """CA bundle path for ``sslmode=verify-full``, or None for the system's."""

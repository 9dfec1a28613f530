"""Certificates: when each of a gateway's certificates expires, and whether it is inside its
renewal window.

Read from the tls resources' live outputs (``tls:index/locallySignedCert:LocallySignedCert``,
``tls:index/selfSignedCert:SelfSignedCert``; pulumi-tls schema ``validityEndTime``,
``earlyRenewalHours``, ``readyForRenewal``). The tls provider reissues a certificate only
in an ``up`` (or a refresh followed by an ``up``) once ``now >= validityEndTime -
earlyRenewalHours``: it then plans ``readyForRenewal`` true, an attribute that forces a
replacement (hashicorp/terraform-provider-tls ``internal/provider/common_cert.go``,
``modifyPlanIfCertificateReadyForRenewal``; the ``ready_for_renewal`` attribute carries
``RequiresReplace``). Nothing reissues it on its own: an ``up`` must run inside the window.
The program sets ``earlyRenewalHours`` on the leaf certificates (``components/pki.py``,
``LEAF_EARLY_RENEWAL_HOURS``); it is read here from each resource, not assumed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

LOCALLY_SIGNED = "tls:index/locallySignedCert:LocallySignedCert"
SELF_SIGNED = "tls:index/selfSignedCert:SelfSignedCert"
TYPES = (LOCALLY_SIGNED, SELF_SIGNED)


@dataclass(frozen=True, kw_only=True)
class Certificate:
    urn: str
    name: str
    expires: datetime
    renewal_hours: int
    days_left: int
    """Whole days until it expires, rounded down (negative once expired)."""
    due: bool
    """Inside its renewal window (or expired): the next ``up`` reissues it."""

    @property
    def renews_from(self) -> datetime:
        return self.expires - timedelta(hours=self.renewal_hours)


def parse_time(value: object) -> datetime | None:
    """An RFC 3339 time as the provider writes it (``2027-01-01T00:00:00Z``)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def _hours(value: object) -> int:
    if isinstance(value, bool):
        return 0
    if isinstance(value, int | float) and math.isfinite(value):
        return int(value)
    return 0


def certificate(
    urn: str, name: str, inputs: Mapping[str, Any], outputs: Mapping[str, Any], now: datetime
) -> Certificate | None:
    """None when the outputs hold no expiry (a certificate not created yet)."""
    expires = parse_time(outputs.get("validityEndTime"))
    if expires is None:
        return None
    hours = _hours(outputs.get("earlyRenewalHours", inputs.get("earlyRenewalHours")))
    due = now >= expires - timedelta(hours=hours) or outputs.get("readyForRenewal") is True
    return Certificate(
        urn=urn,
        name=name,
        expires=expires,
        renewal_hours=hours,
        days_left=math.floor((expires - now).total_seconds() / 86400),
        due=due,
    )

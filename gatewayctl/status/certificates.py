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

Inside the window a refresh changes the live state by itself: the provider's ``Read`` sets
``ready_for_renewal`` true once ``now`` is past ``validity_end_time - early_renewal_hours``
(``internal/provider/common_cert.go`` ``modifyStateIfCertificateReadyForRenewal``, called by
``Read`` of ``resource_locally_signed_cert.go`` and ``resource_self_signed_cert.go``), so
``pulumi refresh --preview-only --json`` shows the certificate as an ``update`` of
``readyForRenewal``. That is the renewal, not drift (:data:`RENEWAL_PATH`, read by
:mod:`.sync`).

Every certificate the state holds has been created, so it has a ``validityEndTime`` (a
computed output of both resources): one that cannot be read is bad input
(:class:`UnreadableError`, exit 2), never a certificate silently left out of the check.
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
RENEWAL_PATH = "readyForRenewal"


class UnreadableError(Exception):
    """A live certificate whose expiry cannot be read: ``field`` (under its outputs) and why."""

    def __init__(self, field: str, reason: str):
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


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
) -> Certificate:
    """The certificate of a live resource; :class:`UnreadableError` when its expiry is missing or
    not an RFC 3339 time (its value is never quoted: it could be a secret)."""
    raw = outputs.get("validityEndTime")
    if raw is None:
        raise UnreadableError(
            "outputs.validityEndTime", "missing: the certificate's expiry is unknown"
        )
    expires = parse_time(raw)
    if expires is None:
        raise UnreadableError(
            "outputs.validityEndTime",
            "not an RFC 3339 time (such as 2027-01-01T00:00:00Z): the certificate's expiry is"
            " unknown",
        )
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

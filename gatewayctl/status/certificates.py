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

from gatewayctl.status.models import UnreadableError, utc

LOCALLY_SIGNED = "tls:index/locallySignedCert:LocallySignedCert"
SELF_SIGNED = "tls:index/selfSignedCert:SelfSignedCert"
TYPES = (LOCALLY_SIGNED, SELF_SIGNED)
RENEWAL_PATH = "readyForRenewal"


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


MAX_RENEWAL_HOURS = 2**63 - 1
"""``earlyRenewalHours`` is an ``int64`` (pulumi-tls schema, terraform-provider-tls
``early_renewal_hours``)."""


def _hours(value: object, field: str) -> int:
    """The renewal window in hours: absent is 0 (the provider's default); else a whole number
    from 0 to :data:`MAX_RENEWAL_HOURS` (:class:`UnreadableError` otherwise)."""
    if value is None:
        return 0
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_RENEWAL_HOURS:
        raise UnreadableError(
            field,
            f"not a whole number of hours from 0 to {MAX_RENEWAL_HOURS}: the renewal window is"
            " unknown",
        )
    return value


def certificate(
    urn: str, name: str, inputs: Mapping[str, Any], outputs: Mapping[str, Any], now: datetime
) -> Certificate:
    """The certificate of a live resource; :class:`UnreadableError` when its expiry is missing or
    not an RFC 3339 time, or its renewal window not a whole number of hours that fits before
    the expiry (its value is never quoted: it could be a secret)."""
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
    try:
        expires = utc(expires)
    except ValueError as error:
        raise UnreadableError(
            "outputs.validityEndTime", f"{error}: the certificate's expiry is unknown"
        ) from None
    where = "outputs" if "earlyRenewalHours" in outputs else "inputs"
    field = f"{where}.earlyRenewalHours"
    hours = _hours((outputs if where == "outputs" else inputs).get("earlyRenewalHours"), field)
    try:
        renews_from = expires - timedelta(hours=hours)
    except OverflowError:
        raise UnreadableError(
            field,
            "a renewal window that starts before the year 1: the renewal window is unknown",
        ) from None
    due = now >= renews_from or outputs.get("readyForRenewal") is True
    return Certificate(
        urn=urn,
        name=name,
        expires=expires,
        renewal_hours=hours,
        days_left=math.floor((expires - now).total_seconds() / 86400),
        due=due,
    )

"""The HyperShell gateways policy pack: ``pulumi preview --policy-pack policy``.

Only builds the pack; the policies live in ``hypershell_policies`` so tests can import them
(constructing a PolicyPack starts the analyzer's gRPC server and blocks).
"""

from __future__ import annotations

from hypershell_policies import PACK_NAME, POLICIES
from pulumi_policy import EnforcementLevel, PolicyPack

PolicyPack(
    name=PACK_NAME,
    enforcement_level=EnforcementLevel.MANDATORY,
    policies=list(POLICIES),
)

"""Type tokens of the components, ``<package>:<module>:<type>``.

A token is part of every URN below the component, in the state and in the rendered plan:
changing one renames those resources (the engine would replace them unless an alias says
otherwise). The program, the render, the diff, the adoption file and the tests all refer to
these constants.
"""

from __future__ import annotations

from typing import Final

PACKAGE: Final = "hypershell"
"""The first part of every token."""

CLUSTER: Final = "hypershell:cluster:Cluster"
GATEWAY: Final = "hypershell:gateway:Gateway"
PKI: Final = "hypershell:gateway:Pki"
DATABASE: Final = "hypershell:gateway:Database"
WORKLOAD: Final = "hypershell:gateway:Workload"
EXPOSURE: Final = "hypershell:gateway:Exposure"
IDENTITY: Final = "hypershell:gateway:Identity"
CONSOLE: Final = "hypershell:gateway:Console"

ALL: Final = (CLUSTER, GATEWAY, PKI, DATABASE, WORKLOAD, EXPOSURE, IDENTITY, CONSOLE)
"""Every component type the program registers."""

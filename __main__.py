"""Pulumi entry point: load and validate the stack, build one Gateway per declaration, export.

Everything lives in ``gatewayctl.engine.program`` so the offline render, the lane and the tests
run the same code (``run``: ``main`` with the SDK's output drain made linear).
"""

from gatewayctl.engine.program import run

run()

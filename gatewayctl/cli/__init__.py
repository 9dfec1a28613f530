"""The command line: ``python -m gatewayctl``, one module per command (docs/architecture.md).

The top of the flow: it imports every phase and nothing imports it.
"""

"""Stack loading and validation, the program body, the offline render and the CLI."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
"""The checkout this package is in: the project root the program defaults to. The command line
never uses it: its root is ``--root`` or found from the current directory
(``gatewayctl.cli.arguments.project_root``), so an installed ``gatewayctl`` works on the clone
it is run in."""

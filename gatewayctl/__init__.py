"""Stack loading and validation, the program body, the offline render and the CLI."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
"""The checkout this package is in: the project root the tool and the program default to."""

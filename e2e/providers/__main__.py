"""``python -m e2e.providers PACKAGE ENGINE``: one stand-in provider plugin (``__init__``)."""

import sys

from e2e.providers import main

main(sys.argv[1:])

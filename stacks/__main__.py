"""``python -m stacks``: see ``stacks.cli``."""

import sys

from stacks.cli import main

sys.exit(main())

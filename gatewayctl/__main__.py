"""``python -m gatewayctl``: see ``gatewayctl.cli``."""

import sys

from gatewayctl.cli import main

sys.exit(main())

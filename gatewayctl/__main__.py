"""``python -m gatewayctl`` and the ``gatewayctl`` command (``[project.scripts]``): see
``gatewayctl.cli.main``.

Interrupts are taken over first, before the heavy imports (see ``gatewayctl.interrupts``): a
provisional handler only records a signal until the real one is installed and handles it.
"""

import signal
import sys
from typing import NoReturn

from gatewayctl import lazy


def run() -> NoReturn:
    early: list[int] = []
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda signum, _frame: early.append(signum))

    lazy.interrupts.install(early)

    sys.exit(lazy.cli_main.main())


if __name__ == "__main__":
    run()

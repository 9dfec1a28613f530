"""``python -m gatewayctl``: see ``gatewayctl.cli``.

Interrupts are taken over first, before the heavy imports (see ``gatewayctl.interrupts``): a
provisional handler only records a signal until the real one is installed and handles it.
"""

import signal
import sys

_early: list[int] = []
for _signum in (signal.SIGINT, signal.SIGTERM):
    signal.signal(_signum, lambda signum, _frame: _early.append(signum))

from gatewayctl import interrupts  # noqa: E402

interrupts.install(_early)

from gatewayctl.cli import main  # noqa: E402

sys.exit(main())

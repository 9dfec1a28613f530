"""The exit codes: those a command returns (0 ok, 3 changes or out of sync, and ``status``'s 4
and 5), and those ``gatewayctl.cli.main.main``, the one place an error becomes an exit code,
gives an error (2 invalid input, 1 any other error, 130 interrupted).
"""

EXIT_OK, EXIT_ERROR, EXIT_INVALID, EXIT_CHANGES = 0, 1, 2, 3
EXIT_DEGRADED, EXIT_RENEWAL = 4, 5  # `status` (STATUS_EPILOG); 4 also a `rollout` stopped
EXIT_CLOSED = 6  # not allowed yet: a change window (`window`), a soak not met (`promote`)
EXIT_REFUSED = 7  # `diff`: a removal loses the only key of a retained database, unrecorded
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it (SIGTERM: 143: gatewayctl.interrupts)

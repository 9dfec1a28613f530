"""``python -m gatewayctl``: validate, render and diff stacks offline.

Exit codes: 0 ok; 2 invalid input (each problem as ``path:line:column: field: problem``, nothing
written); 1 anything else; 130 interrupted. ``diff`` exits 3 when the stack's render changes.
``status`` exits 3 out of sync, 4 degraded, 5 certificates due for renewal
(``gatewayctl.cli.status.STATUS_EPILOG``).
``main`` is the one place an error becomes an exit code (the kinds: ``gatewayctl.errors``).

This module assembles the top parser from the commands' modules (each ``gatewayctl.cli.<command>``
defines its sub-parser in ``add`` and runs as ``cmd_<command>``); what they share is
``gatewayctl.cli.arguments``, ``gatewayctl.cli.prepared`` and ``gatewayctl.cli.exits``.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gatewayctl import interrupts, lazy, printing
from gatewayctl.cli import (
    arguments,
    completion,
    diff,
    driver,
    graph,
    history,
    import_file,
    move,
    notify,
    operator_manifests,
    promote,
    render,
    rollback,
    rollout,
    rotate,
    schema,
    status,
    validate,
    window,
)
from gatewayctl.cli.exits import EXIT_ERROR, EXIT_INTERRUPTED, EXIT_INVALID
from gatewayctl.errors import InvalidInputError, Problem, ToolError, UsageError, printable, safe

# Start-up (issue 23): each command imports what it needs when it runs, so ``--help``,
# ``validate``, ``stacks``, ``status``, ``promote`` and ``driver`` load no provider SDK; only
# the commands that run the program (render, diff, import-file) import ``gatewayctl.engine.render``.

DEBUG_ENV = "GATEWAYCTL_DEBUG"
GITHUB_ACTIONS_ENV = "GITHUB_ACTIONS"
"""``true`` in a GitHub Actions job: problems are also printed as annotations (``::error``)."""
DEBUG_HINT = f"unexpected: run with --debug or {DEBUG_ENV}=1 for the traceback"
DEBUG_HELP = (
    f"on an error that exits 1, print its traceback (for a bug report) instead of one line;"
    f" also {DEBUG_ENV}=1"
)

DISTRIBUTION = "hypershell-gateways"
"""The project's name in pyproject.toml: ``--version`` prints its version."""


def version() -> str:
    """The installed project's version (``[project] version``; ``uv sync`` installs it)."""

    try:
        return lazy.importlib_metadata.version(DISTRIBUTION)
    except (
        lazy.importlib_metadata.PackageNotFoundError
    ):  # modules run from a checkout nothing installed
        raise ToolError(f"{DISTRIBUTION} is not installed here; run `make setup`") from None


class _Version(argparse.Action):
    """``--version``: the version is looked up only when asked for."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        sys.stdout.write(f"gatewayctl {version()}\n")
        parser.exit()


def parser() -> argparse.ArgumentParser:
    top = arguments.Parser(
        prog="gatewayctl",
        description="Validate and render HyperShell gateway stacks offline, with no Pulumi CLI,"
        " backend, cluster or credentials.",
        epilog=arguments.EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    top.add_argument("--root", type=Path, default=None, help=arguments.ROOT_HELP)
    top.add_argument("--debug", action="store_true", help=DEBUG_HELP)
    top.add_argument("--version", action=_Version, help="print the project's version and exit")
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    # In the order --help lists them.
    render.add(commands)
    validate.add(commands)
    diff.add(commands)
    import_file.add(commands)
    operator_manifests.add(commands)
    promote.add(commands)
    rotate.add(commands)
    move.add(commands)
    driver.add(commands)  # stacks, driver
    status.add(commands)
    window.add(commands)
    rollout.add(commands)
    history.add(commands)
    rollback.add(commands)
    notify.add(commands)
    schema.add(commands)  # schema, explain
    completion.add(commands, top)
    graph.add(commands)
    for command in commands.choices.values():  # also after the command; unset, the top's stays
        command.add_argument(
            "--debug", action="store_true", default=argparse.SUPPRESS, help=DEBUG_HELP
        )
    return top


def main(argv: Sequence[str] | None = None) -> int:
    arguments.Parser.refused = None
    try:
        args = parser().parse_args(argv)
    except SystemExit as exited:  # --help, --version, or a command line argparse refuses
        words = sys.argv[1:] if argv is None else argv
        refused, format = arguments.Parser.refused, printing.requested_format(words)
        if exited.code == EXIT_INVALID and refused is not None and format is not None:
            printing.print_document(printing.usage_document(safe(refused)), format)
        raise
    # Full-width tables in logs and CI, where there is no terminal to measure.

    console = lazy.rich_console.Console(
        highlight=False, emoji=False, width=None if sys.stdout.isatty() else 160
    )
    errors = lazy.rich_console.Console(stderr=True, highlight=False, emoji=False)
    # The one place an error becomes an exit code (gatewayctl.errors: the kinds).
    try:
        if args.root is None:  # never the checkout the tool is installed from
            args.root = arguments.project_root(
                Path.cwd(), required=getattr(args, "reads_project", True)
            )
        # Every output of the command is kept, or none (an error or an interrupt undoes them).
        with interrupts.transaction():
            code: int = args.func(args, console)
    except InvalidInputError as error:
        from gatewayctl.inputs.locations import locate

        problems = locate(error.problems, args.root)
        if printing.is_document(args):
            printing.print_document(printing.problems_document(problems), args.format)
        for problem in problems:
            errors.print(f"error: {problem}", markup=False, soft_wrap=True)
        errors.print(f"{len(problems)} problem(s); nothing written", markup=False)
        if os.environ.get(GITHUB_ACTIONS_ENV) == "true":
            _annotate(problems, args.root)
        return EXIT_INVALID
    except UsageError as error:
        if printing.is_document(args):  # the problems document, as for invalid input
            printing.print_document(printing.usage_document(safe(str(error))), args.format)
        errors.print(f"error: {safe(str(error))}", markup=False, soft_wrap=True)
        return EXIT_INVALID
    except KeyboardInterrupt:  # in process; `python -m gatewayctl` handles signals itself
        errors.print(interrupts.message(signal.SIGINT), markup=False)
        return EXIT_INTERRUPTED
    except Exception as error:  # a ToolError, or one the tool did not expect
        if args.debug or os.environ.get(DEBUG_ENV, "") not in {"", "0"}:
            sys.stderr.write("".join(traceback.format_exception(error)))
        elif isinstance(error, ToolError):
            errors.print(f"error: {safe(str(error))}", markup=False, soft_wrap=True)
        else:
            errors.print(_unexpected(error), markup=False, soft_wrap=True)
        return EXIT_ERROR
    return code


def _annotate(problems: Sequence[Problem], root: Path) -> None:
    """One GitHub Actions annotation per problem, on its file's line (the runner reads workflow
    commands from stderr as from stdout); paths are the workspace's, where the checkout is."""

    workspace = os.path.abspath(os.environ.get("GITHUB_WORKSPACE") or os.getcwd())
    for problem in problems:
        path = os.path.abspath(root / problem.path)
        relative = os.path.relpath(path, workspace)
        outside = relative == os.pardir or relative.startswith(os.pardir + os.sep)
        inside = os.path.isfile(path) and not outside
        line = lazy.errors.annotation(problem, Path(relative).as_posix() if inside else None)
        sys.stderr.write(line + "\n")
    sys.stderr.flush()


def _unexpected(error: Exception) -> str:
    """One line for an exception the tool did not expect: its type, its message, and how to
    get the traceback."""
    message = printable(safe(str(error)))  # one line, whatever the message holds
    named = f"{type(error).__name__}: {message}" if message else type(error).__name__
    return f"error: {named} ({DEBUG_HINT})"


if __name__ == "__main__":
    sys.exit(main())

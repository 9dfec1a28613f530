"""What the commands' parsers share, in one place: the parser class (a description written only
when shown), the help texts several commands show, and the common arguments with their checks:
the stack selection (STACK or --all), ``--jobs``, ``-q``, and the output paths, checked before
anything is rendered or written. The result's format option is ``gatewayctl.printing``'s
(``format_option``).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from gatewayctl import lazy
from gatewayctl.errors import InvalidInputError, Problem, UsageError

EPILOG = """\
exit codes: 0 ok; 2 invalid input (every problem listed as `path:line:column: field: problem`,
nothing written; also as GitHub annotations when GITHUB_ACTIONS=true); 1 any other error (its
traceback with --debug or GATEWAYCTL_DEBUG=1, for a bug report).

examples:
  gatewayctl validate aws          # config and declarations only; fast, for PR checks
  gatewayctl validate aws --deploy # also ready for `pulumi up`: CA bundles, real secrets
  gatewayctl render ibm            # → build/rendered/ibm/{manifests/,plan.json}
  gatewayctl render --all          # every Pulumi.<stack>.yaml
  gatewayctl diff aws --base origin/main   # Markdown report of what a PR changes
  gatewayctl promote openshell-0.0.110 --to aws   # bind a release (releases/)
  gatewayctl status ibm --from refresh.json state.json  # sync/health per gateway
"""
"""The epilog of the top parser, ``render`` and ``validate``."""

# --- the project root -----------------------------------------------------------------------

PROJECT_FILE = "Pulumi.yaml"
PROJECT_FILE_LIMIT = 64 * 1024
"""Bytes of a ``Pulumi.yaml`` read to find its project's name (the project's is a few lines)."""
ROOT_HELP = (
    "project root (default: the current directory or the nearest above it with this project's"
    " Pulumi.yaml)"
)


def _project_name(path: Path) -> str | None:
    """The top-level ``name:`` of a ``Pulumi.yaml`` (plain or quoted), read from its start."""
    try:
        with path.open("rb") as file:
            head = file.read(PROJECT_FILE_LIMIT).decode("utf-8", errors="replace")
    except OSError:
        return None
    for line in head.splitlines():
        if line.startswith("name:"):
            value = line.removeprefix("name:").split(" #", 1)[0].strip()
            return value.strip("'\"") or None
    return None


def project_root(start: Path, *, required: bool = True) -> Path:
    """The project a command works on when ``--root`` is not given: ``start`` (the current
    directory) or the nearest directory above it with a ``Pulumi.yaml``, which must be this
    project's (``name: hypershell-gateways``). Never the checkout the tool is installed from:
    a ``gatewayctl`` on PATH works on the clone it is run in. :class:`UsageError` when there is
    none, or the nearest is another project's; with ``required`` false (a command that reads
    no project: ``schema``, ``explain``, ``completion``) ``start`` instead."""

    start = start.absolute()
    for directory in (start, *start.parents):
        candidate = directory / PROJECT_FILE
        if not candidate.is_file():
            continue
        name = _project_name(candidate)
        if name == lazy.stackfile.PROJECT:
            return directory
        if not required:
            return start
        shown = repr(lazy.errors.printable(name)[:128]) if name else "no name"
        project = lazy.stackfile.PROJECT
        raise UsageError(
            f"{lazy.errors.printable(str(candidate))} is of project {shown}, not {project!r}:"
            f" run in a checkout of {project} or give --root"
        )
    if not required:
        return start
    where = lazy.errors.printable(str(start))
    raise UsageError(
        f"no {PROJECT_FILE} of project {lazy.stackfile.PROJECT!r} in {where} or above it:"
        " run in a checkout of the project or give --root"
    )


STACK_HELP = "stack name, as in Pulumi.<stack>.yaml"
STACKS_HELP = "stack name(s)"
QUIET_HELP = "no notes on stderr, only the result"


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose description may be written when its help is shown
    (``describe``): a command's help names constants of modules that the other commands, and
    ``--help``, need not import."""

    def __init__(
        self, *args: Any, describe: Callable[[], str] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self._describe = describe

    def format_help(self) -> str:
        if self._describe is not None:
            self.description, self._describe = self._describe(), None
        return super().format_help()

    refused: str | None = None
    """The message of the last command line a parser refused (exit 2), for the problems
    document ``gatewayctl.cli.main`` prints under ``-o json|yaml``."""

    def error(self, message: str) -> NoReturn:
        Parser.refused = f"{self.prog}: {message}"
        super().error(message)


if TYPE_CHECKING:
    Commands = argparse._SubParsersAction[Parser]
    """What each command module's ``add`` adds its sub-parser to (``gatewayctl.cli.main``)."""


# --- the stack selection --------------------------------------------------------------------


def stack_arguments(command: argparse.ArgumentParser, all_help: str) -> None:
    """One STACK, or ``--all`` (``all_help``): checked by :func:`stacks`."""
    command.add_argument("stack", nargs="?", help=STACK_HELP)
    command.add_argument("--all", action="store_true", help=all_help)


def stacks(args: argparse.Namespace, root: Path) -> list[str]:
    """The stacks :func:`stack_arguments` select: STACK, or every stack with ``--all``."""

    if args.all == bool(args.stack):
        raise UsageError("name one STACK or pass --all")
    return lazy.stackfile.requested_stacks(root, None if args.all else args.stack)


def many_stacks_arguments(command: argparse.ArgumentParser) -> None:
    """STACKs, or ``--all``: checked by :func:`check_many_stacks`."""
    command.add_argument("stacks", nargs="*", metavar="STACK", help=STACKS_HELP)
    command.add_argument("--all", action="store_true", help="every Pulumi.*.yaml stack")


def check_many_stacks(args: argparse.Namespace) -> None:
    """One or more STACKs, or ``--all``, not both (:func:`many_stacks_arguments`)."""
    if args.all == bool(args.stacks):
        raise UsageError("name one or more STACKs or pass --all")


# --- --jobs and --quiet ---------------------------------------------------------------------


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: at least 1")
    return value


def jobs_argument(command: argparse.ArgumentParser, verb: str) -> None:
    command.add_argument(
        "--jobs",
        "-j",
        type=positive,
        metavar="N",
        help=f"{verb} at most N stacks at once, each in a worker process of its own (default:"
        " as many as there are cores and stacks); 1: one after the other in this process"
        + (
            "; a stack of many gateways is split over the workers, as many as its size"
            " needs (small stacks render in this process)"
            if verb == "render"
            else ""
        ),
    )


def jobs(args: argparse.Namespace, stacks: int) -> int:
    """``--jobs``, or as many workers as there are cores and stacks."""

    jobs = getattr(args, "jobs", None)
    return lazy.parallel.default_jobs(stacks) if jobs is None else min(jobs, max(stacks, 1))


def quiet_argument(command: argparse.ArgumentParser, help: str = QUIET_HELP) -> None:
    command.add_argument("-q", "--quiet", action="store_true", help=help)


# --- output paths ---------------------------------------------------------------------------


def output_argument(
    command: argparse.ArgumentParser, *flags: str, metavar: str | None = None, help: str
) -> None:
    """A path the command writes (``--out DIR|FILE``, ``--output FILE``, ``--json FILE``),
    checked before anything is written (:func:`check_directories`, :func:`check_file`)."""
    command.add_argument(*flags, type=Path, metavar=metavar, help=help)


def check_directories(root: Path, outs: Iterable[Path]) -> None:
    """Every output directory is checked before anything is rendered or written."""

    if problems := lazy.write_guard.directories_problems(outs, root):
        raise InvalidInputError(problems)


def check_file(
    out: Path, root: Path, *, ours: Callable[[str], bool], kind: str, flag: str = "--out"
) -> None:
    """The output file ``out`` may be written (``gatewayctl.engine.write_guard.file_problems``)."""

    if problems := lazy.write_guard.file_problems(out, root, ours=ours, kind=kind, flag=flag):
        raise InvalidInputError(problems)


def distinct_problems(named: Iterable[tuple[str, Path | None]]) -> list[Problem]:
    """Two outputs of one command that are one path, or one inside the other (``--output F
    --json F``: the second write would replace the first): a problem for the later flag, checked
    before anything is written. ``named``: each output's flag and path (None: not given)."""
    given: list[tuple[str, Path, Path]] = []
    for flag, path in named:
        try:
            if path is not None:
                given.append((flag, path, path.resolve()))
        except (OSError, ValueError, RuntimeError):  # unusable: its own check says so
            continue
    problems = []
    for index, (flag, path, target) in enumerate(given):
        for other, _, earlier in given[:index]:
            if target == earlier or earlier in target.parents or target in earlier.parents:
                problems.append(
                    Problem(
                        str(path),
                        flag,
                        f"is also where {other} writes (or holds it, or is inside it); give"
                        " each output a path of its own",
                    )
                )
                break
    return problems

"""The tool's errors: one hierarchy, and the CLI's main the one place each becomes an exit code.

Invalid input and usage errors exit 2 with their messages and never a traceback; tool errors
exit 1 with one line; an exception the tool did not expect exits 1 with one line naming its
type and how to get the traceback, which ``--debug`` (before or after the command) or
``GATEWAYCTL_DEBUG=1`` prints instead. Interrupts are not errors: ``--debug`` leaves them alone.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gatewayctl.cli import exits
from gatewayctl.cli import main as cli
from gatewayctl.diff import repository as diff
from gatewayctl.errors import (
    GatewayctlError,
    InvalidInputError,
    Problem,
    ToolError,
    UsageError,
)
from gatewayctl.resolve import preparation
from tests.builders import (
    CONFIG_FILE,
    PREFIX,
    STACK,
    cluster,
    copy_project,
    write_gateway,
    write_stack,
)
from tests.hostile_helpers import run_cli, unlocated
from tests.support import ROOT

PACKAGE = ROOT / "gatewayctl"
HINT = "unexpected: run with --debug or GATEWAYCTL_DEBUG=1 for the traceback"
TRACEBACK = "Traceback (most recent call last):\n"

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

MODES = ["plain", "env=0", "env=empty", "--debug", "--debug after the command", "env=1"]
"""How a run is asked for the traceback (the last three) or not (the first three)."""
DEBUG_MODES = MODES[3:]


Main = Callable[[list[str], str], tuple[int, str, str]]
"""``cli.main(argv)`` in a mode: its exit code, stdout and stderr."""


@pytest.fixture
def main(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Main:
    def call(argv: list[str], mode: str) -> tuple[int, str, str]:
        monkeypatch.delenv(cli.DEBUG_ENV, raising=False)
        if mode.startswith("env="):
            value = mode.removeprefix("env=")
            monkeypatch.setenv(cli.DEBUG_ENV, "" if value == "empty" else value)
        if mode == "--debug":
            argv = ["--debug", *argv]
        elif mode == "--debug after the command":
            argv = [*argv, "--debug"]
        capsys.readouterr()
        code = cli.main(argv)
        out, err = capsys.readouterr()
        return code, out, err

    return call


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the project's stacks and declarations in a directory that is no git work tree
    (git looks no further up than ``tmp_path``)."""
    copy = copy_project(tmp_path / "project")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    return copy


def git_failure(directory: Path) -> str:
    """The last line git prints for ``rev-parse --show-toplevel`` outside a work tree."""
    done = subprocess.run(
        ["git", "-C", str(directory), "rev-parse", "--show-toplevel"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode != 0, f"{directory} is inside a git work tree"
    return done.stderr.strip().splitlines()[-1]


# --- the hierarchy ----------------------------------------------------------------------------


def test_every_error_the_tool_reports_is_one_of_three_kinds() -> None:
    for kind in (InvalidInputError, UsageError, ToolError):
        assert kind.__bases__ == (GatewayctlError,)
    assert GatewayctlError.__bases__ == (Exception,)
    assert diff.DiffError.__mro__[1] is ToolError
    assert diff.BaseRefError.__mro__[1] is UsageError


def _modules() -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def test_exit_codes_of_errors_are_decided_in_the_cli_main_only() -> None:
    codes = {"EXIT_ERROR", "EXIT_INVALID", "EXIT_INTERRUPTED"}
    found: list[str] = []
    for path, module in _modules():
        functions = [n for n in ast.walk(module) if isinstance(n, ast.FunctionDef)]
        for function in functions:
            if path.relative_to(PACKAGE).as_posix() == "cli/main.py" and function.name == "main":
                continue
            names = {n.id for n in ast.walk(function) if isinstance(n, ast.Name)}
            found += [f"{path.name}:{function.name}:{name}" for name in sorted(names & codes)]
        raised = [
            n.exc
            for n in ast.walk(module)
            if isinstance(n, ast.Raise) and isinstance(n.exc, ast.Call | ast.Name)
        ]
        for exc in raised:
            name = exc.func if isinstance(exc, ast.Call) else exc
            if isinstance(name, ast.Name) and name.id == "SystemExit":
                found.append(f"{path.name}:{exc.lineno}:raise SystemExit")
    assert found == []


def test_an_invalid_input_error_carries_its_problems_sorted_once() -> None:
    second, first = Problem("b.yaml", "spec", "bad"), Problem("a.yaml", "", "worse")
    error = InvalidInputError([second, first, second])
    assert error.problems == [first, second]
    assert str(error) == "a.yaml: worse\nb.yaml: spec: bad"


# --- exit 2: invalid input and usage, never a traceback ---------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_invalid_input_exits_2_with_every_problem(mode: str, main: Main) -> None:
    assert main(["validate", "gcp"], mode) == (
        2,
        "",
        "error: Pulumi.gcp.yaml: no such stack; the stacks here are aws, ibm, local\n"
        "1 problem(s); nothing written\n",
    )


@pytest.mark.parametrize("mode", MODES)
def test_conflicting_arguments_exit_2_with_one_line(mode: str, main: Main) -> None:
    assert main(["render", "local", "--all"], mode) == (
        2,
        "",
        "error: name one STACK or pass --all\n",
    )


@needs_git
@pytest.mark.parametrize("mode", MODES)
def test_a_base_ref_that_is_no_ref_exits_2_with_one_line(
    mode: str, project: Path, main: Main
) -> None:
    subprocess.run(["git", "init", "--quiet", str(project)], check=True)
    argv = ["--root", str(project), "diff", "local", "--base=-x"]
    assert main(argv, mode) == (2, "", "error: --base: '-x' is not a git ref\n")


# --- exit 1: a tool error and an unexpected one, with and without the traceback ---------------


@needs_git
@pytest.mark.parametrize("mode", MODES)
def test_a_tool_error_exits_1_with_its_message_or_traceback(
    mode: str, project: Path, main: Main
) -> None:
    code, out, err = main(["--root", str(project), "diff", "local", "--base", "HEAD"], mode)
    assert (code, out) == (1, "")
    message = f"git rev-parse failed: {git_failure(project)}"
    if mode not in DEBUG_MODES:
        assert err == f"error: {message}\n"
        return
    assert err.startswith(TRACEBACK)
    error = diff.DiffError
    assert err.endswith(f"\n{error.__module__}.{error.__qualname__}: {message}\n")
    assert "in resolve_base\n" in err
    assert "\nerror: " not in err


def _boom(*_: object, **__: object) -> None:
    raise RuntimeError("disk on fire\nsecond line")


@pytest.mark.parametrize("mode", MODES)
def test_an_unexpected_error_exits_1_with_one_line_naming_its_type_or_its_traceback(
    mode: str, main: Main, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(preparation, "prepare", _boom)
    code, out, err = main(["validate", "local"], mode)
    assert (code, out) == (1, "")
    if mode not in DEBUG_MODES:
        assert err == f"error: RuntimeError: disk on fire\\nsecond line ({HINT})\n"
        return
    assert err.startswith(TRACEBACK)
    assert err.endswith("\nRuntimeError: disk on fire\nsecond line\n")
    # The whole traceback: from the command line's entry down to the frame that raised (the
    # frames between are the program's own, free to change), each with its file.
    frames = [
        (line.split('"')[1], line.split(", in ")[1])
        for line in err.splitlines()
        if line.startswith("  File ")
    ]
    assert frames[0] == (cli.__file__, cli.main.__name__)
    assert frames[-1] == (__file__, _boom.__name__)
    assert all(Path(file).is_relative_to(PACKAGE) for file, _ in frames[:-1]), frames
    assert HINT not in err


def test_an_unexpected_error_without_a_message_is_named_by_its_type(
    main: Main, monkeypatch: pytest.MonkeyPatch
) -> None:
    def lookup(*_: object, **__: object) -> None:
        raise LookupError

    monkeypatch.setattr(preparation, "prepare", lookup)
    assert main(["validate", "local"], "plain") == (1, "", f"error: LookupError ({HINT})\n")


# --- interrupts --------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", DEBUG_MODES)
def test_debug_leaves_an_interrupt_as_it_is(
    mode: str, main: Main, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*_: object, **__: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(preparation, "prepare", interrupted)
    plain = main(["validate", "local"], "plain")
    assert plain[0] == exits.EXIT_INTERRUPTED == 130
    assert main(["validate", "local"], mode) == plain
    assert "Traceback" not in plain[2]


# --- a real process ---------------------------------------------------------------------------


@needs_git
@pytest.mark.parametrize("debug", [False, True], ids=["plain", "GATEWAYCTL_DEBUG=1"])
def test_the_exit_status_and_stderr_of_a_real_process(project: Path, debug: bool) -> None:
    env = {k: v for k, v in os.environ.items() if k != cli.DEBUG_ENV}
    if debug:
        env[cli.DEBUG_ENV] = "1"
    command = ["--root", str(project), "diff", "local", "--base", "HEAD"]
    done = subprocess.run(
        [sys.executable, "-m", "gatewayctl", *command],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    message = f"git rev-parse failed: {git_failure(project)}"
    assert (done.returncode, done.stdout) == (1, "")
    if debug:
        assert done.stderr.startswith(TRACEBACK)
        assert done.stderr.endswith(f".DiffError: {message}\n")
    else:
        assert done.stderr == f"error: {message}\n"


# --- no message echoes the secret parts of a URL (issue 21, item 5) ---------------------------


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (
            "'https://alice:s3cret@vault.example.com:8200/v1?token=t0k#frag' is not a URL",
            "'https://[secret]@vault.example.com:8200/v1?[secret]' is not a URL",
        ),
        (
            "see https://u:s3cret@h.example.com/p?x=t0k now",
            "see https://[secret]@h.example.com/p?[secret] now",
        ),
        ("'https://id.example.com/r#s3cret'", "'https://id.example.com/r#[secret]'"),
        # A password with a '/', a space or a '?' still ends nowhere but at the last '@'.
        ("'https://a/b:s3 cret@h.example.com'", "'https://[secret]@h.example.com'"),
        ("'https://u?x:s3cret@h.example.com'", "'https://u?[secret]'"),
        ('"ssh://git:s3cret@git.example.com/r"', '"ssh://[secret]@git.example.com/r"'),
        # Nothing secret: unchanged.
        ("'https://id.example.com/realms/r' is fine", "'https://id.example.com/realms/r' is fine"),
        ("https://host[:port][/path], no query", "https://host[:port][/path], no query"),
        ("the stack's 'x' value", "the stack's 'x' value"),
    ],
)
def test_a_url_is_shown_without_user_info_query_or_fragment(text: str, shown: str) -> None:
    assert str(Problem("f.yaml", "spec.x", text)) == f"f.yaml: spec.x: {shown}"
    assert Problem("f.yaml", text, "m").field == shown


URL_SECRETS = ("s3cret", "t0k3n", "fr4g")


def test_no_url_field_echoes_its_user_info_query_or_fragment(tmp_path: Path) -> None:
    """Each URL field of a stack and a declaration holds a password, a token in its query and
    a fragment; every one is refused (exit 2), named, and none of the three is printed."""
    bad = "https://alice:s3cret@{host}/x?token=t0k3n#fr4g"
    keycloak = {
        "url": bad.format(host="sso.example.com"),
        "realm": "r",
        "adminClientId": "provisioner",
        "issuerUrl": bad.format(host="id.example.com"),
    }
    write_stack(
        tmp_path,
        clusters={"c1": cluster(identity={"keycloak": keycloak})},
        secrets={"c1": {"dbAdminPassword": "pw", "keycloakAdminClientSecret": "kc"}},
    )
    own = write_gateway(tmp_path, "own", {"oidc": {"issuer": bad.format(host="idp.example.com")}})
    vault = {"address": bad.format(host="vault.example.com:8200"), "role": "r"}
    stored = write_gateway(
        tmp_path, "vaulted", {"credentials": {"driver": "vault", "vault": vault}}
    )

    outcome = run_cli("--root", str(tmp_path), "validate", STACK)

    assert outcome.code == 2
    lines = unlocated(outcome.err).splitlines()[:-1]
    assert [line.split(": ")[:2] for line in lines] == [
        ["error", CONFIG_FILE],
        ["error", CONFIG_FILE],
        ["error", own],
        ["error", stored],
    ]
    assert [line.split(": ")[2] for line in lines] == [
        f"{PREFIX}clusters.c1.identity.keycloak.issuerUrl",
        f"{PREFIX}clusters.c1.identity.keycloak.url",
        "spec.oidc.issuer",
        "spec.credentials.vault.address",
    ]
    assert "https://[secret]@" in outcome.err
    assert [secret for secret in URL_SECRETS if secret in outcome.out + outcome.err] == []

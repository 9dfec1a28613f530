"""The command line's contract (issue 42, item 16): every exit 2 under ``-o json|yaml`` prints
the problems document on stdout, a usage error and a command line the parser refuses included;
every command's ``--help`` gives its exit codes and examples; and help names the tool as it is
run, ``gatewayctl`` (as the README does), never ``python -m gatewayctl``."""

from __future__ import annotations

import contextlib
import io
import json
import re

import pytest
import yaml

from gatewayctl.cli import main as cli
from gatewayctl.printing import requested_format
from tests.hostile_helpers import run_cli
from tests.status_builders import FIXTURES

STATE = str(FIXTURES / "state.json")
NO_GATEWAY = (
    "stack ibm has no gateway 'nogw' (declared or in the files); its gateways: batch-jobs,"
    " canary, research, team-a"
)


def _document(message: str) -> dict[str, object]:
    problem = {"path": None, "line": None, "column": None, "field": "", "message": message}
    return {"problems": [{**problem, "text": message}]}


@pytest.mark.parametrize(("fmt", "load"), [("json", json.loads), ("yaml", yaml.safe_load)])
def test_a_usage_error_prints_the_problems_document(fmt: str, load: object) -> None:
    out = run_cli("status", "ibm", "nogw", "--from", STATE, "-o", fmt)
    assert (out.code, out.err) == (2, f"error: {NO_GATEWAY}\n")
    assert callable(load) and load(out.out) == _document(NO_GATEWAY)
    # Without a document format, stderr alone, as before.
    out = run_cli("status", "ibm", "nogw", "--from", STATE)
    assert (out.code, out.out, out.err) == (2, "", f"error: {NO_GATEWAY}\n")


@pytest.mark.parametrize(
    "words",
    [
        ["validate", "ibm", "-o", "json", "--jobs", "0"],
        ["validate", "ibm", "-ojson", "--jobs", "0"],
        ["validate", "ibm", "--format=json", "--jobs", "0"],
        ["validate", "ibm", "--output", "yaml", "--output", "json", "--jobs", "0"],
    ],
)
def test_a_command_line_the_parser_refuses_prints_the_problems_document(
    words: list[str],
) -> None:
    out, err = io.StringIO(), io.StringIO()
    redirected = contextlib.redirect_stdout(out), contextlib.redirect_stderr(err)
    with redirected[0], redirected[1], pytest.raises(SystemExit) as exited:
        cli.main(words)
    message = "gatewayctl validate: argument --jobs/-j: '0': at least 1"
    assert exited.value.code == 2
    assert json.loads(out.getvalue()) == _document(message)
    assert err.getvalue().endswith(
        "\ngatewayctl validate: error: argument --jobs/-j: '0': at least 1\n"
    )


def test_without_a_document_format_a_refused_command_line_prints_nothing_on_stdout() -> None:
    out, err = io.StringIO(), io.StringIO()
    redirected = contextlib.redirect_stdout(out), contextlib.redirect_stderr(err)
    with redirected[0], redirected[1], pytest.raises(SystemExit) as exited:
        cli.main(["validate", "ibm", "--jobs", "0"])
    assert (exited.value.code, out.getvalue()) == (2, "")
    assert requested_format(["graph", "--format", "dot", "-o", "g.dot"]) is None
    assert requested_format(["diff", "--output=report.md", "--format", "yaml"]) == "yaml"


def _helps() -> dict[str, str]:
    top = cli.parser()
    (commands,) = [a for a in top._actions if a.dest == "command"]
    assert isinstance(commands.choices, dict)
    helps = {"": top.format_help()}
    for name, command in commands.choices.items():
        helps[name] = command.format_help()
    return helps


def test_every_help_names_the_tool_as_it_is_run_and_gives_exit_codes_and_examples() -> None:
    helps = _helps()
    assert sorted(helps) == [
        "",
        "completion",
        "diff",
        "driver",
        "explain",
        "graph",
        "history",
        "import-file",
        "move",
        "notify",
        "operator-manifests",
        "promote",
        "render",
        "rollback",
        "rollout",
        "rotate",
        "schema",
        "stacks",
        "status",
        "validate",
        "window",
    ]
    for name, text in helps.items():
        assert "python -m" not in text, name
        assert text.startswith(f"usage: gatewayctl {name}".rstrip()), name
        assert "\nexit codes: 0 " in text, name
        examples = text.split("\nexamples:\n", 1)[1].splitlines()
        # Each example of the tool (another may prepare its input: `pulumi stack export`).
        shown = [line for line in examples if "gatewayctl" in line]
        # The tool run as a command of its own: at the line's start, in `<(...)` or a pipe.
        assert shown and all(re.search(r"(^  |<\(|\| )gatewayctl ", line) for line in shown), name


def test_stacks_help_gives_its_exit_codes_and_examples() -> None:
    text = _helps()["stacks"]
    assert text.endswith(
        "exit codes: 0 ok; 2 invalid input (a stack file whose name is no stack name, no stack"
        " file at\nall, an unknown STACK, a problem of deploy/stacks.yaml with --deployed; with"
        " --changed, a\nstack whose diff is not recorded in DIR or a record that is not the"
        " diff's JSON: every problem\nlisted as `path: field: problem`); 1 any other error.\n\n"
        "examples:\n"
        '  gatewayctl stacks             # ["aws","ibm","local"]: one diff job per stack\n'
        "  gatewayctl stacks -o yaml     # the same list in YAML\n"
        '  gatewayctl stacks --deployed  # ["aws","ibm"]: the stacks CI deploys'
        " (deploy/stacks.yaml)\n"
        "  gatewayctl stacks --changed build/diff-summary --deployed\n"
        '                                # ["aws"]: of those, the ones whose recorded offline'
        " diff\n"
        "                                # changes (the pull request's previews)\n"
    )
    out = run_cli("stacks")
    assert (out.code, out.out, out.err) == (0, '["aws","ibm","local"]\n', "")


def test_schema_help_says_what_stack_file_prints_and_shows_it() -> None:
    text = " ".join(_helps()["schema"].split())  # the formatter's line breaks aside
    assert (
        "--stack-file describe a stack's settings instead of a declaration: the keys of"
        " Pulumi.<stack>.yaml under hypershell-gateways: (schemas/stack.schema.json; with"
        " --markdown, the key reference docs/stack-reference.md)"
    ) in text
    assert text.endswith(
        "gatewayctl schema --stack-file > schemas/stack.schema.json"
        " gatewayctl schema --stack-file --markdown > docs/stack-reference.md"
    )

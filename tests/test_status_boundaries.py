"""What the status hands on is no syntax for its reader (issue 42 item 4): no printed line
reads as a GitHub Actions workflow command (``gatewayctl.printing.inert``), and a URN that is
no valid ``pulumi up --target`` is refused from ``remedy.targets`` with a problem (exit 2)
rather than written into ``$GITHUB_OUTPUT`` by the drift workflow.
"""

from __future__ import annotations

import io
from datetime import UTC, datetime
from typing import Any

import pytest
from rich.console import Console
from rich.text import Text

from gatewayctl import printing
from gatewayctl.errors import InvalidInputError
from gatewayctl.status import core, inputs, selfheal, view
from gatewayctl.status.models import PreviewDigest
from tests.status_builders import (
    digest,
    export,
    gateway_resources,
    refresh_step,
    stack_resources,
)

NOW = datetime(2026, 12, 1, 5, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("::error::pwned", "%3A:error::pwned"),
        ("   ::add-mask::x", "   %3A:add-mask::x"),
        ("\t::stop-commands::t", "\t%3A:stop-commands::t"),
        ("name ::error::x", "name ::error::x"),
        ("urn:pulumi:ibm::p::t::n", "urn:pulumi:ibm::p::t::n"),
        (":single", ":single"),
    ],
)
def test_a_line_never_reads_as_a_workflow_command(line: str, shown: str) -> None:
    assert printing.inert(line) == shown


def test_every_line_of_a_text_is_made_inert() -> None:
    text = "gateways:\n  ::error::x: 1\nok\n"
    assert printing.inert_text(text) == "gateways:\n  %3A:error::x: 1\nok\n"


def shown(lines: list[Text | str]) -> str:
    out = io.StringIO()
    printing.show(Console(file=out, width=80, color_system=None), lines)
    return out.getvalue()


def test_show_escapes_a_line_that_starts_a_workflow_command() -> None:
    assert shown([Text("::error::x  Synced"), "a ::b"]) == "%3A:error::x  Synced\na ::b\n"


def _built(resources: list[dict[str, Any]]) -> core.StackStatus:
    parsed = inputs.Inputs(
        checkpoint=inputs.UntypedDeployment.model_validate(export(resources)).deployment,
        refresh=PreviewDigest.model_validate(digest([refresh_step(r) for r in resources])),
    )
    return core.build("ibm", parsed, NOW)


def test_a_gateway_named_as_a_workflow_command_is_listed_inert() -> None:
    name = "::error::pwned"
    status = _built(stack_resources({name: None}) + gateway_resources(name, exposed=False))

    text = shown(list(view.list_lines(status, wide=False)))

    assert [line.split()[0] for line in text.splitlines()] == ["NAME", "%3A:error::pwned"]


def _due(name: str, suffix: str) -> list[dict[str, Any]]:
    resources = stack_resources({name: None}) + gateway_resources(
        name, exposed=False, cert_end="2026-12-10T00:00:00Z"
    )
    for r in resources:
        if r["urn"].endswith("-pki-server-cert"):
            r["urn"] += suffix
    return resources


@pytest.mark.parametrize(
    ("suffix", "why"),
    [
        (";urn:pulumi:ibm::x::y::z", "holds ';', which separates targets"),
        ("\noutcome=green", "holds a line break or another control character"),
        (" ", "starts or ends with white space"),
    ],
    ids=["semicolon", "newline", "trailing-space"],
)
def test_a_urn_that_is_no_valid_target_is_refused_from_the_remedy(suffix: str, why: str) -> None:
    status = _built(_due("y", suffix))
    urn = next(c.urn for c in status.due if c.urn.endswith(suffix))

    with pytest.raises(InvalidInputError) as caught:
        selfheal.remedy(status, True, "state.json")

    name = repr(("y-pki-server-cert" + suffix).replace("\n", "\\n"))
    assert urn.endswith("::y-pki-server-cert" + suffix)
    assert [(p.path, p.field, p.message) for p in caught.value.problems] == [
        (
            "state.json",
            "remedy.targets",
            f"certificate {name} is due for renewal, but its URN {why}: refused as a"
            " `pulumi up --target`; reissue it by hand",
        )
    ]


def test_valid_urns_are_the_targets() -> None:
    status = _built(_due("y", ""))

    remedy = selfheal.remedy(status, True, "state.json")

    assert remedy.action == "reissue"
    assert [t.rsplit("::", 1)[-1] for t in remedy.targets] == [
        "y-pki-client-cert",
        "y-pki-server-cert",
    ]


@pytest.mark.parametrize(
    ("urn", "why"),
    [
        (
            "urn:pulumi:ibm::p::t",
            "not a Pulumi URN (urn:pulumi:<stack>::<project>::<type>::<name>)",
        ),
        ("urn:pulumi:ibm::p::t::a;b", "holds ';', which separates targets"),
        ("urn:pulumi:ibm::p::t::a\rb", "holds a line break or another control character"),
        ("urn:pulumi:ibm::p::t::a b", None),
    ],
)
def test_target_problem(urn: str, why: str | None) -> None:
    assert selfheal.target_problem(urn) == why

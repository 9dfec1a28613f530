"""What the status hands on is no syntax for its reader (issue 42 item 4): no printed line
reads as a GitHub Actions workflow command (``gatewayctl.printing.inert``), and the renewal's
``rotate`` command lines (``remedy.renewals``, run by the drift workflow) hold only a declared
gateway's name, a DNS label: a certificate of any other is left out of them (``unrenewed``).
"""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from rich.console import Console
from rich.text import Text

from gatewayctl import printing
from gatewayctl.inputs import rotation_secrets
from gatewayctl.status import certificates, core, formats, inputs, selfheal, view
from gatewayctl.status.models import PreviewDigest, UntypedDeployment
from tests.status_builders import (
    digest,
    export,
    gateway_resources,
    refresh_step,
    stack_resources,
)
from tests.support import ROOT

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
        checkpoint=UntypedDeployment.model_validate(export(resources)).deployment,
        refresh=PreviewDigest.model_validate(digest([refresh_step(r) for r in resources])),
    )
    return core.build("ibm", parsed, NOW)


def test_a_gateway_named_as_a_workflow_command_is_listed_inert() -> None:
    name = "::error::pwned"
    status = _built(stack_resources({name: None}) + gateway_resources(name, exposed=False))

    text = shown(list(view.list_lines(status, wide=False)))

    assert [line.split()[0] for line in text.splitlines()] == ["NAME", "%3A:error::pwned"]


def _due(name: str, ca: bool = False) -> list[dict[str, Any]]:
    resources = stack_resources({name: None}) + gateway_resources(
        name, exposed=False, cert_end="2026-12-10T00:00:00Z"
    )
    for r in resources:
        if ca and r["urn"].endswith("-pki-ca"):
            r["outputs"]["validityEndTime"] = "2026-11-30T00:00:00Z"
    return resources


@pytest.mark.parametrize(
    "name", ["::error::pwned", "y;touch x", "Y", "y\noutcome=green", "-y"], ids=repr
)
def test_a_gateway_whose_name_is_no_dns_label_is_never_in_a_command(name: str) -> None:
    status = _built(_due(name))

    remedy = selfheal.remedy(status, True)

    assert (remedy.action, remedy.renewals) == ("none", ())
    assert [c.name for c in remedy.unrenewed] == [
        f"{name}-pki-client-cert",
        f"{name}-pki-server-cert",
    ]


def test_a_merged_change_awaiting_its_deploy_opens_no_second_renewal() -> None:
    """A renewal merged but not yet deployed (a window holds it, or its deploy failed) reads
    as a change from git: its `up` reissues what is due, so no new pull request raises the
    counters again; the renewals are still named."""
    resources = _due("y")
    (deployment,) = [r for r in resources if r["type"] == "kubernetes:apps/v1:Deployment"]
    preview = [
        refresh_step(r, op="update", paths=["spec.replicas"])
        if r is deployment
        else {"op": "same", "urn": r["urn"]}
        for r in resources
    ]
    parsed = inputs.Inputs(
        checkpoint=UntypedDeployment.model_validate(export(resources)).deployment,
        refresh=PreviewDigest.model_validate(digest([refresh_step(r) for r in resources])),
        preview=PreviewDigest.model_validate(digest(preview)),
    )
    status = core.build("ibm", parsed, NOW)
    assert [(c.source, c.op) for g in status.gateways for c in g.changes] == [("git", "update")]

    remedy = selfheal.remedy(status, True, declared=["y"])

    assert (remedy.action, [r.gateway for r in remedy.renewals]) == ("none", ["y"])
    assert selfheal.remedy(_built(_due("y")), True, declared=["y"]).action == "reissue"


def test_a_gateway_no_longer_declared_is_not_renewed() -> None:
    status = _built(_due("y"))

    assert selfheal.remedy(status, True, declared=["y"]).action == "reissue"
    remedy = selfheal.remedy(status, True, declared=["z"])

    assert (remedy.action, len(remedy.unrenewed)) == ("none", 2)


def test_a_ca_due_is_renewed_by_the_ca_alone() -> None:
    status = _built(_due("y", ca=True))
    assert sorted(c.name for c in status.due) == [
        "y-pki-ca",
        "y-pki-client-cert",
        "y-pki-server-cert",
    ]

    (renewal,) = selfheal.remedy(status, True).renewals

    # A new CA reissues both certificates it signs: one counter, one command.
    assert renewal.command() == "python -m gatewayctl rotate y ca --stack ibm"
    assert sorted(c.name for c in renewal.certificates) == [
        "y-pki-ca",
        "y-pki-client-cert",
        "y-pki-server-cert",
    ]


def test_every_certificate_the_program_makes_is_renewed_by_a_rotation() -> None:
    # The golden plans are the program's render (`make golden`): each tls certificate of a
    # gateway has the name gatewayctl.inputs.rotation_secrets expects, so none is left unrenewed.
    found = {}
    for plan in sorted((ROOT / "tests" / "golden").glob("*/plan.json")):
        document = json.loads(plan.read_text(encoding="utf-8"))
        gateways = [g["name"] for g in document["gateways"]]
        for r in document["resources"]:
            if r["type"] in certificates.TYPES:
                (gateway,) = [g for g in gateways if r["name"].startswith(f"{g}-pki-")]
                secret = rotation_secrets.for_certificate(gateway, r["name"])
                found[r["name"].removeprefix(gateway)] = secret.name if secret else None
    assert found == {
        "-pki-ca": "ca",
        "-pki-client-cert": "client-certificate",
        "-pki-server-cert": "server-certificate",
    }


def test_the_document_carries_each_renewal_and_its_command() -> None:
    end = "2026-12-10T00:00:00Z"
    status = _built(
        stack_resources({"y": None, "::x": None})
        + gateway_resources("y", exposed=False, cert_end=end)
        + gateway_resources("::x", exposed=False, cert_end=end)
    )
    remedy = selfheal.remedy(status, True)

    document = formats.document(status, remedy, "renewal-due", True, {})["remedy"]

    due = {c["name"]: c for c in formats.document(status, remedy, "", True, {})["certificatesDue"]}
    assert document["action"] == "reissue"
    assert document["renewals"] == [
        {
            "gateway": "y",
            "secrets": ["server-certificate", "client-certificate"],
            "fields": ["spec.rotation.serverCertificate", "spec.rotation.clientCertificate"],
            "certificates": [due["y-pki-client-cert"], due["y-pki-server-cert"]],
            "command": "python -m gatewayctl rotate y server-certificate client-certificate"
            " --stack ibm",
        }
    ]
    assert document["unrenewed"] == [due["::x-pki-client-cert"], due["::x-pki-server-cert"]]

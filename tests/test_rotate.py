"""``python -m gatewayctl rotate`` (``gatewayctl.deploy.rotate``): the counters are the only
change to the declaration, byte for byte (comments, order, layout kept; ``rotation:`` and
``spec:`` added when absent); the refusals exit 2 naming the file and field, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gatewayctl.deploy import rotate
from gatewayctl.inputs.counters import RotationSpec
from gatewayctl.inputs.rotation_secrets import BY_NAME, SECRETS, for_certificate
from gatewayctl.resolve.stack import load_stack
from tests.builders import copy_project
from tests.hostile_helpers import Outcome, run_cli

TEAM_A = "gateways/ibm/team-a.yaml"
SEARCH = "gateways/aws/search.yaml"
HEAD = (
    "# yaml-language-server: $schema=../../schemas/gateway.schema.json\n"
    "# Default host: gw-openshell-team-a.<baseDomain>, Route passthrough.\n"
    "apiVersion: hypershell.redhat.io/v1alpha1\n"
    "kind: Gateway\n"
    "metadata:\n"
    "  name: team-a\n"
)
SERVER = (
    "  server-certificate: a new server key and certificate from the same CA; the pods roll;"
    " clients change nothing"
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return copy_project(tmp_path / "p")


def run(root: Path, *argv: str) -> Outcome:
    return run_cli("--root", str(root), "rotate", *argv)


def test_the_secrets_are_the_counters_of_the_declaration() -> None:
    aliases = [f.alias or name for name, f in RotationSpec.model_fields.items()]
    assert [s.key for s in SECRETS] == aliases
    assert list(BY_NAME) == [
        "database-password",
        "server-certificate",
        "client-certificate",
        "ca",
        "kek",
        "console-cookie",
    ]
    assert for_certificate("team-a", "team-a-pki-server-cert") == BY_NAME["server-certificate"]
    assert for_certificate("team-a", "team-a-pki-client-cert") == BY_NAME["client-certificate"]
    assert for_certificate("team-a", "team-a-pki-ca") == BY_NAME["ca"]
    assert for_certificate("team-a", "team-a-pki-ca-key") is None
    assert for_certificate("team-a", "team-b-pki-ca") is None


def test_rotation_is_added_under_spec_and_the_rest_kept_byte_for_byte(project: Path) -> None:
    path = project / TEAM_A
    assert path.read_text() == HEAD + "spec:\n  cluster: roks-us-east\n"
    result = run(project, "team-a", "client-certificate", "server-certificate")
    assert (result.code, result.err) == (0, "")
    assert path.read_text() == HEAD + (
        "spec:\n"
        "  rotation:\n"
        "    serverCertificate: 1\n"
        "    clientCertificate: 1\n"
        "  cluster: roks-us-east\n"
    )
    assert result.out.splitlines() == [
        f"{TEAM_A}: spec.rotation.serverCertificate: 0 → 1",
        f"{TEAM_A}: spec.rotation.clientCertificate: 0 → 1",
        SERVER,
        "  client-certificate: a new client key and certificate in openshell-client-tls;"
        " whoever copied the old pair takes the new one",
        f"next: commit {TEAM_A} on a branch and open a pull request; its offline diff"
        " (gatewayctl diff ibm --base main) previews the replacement, the merge's pulumi up"
        " carries it out",
    ]
    (gateway,) = [g for g in load_stack(project, "ibm").gateways if g.name == "team-a"]
    assert gateway.source == TEAM_A
    # Again: each counter raised in place, a new one added under rotation:.
    result = run(project, "team-a", "ca", "server-certificate", "--stack", "ibm")
    assert result.code == 0
    assert path.read_text() == HEAD + (
        "spec:\n"
        "  rotation:\n"
        "    ca: 1\n"
        "    serverCertificate: 2\n"
        "    clientCertificate: 1\n"
        "  cluster: roks-us-east\n"
    )
    assert result.out.splitlines()[:2] == [
        f"{TEAM_A}: spec.rotation.serverCertificate: 1 → 2",
        f"{TEAM_A}: spec.rotation.ca: 0 → 1",
    ]


def test_a_counter_keeps_its_comment_and_the_file_its_comments(project: Path) -> None:
    path = project / SEARCH
    before = path.read_text()
    text = before.replace(
        "  console:\n",
        "  rotation:   # raised by pull request\n"
        "    # after INC-4521\n"
        "    consoleCookie: 3  # the last one\n"
        "  console:\n",
    )
    path.write_text(text)
    result = run(project, "search", "console-cookie", "database-password")
    assert result.code == 0, result.err
    assert path.read_text() == text.replace(
        "    # after INC-4521\n    consoleCookie: 3  # the last one\n",
        "    databasePassword: 1\n    # after INC-4521\n    consoleCookie: 4  # the last one\n",
    )


def test_spec_is_added_at_the_end_when_absent(project: Path) -> None:
    path = project / "gateways/local/bare.yaml"
    text = (
        "apiVersion: hypershell.redhat.io/v1alpha1\nkind: Gateway\nmetadata:\n  name: bare\n"
        "# the end"
    )
    path.write_text(text)
    assert run(project, "bare", "database-password").code == 0
    assert path.read_text() == text + ("\nspec:\n  rotation:\n    databasePassword: 1\n")


def test_dry_run_prints_the_diff_and_writes_nothing(project: Path) -> None:
    before = (project / TEAM_A).read_bytes()
    result = run(project, "team-a", "server-certificate", "--dry-run")
    assert (result.code, (project / TEAM_A).read_bytes()) == (0, before)
    assert result.out.splitlines() == [
        f"{TEAM_A}: spec.rotation.serverCertificate: 0 → 1",
        SERVER,
        f"--- a/{TEAM_A}",
        f"+++ b/{TEAM_A}",
        "@@ -5,4 +5,6 @@",
        " metadata:",
        "   name: team-a",
        " spec:",
        "+  rotation:",
        "+    serverCertificate: 1",
        "   cluster: roks-us-east",
        f"dry run: {TEAM_A} not written",
    ]


def test_the_document_names_each_counter(project: Path) -> None:
    result = run(project, "search", "console-cookie", "--stack", "aws", "-o", "json")
    assert result.code == 0
    assert json.loads(result.out) == {
        "stack": "aws",
        "gateway": "search",
        "path": SEARCH,
        "dryRun": False,
        "written": True,
        "secrets": [
            {
                "secret": "console-cookie",
                "field": "spec.rotation.consoleCookie",
                "before": 0,
                "after": 1,
                "means": "a new console cookie secret; everyone signed in to the console"
                " signs in again",
            }
        ],
    }


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["dev", "kek"],
            "error: gateways/local/dev.yaml: spec.rotation.kek: a new KEK loses every"
            " credential the gateway's users stored (the gateway cannot re-encrypt them with"
            " the new key): pass --accept-credential-loss to rotate it anyway",
        ),
        (
            ["payments", "kek", "--accept-credential-loss"],
            "error: gateways/aws/payments.yaml:11:13: spec.credentials.driver: the driver is"
            " 'vault': the gateway holds no KEK to rotate (only driver 'kek' does)",
        ),
        (
            ["team-a", "console-cookie", "ca"],
            "error: gateways/ibm/team-a.yaml:7:1: spec.console.enabled: the console is not"
            " enabled: there is no console cookie secret to rotate",
        ),
        (
            ["team-a", "ca", "--stack", "aws"],
            "error: Pulumi.aws.yaml:12:40: declarationsDir: stack 'aws' has no gateway 'team-a';"
            " its gateways: audit, ml-platform, payments, search",
        ),
        (
            ["nobody", "ca"],
            "error: no stack declares a gateway 'nobody' (gateways/<stack>/nobody.yaml); name"
            " its stack with --stack",
        ),
        (["../x", "ca"], "error: '../x' is no gateway name (a DNS label: a-z, 0-9, '-')"),
    ],
)
def test_refusals_exit_2_and_write_nothing(project: Path, argv: list[str], message: str) -> None:
    files = {p: p.read_bytes() for p in project.rglob("*.yaml")}
    result = run(project, *argv)
    assert (result.code, result.out) == (2, "")
    assert result.err.splitlines()[0] == message
    assert {p: p.read_bytes() for p in project.rglob("*.yaml")} == files


def test_the_kek_rotates_with_the_flag(project: Path) -> None:
    result = run(project, "dev", "kek", "--accept-credential-loss")
    assert result.code == 0
    assert "    kek: 1\n" in (project / "gateways/local/dev.yaml").read_text()
    assert result.out.splitlines()[1] == (
        "  kek: a new KEK; the credentials the gateway's users stored cannot be decrypted"
        " again: they are lost and must be stored again"
    )


def test_an_unknown_secret_is_refused_by_the_parser(project: Path) -> None:
    with pytest.raises(SystemExit) as exited:
        run(project, "team-a", "password")
    assert exited.value.code == 2


@pytest.mark.parametrize(
    ("written", "where"),
    [
        (
            "spec:\n  cluster: roks-us-east\n  rotation: {}\n",
            "9:13: spec.rotation: not a block mapping with entries",
        ),
        (
            "spec:\n  cluster: roks-us-east\n  rotation:\n    ca: &n 2\n",
            "10:9: spec.rotation.ca: the counter is not a plain number",
        ),
        ("spec: {cluster: roks-us-east}\n", "7:7: spec: not a block mapping with entries"),
    ],
)
def test_what_cannot_be_edited_as_text_is_refused(project: Path, written: str, where: str) -> None:
    path = project / TEAM_A
    text = path.read_text().replace("spec:\n  cluster: roks-us-east\n", written)
    path.write_text(text)
    result = run(project, "team-a", "ca")
    assert (result.code, path.read_text()) == (2, text)
    assert result.err.splitlines() == [
        f"error: {TEAM_A}:{where}; raise the counter by hand",
        "1 problem(s); nothing written",
    ]


def test_edit_counters_keeps_crlf_line_endings() -> None:
    text = "apiVersion: v\r\nspec:\r\n  cluster: c\r\n"
    assert rotate.edit_counters(text, "f.yaml", {"ca": 1}) == (
        "apiVersion: v\r\nspec:\r\n  rotation:\r\n    ca: 1\r\n  cluster: c\r\n"
    )


def test_a_gateway_of_two_stacks_needs_stack(project: Path) -> None:
    text = (project / TEAM_A).read_text().replace("roks-us-east", "rosa-us-east-1")
    (project / "gateways/aws/team-a.yaml").write_text(text)
    result = run(project, "team-a", "ca")
    assert (result.code, result.err) == (
        2,
        "error: gateway 'team-a' is declared in stacks aws, ibm: name one with --stack\n",
    )
    assert run(project, "team-a", "ca", "--stack", "aws").code == 0
    assert (project / "gateways/aws/team-a.yaml").read_text() == text.replace(
        "spec:\n", "spec:\n  rotation:\n    ca: 1\n"
    )
    assert (project / TEAM_A).read_text() == HEAD + "spec:\n  cluster: roks-us-east\n"


def test_a_declaration_that_is_a_symbolic_link_is_not_replaced(project: Path) -> None:
    real = project / "gateways" / "team-a.real"
    (project / TEAM_A).rename(real)
    (project / TEAM_A).symlink_to("../team-a.real")
    result = run(project, "team-a", "ca")
    assert (result.code, result.out) == (2, "")
    assert result.err.splitlines()[0] == (
        f"error: {TEAM_A}: is a symbolic link; raise the counter by hand"
    )
    assert (project / TEAM_A).is_symlink() and real.read_text() == HEAD + (
        "spec:\n  cluster: roks-us-east\n"
    )

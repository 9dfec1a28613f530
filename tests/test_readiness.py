"""Deploy readiness (``validate --deploy``): CA bundles in the project, no placeholder secrets,
every cluster's secrets entry; problems name file and key, never a value."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from gatewayctl.cli import main as cli
from gatewayctl.cli.prepared import _prepare_all
from gatewayctl.errors import InvalidInputError
from gatewayctl.inputs import secrets
from gatewayctl.inputs.stackfile import stack_file
from gatewayctl.resolve import readiness
from gatewayctl.resolve.stack import load_stack
from tests.builders import (
    PLACEHOLDER,
    PREFIX,
    b64,
    copy_project,
    edited_config,
    passphrase_ciphertext,
    pem_bundle,
    random_bytes,
    service_ciphertext,
    write_text,
)
from tests.hostile_helpers import unlocated
from tests.strategies import PRINTABLE_TEXT
from tests.support import ROOT

NONCE = b64(random_bytes("nonce", 12))
SEALED = b64(random_bytes("sealed", 32))
ABSENT = (
    " is not in the project, and `pulumi up` verifies the admin connection with it: add the"
    ' database server\'s public CA bundle (docs/running.md, "CA bundles for the admin connection")'
)


def placeholder_line(stack: str, cluster: str, key: str = "dbAdminPassword") -> str:
    setting = f"clusterSecrets.{cluster}.{key}"
    return (
        f"error: Pulumi.{stack}.yaml: {PREFIX}{setting}: `secure:` value is a placeholder, not"
        " ciphertext; set the real value with"
        f" `pulumi config set --stack {stack} --secret --path '{setting}'`"
    )


def bundle_line(stack: str, cluster: str, bundle: str, problem: str = ABSENT) -> str:
    return (
        f"error: Pulumi.{stack}.yaml: {PREFIX}clusters.{cluster}.database.sslRootCert:"
        f" {bundle!r}{problem}"
    )


# --- what counts as a placeholder ---------------------------------------------------------------


def test_the_committed_samples_hold_the_documented_placeholder() -> None:
    assert base64.b64decode(PLACEHOLDER.removeprefix("v1:")) == (
        b"replace-me-with-pulumi-config-set--secret"
    )
    for stack in ("aws", "ibm"):
        assert PLACEHOLDER in (ROOT / f"Pulumi.{stack}.yaml").read_text(encoding="utf-8")
    assert secrets.is_placeholder(PLACEHOLDER)


@pytest.mark.parametrize(
    "ciphertext",
    [
        f"v1:{NONCE}:{SEALED}",  # passphrase and cloud KMS providers
        SEALED,  # Pulumi Cloud
        passphrase_ciphertext("a", sealed=16),  # the shortest: an empty value's GCM tag
        service_ciphertext("b", sealed=16),
    ],
)
def test_ciphertext_shapes_are_not_placeholders(ciphertext: str) -> None:
    assert not secrets.is_placeholder(ciphertext)


TEXT = b64(b"this is not ciphertext at all, only text")
SHORT = b64(random_bytes("short", 15))


@pytest.mark.parametrize(
    "value",
    [
        PLACEHOLDER,
        "",
        "CHANGEME",  # valid base64, but 6 bytes
        "replace-me",  # '-' is not in the base64 alphabet
        "TODO",
        None,
        42,
        {"nested": "x"},
        "v1:",
        f"v1:{NONCE}",
        f"v1:{NONCE}:",
        f"v1:{NONCE}:{TEXT}",  # base64 of text
        f"v1:{b64(random_bytes('n', 11))}:{SEALED}",  # an 11-byte nonce
        f"v1:{NONCE}:{SHORT}",  # shorter than the GCM tag
        f"v2:{NONCE}:{SEALED}",
        f"v1:{NONCE}:{SEALED}:{SEALED}",
        f"V1:{NONCE}:{SEALED}",
        TEXT,
        SHORT,
        SEALED.rstrip("="),  # padding removed: Go's StdEncoding rejects it
        SEALED[:20] + "\n" + SEALED[20:],
        SEALED + " ",
        f" v1:{NONCE}:{SEALED}",
        SEALED.replace("+", "-").replace("/", "_") + "-",  # URL-safe alphabet
        "ÿ" * 30,
    ],
)
def test_placeholders(value: Any) -> None:
    assert secrets.is_placeholder(value)


@settings(max_examples=200, deadline=None)
@given(text=PRINTABLE_TEXT, service=st.booleans())
def test_base64_of_any_text_is_a_placeholder(text: str, service: bool) -> None:
    encoded = b64(text.encode("ascii"))
    assert secrets.is_placeholder(encoded if service else f"v1:{NONCE}:{encoded}")


@settings(max_examples=200, deadline=None)
@given(data=st.binary(min_size=16, max_size=200), service=st.booleans())
def test_random_bytes_of_16_or_more_are_ciphertext_unless_all_printable(
    data: bytes, service: bool
) -> None:
    printable = all(0x20 <= b <= 0x7E or b in (0x09, 0x0A, 0x0D) for b in data)
    encoded = b64(data)
    assert secrets.is_placeholder(encoded if service else f"v1:{NONCE}:{encoded}") == printable


# --- the stack file -----------------------------------------------------------------------------


def write_config(root: Path, stack: str, config: dict[str, Any]) -> None:
    """A stack file holding ``config`` alone (no stack built around it)."""
    write_text(root, stack_file(stack), yaml.safe_dump({"config": config}))


def test_every_placeholder_of_the_stack_file_is_named_by_key(tmp_path: Path) -> None:
    secret = "hunter2-is-not-ciphertext"
    write_config(
        tmp_path,
        "s",
        {
            f"{PREFIX}clusterSecrets": {
                "east": {
                    "dbAdminPassword": {"secure": passphrase_ciphertext("ok")},
                    "kubeconfig": {"secure": secret},
                },
                "west": {"secure": PLACEHOLDER},
            },
            "kubernetes:kubeconfig": {"secure": ""},
            f"{PREFIX}extra": [{"secure": service_ciphertext("ok")}, {"secure": "x"}],
            "aws:region": "us-east-1",
        },
    )
    problems = sorted(secrets.placeholder_problems(tmp_path, "s"))
    assert [(p.path, p.field) for p in problems] == [
        ("Pulumi.s.yaml", f"{PREFIX}clusterSecrets.east.kubeconfig"),
        ("Pulumi.s.yaml", f"{PREFIX}clusterSecrets.west"),
        ("Pulumi.s.yaml", f"{PREFIX}extra.1"),
        ("Pulumi.s.yaml", "kubernetes:kubeconfig"),
    ]
    assert problems[3].message == (
        "`secure:` value is a placeholder, not ciphertext; set the real value with"
        " `pulumi config set --stack s --secret --path 'kubernetes:kubeconfig'`"
    )
    assert all(secret not in str(p) for p in problems)


def test_an_unreadable_stack_file_is_left_to_the_validation(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.s.yaml").write_text("config: [unclosed", encoding="utf-8")
    assert secrets.placeholder_problems(tmp_path, "s") == []


# --- CA bundles ---------------------------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return copy_project(tmp_path / "p", ready=True)


AWS_BUNDLE = "certs/aws-rds-global-bundle.pem"


def bundle_problems(root: Path) -> list[str]:
    return [str(p) for p in readiness.ca_bundle_problems(root, load_stack(root, "aws"))]


def test_present_bundles_are_ready(project: Path) -> None:
    assert bundle_problems(project) == []
    assert readiness.ca_bundle_problems(project, load_stack(project, "local")) == []  # none


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("", " holds no PEM certificate (-----BEGIN CERTIFICATE-----); not a CA bundle"),
        (
            "-----BEGIN CERTIFICATE-----\n",
            " has a BEGIN CERTIFICATE at line 1 that no END closes",
        ),
        ("not a certificate\n", " holds no PEM certificate"),
        (
            "-----BEGIN CERTIFICATE-----\nnot*base64!\n-----END CERTIFICATE-----\n",
            " has a certificate at line 1 that is not base64",
        ),
        (
            "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
            " holds a 'PRIVATE KEY' block at line 1; a CA bundle holds certificates only (its"
            " whole text is published): remove that block",
        ),
    ],
)
def test_a_bundle_without_a_certificate_is_a_problem(
    project: Path, content: str, problem: str
) -> None:
    (project / AWS_BUNDLE).write_text(content, encoding="utf-8")
    found = bundle_problems(project)
    assert len(found) == 2  # both clusters name the bundle
    assert found[0].startswith(
        f"Pulumi.aws.yaml: {PREFIX}clusters.rosa-us-east-1.database.sslRootCert:"
        f" {AWS_BUNDLE!r}{problem}"
    )


def test_an_absent_bundle_says_how_to_add_it(project: Path) -> None:
    (project / AWS_BUNDLE).unlink()
    assert bundle_problems(project) == [
        bundle_line("aws", "rosa-us-east-1", AWS_BUNDLE).removeprefix("error: "),
        bundle_line("aws", "rosa-us-west-2", AWS_BUNDLE).removeprefix("error: "),
    ]


def test_a_bundle_through_a_link_out_of_the_project_is_a_problem(
    project: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.pem"
    outside.write_text(pem_bundle("outside"), encoding="utf-8")
    (project / AWS_BUNDLE).unlink()
    (project / AWS_BUNDLE).symlink_to(outside)
    # The loader refuses it for every command, so no deploy gets as far as the bundle check.
    with pytest.raises(InvalidInputError) as caught:
        load_stack(project, "aws")
    assert str(caught.value.problems[0]).endswith(
        f"{AWS_BUNDLE!r} leads outside the project through a symbolic link; it must be a file"
        " inside the project"
    )
    (project / AWS_BUNDLE).unlink()
    (project / AWS_BUNDLE).symlink_to(project / "certs" / "missing.pem")
    assert bundle_problems(project)[0].endswith(f"{AWS_BUNDLE!r} is a broken symbolic link")


def test_a_directory_or_a_huge_file_is_no_bundle(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / AWS_BUNDLE).unlink()
    (project / AWS_BUNDLE).mkdir()
    assert bundle_problems(project)[0].endswith(f"{AWS_BUNDLE!r} is not a regular file")
    (project / AWS_BUNDLE).rmdir()
    (project / AWS_BUNDLE).write_text(pem_bundle("big", 3), encoding="utf-8")
    assert bundle_problems(project) == []
    monkeypatch.setattr(readiness, "CA_BUNDLE_LIMIT", 1024 * 1024)
    (project / AWS_BUNDLE).write_text(pem_bundle("big", 3) + " " * 1024 * 1024, encoding="utf-8")
    assert bundle_problems(project)[0].endswith(
        f"{AWS_BUNDLE!r} is larger than 1 MiB; not a CA bundle"
    )


# --- validate --deploy --------------------------------------------------------------------------


def test_the_committed_samples_are_not_ready_to_deploy(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["validate", "--all", "--deploy"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert unlocated(captured.err).splitlines() == [
        placeholder_line("aws", "rosa-us-east-1"),
        placeholder_line("aws", "rosa-us-east-1", "keycloakAdminClientSecret"),
        placeholder_line("aws", "rosa-us-west-2"),
        placeholder_line("aws", "rosa-us-west-2", "keycloakAdminClientSecret"),
        bundle_line("aws", "rosa-us-east-1", AWS_BUNDLE),
        bundle_line("aws", "rosa-us-west-2", AWS_BUNDLE),
        placeholder_line("ibm", "roks-us-east"),
        placeholder_line("ibm", "roks-us-east", "keycloakAdminClientSecret"),
        bundle_line("ibm", "roks-us-east", "certs/ibm-databases-for-postgresql-ca.pem"),
        "9 problem(s); nothing written",
    ]
    # Without --deploy the same stacks validate, with notes (the offline render needs neither).
    assert cli.main(["validate", "--all"]) == 0
    assert "Pulumi.aws.yaml: ok (4 gateways, 2 clusters)" in capsys.readouterr().out


def test_a_ready_project_passes(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--root", str(project), "validate", "--all", "--deploy"]) == 0
    printed = capsys.readouterr()
    assert printed.out.splitlines() == [
        "Pulumi.aws.yaml: ok (4 gateways, 2 clusters)",
        "Pulumi.ibm.yaml: ok (4 gateways, 1 cluster)",
        "Pulumi.local.yaml: ok (3 gateways, 1 cluster)",
    ]
    assert printed.err.splitlines() == [
        # The copy is no git checkout: the releases' history is noted, not checked (nor needed).
        "note: releases/: the project is not a git checkout: whether each release is still what"
        " was first committed is not checked here (it is in a full clone, as pull requests run)",
    ]


def test_one_stack_is_checked_alone(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "certs/ibm-databases-for-postgresql-ca.pem").unlink()
    assert cli.main(["--root", str(project), "validate", "aws", "--deploy"]) == 0
    capsys.readouterr()  # its notes, on stderr too
    assert cli.main(["--root", str(project), "validate", "ibm", "--deploy"]) == 2
    err = unlocated(capsys.readouterr().err).splitlines()
    assert err == [
        bundle_line("ibm", "roks-us-east", "certs/ibm-databases-for-postgresql-ca.pem"),
        "1 problem(s); nothing written",
    ]


def test_invalid_input_and_placeholders_are_reported_together(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with edited_config(project, "ibm") as settings_:
        settings_[f"{PREFIX}clusterSecrets"]["roks-us-east"]["dbAdminPassword"] = {"secure": "todo"}
        settings_[f"{PREFIX}clusters"]["roks-us-east"]["storageClass"] = 7
    assert cli.main(["--root", str(project), "validate", "ibm", "--deploy"]) == 2
    err = unlocated(capsys.readouterr().err).splitlines()
    assert err == [
        placeholder_line("ibm", "roks-us-east"),
        f"error: Pulumi.ibm.yaml: {PREFIX}clusters.roks-us-east.storageClass:"
        " Input should be a valid string",
        "2 problem(s); nothing written",
    ]


def test_a_cluster_without_its_secrets_entry_is_not_ready(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with edited_config(project, "aws") as config:
        del config[f"{PREFIX}clusterSecrets"]["rosa-us-west-2"]
    assert cli.main(["--root", str(project), "validate", "aws", "--deploy"]) == 2
    assert unlocated(capsys.readouterr().err).splitlines() == [
        f"error: Pulumi.aws.yaml: {PREFIX}clusterSecrets.rosa-us-west-2: missing; set it with"
        " `pulumi config set --stack aws --secret --path"
        " 'clusterSecrets.rosa-us-west-2.dbAdminPassword'`",
        "1 problem(s); nothing written",
    ]


def test_no_value_is_printed(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    secret = "Tr0ub4dor-and-3-more-words"
    with edited_config(project, "ibm") as config:
        config[f"{PREFIX}clusterSecrets"]["roks-us-east"]["kubeconfig"] = {"secure": secret}
    assert cli.main(["--root", str(project), "validate", "ibm", "--deploy"]) == 2
    captured = capsys.readouterr()
    assert secret not in captured.out + captured.err
    assert (
        placeholder_line("ibm", "roks-us-east", "kubeconfig")
        in unlocated(captured.err).splitlines()
    )


def test_check_raises_every_problem_at_once(project: Path) -> None:
    (project / AWS_BUNDLE).unlink()
    with pytest.raises(InvalidInputError) as caught:
        readiness.check(project, ["aws", "ibm"], _prepare_all)
    assert [p.field for p in caught.value.problems] == [
        f"{PREFIX}clusters.rosa-us-east-1.database.sslRootCert",
        f"{PREFIX}clusters.rosa-us-west-2.database.sslRootCert",
    ]


def test_validate_help_documents_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["validate", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--deploy also check what `pulumi up` needs and the offline render does not" in out
    assert "no `secure:` value is a placeholder" in out

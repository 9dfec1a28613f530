"""Output that fits a terminal (issue 25 item 3): the result on stdout, notes and progress on
stderr, ``-q`` silencing the notes; tables of one row per item, the long columns in ``-o
wide``; every command's ``-o json``/``yaml`` (``--format`` where ``-o``/``--output`` name a
file), with its keys sorted and no secret value in any field; on invalid input the problems
as a document beside the usual lines (``gatewayctl.printing``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from tests.hostile_helpers import Outcome, leaks, run_cli
from tests.support import ROOT, STACKS

ABSENT = (
    " is not in the project directory; `pulumi up` needs it to verify the database server (the"
    " offline render does not)"
)
AWS_NOTES = [
    f"Pulumi.aws.yaml: clusters.{cluster}.database.sslRootCert: 'certs/aws-rds-global-bundle.pem'"
    + ABSENT
    for cluster in ("rosa-us-east-1", "rosa-us-west-2")
]
IBM_SECURE_NOTE = (
    "2 `secure:` config values cannot be decrypted offline; rendered with placeholders"
    " (redacted in the output like every secret)"
)
IBM_CA_NOTE = (
    "Pulumi.ibm.yaml: clusters.roks-us-east.database.sslRootCert:"
    " 'certs/ibm-databases-for-postgresql-ca.pem'" + ABSENT
)


def sample_secrets(root: Path = ROOT) -> list[str]:
    """Every secret of the stack files: each `clusterSecrets` value and `secure:` ciphertext."""
    found: list[str] = []

    def walk(value: Any, inside: bool) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "secure" and isinstance(item, str):
                    found.append(item)
                else:
                    walk(item, inside or str(key).endswith(":clusterSecrets"))
        elif isinstance(value, list):
            for item in value:
                walk(item, inside)
        elif inside and isinstance(value, str):
            found.append(value)

    for stack in STACKS:
        walk(yaml.safe_load((root / f"Pulumi.{stack}.yaml").read_text(encoding="utf-8")), False)
    return found


def document(outcome: Outcome, *, secrets: list[str] | None = None) -> Any:
    """The JSON on stdout: keys sorted, indented, no secret of the samples in it."""
    value = json.loads(outcome.out)
    assert outcome.out == json.dumps(value, indent=2, sort_keys=True) + "\n"
    assert leaks([outcome.out], secrets if secrets is not None else sample_secrets()) == []
    return value


def test_the_samples_have_secrets_to_look_for() -> None:
    # local's plaintext admin password, and the placeholders of aws's and ibm's `secure:`.
    assert len(sample_secrets()) >= 3


# --- status: the same documents, keys sorted ------------------------------------------------


def test_status_json_has_its_keys_sorted() -> None:
    fixtures = ROOT / "tests" / "fixtures" / "status"
    outcome = run_cli(
        "status",
        "ibm",
        "--from",
        str(fixtures / "refresh-drift.json"),
        str(fixtures / "state.json"),
        "--now",
        "2026-11-30T09:00:00Z",
        "-o",
        "json",
    )
    assert outcome.code == 4  # degraded
    assert list(document(outcome))[:3] == ["certificatesDue", "checkedAt", "gateways"]
    yamled = run_cli(
        "status",
        "ibm",
        "--from",
        str(fixtures / "refresh-drift.json"),
        "--now",
        "2026-11-30T09:00:00Z",
        "-o",
        "yaml",
    )
    assert yamled.out.startswith("certificatesDue:\n- daysLeft: 19\n  due: true\n")
    assert yamled.out.endswith(
        "\nstack: ibm\nstate: degraded\nstateAgeSeconds: null\nstateTime: null\n"
    )

"""``gatewayctl validate`` (``gatewayctl.cli.validate``): what it prints for each stack, and its
notes."""

from __future__ import annotations

from pathlib import Path

import pytest

from gatewayctl.cli import main as cli
from gatewayctl.inputs.release_files import load_releases
from gatewayctl.resolve import preparation
from gatewayctl.resolve.release_bindings import history_problems
from tests.builders import one_cluster, write_gateway, write_stack
from tests.support import ROOT


def test_validate_reports_each_stack(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["validate", "--all"]) == 0
    absent = " is not in the project directory; `pulumi up` needs it to verify the database"
    absent += " server (the offline render does not)"
    # What the checkout's history cannot tell of the releases (none in a full clone; a note in
    # a shallow one, as CI's test job clones): after the first stack's notes.
    history = [f"note: {n}" for n in history_problems(ROOT, load_releases(ROOT)[0])[1]]
    # The result on stdout, the notes on stderr (issue 25 item 3).
    printed = capsys.readouterr()
    assert printed.out.splitlines() == [
        "Pulumi.aws.yaml: ok (4 gateways, 2 clusters)",
        "Pulumi.ibm.yaml: ok (4 gateways, 1 cluster)",
        "Pulumi.local.yaml: ok (3 gateways, 1 cluster)",
    ]
    assert printed.err.splitlines() == [
        "note: Pulumi.aws.yaml: clusters.rosa-us-east-1.database.sslRootCert:"
        f" 'certs/aws-rds-global-bundle.pem'{absent}",
        "note: Pulumi.aws.yaml: clusters.rosa-us-west-2.database.sslRootCert:"
        f" 'certs/aws-rds-global-bundle.pem'{absent}",
        *history,
        "note: Pulumi.ibm.yaml: clusters.roks-us-east.database.sslRootCert:"
        f" 'certs/ibm-databases-for-postgresql-ca.pem'{absent}",
    ]


def test_a_stack_larger_than_the_recommended_size_is_noted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # One stack at the recommended size is quiet; one gateway more is noted (stderr), still ok.
    limit = preparation.RECOMMENDED_GATEWAYS_PER_STACK
    write_stack(
        tmp_path,
        stack="big",
        secrets={"c1": {"dbAdminPassword": "x"}},
        clusters={
            "c1": {
                **one_cluster()["c1"],
                "database": {**one_cluster()["c1"]["database"], "adminHost": "localhost"},
            }
        },
    )
    for i in range(limit):
        write_gateway(tmp_path, f"g{i:03d}", {"signIn": "none"}, stack="big")
    assert cli.main(["--root", str(tmp_path), "validate", "big"]) == 0
    assert capsys.readouterr().err == ""
    write_gateway(tmp_path, "one-more", {"signIn": "none"}, stack="big")
    assert cli.main(["--root", str(tmp_path), "validate", "big"]) == 0
    printed = capsys.readouterr()
    assert printed.out == f"Pulumi.big.yaml: ok ({limit + 1} gateways, 1 cluster)\n"
    assert printed.err == (
        f"note: Pulumi.big.yaml: {limit + 1} gateways in one stack, more than the {limit}"
        " recommended: `pulumi up` on a self-managed backend grows with the square of a stack;"
        " split its gateways over several stacks (docs/scale-out.md, docs/performance.md)\n"
    )

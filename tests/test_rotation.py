"""Rotation as a reviewed change (issue 45 item 1): each ``spec.rotation`` counter raised
replaces its secret, the diff predicts the replacement and everything that follows it, and the
report says what restarts and what clients and users must do; a counter at 0 changes nothing,
a lowered one is refused. The engine's side: tests/e2e/test_e2e_k_rotation_pr.py."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.rotation import ROTATION_ANNOTATION, keepers, pod_annotations, rotated_name
from components.rotation import Rotation as Counters
from gatewayctl.diff.hazards import hazards
from gatewayctl.diff.operations import predict
from gatewayctl.diff.rotation_risks import CONSEQUENCES, changes, lowered, risk_lines
from gatewayctl.engine import render
from gatewayctl.resolve import preparation
from tests.builders import copy_stack, git
from tests.diff_helpers import clone, run_diff
from tests.support import rendered


def _plan(stack: str = "local") -> dict[str, Any]:
    plan = json.loads(rendered(stack).files["plan.json"])
    assert isinstance(plan, dict)
    return plan


def set_counters(root: Path, gateway: str, counters: dict[str, int], stack: str = "local") -> None:
    path = root / "gateways" / stack / f"{gateway}.yaml"
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    document.setdefault("spec", {})["rotation"] = counters
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")


@functools.cache
def rotated(tmp: Path, gateway: str, counter: str, value: int = 1) -> dict[str, Any]:
    """The local stack's plan with one counter of ``gateway`` at ``value``."""
    root = tmp / f"{gateway}-{counter}-{value}"
    copy_stack("local", root)
    set_counters(root, gateway, {counter: value})
    plan = json.loads(render.execute(preparation.prepare(root, "local")).files["plan.json"])
    assert isinstance(plan, dict)
    return plan


@pytest.fixture(scope="module")
def tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("rotation")


def ops(base: dict[str, Any], head: dict[str, Any]) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(o.name, o.op, o.because) for o in predict(base, head)]


def names(plan: dict[str, Any]) -> set[str]:
    return {r["name"] for r in plan["resources"]}


def test_the_counters_reach_the_providers_as_each_honours_them() -> None:
    assert keepers(0) is None and keepers(3) == {"rotation": "3"}
    assert rotated_name("dev-pki-ca-key", 0) == "dev-pki-ca-key"
    assert rotated_name("dev-pki-ca-key", 2) == "dev-pki-ca-key-r2"
    assert pod_annotations(Counters(kek=4, database_password=1, server_certificate=2)) is None
    assert pod_annotations(Counters(console_cookie=2)) == {
        ROTATION_ANNOTATION: "ca=0,clientCertificate=0,consoleCookie=2"
    }


def test_counters_at_zero_render_byte_for_byte_what_no_counter_renders(tmp: Path) -> None:
    root = tmp / "zero"
    copy_stack("local", root)
    zero = {k: 0 for k in CONSEQUENCES}
    for gateway in ("dev", "dev-build", "offline"):
        set_counters(root, gateway, zero)
    files = render.execute(preparation.prepare(root, "local")).files
    assert files == rendered("local").files


def test_a_new_database_password_is_predicted_with_all_that_follows(tmp: Path) -> None:
    base, head = _plan(), rotated(tmp, "dev", "databasePassword")
    (password,) = [r for r in head["resources"] if r["name"] == "dev-database-db-password"]
    assert password["inputs"]["keepers"] == {"rotation": "1"}
    # As the engine did with `up --replace` (tests/e2e/test_e2e_e_predictions.py) and with the
    # counter (tests/e2e/test_e2e_k_rotation_pr.py).
    assert ops(base, head) == [
        ("dev-workload-deploy", "update", ("spec",)),
        ("dev-database-db-credentials", "update", ("stringData",)),
        ("dev-database-db-revoke-public", "update", ("provider",)),
        ("dev-database-db-role", "update", ("password",)),
        ("dev-database-db-owner", "update", ("password",)),
        ("dev-database-db-password", "replace", ("keepers",)),
    ]
    assert names(head) == names(base)
    # 1 -> 2 rotates again, the same way.
    again = rotated(tmp, "dev", "databasePassword", 2)
    assert [o[:2] for o in ops(head, again)] == [o[:2] for o in ops(base, head)]


def test_a_new_kek_replaces_its_secret_delete_first_and_rolls_the_pod(tmp: Path) -> None:
    base, head = _plan(), rotated(tmp, "dev", "kek")
    (secret,) = [r for r in head["resources"] if r["name"] == "dev-workload-kek"]
    (kek,) = [r for r in head["resources"] if r["name"] == "dev-workload-kek-bytes"]
    assert secret["replaceWith"] == [
        "urn:pulumi:local::hypershell-gateways::hypershell:gateway:Gateway$hypershell:gateway:Workload"
        "$random:index/randomBytes:RandomBytes::dev-workload-kek-bytes"
    ]
    assert kek["inputs"]["keepers"] == {"rotation": "1"}
    operations = predict(base, head)
    assert [(o.name, o.op, o.because) for o in operations] == [
        ("dev-workload-deploy", "update", ("spec",)),
        ("dev-workload-kek", "replace-delete-first", ("replaceWith",)),
        ("dev-workload-kek-bytes", "replace", ("keepers",)),
    ]
    assert hazards(base, head, operations) == []
    # At 0 the Secret names nothing: no deployed stack's Secret changes.
    (unrotated,) = [r for r in base["resources"] if r["name"] == "dev-workload-kek"]
    assert "replaceWith" not in unrotated


def test_a_new_ca_is_a_new_key_and_every_certificate_is_reissued(tmp: Path) -> None:
    base, head = _plan(), rotated(tmp, "dev", "ca")
    assert names(head) - names(base) == {"dev-pki-ca-key-r1"}
    assert names(base) - names(head) == {"dev-pki-ca-key"}
    assert ops(base, head) == [
        ("dev-workload-deploy", "update", ("spec",)),
        ("dev-pki-client-tls", "update", ("stringData",)),
        ("dev-pki-server-tls", "update", ("stringData",)),
        ("dev-pki-client-cert", "replace", ("caPrivateKeyPem",)),
        ("dev-pki-server-cert", "replace", ("caPrivateKeyPem",)),
        ("dev-pki-ca", "replace", ("privateKeyPem",)),
    ]


def test_a_new_server_certificate_keeps_the_ca(tmp: Path) -> None:
    base, head = _plan(), rotated(tmp, "dev", "serverCertificate")
    assert names(head) ^ names(base) == {"dev-pki-server-key", "dev-pki-server-key-r1"}
    assert ops(base, head) == [
        ("dev-workload-deploy", "update", ("spec",)),
        ("dev-pki-server-tls", "update", ("stringData.(dataDigest)",)),
        ("dev-pki-server-csr", "replace", ("privateKeyPem",)),
        ("dev-pki-server-cert", "replace", ("certRequestPem",)),
    ]


def test_a_new_client_certificate_rolls_the_console_not_the_gateway(tmp: Path) -> None:
    base, head = _plan(), rotated(tmp, "dev-build", "clientCertificate")
    assert names(head) ^ names(base) == {"dev-build-pki-client-key", "dev-build-pki-client-key-r1"}
    assert ops(base, head) == [
        ("dev-build-console-deploy", "update", ("spec.template.metadata.annotations",)),
        ("dev-build-pki-client-tls", "update", ("stringData.(dataDigest)",)),
        ("dev-build-pki-client-csr", "replace", ("privateKeyPem",)),
        ("dev-build-pki-client-cert", "replace", ("certRequestPem",)),
    ]


def test_a_new_console_cookie_signs_everyone_out_and_rolls_the_console(tmp: Path) -> None:
    base, head = _plan(), rotated(tmp, "dev-build", "consoleCookie")
    (deploy,) = [r for r in head["resources"] if r["name"] == "dev-build-console-deploy"]
    template = deploy["inputs"]["spec"]["template"]["metadata"]
    assert template["annotations"] == {
        ROTATION_ANNOTATION: "ca=0,clientCertificate=0,consoleCookie=1"
    }
    assert ops(base, head) == [
        ("dev-build-console-deploy", "update", ("spec.template.metadata.annotations",)),
        ("dev-build-console-oauth2", "update", ("stringData",)),
        ("dev-build-console-cookie-bytes", "replace", ("keepers",)),
    ]


def test_each_raised_counter_is_a_risk_that_says_what_follows(tmp: Path) -> None:
    base = _plan()
    head = rotated(tmp, "dev", "kek")
    found = changes(base, head)
    assert [(c.gateway, c.counter, c.old, c.new) for c in found] == [("dev", "kek", 0, 1)]
    (line,) = risk_lines("local", found)
    assert line == (
        "- stack `local`, gateway `dev`: `spec.rotation.kek` 0 -> 1 rotates **a new KEK: every"
        " credential the gateway's users stored is lost**: the gateway has no re-encryption,"
        " so what it encrypted with the old key (in its database, default driver) can no longer"
        " be decrypted, and each user must store it again. Secret"
        " `openshell-gateway-credential-kek` is deleted, then created (delete-before-replace);"
        " the gateway's pod rolls"
    )
    ca = risk_lines("local", changes(base, rotated(tmp, "dev", "ca")))
    assert ca == [
        "- stack `local`, gateway `dev`: `spec.rotation.ca` 0 -> 1 rotates **a new tenant CA**:"
        " the CA key and certificate, both leaf certificates and `openshell-server-tls`,"
        " `openshell-client-tls` are replaced; the gateway's pod (and the console's) rolls."
        " **Every client must trust the new CA** (the `caCertificate` of the stack output"
        " `gateways`, after the `up`) and fetch the new client certificate"
        " (`openshell-client-tls`): until then its connections fail"
    ]
    # A secret the gateway does not hold: dev-build keeps its credentials in Vault.
    vault = risk_lines("local", changes(base, rotated(tmp, "dev-build", "kek")))
    assert vault == [
        "- stack `local`, gateway `dev-build`: `spec.rotation.kek` 0 -> 1 rotates nothing: the"
        " gateway holds no such secret (a KEK only on the default credential driver, a console"
        " cookie only with a console); the counter is kept for when it does"
    ]
    # Lowered: no risk line, a problem at the declaration's field.
    back = changes(head, base)
    assert risk_lines("local", back) == []
    (problem,) = lowered(back, {"dev": "gateways/local/dev.yaml"})
    assert (problem.path, problem.field) == ("gateways/local/dev.yaml", "spec.rotation.kek")
    assert problem.message == (
        "lowered from 1 to 0: a counter never goes down (a lower value would rotate the secret"
        " again, not bring the old one back); keep 1, or raise it to 2 to rotate again"
    )


def test_the_pull_request_diff_shows_a_rotation_and_refuses_a_lowered_counter(
    pristine: Path, tmp_path: Path
) -> None:
    repo = clone(pristine, tmp_path / "repo")
    set_counters(repo, "dev", {"databasePassword": 2})
    run = run_diff(repo, "local", "--base", "HEAD", "--format", "json")
    assert run.code == 3, run.err
    (stack,) = json.loads(run.out)["stacks"]
    assert stack["rotations"] == [
        {"gateway": "dev", "counter": "databasePassword", "old": 0, "new": 2, "held": True}
    ]
    run = run_diff(repo, "local", "--base", "HEAD")
    assert run.code == 3, run.err
    assert "**Rotates** (1):" in run.out
    assert (
        "- stack `local`, gateway `dev`: `spec.rotation.databasePassword` 0 -> 2 rotates a new"
        " database password: the role's password, the owner's provider and Secret"
        " `openshell-gateway-db-credentials` change; the gateway's pod rolls (its config hash"
        " covers the credentials). Clients and users do nothing"
    ) in run.out
    git(repo, "commit", "--quiet", "--all", "--message", "rotate")
    set_counters(repo, "dev", {"databasePassword": 1})
    run = run_diff(repo, "local", "--base", "HEAD")
    assert run.code == 2
    assert run.out == ""
    assert "gateways/local/dev.yaml" in run.err
    assert "spec.rotation.databasePassword: lowered from 2 to 1" in run.err
    assert run.result is None

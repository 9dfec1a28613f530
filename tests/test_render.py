"""The offline render: golden snapshots, determinism, redaction, the plan, notes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from components import tokens
from gatewayctl.cli import main as cli
from gatewayctl.engine import render
from gatewayctl.inputs.secrets import REDACTED, SECURE_PLACEHOLDER
from gatewayctl.resolve import preparation
from tests.builders import copy_project, edited_config
from tests.helpers import written_files
from tests.support import ROOT, STACKS, rendered

GOLDEN = ROOT / "tests" / "golden"


@pytest.mark.parametrize("stack", STACKS)
def test_render_matches_the_golden_snapshot(stack: str) -> None:
    # Regenerate after a reviewed change with: make golden
    golden = written_files(GOLDEN / stack)
    files = rendered(stack).files
    assert sorted(files) == sorted(golden)
    for path, text in files.items():
        assert text == golden[path], f"{stack}/{path} differs from the golden snapshot"


def test_render_is_independent_of_file_order_and_location(tmp_path: Path) -> None:
    first = copy_project(tmp_path / "a", reverse=True)
    second = copy_project(tmp_path / "elsewhere" / "checkout", reverse=False)
    for stack in STACKS:
        one = render.execute(preparation.prepare(first, stack)).files
        two = render.execute(preparation.prepare(second, stack)).files
        assert one == two
        assert one == rendered(stack).files


def test_cli_render_is_byte_identical_across_processes(tmp_path: Path) -> None:
    outputs = []
    for seed in ("1", "4242"):
        out = tmp_path / f"seed-{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-m", "gatewayctl", "render", "--all", "--out", str(out), "-q"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        outputs.append({stack: written_files(out / stack) for stack in STACKS})
    assert outputs[0] == outputs[1]
    assert outputs[0]["ibm"] == written_files(GOLDEN / "ibm")


def test_secret_values_are_redacted_with_keys_kept(any_stack: render.Rendered) -> None:
    secrets = [
        yaml.safe_load(text)
        for path, text in any_stack.files.items()
        if path.startswith("manifests/") and "/secret-" in path
    ]
    # Four Secrets per gateway, plus the KEK Secret of each gateway on the default driver and
    # the web console's Secret of each gateway with a console (one per stack).
    kek = sum(g.credentials.driver == "kek" for g in any_stack.prepared.loaded.gateways)
    consoles = sum(g.args.console is not None for g in any_stack.prepared.loaded.gateways)
    assert 0 < kek < len(any_stack.gateways)
    assert consoles == 1
    assert len(secrets) == 4 * len(any_stack.gateways) + kek + consoles
    by_name: dict[str, list[str]] = {}
    for secret in secrets:
        values = secret["stringData"]
        assert set(values.values()) == {REDACTED}
        by_name.setdefault(secret["metadata"]["name"], sorted(values))
    assert by_name == {
        "openshell-server-tls": ["ca.crt", "tls.crt", "tls.key"],
        "openshell-client-tls": ["ca.crt", "tls.crt", "tls.key"],
        "openshell-gateway-jwt-keys": ["kid", "public.pem", "signing.pem"],
        "openshell-gateway-db-credentials": ["dbname", "host", "password", "port", "uri", "user"],
        "openshell-gateway-credential-kek": ["key-encryption-key"],
        "openshell-console-oauth2": ["client-secret", "cookie-secret"],
    }


def test_no_generated_secret_appears_anywhere_in_the_output(any_stack: render.Rendered) -> None:
    generated = []
    for res in any_stack.recording.resources.values():
        for key in res.secret_outputs:
            value = (
                res.outputs.get(key, {}).get("value")
                if isinstance(res.outputs.get(key), dict)
                else None
            )
            if isinstance(value, str) and len(value) >= 16:
                generated.append(value)
    assert len(generated) >= 4 * len(any_stack.gateways)
    blob = "".join(any_stack.files.values())
    assert [value for value in generated if value in blob] == []


def test_plaintext_config_read_as_secret_is_redacted() -> None:
    files = rendered("local").files
    assert "local-development-only" in (ROOT / "Pulumi.local.yaml").read_text()
    assert all("local-development-only" not in text for text in files.values())
    plan = json.loads(files["plan.json"])
    provider = next(r for r in plan["resources"] if r["type"] == "pulumi:providers:postgresql")
    assert provider["inputs"]["password"] == REDACTED


def test_secure_values_become_a_placeholder_and_are_reported_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code = cli.main(["render", "--all", "--out", str(tmp_path)])
    err = capsys.readouterr().err  # a note: on stderr, silenced by -q
    assert code == 0
    assert err.count("`secure:` config values cannot be decrypted offline") == 1
    # Per cluster of ibm and aws: the database password and the Keycloak admin client secret.
    assert err.startswith("note: 6 `secure:` config values")
    assert all(SECURE_PLACEHOLDER not in t for t in written_files(tmp_path).values())


def test_plan_lists_gateways_with_their_decisions() -> None:
    plan = json.loads(rendered("aws").files["plan.json"])
    assert plan["stack"] == "aws"
    search = next(g for g in plan["gateways"] if g["name"] == "search")
    assert search == {
        "name": "search",
        "cluster": "rosa-us-west-2",
        "namespace": "openshell-search",
        "ingressMode": "gateway-api",
        "hostname": "gw-openshell-search.usw2.openshell.example.com",
        "address": "grpcs://gw-openshell-search.usw2.openshell.example.com:443",
        "images": {  # releases/openshell-0.0.109.yaml, the cluster's release
            "gateway": "ghcr.io/nvidia/openshell/gateway:0.0.109"
            "@sha256:9da1b9acf82adc8b6e2ca4f315614ea4d9cb8ece77b895950f0cc3de4591ba52",
            "supervisor": "ghcr.io/nvidia/openshell/supervisor:0.0.109"
            "@sha256:fb7e797ccfdbb13003eb63f4f9b2a8b4420645e4e69bfc8bed93fe7e9ca6727e",
            "sandbox": "ghcr.io/nvidia/openshell-community/sandboxes/base:latest"
            "@sha256:ad47448cd2e9418be9875f840e4a4baaaa804ccf06358c34e28e4fa1b077aca7",
        },
        "database": "gw_search",
        "adopted": False,  # no spec.namespace
        "release": "openshell-0.0.109",
        "releasePinned": False,
        "imageOverrides": [],
        "signIn": "keycloak",
        "issuer": "https://sso.openshell.example.com/realms/openshell",
        "clientId": "openshell-search",
        "roles": ["openshell-admin", "openshell-user"],
        "access": {"admins": [], "users": []},
        # gateways/aws/search.yaml enables the web console (its oauth2-proxy pinned there).
        "console": {
            "address": "https://console-openshell-search.usw2.openshell.example.com",
            "exposure": "httproute",
            "clientId": "openshell-search-console",
            "images": {
                "dashboard": "quay.io/gkrumbach07/openshell-dashboard"
                "@sha256:cb5e5b18b4cdf62efb1ce33e2ae73ed646d3cdf438966cae3c328f1c04cce0b4",
                "oauth2Proxy": "quay.io/oauth2-proxy/oauth2-proxy:v7.7.1"
                "@sha256:1047dd64f2a4cc0b8bfee83c350bc687ac8fc073b175afa507a70a5898d518f7",
            },
        },
    }
    audit = next(g for g in plan["gateways"] if g["name"] == "audit")
    assert audit["console"] is None
    assert {k: audit[k] for k in ("signIn", "issuer", "clientId", "roles")} == {
        "signIn": "oidc",
        "issuer": "https://login.audit.example.com/oauth2/default",
        "clientId": "openshell-audit",
        "roles": ["openshell-audit-admins", "openshell-audit-users"],
    }
    kinds = {r["type"] for r in plan["resources"]}
    assert {
        "tls:index/locallySignedCert:LocallySignedCert",
        "postgresql:index/grant:Grant",
    } <= kinds
    csr = next(r for r in plan["resources"] if r["name"] == "search-pki-server-csr")
    assert csr["parent"].endswith(f"{tokens.PKI}::search-pki")
    assert csr["inputs"]["privateKeyPem"] == REDACTED


def test_plaintext_secrets_of_a_remote_database_are_noted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = copy_project(tmp_path / "p")
    with edited_config(project, "ibm") as config:
        secrets = config["hypershell-gateways:clusterSecrets"]
        secrets["roks-us-east"]["dbAdminPassword"] = "Prod-Hunter2-Password"

    assert cli.main(["--root", str(project), "validate", "--all"]) == 0
    printed = capsys.readouterr()
    out = printed.out + printed.err
    key = "clusterSecrets.roks-us-east.dbAdminPassword"
    notes = [line for line in printed.err.splitlines() if "plaintext" in line]
    assert notes == [
        f"note: Pulumi.ibm.yaml: {key}: plaintext in a file kept in git; set it with"
        f" `pulumi config set --stack ibm --secret --path '{key}'`"
    ]  # local's plaintext password is for a database on localhost: no note
    assert "Prod-Hunter2-Password" not in out


def test_a_present_ca_bundle_gives_no_note(tmp_path: Path) -> None:
    loaded = preparation.prepare(ROOT, "aws").loaded
    assert len(preparation.absent_ca_bundles(tmp_path, loaded)) == 2
    bundle = tmp_path / "certs" / "aws-rds-global-bundle.pem"
    bundle.parent.mkdir()
    bundle.write_text("-----BEGIN CERTIFICATE-----\n", encoding="utf-8")
    assert preparation.absent_ca_bundles(tmp_path, loaded) == []

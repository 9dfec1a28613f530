"""The offline render: golden snapshots, determinism, redaction, notes, exit codes."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from rich.console import Console

from components import tokens
from gatewayctl import cli, render
from gatewayctl.secrets import REDACTED, SECURE_PLACEHOLDER
from tests.builders import copy_project, edited_config, write_gateway
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
        one = render.execute(render.prepare(first, stack)).files
        two = render.execute(render.prepare(second, stack)).files
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
    assert len(secrets) == 5 * len(any_stack.gateways)
    by_name = {}
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
    code = cli.main(["render", "--all", "--out", str(tmp_path), "-q"])
    out = capsys.readouterr().out
    assert code == 0
    assert out.count("`secure:` config values cannot be decrypted offline") == 1
    assert out.startswith("note: 3 `secure:` config values")
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
        "images": {
            "gateway": "ghcr.io/nvidia/openshell/gateway:0.0.109",
            "supervisor": "ghcr.io/nvidia/openshell/supervisor:0.0.109",
            "sandbox": "ghcr.io/nvidia/openshell-community/sandboxes/base:latest",
        },
        "database": "gw_search",
    }
    kinds = {r["type"] for r in plan["resources"]}
    assert {
        "tls:index/locallySignedCert:LocallySignedCert",
        "postgresql:index/grant:Grant",
    } <= kinds
    csr = next(r for r in plan["resources"] if r["name"] == "search-pki-server-csr")
    assert csr["parent"].endswith(f"{tokens.PKI}::search-pki")
    assert csr["inputs"]["privateKeyPem"] == REDACTED


def test_no_stack_under_root_and_unknown_stacks_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["--root", str(tmp_path), "validate", "--all"]) == 2
    assert capsys.readouterr().err == (
        f"error: {tmp_path}: no Pulumi.<stack>.yaml here; is --root the project?\n"
        "1 problem(s); nothing written\n"
    )
    assert cli.main(["render", "gcp"]) == 2
    assert capsys.readouterr().err.startswith(
        "error: Pulumi.gcp.yaml: no such stack; the stacks here are aws, ibm, local\n"
    )


def test_an_interrupt_exits_130_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    def interrupted(*_: object, **__: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(render, "execute", interrupted)
    assert cli.main(["render", "local", "--out", str(tmp_path / "x")]) == 130
    assert capsys.readouterr().err == "interrupted\n"
    assert not (tmp_path / "x").exists()


def test_plaintext_secrets_of_a_remote_database_are_noted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = copy_project(tmp_path / "p")
    with edited_config(project, "ibm") as config:
        secrets = config["hypershell-gateways:clusterSecrets"]
        secrets["roks-us-east"]["dbAdminPassword"] = "Prod-Hunter2-Password"

    assert cli.main(["--root", str(project), "validate", "--all"]) == 0
    out = capsys.readouterr().out
    key = "clusterSecrets.roks-us-east.dbAdminPassword"
    notes = [line for line in out.splitlines() if "plaintext" in line]
    assert notes == [
        f"note: Pulumi.ibm.yaml: {key}: plaintext in a file kept in git; set it with"
        f" `pulumi config set --secret --path '{key}'`"
    ]  # local's plaintext password is for a database on localhost: no note
    assert "Prod-Hunter2-Password" not in out


def test_invalid_input_exits_2_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = copy_project(tmp_path / "p")
    write_gateway(project, "broken", {"cluster": "rosa-eu-west-1", "replicas": "many"}, stack="aws")
    out = tmp_path / "out"
    code = cli.main(["--root", str(project), "render", "--all", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert not out.exists()
    assert "error: gateways/aws/broken.yaml: spec.cluster: unknown cluster 'rosa-eu-west-1'" in err
    assert "error: gateways/aws/broken.yaml: spec.replicas: Input should be a valid integer" in err
    assert "2 problem(s); nothing written" in err


def test_unexpected_failure_exits_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    def boom(*_: object, **__: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(render, "write_tree", boom)
    assert cli.main(["render", "local", "--out", str(tmp_path / "x")]) == 1
    assert "error: RuntimeError: disk on fire" in capsys.readouterr().err


def test_validate_reports_each_stack(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["validate", "--all"]) == 0
    absent = " is not in the project directory; `pulumi up` needs it to verify the database"
    absent += " server (the offline render does not)"
    assert capsys.readouterr().out.splitlines() == [
        "note: Pulumi.aws.yaml: clusters.rosa-us-east-1.database.sslRootCert:"
        f" 'certs/aws-rds-global-bundle.pem'{absent}",
        "note: Pulumi.aws.yaml: clusters.rosa-us-west-2.database.sslRootCert:"
        f" 'certs/aws-rds-global-bundle.pem'{absent}",
        "note: Pulumi.ibm.yaml: clusters.roks-us-east.database.sslRootCert:"
        f" 'certs/ibm-databases-for-postgresql-ca.pem'{absent}",
        "Pulumi.aws.yaml: ok (4 gateways, 2 clusters)",
        "Pulumi.ibm.yaml: ok (4 gateways, 1 cluster)",
        "Pulumi.local.yaml: ok (3 gateways, 1 cluster)",
    ]


def test_a_present_ca_bundle_gives_no_note(tmp_path: Path) -> None:
    loaded = render.prepare(ROOT, "aws").loaded
    assert len(render.absent_ca_bundles(tmp_path, loaded)) == 2
    bundle = tmp_path / "certs" / "aws-rds-global-bundle.pem"
    bundle.parent.mkdir()
    bundle.write_text("-----BEGIN CERTIFICATE-----\n", encoding="utf-8")
    assert render.absent_ca_bundles(tmp_path, loaded) == []


def test_unknown_stack_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["validate", "gcp"]) == 2
    assert (
        "error: Pulumi.gcp.yaml: no such stack; the stacks here are aws, ibm, local"
        in capsys.readouterr().err
    )


def test_help_documents_commands_and_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(["render", "--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    assert "--all" in text and "--out" in text
    assert "exit codes: 0 ok; 2 invalid input" in text


@pytest.mark.parametrize(
    ("command", "example"),
    [
        ("import-file", "python -m gatewayctl import-file ibm "),
        ("operator-manifests", "python -m gatewayctl operator-manifests "),
    ],
)
def test_each_command_help_shows_its_own_examples(
    capsys: pytest.CaptureFixture[str], command: str, example: str
) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main([command, "--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    assert example in text
    assert "python -m gatewayctl render" not in text


def test_progress_bar_for_many_gateways(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "p")
    for index in range(cli.PROGRESS_MIN_GATEWAYS):
        write_gateway(project, f"t{index:02}", stack="local")
    prepared = render.prepare(project, "local")
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=120)
    result = cli._render_one(prepared, console, show_progress=True)
    gateways = cli.PROGRESS_MIN_GATEWAYS + 3
    assert f"rendering local ({gateways} gateways)" in buffer.getvalue()
    assert f"{len(result.recording.resources)} resources" in buffer.getvalue()
    assert len(result.gateways) == cli.PROGRESS_MIN_GATEWAYS + 3
    quiet = io.StringIO()
    cli._render_one(prepared, Console(file=quiet, force_terminal=True), show_progress=False)
    assert quiet.getvalue() == ""

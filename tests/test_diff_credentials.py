"""The offline diff's warning when a gateway's credential store changes
(``gatewayctl.diff.orphaned_credentials``): found, reported above the object diffs, named in the
docs,
and raised by a pull request's diff."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from components.credentials import KekCredentials, KubernetesSecretsCredentials
from components.gateway_config import gateway_config, render_gateway_toml
from gatewayctl.diff.compare import ObjectChange, StackDiff
from gatewayctl.diff.orphaned_credentials import DOCS_SECTION, Store, store_changes, summary_lines
from gatewayctl.diff.report import build_report
from tests.diff_helpers import clone, run_diff
from tests.support import ROOT
from tests.test_components import NS
from tests.test_credentials import SECRETS, VAULT

# --- the offline diff -------------------------------------------------------------------------


def config_map(driver: Any, gateway: str = "acme", namespace: str = NS) -> str:
    toml = render_gateway_toml(
        gateway_config(
            namespace=namespace,
            sandbox_image="s:1",
            supervisor_image="v:1",
            server_sans=("a",),
            credentials=driver,
        )
    )
    document = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "openshell-gateway-config",
            "namespace": namespace,
            "labels": {"hypershell.redhat.io/gateway": gateway},
        },
        "data": {"gateway.toml": toml},
    }
    return yaml.safe_dump(document)


def changed(old: Any, new: Any, gateway: str = "acme", namespace: str = NS) -> ObjectChange:
    return ObjectChange(
        path=f"manifests/c1/{namespace}/configmap-openshell-gateway-config.yaml",
        kind="ConfigMap",
        status="changed",
        old=config_map(old, gateway, namespace),
        new=config_map(new, gateway, namespace),
    )


def stack_diff(*objects: ObjectChange) -> StackDiff:
    return StackDiff(
        stack="ibm", base_note=None, head_note=None, gateways=(), objects=objects, resources=()
    )


def test_a_store_change_is_found_and_a_setting_change_is_not() -> None:
    objects = [
        changed(KekCredentials(), VAULT),
        changed(SECRETS, KubernetesSecretsCredentials(namespace="x"), "beta", "openshell-beta"),
        changed(VAULT, replace(VAULT, role="other", timeout_seconds=5), "gamma", "openshell-gamma"),
        changed(VAULT, replace(VAULT, mount="kv"), "delta", "openshell-delta"),
    ]
    assert [(c.gateway, c.old, c.new) for c in store_changes(objects)] == [
        (
            "acme",
            Store("kek", "(database, KEK Secret)"),
            Store("vault", "`https://vault.example.com:8200` mount `secret`"),
        ),
        (
            "beta",
            Store("kubernetes-secrets", f"namespace `{NS}`"),
            Store("kubernetes-secrets", "namespace `x`"),
        ),
        (
            "delta",
            Store("vault", "`https://vault.example.com:8200` mount `secret`"),
            Store("vault", "`https://vault.example.com:8200` mount `kv`"),
        ),
    ]


def test_the_report_warns_above_the_object_diffs() -> None:
    diff = stack_diff(changed(SECRETS, KekCredentials()))
    lines = summary_lines(diff)
    report = build_report([diff], base_label="`main` (`abc`)", command="gatewayctl diff")

    assert lines == [
        "**Credential storage changes**: 1 gateway(s) would read their users' credentials from"
        " another store; what they stored before becomes unreadable to them (and leaving `kek`"
        " deletes the KEK Secret) unless migrated first: see docs/credential-drivers.md,"
        ' "Changing a gateway\'s credential driver".',
        "",
        "| Gateway | Namespace | From | To |",
        "|---|---|---|---|",
        f"| `acme` | `{NS}` | `kubernetes-secrets` namespace `{NS}`"
        " | `kek` (database, KEK Secret) |",
        "",
    ]
    assert "\n".join(lines) in report
    assert report.index("Credential storage changes") < report.index("### Object diffs")
    assert summary_lines(stack_diff(changed(VAULT, replace(VAULT, role="x")))) == []


def test_the_docs_have_the_section_the_warning_names() -> None:
    page = ROOT / "docs" / "credential-drivers.md"
    headings = [line for line in page.read_text().splitlines() if line[:1] == "#"]
    assert f"### {DOCS_SECTION}" in headings


def test_the_pr_diff_flags_a_live_gateway_switching_driver(
    pristine: Path,
    tmp_path: Path,
) -> None:
    repo = clone(pristine, tmp_path / "repo")
    declaration = repo / "gateways" / "local" / "offline.yaml"
    declaration.write_text(
        declaration.read_text() + "  credentials:\n    driver: kubernetes-secrets\n"
    )

    run = run_diff(repo, "local", "--base", "main")

    assert run.code == 3, run.err
    assert (
        "| `offline` | `openshell-offline` | `kek` (database, KEK Secret)"
        " | `kubernetes-secrets` namespace `openshell-offline` |"
    ) in run.out.splitlines()
    assert run.out.count("**Credential storage changes**: 1 gateway(s)") == 1

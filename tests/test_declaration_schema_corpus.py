"""The declaration schema editors read against ``gatewayctl validate`` (issue 42 item 17): every
mistake of one field that ``validate`` refuses, the schema refuses too, at that field; every
value ``validate`` takes, the schema takes. The rules across fields the schema cannot hold are
listed, each with why."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings

from gatewayctl.cli import main as cli
from gatewayctl.inputs import schema
from tests.builders import API_VERSION, cluster, write_stack, write_text
from tests.project_strategies import valid_projects
from tests.support import ROOT

COMMITTED = json.loads((ROOT / schema.SCHEMA_FILE).read_text())
VALIDATOR = jsonschema.Draft202012Validator(COMMITTED)

KEYCLOAK = {
    "keycloak": {
        "url": "https://sso.example.com",
        "realm": "hypershell",
        "adminClientId": "provisioner",
    }
}
VAULT = {"driver": "vault", "vault": {"address": "https://vault.example.com", "role": "gw"}}

# (a field's path, the mistake) with any other spec fields the case needs; each refused by
# `validate` at that path.
ISSUER = {"issuer": "https://issuer.example.com"}
IDS = {
    "client": "00000000-0000-4000-8000-000000000001",
    "adminRole": "aaaaaaaa-0000-4000-8000-000000000002",
    "userRole": "00000000-0000-4000-8000-000000000003",
}
ADOPTED = {"keycloak": {"clientId": "gw", "importIds": IDS}}
MISTAKES: list[tuple[str, Any, dict[str, Any]]] = [
    ("apiVersion", "hypershell.redhat.io/v1", {}),
    ("kind", "Gateways", {}),
    ("metadata.name", "Team_A", {}),
    ("metadata.name", "-a", {}),
    ("metadata.name", "a" * 51, {}),
    ("metadata.labels", {"bad key!": "x"}, {}),
    ("metadata.labels", {"example.com/": "x"}, {}),
    ("metadata.labels", {"k": "bad value!"}, {}),
    ("metadata.labels", {"k": "x" * 64}, {}),
    ("spec.cluster", "Bad_Cluster", {}),
    ("spec.rotation.databasePassword", -1, {}),
    ("spec.rotation.serverCertificate", -1, {}),
    ("spec.rotation.clientCertificate", -1, {}),
    ("spec.rotation.ca", -1, {}),
    ("spec.rotation.kek", -2, {}),
    ("spec.rotation.consoleCookie", -1, {}),
    ("spec.namespace", "kube-system", {}),
    ("spec.namespace", "openshift-logging", {}),
    ("spec.namespace", "default", {}),
    ("spec.namespace", "Tenant", {}),
    ("spec.namespace", "a" * 61, {}),
    ("spec.exposure.host", "not a host", {}),
    ("spec.exposure.host", "gateway", {}),
    ("spec.exposure.host", "gw.example.123", {}),
    ("spec.exposure.host", "GW.example.com", {}),
    ("spec.images.gateway", "Registry/Image:tag", {}),
    ("spec.images.gateway", "repo@sha256:abc", {}),
    ("spec.images.supervisor", "repo:tag;rm", {}),
    ("spec.release", "Bad_Release", {}),
    ("spec.replicas", 0, {}),
    ("spec.resources.requests.cpu", "lots", {}),
    ("spec.resources.requests.cpu", -1, {}),
    ("spec.resources.requests.memory", "256MB", {}),
    ("spec.resources.limits.cpu", ".", {}),
    ("spec.resources.limits.memory", "1e3", {}),
    ("spec.deletionPolicy", "Orphan", {}),
    ("spec.databaseName", "Bad-Name", {}),
    ("spec.databaseName", "1abc", {}),
    ("spec.databaseName", "x" * 64, {}),
    ("spec.databaseName", "postgres", {}),
    ("spec.databaseName", "template1", {}),
    ("spec.databaseName", "pg_tenant", {}),
    ("spec.databaseName", "rds_tenant", {}),
    ("spec.databaseName", "rdsadmin", {}),
    ("spec.databaseName", "admin", {}),
    ("spec.databaseName", "public", {}),
    ("spec.credentials.driver", "s3", {}),
    ("spec.credentials.vault", None, {"credentials": {"driver": "vault"}}),
    ("spec.credentials.vault", VAULT["vault"], {"credentials": {"driver": "kek"}}),
    ("spec.credentials.vault", VAULT["vault"], {"credentials": {}}),
    ("spec.credentials.kubernetesSecrets", {}, {"credentials": {"driver": "kek"}}),
    (
        "spec.credentials.kubernetesSecrets.namespace",
        "kube-system",
        {"credentials": {"driver": "kubernetes-secrets"}},
    ),
    ("spec.credentials.vault.address", "ftp://vault.example.com", {"credentials": VAULT}),
    ("spec.credentials.vault.address", "https://user@vault.example.com", {"credentials": VAULT}),
    ("spec.credentials.vault.address", "https://vault.example.com/?x=1", {"credentials": VAULT}),
    ("spec.credentials.vault.role", "bad role", {"credentials": VAULT}),
    ("spec.credentials.vault.mount", "/secret", {"credentials": VAULT}),
    ("spec.credentials.vault.mount", "kv/", {"credentials": VAULT}),
    ("spec.credentials.vault.mount", "kv//team", {"credentials": VAULT}),
    ("spec.credentials.vault.mount", "kv/../team", {"credentials": VAULT}),
    ("spec.credentials.vault.authMethod", "token", {"credentials": VAULT}),
    ("spec.credentials.vault.kubernetesAuthMount", "./k8s", {"credentials": VAULT}),
    ("spec.credentials.vault.timeoutSeconds", 0, {"credentials": VAULT}),
    ("spec.oidc.issuer", "http://issuer.example.com", {"oidc": {}}),
    ("spec.oidc.issuer", "https://issuer.example.com?tenant=1", {"oidc": {}}),
    ("spec.oidc.audience", " leading", {"oidc": ISSUER}),
    ("spec.oidc.rolesClaim", "tab\tinside", {"oidc": ISSUER}),
    ("spec.oidc.scopesClaim", "scope ", {"oidc": ISSUER}),
    ("spec.oidc.adminRole", "admin", {"oidc": ISSUER}),
    ("spec.oidc.userRole", "user", {"oidc": ISSUER}),
    ("spec.oidc.jwksTtlSeconds", 30, {"oidc": ISSUER}),
    ("spec.oidc", {"issuer": "https://issuer.example.com"}, {"signIn": "none"}),
    ("spec.oidc", {"issuer": "https://issuer.example.com"}, {"keycloak": {"clientId": "gw"}}),
    ("spec.access.admins", ["bogus"], {}),
    ("spec.access.admins", ["user:Alice"], {}),
    ("spec.access.admins", ["group:team"], {}),
    ("spec.access.admins", ["group:/team/"], {}),
    ("spec.access.users", ["user:alice", "user:alice"], {}),
    ("spec.access", {"admins": ["user:alice"]}, {"signIn": "none"}),
    ("spec.keycloak.clientId", "bad id!", {}),
    ("spec.keycloak.importIds.client", "x", ADOPTED),
    ("spec.keycloak.importIds.adminRole", IDS["adminRole"].upper(), ADOPTED),
    ("spec.keycloak.importIds.userRole", "{" + IDS["userRole"] + "}", ADOPTED),
    ("spec.keycloak", {"clientId": "gw"}, {"signIn": "none"}),
    ("spec.signIn", "nobody", {}),
    ("spec.console.enabled", "yes", {}),
    ("spec.console.images.dashboard", "dashboard:", {}),
    ("spec.console.images.oauth2Proxy", "UPPER", {}),
]

# (field path, value, other spec fields) that `validate` refuses and JSON Schema cannot: each
# needs two fields compared or a stack's other files.
ACROSS_FIELDS: list[tuple[str, Any, dict[str, Any], str]] = [
    (
        "spec.resources",
        {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}},
        {},
        "compares two quantities (requests.cpu above limits.cpu)",
    ),
    (
        "spec.oidc.userRole",
        "same",
        {"oidc": {"issuer": "https://issuer.example.com", "adminRole": "same"}},
        "compares two fields (adminRole and userRole must differ)",
    ),
    (
        "spec.cluster",
        "other",
        {},
        "needs the stack's cluster names (Pulumi.<stack>.yaml)",
    ),
]

# Values `validate` takes that a too strict pattern would refuse.
VALID: list[tuple[str, Any, dict[str, Any]]] = [
    ("metadata.labels", {"example.com/team": "a.b_c-1", "tier": ""}, {}),
    ("spec.namespace", "tenant-a", {}),
    ("spec.namespace", "kubernetes-dashboard-tenant", {}),
    ("spec.exposure.host", "gw.tenant.example.org", {}),
    ("spec.exposure.host", "9gag.example.com", {}),
    ("spec.images.gateway", "registry.example.com:5000/team/gateway:1.2.3", {}),
    ("spec.images.gateway", "localhost/gateway@sha256:" + "a" * 64, {}),
    ("spec.images.supervisor", "supervisor", {}),
    ("spec.resources.requests", {"cpu": 0.25, "memory": "0.25Gi"}, {}),
    ("spec.resources.limits", {"cpu": 2.5, "memory": "1G"}, {}),
    ("spec.databaseName", "gw_tenant_a", {}),
    ("spec.databaseName", "_legacy", {}),
    ("spec.credentials.vault.address", "http://10.0.0.1:8200/v1", {"credentials": VAULT}),
    ("spec.credentials.vault.mount", "kv/team.a", {"credentials": VAULT}),
    (
        "spec.credentials.kubernetesSecrets.namespace",
        "tenant-a-secrets",
        {"credentials": {"driver": "kubernetes-secrets"}},
    ),
    (
        "spec.oidc",
        {"issuer": "https://issuer.example.com:8443/realms/x", "adminRole": "a", "userRole": "u"},
        {},
    ),
    ("spec.access", {"admins": ["group:/Team A/ops", "user:alice@example.com"]}, {}),
    ("spec.keycloak", {"clientId": "team-a-7f3e"}, {}),
    ("spec.signIn", "none", {}),
]


def _document(path: str, value: Any, spec: dict[str, Any]) -> dict[str, Any]:
    document: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": "Gateway",
        "metadata": {"name": "team-a"},
        "spec": {"cluster": "c1", **copy.deepcopy(spec)},
    }
    node = document
    keys = path.split(".")
    for key in keys[:-1]:
        node = node.setdefault(key, {})
    node[keys[-1]] = copy.deepcopy(value)
    return document


def _validate(
    root: Path, document: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> tuple[int, str]:
    """``gatewayctl validate`` of one stack holding ``document``: exit code and output."""
    write_stack(
        root,
        clusters={"c1": cluster(identity=KEYCLOAK)},
        secrets={"c1": {"dbAdminPassword": "pw", "keycloakAdminClientSecret": "s"}},
    )
    name = document["metadata"]["name"]
    file = f"{name}.yaml" if isinstance(name, str) and "/" not in name else "team-a.yaml"
    write_text(root, f"gateways/test/{file}", json.dumps(document))
    code = cli.main(["--root", str(root), "validate", "test"])
    printed = capsys.readouterr()
    return code, printed.out + printed.err


def _schema_errors(document: dict[str, Any]) -> list[str]:
    """Where the schema refuses ``document``: each error's dotted path."""
    return sorted(
        ".".join(str(p) for p in error.absolute_path) for error in VALIDATOR.iter_errors(document)
    )


def _label(case: tuple[Any, ...]) -> str:
    return f"{case[0]}={json.dumps(case[1])[:40]}"


@pytest.mark.parametrize("case", MISTAKES, ids=_label)
def test_validate_and_the_schema_both_refuse_a_mistake_at_its_field(
    case: tuple[str, Any, dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, value, spec = case
    document = _document(path, value, spec)
    code, printed = _validate(tmp_path, document, capsys)
    assert code == 2, printed
    # validate names the field, or the object holding it for a rule between its fields.
    assert f": {path}" in printed or f": {path.rsplit('.', 1)[0]}: " in printed, printed
    errors = _schema_errors(document)
    assert errors, f"the schema takes {path}={value!r}, which validate refuses:\n{printed}"
    # The schema's error is at the field or at an object holding it (a rule across the
    # fields of one object, such as a driver's block, is reported at that object).
    assert any(path == e or path.startswith(e + ".") or e.startswith(path) for e in errors), errors


@pytest.mark.parametrize("case", ACROSS_FIELDS, ids=_label)
def test_rules_across_fields_are_validates_alone(
    case: tuple[str, Any, dict[str, Any], str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, value, spec, _why = case
    document = _document(path, value, spec)
    code, printed = _validate(tmp_path, document, capsys)
    assert code == 2, printed
    # When the schema learns to hold one of these, move it to MISTAKES.
    assert _schema_errors(document) == []


@pytest.mark.parametrize("case", VALID, ids=_label)
def test_validate_and_the_schema_both_take_a_valid_value(
    case: tuple[str, Any, dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, value, spec = case
    document = _document(path, value, spec)
    code, printed = _validate(tmp_path, document, capsys)
    assert code == 0, printed
    assert _schema_errors(document) == []


def test_the_corpus_covers_every_field_with_a_rule_of_its_own() -> None:
    # Every field whose schema node carries a pattern, enum, bounds or a conditional has a
    # mistake in the corpus, so a rule added to the models without one here is noticed.
    ruled = {name for name, node, _ in schema.fields(COMMITTED) if _has_rule(node)}
    mistaken = {path for path, _, _ in MISTAKES}
    missing = sorted(
        name for name in ruled if not any(m == name or m.startswith(name + ".") for m in mistaken)
    )
    assert missing == []


def _has_rule(node: dict[str, Any]) -> bool:
    keys = {"pattern", "enum", "const", "minimum", "maximum", "maxLength", "allOf", "not"}
    options = [node, *node.get("anyOf", [])]
    for option in options:
        if keys & set(option):
            return True
        ref = option.get("$ref", "")
        if ref.startswith("#/$defs/"):
            target = COMMITTED["$defs"][ref.removeprefix("#/$defs/")]
            if keys & set(target) or "dependentRequired" in target:
                return True
    return False


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(project=valid_projects())
def test_the_schema_takes_every_declaration_of_a_valid_project(project: Any) -> None:
    for gateway in project.gateways:
        assert _schema_errors(gateway.doc) == [], gateway.doc

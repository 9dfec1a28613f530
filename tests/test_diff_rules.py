"""The providers' own rules (``gatewayctl.diff.rules``): each changed resource's operation, one
resource at a time, and a rule for every type the render registers."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from gatewayctl.diff.rules import BRIDGED_FORCE_NEW, PROVIDER_FORCE_NEW, predict_one, rule_for
from tests.support import rendered

MUTABLE = {"enableSecretMutable": "true", "enableConfigMapMutable": "true"}


def k8s(kind: str, api: str = "v1", **body: Any) -> dict[str, Any]:
    return {"apiVersion": api, "kind": kind, "metadata": {"name": "x", "namespace": "ns"}, **body}


def renamed(obj: dict[str, Any], **meta: str) -> dict[str, Any]:
    changed = copy.deepcopy(obj)
    changed["metadata"].update(meta)
    return changed


DEPLOY = k8s(
    "Deployment",
    "apps/v1",
    spec={
        "selector": {"matchLabels": {"app": "a"}},
        "replicas": 1,
        "template": {"spec": {"containers": [{"name": "c", "image": "i:1"}]}},
    },
)


def with_spec(obj: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(obj)
    where = changed
    *parents, last = path.split(".")
    for part in parents:
        where = where[part]
    where[last] = value
    return changed


@pytest.mark.parametrize(
    ("type_", "old", "new", "provider", "expected"),
    [
        # provider.go Diff: a named object keeping its name and namespace deletes first.
        (
            "kubernetes:apps/v1:Deployment",
            DEPLOY,
            with_spec(DEPLOY, "spec.selector", {"matchLabels": {"app": "b"}}),
            MUTABLE,
            ("replace-delete-first", ("spec.selector.matchLabels.app",)),
        ),
        (
            "kubernetes:apps/v1:Deployment",
            DEPLOY,
            with_spec(DEPLOY, "spec.replicas", 2),
            MUTABLE,
            ("update", ("spec.replicas",)),
        ),
        # A Deployment's containers are not force-new (only a Pod's are).
        (
            "kubernetes:apps/v1:Deployment",
            DEPLOY,
            with_spec(
                DEPLOY, "spec.template", {"spec": {"containers": [{"name": "c", "image": "i:2"}]}}
            ),
            MUTABLE,
            ("update", ("spec.template.spec.containers[0].image",)),
        ),
        # A new name or namespace: a new object, created before the old one is deleted.
        (
            "kubernetes:apps/v1:Deployment",
            DEPLOY,
            renamed(DEPLOY, namespace="other"),
            MUTABLE,
            ("replace", ("metadata.namespace",)),
        ),
        (
            "kubernetes:core/v1:Namespace",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}},
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "b"}},
            MUTABLE,
            ("replace", ("metadata.name",)),
        ),
        # Secrets and ConfigMaps: data in place under the program's provider settings ...
        (
            "kubernetes:core/v1:Secret",
            k8s("Secret", stringData={"k": "a"}),
            k8s("Secret", stringData={"k": "b"}),
            MUTABLE,
            ("update", ("stringData.k",)),
        ),
        # ... replaced (delete first: same name) under the provider's defaults ...
        (
            "kubernetes:core/v1:Secret",
            k8s("Secret", stringData={"k": "a"}),
            k8s("Secret", stringData={"k": "b"}),
            {},
            ("replace-delete-first", ("stringData.k",)),
        ),
        (
            "kubernetes:core/v1:ConfigMap",
            k8s("ConfigMap", data={"k": "a"}),
            k8s("ConfigMap", data={"k": "b"}),
            {},
            ("replace-delete-first", ("data.k",)),
        ),
        # ... or when the object is immutable.
        (
            "kubernetes:core/v1:ConfigMap",
            k8s("ConfigMap", immutable=True, data={"k": "a"}),
            k8s("ConfigMap", immutable=True, data={"k": "b"}),
            MUTABLE,
            ("replace-delete-first", ("data.k",)),
        ),
        (
            "kubernetes:core/v1:Secret",
            k8s("Secret", type="Opaque"),
            k8s("Secret", type="kubernetes.io/tls"),
            MUTABLE,
            ("replace-delete-first", ("type",)),
        ),
        (
            "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding",
            k8s("RoleBinding", "rbac.authorization.k8s.io/v1", roleRef={"name": "a"}),
            k8s("RoleBinding", "rbac.authorization.k8s.io/v1", roleRef={"name": "b"}),
            MUTABLE,
            ("replace-delete-first", ("roleRef.name",)),
        ),
        (
            "kubernetes:core/v1:Service",
            k8s("Service", spec={"clusterIP": "None", "ports": [{"port": 1}]}),
            k8s("Service", spec={"clusterIP": "None", "ports": [{"port": 2}]}),
            MUTABLE,
            ("update", ("spec.ports[0].port",)),
        ),
        # Patch resources replace only on identity.
        (
            "kubernetes:rbac.authorization.k8s.io/v1:ClusterRolePatch",
            k8s("ClusterRole", "rbac.authorization.k8s.io/v1", rules=[{"verbs": ["get"]}]),
            k8s("ClusterRole", "rbac.authorization.k8s.io/v1", rules=[{"verbs": ["list"]}]),
            MUTABLE,
            ("update", ("rules[0].verbs[0]",)),
        ),
        # Bridged providers: the Terraform providers' RequiresReplace / ForceNew.
        (
            "tls:index/privateKey:PrivateKey",
            {"algorithm": "ECDSA", "ecdsaCurve": "P256"},
            {"algorithm": "ECDSA", "ecdsaCurve": "P384"},
            {},
            ("replace", ("ecdsaCurve",)),
        ),
        (
            "tls:index/locallySignedCert:LocallySignedCert",
            {"validityPeriodHours": 8760, "earlyRenewalHours": 720},
            {"validityPeriodHours": 8760, "earlyRenewalHours": 1440},
            {},
            ("update", ("earlyRenewalHours",)),
        ),
        (
            "tls:index/selfSignedCert:SelfSignedCert",
            {"validityPeriodHours": 87600, "subject": {"commonName": "a"}},
            {"validityPeriodHours": 87600, "subject": {"commonName": "b"}},
            {},
            ("replace", ("subject.commonName",)),
        ),
        (
            "tls:index/certRequest:CertRequest",
            {"dnsNames": ["a"]},
            {"dnsNames": ["a", "b"]},
            {},
            ("replace", ("dnsNames",)),
        ),
        (
            "random:index/randomPassword:RandomPassword",
            {"length": 40, "special": False},
            {"length": 48, "special": False},
            {},
            ("replace", ("length",)),
        ),
        (
            "postgresql:index/role:Role",
            {"name": "gw_a", "password": "[secret]", "login": True},
            {"name": "gw_b", "password": "[secret]", "login": True},
            {},
            ("update", ("name",)),
        ),
        (
            "postgresql:index/database:Database",
            {"name": "gw_a", "owner": "gw_a"},
            {"name": "gw_a", "owner": "gw_b"},
            {},
            ("update", ("owner",)),
        ),
        (
            "postgresql:index/database:Database",
            {"name": "gw_a", "template": "template0"},
            {"name": "gw_a", "template": "template1"},
            {},
            ("replace", ("template",)),
        ),
        (
            "postgresql:index/grant:Grant",
            {"role": "public", "objectType": "database", "privileges": []},
            {"role": "public", "objectType": "database", "privileges": ["CONNECT"]},
            {},
            ("update", ("privileges",)),
        ),
        (
            "postgresql:index/grant:Grant",
            {"role": "public", "objectType": "database", "privileges": []},
            {"role": "gw_a", "objectType": "database", "privileges": []},
            {},
            ("replace", ("role",)),
        ),
    ],
)
def test_each_provider_rule(
    type_: str, old: dict[str, Any], new: dict[str, Any], provider: dict[str, Any], expected: Any
) -> None:
    assert predict_one(type_, old, new, provider) == expected


def test_unchanged_and_ignored_changes_predict_nothing() -> None:
    assert predict_one("kubernetes:apps/v1:Deployment", DEPLOY, DEPLOY, MUTABLE) is None
    selector = with_spec(DEPLOY, "spec.selector", {"matchLabels": {"app": "b"}})
    assert predict_one("kubernetes:apps/v1:Deployment", DEPLOY, selector, MUTABLE, ["spec"]) is None


# --- every type the render registers has a rule (issue 21, item 15) --------------------------


@pytest.mark.parametrize(
    ("type_", "old", "new", "expected"),
    [
        # keycloak/terraform-provider-keycloak v5.9.0, provider/resource_keycloak_*.go ForceNew.
        (
            "keycloak:openid/client:Client",
            {"realmId": "a", "clientId": "c", "validRedirectUris": ["x"]},
            {"realmId": "b", "clientId": "c", "validRedirectUris": ["x"]},
            ("replace", ("realmId",)),
        ),
        (
            "keycloak:openid/client:Client",
            {"realmId": "a", "clientId": "c", "validRedirectUris": ["x"]},
            {"realmId": "a", "clientId": "d", "validRedirectUris": ["y"]},
            ("update", ("clientId", "validRedirectUris[0]")),
        ),
        (
            "keycloak:index/role:Role",
            {"realmId": "r", "clientId": "c1", "name": "openshell-admin"},
            {"realmId": "r", "clientId": "c2", "name": "openshell-admin"},
            ("replace", ("clientId",)),
        ),
        (
            "keycloak:index/role:Role",
            {"realmId": "r", "clientId": "c1", "name": "a", "description": "x"},
            {"realmId": "r", "clientId": "c1", "name": "b", "description": "y"},
            ("update", ("description", "name")),
        ),
        (
            "keycloak:index/groupRoles:GroupRoles",
            {"realmId": "r", "groupId": "g1", "roleIds": ["a"], "exhaustive": False},
            {"realmId": "r", "groupId": "g2", "roleIds": ["a"], "exhaustive": False},
            ("replace", ("groupId",)),
        ),
        (
            "keycloak:index/groupRoles:GroupRoles",
            {"realmId": "r", "groupId": "g1", "roleIds": ["a"], "exhaustive": False},
            {"realmId": "r", "groupId": "g1", "roleIds": ["a", "b"], "exhaustive": False},
            ("update", ("roleIds",)),
        ),
        (
            "keycloak:index/userRoles:UserRoles",
            {"realmId": "r", "userId": "u1", "roleIds": ["a"]},
            {"realmId": "r", "userId": "u2", "roleIds": ["a"]},
            ("replace", ("userId",)),
        ),
        (
            "keycloak:openid/clientDefaultScopes:ClientDefaultScopes",
            {"realmId": "r", "clientId": "c1", "defaultScopes": ["profile"]},
            {"realmId": "r", "clientId": "c2", "defaultScopes": ["profile", "email"]},
            ("replace", ("clientId",)),
        ),
        (
            "keycloak:openid/clientDefaultScopes:ClientDefaultScopes",
            {"realmId": "r", "clientId": "c1", "defaultScopes": ["profile"]},
            {"realmId": "r", "clientId": "c1", "defaultScopes": ["email"]},
            ("update", ("defaultScopes[0]",)),
        ),
        (
            "keycloak:openid/audienceProtocolMapper:AudienceProtocolMapper",
            {"realmId": "r", "clientId": "c1", "name": "aud", "includedClientAudience": "a"},
            {"realmId": "r", "clientId": "c2", "name": "aud", "includedClientAudience": "b"},
            ("replace", ("clientId",)),
        ),
        (
            "keycloak:openid/audienceProtocolMapper:AudienceProtocolMapper",
            {"realmId": "r", "clientId": "c1", "name": "aud", "includedClientAudience": "a"},
            {"realmId": "r", "clientId": "c1", "name": "aud", "includedClientAudience": "b"},
            ("update", ("includedClientAudience",)),
        ),
        (
            "keycloak:openid/subProtocolMapper:SubProtocolMapper",
            {"realmId": "r1", "clientId": "c", "name": "sub"},
            {"realmId": "r2", "clientId": "c", "name": "sub"},
            ("replace", ("realmId",)),
        ),
        (
            "keycloak:openid/userClientRoleProtocolMapper:UserClientRoleProtocolMapper",
            {"realmId": "r", "clientId": "c1", "claimName": "hypershell.roles"},
            {"realmId": "r", "clientId": "c2", "claimName": "roles"},
            ("replace", ("clientId",)),
        ),
        (
            "keycloak:openid/userClientRoleProtocolMapper:UserClientRoleProtocolMapper",
            {"realmId": "r", "clientId": "c1", "claimName": "hypershell.roles"},
            {"realmId": "r", "clientId": "c1", "claimName": "roles"},
            ("update", ("claimName",)),
        ),
        # resource_keycloak_generic_role_mapper.go: every field ForceNew, no Update.
        (
            "keycloak:index/genericRoleMapper:GenericRoleMapper",
            {"realmId": "r", "clientId": "c", "roleId": "a"},
            {"realmId": "r", "clientId": "c", "roleId": "b"},
            ("replace", ("roleId",)),
        ),
        (
            "keycloak:index/genericRoleMapper:GenericRoleMapper",
            {"realmId": "r", "clientId": "c1", "roleId": "a"},
            {"realmId": "r", "clientId": "c2", "roleId": "a"},
            ("replace", ("clientId",)),
        ),
        # Providers: pulumi-kubernetes DiffConfig replaces when the active cluster moves ...
        (
            "pulumi:providers:kubernetes",
            {"context": "a", "kubeconfig": "/k", "enableSecretMutable": "true"},
            {"context": "b", "kubeconfig": "/k", "enableSecretMutable": "true"},
            ("replace", ("context",)),
        ),
        # ... found only through a kubeconfig input on both sides (util.go
        # getActiveClusterFromConfig: an empty config finds no cluster); the real engine's
        # answer in tests/e2e/test_e2e_e_predictions.py ("kubeconfig context change").
        (
            "pulumi:providers:kubernetes",
            {"context": "a", "enableSecretMutable": "true"},
            {"context": "b", "enableSecretMutable": "true"},
            ("update", ("context",)),
        ),
        (
            "pulumi:providers:kubernetes",
            {"context": "a"},
            {"context": "b", "kubeconfig": "/k"},
            ("update", ("context", "kubeconfig")),
        ),
        (
            "pulumi:providers:kubernetes",
            {"kubeconfig": "/k", "cluster": "c1"},
            {"kubeconfig": "/k", "cluster": "c2"},
            ("replace", ("cluster",)),
        ),
        (
            "pulumi:providers:kubernetes",
            {"context": "a", "deleteUnreachable": "false"},
            {"context": "a", "deleteUnreachable": "true"},
            ("update", ("deleteUnreachable",)),
        ),
        # ... unless its clusterIdentifier says the cluster is the same.
        (
            "pulumi:providers:kubernetes",
            {"context": "a", "clusterIdentifier": "east"},
            {"context": "b", "clusterIdentifier": "east"},
            ("update", ("context",)),
        ),
        # The bridged providers mark no key ForcesProviderReplace.
        (
            "pulumi:providers:postgresql",
            {"host": "db1", "port": "5432"},
            {"host": "db2", "port": "5432"},
            ("update", ("host",)),
        ),
        (
            "pulumi:providers:keycloak",
            {"url": "https://a", "realm": "r"},
            {"url": "https://b", "realm": "r"},
            ("update", ("url",)),
        ),
        # A type without a rule is never predicted an update.
        (
            "kubernetes:policy/v1:PodDisruptionBudget",
            k8s("PodDisruptionBudget", "policy/v1", spec={"minAvailable": 1}),
            k8s("PodDisruptionBudget", "policy/v1", spec={"minAvailable": 2}),
            ("unpredicted", ("spec.minAvailable",)),
        ),
    ],
)
def test_keycloak_and_provider_rules(
    type_: str, old: dict[str, Any], new: dict[str, Any], expected: Any
) -> None:
    assert predict_one(type_, old, new, MUTABLE) == expected


def test_every_type_the_render_registers_has_a_rule() -> None:
    from gatewayctl.inputs.stackfile import stacks_with_files
    from tests.support import ROOT

    stacks = stacks_with_files(ROOT)
    assert stacks == ["aws", "ibm", "local"]
    types: set[str] = set()
    for stack in stacks:
        plan = json.loads(rendered(stack).files["plan.json"])
        types |= {r["type"] for r in plan["resources"]}
    assert {
        "kubernetes:apps/v1:Deployment",
        "tls:index/privateKey:PrivateKey",
        "random:index/randomPassword:RandomPassword",
        "postgresql:index/role:Role",
        "keycloak:openid/client:Client",
    } <= types
    assert sorted(t for t in types if rule_for(t) is None) == []
    assert rule_for("kubernetes:policy/v1:PodDisruptionBudget") is None  # the test can fail


def test_each_force_new_attribute_is_an_input_of_its_type_in_the_providers_schema() -> None:
    from tests.support import REFERENCE

    for type_, attributes in BRIDGED_FORCE_NEW.items():
        package = type_.split(":", 1)[0]
        schema = json.loads((REFERENCE / "pulumi" / f"{package}.json").read_text())
        inputs = schema["resources"][type_]["inputProperties"]
        assert attributes is None or attributes <= inputs.keys(), type_
    for type_, keys in PROVIDER_FORCE_NEW.items():
        package = type_.rsplit(":", 1)[-1]
        if package == "kubernetes":
            continue  # not among reference/pulumi: provider.go DiffConfig
        schema = json.loads((REFERENCE / "pulumi" / f"{package}.json").read_text())
        assert keys <= schema["provider"]["inputProperties"].keys(), type_

"""The offline diff predicts each changed resource's operation by the providers' own rules
(``gatewayctl.diff.operations``), warns of the replacements people must hear about, and its
summary names every gateway within the report's bound."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from gatewayctl.diff.compare import GatewayChange, ObjectChange, StackDiff
from gatewayctl.diff.operations import (
    BRIDGED_FORCE_NEW,
    PROVIDER_FORCE_NEW,
    Operation,
    hazards,
    predict,
    predict_one,
    rule_for,
    warnings,
)
from gatewayctl.diff.report import GATEWAY_ROWS, REPORT_LIMIT, build_report
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


# --- on the real program's plans ------------------------------------------------------------


@pytest.fixture(scope="module")
def local_plan() -> dict[str, Any]:
    plan = json.loads(rendered("local").files["plan.json"])
    assert isinstance(plan, dict)
    return plan


def edit(plan: dict[str, Any], name: str, path: str, value: Any) -> None:
    (resource,) = [r for r in plan["resources"] if r["name"] == name]
    where = resource["inputs"]
    *parents, last = path.split(".")
    for part in parents:
        where = where[part]
    where[last] = value


def test_replacements_that_reach_people_are_warned_of(local_plan: dict[str, Any]) -> None:
    head = copy.deepcopy(local_plan)
    edit(head, "dev-pki-ca", "validityPeriodHours", 43800)
    edit(head, "dev-database-db-password", "length", 48)
    edit(head, "dev-ns", "metadata.name", "openshell-dev-2")
    edit(head, "dev-workload-deploy", "spec.replicas", 3)
    operations = predict(local_plan, head)
    assert [(o.name, o.op, o.because, o.gateway) for o in operations] == [
        ("dev-workload-deploy", "update", ("spec.replicas",), "dev"),
        ("dev-ns", "replace", ("metadata.name",), "dev"),
        ("dev-database-db-password", "replace", ("length",), "dev"),
        ("dev-pki-ca", "replace", ("validityPeriodHours",), "dev"),
    ]
    deploy = operations[0]
    assert deploy.manifest == "manifests/kind/openshell-dev/deployment-openshell-gateway.yaml"
    assert deploy.manifest in rendered("local").files
    assert warnings(operations) == [
        "gateway `dev`: a new database password (`dev-database-db-password` is replaced): the"
        " role's password and the credentials Secret change, and the gateway's pods restart.",
        "gateway `dev`: a new tenant CA (`dev-pki-ca` is replaced): every client must re-pin"
        " the new CA certificate, and every certificate it signed is reissued.",
        "gateway `dev`: the namespace is recreated (`dev-ns`, replace (create-before-delete)):"
        " every object in it is deleted with the old one.",
    ]


def test_the_report_says_each_operation_and_warns(local_plan: dict[str, Any]) -> None:
    head = copy.deepcopy(local_plan)
    edit(head, "dev-pki-ca", "validityPeriodHours", 43800)
    edit(head, "dev-workload-deploy", "spec.replicas", 3)
    path = "manifests/kind/openshell-dev/deployment-openshell-gateway.yaml"
    diff = StackDiff(
        stack="local",
        base_note=None,
        head_note=None,
        gateways=(GatewayChange(name="dev", status="changed", fields=("x",)),),
        objects=(
            ObjectChange(
                path=path, kind="Deployment", status="changed", old="a: 1\n", new="a: 2\n"
            ),
        ),
        resources=(),
        operations=tuple(predict(local_plan, head)),
    )
    report = build_report([diff], base_label="b", command="c")
    assert (
        "**Predicted operations** (by the providers' rules): 1 update in place,"
        " 1 replace (create-before-delete), 0 replace (delete-before-replace)"
    ) in report
    assert "> **Warning:** gateway `dev`: a new tenant CA (`dev-pki-ca` is replaced)" in report
    assert "Updated in place: Deployment 1." in report
    assert (
        "| SelfSignedCert `dev-pki-ca` | `dev` | replace (create-before-delete)"
        " | `validityPeriodHours` |"
    ) in report
    assert f"<details><summary>changed Deployment: {path} (update in place)</summary>\n" in report


# --- every gateway named ------------------------------------------------------------------------


def many(count: int, *, name_length: int = 40) -> StackDiff:
    names = [f"g{i:03d}-" + "x" * (name_length - 5) for i in range(count)]
    return StackDiff(
        stack="big",
        base_note=None,
        head_note=None,
        gateways=tuple(
            GatewayChange(
                name=n,
                status="added",
                cluster="rosa-us-east-1",
                namespace=f"openshell-{n}",
                address=f"grpcs://gw-openshell-{n}.use1.openshell.example.com:443",
            )
            for n in names
        ),
        objects=tuple(
            ObjectChange(
                path=f"manifests/c/openshell-{n}/configmap-x.yaml",
                kind="ConfigMap",
                status="added",
                old="",
                new="data:\n  k: " + "v" * 400 + "\n",
            )
            for n in names
        ),
        resources=(),
    )


def test_150_added_gateways_are_all_named_within_the_bound() -> None:
    diff = many(150)
    report = build_report([diff], base_label="b", command="c")
    assert len(report) <= REPORT_LIMIT
    summary = report[: report.index("### Object diffs")]
    for gateway in diff.gateways:
        assert f"`{gateway.name}`" in summary, gateway.name
    assert summary.count("| added | cluster `rosa-us-east-1`") == GATEWAY_ROWS
    assert f"| ... | added | {150 - GATEWAY_ROWS} more: " in summary
    assert "the summary above is complete" in report


def test_the_real_program_with_150_added_gateways(tmp_path: Any) -> None:
    from gatewayctl.diff.compare import compare
    from gatewayctl.diff.sides import missing_head, render_head
    from gatewayctl.engine import render
    from tests.support import render_bench

    bench = render_bench()
    bench.write_stack(tmp_path, 150)
    (stack,) = [p.name.split(".")[1] for p in tmp_path.glob("Pulumi.*.yaml")]
    head = render_head(render.prepare(tmp_path, stack))
    empty = missing_head(stack)
    diff = compare(stack, empty, head)
    report = build_report([diff], base_label="b", command="c")
    assert len(report) <= REPORT_LIMIT
    assert len(diff.gateways) == 150
    summary = report[: report.index("### ")]
    for gateway in diff.gateways:
        assert f"`{gateway.name}`" in summary, gateway.name


def test_operations_are_data() -> None:
    item = Operation(type="t", name="n", gateway=None, op="replace-delete-first", because=())
    assert item.label == "replace (delete-before-replace)"


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
    assert len(types) == 44
    assert sorted(t for t in types if rule_for(t) is None) == []
    assert rule_for("kubernetes:policy/v1:PodDisruptionBudget") is None  # the test can fail


def test_each_force_new_attribute_is_an_input_of_its_type_in_the_providers_schema() -> None:
    from tests.support import shared_or_skip

    for type_, attributes in BRIDGED_FORCE_NEW.items():
        package = type_.split(":", 1)[0]
        schema = json.loads(shared_or_skip(f"schemas/pulumi/{package}.json").read_text())
        inputs = schema["resources"][type_]["inputProperties"]
        assert attributes is None or attributes <= inputs.keys(), type_
    for type_, keys in PROVIDER_FORCE_NEW.items():
        package = type_.rsplit(":", 1)[-1]
        if package == "kubernetes":
            continue  # not among the shared schemas: provider.go DiffConfig
        schema = json.loads(shared_or_skip(f"schemas/pulumi/{package}.json").read_text())
        assert keys <= schema["provider"]["inputProperties"].keys(), type_


def test_a_kubeconfig_context_change_replaces_every_object_of_the_cluster(
    local_plan: dict[str, Any],
) -> None:
    # With a kubeconfig input (KUBECONFIG in the program's environment, or the cluster's
    # kubeconfig secret) on both sides, the provider finds the active cluster in it.
    base = copy.deepcopy(local_plan)
    edit(base, "kind-k8s", "kubeconfig", "/home/operator/.kube/config")
    head = copy.deepcopy(base)
    edit(head, "kind-k8s", "context", "kind-other")
    operations = predict(base, head)
    provider = "urn:pulumi:local::hypershell-gateways::hypershell:cluster:Cluster$pulumi:providers"
    on_cluster = sorted(
        r["name"]
        for r in local_plan["resources"]
        if r["provider"] == f"{provider}:kubernetes::kind-k8s"
    )
    assert len(on_cluster) > 50
    assert [(o.name, o.op, o.because) for o in operations if o.type.startswith("pulumi:")] == [
        ("kind-k8s", "replace", ("context",))
    ]
    moved = sorted(o.name for o in operations if o.because == ("provider",))
    assert moved == on_cluster
    assert {o.op for o in operations} == {"replace"}
    assert (
        f"the stack: the cluster behind `kind-k8s` is replaced (`context` changes): its"
        f" {len(on_cluster)} resource(s) are created on the new cluster and deleted from the old"
        " one."
    ) in warnings(operations)
    assert hazards(base, head, operations) == []  # a new cluster: nothing collides


def test_a_context_change_without_a_kubeconfig_input_is_an_update_in_place(
    local_plan: dict[str, Any],
) -> None:
    """The real engine's answer (tests/e2e/test_e2e_e_predictions.py): without a `kubeconfig`
    input DiffConfig finds no active cluster, so the provider is updated and no object on it
    changes (pulumi-kubernetes provider.go DiffConfig, util.go getActiveClusterFromConfig)."""
    assert "kubeconfig" not in next(
        r["inputs"] for r in local_plan["resources"] if r["name"] == "kind-k8s"
    )
    head = copy.deepcopy(local_plan)
    edit(head, "kind-k8s", "context", "kind-other")
    operations = predict(local_plan, head)
    assert [(o.name, o.op, o.because) for o in operations] == [("kind-k8s", "update", ("context",))]
    assert warnings(operations) == [
        "the stack: `kind-k8s` changes `context` and is updated in place (no `kubeconfig`"
        " input to find the active cluster in, or the same `clusterIdentifier`): nothing is"
        " recreated; if it now names another cluster, the objects in the state are looked for"
        " there."
    ]


def test_a_renamed_cluster_key_is_flagged(tmp_path: Any) -> None:
    from gatewayctl.engine import render
    from tests.builders import copy_project, edited_config

    root = copy_project(tmp_path / "project")
    base = json.loads(render.execute(render.prepare(root, "local")).files["plan.json"])
    with edited_config(root, "local") as config:
        clusters = config["hypershell-gateways:clusters"]
        clusters["kind2"] = clusters.pop("kind")
        secrets = config["hypershell-gateways:clusterSecrets"]
        secrets["kind2"] = secrets.pop("kind")
    head = json.loads(render.execute(render.prepare(root, "local")).files["plan.json"])
    operations = predict(base, head)
    # The gateways move to the new providers of the same configuration: no replacement.
    assert [o for o in operations if o.op != "update"] == []
    assert hazards(base, head, operations) == [
        "the stack: the cluster key `kind` becomes `kind2` on the same cluster (context"
        " `kind-hypershell`): its Cluster component and providers are deleted and created under"
        " the new key, and every resource of the cluster changes provider."
    ]


def test_a_create_of_an_object_the_same_up_deletes_later_is_flagged(
    local_plan: dict[str, Any],
) -> None:
    head = copy.deepcopy(local_plan)
    # A logical name changed, the object kept: created new, the old deleted after.
    (deploy,) = [r for r in head["resources"] if r["name"] == "dev-workload-deploy"]
    deploy["name"] = "dev-workload-deployment"
    # A replacement that keeps its name, created first (a bridged resource).
    edit(head, "dev-database-db", "template", "template1")
    operations = predict(local_plan, head)
    assert [(o.name, o.op) for o in operations] == [("dev-database-db", "replace")]
    assert hazards(local_plan, head, operations) == [
        "gateway `dev`: the `up` would fail: Database `dev-database-db` is created while its own"
        " old object, the same Database (`gw_dev`), still exists (the engine deletes it only"
        " after the creates): the provider refuses it with AlreadyExists. Keep the logical name"
        " (an alias), or delete the old one first.",
        "gateway `dev`: the `up` would fail: Deployment `dev-workload-deployment` is created"
        " while `dev-workload-deploy`, the same Deployment (`openshell-gateway`), still exists"
        " (the engine deletes it only after the creates): the provider refuses it with"
        " AlreadyExists. Keep the logical name (an alias), or delete the old one first.",
    ]


def test_the_report_warns_of_each_hazard_even_without_operations() -> None:
    diff = StackDiff(
        stack="local",
        base_note=None,
        head_note=None,
        gateways=(),
        objects=(
            ObjectChange(
                path="manifests/kind2/_cluster/x.yaml", kind="X", status="added", old="", new="a"
            ),
        ),
        resources=(),
        hazards=("the stack: the cluster key `kind` becomes `kind2` on the same cluster.",),
    )
    report = build_report([diff], base_label="b", command="c")
    assert (
        "**Predicted operations** (by the providers' rules): 0 update in place,"
        " 0 replace (create-before-delete), 0 replace (delete-before-replace)\n\n"
        "> **Warning:** the stack: the cluster key `kind` becomes `kind2` on the same cluster.\n"
    ) in report

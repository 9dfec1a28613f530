"""The offline diff predicts each changed resource's operation by the providers' own rules
(``gatewayctl.diff.operations``), warns of the replacements people must hear about, and its
summary names every gateway within the report's bound."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from gatewayctl.diff.compare import GatewayChange, ObjectChange, StackDiff
from gatewayctl.diff.operations import Operation, predict, predict_one, warnings
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
    assert f"#### changed Deployment: `{path}` (update in place)\n" in report


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
    from gatewayctl import render
    from gatewayctl.diff.compare import compare
    from gatewayctl.diff.sides import missing_head, render_head
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

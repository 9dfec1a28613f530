"""The offline diff predicts each changed plan resource's operation by the providers' own rules
(``gatewayctl.diff.operations``; the rules themselves: tests/test_diff_rules.py), warns of the
replacements people must hear about, and its summary names every gateway within the report's
bound."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from gatewayctl.diff.compare import GatewayChange, ObjectChange, StackDiff
from gatewayctl.diff.hazards import hazards
from gatewayctl.diff.operations import Operation, predict, warnings
from gatewayctl.diff.report import GATEWAY_ROWS, REPORT_LIMIT, build_report
from tests.support import rendered

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
    # A replaced password or CA reaches what is made from its outputs: the certificates it
    # signed are reissued (caCertPem forces them), the Secrets and the role are updated.
    assert [(o.name, o.op, o.because, o.gateway) for o in operations] == [
        ("dev-workload-deploy", "update", ("spec.replicas",), "dev"),
        ("dev-ns", "replace", ("metadata.name",), "dev"),
        ("dev-database-db-credentials", "update", ("stringData",), "dev"),
        ("dev-pki-client-tls", "update", ("stringData",), "dev"),
        ("dev-pki-server-tls", "update", ("stringData",), "dev"),
        # Served by the owner's provider, whose password is unknown in the preview.
        ("dev-database-db-revoke-public", "update", ("provider",), "dev"),
        ("dev-database-db-role", "update", ("password",), "dev"),
        ("dev-database-db-owner", "update", ("password",), "dev"),
        ("dev-database-db-password", "replace", ("length",), "dev"),
        ("dev-pki-client-cert", "replace", ("caCertPem",), "dev"),
        ("dev-pki-server-cert", "replace", ("caCertPem",), "dev"),
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
        "**Predicted operations** (by the providers' rules): 3 update in place,"
        " 3 replace (create-before-delete), 0 replace (delete-before-replace)"
    ) in report  # the CA, the two certificates it signed; the Deployment, the two TLS Secrets
    assert "> **Warning:** gateway `dev`: a new tenant CA (`dev-pki-ca` is replaced)" in report
    assert "Updated in place: Deployment 1, Secret 2." in report
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
    from gatewayctl.resolve import preparation
    from tests.support import render_bench

    bench = render_bench()
    bench.write_stack(tmp_path, 150)
    (stack,) = [p.name.split(".")[1] for p in tmp_path.glob("Pulumi.*.yaml")]
    head = render_head(preparation.prepare(tmp_path, stack))
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
    # The KEK Secrets' deleteBeforeReplace option holds for this replacement too
    # (step_generator.go: the option overrides the provider's choice).
    first = sorted(o.name for o in operations if o.op == "replace-delete-first")
    assert first == ["dev-workload-kek", "offline-workload-kek"]
    assert {o.op for o in operations} == {"replace", "replace-delete-first"}
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
    from gatewayctl.resolve import preparation
    from tests.builders import copy_project, edited_config

    root = copy_project(tmp_path / "project")
    base = json.loads(render.execute(preparation.prepare(root, "local")).files["plan.json"])
    with edited_config(root, "local") as config:
        clusters = config["hypershell-gateways:clusters"]
        clusters["kind2"] = clusters.pop("kind")
        secrets = config["hypershell-gateways:clusterSecrets"]
        secrets["kind2"] = secrets.pop("kind")
    head = json.loads(render.execute(preparation.prepare(root, "local")).files["plan.json"])
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


def test_a_replacement_reaches_every_resource_made_from_its_outputs(
    local_plan: dict[str, Any],
) -> None:
    """Issue 42 item 9: a new server key means a new request, a new certificate and a new
    Secret; the pods roll (their template carries a checksum of it)."""
    head = copy.deepcopy(local_plan)
    edit(head, "dev-pki-server-key", "ecdsaCurve", "P384")
    assert [(o.name, o.op, o.because) for o in predict(local_plan, head)] == [
        ("dev-workload-deploy", "update", ("spec",)),
        ("dev-pki-server-tls", "update", ("stringData",)),
        ("dev-pki-server-csr", "replace", ("privateKeyPem",)),
        ("dev-pki-server-cert", "replace", ("certRequestPem",)),
        ("dev-pki-server-key", "replace", ("ecdsaCurve",)),
    ]


def test_replace_on_request_is_predicted_as_the_engine_replaces(
    local_plan: dict[str, Any],
) -> None:
    """``pulumi up --replace`` of the CA key: nothing in the plan changes, yet the CA, both
    leaf certificates, both TLS Secrets and the pods change."""
    key = ("tls:index/privateKey:PrivateKey", "dev-pki-ca-key")
    assert predict(local_plan, local_plan) == []
    assert [(o.name, o.op, o.because) for o in predict(local_plan, local_plan, [key])] == [
        ("dev-workload-deploy", "update", ("spec",)),
        ("dev-pki-client-tls", "update", ("stringData",)),
        ("dev-pki-server-tls", "update", ("stringData",)),
        ("dev-pki-client-cert", "replace", ("caPrivateKeyPem",)),
        ("dev-pki-server-cert", "replace", ("caPrivateKeyPem",)),
        ("dev-pki-ca-key", "replace", ("--replace",)),
        ("dev-pki-ca", "replace", ("privateKeyPem",)),
    ]


def test_the_kek_rotates_delete_first_as_its_option_says_and_rolls_the_pods(
    local_plan: dict[str, Any],
) -> None:
    """docs/running.md, "Rotating keys": ``--replace`` of the KEK's bytes and its Secret. The
    Secret's ``deleteBeforeReplace`` option (recorded in the plan) makes its replacement delete
    first, so no create meets the Secret it replaces; the pods roll (their hash covers it)."""
    (secret,) = [r for r in local_plan["resources"] if r["name"] == "dev-workload-kek"]
    assert secret["deleteBeforeReplace"] is True
    # No input of the Deployment is made from the Secret: the engine would otherwise replace
    # it too, deleting it first (step_generator.go calculateDependentReplacements).
    (deploy,) = [r for r in local_plan["resources"] if r["name"] == "dev-workload-deploy"]
    made_from = {u.rsplit("::", 1)[-1] for us in deploy["inputDependencies"].values() for u in us}
    assert "dev-workload-kek" not in made_from and "dev-workload-kek-bytes" in made_from
    keys = [
        ("random:index/randomBytes:RandomBytes", "dev-workload-kek-bytes"),
        ("kubernetes:core/v1:Secret", "dev-workload-kek"),
    ]
    operations = predict(local_plan, local_plan, keys)
    assert [(o.name, o.op, o.because) for o in operations] == [
        ("dev-workload-deploy", "update", ("spec",)),
        ("dev-workload-kek", "replace-delete-first", ("--replace",)),
        ("dev-workload-kek-bytes", "replace", ("--replace",)),
    ]
    assert hazards(local_plan, local_plan, operations) == []
    # Without the option the engine would create first, onto the same Secret.
    head = copy.deepcopy(local_plan)
    (unset,) = [r for r in head["resources"] if r["name"] == "dev-workload-kek"]
    del unset["deleteBeforeReplace"]
    created_first = predict(head, head, keys)
    assert ("dev-workload-kek", "replace") in [(o.name, o.op) for o in created_first]
    assert len(hazards(head, head, created_first)) == 1


def test_a_new_password_leaves_its_owner_provider_unknown_and_its_grant_an_update(
    local_plan: dict[str, Any],
) -> None:
    """The owner's provider logs in with the tenant's password: replaced, it is unknown in the
    preview, which then cannot diff the revoke Grant that provider serves and shows it as an
    update (provider_plugin.go Diff: DiffUnavailable). Measured against the real engine in
    tests/e2e/test_e2e_e_predictions.py, "database password rotation"."""
    key = ("random:index/randomPassword:RandomPassword", "dev-database-db-password")
    assert [(o.name, o.op, o.because) for o in predict(local_plan, local_plan, [key])] == [
        ("dev-workload-deploy", "update", ("spec",)),
        ("dev-database-db-credentials", "update", ("stringData",)),
        ("dev-database-db-revoke-public", "update", ("provider",)),
        ("dev-database-db-role", "update", ("password",)),
        ("dev-database-db-owner", "update", ("password",)),
        ("dev-database-db-password", "replace", ("--replace",)),
    ]
    # A provider changed by a declared value is known in the preview: what it serves is diffed.
    head = copy.deepcopy(local_plan)
    edit(head, "dev-database-db-owner", "sslmode", "verify-ca")
    assert [(o.name, o.op) for o in predict(local_plan, head)] == [
        ("dev-database-db-owner", "update")
    ]


def test_postgresql_replacements_reach_nothing(local_plan: dict[str, Any]) -> None:
    """The program reads only a Role's name, an input its replacement keeps: nothing
    downstream changes (``NEW_OUTPUTS_WHEN_REPLACED`` leaves postgresql out)."""
    key = ("postgresql:index/role:Role", "dev-database-db-role")
    assert [(o.name, o.op) for o in predict(local_plan, local_plan, [key])] == [
        ("dev-database-db-role", "replace")
    ]

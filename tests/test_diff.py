"""The offline diff: a throwaway git repository holding this checkout, a base commit, changes.

The repository is a copy of this working tree (program and declarations), so the base side is
rendered by the same code in a subprocess and the head side in process; what differs is only
what each test changes.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from components import tokens
from gatewayctl.diff.compare import (
    GatewayChange,
    ObjectChange,
    StackDiff,
    compare,
    compare_plans,
)
from gatewayctl.diff.report import (
    GATEWAY_ROWS,
    REPORT_LIMIT,
    SECRETS_CHANGED,
    build_report,
    gateway_detail,
)
from gatewayctl.diff.sides import Side, stack_secrets
from gatewayctl.engine import render
from gatewayctl.inputs.secrets import REDACTED
from gatewayctl.inputs.yamlwrite import dump_yaml
from gatewayctl.resolve import preparation
from tests.diff_helpers import (
    BASE_SENTINEL,
    Run,
    clone,
    declare,
    object_blocks,
    run_diff,
    set_password,
    stack_section,
)
from tests.hostile_helpers import unlocated
from tests.support import rendered

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

HEAD_SENTINEL = "head-sentinel-Pa55word-must-never-show"
BULK = 5
"""Gateways added to the aws stack: enough object diffs to overflow the report's bound."""


def kinds(files: dict[str, str], paths: set[str]) -> Counter[str]:
    return Counter(yaml.safe_load(files[p])["kind"] for p in paths)


# --- one run with changes in every stack -----------------------------------------------------


@dataclass(frozen=True)
class Changed:
    repo: Path
    run: Run
    output: str
    base_files: dict[str, str]
    head_files: dict[str, str]


@pytest.fixture(scope="module")
def changed(pristine: Path, tmp_path_factory: pytest.TempPathFactory) -> Changed:
    """local: a gateway added, one removed, replicas changed, password changed; ibm: a host
    changed; aws: many gateways added. Diffed with --all against the base commit."""
    repo = clone(pristine, tmp_path_factory.mktemp("diff") / "changed")
    declare(repo, "local", "team-b")
    (repo / "gateways/local/offline.yaml").unlink()
    # Its database is retained and its KEK goes: the removal needs a record (issue 45 item 2).
    (repo / "deploy/decommissions.yaml").write_text(RECORD, encoding="utf-8")
    declare(repo, "local", "dev", "  replicas: 2")
    set_password(repo, "local", HEAD_SENTINEL)
    declare(
        repo,
        "ibm",
        "team-a",
        "  cluster: roks-us-east\n  exposure:\n    host: team-a.vanity.example.org",
    )
    for index in range(BULK):
        declare(repo, "aws", f"bulk-{index:02d}", "  cluster: rosa-us-east-1")
    output = repo.parent / "report.md"
    run = run_diff(repo, "--all", "--base", "HEAD", "--output", str(output))
    return Changed(
        repo=repo,
        run=run,
        output=output.read_text(encoding="utf-8") if output.exists() else "",
        base_files=render.execute(preparation.prepare(pristine, "local")).files,
        head_files=render.execute(preparation.prepare(repo, "local")).files,
    )


RECORD = "gateways:\n  local/offline:\n    data: discard\n    by: alice\n"


def test_changes_exit_3_and_the_report_is_also_written_to_the_output_file(
    changed: Changed,
) -> None:
    assert changed.run.code == 3, changed.run.err
    assert changed.run.err == ""
    assert changed.output == changed.run.out
    assert changed.run.out.startswith(
        "## Risks\n\n**Decommissions** (1):\n\n- stack `local`: gateway `offline` is removed,"
        " its database retained and its KEK deleted: `deploy/decommissions.yaml` records `data:"
        " discard` (by `alice`): the credentials stored in the database may be lost\n\n"
    )


def test_summary_counts_gateways_and_objects_per_kind(changed: Changed) -> None:
    local = stack_section(changed.run.out, "local")
    assert "**Gateways:** 1 added, 1 changed, 1 removed" in local
    assert re.search(r"\| `team-b` \| added \| cluster `kind`, namespace `openshell-team-b`", local)
    assert re.search(r"\| `offline` \| removed \|", local)
    assert re.search(
        r"\| `dev` \| changed \| 1 resource\(s\): Deployment `dev-workload-deploy`", local
    )

    base, head = changed.base_files, changed.head_files
    manifests = {p for p in set(base) | set(head) if p.startswith("manifests/")}
    added = kinds(head, {p for p in manifests if p not in base})
    removed = kinds(base, {p for p in manifests if p not in head})
    modified = kinds(head, {p for p in manifests if p in base and p in head and base[p] != head[p]})
    assert modified == Counter({"Deployment": 1})
    assert added["Deployment"] == removed["Deployment"] == 1
    totals = (sum(added.values()), sum(modified.values()), sum(removed.values()))
    counts = f"{totals[0]} added, {totals[1]} changed, {totals[2]} removed"
    assert f"**Kubernetes objects:** {counts}" in local
    for kind in sorted(added | removed | modified):
        row = f"| {kind} | {added[kind]} | {modified[kind]} | {removed[kind]} |"
        assert row in local, row
    assert "| Deployment | 1 | 1 | 1 |" in local
    assert "| Namespace | 1 | 0 | 1 |" in local

    ibm = stack_section(changed.run.out, "ibm")
    assert "**Gateways:** 0 added, 1 changed, 0 removed" in ibm
    assert re.search(r"\| `team-a` \| changed \| plan: `address`, `hostname`;", ibm)
    assert "| Route | 0 | 1 | 0 |" in ibm

    aws = stack_section(changed.run.out, "aws")
    assert f"**Gateways:** {BULK} added, 0 changed, 0 removed" in aws


def test_a_changed_plaintext_secret_is_said_to_change_in_its_stack_only(changed: Changed) -> None:
    # local's password changed; ibm and aws hold `secure:` placeholders, unchanged.
    line = f"\n{SECRETS_CHANGED}\n"
    assert line in stack_section(changed.run.out, "local")
    assert changed.run.out.count(line) == 1
    assert changed.run.result is not None
    assert [(d.stack, d.secrets_changed) for d in changed.run.result.diffs] == [
        ("aws", False),
        ("ibm", False),
        ("local", True),
    ]


def test_other_plan_resources_are_listed_by_type_and_name(changed: Changed) -> None:
    report = changed.run.out
    assert "- added 1 `postgresql:index/role:Role`: `team-b-database-db-role`" in report
    assert "- removed 1 `postgresql:index/database:Database`: `offline-database-db`" in report
    # The new host is a SAN of the server certificate: its request's input changed.
    assert "- changed `tls:index/certRequest:CertRequest` `team-a-pki-server-csr`: " in report
    assert "`inputs.dnsNames`" in report


def test_changed_objects_come_as_unified_diffs(changed: Changed) -> None:
    report = changed.run.out
    path = "manifests/kind/openshell-dev/deployment-openshell-gateway.yaml"
    block = report[report.index(f"<details><summary>changed Deployment: {path}") :]
    # The title says what the provider will do (gatewayctl.diff.operations); each object's
    # diff is a collapsible section of its own.
    title = f"<details><summary>changed Deployment: {path} (update in place)</summary>"
    assert block.startswith(f"{title}\n\n```diff\n--- a/{path}\n")
    assert block.index("```\n\n</details>\n") < block.index("<details>", 1)
    assert f"+++ b/{path}\n@@ " in block
    assert "\n-  replicas: 1\n+  replicas: 2\n" in block
    route = "manifests/roks-us-east/openshell-team-a/route-openshell-gateway.yaml"
    assert f"<summary>changed Route: {route} (update in place)</summary>" in report
    assert "+  host: team-a.vanity.example.org" in report
    # The new host is a new SAN: the request is replaced (tls RequiresReplace), and said so.
    ibm = stack_section(report, "ibm")
    assert (
        "| CertRequest `team-a-pki-server-csr` | `team-a` | replace (create-before-delete)"
        " | `dnsNames[4]` |"
    ) in ibm
    # A new request reissues the certificate, whose Secret is updated (issue 42 item 9).
    assert (
        "| LocallySignedCert `team-a-pki-server-cert` | `team-a` | replace (create-before-delete)"
        " | `certRequestPem` |"
    ) in ibm
    assert "Updated in place: ConfigMap 1, Deployment 1, Route 1, Secret 1." in ibm


def test_report_is_bounded_with_every_summary_kept_and_a_cut_note(changed: Changed) -> None:
    report, result = changed.run.out, changed.run.result
    assert result is not None
    assert len(report) <= REPORT_LIMIT
    summaries = report[: report.index("### Object diffs")]
    for stack in ("aws", "ibm", "local"):
        assert f"## Offline diff: stack `{stack}`" in summaries
    total = sum(len(d.objects) for d in result.diffs)
    shown = len(object_blocks(report))
    note = re.search(r"\*\*Note:\*\* (\d+) of (\d+) object diffs omitted", summaries)
    assert note is not None
    assert (int(note[1]), int(note[2])) == (total - shown, total)
    assert total - shown > 0
    # Changed objects are kept first, then removed ones; added objects' YAML is cut first.
    changed_objects = [o for d in result.diffs for o in d.objects if o.status == "changed"]
    removed_objects = [o for d in result.diffs for o in d.objects if o.status == "removed"]
    kept = Counter(object_blocks(report))
    assert kept["changed"] == len(changed_objects) > 0
    assert kept["removed"] == len(removed_objects) > 0
    assert kept["added"] < sum(o.status == "added" for d in result.diffs for o in d.objects)
    # The note's way to see everything: the same command with --no-limit.
    assert "Run `python -m gatewayctl diff --all --base HEAD --no-limit` to see them all." in report


def test_the_cut_note_s_command_shows_every_object_diff(changed: Changed) -> None:
    assert changed.run.result is not None
    total = sum(len(d.objects) for d in changed.run.result.diffs)
    whole = run_diff(changed.repo, "--all", "--base", "HEAD", "--no-limit")
    assert whole.code == 3, whole.err
    assert len(object_blocks(whole.out)) == total
    assert "object diffs omitted" not in whole.out
    assert len(whole.out) > REPORT_LIMIT
    # The bounded report is the whole one with object diffs left out: the same summaries.
    cut = changed.run.out
    assert whole.out[: whole.out.index("### Object diffs")] in cut


@pytest.mark.parametrize("limit", [15_000, 30_000, 45_000])
def test_a_lower_bound_keeps_the_summary_and_counts_what_was_cut(
    changed: Changed, limit: int
) -> None:
    assert changed.run.result is not None
    diffs = changed.run.result.diffs
    report = build_report(diffs, base_label="`HEAD`", command="cmd", limit=limit)
    assert len(report) <= limit
    summary = build_report(diffs, base_label="`HEAD`", command="cmd", limit=10**9)
    head = summary[: summary.index("### Object diffs")]
    assert len(head) < limit
    assert report.startswith(head)
    total = sum(len(d.objects) for d in diffs)
    omitted = total - len(object_blocks(report))
    assert f"**Note:** {omitted} of {total} object diffs omitted" in report
    assert f"under {limit:,} characters" in report


def test_no_secret_and_no_temporary_path_appears(changed: Changed) -> None:
    for text in (changed.run.out, changed.run.err, changed.output):
        assert BASE_SENTINEL not in text
        assert HEAD_SENTINEL not in text
        assert "stacks-diff-" not in text
        assert str(changed.repo) not in text
    # The password changed, but both sides only ever show the redaction marker.
    assert "dbAdminPassword" not in changed.run.out


# --- other outcomes ---------------------------------------------------------------------------


def test_invalid_working_tree_exits_2_with_the_problems(pristine: Path, tmp_path: Path) -> None:
    repo = clone(pristine, tmp_path / "repo")
    declare(repo, "local", "broken", "  replicas: 1\n  colour: blue")
    run = run_diff(repo, "local", "--base", "HEAD")
    assert run.code == 2
    assert run.out == ""
    assert "error: gateways/local/broken.yaml: spec.colour: " in unlocated(run.err)
    assert run.result is None


def test_replace_predicts_a_rotation_and_refuses_an_unknown_name(
    pristine: Path, tmp_path: Path
) -> None:
    """``--replace``: what ``pulumi up --replace`` of a password does, with nothing edited;
    a name no resource has is invalid input (exit 2) and nothing is written."""
    repo = clone(pristine, tmp_path / "repo")
    out = tmp_path / "steps.json"
    run = run_diff(
        repo, "local", "--base", "HEAD", "--replace", "dev-database-db-password", "--json", str(out)
    )
    assert run.code == 3, run.err
    assert "(asked with `--replace`)" in run.out
    changed = {
        (s["name"], s["op"])
        for s in json.loads(out.read_text())["stacks"][0]["steps"]
        if s["op"] != "same"
    }
    assert changed == {
        ("dev-database-db-password", "replace"),
        ("dev-database-db-credentials", "update"),
        ("dev-database-db-role", "update"),
        ("dev-database-db-owner", "update"),
        # Served by the owner's provider, unknown in the preview (gatewayctl.diff.operations).
        ("dev-database-db-revoke-public", "update"),
        ("dev-workload-deploy", "update"),
    }
    missing = tmp_path / "missing.json"
    run = run_diff(repo, "local", "--base", "HEAD", "--replace", "no-such", "--json", str(missing))
    assert run.code == 2
    assert (
        "error: --replace: no-such: no resource of that URN or name in the working tree's"
        " stack local" in run.err
    )
    assert not missing.exists()


# --- the report, from synthetic diffs ----------------------------------------------------------


def synthetic(stack: str, gateways: int, *, body: str = "x: 1\n") -> StackDiff:
    return StackDiff(
        stack=stack,
        base_note=None,
        head_note=None,
        gateways=tuple(
            GatewayChange(name=f"gw-{i:03d}", status="added", cluster="c", namespace="n")
            for i in range(gateways)
        ),
        objects=tuple(
            ObjectChange(
                path=f"manifests/c/ns-{i:03d}/configmap-x.yaml",
                kind="ConfigMap",
                status="added",
                old="",
                new=body,
            )
            for i in range(gateways)
        ),
        resources=(),
    )


def test_gateway_rows_are_capped_and_counted() -> None:
    report = build_report([synthetic("s", GATEWAY_ROWS + 5)], base_label="b", command="c")
    row = "| added | cluster `c`, namespace `n`, address `-` |"
    assert report.count(row) == GATEWAY_ROWS
    # Every gateway is named: the rows, then the rest in one line.
    more = ", ".join(f"`gw-{i:03d}`" for i in range(GATEWAY_ROWS, GATEWAY_ROWS + 5))
    assert f"| ... | added | 5 more: {more} |" in report
    assert f"| ConfigMap | {GATEWAY_ROWS + 5} | 0 | 0 |" in report


def test_fences_outgrow_backticks_in_the_object() -> None:
    report = build_report([synthetic("s", 1, body="note: '````'\n")], base_label="b", command="c")
    assert "\n`````diff\n" in report
    assert report.rstrip().endswith("\n`````\n\n</details>")


def test_summaries_longer_than_the_bound_are_cut_with_a_note() -> None:
    report = build_report([synthetic("s", 40)], base_label="b", command="c", limit=500)
    assert len(report) <= 500
    assert report.endswith("> **Note:** report cut at 500 characters.\n")


KUBECONFIG = "apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    token: kube-token-7\n"


def test_plaintext_secrets_are_scrubbed_even_if_a_side_leaks_them(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.s.yaml").write_text(
        yaml.safe_dump(
            {
                "config": {
                    "hypershell-gateways:clusterSecrets": {
                        "c": {
                            "dbAdminPassword": BASE_SENTINEL,
                            "kubeconfig": KUBECONFIG,
                            "other": {"secure": "v1:ciphertext"},
                        }
                    }
                }
            }
        ),
        encoding="utf-8",
    )
    secrets = stack_secrets(tmp_path, "s")
    assert secrets == {BASE_SENTINEL, KUBECONFIG}  # `secure:` values are ciphertext
    leaked = {
        "kind": "Secret",
        "pw": BASE_SENTINEL,
        "padded": f"  {BASE_SENTINEL}\n",
        "list": ["x", BASE_SENTINEL],
        "config": f"# copied\n{KUBECONFIG}# end\n",
        "near": f"{BASE_SENTINEL}-suffixed",  # not the value: left alone
    }
    leaky = Side(files={"manifests/c/n/secret-x.yaml": dump_yaml(leaked)}, secrets=secrets)
    report = build_report([compare("s", Side(files={}), leaky)], base_label="b", command="c")
    assert f"+pw: {MARK}\n" in report
    assert f"+padded: {MARK}\n" in report
    assert f"+- {MARK}\n" in report
    assert "+config: |\n+  # copied\n+  [secret]\n+  # end\n" in report
    assert f"+near: {BASE_SENTINEL}-suffixed\n" in report
    assert report.count(BASE_SENTINEL) == 1  # only inside the longer value
    assert "kube-token-7" not in report


# --- scrubbing by value: short and common-word secrets ------------------------------------------

MARK = f"'{REDACTED}'"
"""How the render's YAML writes the marker."""
CONFIG_MAP = "manifests/kind/openshell-dev/configmap-openshell-gateway-config.yaml"


def local_render() -> dict[str, str]:
    return rendered("local").files


def with_leak(files: dict[str, str], value: str) -> dict[str, str]:
    """``files`` with one more data key in the dev gateway's ConfigMap: ``leaked: value``."""
    document = yaml.safe_load(files[CONFIG_MAP])
    document["data"]["leaked"] = value
    return {**files, CONFIG_MAP: dump_yaml(document)}


def whole_values(files: dict[str, str]) -> set[str]:
    """Every string value of the manifests and the plan, and every manifest path component."""
    found: set[str] = set()

    def walk(value: object) -> None:
        if isinstance(value, str):
            found.add(value.strip())
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for path, text in files.items():
        walk(json.loads(text) if path == "plan.json" else yaml.safe_load(text))
        if path.startswith("manifests/"):
            found.update(path.split("/"))
    return found


def full_report(base: dict[str, str], head: dict[str, str], secrets: set[str]) -> str:
    """The whole report (no bound: every object diff, so none is left out by its length)."""
    change = compare("local", Side(files=base), Side(files=head, secrets=frozenset(secrets)))
    return build_report([change], base_label="b", command="c", limit=10**9)


def blanked(unscrubbed: str, scrubbed: str, secret: str) -> int:
    """Check that ``scrubbed`` is ``unscrubbed`` but for YAML values equal to ``secret`` turned
    into the marker, line for line; return how many were."""
    before, after = unscrubbed.splitlines(), scrubbed.splitlines()
    assert len(before) == len(after)
    count = 0
    for old, new in zip(before, after, strict=True):
        if old == new:
            continue
        assert new.endswith(MARK), (old, new)
        prefix = new[: -len(MARK)]
        assert old.startswith(prefix), (old, new)
        assert yaml.safe_load(f"x: {old[len(prefix) :]}")["x"].strip() == secret.strip()
        count += 1
    return count


@pytest.mark.parametrize(
    "secret", ["Config", "Map", "open", "shell", "Account", "hyper", "name", "port", "secret", "a"]
)
def test_a_secret_inside_other_words_leaves_the_report_intact(secret: str) -> None:
    files = local_render()
    assert secret not in whole_values(files)  # a fragment of words, never a value of its own
    assert secret in "".join(files.values())

    report = full_report({}, with_leak(files, secret), {secret})

    assert report == full_report({}, with_leak(files, REDACTED), set())
    assert f"+  leaked: {MARK}\n" in report
    assert "| ConfigMap | " in report
    assert "+kind: ConfigMap\n" in report
    assert REDACTED + "Map" not in report


def line_values(report: str) -> set[str]:
    """The string values of the one-line ``key: value`` and ``- value`` lines of the diffs."""
    found = set()
    for match in re.finditer(r"^[-+ ] *(?:- )?(?:[^:\n]+: )?(.+)$", report, re.MULTILINE):
        with contextlib.suppress(yaml.YAMLError):
            value = yaml.safe_load(match[1])
            if isinstance(value, str):
                found.add(value.strip())
    return found


@pytest.mark.parametrize("secret", ["openshell", "true", "v1", "TCP", "gateway", "Opaque"])
def test_a_secret_equal_to_common_values_blanks_those_values_only(secret: str) -> None:
    files = local_render()
    assert secret in whole_values(files)
    unscrubbed = full_report({}, with_leak(files, secret), set())

    scrubbed = full_report({}, with_leak(files, secret), {secret})

    # Each value equal to the password is blanked, and nothing else is touched: names that
    # contain it (openshell-gateway, openshell-dev) stay, and so does every key.
    assert blanked(unscrubbed, scrubbed, secret) >= 2
    assert secret not in line_values(scrubbed)
    assert secret in line_values(unscrubbed)
    assert f"+  leaked: {MARK}\n" in scrubbed
    assert "openshell-gateway" in scrubbed


def test_a_secret_equal_to_a_name_is_blanked_in_paths_and_summaries() -> None:
    # The local cluster is called `kind`: a password `kind` hides it wherever it is a value,
    # and not the `kind:` keys.
    files = local_render()
    report = full_report({}, files, {"kind"})
    assert "manifests/kind/" not in report
    assert f": manifests/{REDACTED}/openshell-dev/" in report  # an object diff's title
    assert "cluster `kind`" not in report
    assert f"cluster `{REDACTED}`" in report
    assert "+kind: ConfigMap\n" in report
    # A gateway called like the password: its row says so no more.
    report = full_report({}, files, {"dev"})
    assert f"| `{REDACTED}` | added | cluster `kind`, namespace `openshell-dev`," in report
    assert "| `dev` |" not in report


WORDS = sorted(
    {w for text in local_render().values() for w in re.findall(r"[A-Za-z0-9]+", text)}
    | {"Config", "Pa55", "[", "'", '"', "\\", ": x", "é", "#"}
)


@functools.cache
def local_values() -> set[str]:
    return whole_values(local_render())


@functools.cache
def redacted_leak_report() -> str:
    return full_report({}, with_leak(local_render(), REDACTED), set())


@given(
    secret=st.sampled_from(WORDS)
    | st.text(st.characters(exclude_categories=("Cs", "Cc")), min_size=1, max_size=10)
)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_scrubbing_never_touches_what_is_not_the_secret(secret: str) -> None:
    assume(secret.strip() and secret.strip() not in local_values())
    scrubbed = full_report({}, with_leak(local_render(), secret), {secret})
    assert scrubbed == redacted_leak_report()


def test_gateways_are_attributed_through_the_parent_chain() -> None:
    stack = "urn:pulumi:s::hypershell-gateways::pulumi:pulumi:Stack"
    gateway = f"{stack}${tokens.GATEWAY}::a"
    workload = f"urn:pulumi:s::hypershell-gateways::{tokens.GATEWAY}${tokens.WORKLOAD}::a-workload"

    def plan(replicas: int) -> dict[str, object]:
        return {
            "gateways": [{"name": "a", "cluster": "c"}],
            "resources": [
                {"type": tokens.GATEWAY, "name": "a", "parent": stack, "inputs": {}},
                {
                    "type": tokens.WORKLOAD,
                    "name": "a-workload",
                    "parent": gateway,
                    "inputs": {},
                },
                {
                    "type": "kubernetes:apps/v1:Deployment",
                    "name": "a-workload-deploy",
                    "parent": workload,
                    "inputs": {"spec": {"replicas": replicas}},
                },
            ],
        }

    gateways, resources = compare_plans(plan(1), plan(2))
    assert gateways == [
        GatewayChange(name="a", status="changed", resources=(("Deployment", "a-workload-deploy"),))
    ]
    assert gateway_detail(gateways[0]) == "1 resource(s): Deployment `a-workload-deploy`"
    assert resources == []  # a Kubernetes object's inputs are its manifest, diffed in full
    assert compare_plans(plan(1), plan(1)) == ([], [])

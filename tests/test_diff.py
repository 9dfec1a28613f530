"""The offline diff: a throwaway git repository holding this checkout, a base commit, changes.

The repository is a copy of this working tree (program and declarations), so the base side is
rendered by the same code in a subprocess and the head side in process; what differs is only
what each test changes.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import json
import re
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from components import tokens
from gatewayctl.cli import main as cli
from gatewayctl.diff import command as diff
from gatewayctl.diff import risks
from gatewayctl.diff.compare import (
    GatewayChange,
    ObjectChange,
    StackDiff,
    compare,
    compare_plans,
    secrets_changed,
)
from gatewayctl.diff.report import (
    GATEWAY_ROWS,
    REPORT_LIMIT,
    SECRETS_CHANGED,
    build_report,
    gateway_detail,
)
from gatewayctl.diff.sides import Side, _base_package, stack_secrets, stack_side
from gatewayctl.engine import render
from gatewayctl.inputs.secrets import REDACTED
from tests.builders import NOT_COPIED, git
from tests.hostile_helpers import unlocated
from tests.support import ROOT, rendered

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

BASE_SENTINEL = "base-sentinel-Pa55word-must-never-show"
HEAD_SENTINEL = "head-sentinel-Pa55word-must-never-show"
GATEWAY = """\
apiVersion: hypershell.redhat.io/v1alpha1
kind: Gateway
metadata:
  name: {name}
spec:
{spec}
"""
BULK = 5
"""Gateways added to the aws stack: enough object diffs to overflow the report's bound."""


def set_password(project: Path, stack: str, password: str) -> None:
    """Plaintext ``dbAdminPassword`` for every cluster of the stack (the render redacts it)."""
    path = project / f"Pulumi.{stack}.yaml"
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    config = document["config"]
    secrets = config.setdefault("hypershell-gateways:clusterSecrets", {})
    for cluster in config["hypershell-gateways:clusters"]:
        secrets.setdefault(cluster, {})["dbAdminPassword"] = password
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")


def declare(project: Path, stack: str, name: str, spec: str = "  replicas: 1") -> None:
    path = project / "gateways" / stack / f"{name}.yaml"
    path.write_text(GATEWAY.format(name=name, spec=spec), encoding="utf-8")


def pristine_repo(directory: Path) -> Path:
    """A git repository whose one commit is this working tree, local password a sentinel."""
    repo = directory / "pristine"
    shutil.copytree(ROOT, repo, ignore=NOT_COPIED)
    set_password(repo, "local", BASE_SENTINEL)
    git(repo, "init", "--quiet", "--initial-branch=main")
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "--message", "base")
    return repo


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return pristine_repo(tmp_path_factory.mktemp("diff"))


def clone(pristine: Path, where: Path) -> Path:
    shutil.copytree(pristine, where, symlinks=True)
    return where


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str
    result: diff.Result | None


def run_diff(repo: Path, *args: str) -> Run:
    """``python -m gatewayctl --root REPO diff ARGS`` in process; keeps the diff's result."""
    results: list[diff.Result] = []
    original = diff.run

    def spy(*a: object, **k: object) -> diff.Result:
        result = original(*a, **k)  # type: ignore[arg-type]
        results.append(result)
        return result

    out, err = io.StringIO(), io.StringIO()
    with (
        pytest.MonkeyPatch.context() as patch,
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        patch.setattr(diff, "run", spy)
        code = cli.main(["--root", str(repo), "diff", *args])
    return Run(code, out.getvalue(), err.getvalue(), results[0] if results else None)


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
        base_files=render.execute(render.prepare(pristine, "local")).files,
        head_files=render.execute(render.prepare(repo, "local")).files,
    )


def object_blocks(report: str) -> list[str]:
    """The status of each object diff the report holds (one collapsible section each)."""
    return re.findall(r"^<details><summary>(added|changed|removed) ", report, re.MULTILINE)


def stack_section(report: str, stack: str) -> str:
    start = report.index(f"## Offline diff: stack `{stack}`")
    end = report.find("\n## ", start + 1)
    return report[start : end if end != -1 else len(report)]


def test_changes_exit_3_and_the_report_is_also_written_to_the_output_file(
    changed: Changed,
) -> None:
    assert changed.run.code == 3, changed.run.err
    assert changed.run.err == ""
    assert changed.output == changed.run.out


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
    assert "Updated in place: ConfigMap 1, Deployment 1, Route 1." in ibm


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


def test_no_change_exits_0_and_cleans_up(
    pristine: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = clone(pristine, tmp_path / "repo")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    run = run_diff(repo, "local", "--base", "main")
    assert run.code == 0, run.err
    commit = git(repo, "rev-parse", "HEAD")
    assert run.out == (
        "## Offline diff: stack `local`\n\n"
        f"Base `main` (`{commit[:12]}`) -> this working tree.\n\n"
        "**No changes**: the rendered manifests and plan are the same.\n\n"
    )
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert list(scratch.iterdir()) == []
    assert git(repo, "status", "--porcelain") == ""


ROTATED = "rotated-sentinel-Pa55word-must-never-show"


def test_a_changed_plaintext_secret_alone_exits_3_without_showing_it(
    pristine: Path, tmp_path: Path
) -> None:
    repo = clone(pristine, tmp_path / "repo")
    set_password(repo, "local", ROTATED)
    run = run_diff(repo, "local", "--base", "main")
    assert run.code == 3, run.err
    commit = git(repo, "rev-parse", "HEAD")
    assert run.out == (
        # The edit is the working tree's own: the report names the file the PR would lack.
        "## Risks\n\n**Not committed** (1):\n\n- `Pulumi.local.yaml` (modified): this report"
        " includes it as the working tree has it; the pull request does not until it is"
        f" committed\n\n{risks.VOCABULARY}\n\n"
        "## Offline diff: stack `local`\n\n"
        f"Base `main` (`{commit[:12]}`) -> this working tree.\n\n"
        "clusterSecrets values changed (not shown)\n\n"
        "The rendered manifests and plan are the same (the render redacts secrets).\n\n"
    )
    assert run.err == ""
    assert run.result is not None and run.result.changed
    assert run_diff(repo, "local", "--base", "main").out == run.out  # deterministic


def test_a_swapped_ciphertext_is_a_secret_change_not_shown(pristine: Path, tmp_path: Path) -> None:
    # ibm's password is a `secure:` value: the render cannot decrypt it (a placeholder either
    # way), so only the ciphertext tells that the pull request changed it.
    repo = clone(pristine, tmp_path / "repo")
    ibm = repo / "Pulumi.ibm.yaml"
    text = ibm.read_text(encoding="utf-8")
    ciphertext = re.search(r"secure: (v1:\S+)", text)
    assert ciphertext is not None
    swapped = "v1:c3dhcHBlZC1jaXBoZXJ0ZXh0LWZyb20tdGhlLXB1bGwtcmVxdWVzdA=="
    ibm.write_text(text.replace(ciphertext[1], swapped), encoding="utf-8")

    run = run_diff(repo, "--all", "--base", "main")

    assert run.code == 3, run.err
    commit = git(repo, "rev-parse", "HEAD")
    assert stack_section(run.out, "ibm") == (
        "## Offline diff: stack `ibm`\n\n"
        f"Base `main` (`{commit[:12]}`) -> this working tree.\n\n"
        "clusterSecrets values changed (not shown)\n\n"
        "The rendered manifests and plan are the same (the render redacts secrets).\n"
    )
    assert run.out.count("**No changes**") == 2  # aws and local
    assert run.out.count(SECRETS_CHANGED) == 1
    for value in (ciphertext[1], swapped, "c3dhcHBlZC1jaXBoZXJ0ZXh0"):
        assert value not in run.out
    assert run.err == ""


def test_a_plaintext_secret_moved_to_secure_is_a_change(pristine: Path, tmp_path: Path) -> None:
    repo = clone(pristine, tmp_path / "repo")
    local = repo / "Pulumi.local.yaml"
    document = yaml.safe_load(local.read_text(encoding="utf-8"))
    document["config"]["hypershell-gateways:clusterSecrets"]["kind"]["dbAdminPassword"] = {
        "secure": "v1:Y2lwaGVydGV4dA=="
    }
    local.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    run = run_diff(repo, "local", "--base", "main")
    assert run.code == 3, run.err
    assert f"\n{SECRETS_CHANGED}\n" in run.out
    assert BASE_SENTINEL not in run.out
    assert "Y2lwaGVydGV4dA" not in run.out


def test_a_dependency_update_is_noted_above_the_summaries(pristine: Path, tmp_path: Path) -> None:
    repo = clone(pristine, tmp_path / "repo")
    lock = repo / "uv.lock"
    lock.write_text(lock.read_text(encoding="utf-8") + "# bumped\n", encoding="utf-8")

    run = run_diff(repo, "local", "--base", "main")

    assert run.code == 0, run.err  # the render itself did not change
    assert run.out.startswith(
        "> **Note:** `uv.lock` at `main` differs from this working tree's. Both sides were"
        " rendered with this tree's dependencies, so what the dependency update itself changes"
        " in the render is not shown here.\n\n## Offline diff: stack `local`\n\n"
    )
    assert "**No changes**" in run.out


def test_invalid_working_tree_exits_2_with_the_problems(pristine: Path, tmp_path: Path) -> None:
    repo = clone(pristine, tmp_path / "repo")
    declare(repo, "local", "broken", "  replicas: 1\n  colour: blue")
    run = run_diff(repo, "local", "--base", "HEAD")
    assert run.code == 2
    assert run.out == ""
    assert "error: gateways/local/broken.yaml: spec.colour: " in unlocated(run.err)
    assert run.result is None


def test_unknown_base_ref_exits_2(pristine: Path, tmp_path: Path) -> None:
    repo = clone(pristine, tmp_path / "repo")
    run = run_diff(repo, "local", "--base", "no-such-branch")
    assert run.code == 2
    assert "error: --base: 'no-such-branch' names no commit in this repository" in run.err
    assert run.out == ""


def other_kind_cluster(text: str) -> str:
    """The local stack's config on another kind cluster, database and Keycloak realm: a copy
    of its gateways on the same ones would take their namespaces, databases and clients
    (gatewayctl.resolve.inventory)."""
    for old, new in (
        ("kind-hypershell", "kind-extra"),
        ("gw.localhost", "extra.localhost"),
        ("adminPort: 15432", "adminPort: 15433"),
        ("realm: hypershell", "realm: extra"),
    ):
        assert old in text
        text = text.replace(old, new)
    return text


def test_base_without_the_stack_is_an_empty_side(pristine: Path, tmp_path: Path) -> None:
    repo = clone(pristine, tmp_path / "repo")
    text = (repo / "Pulumi.local.yaml").read_text(encoding="utf-8")
    text = text.replace("gateways/local", "gateways/extra")  # not shared
    text = other_kind_cluster(text)
    (repo / "Pulumi.extra.yaml").write_text(text, encoding="utf-8")
    shutil.copytree(repo / "gateways/local", repo / "gateways/extra")
    first = run_diff(repo, "extra", "--base", "HEAD")
    assert first.code == 3, first.err
    assert "The base has no stack `extra`; its side is treated as empty." in first.out
    gateways = len(render.prepare(repo, "extra").loaded.gateways)
    assert f"**Gateways:** {gateways} added, 0 changed, 0 removed" in first.out
    assert "changed" not in object_blocks(first.out)
    assert "added" in object_blocks(first.out)
    assert BASE_SENTINEL not in first.out
    # The head has a plaintext password, the empty base none: not a secret change.
    assert SECRETS_CHANGED not in first.out
    second = run_diff(repo, "extra", "--base", "HEAD")
    assert second.out == first.out  # deterministic


def test_base_without_any_render_is_an_empty_side(pristine: Path, tmp_path: Path) -> None:
    repo = clone(pristine, tmp_path / "repo")
    empty_tree = git(repo, "hash-object", "-t", "tree", "/dev/null")
    commit = git(repo, "commit-tree", empty_tree, "-m", "before the project")
    run = run_diff(repo, "local", "--base", commit)
    assert run.code == 3, run.err
    assert (
        "The base has no offline render (`python -m gatewayctl`); its side is treated as empty."
        in run.out
    )
    assert "0 changed, 0 removed" in run.out


def test_base_render_failure_exits_1(pristine: Path, tmp_path: Path) -> None:
    repo = clone(pristine, tmp_path / "repo")
    # The CLI itself: every command imports it first (the render's modules are imported only
    # when a stack renders, and an error there is the CLI's one-line report).
    module = repo / "gatewayctl" / "cli" / "main.py"
    good = module.read_text(encoding="utf-8")
    module.write_text('raise RuntimeError("broken base")\n', encoding="utf-8")
    git(repo, "commit", "--quiet", "--all", "--message", "broken render")
    module.write_text(good, encoding="utf-8")
    run = run_diff(repo, "local", "--base", "HEAD")
    assert run.code == 1
    assert run.out == ""
    assert "error: base render of local exited 1: RuntimeError: broken base" in run.err


def test_not_a_git_repository_exits_1(tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(ROOT, project, ignore=NOT_COPIED)
    run = run_diff(project, "local", "--base", "HEAD")
    assert run.code == 1
    assert "error: git rev-parse failed" in run.err


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
    leaky = Side(files={"manifests/c/n/secret-x.yaml": render.dump_yaml(leaked)}, secrets=secrets)
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
    return {**files, CONFIG_MAP: render.dump_yaml(document)}


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


def test_an_invalid_base_stack_is_an_empty_side_and_the_others_still_diff(
    pristine: Path, tmp_path: Path
) -> None:
    repo = clone(pristine, tmp_path / "repo")
    for stack in ("aws", "ibm"):
        (repo / f"Pulumi.{stack}.yaml").unlink()
    text = (repo / "Pulumi.local.yaml").read_text(encoding="utf-8")
    text = other_kind_cluster(text.replace("gateways/local", "gateways/extra"))
    (repo / "Pulumi.extra.yaml").write_text(text, encoding="utf-8")
    shutil.copytree(repo / "gateways/local", repo / "gateways/extra")
    declare(repo, "local", "broken", "  colour: blue")
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "--message", "base with an invalid declaration")
    (repo / "gateways/local/broken.yaml").unlink()
    run = run_diff(repo, "--all", "--base", "HEAD")
    assert run.code == 3, run.err
    note = "The base has invalid input for stack `local` (its render exits 2)"
    assert f"{note}; its side is treated as empty." in stack_section(run.out, "local")
    assert "**No changes**" in stack_section(run.out, "extra")
    assert "colour" not in run.out


def secrets_side(
    root: Path, secrets: object, *, note: str | None = None, extra: dict[str, object] | None = None
) -> Side:
    """A rendered side (same files on both sides) whose stack ``s`` has these clusterSecrets
    (and ``extra`` config)."""
    root.mkdir(parents=True, exist_ok=True)
    config = {"config": {"hypershell-gateways:clusterSecrets": secrets, **(extra or {})}}
    (root / "Pulumi.s.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return stack_side(root, "s", {} if note else {"plan.json": "{}"}, note)


SECURE = {"secure": "v1:cGxhY2Vob2xkZXI="}


@pytest.mark.parametrize(
    ("base", "head", "changed"),
    [
        ({"c": {"pw": "same-password"}}, {"c": {"pw": "same-password"}}, False),
        ({"c": {"pw": "old-password"}}, {"c": {"pw": "new-password"}}, True),
        # Too short to be scrubbed, still compared (by digest).
        ({"c": {"pw": "abc"}}, {"c": {"pw": "xyz"}}, True),
        # Swapped between clusters: the same set of values, changed nonetheless.
        (
            {"a": {"pw": "password-1"}, "b": {"pw": "password-2"}},
            {"a": {"pw": "password-2"}, "b": {"pw": "password-1"}},
            True,
        ),
        # `secure:` values compare by their ciphertext: the same one is the same value ...
        ({"c": {"pw": SECURE}}, {"c": {"pw": SECURE}}, False),
        # ... another one may or may not be (a fresh nonce each time): a change, not shown.
        ({"c": {"pw": {"secure": "v1:b2xk"}}}, {"c": {"pw": {"secure": "v1:bmV3"}}}, True),
        # A plaintext value encrypted, or the reverse: changed too.
        ({"c": {"pw": "old-password"}}, {"c": {"pw": SECURE}}, True),
        ({"c": {"pw": SECURE}}, {"c": {"pw": "new-password"}}, True),
        (
            {"a": {"pw": "same-password"}, "b": {"pw": "old-password"}},
            {"a": {"pw": "same-password"}, "b": {"pw": SECURE}},
            True,
        ),
        # The whole object one `secure:` value on one side, values on the other.
        (SECURE, {"c": {"pw": "new-password"}}, True),
        ({"c": {"pw": SECURE}}, SECURE, True),
        (SECURE, SECURE, False),
        # A value on one side only is a key added or dropped: not compared.
        (
            {"c": {"pw": "same-password"}},
            {"c": {"pw": "same-password", "kubeconfig": "apiVersion: v1"}},
            False,
        ),
        ({"c": {"pw": "same-password"}}, {"c": {"pw": "same-password", "x": SECURE}}, False),
    ],
)
def test_secret_changes_compare_only_what_both_sides_have(
    tmp_path: Path, base: object, head: object, changed: bool
) -> None:
    old, new = secrets_side(tmp_path / "base", base), secrets_side(tmp_path / "head", head)
    assert secrets_changed(old, new) is changed
    assert secrets_changed(new, old) is changed  # either direction
    stack = compare("s", old, new)
    assert (stack.secrets_changed, stack.changed) == (changed, changed)
    report = build_report([stack], base_label="b", command="c")
    assert (SECRETS_CHANGED in report) is changed
    for value in ("old-password", "new-password", "password-1", "abc", "xyz", "b2xk", "bmV3"):
        assert value not in report
        assert hashlib.sha256(repr(value).encode()).hexdigest() not in report


@pytest.mark.parametrize(
    ("old", "new", "changed"),
    [
        ({"secure": "v1:b2xk"}, {"secure": "v1:bmV3"}, True),
        ({"secure": "v1:b2xk"}, {"secure": "v1:b2xk"}, False),
        # A plaintext value of another key is in the render itself, not a secret.
        ("db-admin", {"secure": "v1:b2xk"}, False),
    ],
)
def test_a_secure_value_outside_cluster_secrets_is_compared_by_ciphertext(
    tmp_path: Path, old: object, new: object, changed: bool
) -> None:
    # A value of another config key set with `pulumi config set --secret --path`: the render
    # only sees the placeholder, whatever it holds.
    secrets = {"c": {"pw": SECURE}}

    def side(where: str, value: object) -> Side:
        clusters = {"c": {"database": {"adminUser": value}}}
        extra: dict[str, object] = {"hypershell-gateways:clusters": clusters}
        return secrets_side(tmp_path / where, secrets, extra=extra)

    assert secrets_changed(side("base", old), side("head", new)) is changed


def test_an_empty_side_is_no_secret_change(tmp_path: Path) -> None:
    base = secrets_side(tmp_path / "base", {"c": {"pw": "old-password"}}, note="has no stack `s`")
    head = secrets_side(tmp_path / "head", {"c": {"pw": "new-password"}})
    assert base.secrets and base.secret_digests  # read, but not compared
    assert not secrets_changed(base, head)
    assert not secrets_changed(head, Side(files={}, note="has no stack `s`"))
    assert not secrets_changed(Side(files={}), head)  # built without any secrets


def test_sides_built_without_digests_compare_their_scrub_sets() -> None:
    files = {"plan.json": "{}"}

    def side(*secrets: str) -> Side:
        return Side(files=files, secrets=frozenset(secrets))

    assert secrets_changed(side("old-password"), side("new-password"))
    assert not secrets_changed(side("same-password"), side("same-password"))
    assert not secrets_changed(side(), side("new-password"))
    assert not secrets_changed(side("old-password"), side())


@pytest.mark.parametrize(
    ("present", "expected"),
    [(["gatewayctl", "stacks"], "gatewayctl"), (["stacks"], "stacks"), ([], None)],
    ids=["current", "before-the-rename", "no-tool"],
)
def test_the_base_is_rendered_by_its_own_package(
    tmp_path: Path, present: list[str], expected: str | None
) -> None:
    # A pull request's base may predate the move of the tool from stacks/ to gatewayctl/.
    for package in present:
        (tmp_path / package).mkdir()
        (tmp_path / package / "__main__.py").write_text("")
    assert _base_package(tmp_path) == expected

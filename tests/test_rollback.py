"""``gatewayctl rollback`` (gatewayctl.deploy.rollback): the git change that returns gateways to
a commit's declaration and release, as a branch or a patch, made without touching the
checkout; and what it refuses, gateway by gateway, with why. On a git repository holding the
committed aws stack."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from gatewayctl.inputs.stackfile import stack_file
from tests.builders import (
    cluster,
    copy_releases,
    copy_stack,
    secrets_for,
    write_gateway,
    write_text,
)
from tests.diff_helpers import clone, run_diff
from tests.hostile_helpers import run_cli
from tests.support import ROOT

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
pytestmark = needs_git
OLD, NEW = "openshell-0.0.109", "openshell-0.0.110"


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def commit(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def bind(repo: Path, release: str) -> None:
    path = repo / stack_file("aws")
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace(f"release: {OLD}", f"release: {release}"), encoding="utf-8")


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, str]:
    """The aws stack on 0.0.109 (commit ``base``), then promoted to 0.0.110 with search's KEK
    rotated (HEAD)."""
    root = copy_stack("aws", tmp_path / "repo")
    (root / "deploy").mkdir()
    plan = yaml.safe_load((ROOT / "deploy" / "rollout.yaml").read_text(encoding="utf-8"))
    aws = {"stacks": {"aws": plan["stacks"]["aws"]}}
    (root / "deploy" / "rollout.yaml").write_text(yaml.safe_dump(aws), encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    base = commit(root, "base")
    bind(root, NEW)
    edit(root / "gateways/aws/search.yaml", "spec:\n", "spec:\n  rotation:\n    kek: 2\n")
    commit(root, "promote")
    return root, base


def state(repo: Path) -> tuple[str, str, str, str]:
    """What a rollback must never change: HEAD, the branch, the index and working tree."""
    return (
        git(repo, "rev-parse", "HEAD"),
        git(repo, "symbolic-ref", "HEAD"),
        git(repo, "status", "--porcelain", "--untracked-files=all"),
        git(repo, "ls-files", "--stage"),
    )


def rollback(repo: Path, *args: str) -> tuple[int, str, str]:
    out = run_cli("--root", str(repo), "rollback", "aws", *args)
    return out.code, out.out, out.err


def test_a_whole_stack_moves_its_bindings_back_on_a_new_branch(repo: tuple[Path, str]) -> None:
    root, base = repo
    before = state(root)
    code, out, err = rollback(root, "--to", base, "--branch", "rollback-aws")
    assert (code, err) == (0, "")
    short, head = base[:12], before[0][:12]
    made = git(root, "rev-parse", "rollback-aws").strip()
    assert out.splitlines() == [
        f"rollback of aws to {short} (from HEAD {head}):",
        f"  hypershell-gateways:clusters.rosa-us-east-1.release: {NEW} → {OLD} (moved back)",
        f"  hypershell-gateways:clusters.rosa-us-west-2.release: {NEW} → {OLD} (moved back)",
        f"  audit: gateways/aws/audit.yaml as at {short}; release {NEW} → {OLD}"
        " [gateway, supervisor, sandbox]",
        f"  ml-platform: gateways/aws/ml-platform.yaml as at {short}; release {NEW} → {OLD}"
        " [supervisor, sandbox]",
        f"  payments: gateways/aws/payments.yaml as at {short}; release {NEW} → {OLD}"
        " [gateway, supervisor, sandbox]",
        f"  search: gateways/aws/search.yaml as at {short}; release {NEW} → {OLD}"
        " [gateway, supervisor, sandbox]",
        "  note: search: spec.rotation keeps today's counters: a rotation cannot be rolled back"
        " (a lower counter would rotate the secret again, not bring the old one back)",
        f"branch rollback-aws: commit {made[:12]}; review it in a pull request (gatewayctl diff"
        " aws --base <its base> on the branch)",
    ]
    assert state(root) == before  # the checkout, its index and branch untouched
    assert git(root, "rev-parse", "rollback-aws^").strip() == before[0].strip()
    assert git(root, "diff", "--name-only", "HEAD", "rollback-aws").split() == [
        "Pulumi.aws.yaml",
        "gateways/aws/search.yaml",
    ]
    # The stack file as at the base (promote's editing: only the values), search's rotation kept.
    assert git(root, "show", f"rollback-aws:{stack_file('aws')}") == git(
        root, "show", f"{base}:{stack_file('aws')}"
    )
    restored = git(root, "show", "rollback-aws:gateways/aws/search.yaml")
    assert restored == git(root, "show", f"{base}:gateways/aws/search.yaml").replace(
        "spec:\n", "spec:\n  rotation:  # as now: a rotation cannot be rolled back\n    kek: 2\n", 1
    )
    subject = git(root, "log", "-1", "--format=%s", "rollback-aws").strip()
    assert subject == f"Roll back audit, ml-platform, payments, search of aws to {short}"


def test_one_gateway_pins_its_old_release_and_a_patch_applies(
    repo: tuple[Path, str], tmp_path: Path
) -> None:
    root, base = repo
    before = state(root)
    patch = tmp_path / "rollback.patch"
    code, out, _ = rollback(root, "--to", base, "--gateway", "payments", "--patch", str(patch))
    assert code == 0
    assert out.splitlines()[1:] == [
        f"  payments: gateways/aws/payments.yaml as at {base[:12]}; release {NEW} → {OLD}"
        " (pinned: spec.release) [gateway, supervisor, sandbox]",
        f"patch {patch}: apply it with `git am {patch}`",
    ]
    assert state(root) == before
    assert git(root, "branch", "--list").split() == ["*", "main"]  # no branch made
    text = patch.read_text()
    assert text.startswith("From ") and "+  release: openshell-0.0.109\n" in text
    git(root, "apply", "--check", str(patch))
    # Written again over its own patch; never over a file it did not write.
    assert rollback(root, "--to", base, "--gateway", "payments", "--patch", str(patch))[0] == 0
    other = tmp_path / "notes.txt"
    other.write_text("mine")
    code, _, err = rollback(root, "--to", base, "--gateway", "payments", "--patch", str(other))
    assert code == 2 and "is not a patch this tool wrote" in err
    assert other.read_text() == "mine"


def test_a_wave_and_json(repo: tuple[Path, str]) -> None:
    root, base = repo
    # deploy/rollout.yaml: audit (the canary), then us-east-1's other gateway, payments.
    code, out, err = rollback(root, "--to", base, "--wave", "2", "-o", "json")
    assert code == 0, err
    document = json.loads(out)
    assert document["gateways"] == [
        {
            "name": "payments",
            "path": "gateways/aws/payments.yaml",
            "before": NEW,
            "after": OLD,
            "pinned": True,
            "images": ["gateway", "supervisor", "sandbox"],
            "rotationKept": False,
            "restored": True,
        }
    ]
    assert document["files"] == ["gateways/aws/payments.yaml"]
    assert (document["branch"], document["patch"], document["commit"]) == (None, None, None)
    assert document["bindings"] == []
    code, _, err = rollback(root, "--to", base, "--wave", "9")
    assert (code, err) == (2, "error: --wave 9: the gateway waves of aws are 1, 2, 3, 4\n")


def test_nothing_to_roll_back_writes_nothing(repo: tuple[Path, str]) -> None:
    root, _ = repo
    code, out, _ = rollback(root, "--to", "HEAD", "--branch", "same")
    head = git(root, "rev-parse", "HEAD").strip()
    assert (code, out) == (0, f"aws: already as at {head[:12]}; nothing to roll back\n")
    assert "same" not in git(root, "branch", "--list")


def test_an_existing_branch_an_unknown_commit_and_gateway_are_refused(
    repo: tuple[Path, str],
) -> None:
    root, base = repo
    git(root, "branch", "taken")
    assert rollback(root, "--to", base, "--branch", "taken")[1:] == (
        "",
        "error: --branch 'taken' exists already: choose another name\n",
    )
    assert rollback(root, "--to", "nope")[2] == (
        "error: --to 'nope' names no commit of this repository\n"
    )
    code, _, err = rollback(root, "--to", base, "--gateway", "ghost")
    assert code == 2 and err.startswith("error: --gateway ghost: not a gateway of aws")


def refused(root: Path, base: str, name: str) -> str:
    code, out, err = rollback(root, "--to", base, "--gateway", name, "--branch", "b")
    assert (code, out) == (2, "")
    assert "b" not in git(root, "branch", "--list").split()
    return err


def test_a_gateway_removed_with_delete_is_refused(repo: tuple[Path, str]) -> None:
    root, base = repo
    (root / "gateways/aws/audit.yaml").unlink()  # deletionPolicy: Delete
    removal = commit(root, "remove audit")
    err = refused(root, base, "audit")
    assert err.splitlines()[0] == (
        f"error: gateways/aws/audit.yaml: gateway audit cannot be rolled back: was removed since"
        f" {base[:12]} with deletionPolicy Delete: its database was dropped; restoring the"
        " declaration would not restore the data"
    )
    # Added again since: the database dropped in between is gone all the same.
    git(root, "checkout", "-q", base, "--", "gateways/aws/audit.yaml")
    commit(root, "audit again")
    err = refused(root, base, "audit")
    assert (
        f"gateway audit cannot be rolled back: was removed at {removal[:12]} with deletionPolicy"
        " Delete: its database was dropped then" in err
    )


def test_a_removal_with_delete_is_found_under_the_file_name_then(repo: tuple[Path, str]) -> None:
    """Declared again since under another name (``.yml``): the removal of the ``.yaml`` file,
    which dropped the database, still refuses."""
    root, base = repo
    text = (root / "gateways/aws/audit.yaml").read_text()
    (root / "gateways/aws/audit.yaml").unlink()  # deletionPolicy: Delete
    removal = commit(root, "remove audit")
    (root / "gateways/aws/audit.yml").write_text(text)
    commit(root, "audit again, as .yml")
    err = refused(root, base, "audit")
    assert err.splitlines()[0] == (
        f"error: gateways/aws/audit.yml: gateway audit cannot be rolled back: was removed at"
        f" {removal[:12]} with deletionPolicy Delete: its database was dropped then; its data at"
        " the commit cannot come back"
    )


def test_a_gateway_that_did_not_exist_then_is_refused(repo: tuple[Path, str]) -> None:
    root, base = repo
    shutil.copy(root / "gateways/aws/search.yaml", root / "gateways/aws/later.yaml")
    edit(root / "gateways/aws/later.yaml", "name: search", "name: later")
    commit(root, "add later")
    err = refused(root, base, "later")
    assert f"gateway later cannot be rolled back: did not exist at {base[:12]}" in err
    code, _, err = rollback(root, "--to", base)  # the whole stack includes it
    assert code == 2 and "gateway later cannot be rolled back" in err


def test_going_back_to_kek_after_its_secret_was_deleted_is_refused(
    repo: tuple[Path, str],
) -> None:
    root, base = repo
    path = root / "gateways/aws/ml-platform.yaml"
    assert "credentials" not in path.read_text()  # kek, the default
    edit(
        path,
        "spec:\n",
        "spec:\n  credentials:\n    driver: kubernetes-secrets\n",
    )
    commit(root, "ml-platform leaves kek")
    err = refused(root, base, "ml-platform")
    assert (
        "gateway ml-platform cannot be rolled back: its credentials driver was kek at"
        f" {base[:12]} and is kubernetes-secrets now: the KEK Secret was deleted when it left"
        " kek, so what it encrypted is unreadable" in err
    )


def test_a_namespace_changed_since_is_refused(repo: tuple[Path, str]) -> None:
    root, base = repo
    edit(root / "gateways/aws/search.yaml", "spec:\n", "spec:\n  namespace: search-now\n")
    commit(root, "move search")
    err = refused(root, base, "search")
    assert (
        f"its namespace was openshell-search at {base[:12]} and is search-now now: going back"
        " replaces the gateway with everything it holds" in err
    )


def test_the_branch_is_previewed_by_the_offline_diff_as_a_release_change(
    pristine: Path, tmp_path: Path
) -> None:
    """The pull request's own diff of the rollback branch against main: search's release back,
    its Deployment updated in place, nothing else of the stack."""
    repo = clone(pristine, tmp_path / "repo")
    bind(repo, NEW)
    commit(repo, "promote")
    assert rollback(repo, "--to", "HEAD~1", "--gateway", "search", "--branch", "rb")[0] == 0
    git(repo, "checkout", "-q", "rb")
    run = run_diff(repo, "aws", "--base", "main", "--format", "json")
    assert run.code == 3, run.err
    (stack,) = json.loads(run.out)["stacks"]
    assert stack["releases"] == [{"gateway": "search", "before": NEW, "after": OLD, "pinned": True}]
    assert [(g["name"], g["fields"]) for g in stack["gateways"]] == [
        ("search", ["images", "release", "releasePinned"])
    ]
    assert [r["kind"] for r in stack["gateways"][0]["resources"]] == ["Deployment", "ConfigMap"]
    assert stack["counts"]["objects"] == {"added": 0, "changed": 2, "removed": 0}


def test_a_project_in_a_subdirectory_of_the_repository(tmp_path: Path) -> None:
    top = tmp_path / "top"
    root = copy_stack("aws", top / "project")
    git(top, "init", "-q", "-b", "main")
    base = commit(top, "base")
    bind(root, NEW)
    commit(top, "promote")
    patch = tmp_path / "p.patch"
    code, _, err = rollback(root, "--to", base, "--gateway", "audit", "--patch", str(patch))
    assert (code, err) == (0, "")
    changed = [line for line in patch.read_text().splitlines() if line.startswith("+++ ")]
    assert changed == ["+++ b/project/gateways/aws/audit.yaml"]
    git(top, "apply", "--check", str(patch))


def test_a_shard_whose_binding_is_its_environments_pins_each_gateway(tmp_path: Path) -> None:
    """The binding of environments/<name>.yaml is every shard's: a rollback of one shard pins
    its own gateways instead of moving it."""
    root = tmp_path / "repo"
    copy_releases(root)
    clusters = {"c1": {**cluster(), "release": OLD}}
    write_text(root, "environments/east.yaml", yaml.safe_dump({"clusters": clusters}))
    config = {
        "hypershell-gateways:environment": "east",
        "hypershell-gateways:declarationsDir": "inventory",
        "hypershell-gateways:selector": {"matchLabels": {"shard": "1"}},
        "hypershell-gateways:clusterSecrets": secrets_for(clusters),
    }
    write_text(root, "Pulumi.east-1.yaml", yaml.safe_dump({"config": config}))
    for name in ("team-a", "team-b"):
        write_gateway(
            root,
            name,
            {"cluster": "c1", "signIn": "none"},
            directory="inventory",
            labels={"shard": "1"},
        )
    git(root, "init", "-q", "-b", "main")
    base = commit(root, "base")
    edit(root / "environments/east.yaml", f"release: {OLD}", f"release: {NEW}")
    commit(root, "promote east")
    out = run_cli("--root", str(root), "rollback", "east-1", "--to", base, "-o", "json")
    assert out.code == 0, out.err
    document = json.loads(out.out)
    assert document["bindings"] == []
    assert document["files"] == ["inventory/team-a.yaml", "inventory/team-b.yaml"]
    assert [(g["name"], g["pinned"], g["after"]) for g in document["gateways"]] == [
        ("team-a", True, OLD),
        ("team-b", True, OLD),
    ]
    assert document["notes"] == [
        "the clusters' bindings are in environments/east.yaml, shared by every stack of the"
        " environment: each gateway whose release moved is pinned"
    ]

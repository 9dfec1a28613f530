"""The two sides of the diff (``gatewayctl.diff.repository``, ``gatewayctl.diff.sides``): the
``--base`` ref resolved and checked out into a worktree removed afterwards, a base without the
stack, without any render, with invalid input or a failing render, and the secrets of each side
compared by digest, never shown."""

from __future__ import annotations

import hashlib
import re
import shutil
import tempfile
from pathlib import Path

import pytest
import yaml

from gatewayctl.diff import risks
from gatewayctl.diff.compare import compare, secrets_changed
from gatewayctl.diff.report import SECRETS_CHANGED, build_report
from gatewayctl.diff.sides import Side, _base_package, stack_side
from gatewayctl.resolve import preparation
from tests.builders import NOT_COPIED, git
from tests.diff_helpers import (
    BASE_SENTINEL,
    clone,
    declare,
    object_blocks,
    run_diff,
    set_password,
    stack_section,
)
from tests.support import ROOT

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


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
    gateways = len(preparation.prepare(repo, "extra").loaded.gateways)
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

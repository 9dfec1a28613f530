"""Releases (``gatewayctl.inputs.release_files``, ``gatewayctl.resolve.release_bindings``): release
files,
the bindings that choose a gateway's images, production stacks, what plan.json and the render
summary say, and immutability from git history.

Projects are built into ``tmp_path`` with ``tests.builders``; the history tests make their own
git repositories (and clones of them).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from components import images
from gatewayctl.cli import main as cli
from gatewayctl.inputs.release_files import digest_problem, load_releases
from gatewayctl.resolve import preparation
from gatewayctl.resolve.release_bindings import history_problems
from tests.builders import (
    CONFIG_FILE,
    DECLARATIONS,
    PREFIX,
    cluster,
    digest,
    git,
    one_cluster,
    two_clusters,
    write_gateway,
    write_release,
    write_stack,
    write_text,
)
from tests.helpers import load, load_problems, only_gateway
from tests.hostile_helpers import run_cli, unlocated
from tests.support import ROOT, rendered

GOOD = f"ghcr.io/acme/gateway:1.0@{digest('good')}"
HEX = digest("x").removeprefix("sha256:")


def release_problems(root: Path) -> list[tuple[str, str, str]]:
    _, problems = load_releases(root)
    return sorted((p.path, p.field, p.message) for p in problems)


# --- the committed releases ------------------------------------------------------------------


def test_the_committed_releases_are_read_with_every_image_pinned() -> None:
    releases, problems = load_releases(ROOT)
    assert problems == []
    assert sorted(releases) == ["openshell-0.0.109", "openshell-0.0.110"]
    current = releases["openshell-0.0.109"].release
    assert current.spec.images.gateway.startswith(
        "ghcr.io/nvidia/openshell/gateway:0.0.109@sha256:"
    )
    assert all(
        images.parse_image(current.image(which)).digest is not None
        for which in ("gateway", "supervisor", "sandbox")
    )
    # Said plainly where a reviewer reads it: the digests were not taken from a registry.
    for item in releases.values():
        assert "placeholders" in item.release.spec.note
        assert "NOT the registry's" in (ROOT / item.path).read_text(encoding="utf-8")


def test_the_committed_stacks_bind_current_next_and_one_canary() -> None:
    bindings = {
        stack: {
            name: c.release
            for name, c in preparation.prepare(ROOT, stack).loaded.config.clusters.items()
        }
        for stack in ("aws", "ibm", "local")
    }
    assert bindings == {
        "aws": {"rosa-us-east-1": "openshell-0.0.109", "rosa-us-west-2": "openshell-0.0.109"},
        "ibm": {"roks-us-east": "openshell-0.0.109"},
        "local": {"kind": "openshell-0.0.110"},
    }
    pinned = [
        (stack, g.name, g.release)
        for stack in ("aws", "ibm", "local")
        for g in preparation.prepare(ROOT, stack).loaded.gateways
        if g.release_pinned
    ]
    assert pinned == [("ibm", "canary", "openshell-0.0.110")]


# --- the release file ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("image", "problem"),
    [
        (
            "ghcr.io/acme/gateway:1.0",
            "'ghcr.io/acme/gateway:1.0' has no digest: a release pins every image by digest"
            " (@sha256: and 64 lowercase hex characters; a tag may come before it, for people)",
        ),
        (
            f"ghcr.io/acme/gateway@sha512:{HEX}",
            f"digest 'sha512:{HEX}' is not sha256:<64 lowercase hex characters> (the only"
            " digest the gateway accepts)",
        ),
        (
            f"ghcr.io/acme/gateway@{HEX}",
            f"digest '{HEX}' is not sha256:<64 lowercase hex characters> (the only digest the"
            " gateway accepts)",
        ),
        (
            f"ghcr.io/acme/gateway@sha256:{HEX.upper()}",
            f"digest 'sha256:{HEX.upper()}' must be sha256: and exactly 64 lowercase hex"
            " characters; it has uppercase letters",
        ),
        (
            f"ghcr.io/acme/gateway@sha256:{HEX[:63]}",
            f"digest 'sha256:{HEX[:63]}' must be sha256: and exactly 64 lowercase hex characters;"
            " it has 63 characters",
        ),
        (
            f"ghcr.io/acme/gateway@sha256:{HEX}0",
            f"digest 'sha256:{HEX}0' must be sha256: and exactly 64 lowercase hex characters;"
            " it has 65 characters",
        ),
        (
            f"ghcr.io/acme/gateway@sha256:{HEX[:63]}g",
            f"digest 'sha256:{HEX[:63]}g' must be sha256: and exactly 64 lowercase hex"
            " characters; it has characters that are not hexadecimal",
        ),
        (
            f"ghcr.io/Acme/gateway@sha256:{HEX}",
            f"image reference 'ghcr.io/Acme/gateway@sha256:{HEX}' is not"
            " [registry[:port]/]repository[:tag][@digest] with a lowercase repository path",
        ),
    ],
)
def test_a_malformed_digest_is_a_problem_of_its_image(
    tmp_path: Path, image: str, problem: str
) -> None:
    path = write_release(tmp_path, "r1", gateway=image)
    assert release_problems(tmp_path) == [(path, "spec.images.gateway", problem)]


def test_a_tag_may_accompany_the_digest() -> None:
    assert digest_problem(GOOD) is None
    assert digest_problem(f"ghcr.io/acme/gateway@{digest('x')}") is None


def test_the_name_is_the_file_name(tmp_path: Path) -> None:
    path = write_release(tmp_path, "r1", file="r2.yaml")
    assert release_problems(tmp_path) == [
        (path, "metadata.name", "'r1' must match the file name 'r2'")
    ]


def test_a_duplicate_name_is_refused(tmp_path: Path) -> None:
    write_release(tmp_path, "r1")
    second = write_release(tmp_path, "r1", file="r1.yml")
    assert release_problems(tmp_path) == [
        (second, "metadata.name", "release 'r1' is already defined in releases/r1.yaml")
    ]


def test_unknown_missing_and_misnamed_fields_are_named(tmp_path: Path) -> None:
    write_text(
        tmp_path,
        "releases/Bad.yaml",
        "apiVersion: hypershell.redhat.io/v1alpha1\nkind: Release\nmetadata:\n  name: Bad\n"
        "spec:\n  note: ''\n  images:\n    gateway: " + GOOD + "\n    extra: x\n",
    )
    assert release_problems(tmp_path) == [
        (
            "releases/Bad.yaml",
            "metadata.name",
            "'Bad' is not a release name (lowercase a-z, 0-9, inner '.' and '-', at most 63)",
        ),
        ("releases/Bad.yaml", "spec.images.extra", "unknown field"),
        ("releases/Bad.yaml", "spec.images.sandbox", "required field is missing"),
        ("releases/Bad.yaml", "spec.images.supervisor", "required field is missing"),
        ("releases/Bad.yaml", "spec.note", "String should have at least 1 character"),
    ]


def test_entries_that_are_not_release_files_are_problems(tmp_path: Path) -> None:
    write_release(tmp_path, "r1")
    (tmp_path / "releases" / "sub").mkdir()
    write_text(tmp_path, "releases/notes.txt", "x")
    write_text(tmp_path, "releases/README.md", "ignored")
    write_text(tmp_path, "releases/.hidden.yaml", "ignored")
    os.symlink(tmp_path / "releases" / "r1.yaml", tmp_path / "releases" / "r9.yaml")
    releases, problems = load_releases(tmp_path)
    assert sorted(releases) == ["r1"]
    assert [(p.path, p.message.split(";")[0]) for p in problems] == [
        (
            "releases/notes.txt",
            "only *.yaml and *.yml files are releases (names starting with"
            " '.' or README are ignored)",
        ),
        ("releases/r9.yaml", "is a symbolic link"),
        ("releases/sub", "is a directory"),
    ]


def test_a_release_file_is_read_by_the_strict_reader(tmp_path: Path) -> None:
    write_text(tmp_path, "releases/r1.yaml", "metadata: {name: r1}\nmetadata: {name: r2}\n")
    _, problems = load_releases(tmp_path)
    assert [(p.where, p.field, p.message) for p in problems] == [
        ("releases/r1.yaml:2:1", "", "invalid YAML: duplicate key 'metadata'")
    ]


def test_a_broken_release_fails_every_stack_with_exit_2_and_nothing_written(
    tmp_path: Path,
) -> None:
    root = tmp_path / "p"
    write_stack(root)
    write_gateway(root, "team-a", {"signIn": "none"})
    write_release(root, "r1", supervisor="ghcr.io/acme/supervisor:1")
    out = tmp_path / "out"
    result = run_cli("--root", str(root), "render", "test", "--out", str(out))
    assert result.code == 2
    assert unlocated(result.err) == (
        "error: releases/r1.yaml: spec.images.supervisor: 'ghcr.io/acme/supervisor:1' has no"
        " digest: a release pins every image by digest (@sha256: and 64 lowercase hex"
        " characters; a tag may come before it, for people)\n1 problem(s); nothing written\n"
    )
    assert not out.exists()


# --- bindings and precedence -----------------------------------------------------------------


def test_a_cluster_release_gives_every_image_and_mirrors_keep_the_digest(tmp_path: Path) -> None:
    write_release(tmp_path, "r1")
    mirrors = {"ghcr.io/acme": "registry.internal:5000/mirror"}
    write_stack(tmp_path, clusters=one_cluster(release="r1", registryMirrors=mirrors))
    write_gateway(tmp_path, "team-a")
    gateway = only_gateway(tmp_path)
    assert (gateway.release, gateway.release_pinned, gateway.image_overrides) == ("r1", False, ())
    assert (
        gateway.args.images.gateway
        == f"registry.internal:5000/mirror/gateway:r1@{digest('r1gateway')}"
    )
    assert (
        gateway.args.images.sandbox
        == f"registry.internal:5000/mirror/sandbox:r1@{digest('r1sandbox')}"
    )


def test_a_gateway_pin_beats_the_cluster_and_its_own_image_beats_both(tmp_path: Path) -> None:
    write_release(tmp_path, "r1")
    write_release(tmp_path, "r2")
    write_stack(tmp_path, clusters=one_cluster(release="r1"))
    write_gateway(tmp_path, "canary", {"release": "r2", "images": {"gateway": GOOD}})
    write_gateway(tmp_path, "stable")
    canary, stable = load(tmp_path).gateways
    assert (canary.release, canary.release_pinned, canary.image_overrides) == (
        "r2",
        True,
        ("gateway",),
    )
    assert canary.args.images.gateway == GOOD
    assert canary.args.images.supervisor == f"ghcr.io/acme/supervisor:r2@{digest('r2supervisor')}"
    assert stable.args.images.supervisor == f"ghcr.io/acme/supervisor:r1@{digest('r1supervisor')}"


def test_without_a_release_the_stack_defaults_and_built_ins_still_apply(tmp_path: Path) -> None:
    write_stack(tmp_path, stack_images={"gateway": "quay.io/acme/gateway:2"})
    write_gateway(tmp_path, "team-a")
    gateway = only_gateway(tmp_path)
    assert gateway.release is None
    assert gateway.args.images.gateway == "quay.io/acme/gateway:2"
    assert gateway.args.images.supervisor == images.DEFAULT_SUPERVISOR_IMAGE


def test_unknown_releases_are_named_where_they_are_bound(tmp_path: Path) -> None:
    write_release(tmp_path, "r1")
    write_stack(tmp_path, clusters={"east": cluster(release="nope"), "west": cluster()})
    write_gateway(tmp_path, "team-a", {"cluster": "west", "release": "r9"})
    assert load_problems(tmp_path) == [
        (
            CONFIG_FILE,
            f"{PREFIX}clusters.east.release",
            "unknown release 'nope'; releases/ holds r1",
        ),
        (f"{DECLARATIONS}/team-a.yaml", "spec.release", "unknown release 'r9'; releases/ holds r1"),
    ]


def test_stack_image_defaults_and_release_bindings_do_not_mix(tmp_path: Path) -> None:
    write_release(tmp_path, "r1")
    write_stack(
        tmp_path,
        clusters=one_cluster(release="r1"),
        stack_images={"sandbox": "quay.io/acme/sandbox:1"},
    )
    assert load_problems(tmp_path) == [
        (
            CONFIG_FILE,
            f"{PREFIX}images",
            "the stack binds releases on its clusters: its images come from the releases; remove"
            " the stack defaults (a gateway may still override its own image)",
        )
    ]


# --- production ------------------------------------------------------------------------------

PRODUCTION = {f"{PREFIX}production": True}


def test_a_production_stack_binds_a_release_on_every_cluster(tmp_path: Path) -> None:
    write_release(tmp_path, "r1")
    clusters = two_clusters()
    clusters["east"]["release"] = "r1"
    write_stack(tmp_path, clusters=clusters, extra=PRODUCTION)
    assert load_problems(tmp_path) == [
        (
            CONFIG_FILE,
            f"{PREFIX}clusters.west.release",
            "required: the stack is production (hypershell-gateways:production) and runs only"
            " releases, pinned by digest",
        )
    ]


def test_a_production_stack_refuses_per_gateway_tags_and_accepts_digests(tmp_path: Path) -> None:
    write_release(tmp_path, "r1")
    write_stack(tmp_path, clusters=one_cluster(release="r1"), extra=PRODUCTION)
    write_gateway(tmp_path, "pinned", {"images": {"gateway": GOOD}})
    write_gateway(tmp_path, "tagged", {"images": {"supervisor": "ghcr.io/acme/supervisor:2"}})
    assert load_problems(tmp_path) == [
        (
            f"{DECLARATIONS}/tagged.yaml",
            "spec.images.supervisor",
            f"'ghcr.io/acme/supervisor:2' has no digest: the stack is production ({CONFIG_FILE}:"
            " hypershell-gateways:production), so a per-gateway image must be pinned by digest"
            " (@sha256:...), or the gateway pins a release (spec.release)",
        )
    ]
    (tmp_path / DECLARATIONS / "tagged.yaml").unlink()
    assert only_gateway(tmp_path).image_overrides == ("gateway",)


def test_the_same_tag_override_is_fine_outside_production(tmp_path: Path) -> None:
    write_release(tmp_path, "r1")
    write_stack(tmp_path, clusters=one_cluster(release="r1"))
    write_gateway(tmp_path, "tagged", {"images": {"supervisor": "ghcr.io/acme/supervisor:2"}})
    assert only_gateway(tmp_path).args.images.supervisor == "ghcr.io/acme/supervisor:2"


def test_production_must_be_a_boolean(tmp_path: Path) -> None:
    write_stack(tmp_path, extra={f"{PREFIX}production": "yes please"})
    assert load_problems(tmp_path) == [
        (CONFIG_FILE, f"{PREFIX}production", "Input should be a valid boolean")
    ]


def test_validate_refuses_the_committed_aws_stack_with_a_tag_override(tmp_path: Path) -> None:
    project = tmp_path / "p"
    shutil.copytree(ROOT / "gateways", project / "gateways")
    shutil.copytree(ROOT / "releases", project / "releases")
    shutil.copy(ROOT / "Pulumi.aws.yaml", project / "Pulumi.aws.yaml")
    write_gateway(
        project,
        "search",
        {
            "cluster": "rosa-us-west-2",
            "images": {"gateway": "ghcr.io/nvidia/openshell/gateway:0.0.111"},
        },
        stack="aws",
    )
    result = run_cli("--root", str(project), "validate", "aws")
    assert result.code == 2
    assert unlocated(result.err).splitlines() == [
        "error: gateways/aws/search.yaml: spec.images.gateway:"
        " 'ghcr.io/nvidia/openshell/gateway:0.0.111' has no digest: the stack is production"
        " (Pulumi.aws.yaml: hypershell-gateways:production), so a per-gateway image must be"
        " pinned by digest (@sha256:...), or the gateway pins a release (spec.release)",
        "1 problem(s); nothing written",
    ]


# --- plan.json and the render summary ---------------------------------------------------------


def test_plan_reports_each_gateways_release_pin_and_overrides() -> None:
    entries = {
        (stack, g["name"]): (g["release"], g["releasePinned"], g["imageOverrides"])
        for stack in ("aws", "ibm", "local")
        for g in json.loads(rendered(stack).files["plan.json"])["gateways"]
    }
    assert entries[("aws", "ml-platform")] == ("openshell-0.0.109", False, ["gateway"])
    assert entries[("aws", "payments")] == ("openshell-0.0.109", False, [])
    assert entries[("ibm", "canary")] == ("openshell-0.0.110", True, [])
    assert entries[("local", "dev-build")] == ("openshell-0.0.110", False, ["gateway"])
    overridden = sorted(key for key, (_, _, overrides) in entries.items() if overrides)
    assert overridden == [("aws", "ml-platform"), ("local", "dev-build")]


def summary_rows(out: str) -> dict[str, dict[str, str]]:
    """The render summary's rows by gateway, each cell by its column's header, lowercased
    (columns come and go with features: sign-in, console). Columns are padded, so each cell
    starts where its header does."""
    lines = out.splitlines()
    header = lines[1]
    found = list(re.finditer(r"\S+", header))  # headers are one word each
    names, starts = [m[0] for m in found], [m.start() for m in found]
    ends: list[int | None] = [*starts[1:], None]
    return {
        line.split()[0]: {
            name.lower(): line[start:end].strip()
            for name, start, end in zip(names, starts, ends, strict=True)
        }
        for line in lines[2:-1]
    }


def test_the_render_summary_shows_release_pin_and_overrides(tmp_path: Path) -> None:
    result = run_cli("render", "ibm", "--out", str(tmp_path / "ibm"), "-o", "wide")
    assert result.code == 0, result.err
    rows = summary_rows(result.out)
    assert [rows["canary"][c] for c in ("release", "overrides")] == [
        "openshell-0.0.110 (pinned)",
        "-",
    ]
    assert [rows["team-a"][c] for c in ("release", "overrides")] == ["openshell-0.0.109", "-"]
    local = summary_rows(
        run_cli("render", "local", "--out", str(tmp_path / "local"), "-o", "wide").out
    )
    assert [
        local["dev-build"][c] for c in ("cluster", "mode", "address", "release", "overrides")
    ] == [
        "kind",
        "none",
        "-",
        "openshell-0.0.110",
        "gateway",
    ]


# --- immutability: git history ----------------------------------------------------------------


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write_release(repo, "r1")
    write_text(repo, "README.md", "x\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "r1")
    return repo


def _history(root: Path) -> tuple[list[tuple[str, str, str]], list[str]]:
    releases, problems = load_releases(root)
    assert problems == []
    found, notes = history_problems(root, releases)
    return [(p.path, p.field, p.message) for p in found], notes


def test_a_committed_release_unchanged_passes_and_comments_may_change(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    assert _history(repo) == ([], [])
    path = repo / "releases" / "r1.yaml"
    path.write_text("# reviewed by the release manager\n" + path.read_text(), encoding="utf-8")
    assert _history(repo) == ([], [])


def test_a_changed_release_is_refused_committed_or_not(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    first = git(repo, "rev-parse", "HEAD")[:12]
    write_release(repo, "r1", gateway=GOOD, note="changed")
    expected = [
        (
            "releases/r1.yaml",
            field,
            f"changed since the release was first committed ({first}); a release is immutable:"
            " put the change in a new release (a new file) and promote it",
        )
        for field in ("spec.images.gateway", "spec.note")
    ]
    assert _history(repo) == (expected, [])  # in the working tree
    git(repo, "commit", "-q", "-am", "edit r1")
    git(repo, "commit", "-q", "--allow-empty", "-m", "later")
    assert _history(repo) == (expected, [])  # committed on top


@pytest.mark.parametrize("how", ["renamed in one commit", "removed, then added again"])
def test_a_release_is_immutable_by_name_whatever_its_file(tmp_path: Path, how: str) -> None:
    # releases/r1.yaml becomes releases/r1.yml with another digest: the same release, changed.
    repo = _repo(tmp_path)
    first = git(repo, "rev-parse", "HEAD")[:12]
    if how == "renamed in one commit":
        git(repo, "rm", "-q", "releases/r1.yaml")
    else:
        git(repo, "rm", "-q", "releases/r1.yaml")
        git(repo, "commit", "-q", "-m", "drop r1")
    write_release(repo, "r1", file="r1.yml", gateway=GOOD)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "r1 again, as .yml")

    assert _history(repo) == (
        [
            (
                "releases/r1.yml",
                "spec.images.gateway",
                f"changed since the release was first committed ({first}); a release is"
                " immutable: put the change in a new release (a new file) and promote it",
            )
        ],
        [],
    )


def test_a_release_moved_to_yml_unchanged_passes(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    git(repo, "mv", "releases/r1.yaml", "releases/r1.yml")
    git(repo, "commit", "-q", "-m", "rename only")
    assert _history(repo) == ([], [])


def test_a_fresh_clone_checks_the_history(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    write_release(repo, "r1", supervisor=GOOD.replace("gateway", "supervisor"))
    git(repo, "commit", "-q", "-am", "edit r1")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    problems, notes = _history(clone)
    assert [(path, field) for path, field, _ in problems] == [
        ("releases/r1.yaml", "spec.images.supervisor")
    ]
    assert notes == []


def test_a_new_uncommitted_release_is_noted_not_refused(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    write_release(repo, "r2")
    assert _history(repo) == (
        [],
        ["releases/r2.yaml: not committed yet; once committed, its content may not change"],
    )


def test_outside_a_git_checkout_the_history_is_noted_not_checked(tmp_path: Path) -> None:
    write_release(tmp_path, "r1")
    assert _history(tmp_path) == (
        [],
        [
            "releases/: the project is not a git checkout: whether each release is still what"
            " was first committed is not checked here (it is in a full clone, as pull requests"
            " run)"
        ],
    )


def test_a_shallow_clone_without_the_adding_commit_is_noted(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    write_release(repo, "r1", note="changed later")
    git(repo, "commit", "-q", "-am", "edit r1")
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo}", str(clone))
    assert _history(clone) == (
        [],
        [
            "releases/r1.yaml: this clone is shallow and lacks the commit that added it;"
            " immutability is not checked here (fetch the whole history to check it)"
        ],
    )
    git(clone, "fetch", "-q", "--unshallow")
    assert [field for _, field, _ in _history(clone)[0]] == ["spec.note"]


def test_a_changed_release_makes_validate_exit_2(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    write_stack(repo, clusters=one_cluster(release="r1"))
    write_gateway(repo, "team-a", {"signIn": "none"})
    assert cli.main(["--root", str(repo), "validate", "test"]) == 0
    write_release(repo, "r1", gateway=GOOD)
    result = run_cli("--root", str(repo), "validate", "test")
    assert result.code == 2
    assert (
        unlocated(result.err)
        .splitlines()[0]
        .startswith(
            "error: releases/r1.yaml: spec.images.gateway: changed since the release was first"
            " committed"
        )
    )

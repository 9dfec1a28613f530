"""``python -m gatewayctl promote`` (``gatewayctl.deploy.promote``): the binding is the only change
to the stack file, byte for byte; what rolls is reported; bad targets exit 2 with nothing
written."""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from gatewayctl import interrupts
from gatewayctl.deploy import promote
from gatewayctl.engine import write_guard
from gatewayctl.errors import InvalidInputError
from gatewayctl.resolve.stack import load_stack
from tests.builders import (
    CONFIG_FILE,
    PREFIX,
    STACK,
    cluster,
    copy_project,
    two_clusters,
    write_gateway,
    write_release,
    write_stack,
    write_text,
)
from tests.helpers import load
from tests.hostile_helpers import Outcome, run_cli, unlocated

CURRENT, NEXT = "openshell-0.0.109", "openshell-0.0.110"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return copy_project(tmp_path / "p")


def run(root: Path, *argv: str) -> Outcome:
    return run_cli("--root", str(root), "promote", *argv)


def changed_lines(before: str, after: str) -> list[str]:
    """The lines removed and added, as ``-line`` and ``+line``."""
    return [
        line
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), n=0, lineterm="")
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


def test_promotion_round_trip_changes_only_the_bindings(project: Path) -> None:
    path = project / "Pulumi.aws.yaml"
    original = path.read_bytes()

    result = run(project, NEXT, "--to", "aws")

    assert (result.code, result.err) == (0, "")
    after = path.read_text(encoding="utf-8")
    assert changed_lines(original.decode(), after) == [
        f"-      release: {CURRENT}",
        f"+      release: {NEXT}",
        f"-      release: {CURRENT}",
        f"+      release: {NEXT}",
    ]
    assert after.replace(NEXT, CURRENT).encode() == original  # comments, order, layout: as is
    assert result.out.splitlines() == [
        f"Pulumi.aws.yaml: hypershell-gateways:clusters.rosa-us-east-1.release: {CURRENT} → {NEXT}",
        f"Pulumi.aws.yaml: hypershell-gateways:clusters.rosa-us-west-2.release: {CURRENT} → {NEXT}",
        "4 gateway(s) will roll:",
        f"  audit (rosa-us-east-1): {CURRENT} → {NEXT} [gateway, supervisor, sandbox]",
        f"  ml-platform (rosa-us-west-2): {CURRENT} → {NEXT} [supervisor, sandbox]",
        f"  payments (rosa-us-east-1): {CURRENT} → {NEXT} [gateway, supervisor, sandbox]",
        f"  search (rosa-us-west-2): {CURRENT} → {NEXT} [gateway, supervisor, sandbox]",
    ]
    assert {c.release for c in load_stack(project, "aws").config.clusters.values()} == {NEXT}

    back = run(project, CURRENT, "--to", "aws")
    assert back.code == 0
    assert path.read_bytes() == original
    assert sorted(p.name for p in project.iterdir() if p.name.startswith(".Pulumi")) == []


def test_one_cluster_and_a_canary_that_stays(project: Path) -> None:
    result = run(project, NEXT, "--to", "ibm/roks-us-east")
    assert result.code == 0
    assert result.out.splitlines() == [
        f"Pulumi.ibm.yaml: hypershell-gateways:clusters.roks-us-east.release: {CURRENT} → {NEXT}",
        "3 gateway(s) will roll:",
        f"  batch-jobs (roks-us-east): {CURRENT} → {NEXT} [gateway, supervisor, sandbox]",
        f"  research (roks-us-east): {CURRENT} → {NEXT} [gateway, supervisor, sandbox]",
        f"  team-a (roks-us-east): {CURRENT} → {NEXT} [gateway, supervisor, sandbox]",
        "1 gateway(s) stay:",
        f"  canary (roks-us-east): pins {NEXT} (spec.release)",
    ]


def test_one_cluster_of_two_leaves_the_other_and_its_gateways(project: Path) -> None:
    original = (project / "Pulumi.aws.yaml").read_text(encoding="utf-8")
    result = run(project, NEXT, "--to", "aws/rosa-us-west-2")
    assert result.code == 0
    assert changed_lines(original, (project / "Pulumi.aws.yaml").read_text()) == [
        f"-      release: {CURRENT}",
        f"+      release: {NEXT}",
    ]
    assert result.out.splitlines()[-3:] == [
        "2 gateway(s) stay:",
        "  audit (rosa-us-east-1): its cluster is not promoted",
        "  payments (rosa-us-east-1): its cluster is not promoted",
    ]


def test_already_bound_writes_nothing_and_exits_0(project: Path) -> None:
    path = project / "Pulumi.local.yaml"
    before = path.stat()
    result = run(project, NEXT, "--to", "local")
    assert result.code == 0
    assert result.out.splitlines()[0] == (
        f"Pulumi.local.yaml: hypershell-gateways:clusters.kind.release: already {NEXT}; unchanged"
    )
    assert result.out.splitlines()[1] == "0 gateway(s) will roll:"
    assert (path.stat().st_ino, path.stat().st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_dry_run_reports_and_writes_nothing(project: Path) -> None:
    original = (project / "Pulumi.ibm.yaml").read_bytes()
    result = run(project, NEXT, "--to", "ibm", "--dry-run")
    assert result.code == 0
    assert "3 gateway(s) will roll:" in result.out
    assert result.out.splitlines()[-1] == "dry run: Pulumi.ibm.yaml not written"
    assert (project / "Pulumi.ibm.yaml").read_bytes() == original


# --- a cluster without a binding gets one line -------------------------------------------------


def test_a_missing_binding_is_one_new_line_under_the_cluster_key(tmp_path: Path) -> None:
    write_release(tmp_path, "r1")
    write_stack(tmp_path, clusters=two_clusters())
    path = tmp_path / CONFIG_FILE
    text = path.read_text(encoding="utf-8")
    # A comment under the cluster's key, and one at the end of a line, stay where they are.
    text = text.replace("    east:\n", "    east:\n      # the east cluster's own context\n")
    text = text.replace("ingress:\n        mode: route", "ingress:\n        mode: route # why")
    path.write_text(text, encoding="utf-8")
    write_gateway(tmp_path, "team-a", {"cluster": "east"})

    result = run(tmp_path, "r1", "--to", f"{STACK}/east")

    assert result.code == 0, result.err
    after = path.read_text(encoding="utf-8")
    assert after == text.replace("    east:\n", "    east:\n      release: r1\n", 1)
    assert [c.release for c in load(tmp_path).config.clusters.values()] == ["r1", None]
    assert result.out.splitlines()[0] == (
        f"{CONFIG_FILE}: hypershell-gateways:clusters.east.release: (none) → r1"
    )


def test_an_empty_binding_is_filled_in(tmp_path: Path) -> None:
    write_release(tmp_path, "r1")
    write_stack(tmp_path)
    path = tmp_path / CONFIG_FILE
    text = path.read_text(encoding="utf-8").replace("    c1:\n", "    c1:\n      release:\n", 1)
    path.write_text(text, encoding="utf-8")
    assert run(tmp_path, "r1", "--to", STACK).code == 0
    assert path.read_text(encoding="utf-8") == text.replace("release:\n", "release: r1\n", 1)


def test_a_name_yaml_would_read_as_a_number_is_quoted(tmp_path: Path) -> None:
    write_release(tmp_path, "1.10")
    write_stack(tmp_path)
    assert run(tmp_path, "1.10", "--to", STACK).code == 0
    assert '      release: "1.10"\n' in (tmp_path / CONFIG_FILE).read_text(encoding="utf-8")
    assert load(tmp_path).config.clusters["c1"].release == "1.10"


def test_the_file_keeps_its_permissions(tmp_path: Path) -> None:
    write_release(tmp_path, "r1")
    write_stack(tmp_path)
    (tmp_path / CONFIG_FILE).chmod(0o600)
    assert run(tmp_path, "r1", "--to", STACK).code == 0
    assert (tmp_path / CONFIG_FILE).stat().st_mode & 0o777 == 0o600


# --- refused: exit 2, nothing written ----------------------------------------------------------


def _refused(root: Path, *argv: str) -> list[str]:
    files = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    result = run(root, *argv)
    assert result.code == 2, result
    assert result.out == ""
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == files
    return unlocated(result.err).splitlines()


def test_an_unknown_release_is_refused(project: Path) -> None:
    assert _refused(project, "openshell-9.9.9", "--to", "aws") == [
        f"error: releases: no release named 'openshell-9.9.9'; releases/ holds {CURRENT}, {NEXT}",
        "1 problem(s); nothing written",
    ]
    assert _refused(project, "../Pulumi.aws", "--to", "aws")[0] == (
        f"error: releases: no release named '../Pulumi.aws'; releases/ holds {CURRENT}, {NEXT}"
    )


def test_an_unknown_stack_or_cluster_is_refused(project: Path) -> None:
    assert _refused(project, NEXT, "--to", "gcp") == [
        "error: Pulumi.gcp.yaml: no such stack; the stacks here are aws, ibm, local",
        "1 problem(s); nothing written",
    ]
    assert _refused(project, NEXT, "--to", "aws/rosa-eu-west-1") == [
        "error: Pulumi.aws.yaml: hypershell-gateways:clusters: no cluster 'rosa-eu-west-1' in"
        " stack 'aws'; it has rosa-us-east-1, rosa-us-west-2",
        "1 problem(s); nothing written",
    ]
    assert _refused(project, NEXT, "--to", "aws/")[0].startswith(
        "error: Pulumi.aws.yaml: hypershell-gateways:clusters: no cluster '' in stack 'aws'"
    )


@pytest.mark.parametrize("target", ["", "/rosa-us-east-1"])
def test_a_target_without_a_stack_is_named_as_given(project: Path, target: str) -> None:
    files = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    result = run(project, NEXT, "--to", target)
    assert (result.code, result.out) == (2, "")
    assert unlocated(result.err) == (
        f"error: --to {target!r} names no stack: write STACK or STACK/CLUSTER (the stacks here"
        " are aws, ibm, local)\n"
    )
    assert {p: p.read_bytes() for p in project.rglob("*") if p.is_file()} == files


def test_a_target_that_is_no_stack_name_names_its_file(project: Path) -> None:
    assert _refused(project, NEXT, "--to", "AWS/rosa-us-east-1") == [
        "error: Pulumi.AWS.yaml: stack name 'AWS' is not a DNS-1123 label (lowercase a-z, 0-9,"
        " inner '-', at most 63)",
        "1 problem(s); nothing written",
    ]


def _stack_text(clusters: str) -> str:
    """A stack file whose ``clusters`` value is ``clusters`` as written."""
    settings = yaml.safe_dump(cluster(), default_flow_style=True, width=1000).strip()
    return (
        f"config:\n  {PREFIX}declarationsDir: gateways/{STACK}\n  {PREFIX}clusters:\n"
        + clusters.replace("SETTINGS", settings)
        + f"  {PREFIX}clusterSecrets: {{c1: {{dbAdminPassword: a}}, c2: {{dbAdminPassword: b}}}}\n"
    )


def test_a_cluster_in_flow_style_or_an_alias_is_left_to_a_person(tmp_path: Path) -> None:
    write_release(tmp_path, "r1")
    (tmp_path / "gateways" / STACK).mkdir(parents=True)
    write_text(tmp_path, CONFIG_FILE, _stack_text("    c1: SETTINGS\n    c2: SETTINGS\n"))
    assert load(tmp_path).config.clusters["c1"].release is None
    assert _refused(tmp_path, "r1", "--to", f"{STACK}/c1") == [
        f"error: {CONFIG_FILE}: {PREFIX}clusters.c1: the cluster's settings are not a block"
        " mapping; edit the binding by hand (release: <name>)",
        "1 problem(s); nothing written",
    ]
    block = yaml.safe_dump({"c1": cluster()}, sort_keys=False, indent=2)
    block = "".join(f"    {line}\n" for line in block.splitlines())
    aliased = block.replace("    c1:\n", "    c1: &shared\n", 1) + "    c2: *shared\n"
    write_text(tmp_path, CONFIG_FILE, _stack_text(aliased))
    assert sorted(load(tmp_path).config.clusters) == ["c1", "c2"]
    assert _refused(tmp_path, "r1", "--to", f"{STACK}/c2") == [
        f"error: {CONFIG_FILE}: {PREFIX}clusters.c2: the cluster is not written out in the stack"
        " file; edit the binding by hand (release: <name>)",
        "1 problem(s); nothing written",
    ]
    # The anchored cluster itself is written out: binding it binds the alias too, which the
    # read-back check sees as more than the binding asked for.
    result = run(tmp_path, "r1", "--to", f"{STACK}/c1")
    assert result.code == 1
    assert unlocated(result.err) == (
        f"error: {CONFIG_FILE}: the binding could not be edited safely; edit it by hand\n"
    )


def test_an_anchored_binding_is_left_to_a_person_not_blamed_on_the_file(tmp_path: Path) -> None:
    # c2 binds the release through an alias of c1's binding: replacing c1's value would drop
    # the anchor, and the text promote produced would not parse. The file itself is fine.
    write_release(tmp_path, "r1")
    write_release(tmp_path, "r2")
    (tmp_path / "gateways" / STACK).mkdir(parents=True)
    block = yaml.safe_dump({"c1": cluster(), "c2": cluster()}, sort_keys=False, indent=2)
    block = "".join(f"    {line}\n" for line in block.splitlines())
    block = block.replace("    c1:\n", "    c1:\n      release: &bound r1\n", 1)
    block = block.replace("    c2:\n", "    c2:\n      release: *bound\n", 1)
    write_text(tmp_path, CONFIG_FILE, _stack_text(block))
    assert [c.release for c in load(tmp_path).config.clusters.values()] == ["r1", "r1"]
    for target in (f"{STACK}/c1", STACK):
        assert _refused(tmp_path, "r2", "--to", target) == [
            f"error: {CONFIG_FILE}: {PREFIX}clusters.c1.release: the binding carries a YAML"
            " anchor (&name) that other values may refer to; edit the binding by hand"
            " (release: <name>)",
            "1 problem(s); nothing written",
        ]


def test_text_promote_produced_that_does_not_parse_is_its_own_error(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = project / "Pulumi.aws.yaml"
    original = path.read_bytes()
    monkeypatch.setattr(promote, "edit_bindings", lambda text, *_: text + "\n  broken: *nowhere\n")
    result = run(project, NEXT, "--to", "aws")
    assert (result.code, unlocated(result.err)) == (
        1,
        "error: Pulumi.aws.yaml: the binding could not be edited safely; edit it by hand\n",
    )
    assert path.read_bytes() == original


def test_a_stack_that_would_not_validate_is_not_written(tmp_path: Path) -> None:
    write_release(tmp_path, "r1")
    write_stack(tmp_path, stack_images={"gateway": "quay.io/acme/gateway:1"})
    assert _refused(tmp_path, "r1", "--to", STACK) == [
        f"error: {CONFIG_FILE}: hypershell-gateways:images: the stack binds releases on its"
        " clusters: its images come from the releases; remove the stack defaults (a gateway"
        " may still override its own image)",
        "1 problem(s); nothing written",
    ]


def test_a_failed_write_leaves_the_old_file_and_no_temporary_one(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = project / "Pulumi.aws.yaml"
    original = path.read_bytes()
    real_fsync = os.fsync

    def fail(fd: int) -> None:
        real_fsync(fd)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", fail)
    result = run(project, NEXT, "--to", "aws")
    assert result.code == 1
    assert path.read_bytes() == original
    assert sorted(p.name for p in project.iterdir() if p.name.startswith(".Pulumi")) == []


def _watch_every_step(
    monkeypatch: pytest.MonkeyPatch, path: Path, seen: list[bytes | None]
) -> None:
    """After every call that changes a directory entry, record what ``path`` holds: what a
    process killed (SIGKILL, no clean-up) right after that call would leave there."""

    def watched(call: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return call(*args, **kwargs)
            finally:
                seen.append(path.read_bytes() if path.exists() else None)

        return wrapper

    for name in ("rename", "replace", "link", "unlink", "open", "mkdir", "rmdir"):
        monkeypatch.setattr(os, name, watched(getattr(os, name)))


def test_a_kill_at_any_point_leaves_the_old_file_or_the_new_one(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = project / "Pulumi.aws.yaml"
    old = path.read_bytes()
    promotion = promote.promote(project, NEXT, "aws")
    new = promotion.text.encode("utf-8")
    seen: list[bytes | None] = []
    _watch_every_step(monkeypatch, path, seen)
    promote.write(project, promotion)
    monkeypatch.undo()
    assert len(seen) > 3  # every step was watched
    assert [state for state in seen if state not in {old, new}] == []
    assert (seen[0], seen[-1]) == (old, new)
    assert sorted(p.name for p in project.iterdir() if p.name.startswith(".Pulumi")) == []


def test_an_output_file_is_never_absent_while_it_is_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "report.md"
    out.write_bytes(b"old\n")
    seen: list[bytes | None] = []
    _watch_every_step(monkeypatch, out, seen)
    write_guard.write_file(out, "new\n")
    monkeypatch.undo()
    assert [state for state in seen if state not in {b"old\n", b"new\n"}] == []
    assert (seen[0], seen[-1], out.read_bytes()) == (b"old\n", b"new\n", b"new\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.md"]


def test_an_undone_replacement_puts_the_old_file_back_in_one_rename(tmp_path: Path) -> None:
    out = tmp_path / "report.md"
    out.write_bytes(b"old\n")
    with pytest.raises(RuntimeError), interrupts.transaction():
        write_guard.write_file(out, "new\n")
        raise RuntimeError("a later step failed")
    assert out.read_bytes() == b"old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.md"]


def test_edit_bindings_refuses_what_it_cannot_find() -> None:
    text = "config:\n  hypershell-gateways:clusters: *all\n"
    with pytest.raises(InvalidInputError) as caught:
        promote.edit_bindings("x: &all {}\n" + text, "P.yaml", ["c1"], "r1")
    assert str(caught.value) == (
        "P.yaml: hypershell-gateways:clusters: the clusters are not written out as a block"
        " mapping; edit the binding by hand (release: <name>)"
    )
    write = "config:\n  hypershell-gateways:clusters:\n    c2:\n      a: 1\n"
    with pytest.raises(InvalidInputError) as caught:
        promote.edit_bindings(write, "P.yaml", ["c1"], "r1")
    assert "hypershell-gateways:clusters.c1: the cluster is not written out" in str(caught.value)


def test_crlf_files_keep_their_line_ends() -> None:
    text = "config:\r\n  hypershell-gateways:clusters:\r\n    c1:\r\n      a: 1\r\n"
    assert promote.edit_bindings(text, "P.yaml", ["c1"], "r1") == (
        "config:\r\n  hypershell-gateways:clusters:\r\n    c1:\r\n      release: r1\r\n"
        "      a: 1\r\n"
    )


def test_the_written_file_is_what_the_report_describes(project: Path) -> None:
    promotion = promote.promote(project, NEXT, "aws")
    assert promotion.changed
    assert promotion.clusters == (("rosa-us-east-1", CURRENT), ("rosa-us-west-2", CURRENT))
    write_text(project, "unrelated.txt", "x")
    promote.write(project, promotion)
    assert (project / "Pulumi.aws.yaml").read_text(encoding="utf-8") == promotion.text

"""The diff report leads with risk (issue 25 item 1): what is destroyed, replaced, flipped from
Retain to Delete, granted, adopted, and which declarations are not committed; the detail in
collapsible sections; a bound that cuts added objects' YAML first and a flag that keeps all."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from gatewayctl.diff import risks
from gatewayctl.diff.access import AccessChange
from gatewayctl.diff.compare import GatewayChange, ObjectChange, StackDiff, Status, compare
from gatewayctl.diff.operations import Operation
from gatewayctl.diff.report import build_report, is_report
from gatewayctl.diff.rules import Op
from gatewayctl.diff.sides import Side
from gatewayctl.engine import render
from gatewayctl.resolve import preparation
from tests.builders import (
    DECLARATIONS,
    EAST_DOMAIN,
    STACK,
    WEST_DOMAIN,
    cluster,
    gateway_api_cluster,
    git,
    write_gateway,
    write_stack,
    write_text,
)

CLUSTERS = {
    "east": cluster(baseDomain=EAST_DOMAIN),
    "west": gateway_api_cluster(baseDomain=WEST_DOMAIN),
}
ALPHA = {"cluster": "east", "deletionPolicy": "Retain"}
BRAVO = {"cluster": "west", "deletionPolicy": "Delete"}
CHARLIE = {"cluster": "east", "namespace": "legacy-charlie", "exposure": {"enabled": False}}


def side(root: Path, gateways: dict[str, dict[str, Any]]) -> Side:
    for old in (root / DECLARATIONS).glob("*.yaml") if (root / DECLARATIONS).is_dir() else ():
        old.unlink()
    write_stack(root, clusters=CLUSTERS)
    for name, spec in gateways.items():
        write_gateway(root, name, spec)
    return Side(files=render.execute(preparation.prepare(root, STACK)).files)


def stack_diff(**fields: Any) -> StackDiff:
    """A diff of stack ``s`` that changes only ``fields`` (gateways, objects...)."""
    changes: dict[str, Any] = {"gateways": (), "objects": (), "resources": (), **fields}
    return StackDiff(stack="s", base_note=None, head_note=None, **changes)


def risk_section(report: str) -> str:
    assert report.startswith("## Risks\n\n")
    return report[: report.index("## Offline diff: stack")]


def test_the_real_program_s_risks_lead_the_report(tmp_path: Path) -> None:
    base = side(tmp_path, {"alpha": ALPHA, "bravo": BRAVO})
    head = side(tmp_path, {"alpha": {**ALPHA, "deletionPolicy": "Delete"}, "charlie": CHARLIE})

    diff = compare(STACK, base, head)
    report = build_report([diff], base_label="b", command="c")

    assert diff.delete_flips == (
        "gateway `alpha`: `deletionPolicy` Retain -> Delete: PostgreSQL database `gw_alpha` and"
        " its role are no longer retained; removing the gateway later drops them",
    )
    assert [(g.name, g.status, g.adopted) for g in diff.gateways] == [
        ("alpha", "changed", False),
        ("bravo", "removed", False),
        ("charlie", "added", True),
    ]
    section = risk_section(report)
    assert section.splitlines()[:5] == [
        "## Risks",
        "",
        "**Destroys** (4):",
        "",
        f"- stack `{STACK}`: gateway `bravo` is removed: namespace `openshell-bravo` on cluster"
        " `west` and every object in it are deleted",
    ]
    assert f"- stack `{STACK}`: **data loss**: gateway `bravo` is removed" in section
    assert "**data loss**: gateway `bravo` is removed: its KEK Secret" in section
    assert (
        f"**Retain -> Delete** (1):\n\n- stack `{STACK}`, gateway `alpha`: `deletionPolicy`"
        " Retain -> Delete: PostgreSQL database `gw_alpha`"
    ) in section
    assert (
        f"**Adopts** (1):\n\n- stack `{STACK}`: gateway `charlie` **adopts** namespace"
        " `legacy-charlie` on cluster `east` from the upstream controller"
    ) in section
    # The same order every time: decommissions, destroys, leaves behind, replaces, flips,
    # grants, adopts, not committed.
    titles = re.findall(r"^\*\*([^*]+)\*\* \(\d+\):$", section, re.MULTILINE)
    # bravo's host is left to the base domain's wildcard record (issue 45 item 2).
    assert titles == ["Destroys", "Leaves behind", "Retain -> Delete", "Adopts"]
    assert section.endswith(f"{risks.VOCABULARY}\n\n")
    # An adopted gateway is labelled "adopts", not "added", in the counts and in its row.
    summary = report[len(section) :]
    assert "**Gateways:** 0 added, 1 adopts, 1 changed, 1 removed\n" in summary
    assert "| `charlie` | adopts | cluster `east`, namespace `legacy-charlie`" in summary
    assert is_report(report)


def test_the_per_gateway_table_is_a_collapsible_section() -> None:
    gateways = tuple(
        GatewayChange(name=f"g{i}", status="added", cluster="c", namespace=f"n{i}")
        for i in range(3)
    )
    diff = stack_diff(gateways=gateways)
    report = build_report([diff], base_label="b", command="c")
    table = report[report.index("<details><summary>Per gateway (3)</summary>") :]
    assert table.startswith(
        "<details><summary>Per gateway (3)</summary>\n\n| Gateway | Change | Details |\n"
    )
    assert "| `g2` | added | cluster `c`, namespace `n2`, address `-` |\n\n</details>\n" in table


def diff_with(**fields: Any) -> StackDiff:
    objects = (
        ObjectChange(
            path="manifests/c/n/x.yaml",
            kind="ConfigMap",
            status="changed",
            old="a: 1\n",
            new="a: 2\n",
        ),
    )
    return stack_diff(objects=objects, **fields)


def operation(type_: str, name: str, op: Op, because: str) -> Operation:
    """What the providers do with ``name`` of gateway ``g``, for one changed input."""
    return Operation(type=type_, name=name, gateway="g", op=op, because=(because,))


def test_replacements_say_which_are_outages() -> None:
    operations = (
        operation("kubernetes:core/v1:Namespace", "g-ns", "replace-delete-first", "metadata.name"),
        operation("tls:index/privateKey:PrivateKey", "g-key", "replace", "algorithm"),
        operation("kubernetes:apps/v1:Deployment", "g-deploy", "update", "spec.replicas"),
    )
    section = risk_section(
        build_report([diff_with(operations=operations)], base_label="b", command="c")
    )
    assert (
        "**Replaces** (2):\n\n"
        "- stack `s`, gateway `g`: Namespace `g-ns` **delete-before-replace: an outage** until the"
        " new one is ready (`metadata.name` changes)\n"
        "- stack `s`, gateway `g`: PrivateKey `g-key` replaced (create-before-delete)"
        " (`algorithm` changes)\n\n"
    ) in section
    assert "g-deploy" not in section  # an update in place is no risk


def test_who_gains_a_role_is_listed_with_groups_flagged() -> None:
    access = (
        AccessChange(gateway="g", principal="group:/staff", role="admin", change="gains"),
        AccessChange(gateway="g", principal="group:/eng/platform", role="user", change="gains"),
        AccessChange(gateway="g", principal="user:alice", role="user", change="gains"),
        AccessChange(gateway="g", principal="user:bob", role="admin", change="loses"),
    )
    section = risk_section(build_report([diff_with(access=access)], base_label="b", command="c"))
    assert (
        "**Grants a role** (3):\n\n"
        "- stack `s`, gateway `g`: `group:/staff` gains **admin** (**broad**: a top-level group;"
        " every member and every subgroup's member gains it)\n"
        "- stack `s`, gateway `g`: `group:/eng/platform` gains **user** (a group: every member and"
        " every subgroup's member gains it)\n"
        "- stack `s`, gateway `g`: `user:alice` gains **user**\n\n"
    ) in section
    assert "bob" not in section  # losing a role is in the summary's access section


def test_a_change_without_risk_says_so_and_no_change_has_no_section() -> None:
    report = build_report([diff_with()], base_label="b", command="c")
    assert risk_section(report) == f"## Risks\n\n{risks.NO_RISK}\n\n{risks.VOCABULARY}\n\n"
    quiet = stack_diff()
    assert build_report([quiet], base_label="b", command="c").startswith(
        "## Offline diff: stack `s`"
    )


def test_more_risks_than_the_rows_are_counted() -> None:
    gateways = tuple(
        GatewayChange(name=f"g{i:02d}", status="removed", cluster="c", namespace=f"n{i:02d}")
        for i in range(risks.RISK_ROWS + 5)
    )
    diff = stack_diff(gateways=gateways)
    section = risk_section(build_report([diff], base_label="b", command="c", limit=3_000))
    assert f"**Destroys** ({risks.RISK_ROWS + 5}):" in section
    assert section.count("\n- stack `s`: gateway ") == risks.RISK_ROWS
    assert "\n- ... and 5 more\n" in section


def test_uncommitted_declarations_are_named(tmp_path: Path) -> None:
    write_text(tmp_path, "gateways/test/kept.yaml", "a: 1\n")
    write_text(tmp_path, "gateways/test/edited.yaml", "a: 1\n")
    write_text(tmp_path, "gateways/test/staged.yaml", "a: 1\n")
    write_text(tmp_path, "Pulumi.test.yaml", "config: {}\n")
    write_text(tmp_path, "README.md", "x\n")
    git(tmp_path, "init", "--quiet")
    git(tmp_path, "add", "--all")
    git(tmp_path, "commit", "--quiet", "-m", "base")
    write_text(tmp_path, "gateways/test/edited.yaml", "a: 2\n")
    write_text(tmp_path, "gateways/test/new.yaml", "a: 1\n")
    write_text(tmp_path, "gateways/test/staged.yaml", "a: 3\n")
    git(tmp_path, "add", "gateways/test/staged.yaml")
    (tmp_path / "Pulumi.test.yaml").unlink()
    write_text(tmp_path, "README.md", "y\n")  # not a declaration
    write_text(tmp_path, "notes.txt", "z\n")

    found = risks.uncommitted(tmp_path)

    assert found == (
        risks.Uncommitted(path="Pulumi.test.yaml", state="deleted"),
        risks.Uncommitted(path="gateways/test/edited.yaml", state="modified"),
        risks.Uncommitted(path="gateways/test/new.yaml", state="untracked"),
        risks.Uncommitted(path="gateways/test/staged.yaml", state="modified"),
    )
    section = risk_section(
        build_report([diff_with()], base_label="b", command="c", uncommitted=found)
    )
    assert (
        "**Not committed** (4):\n\n- `Pulumi.test.yaml` (deleted): this report includes it as the"
        " working tree has it; the pull request does not until it is committed\n"
    ) in section
    assert "- `gateways/test/new.yaml` (untracked): " in section


def test_outside_a_repository_nothing_is_uncommitted(tmp_path: Path) -> None:
    write_text(tmp_path, "gateways/test/a.yaml", "a: 1\n")
    assert risks.uncommitted(tmp_path) == ()


def blob(index: int, status: Status) -> ObjectChange:
    body = "".join(f"line: {index}-{n}\n" for n in range(40))
    return ObjectChange(
        path=f"manifests/c/n/{status}-{index:02d}.yaml",
        kind="ConfigMap",
        status=status,
        old="" if status == "added" else body,
        new="" if status == "removed" else body + "more: 1\n",
    )


def test_the_bound_cuts_added_objects_before_removed_ones_and_no_limit_keeps_all() -> None:
    statuses: tuple[Status, ...] = ("added", "removed")
    objects = tuple(blob(i, s) for s in statuses for i in range(10))
    diff = stack_diff(objects=objects)
    cut = build_report(
        [diff], base_label="b", command="gatewayctl diff s --base main", limit=12_000
    )
    kept = re.findall(r"^<details><summary>(added|removed) ", cut, re.MULTILINE)
    assert kept.count("removed") == 10
    assert 0 < kept.count("added") < 10
    omitted = 10 - kept.count("added")
    assert (
        f"**Note:** {omitted} of 20 object diffs omitted ({omitted} added) to keep this report"
        " under 12,000 characters; the summary above is complete. Run"
        " `gatewayctl diff s --base main --no-limit` to see them all."
    ) in cut
    whole = build_report([diff], base_label="b", command="c", limit=0)
    assert len(re.findall(r"^<details><summary>(added|removed) ", whole, re.MULTILINE)) == 20
    assert "omitted" not in whole
    assert whole.startswith(cut[: cut.index("> **Note:**")])

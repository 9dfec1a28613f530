"""Where each problem is (``gatewayctl.inputs.locations``): ``path:line:column: field: problem``, at
the value written after its key, at the key of an unknown field, at the nearest written parent
of a field left to its default, in declarations and stack files alike (issue 25 item 4)."""

from __future__ import annotations

import os
from pathlib import Path

from gatewayctl.errors import Problem
from gatewayctl.inputs.locations import find, locate
from gatewayctl.inputs.yamlfile import compose_yaml
from tests.builders import CONFIG_FILE, DECLARATIONS, head, write_text
from tests.hostile_helpers import reported_problems, run_cli

STACK_TEXT = """\
config:
  hypershell-gateways:declarationsDir: gateways/test
  hypershell-gateways:clusters:
    c1:
      capabilities: {openshift: true}
      ingress: {mode: route}
      baseDomain: apps.example.com
      database: {adminHost: db.example.com, adminUser: admin, host: db.example.com}
  hypershell-gateways:clusterSecrets:
    c1: {dbAdminPassword: pw}
"""


def places(root: Path, paths: list[str]) -> list[tuple[str, str]]:
    """``(path:line:column, field)`` of each problem ``validate`` prints (exit 2)."""
    outcome = run_cli("--root", str(root), "validate", "test")
    assert outcome.code == 2, outcome
    return [
        (p.path + p.location, p.rest.split(": ")[0]) for p in reported_problems(outcome.err, paths)
    ]


def test_each_problem_of_a_declaration_is_at_its_value_its_key_or_its_parent(
    tmp_path: Path,
) -> None:
    write_text(tmp_path, CONFIG_FILE, STACK_TEXT)
    a = f"{DECLARATIONS}/team-a.yaml"
    write_text(
        tmp_path,
        a,
        head("team-a")
        + "spec:\n"
        + "  replicas: ten\n"  # line 6: at the value
        + "  exposure:\n"
        + "    colour: blue\n"  # line 8: an unknown field, at its key
        + "  credentials: {driver: vault}\n",  # line 9: vault is not written: at its parent
    )
    # Valid on its own; the rules across gateways place theirs too.
    b = f"{DECLARATIONS}/team-b.yaml"
    text = "spec:\n  signIn: none\n  exposure: {host: gw-openshell-team-a.apps.example.com}\n"
    write_text(tmp_path, b, head("team-b") + text)
    c = f"{DECLARATIONS}/team-c.yaml"
    write_text(
        tmp_path, c, head("team-c") + "spec:\n  signIn: none\n  namespace: openshell-team-d\n"
    )
    d = f"{DECLARATIONS}/team-d.yaml"  # its default namespace is team-c's: placed at `spec`
    write_text(tmp_path, d, head("team-d") + "spec:\n  signIn: none\n")

    assert places(tmp_path, [a, b, c, d]) == [
        (f"{a}:9:16", "spec.credentials.vault"),
        (f"{a}:8:5", "spec.exposure.colour"),
        (f"{a}:6:13", "spec.replicas"),
        (f"{b}:7:20", "spec.exposure.host"),
        (f"{d}:5:1", "spec.exposure.host"),  # derived from the namespace: team-c's too
        (f"{d}:5:1", "spec.namespace"),
    ]


def test_a_stack_files_problems_are_under_config_with_or_without_the_namespace(
    tmp_path: Path,
) -> None:
    write_text(
        tmp_path,
        CONFIG_FILE,
        "common: &common\n"
        "  ingress: {mode: sideways}\n"  # line 2: merged into c1 below, placed where written
        "config:\n"
        "  hypershell-gateways:declarationsDir: gateways/nowhere\n"  # named without namespace
        "  hypershell-gateways:clusters:\n"
        "    c1:\n"
        "      <<: *common\n"
        "      capabilities: {openshift: true}\n"
        "      baseDomain: Not A Domain\n"  # line 9
        "      registryMirrors:\n"
        "        ghcr.io/acme: Not An Image\n"  # line 11: a key with dots
        "      database: {adminHost: db.example.com, adminUser: admin, host: db.example.com}\n"
        "  hypershell-gateways:clusterSecrets:\n"
        "    c1: {dbAdminPassword: pw}\n",
    )

    assert places(tmp_path, [CONFIG_FILE]) == [
        (f"{CONFIG_FILE}:4:40", "declarationsDir"),
        (f"{CONFIG_FILE}:9:19", "hypershell-gateways:clusters.c1.baseDomain"),
        (f"{CONFIG_FILE}:2:19", "hypershell-gateways:clusters.c1.ingress.mode"),
        (f"{CONFIG_FILE}:11:23", "hypershell-gateways:clusters.c1.registryMirrors.ghcr.io/acme"),
    ]


# --- what is read, and what is left without a place -----------------------------------------

TEXT = "a:\n  b: 1\n  c: [x, y]\n  d:\n    - e\n"


def test_find_takes_values_keys_list_items_and_parents() -> None:
    tree = compose_yaml(TEXT)
    assert tree is not None

    def at(field: str, *, at_key: bool = False) -> tuple[int, int] | None:
        mark = find(tree, field, at_key=at_key)
        return None if mark is None else (mark.line + 1, mark.column + 1)

    assert at("a.b") == (2, 6)  # the scalar after its key
    assert at("a.b", at_key=True) == (2, 3)
    assert at("a.c") == (3, 6)  # a flow list, on its key's line
    assert at("a.c.1") == (3, 10)
    assert at("a.d") == (4, 3)  # a block list starts on the next line: the key
    assert at("a.d.0") == (5, 7)
    assert at("a.z") == (1, 1)  # not written: its parent
    assert at("z") is None  # nothing of it is written


def test_only_the_projects_regular_yaml_files_are_read(tmp_path: Path) -> None:
    root, outside = tmp_path / "project", tmp_path / "outside.yaml"
    write_text(root, "in.yaml", TEXT)
    outside.write_text(TEXT)
    (root / "linked.yaml").symlink_to(outside)
    os.mkfifo(root / "fifo.yaml")  # would block a reader: never opened
    write_text(root, "notes.txt", TEXT)

    problems = [
        Problem("in.yaml", "a.b", "m"),
        Problem("in.yaml", "", "a problem of the whole file"),
        Problem("linked.yaml", "a.b", "m"),
        Problem("fifo.yaml", "a.b", "m"),
        Problem("notes.txt", "a.b", "m"),
        Problem("missing.yaml", "a.b", "m"),
        Problem("in.yaml", "a.b", "already placed", line=7, column=2),
    ]

    assert [p.where for p in locate(problems, root)] == [
        "in.yaml:2:6",
        "in.yaml",
        "linked.yaml",
        "fifo.yaml",
        "notes.txt",
        "missing.yaml",
        "in.yaml:7:2",
    ]

"""The declarations directory (``gatewayctl.inputs.declarations``): what it may hold, every entry
read or reported, and one declaration file's shape."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from gatewayctl.errors import InvalidInputError
from tests.builders import (
    API_VERSION,
    CONFIG_FILE,
    DECLARATIONS,
    PREFIX,
    declaration,
    head,
    one_cluster,
    write_declaration_text,
    write_gateway,
    write_stack,
    write_text,
)
from tests.helpers import load, load_problems, only_gateway, where

# --- the declarations directory and what it may hold ----------------------------------------


def test_empty_declarations_directory_loads_no_gateways(tmp_path: Path) -> None:
    write_stack(tmp_path)

    assert load(tmp_path).gateways == ()


def test_missing_declarations_directory_is_a_problem_of_the_stack_config(tmp_path: Path) -> None:
    write_stack(tmp_path, extra={f"{PREFIX}declarationsDir": "gateways/nowhere"})

    assert load_problems(tmp_path) == [
        (CONFIG_FILE, "declarationsDir", "'gateways/nowhere' does not exist")
    ]


def test_declarations_directory_that_is_a_file_is_a_problem_of_the_stack_config(
    tmp_path: Path,
) -> None:
    write_stack(tmp_path, extra={f"{PREFIX}declarationsDir": "gateways/test.yaml"})
    write_text(tmp_path, "gateways/test.yaml", head("team-a"))

    assert load_problems(tmp_path) == [
        (CONFIG_FILE, "declarationsDir", "'gateways/test.yaml' is not a directory")
    ]


def test_missing_declarations_directory_is_reported_with_a_broken_config(tmp_path: Path) -> None:
    write_stack(
        tmp_path,
        clusters=one_cluster(baseDomain="Not A Domain"),
        extra={f"{PREFIX}declarationsDir": "gateways/nowhere"},
    )

    assert where(load_problems(tmp_path)) == [
        (CONFIG_FILE, "declarationsDir"),
        (CONFIG_FILE, f"{PREFIX}clusters.c1.baseDomain"),
    ]


def test_declarations_directory_linked_outside_the_project_is_a_problem(tmp_path: Path) -> None:
    root, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    write_stack(root)
    (root / DECLARATIONS).rmdir()
    (root / DECLARATIONS).symlink_to(elsewhere, target_is_directory=True)
    write_text(elsewhere, "team-a.yaml", yaml.safe_dump(declaration("team-a")))

    assert load_problems(root) == [
        (
            CONFIG_FILE,
            "declarationsDir",
            f"{DECLARATIONS!r} leads outside the project through a symbolic link; it must be a"
            " path inside the project",
        )
    ]


def test_declarations_directory_linked_inside_the_project_is_read(tmp_path: Path) -> None:
    write_stack(tmp_path)
    (tmp_path / DECLARATIONS).rmdir()
    (tmp_path / DECLARATIONS).symlink_to(tmp_path / "inventory", target_is_directory=True)
    write_text(tmp_path, "inventory/team-a.yaml", yaml.safe_dump(declaration("team-a")))

    assert only_gateway(tmp_path).source == f"{DECLARATIONS}/team-a.yaml"


def test_absolute_declarations_dir_does_not_crash(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    project = tmp_path / "project"
    write_text(outside, "team-a.yaml", yaml.safe_dump(declaration("team-a")))
    write_stack(project, extra={f"{PREFIX}declarationsDir": str(outside)})

    try:
        gateways = load(project).gateways
    except InvalidInputError:
        return  # refusing an absolute path with a problem is fine too
    assert [g.name for g in gateways] == ["team-a"]


ONLY_DECLARATIONS = (
    "only *.yaml and *.yml files are declarations (names starting with '.' or README are ignored)"
)


@pytest.mark.parametrize(
    "file",
    ["team-a.YAML", "team-a.Yml", "team-a.json", "team-a", "team-a.yaml~", "team-a.yaml.bak"],
)
def test_file_that_is_not_yaml_or_yml_is_a_problem(tmp_path: Path, file: str) -> None:
    write_stack(tmp_path)
    source = write_declaration_text(tmp_path, file, yaml.safe_dump(declaration("team-a")))

    assert load_problems(tmp_path) == [(source, "", ONLY_DECLARATIONS)]


def test_subdirectory_is_a_problem(tmp_path: Path) -> None:
    write_stack(tmp_path)
    write_gateway(tmp_path, "team-a", file="archive.yaml/team-a.yaml")
    (tmp_path / DECLARATIONS / "empty").mkdir()

    assert load_problems(tmp_path) == [
        (
            f"{DECLARATIONS}/archive.yaml",
            "",
            "is a directory; declarations are not read from subdirectories",
        ),
        (
            f"{DECLARATIONS}/empty",
            "",
            "is a directory; declarations are not read from subdirectories",
        ),
    ]


def test_dangling_symbolic_link_is_a_problem(tmp_path: Path) -> None:
    write_stack(tmp_path)
    (tmp_path / DECLARATIONS / "team-a.yaml").symlink_to("team-a.yaml.orig")

    assert load_problems(tmp_path) == [
        (
            f"{DECLARATIONS}/team-a.yaml",
            "",
            "broken symbolic link to 'team-a.yaml.orig': No such file or directory",
        )
    ]


def test_symbolic_link_loop_is_a_problem(tmp_path: Path) -> None:
    write_stack(tmp_path)
    (tmp_path / DECLARATIONS / "a.yaml").symlink_to("b.yaml")
    (tmp_path / DECLARATIONS / "b.yaml").symlink_to("a.yaml")
    (tmp_path / DECLARATIONS / "self.yml").symlink_to("self.yml")

    assert load_problems(tmp_path) == [
        (
            f"{DECLARATIONS}/a.yaml",
            "",
            "broken symbolic link to 'b.yaml': Too many levels of symbolic links",
        ),
        (
            f"{DECLARATIONS}/b.yaml",
            "",
            "broken symbolic link to 'a.yaml': Too many levels of symbolic links",
        ),
        (
            f"{DECLARATIONS}/self.yml",
            "",
            "broken symbolic link to 'self.yml': Too many levels of symbolic links",
        ),
    ]


def test_symbolic_link_outside_the_project_is_a_problem(tmp_path: Path) -> None:
    root = tmp_path / "project"
    write_stack(root)
    write_text(tmp_path, "team-a.yaml", yaml.safe_dump(declaration("team-a")))
    (root / DECLARATIONS / "team-a.yaml").symlink_to("../../../team-a.yaml")
    (root / DECLARATIONS / "team-b.yaml").symlink_to(tmp_path / "team-a.yaml")

    assert load_problems(root) == [
        (
            f"{DECLARATIONS}/team-a.yaml",
            "",
            "symbolic link to '../../../team-a.yaml' leads outside the project; a declaration"
            " must be inside it",
        ),
        (
            f"{DECLARATIONS}/team-b.yaml",
            "",
            f"symbolic link to '{tmp_path / 'team-a.yaml'}' leads outside the project; a"
            " declaration must be inside it",
        ),
    ]


def test_symbolic_link_inside_the_project_is_read(tmp_path: Path) -> None:
    write_stack(tmp_path)
    write_text(tmp_path, "common/team-a.yaml", yaml.safe_dump(declaration("team-a")))
    (tmp_path / DECLARATIONS / "team-a.yaml").symlink_to("../../common/team-a.yaml")

    assert only_gateway(tmp_path).source == f"{DECLARATIONS}/team-a.yaml"


def test_symbolic_link_to_a_directory_is_a_problem(tmp_path: Path) -> None:
    write_stack(tmp_path)
    (tmp_path / "shared").mkdir()
    (tmp_path / DECLARATIONS / "more.yaml").symlink_to(tmp_path / "shared")

    assert load_problems(tmp_path) == [
        (
            f"{DECLARATIONS}/more.yaml",
            "",
            "is a directory; declarations are not read from subdirectories",
        )
    ]


def test_special_file_is_a_problem_and_is_not_opened(tmp_path: Path) -> None:
    write_stack(tmp_path)
    os.mkfifo(tmp_path / DECLARATIONS / "team-a.yaml")  # opening it would block

    assert load_problems(tmp_path) == [(f"{DECLARATIONS}/team-a.yaml", "", "not a regular file")]


def test_every_unread_entry_is_reported_with_the_declarations_problems(tmp_path: Path) -> None:
    write_stack(tmp_path)
    write_gateway(tmp_path, "good")
    bad = write_gateway(tmp_path, "bad", {"replicas": 0})
    write_declaration_text(tmp_path, "notes.txt", "\xff")
    (tmp_path / DECLARATIONS / "gone.yml").symlink_to("nowhere.yml")
    (tmp_path / DECLARATIONS / "old").mkdir()
    write_declaration_text(tmp_path, "README.md", "docs")

    assert where(load_problems(tmp_path)) == [
        (bad, "spec.replicas"),
        (f"{DECLARATIONS}/gone.yml", ""),
        (f"{DECLARATIONS}/notes.txt", ""),
        (f"{DECLARATIONS}/old", ""),
    ]


# --- one declaration file -------------------------------------------------------------------


def test_unknown_field_in_spec(tmp_path: Path) -> None:
    write_stack(tmp_path)
    source = write_gateway(tmp_path, "team-a", {"exposure": {"hots": "x.example.org"}})

    assert load_problems(tmp_path) == [
        (source, "spec.exposure.hots", "unknown field; did you mean 'host'?")
    ]


def test_unknown_top_level_and_metadata_fields(tmp_path: Path) -> None:
    write_stack(tmp_path)
    source = write_gateway(tmp_path, "team-a", status={}, metadata={"annotations": {"a": "b"}})

    assert load_problems(tmp_path) == [
        (source, "metadata.annotations", "unknown field"),
        (source, "status", "unknown field"),
    ]


@pytest.mark.parametrize(
    ("replicas", "message"),
    [
        ("two", "Input should be a valid integer"),
        (0, "Input should be greater than or equal to 1"),
        (11, "Input should be less than or equal to 10"),
        (1.5, "Input should be a valid integer"),
    ],
)
def test_bad_replicas(tmp_path: Path, replicas: object, message: str) -> None:
    write_stack(tmp_path)
    source = write_gateway(tmp_path, "team-a", {"replicas": replicas})

    assert load_problems(tmp_path) == [(source, "spec.replicas", message)]


def test_bad_api_version_and_kind(tmp_path: Path) -> None:
    write_stack(tmp_path)
    source = write_gateway(tmp_path, "team-a", apiVersion="v1", kind="Pod")

    assert load_problems(tmp_path) == [
        (source, "apiVersion", "Input should be 'hypershell.redhat.io/v1alpha1'"),
        (source, "kind", "Input should be 'Gateway'"),
    ]


def test_missing_api_version_kind_and_metadata(tmp_path: Path) -> None:
    write_stack(tmp_path)
    source = write_declaration_text(tmp_path, "team-a.yaml", "spec: {}\n")

    assert load_problems(tmp_path) == [
        (source, "apiVersion", "required field is missing"),
        (source, "kind", "required field is missing"),
        (source, "metadata", "required field is missing"),
    ]


@pytest.mark.parametrize("name", ["Team-A", "team_a", "-team", "team-", "team.a"])
def test_name_must_be_a_dns_label(tmp_path: Path, name: str) -> None:
    write_stack(tmp_path)
    source = write_gateway(tmp_path, name)

    assert load_problems(tmp_path) == [
        (
            source,
            "metadata.name",
            f"{name!r} is not a DNS-1123 label (lowercase a-z, 0-9, inner '-', at most 63)",
        )
    ]


@pytest.mark.parametrize(
    ("spec_text", "field"),
    [
        pytest.param("metadata:\n  name: 2024\n", "metadata.name"),
        pytest.param("metadata:\n  name: no\n", "metadata.name"),
        pytest.param("metadata:\n  name:\n", "metadata.name"),
        pytest.param(
            "metadata:\n  name: team-a\nspec:\n  cluster: 7\n",
            "spec.cluster",
        ),
        pytest.param(
            "metadata:\n  name: team-a\nspec:\n  namespace: true\n",
            "spec.namespace",
        ),
        pytest.param(
            "metadata:\n  name: team-a\nspec:\n  images: {gateway: 5}\n",
            "spec.images.gateway",
        ),
        ("metadata:\n  name: team-a\nspec:\n  exposure: {host: 5}\n", "spec.exposure.host"),
    ],
    ids=["name-int", "name-bool", "name-null", "cluster", "namespace", "image", "host"],
)
def test_non_string_scalar_is_a_problem_not_a_crash(
    tmp_path: Path, spec_text: str, field: str
) -> None:
    write_stack(tmp_path)
    text = f"apiVersion: {API_VERSION}\nkind: Gateway\n{spec_text}"
    source = write_declaration_text(tmp_path, "team-a.yaml", text)

    assert load_problems(tmp_path) == [(source, field, "Input should be a valid string")]


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"storageClass": 5}, "clusters.c1.storageClass"),
        ({"registryMirrors": {"ghcr.io/acme": 5}}, "clusters.c1.registryMirrors.ghcr.io/acme"),
    ],
    ids=["storage-class", "mirror-target"],
)
def test_non_string_stack_value_is_a_problem_not_a_crash(
    tmp_path: Path, changes: dict[str, Any], field: str
) -> None:
    write_stack(tmp_path, clusters=one_cluster(**changes))

    assert load_problems(tmp_path) == [
        (CONFIG_FILE, f"{PREFIX}{field}", "Input should be a valid string")
    ]


def test_name_longer_than_50_names_the_limit(tmp_path: Path) -> None:
    name = "a" * 51
    write_stack(tmp_path)
    source = write_gateway(tmp_path, name)

    problems = load_problems(tmp_path)

    assert where(problems) == [(source, "metadata.name")]
    assert problems[0][2].startswith(f"{name!r} is 51 characters; at most 50 so that")
    assert f"'gw-openshell-{name}'" in problems[0][2]


def test_spec_namespace_longer_than_60_names_the_limit(tmp_path: Path) -> None:
    namespace = "n" * 61
    write_stack(tmp_path)
    source = write_gateway(tmp_path, "team-a", {"namespace": namespace})

    problems = load_problems(tmp_path)

    assert where(problems) == [(source, "spec.namespace")]
    assert problems[0][2] == (
        f"{namespace!r} is 61 characters; at most 60 so that the host label"
        f" 'gw-{namespace}' fits in 63"
    )


def test_file_name_must_match_metadata_name(tmp_path: Path) -> None:
    write_stack(tmp_path)
    source = write_gateway(tmp_path, "team-b", file="team-a.yaml")

    assert load_problems(tmp_path) == [
        (source, "metadata.name", "'team-b' must match the file name 'team-a'")
    ]

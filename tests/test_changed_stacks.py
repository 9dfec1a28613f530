"""``gatewayctl stacks --changed DIR`` and ``driver --list ... --changed DIR``: the stacks whose
recorded offline diff changes (``gatewayctl.deploy.changed``), which the pull-request workflow
previews and a push deploys (issue 39 point 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gatewayctl.cli import main as cli
from tests.diff_helpers import clone, declare, run_diff


def _listed(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(list(args))
    printed = capsys.readouterr()
    return code, printed.out, printed.err


@pytest.fixture(scope="module")
def records(pristine: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A clone whose working tree changes one gateway of ``local``; the JSON of
    ``diff --all --format json`` against ``main`` in one directory, of ``diff local`` alone in
    another."""
    repo = clone(pristine, tmp_path_factory.mktemp("changed") / "repo")
    declare(repo, "local", "offline", "  signIn: none\n  replicas: 2")
    every = tmp_path_factory.mktemp("every")
    run = run_diff(repo, "--all", "--base", "main", "--format", "json")
    assert run.code == 3, run.err
    (every / "all.json").write_text(run.out)
    one = tmp_path_factory.mktemp("one")
    run = run_diff(repo, "local", "--base", "main", "--format", "json")
    assert run.code == 3, run.err
    (one / "local.json").write_text(run.out)
    return repo, every


def test_only_the_stack_the_change_touches_is_listed(
    records: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    repo, every = records
    root = ["--root", str(repo)]
    assert _listed(capsys, *root, "stacks", "--changed", str(every)) == (0, '["local"]\n', "")
    assert _listed(capsys, *root, "stacks", "--changed", str(every), "ibm", "aws") == (
        0,
        "[]\n",
        "",
    )
    assert _listed(capsys, *root, "stacks", "ibm", "aws") == (0, '["ibm","aws"]\n', "")
    # The deploy workflow's question: of the stacks CI deploys, which does the push change?
    assert _listed(capsys, *root, "driver", "--list", "ci", "--changed", str(every), "ibm", "aws")[
        :2
    ] == (0, "[]\n")
    assert _listed(capsys, *root, "driver", "--list", "ci", "--changed", str(every), "local")[
        :2
    ] == (0, '["local"]\n')


def test_a_stack_without_a_record_is_an_error_never_unchanged(
    records: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, _ = records
    one = tmp_path / "one"
    one.mkdir()
    run = run_diff(repo, "local", "--base", "main", "--format", "json")
    (one / "local.json").write_text(run.out)
    code, _, err = _listed(
        capsys, "--root", str(repo), "stacks", "--changed", str(one), "-o", "yaml"
    )
    assert code == 2
    assert [line for line in err.splitlines() if line.startswith("error:")] == [
        f"error: {one}: no offline diff recorded for stack 'aws': its diff did not complete",
        f"error: {one}: no offline diff recorded for stack 'ibm': its diff did not complete",
    ]
    assert _listed(capsys, "--root", str(repo), "stacks", "--changed", str(one), "local")[:2] == (
        0,
        '["local"]\n',
    )


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (
            "not json",
            "not the JSON of `gatewayctl diff`: Expecting value: line 1 column 1 (char 0)",
        ),
        ("[]", "stacks: missing: not `gatewayctl diff` JSON"),
        ('{"stacks": [{"stack": "local"}]}', "stacks[0]: expected a stack and its changed flag"),
    ],
)
def test_a_record_that_is_not_the_diffs_json_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, problem: str
) -> None:
    (tmp_path / "bad.json").write_text(content)
    code, _, err = _listed(capsys, "stacks", "--changed", str(tmp_path), "-o", "yaml")
    assert code == 2
    assert f"error: {tmp_path / 'bad.json'}: {problem}" in err.splitlines()


def test_one_stack_recorded_twice_apart_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.json").write_text(json.dumps({"stacks": [{"stack": "local", "changed": True}]}))
    (tmp_path / "b.json").write_text(json.dumps({"stacks": [{"stack": "local", "changed": False}]}))
    code, _, err = _listed(capsys, "stacks", "--changed", str(tmp_path), "local", "-o", "yaml")
    assert code == 2
    assert f"error: {tmp_path / 'b.json'}: stacks[0]: stack 'local' recorded twice, apart" in (
        err.splitlines()
    )


def test_changed_filters_a_drivers_list_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _listed(capsys, "driver", "--changed", str(tmp_path), "ibm")
    assert code == 2
    assert "--changed: filters a list: use it with --list ci or --list operator" in err
    code, _, err = _listed(capsys, "stacks", "--changed", str(tmp_path / "none"), "-o", "yaml")
    assert code == 2
    assert f"error: {tmp_path / 'none'}: not a directory of offline diff records" in err


# --- deploy/stacks.yaml: which stacks CI deploys ------------------------------------------------


def _deployed_project(root: Path, settings: str) -> None:
    from tests.builders import write_stack, write_text

    for stack in ("aws-1", "aws-2", "ibm", "local"):
        write_stack(root, stack=stack)
    write_text(root, "deploy/stacks.yaml", settings)


def test_a_pattern_takes_every_shard_of_an_environment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _deployed_project(tmp_path, "deployed: [ibm, aws-*]\n")
    assert _listed(capsys, "--root", str(tmp_path), "stacks", "--deployed") == (
        0,
        '["aws-1","aws-2","ibm"]\n',
        "",
    )
    assert _listed(capsys, "--root", str(tmp_path), "driver", "--list", "ci", "--deployed")[:2] == (
        0,
        '["aws-1","aws-2","ibm"]\n',
    )


@pytest.mark.parametrize(
    ("settings", "problem"),
    [
        (
            "deployed: [ibm, azure-*]\n",
            "error: deploy/stacks.yaml:1:17: deployed.1: 'azure-*' matches no stack; the stacks"
            " here are aws-1, aws-2, ibm, local",
        ),
        ("deployed: []\n", "error: deploy/stacks.yaml:1:11: deployed: expected a list of stack"),
        (
            "deployed: [IBM]\n",
            "error: deploy/stacks.yaml:1:12: deployed.0: 'IBM' is no stack name or pattern",
        ),
        ("deploy: [ibm]\n", "error: deploy/stacks.yaml:1:1: deploy: unknown key; the file holds"),
    ],
)
def test_a_deployed_entry_that_takes_nothing_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], settings: str, problem: str
) -> None:
    _deployed_project(tmp_path, settings)
    code, _, err = _listed(capsys, "--root", str(tmp_path), "stacks", "--deployed", "-o", "yaml")
    assert code == 2
    assert err.splitlines()[0].startswith(problem), err


def test_deployed_takes_the_place_of_stacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _deployed_project(tmp_path, "deployed: [ibm]\n")
    code, _, err = _listed(capsys, "--root", str(tmp_path), "driver", "--deployed", "ibm")
    assert code == 2
    assert "--deployed: takes the place of STACKs: not both" in err
    code, _, err = _listed(capsys, "--root", str(tmp_path), "driver")
    assert code == 2
    assert "STACK: name the stacks, or give --deployed" in err

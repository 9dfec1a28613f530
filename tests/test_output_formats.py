"""Output that fits a terminal (issue 25 item 3): the result on stdout, notes and progress on
stderr, ``-q`` silencing the notes; tables of one row per item, the long columns in ``-o
wide``; every command's ``-o json``/``yaml`` (``--format`` where ``-o``/``--output`` name a
file), with its keys sorted and no secret value in any field; on invalid input the problems
as a document beside the usual lines (``gatewayctl.printing``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from components import tokens
from gatewayctl.cli import main as cli
from gatewayctl.cli import render as render_command
from tests.builders import (
    ADOPTED_NS,
    NOT_COPIED,
    adopting_project,
    copy_project,
    edited_config,
    git,
    write_gateway,
)
from tests.hostile_helpers import Outcome, leaks, run_cli
from tests.support import ROOT, STACKS

ABSENT = (
    " is not in the project directory; `pulumi up` needs it to verify the database server (the"
    " offline render does not)"
)
AWS_NOTES = [
    f"Pulumi.aws.yaml: clusters.{cluster}.database.sslRootCert: 'certs/aws-rds-global-bundle.pem'"
    + ABSENT
    for cluster in ("rosa-us-east-1", "rosa-us-west-2")
]
IBM_SECURE_NOTE = (
    "2 `secure:` config values cannot be decrypted offline; rendered with placeholders"
    " (redacted in the output like every secret)"
)
IBM_CA_NOTE = (
    "Pulumi.ibm.yaml: clusters.roks-us-east.database.sslRootCert:"
    " 'certs/ibm-databases-for-postgresql-ca.pem'" + ABSENT
)


def sample_secrets(root: Path = ROOT) -> list[str]:
    """Every secret of the stack files: each `clusterSecrets` value and `secure:` ciphertext."""
    found: list[str] = []

    def walk(value: Any, inside: bool) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "secure" and isinstance(item, str):
                    found.append(item)
                else:
                    walk(item, inside or str(key).endswith(":clusterSecrets"))
        elif isinstance(value, list):
            for item in value:
                walk(item, inside)
        elif inside and isinstance(value, str):
            found.append(value)

    for stack in STACKS:
        walk(yaml.safe_load((root / f"Pulumi.{stack}.yaml").read_text(encoding="utf-8")), False)
    return found


def document(outcome: Outcome, *, secrets: list[str] | None = None) -> Any:
    """The JSON on stdout: keys sorted, indented, no secret of the samples in it."""
    value = json.loads(outcome.out)
    assert outcome.out == json.dumps(value, indent=2, sort_keys=True) + "\n"
    assert leaks([outcome.out], secrets if secrets is not None else sample_secrets()) == []
    return value


def test_the_samples_have_secrets_to_look_for() -> None:
    # local's plaintext admin password, and the placeholders of aws's and ibm's `secure:`.
    assert len(sample_secrets()) >= 3


# --- one option, the same everywhere --------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["validate", "local"],
        ["render", "local"],
        ["import-file", "ibm"],
        ["promote", "r", "--to", "local"],
        ["stacks"],
        ["driver", "local"],
        ["status", "ibm", "--from", "x.json"],
    ],
    ids=lambda argv: argv[0],
)
def test_o_output_and_format_name_the_format(argv: list[str]) -> None:
    for flag in ("-o", "--output", "--format"):
        assert cli.parser().parse_args([*argv, flag, "yaml"]).format == "yaml"


def test_where_output_names_a_file_the_format_is_format() -> None:
    args = cli.parser().parse_args(
        ["diff", "local", "--base", "main", "--output", "r.md", "--format", "json"]
    )
    assert (args.output, args.format) == (Path("r.md"), "json")
    graph = cli.parser().parse_args(["graph", "--all", "-o", "g.mmd", "--format", "dot"])
    assert (graph.output, graph.format) == (Path("g.mmd"), "dot")


# --- validate -------------------------------------------------------------------------------


def test_validate_prints_the_result_on_stdout_and_its_notes_on_stderr() -> None:
    assert run_cli("validate", "aws") == Outcome(
        0,
        "Pulumi.aws.yaml: ok (4 gateways, 2 clusters)\n",
        "".join(f"note: {note}\n" for note in AWS_NOTES),
    )
    assert run_cli("validate", "aws", "-q") == Outcome(
        0, "Pulumi.aws.yaml: ok (4 gateways, 2 clusters)\n", ""
    )


def test_validate_json_and_yaml() -> None:
    outcome = run_cli("validate", "aws", "--all", "-o", "json", "-q")
    # A usage error: its problem as a document too (issue 42, item 16).
    message = "name one STACK or pass --all"
    problem = {"path": None, "line": None, "column": None, "field": "", "message": message}
    assert (outcome.code, json.loads(outcome.out)) == (
        2,
        {"problems": [{**problem, "text": message}]},
    )
    outcome = run_cli("validate", "aws", "-o", "json")
    assert outcome.code == 0
    expected = {
        "deploy": False,
        "notes": AWS_NOTES,
        "stacks": [
            {
                "stack": "aws",
                "config": "Pulumi.aws.yaml",
                "clusters": ["rosa-us-east-1", "rosa-us-west-2"],
                "gateways": ["audit", "ml-platform", "payments", "search"],
            }
        ],
    }
    assert document(outcome) == expected
    assert outcome.err == "".join(f"note: {note}\n" for note in AWS_NOTES)
    yamled = run_cli("validate", "aws", "-o", "yaml", "-q")
    assert (yamled.code, yamled.err) == (0, "")
    assert yaml.safe_load(yamled.out) == expected
    assert yamled.out.startswith("deploy: false\nnotes:\n- 'Pulumi.aws.yaml: clusters.")


def test_invalid_input_with_json_prints_the_problems_as_a_document_too(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "p")
    write_gateway(project, "broken", {"replicas": "many"}, stack="local")
    text = run_cli("--root", str(project), "validate", "local")
    outcome = run_cli("--root", str(project), "validate", "local", "-o", "json")
    assert (outcome.code, outcome.err) == (2, text.err)  # the lines on stderr are the same
    (line, summary) = text.err.splitlines()
    assert summary == "1 problem(s); nothing written"
    written = (project / "gateways" / "local" / "broken.yaml").read_text().splitlines()
    row = next(n for n, text in enumerate(written, 1) if text.strip().startswith("replicas:"))
    column = (
        written[row - 1].index("many") + 1
    )  # the value after the key (gatewayctl.inputs.locations)
    problem = {
        "path": "gateways/local/broken.yaml",
        "line": row,
        "column": column,
        "field": "spec.replicas",
        "message": line.split("spec.replicas: ", 1)[1],
        "text": line.removeprefix("error: "),
    }
    assert document(outcome) == {"problems": [problem]}
    rendered = run_cli("--root", str(project), "render", "local", "-o", "yaml")
    assert (rendered.code, yaml.safe_load(rendered.out)) == (2, {"problems": [problem]})
    assert not (project / "build").exists()
    assert text.out == ""  # the text format prints nothing on stdout, as before


# --- render ---------------------------------------------------------------------------------


def test_render_summary_is_one_row_per_gateway(tmp_path: Path) -> None:
    out = tmp_path / "local"
    outcome = run_cli("render", "local", "--out", str(out))
    assert outcome == Outcome(
        0,
        "stack local\n"
        "NAME       CLUSTER  MODE  SIGN-IN          OVERRIDES  RESOURCES\n"
        "dev        kind     none  keycloak         -          47\n"
        "dev-build  kind     none  keycloak         gateway    59\n"
        "offline    kind     none  none (declared)  -          39\n"
        f"3 gateways, 150 resources, 61 manifests → {out}\n",
        "",
    )
    wide = run_cli("render", "local", "--out", str(out), "-o", "wide")
    assert wide.out.splitlines()[1:5] == [
        "NAME       CLUSTER  MODE  SIGN-IN          OVERRIDES  RESOURCES  ADDRESS  CONSOLE"
        "       RELEASE",
        "dev        kind     none  keycloak         -          47         -        -"
        "             openshell-0.0.110",
        "dev-build  kind     none  keycloak         gateway    59         -        port-forward"
        "  openshell-0.0.110",
        "offline    kind     none  none (declared)  -          39         -        -"
        "             openshell-0.0.110",
    ]


def test_render_wide_never_folds_a_long_address(tmp_path: Path) -> None:
    # Wider than the 160 columns of a console that is not a terminal: one line per gateway.
    outcome = run_cli("render", "ibm", "--out", str(tmp_path / "ibm"), "-o", "wide", "-q")
    assert outcome == Outcome(0, "", "")  # -q: no table, no notes
    outcome = run_cli("render", "ibm", "--out", str(tmp_path / "ibm"), "-o", "wide")
    lines = outcome.out.splitlines()
    assert [line.split()[0] for line in lines] == [
        "stack",
        "NAME",
        "batch-jobs",
        "canary",
        "research",
        "team-a",
        "4",
    ]
    assert max(len(line) for line in lines) > 160
    team_a = next(line for line in lines if line.startswith("team-a "))
    assert team_a.split()[-2:] == ["-", "openshell-0.0.109"]
    assert "  grpcs://gw-openshell-team-a.hysh-ibm-01-" in team_a
    assert lines[3].endswith("  openshell-0.0.110 (pinned)")  # canary pins its release
    assert outcome.err == f"note: {IBM_SECURE_NOTE}\nnote: {IBM_CA_NOTE}\n"


def test_render_json_lists_every_stack_gateway_and_note(tmp_path: Path) -> None:
    out = tmp_path / "ibm"
    outcome = run_cli("render", "ibm", "--out", str(out), "-o", "json", "-q")
    assert (outcome.code, outcome.err) == (0, "")
    rendered = document(outcome)
    (stack,) = rendered.pop("stacks")
    assert rendered == {"notes": [IBM_SECURE_NOTE, IBM_CA_NOTE], "removed": []}
    gateways = {g["name"]: g for g in stack.pop("gateways")}
    assert stack == {"stack": "ibm", "out": str(out), "resources": 219, "manifests": 93}
    assert sorted(gateways) == ["batch-jobs", "canary", "research", "team-a"]
    assert gateways["canary"] == {
        "name": "canary",
        "cluster": "roks-us-east",
        "mode": "route",
        "address": "grpcs://gw-openshell-canary.hysh-ibm-01-4c28435107377e996c6eb39230b7bcf5-0000"
        ".us-east.containers.appdomain.cloud:443",
        "console": None,
        "signIn": "keycloak",
        "release": "openshell-0.0.110",
        "releasePinned": True,
        "imageOverrides": [],
        "resources": 50,
    }
    assert (out / "plan.json").is_file()  # the render is written as with the table


def test_render_all_json_lists_the_removed_outputs(tmp_path: Path) -> None:
    out = tmp_path / "all"
    assert run_cli("render", "local", "--out", str(out / "gone"), "-q").code == 0
    outcome = run_cli("render", "--all", "--out", str(out), "--format", "yaml")
    parsed = yaml.safe_load(outcome.out)
    assert [s["stack"] for s in parsed["stacks"]] == list(STACKS)
    assert parsed["removed"] == [str(out / "gone")]
    assert outcome.err.endswith(f"removed {out / 'gone'} (no such stack any more)\n")
    assert leaks([outcome.out], sample_secrets()) == []


def test_render_progress_goes_to_stderr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(render_command, "PROGRESS_MIN_GATEWAYS", 1)
    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # rich draws as on a terminal
    outcome = run_cli("render", "local", "--out", str(tmp_path / "l"), "--jobs", "1")
    assert outcome.code == 0
    assert "rendering local (3 gateways)" in outcome.err
    assert "rendering local" not in outcome.out
    assert outcome.out.startswith("stack local\nNAME ")
    quiet = run_cli("render", "local", "--out", str(tmp_path / "l"), "--jobs", "1", "-q")
    assert quiet == Outcome(0, "", "")


# --- import-file ----------------------------------------------------------------------------


def test_import_file_json(tmp_path: Path) -> None:
    adopting_project(tmp_path)
    outcome = run_cli("--root", str(tmp_path), "import-file", "ibm", "-o", "json")
    assert (outcome.code, outcome.err) == (0, "")
    written = tmp_path / "build" / "import" / "ibm.json"
    cluster = f"urn:pulumi:ibm::hypershell-gateways::{tokens.CLUSTER}"
    gateway = f"urn:pulumi:ibm::hypershell-gateways::{tokens.GATEWAY}"
    database = f"{gateway}${tokens.DATABASE}"
    targets = [
        f"{cluster}$pulumi:providers:kubernetes::roks-us-east-k8s",
        f"{cluster}$pulumi:providers:postgresql::roks-us-east-postgres",
        f"{cluster}::roks-us-east",
        # The adopted gateway's database password and its components: its database owner's
        # provider logs in with it, and a targeted up creates every provider.
        f"{database}$random:index/randomPassword:RandomPassword::legacy-database-db-password",
        f"{database}::legacy-database",
        f"{gateway}::legacy",
    ]
    assert document(outcome) == {
        "stack": "ibm",
        "file": str(written),
        "resources": 22,
        "targets": targets,
        "commands": [
            "pulumi up " + " ".join(f"--target '{urn}'" for urn in targets),
            f"pulumi import --file {written} --protect=false --generate-code=false",
        ],
    }
    assert ADOPTED_NS in written.read_text()
    none = run_cli("import-file", "aws", "--out", str(tmp_path / "x.json"), "-o", "yaml")
    assert none == Outcome(
        0, "commands: []\nfile: null\nresources: 0\nstack: aws\ntargets: []\n", ""
    )
    assert not (tmp_path / "x.json").exists()


def test_a_path_longer_than_the_console_is_printed_whole(tmp_path: Path) -> None:
    # 160 columns where stdout is no terminal: the line is longer, and stays one line.
    adopting_project(tmp_path)
    out = tmp_path / ("a-long-directory-name-" * 8) / "ibm.json"
    outcome = run_cli("--root", str(tmp_path), "import-file", "ibm", "--out", str(out))
    assert outcome.code == 0
    assert outcome.out.splitlines()[0] == f"22 resources to import → {out}"
    assert len(outcome.out.splitlines()[0]) > 160


# --- promote --------------------------------------------------------------------------------


def test_promote_json(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "p")
    before = (project / "Pulumi.ibm.yaml").read_text()
    argv = ["--root", str(project), "promote", "openshell-0.0.110", "--to", "ibm"]
    outcome = run_cli(*argv, "--dry-run", "-o", "json")
    assert (outcome.code, outcome.err) == (0, "")
    key = "hypershell-gateways:clusters.roks-us-east.release"
    rolls = {
        "after": "openshell-0.0.110",
        "before": "openshell-0.0.109",
        "cluster": "roks-us-east",
        "images": ["gateway", "supervisor", "sandbox"],
        "reason": None,
        "rolls": True,
    }
    expected = {
        "stack": "ibm",
        "path": "Pulumi.ibm.yaml",
        "release": "openshell-0.0.110",
        "changed": True,
        "dryRun": True,
        "written": False,
        "clusters": [
            {
                "cluster": "roks-us-east",
                "field": key,
                "before": "openshell-0.0.109",
                "after": "openshell-0.0.110",
                "changed": True,
            }
        ],
        "gateways": [
            {**rolls, "name": "batch-jobs"},
            {
                **rolls,
                "name": "canary",
                "before": "openshell-0.0.110",
                "images": [],
                "reason": "pins openshell-0.0.110 (spec.release)",
                "rolls": False,
            },
            {**rolls, "name": "research"},
            {**rolls, "name": "team-a"},
        ],
        # No deploy/rollout.yaml here: no soak (tests/test_soak.py has the gate's documents).
        "soak": {
            "required": False,
            "met": True,
            "since": None,
            "until": None,
            "override": None,
            "release": None,
            "previous": None,
            "soak": None,
            "stacks": [],
        },
    }
    assert document(outcome) == expected
    assert (project / "Pulumi.ibm.yaml").read_text() == before
    written = run_cli(*argv, "-o", "yaml")
    assert written.code == 0
    assert yaml.safe_load(written.out) == {**expected, "dryRun": False, "written": True}
    again = document(run_cli(*argv, "-o", "json"))  # already bound: nothing to write
    assert (again["changed"], again["written"], again["clusters"][0]["changed"]) == (
        False,
        False,
        False,
    )


# --- stacks and driver ----------------------------------------------------------------------


def test_stacks_json_stays_one_line_and_yaml_is_a_list() -> None:
    assert run_cli("stacks") == Outcome(0, '["aws","ibm","local"]\n', "")
    assert run_cli("stacks", "-o", "json") == Outcome(0, '["aws","ibm","local"]\n', "")
    assert run_cli("stacks", "-o", "yaml") == Outcome(0, "- aws\n- ibm\n- local\n", "")


def test_driver_json_and_yaml() -> None:
    outcome = run_cli("driver", "ibm", "aws", "local", "-o", "json")
    assert document(outcome) == {"drivers": {"aws": "operator", "ibm": "ci", "local": "ci"}}
    assert run_cli("driver", "ibm", "aws", "-o", "yaml") == Outcome(
        0, "drivers:\n  aws: operator\n  ibm: ci\n", ""
    )
    assert run_cli("driver", "--list", "ci", "ibm", "aws", "-o", "yaml") == Outcome(
        0, "- ibm\n", ""
    )
    assert run_cli("driver", "--list", "ci", "ibm", "aws", "-o", "json") == Outcome(
        0, '["ibm"]\n', ""
    )
    unknown = run_cli("driver", "gcp", "-o", "json")
    assert unknown.code == 2
    assert json.loads(unknown.out)["problems"][0]["path"] == "Pulumi.gcp.yaml"


# --- status: the same documents, keys sorted ------------------------------------------------


def test_status_json_has_its_keys_sorted() -> None:
    fixtures = ROOT / "tests" / "fixtures" / "status"
    outcome = run_cli(
        "status",
        "ibm",
        "--from",
        str(fixtures / "refresh-drift.json"),
        str(fixtures / "state.json"),
        "--now",
        "2026-11-30T09:00:00Z",
        "-o",
        "json",
    )
    assert outcome.code == 4  # degraded
    assert list(document(outcome))[:3] == ["certificatesDue", "checkedAt", "gateways"]
    yamled = run_cli(
        "status",
        "ibm",
        "--from",
        str(fixtures / "refresh-drift.json"),
        "--now",
        "2026-11-30T09:00:00Z",
        "-o",
        "yaml",
    )
    assert yamled.out.startswith("certificatesDue:\n- daysLeft: 19\n  due: true\n")
    assert yamled.out.endswith(
        "\nstack: ibm\nstate: degraded\nstateAgeSeconds: null\nstateTime: null\n"
    )


# --- diff -----------------------------------------------------------------------------------

HEAD_PASSWORD = "head-sentinel-Pa55word-for-the-json"


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_diff_format_json_is_the_summary_and_output_still_the_markdown(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(ROOT, repo, ignore=NOT_COPIED)
    git(repo, "init", "--quiet", "--initial-branch=main")
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "--message", "base")
    commit = git(repo, "rev-parse", "HEAD")
    with (repo / "gateways/local/dev.yaml").open("a", encoding="utf-8") as file:
        file.write("spec:\n  replicas: 2\n")
    with edited_config(repo, "local") as config:
        for entry in config["hypershell-gateways:clusterSecrets"].values():
            entry["dbAdminPassword"] = HEAD_PASSWORD
    report = tmp_path / "report.md"
    outcome = run_cli(
        "--root", str(repo), "diff", "local", "--base", "main", "--format", "json",
        "--output", str(report),
    )  # fmt: skip
    assert (outcome.code, outcome.err) == (3, "")
    summary = document(outcome, secrets=[*sample_secrets(), HEAD_PASSWORD])
    (stack,) = summary.pop("stacks")
    assert summary == {
        "base": {"ref": "main", "commit": commit},
        "changed": True,
        "notes": [],
        # Both edits are in the working tree only: named, since the PR would not have them.
        "uncommitted": [
            {"path": "Pulumi.local.yaml", "state": "modified"},
            {"path": "gateways/local/dev.yaml", "state": "modified"},
        ],
        "refused": [],
    }
    manifest = "manifests/kind/openshell-dev/deployment-openshell-gateway.yaml"
    none = {"added": 0, "changed": 0, "removed": 0}
    assert stack == {
        "stack": "local",
        "changed": True,
        "baseNote": None,
        "headNote": None,
        "secretsChanged": True,
        "counts": {
            "gateways": {**none, "changed": 1},
            "objects": {**none, "changed": 1},
            "resources": none,
        },
        "gateways": [
            {
                "name": "dev",
                "status": "changed",
                "fields": [],
                "resources": [{"kind": "Deployment", "name": "dev-workload-deploy"}],
                "cluster": None,
                "namespace": None,
                "address": None,
                "adopted": False,
            }
        ],
        "releases": [],
        "credentialStores": [],
        "access": [],
        "signIn": [],
        "objects": [{"path": manifest, "kind": "Deployment", "status": "changed"}],
        "objectsByKind": {"Deployment": {**none, "changed": 1}},
        "resources": [],
        "operations": [
            {
                "type": "kubernetes:apps/v1:Deployment",
                "name": "dev-workload-deploy",
                "gateway": "dev",
                "op": "update",
                "because": ["spec.replicas"],
                "manifest": manifest,
            }
        ],
        "hazards": [],
        "dataLoss": [],
        "leftBehind": [],
        "deletionPolicyFlips": [],
        "decommissions": [],
        "rotations": [],
    }
    markdown = report.read_text(encoding="utf-8")
    assert markdown.startswith("## Risks\n\n**Not committed** (2):\n\n- `Pulumi.local.yaml`")
    assert HEAD_PASSWORD not in markdown

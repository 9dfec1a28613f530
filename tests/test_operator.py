"""The Pulumi Kubernetes Operator (``gatewayctl.deploy.operator``): its settings
(deploy/operator.yaml) give one driver per stack, the workspace's account and image, and are
validated like declarations (exit 2, ``path: field: problem``); ``operator-manifests`` writes one
operator Stack per stack the operator owns."""

from __future__ import annotations

import re
import shutil
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from gatewayctl.cli import main as cli
from gatewayctl.cli.prepared import _prepare_all
from gatewayctl.deploy import operator
from gatewayctl.errors import InvalidInputError
from gatewayctl.inputs import operator_settings
from tests import schema_checks
from tests.builders import (
    DROP,
    PREFIX,
    cluster,
    copy_project,
    passphrase_ciphertext,
    write_stack,
)
from tests.hostile_helpers import unlocated
from tests.support import ROOT

SETTINGS = "deploy/operator.yaml"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return copy_project(tmp_path / "p", ready=True)


def settings_of(root: Path) -> dict[str, Any]:
    document = yaml.safe_load((root / SETTINGS).read_text(encoding="utf-8"))
    assert isinstance(document, dict)
    return document


def write_settings(root: Path, **changes: Any) -> None:
    """The settings with ``changes`` applied; a None value removes the key."""
    document = settings_of(root) | changes
    document = {key: value for key, value in document.items() if value is not None}
    (root / SETTINGS).write_text(yaml.safe_dump(document), encoding="utf-8")


def errors(
    root: Path, capsys: pytest.CaptureFixture[str], *args: str, located: bool = False
) -> list[str]:
    """stderr lines of ``operator-manifests`` (exit 2 expected, nothing written), without where
    each problem is unless ``located``."""
    out = root.parent / "operator-out"
    code = cli.main(["--root", str(root), "operator-manifests", "--out", str(out), *args])
    captured = capsys.readouterr()
    assert code == 2, captured.err
    assert not out.exists()
    assert "Traceback" not in captured.err
    return (captured.err if located else unlocated(captured.err)).splitlines()


# --- one driver per stack -----------------------------------------------------------------------


def test_the_committed_settings_give_the_operator_aws(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["driver", "ibm", "aws", "local"]) == 0
    assert capsys.readouterr().out.splitlines() == ["ibm: ci", "aws: operator", "local: ci"]
    assert cli.main(["driver", "--list", "ci", "ibm", "aws"]) == 0
    assert capsys.readouterr().out == '["ibm"]\n'
    assert cli.main(["driver", "--list", "operator", "ibm", "aws"]) == 0
    assert capsys.readouterr().out == '["aws"]\n'


def test_without_settings_ci_drives_every_stack(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / SETTINGS).unlink()
    assert cli.main(["--root", str(project), "driver", "--list", "ci", "ibm", "aws"]) == 0
    assert capsys.readouterr().out == '["ibm","aws"]\n'
    assert cli.main(["--root", str(project), "driver", "--list", "operator", "ibm", "aws"]) == 0
    assert capsys.readouterr().out == "[]\n"


def test_the_older_exclude_form_still_means_every_stack_but_those(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(project, stacks=None, exclude=["local"], envFromSecrets={})
    assert cli.main(["--root", str(project), "driver", "ibm", "aws", "local"]) == 0
    assert capsys.readouterr().out.splitlines() == ["ibm: operator", "aws: operator", "local: ci"]
    files = operator.operator_manifests(project, _prepare_all)
    assert sorted(name for name in files if name.startswith("stack-")) == [
        "stack-aws.yaml",
        "stack-ibm.yaml",
    ]


def test_an_operator_owning_nothing_emits_nothing(project: Path) -> None:
    write_settings(project, stacks=[], envFromSecrets={})
    assert operator.operator_manifests(project, _prepare_all) == {}


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        (
            {"exclude": ["local"]},
            ["exclude: use stacks (the stacks the operator owns) or the older exclude, not both"],
        ),
        (
            {"stacks": None},
            [
                "stacks: required: the stacks the operator owns (the workflows skip them);"
                " [] for none"
            ],
        ),
        ({"stacks": ["aws", "aws"]}, ["stacks.1: 'aws' is listed twice"]),
        (
            {"stacks": ["ibm"]},
            ["envFromSecrets.aws: the operator does not own stack 'aws' (it owns: ibm)"],
        ),
        ({"stacks": "aws"}, ["stacks: Input should be a valid list"]),
        ({"stacks": [7]}, ["stacks.0: Input should be a valid string"]),
    ],
)
def test_ownership_must_be_explicit_and_unambiguous(
    project: Path, capsys: pytest.CaptureFixture[str], changes: dict[str, Any], expected: list[str]
) -> None:
    write_settings(project, **changes)
    lines = errors(project, capsys)
    assert lines == [f"error: {SETTINGS}: {line}" for line in expected] + [
        f"{len(expected)} problem(s); nothing written"
    ]
    assert cli.main(["--root", str(project), "driver", "aws"]) == 2  # the workflows stop too


def test_the_driver_names_unknown_stacks(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["driver", "ibm", "gcp"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "error: Pulumi.gcp.yaml: no such stack; the stacks here are aws, ibm, local",
        "1 problem(s); nothing written",
    ]


# --- the workspace: account and image ---------------------------------------------------------


def test_the_workspace_account_is_bound_to_auth_delegator(project: Path) -> None:
    files = operator.operator_manifests(project, _prepare_all)
    account = yaml.safe_load(files["serviceaccount-hypershell-gateways-deployer.yaml"])
    assert account == {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {
            "name": "hypershell-gateways-deployer",
            "namespace": "pulumi-operator",
            "labels": {"app.kubernetes.io/part-of": "hypershell-gateways"},
        },
    }
    binding = yaml.safe_load(
        files["clusterrolebinding-hypershell-gateways-deployer-auth-delegator.yaml"]
    )
    assert binding == {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {
            "name": "pulumi-operator:hypershell-gateways-deployer:system:auth-delegator",
            "labels": {"app.kubernetes.io/part-of": "hypershell-gateways"},
        },
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "system:auth-delegator",
        },
        "subjects": [
            {
                "kind": "ServiceAccount",
                "name": "hypershell-gateways-deployer",
                "namespace": "pulumi-operator",
            }
        ],
    }
    stack = yaml.safe_load(files["stack-aws.yaml"])
    assert stack["spec"]["serviceAccountName"] == "hypershell-gateways-deployer"


def pinned(requirement_lines: str, package: str) -> str:
    found: list[str] = re.findall(rf"^{package}==([0-9.]+)\s*$", requirement_lines, flags=re.M)
    assert len(found) == 1, f"one exact pin of {package}"
    return found[0]


def test_the_cli_version_is_declared_once_and_equals_the_sdk_pins() -> None:
    version = (ROOT / operator_settings.PULUMI_VERSION_FILE).read_text(encoding="utf-8").strip()
    assert re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", version)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert pinned("\n".join(project["project"]["dependencies"]), "pulumi") == version
    lock = tomllib.loads((ROOT / "uv.lock").read_text(encoding="utf-8"))
    assert [p["version"] for p in lock["package"] if p["name"] == "pulumi"] == [version]
    policy = (ROOT / "policy" / "requirements.txt").read_text(encoding="utf-8")
    assert pinned(policy, "pulumi") == version


def test_the_workspace_image_is_pinned_to_the_cli_version(project: Path) -> None:
    (project / operator_settings.PULUMI_VERSION_FILE).write_text("3.999.1\n", encoding="utf-8")
    files = operator.operator_manifests(project, _prepare_all)
    stack = yaml.safe_load(files["stack-aws.yaml"])
    assert stack["spec"]["workspaceTemplate"] == {
        "spec": {"image": "pulumi/pulumi:3.999.1-nonroot"}
    }


@pytest.mark.parametrize("content", [None, "", "latest\n", "v3.272.0\n", "3.272\n", "3.272.0 x"])
def test_a_missing_or_malformed_cli_version_is_a_problem(
    project: Path, capsys: pytest.CaptureFixture[str], content: str | None
) -> None:
    path = project / operator_settings.PULUMI_VERSION_FILE
    if content is None:
        path.unlink()
    else:
        path.write_text(content, encoding="utf-8")
    assert errors(project, capsys) == [
        "error: .pulumi.version: must hold the Pulumi CLI version, such as 3.272.0",
        "1 problem(s); nothing written",
    ]


# --- environment from Secrets -------------------------------------------------------------------


def with_env(project: Path, env: dict[str, Any]) -> None:
    write_settings(project, envFromSecrets={"aws": env})


REF = {"name": "creds", "key": "value"}


@pytest.mark.parametrize("name", sorted(operator_settings.RESERVED_ENV))
def test_reserved_variables_cannot_be_redefined(
    project: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    # Before: PULUMI_ACCESS_TOKEN from envFromSecrets silently replaced accessToken's Secret.
    with_env(project, {name: REF})
    assert errors(project, capsys) == [
        f"error: {SETTINGS}: envFromSecrets.aws.{name}: key: {name} is reserved:"
        f" {operator_settings.RESERVED_ENV[name]}",
        "1 problem(s); nothing written",
    ]


@pytest.mark.parametrize("name", ["1ABC", "A-B", "A B", "", "A=B", "ÉTÉ", "A\nB", "a.b", "$X"])
def test_variable_names_must_be_valid(
    project: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    with_env(project, {name: REF})
    lines = errors(project, capsys)
    assert len(lines) == 2
    assert lines[0].startswith(f"error: {SETTINGS}: envFromSecrets.aws.")
    assert lines[0].endswith(
        "is not an environment variable name (letters, digits and '_', not starting with a digit)"
    )
    assert "\n" not in lines[0]


def test_other_variables_reach_the_stack(project: Path) -> None:
    names = ["PULUMI_BACKEND_URL", "PULUMI_CONFIG_PASSPHRASE", "_X", "aws_region", "A1"]
    with_env(project, dict.fromkeys(names, REF))
    stack = yaml.safe_load(operator.operator_manifests(project, _prepare_all)["stack-aws.yaml"])
    ref = {"type": "Secret", "secret": REF}
    assert stack["spec"]["envRefs"] == {
        "PULUMI_ACCESS_TOKEN": {
            "type": "Secret",
            "secret": {"name": "pulumi-api-token", "key": "accessToken"},
        },
        **dict.fromkeys(sorted(names), ref),
    }


@pytest.mark.parametrize("key", ["a b", "", "a/b", "x" * 254])
def test_secret_keys_must_be_valid(
    project: Path, capsys: pytest.CaptureFixture[str], key: str
) -> None:
    with_env(project, {"X": {"name": "creds", "key": key}})
    lines = errors(project, capsys)
    assert lines[0].startswith(f"error: {SETTINGS}: envFromSecrets.aws.X.key: ")
    assert lines[-1] == "1 problem(s); nothing written"


# --- the git source -----------------------------------------------------------------------------

REPO_RULE = (
    "must be an https://host/path, ssh://[user@]host/path or git@host:path repository URL:"
    " no password or token in it, no whitespace, no part starting with '-'"
)


@pytest.mark.parametrize(
    "url",
    [
        "-oProxyCommand=touch /tmp/pwned",
        "--upload-pack=touch /tmp/pwned",
        "ssh://-oProxyCommand=touch/x",
        "ssh://git@-oProxyCommand=x/repo",
        "git@-oProxyCommand=x:repo",
        "git@github.com:-x/repo",
        "https://github.com/-x/repo.git",
        "https://github.com/org/repo.git --upload-pack=touch",
        "https://github.com/org/repo.git\n",
        "https://github.com/org/repo.git\t",
        " https://github.com/org/repo.git",
        "https://user:ghp_token123@github.com/org/repo.git",
        "https://ghp_token123@github.com/org/repo.git",
        "http://github.com/org/repo.git",
        "file:///srv/repo.git",
        "ext::sh -c touch% /tmp/pwned",
        "/srv/repo.git",
        "https://",
        "https://github.com",
        "https://github.com/",
        "https://github.com//org/repo",
        "git@github.com:",
        "git@github.com:/abs/repo",
        "ssh://github.com:99999/org/repo",
        "https://github.com:0/org/repo",
        "https://exa mple.com/org/repo",
        "https://github.com/org/repo.git#--upload-pack",
        "https://github.com/org/repo?x=1",
        "https://-github.com/org/repo",
        "ssh://git@github.com/org/re po",
        "https://github.com/" + "a" * 2048,
    ],
)
def test_project_repo_cannot_smuggle_an_option(
    project: Path, capsys: pytest.CaptureFixture[str], url: str
) -> None:
    write_settings(project, projectRepo=url)
    lines = errors(project, capsys)
    assert lines == [
        f"error: {SETTINGS}: projectRepo: {REPO_RULE}",
        "1 problem(s); nothing written",
    ]
    assert "ghp_token123" not in "\n".join(lines)


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/example-org/hypershell-gateways.git",
        "https://gitlab.example.com:8443/group/sub/repo",
        "ssh://git@github.com/org/repo.git",
        "ssh://github.com:2222/org/repo.git",
        "git@github.com:org/repo.git",
        "git@gitlab.example.com:group/sub/repo_1.git",
    ],
)
def test_repository_urls_are_accepted(project: Path, url: str) -> None:
    write_settings(project, projectRepo=url)
    stack = yaml.safe_load(operator.operator_manifests(project, _prepare_all)["stack-aws.yaml"])
    assert stack["spec"]["projectRepo"] == url


@pytest.mark.parametrize(
    "branch",
    [
        "--upload-pack=x",
        "-b",
        "a b",
        "a..b",
        "a/",
        "a.lock",
        ".hidden",
        "a/.b",
        "a//b",
        "main\n",
        "",
    ],
)
def test_branch_is_a_ref_name_never_an_option(
    project: Path, capsys: pytest.CaptureFixture[str], branch: str
) -> None:
    write_settings(project, branch=branch)
    lines = errors(project, capsys)
    assert lines[0].startswith(f"error: {SETTINGS}: branch: ")
    assert "is not a branch name" in lines[0]
    assert lines[-1] == "1 problem(s); nothing written"


@pytest.mark.parametrize("branch", ["main", "release/1.2", "feature_x", "v1.0-rc"])
def test_branch_names_are_accepted(project: Path, branch: str) -> None:
    write_settings(project, branch=branch)
    stack = yaml.safe_load(operator.operator_manifests(project, _prepare_all)["stack-aws.yaml"])
    assert stack["spec"]["branch"] == branch


# --- YAML scalars -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("resyncFrequencySeconds: !!int sixtyseven", "tagged !!int but is not an integer"),
        ("resyncFrequencySeconds: !!int 0x_", "tagged !!int but is not an integer"),
        (
            "resyncFrequencySeconds: !!float six-hundred",
            "tagged !!float but is not a floating-point number",
        ),
        (
            "resyncFrequencySeconds: 2026-02-30",
            "reads as a date or time in YAML but is not a valid one; quote it to make it a string",
        ),
        (
            "resyncFrequencySeconds: !!timestamp garbage",
            "tagged !!timestamp but is not a date or time",
        ),
        ("resyncFrequencySeconds: !!bool maybe", "tagged !!bool but is not a boolean"),
    ],
)
def test_a_value_that_does_not_convert_is_named_by_field(
    project: Path, capsys: pytest.CaptureFixture[str], line: str, problem: str
) -> None:
    path = project / SETTINGS
    text = path.read_text(encoding="utf-8")
    assert "resyncFrequencySeconds: 600\n" in text
    path.write_text(text.replace("resyncFrequencySeconds: 600", line), encoding="utf-8")
    number = text.splitlines().index("resyncFrequencySeconds: 600") + 1
    column = len("resyncFrequencySeconds: ") + 1
    value = line.split()[-1]
    for command in (["operator-manifests", "--out", str(project.parent / "o")], ["driver", "aws"]):
        assert cli.main(["--root", str(project), *command]) == 2
        err = capsys.readouterr().err
        assert err.splitlines() == [
            f"error: {SETTINGS}:{number}:{column}: resyncFrequencySeconds: invalid value:"
            f" {problem}",
            "1 problem(s); nothing written",
        ]
        assert value not in err


def test_a_value_deep_in_the_settings_is_named_by_its_path(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = project / SETTINGS
    text = path.read_text(encoding="utf-8")
    old = "AWS_ROLE_ARN: {name: hypershell-aws, key: roleArn}"
    assert old in text
    path.write_text(text.replace(old, "AWS_ROLE_ARN: {name: !!int x, key: roleArn}"), "utf-8")
    lines = errors(project, capsys, located=True)
    field = "envFromSecrets.aws.AWS_ROLE_ARN.name"
    assert re.match(rf"error: {re.escape(SETTINGS)}:\d+:\d+: {re.escape(field)}: ", lines[0])
    assert lines[0].endswith(": invalid value: tagged !!int but is not an integer")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("600.5", "Input should be a valid integer"),
        ('"600"', "Input should be a valid integer"),
        ("true", "Input should be a valid integer"),
        ("[600]", "Input should be a valid integer"),
        ("59", "Input should be greater than or equal to 60"),
        ("1e3", "Input should be a valid integer"),
        ("99999999999999999999", "Input should be less than or equal to 9223372036854775807"),
    ],
)
def test_resync_frequency_is_an_integer(
    project: Path, capsys: pytest.CaptureFixture[str], value: str, message: str
) -> None:
    path = project / SETTINGS
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("resyncFrequencySeconds: 600", f"resyncFrequencySeconds: {value}"))
    lines = errors(project, capsys)
    assert lines[0].startswith(f"error: {SETTINGS}: resyncFrequencySeconds: {message}")
    assert lines[-1] == "1 problem(s); nothing written"


def test_settings_problems_raise_before_anything_else(project: Path) -> None:
    write_settings(project, namespace="Not_A_Label", serviceAccountName="-x")
    with pytest.raises(InvalidInputError) as caught:
        operator_settings.load_settings(project)
    assert [p.field for p in caught.value.problems] == ["namespace", "serviceAccountName"]


# --- operator Stacks (operator-manifests) ---------------------------------------------------

ACCOUNT_FILES = [
    "clusterrolebinding-hypershell-gateways-deployer-auth-delegator.yaml",
    "serviceaccount-hypershell-gateways-deployer.yaml",
]


def test_one_operator_stack_per_stack_the_operator_owns(tmp_path: Path) -> None:
    files = operator.operator_manifests(copy_project(tmp_path / "p", ready=True), _prepare_all)
    assert sorted(files) == [*ACCOUNT_FILES, "stack-aws.yaml"]  # the settings: stacks [aws]
    aws = yaml.safe_load(files["stack-aws.yaml"])
    assert aws["metadata"] == {
        "name": "hypershell-gateways-aws",
        "namespace": "pulumi-operator",
        "labels": {
            "app.kubernetes.io/part-of": "hypershell-gateways",
            "app.kubernetes.io/instance": "aws",
        },
    }
    spec = aws["spec"]
    assert spec["stack"] == "example-org/hypershell-gateways/aws"
    assert spec["projectRepo"] == "https://github.com/example-org/hypershell-gateways.git"
    assert (spec["refresh"], spec["continueResyncOnCommitMatch"], spec["destroyOnFinalize"]) == (
        True,
        True,
        False,
    )
    assert spec["resyncFrequencySeconds"] == 600
    assert spec["envRefs"] == {
        "PULUMI_ACCESS_TOKEN": {
            "type": "Secret",
            "secret": {"name": "pulumi-api-token", "key": "accessToken"},
        },
        "AWS_ROLE_ARN": {"type": "Secret", "secret": {"name": "hypershell-aws", "key": "roleArn"}},
    }
    assert spec["gitAuth"] == {
        "accessToken": {"type": "Secret", "secret": {"name": "git-credentials", "key": "token"}}
    }


def test_operator_manifests_pass_the_schemas(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "p", ready=True)
    document = yaml.safe_load((project / operator_settings.SETTINGS).read_text())
    document["stacks"] = ["aws", "ibm"]
    (project / operator_settings.SETTINGS).write_text(yaml.safe_dump(document))
    out = tmp_path / "out"
    out.mkdir()
    for name, text in operator.operator_manifests(project, _prepare_all).items():
        (out / name).write_text(text)
    report = schema_checks.check_manifests([out], "1.31")
    assert report.lines() == ["4 passed, 0 failed"]
    # The Stack is checked against the operator's CRD: a field it lacks is refused.
    stack = next(p for p in sorted(out.iterdir()) if "kind: Stack" in p.read_text())
    stack.write_text(stack.read_text().replace("spec:\n", "spec:\n  policyPacks: []\n", 1))
    report = schema_checks.check_manifests([out], "1.31")
    assert report.failed == 1
    assert "('policyPacks' was unexpected)" in report.problems[0][1]


def test_bad_operator_settings_name_the_field(tmp_path: Path) -> None:
    (tmp_path / "deploy").mkdir()
    settings = yaml.safe_load((ROOT / operator_settings.SETTINGS).read_text())
    settings["projectRepo"] = "not a url"
    del settings["accessToken"]
    (tmp_path / operator_settings.SETTINGS).write_text(yaml.safe_dump(settings))
    with pytest.raises(InvalidInputError) as caught:
        operator_settings.load_settings(tmp_path)
    assert [(p.path, p.field) for p in caught.value.problems] == [
        ("deploy/operator.yaml", "accessToken"),
        ("deploy/operator.yaml", "projectRepo"),
    ]


def test_cli_writes_operator_manifests(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = copy_project(tmp_path / "p", ready=True)
    assert (
        cli.main(["--root", str(project), "operator-manifests", "--out", str(tmp_path / "op")]) == 0
    )
    written = (p.name for p in (tmp_path / "op").iterdir())
    assert sorted(n for n in written if not n.startswith(".")) == [*ACCOUNT_FILES, "stack-aws.yaml"]
    assert capsys.readouterr().out.splitlines() == [
        f"{tmp_path}/op/{ACCOUNT_FILES[0]}",
        f"{tmp_path}/op/{ACCOUNT_FILES[1]}",
        f"{tmp_path}/op/stack-aws.yaml",
    ]


def test_cli_refuses_a_stack_the_operator_owns_that_is_not_ready(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The committed aws stack: placeholder secrets, no CA bundle; the workspace would apply the
    # Kubernetes objects and fail at the first PostgreSQL role.
    out = tmp_path / "op"
    assert cli.main(["operator-manifests", "--out", str(out)]) == 2
    assert not out.exists()
    err = unlocated(capsys.readouterr().err).splitlines()
    assert [line.split(": ")[1:3] for line in err[:-1]] == [
        ["Pulumi.aws.yaml", f"{PREFIX}clusterSecrets.rosa-us-east-1.dbAdminPassword"],
        ["Pulumi.aws.yaml", f"{PREFIX}clusterSecrets.rosa-us-east-1.keycloakAdminClientSecret"],
        ["Pulumi.aws.yaml", f"{PREFIX}clusterSecrets.rosa-us-west-2.dbAdminPassword"],
        ["Pulumi.aws.yaml", f"{PREFIX}clusterSecrets.rosa-us-west-2.keycloakAdminClientSecret"],
        ["Pulumi.aws.yaml", f"{PREFIX}clusters.rosa-us-east-1.database.sslRootCert"],
        ["Pulumi.aws.yaml", f"{PREFIX}clusters.rosa-us-west-2.database.sslRootCert"],
    ]
    assert err[-1] == "6 problem(s); nothing written"


def minimal_stack(root: Path, stack: str, index: int) -> None:
    """A valid, deploy-ready stack without gateways (its own declarations directory)."""
    write_stack(
        root,
        stack=stack,
        clusters={
            f"c{index}": cluster(
                baseDomain=f"c{index}.example.com",
                kubeconfigContext=DROP,
                database={"host": "db.example.com"},
            )
        },
        secrets={f"c{index}": {"dbAdminPassword": {"secure": passphrase_ciphertext(stack)}}},
        directory=f"gateways/s{index}",
    )


def operator_project(root: Path, names: list[str], **settings: Any) -> Path:
    """A project with the committed operator settings (``settings`` replacing keys; None
    removes one) and a minimal deploy-ready ``Pulumi.<stack>.yaml`` per stack.

    The committed settings name aws, so ``names`` includes it."""
    (root / "deploy").mkdir(parents=True)
    document = yaml.safe_load((ROOT / operator_settings.SETTINGS).read_text()) | settings
    document = {key: value for key, value in document.items() if value is not None}
    (root / operator_settings.SETTINGS).write_text(yaml.safe_dump(document))
    shutil.copy(
        ROOT / operator_settings.PULUMI_VERSION_FILE, root / operator_settings.PULUMI_VERSION_FILE
    )
    for index, stack in enumerate(names):
        minimal_stack(root, stack, index)
    return root


STACK_NAME_RULE = "is not a DNS-1123 label (lowercase a-z, 0-9, inner '-', at most 63)"


@pytest.mark.parametrize("stack", ["Prod_EU", "prod-", "eu.", "a..b", "prod eu", "eu.west", ""])
def test_a_stack_name_that_is_no_kubernetes_name_is_a_problem(tmp_path: Path, stack: str) -> None:
    root = operator_project(tmp_path, ["aws", "local", stack], stacks=["aws"])
    with pytest.raises(InvalidInputError) as caught:
        operator.operator_manifests(root, _prepare_all)
    assert [str(p) for p in caught.value.problems] == [
        f"Pulumi.{stack}.yaml: stack name {stack!r} {STACK_NAME_RULE}"
    ]


@pytest.mark.parametrize("stack", ["prod-eu", "p1", "prod--eu", "a" * 22])
def test_stack_names_that_make_kubernetes_names_are_written(tmp_path: Path, stack: str) -> None:
    root = operator_project(tmp_path, ["aws", "local", stack], stacks=["aws", stack])
    files = operator.operator_manifests(root, _prepare_all)
    assert sorted(files) == sorted([*ACCOUNT_FILES, "stack-aws.yaml", f"stack-{stack}.yaml"])
    obj = yaml.safe_load(files[f"stack-{stack}.yaml"])
    assert obj["metadata"]["name"] == f"hypershell-gateways-{stack}"


def test_every_operator_name_problem_is_reported_at_once(tmp_path: Path) -> None:
    long = "a" * 23  # 20 + 23 = 43 characters, one more than the CRD allows
    # The older form: every stack but the excluded ones.
    root = operator_project(
        tmp_path,
        ["aws", "local", "Prod_EU", long, "Local"],
        stacks=None,
        exclude=["local"],
    )
    with pytest.raises(InvalidInputError) as caught:
        operator.operator_manifests(root, _prepare_all)
    assert [str(p) for p in caught.value.problems] == [
        f"Pulumi.Local.yaml: stack name 'Local' {STACK_NAME_RULE}",
        f"Pulumi.Prod_EU.yaml: stack name 'Prod_EU' {STACK_NAME_RULE}",
        f"Pulumi.{long}.yaml: operator Stack name 'hypershell-gateways-{long}' is longer"
        " than 42 characters",
    ]


def test_operator_settings_naming_no_stack_are_problems(tmp_path: Path) -> None:
    secret = {"name": "hypershell-aws", "key": "roleArn"}
    root = operator_project(
        tmp_path,
        ["aws", "ibm", "local"],
        stacks=["aws", "lcoal"],
        envFromSecrets={"awz": {"AWS_ROLE_ARN": secret}, "ibm": {"IC_API_KEY": secret}},
    )
    with pytest.raises(InvalidInputError) as caught:
        operator.operator_manifests(root, _prepare_all)
    assert [str(p) for p in caught.value.problems] == [
        "deploy/operator.yaml: envFromSecrets.awz: 'awz' names no stack of this project"
        " (no Pulumi.awz.yaml; stacks: aws, ibm, local)",
        "deploy/operator.yaml: envFromSecrets.ibm: the operator does not own stack 'ibm'"
        " (it owns: aws)",
        "deploy/operator.yaml: stacks.1: 'lcoal' names no stack of this project"
        " (no Pulumi.lcoal.yaml; stacks: aws, ibm, local)",
    ]


def test_cli_operator_manifests_writes_nothing_on_a_settings_typo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = operator_project(tmp_path / "project", ["aws", "local"], stacks=["aws", "lcoal"])
    out = tmp_path / "out"
    assert cli.main(["--root", str(root), "operator-manifests", "--out", str(out)]) == 2
    assert not out.exists()
    assert unlocated(capsys.readouterr().err).splitlines() == [
        "error: deploy/operator.yaml: stacks.1: 'lcoal' names no stack of this project"
        " (no Pulumi.lcoal.yaml; stacks: aws, local)",
        "1 problem(s); nothing written",
    ]


def test_a_pattern_gives_the_operator_every_shard_of_an_environment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `aws-*`: the operator owns every shard, one Stack each, a new shard included as soon as
    # its stack file exists; a pattern matching nothing is a problem, as a name would be.
    root = operator_project(
        tmp_path / "p", ["aws", "aws-1", "aws-2", "ibm"], stacks=["aws-*"], envFromSecrets={}
    )
    assert cli.main(["--root", str(root), "driver", "aws-1", "aws-2", "aws", "ibm"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "aws-1: operator",
        "aws-2: operator",
        "aws: ci",
        "ibm: ci",
    ]
    files = operator.operator_manifests(root, _prepare_all)
    assert sorted(name for name in files if name.startswith("stack-")) == [
        "stack-aws-1.yaml",
        "stack-aws-2.yaml",
    ]
    root = operator_project(tmp_path / "q", ["aws", "ibm"], stacks=["azure-*"], envFromSecrets={})
    with pytest.raises(InvalidInputError) as caught:
        operator.operator_manifests(root, _prepare_all)
    assert [str(p) for p in caught.value.problems] == [
        "deploy/operator.yaml: stacks.0: 'azure-*' matches no stack of this project"
        " (stacks: aws, ibm)"
    ]

"""Every choice among the ingress modes, credential drivers, sign-in kinds and exposure kinds is
exhaustive (issue 46 item 1): one place declares each, and a member added there fails type
checking at every place that must handle it.

The test adds one member to each declaration in a copy of the tool's packages, runs mypy with
the project's configuration on the copy, and compares the places mypy names with
:data:`SITES`, the places that must handle a new member. A place missing from mypy's answer is
a choice that would go on silently (an ``if``/``else`` whose last branch assumes the rest); a
place mypy names that the list lacks is a new choice: add it to the list.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import get_args

import pytest

from tests.support import ROOT

PACKAGES = ("components", "gatewayctl", "policy")
CHECKED = ("components", "gatewayctl", "policy/hypershell_policies")
"""What mypy checks of the copy: the project's ``files`` that hold a choice among the kinds."""

Edit = tuple[str, str, str]
"""(file, text that is there exactly once, what it becomes)."""

PROBE_CREDENTIALS = (
    "@dataclass(frozen=True, kw_only=True)\nclass ProbeCredentials:\n"
    '    driver: Literal["probe-driver"] = "probe-driver"\n\n\n'
)
PROBE_EXPOSURE = "@dataclass(frozen=True, kw_only=True)\nclass {}:\n    host: str\n\n\n"
ADDITIONS: Mapping[str, tuple[str, tuple[Edit, ...]]] = {
    "ingress mode": (
        "PROBE",
        (("components/ingress.py", "    NONE = ", '    PROBE = "probe"\n    NONE = '),),
    ),
    "credential driver": (
        "probe-driver|ProbeCredentials",
        (
            (
                "components/credentials.py",
                "CredentialDriver = Literal[",
                'CredentialDriver = Literal["probe-driver", ',
            ),
            (
                "components/credentials.py",
                "GatewayCredentials = ",
                f"{PROBE_CREDENTIALS}GatewayCredentials = ProbeCredentials | ",
            ),
        ),
    ),
    "sign-in kind": (
        "probe-sign-in",
        (
            (
                "gatewayctl/resolve/resolved.py",
                "SignIn = Literal[",
                'SignIn = Literal["probe-sign-in", ',
            ),
        ),
    ),
    "exposure kind": (
        "probe-exposure|ProbeExposure|ConsoleProbe",
        (
            (
                "components/exposure_types.py",
                "ExposureKind = Literal[",
                'ExposureKind = Literal["probe-exposure", ',
            ),
            (
                "components/exposure_types.py",
                "GatewayExposure = ",
                f"{PROBE_EXPOSURE.format('ProbeExposure')}GatewayExposure = ProbeExposure | ",
            ),
            (
                "components/exposure_types.py",
                "ConsoleExposure = ",
                f"{PROBE_EXPOSURE.format('ConsoleProbe')}ConsoleExposure = ConsoleProbe | ",
            ),
        ),
    ),
}
"""Each declaration: the names its new member is known by in mypy's messages, and the edits that
add it (each at the start of the declaration, so that the members it has do not matter)."""

SITES: Mapping[str, frozenset[tuple[str, str]]] = {
    "ingress mode": frozenset(
        {
            ("components/ingress.py", "reaches_outside"),
            ("components/exposure_types.py", "routed_by"),
            ("gatewayctl/inputs/clusters.py", "ClusterConfig._mode_needs"),
            ("gatewayctl/inputs/clusters.py", "ClusterConfig.referenced_namespaces"),
            ("gatewayctl/resolve/exposure_plan.py", "gateway_exposure"),
            ("gatewayctl/resolve/exposure_plan.py", "outside_listener"),
            ("gatewayctl/resolve/exposure_plan.py", "console_exposure"),
        }
    ),
    "credential driver": frozenset(
        {
            ("components/credentials.py", "gateway_keys"),
            ("components/credentials.py", "driver_tables"),
            ("components/workload.py", "Workload._credential_store"),
            ("gatewayctl/resolve/credential_drivers.py", "resolve"),
            ("gatewayctl/diff/orphaned_credentials.py", "store_of"),
            ("gatewayctl/diff/losses.py", "_store"),
            ("gatewayctl/diff/removals.py", "_gateway"),
        }
    ),
    "sign-in kind": frozenset(
        {
            ("gatewayctl/resolve/console_plan.py", "_no_keycloak"),
            ("gatewayctl/cli/render.py", "sign_in_shown"),
        }
    ),
    "exposure kind": frozenset(
        {
            ("components/exposure_types.py", "kind_of"),
            ("components/exposure_types.py", "exposed_by"),
            ("components/exposure_types.py", "ingress_peers"),
            ("components/exposure.py", "Exposure.__init__"),
            ("components/console_exposure.py", "console_ingress"),
            ("gatewayctl/status/health.py", "exposure_reader"),
            ("policy/hypershell_policies/exposures.py", "exposing"),
        }
    ),
}
"""The places (file, function) that must handle a new member of each declaration."""

_ERROR = re.compile(r"^(?P<file>[^:\n]+\.py):(?P<line>\d+): error: (?P<message>.*)$", re.M)


def _function_at(path: Path, line: int) -> str:
    """The qualified name of the innermost function holding ``line`` (``<module>`` outside)."""
    found = "<module>"

    def visit(node: ast.AST, prefix: str) -> None:
        nonlocal found
        for child in ast.iter_child_nodes(node):
            name = prefix
            if isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                end = child.end_lineno or child.lineno
                if child.lineno <= line <= end and not isinstance(child, ast.ClassDef):
                    found = name
                visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return found


def _copy_with_additions(root: Path) -> dict[str, list[str]]:
    """The copy, with every addition made; each addition → the edits it could not make."""
    for package in PACKAGES:
        shutil.copytree(
            ROOT / package, root / package, ignore=shutil.ignore_patterns("__pycache__", "venv")
        )
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    failed: dict[str, list[str]] = {what: [] for what in ADDITIONS}
    for what, (_, edits) in ADDITIONS.items():
        for file, old, new in edits:
            path = root / file
            text = path.read_text(encoding="utf-8")
            if text.count(old) != 1:
                failed[what].append(f"{file}: the declaration is not {old!r} (once)")
                continue
            path.write_text(text.replace(old, new), encoding="utf-8")
    return failed


def _named_sites(root: Path, output: str) -> dict[str, set[tuple[str, str]]]:
    """Each addition → the (file, function) of mypy's errors that name its new member."""
    named: dict[str, set[tuple[str, str]]] = {what: set() for what in ADDITIONS}
    unattributed = []
    for error in _ERROR.finditer(output):
        file, line = error["file"], int(error["line"])
        whats = [
            what for what, (names, _) in ADDITIONS.items() if re.search(names, error["message"])
        ]
        if len(whats) != 1:
            unattributed.append(error[0])
            continue
        named[whats[0]].add((file, _function_at(root / file, line)))
    assert unattributed == [], "errors no one addition explains:\n" + "\n".join(unattributed)
    return named


@pytest.fixture(scope="module")
def mypy_output(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, dict[str, list[str]]]:
    root = tmp_path_factory.mktemp("copy")
    failed = _copy_with_additions(root)
    cache = ROOT / ".mypy_cache"
    if cache.is_dir():  # the installed packages' entries stay valid: the copy's are redone
        shutil.copytree(cache, root / ".mypy_cache")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "pyproject.toml", *CHECKED],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode in (0, 1), result.stdout + result.stderr
    return root, result.stdout, failed


@pytest.mark.parametrize("what", list(ADDITIONS))
def test_a_new_member_fails_type_checking_at_every_place_that_must_handle_it(
    mypy_output: tuple[Path, str, dict[str, list[str]]], what: str
) -> None:
    root, output, failed = mypy_output
    assert failed[what] == []
    named = _named_sites(root, output)[what]
    silent = sorted(SITES[what] - named)
    unlisted = sorted(named - SITES[what])
    assert (silent, unlisted) == ([], []), (
        f"a new {what}: places that must handle it and type-check without it (make each an"
        f" exhaustive match ending in assert_never): {silent}; places mypy names that"
        f" {__name__}.SITES lacks (add them): {unlisted}"
    )


def test_the_policy_pack_knows_every_exposure_kind() -> None:
    from components.exposure_types import ExposureKind
    from policy.hypershell_policies import exposures

    # The pack cannot import the program's packages where it runs: it keeps the kinds' names,
    # and mypy checks its choices among them against the program's declaration.
    assert get_args(ExposureKind) == exposures.EXPOSURE_KINDS

"""``status`` on values that parse but cannot be used: times and renewal windows that overflow,
integers beyond what Python converts, Deployment counts that are not counts, parent cycles and
a live resource twice. Each is bad input naming its file and field (exit 2, nothing on stdout),
never a crash (exit 1) and never a part read as healthy or a resource that vanishes (exit 0)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from gatewayctl.cli import main as cli
from gatewayctl.status import health
from gatewayctl.status.models import UnreadableError
from tests.hostile_helpers import run_cli
from tests.status_builders import FIXTURES, SECRET_TEXT, deployment_object

NOW = "2026-12-01T05:30:00Z"
STATE = json.loads((FIXTURES / "state.json").read_text(encoding="utf-8"))
CLEAN = json.loads((FIXTURES / "refresh-clean.json").read_text(encoding="utf-8"))
RESOURCES = STATE["deployment"]["resources"]
FORMATS = ("table", "markdown", "json", "yaml")


def _index(suffix: str) -> int:
    (found,) = [i for i, r in enumerate(RESOURCES) if r["urn"].endswith(suffix)]
    return found


CA = _index("::canary-pki-ca")
DEPLOY = _index("::canary-workload-deploy")
WORKLOAD = _index("::canary-workload")
GATEWAY = _index("::canary")


def _status(path: Path, fmt: str = "table") -> tuple[int, str, str]:
    out = run_cli("status", "ibm", "--from", str(path), "--now", NOW, "--format", fmt)
    return out.code, out.out, out.err


def _write(tmp_path: Path, document: Any, *, text: str | None = None) -> Path:
    path = tmp_path / "state.json"
    written = json.dumps(document)
    path.write_text(written.replace('"PLACEHOLDER"', text) if text else written, encoding="utf-8")
    return path


def _problem(path: Path, field: str, message: str) -> str:
    return f"error: {path}: {field}: {message}\n1 problem(s); nothing written\n"


OUTSIDE = "a time whose UTC value is outside the years 1 to 9999"


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(
    ("where", "key", "value", "field", "message"),
    [
        (
            "manifest",
            "time",
            "9999-12-31T23:59:59-12:00",
            "deployment.manifest.time",
            OUTSIDE,
        ),
        (
            "manifest",
            "time",
            "0001-01-01T00:00:00+05:00",
            "deployment.manifest.time",
            OUTSIDE,
        ),
        (
            "ca",
            "validityEndTime",
            "9999-12-31T23:59:59-12:00",
            f"deployment.resources.{CA}.outputs.validityEndTime",
            f"{OUTSIDE}: the certificate's expiry is unknown",
        ),
        (
            "ca",
            "earlyRenewalHours",
            1e300,
            f"deployment.resources.{CA}.outputs.earlyRenewalHours",
            "not a whole number of hours from 0 to 9223372036854775807: the renewal window is"
            " unknown",
        ),
        (
            "ca",
            "earlyRenewalHours",
            2**62,
            f"deployment.resources.{CA}.outputs.earlyRenewalHours",
            "a renewal window that starts before the year 1: the renewal window is unknown",
        ),
        (
            "ca",
            "earlyRenewalHours",
            "720",
            f"deployment.resources.{CA}.outputs.earlyRenewalHours",
            "not a whole number of hours from 0 to 9223372036854775807: the renewal window is"
            " unknown",
        ),
    ],
)
def test_times_and_windows_that_overflow_are_bad_input(
    tmp_path: Path, fmt: str, where: str, key: str, value: Any, field: str, message: str
) -> None:
    document = copy.deepcopy(STATE)
    if where == "manifest":
        document["deployment"]["manifest"] = {"time": value}
    else:
        document["deployment"]["resources"][CA]["outputs"][key] = value
    path = _write(tmp_path, document)
    code, out, err = _status(path, fmt)
    assert (code, err) == (2, _problem(path, field, message))
    text = f"{path}: {field}: {message}"
    entry = {"column": None, "field": field, "line": None, "message": message, "path": str(path)}
    documents: dict[str, Callable[[str], Any]] = {"json": json.loads, "yaml": yaml.safe_load}
    parsed = documents[fmt](out) if fmt in documents else out
    assert parsed == ({"problems": [{**entry, "text": text}]} if fmt in documents else "")


def test_a_time_is_counted_in_utc_and_only_go_zero_time_is_no_time(tmp_path: Path) -> None:
    document = copy.deepcopy(STATE)
    # Year 1 in UTC, but not Go's zero time: a time, and shown in UTC.
    document["deployment"]["manifest"] = {"time": "0002-01-01T00:00:00+14:00"}
    document["deployment"]["resources"][CA]["outputs"]["validityEndTime"] = (
        "2027-06-01T03:00:00+05:00"
    )
    path = _write(tmp_path, document)
    code, out, err = _status(path, "json")
    assert (code, err) == (5, "")
    report = json.loads(out)
    assert report["stateTime"] == "0001-12-31T10:00:00+00:00"
    (canary,) = [g for g in report["gateways"] if g["name"] == "canary"]
    assert [c["expires"] for c in canary["certificates"] if c["name"] == "canary-pki-ca"] == [
        "2027-05-31T22:00:00+00:00"
    ]


def test_an_integer_beyond_what_python_converts_is_read_and_named(tmp_path: Path) -> None:
    document = copy.deepcopy(STATE)
    document["deployment"]["resources"][DEPLOY]["outputs"]["spec"]["replicas"] = "PLACEHOLDER"
    # A number no field reads is no problem, however long.
    document["deployment"]["resources"][DEPLOY]["outputs"]["unread"] = "PLACEHOLDER"
    path = _write(tmp_path, document, text="9" * 5_000)
    field = f"deployment.resources.{DEPLOY}.outputs.spec.replicas"
    message = "not a whole number from 0 to 2147483647: the Deployment's health is unknown"
    assert _status(path) == (2, "", _problem(path, field, message))
    path.write_text(json.dumps({"version": 1, "deployment": {}}).replace("1", "-" + "1" * 5_000))
    code, out, err = _status(path)
    assert (code, out) == (2, "")
    assert err == _problem(path, "version", "Input should be a finite number")


@pytest.mark.parametrize(
    ("section", "key", "value", "limit"),
    [
        ("spec", "replicas", "3", 2**31 - 1),
        ("spec", "replicas", -1, 2**31 - 1),
        ("spec", "replicas", 1.5, 2**31 - 1),
        ("spec", "replicas", True, 2**31 - 1),
        ("spec", "replicas", 2**31, 2**31 - 1),
        ("status", "availableReplicas", "lots", 2**31 - 1),
        ("status", "updatedReplicas", -3, 2**31 - 1),
        ("status", "replicas", [1], 2**31 - 1),
        ("status", "observedGeneration", {"n": 1}, 2**63 - 1),
        ("metadata", "generation", 2**63, 2**63 - 1),
    ],
)
def test_a_deployment_count_that_is_no_count_is_bad_input(
    tmp_path: Path, section: str, key: str, value: Any, limit: int
) -> None:
    live = deployment_object("ns")
    live[section][key] = value
    with pytest.raises(UnreadableError) as raised:
        health.deployment(live)
    assert (raised.value.field, raised.value.reason) == (
        f"outputs.{section}.{key}",
        f"not a whole number from 0 to {limit}: the Deployment's health is unknown",
    )
    document = copy.deepcopy(STATE)
    document["deployment"]["resources"][DEPLOY]["outputs"][section][key] = value
    path = _write(tmp_path, document)
    field = f"deployment.resources.{DEPLOY}.outputs.{section}.{key}"
    assert _status(path, "table") == (
        2,
        "",
        _problem(
            path, field, f"not a whole number from 0 to {limit}: the Deployment's health is unknown"
        ),
    )


def test_a_whole_float_count_and_an_absent_one_read_as_the_api_means() -> None:
    live = deployment_object("ns", replicas=2, available=2)
    live["spec"]["replicas"] = 2.0
    del live["status"]["updatedReplicas"]  # the API server omits a zero
    assert health.deployment(live) == (
        "Progressing",
        "rollout under way: 2/2 available, 0/2 updated",
    )


def test_a_count_from_a_refresh_names_the_step(tmp_path: Path) -> None:
    refresh = copy.deepcopy(CLEAN)
    (step,) = [
        i for i, s in enumerate(refresh["steps"]) if s["urn"].endswith("::canary-workload-deploy")
    ]
    refresh["steps"][step]["oldState"]["outputs"]["spec"]["replicas"] = -2
    path = tmp_path / "refresh.json"
    path.write_text(json.dumps(refresh), encoding="utf-8")
    out = run_cli("status", "ibm", "--from", str(path), "--now", NOW)
    field = f"steps.{step}.oldState.outputs.spec.replicas"
    message = "not a whole number from 0 to 2147483647: the Deployment's health is unknown"
    assert (out.code, out.out, out.err) == (2, "", _problem(path, field, message))


def test_a_parent_cycle_in_one_file_is_bad_input(tmp_path: Path) -> None:
    document = copy.deepcopy(STATE)
    resources = document["deployment"]["resources"]
    resources[GATEWAY]["parent"] = resources[WORKLOAD]["urn"]
    path = _write(tmp_path, document)
    first, second = sorted((GATEWAY, WORKLOAD))
    message = (
        f"a parent cycle through 2 resource(s) (deployment.resources.{first},"
        f" deployment.resources.{second}): no resource is its own ancestor; the file is corrupt"
    )
    assert _status(path) == (
        2,
        "",
        _problem(path, f"deployment.resources.{first}.parent", message),
    )
    # A resource its own parent, in a refresh: the step is named.
    refresh = copy.deepcopy(CLEAN)
    state = refresh["steps"][3]["oldState"]
    state["parent"] = state["urn"]
    path = tmp_path / "refresh.json"
    path.write_text(json.dumps(refresh), encoding="utf-8")
    out = run_cli("status", "ibm", "--from", str(path), "--now", NOW)
    message = (
        "a parent cycle through 1 resource(s) (steps.3.oldState): no resource is its own"
        " ancestor; the file is corrupt"
    )
    assert (out.code, out.out, out.err) == (
        2,
        "",
        _problem(path, "steps.3.oldState.parent", message),
    )


def test_a_parent_cycle_the_files_make_together_is_bad_input(tmp_path: Path) -> None:
    # The state says the Deployment's parent is the workload; the refresh says the workload's
    # parent is the Deployment: each file alone is a tree. Read together, the Deployment would
    # belong to no gateway.
    refresh = copy.deepcopy(CLEAN)
    workload_urn, deploy_urn = RESOURCES[WORKLOAD]["urn"], RESOURCES[DEPLOY]["urn"]
    refresh["steps"] = [s for s in refresh["steps"] if s["urn"] != deploy_urn]
    (step,) = [i for i, s in enumerate(refresh["steps"]) if s["urn"] == workload_urn]
    refresh["steps"][step]["oldState"]["parent"] = deploy_urn
    refresh_path = tmp_path / "refresh.json"
    refresh_path.write_text(json.dumps(refresh), encoding="utf-8")
    state_path = _write(tmp_path, STATE)
    out = run_cli(
        "status", "ibm", "--from", str(refresh_path), str(state_path), "--now", NOW, "-o", "json"
    )
    message = (
        "a parent cycle the files make together (one file's parent against another's): no"
        " resource is its own ancestor; give files of one state"
    )
    assert (out.code, out.err) == (
        2,
        _problem(refresh_path, f"steps.{step}.oldState.parent", message),
    )
    assert json.loads(out.out)["problems"][0]["field"] == f"steps.{step}.oldState.parent"


def test_a_live_resource_twice_is_bad_input_and_a_pending_delete_is_not(tmp_path: Path) -> None:
    document = copy.deepcopy(STATE)
    resources = document["deployment"]["resources"]
    resources.append(copy.deepcopy(resources[DEPLOY]))
    resources.append(copy.deepcopy(resources[CA]))
    path = _write(tmp_path, document)
    message = (
        f"the URN of deployment.resources.{DEPLOY} again: a state holds each live resource once"
        " (the CLI refuses a duplicate not marked for deletion) (1 more like it)"
    )
    field = f"deployment.resources.{len(RESOURCES)}.urn"
    assert _status(path) == (2, "", _problem(path, field, message))
    # An entry marked for deletion (a replacement's old object) is the CLI's own: read.
    document = copy.deepcopy(STATE)
    old = copy.deepcopy(RESOURCES[DEPLOY])
    old["delete"] = True
    old["outputs"]["spec"]["replicas"] = "corrupt but deleted"
    document["deployment"]["resources"].append(old)
    path = _write(tmp_path, document)
    code, out, err = _status(path, "json")
    assert (code, err) == (5, "")
    assert out == _status(FIXTURES / "state.json", "json")[1]
    assert SECRET_TEXT not in out


def test_now_beyond_the_years_of_utc_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(["status", "ibm", "--from", "x.json", "--now", "9999-12-31T23:59:59-12:00"])
    assert exited.value.code == 2
    assert (
        capsys.readouterr()
        .err.splitlines()[-1]
        .endswith(
            "status: error: argument --now: '9999-12-31T23:59:59-12:00' is not an ISO 8601 time of"
            " the years 1 to 9999 in UTC"
        )
    )

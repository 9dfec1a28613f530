"""``gatewayctl status`` as ``argocd app list`` / ``argocd app get`` print it (issue 25 items 2
and 3): one row per gateway, never folded; ``-o wide``, ``json``, ``yaml``; notes on stderr
(``-q``: none); colour on a terminal only; the state's age from the export's
``deployment.manifest.time``; ``status <stack> <gateway>``: its resource tree.

The fixtures are tests/fixtures/status (``tests.status_builders``) and, for what the real
engine wrote, tests/fixtures/engine."""

from __future__ import annotations

import contextlib
import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from rich.console import Console

from gatewayctl import printing
from gatewayctl.cli import main as cli
from gatewayctl.status import age, core, inputs, view
from tests.hostile_helpers import Outcome, run_cli
from tests.status_builders import FIXTURES, export, gateway_resources, stack_resources
from tests.support import ROOT

NOW = "2026-12-01T05:30:00Z"
DRIFT = str(FIXTURES / "refresh-drift.json")
PREVIEW = str(FIXTURES / "preview.json")
STATE = str(FIXTURES / "state.json")
ENGINE = ROOT / "tests" / "fixtures" / "engine"


def status(*args: str, now: str = NOW) -> Outcome:
    return run_cli("status", "ibm", *args, "--now", now)


def _state_file(tmp_path: Path, edit: Any) -> str:
    document = json.loads(Path(STATE).read_text(encoding="utf-8"))
    edit(document)
    path = tmp_path / "state.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return str(path)


def _stack_outputs(document: dict[str, Any]) -> dict[str, Any]:
    resources = document["deployment"]["resources"]
    (stack,) = [r for r in resources if r["type"] == "pulumi:pulumi:Stack"]
    gateways: dict[str, Any] = stack["outputs"]["gateways"]
    return gateways


# --- the list --------------------------------------------------------------------------------

DRIFT_LIST = """\
NAME        SYNC       HEALTH    CERTIFICATES
batch-jobs  OutOfSync  Degraded  303 days
canary      Synced     Healthy   303 days
research    Missing    Missing   303 days
team-a      OutOfSync  Healthy   18 days, renewal due
"""

DRIFT_NOTES = """\
4 gateway(s), 3 out of sync, 2 not healthy, 1 with certificates due; health from the refreshed\
 live state
state: 2026-11-20 09:00 UTC (10d ago)
batch-jobs: kubernetes:apps/v1:Deployment batch-jobs-workload-deploy (live) update: spec.replicas
batch-jobs: kubernetes:apps/v1:Deployment batch-jobs-workload-deploy Degraded: rollout exceeded\
 its progress deadline (ProgressDeadlineExceeded)
research: kubernetes:route.openshift.io/v1:Route research-exposure-route (live) live object missing
research: kubernetes:route.openshift.io/v1:Route research-exposure-route Missing: the live object\
 is gone
team-a: kubernetes:core/v1:Secret team-a-pki-server-tls (live) update: data.tls.key
team-a: kubernetes:apps/v1:Deployment team-a-workload-deploy (live) update:\
 spec.template.spec.containers[0].image
team-a: certificate team-a-pki-client-cert expires 2026-12-20 00:00 UTC, inside its renewal\
 window since 2026-11-20 00:00 UTC
team-a: certificate team-a-pki-server-cert expires 2026-12-20 00:00 UTC, inside its renewal\
 window since 2026-11-20 00:00 UTC
to renew team-a-pki-client-cert, team-a-pki-server-cert (expires 2026-12-20 00:00 UTC):\
 `python -m gatewayctl rotate team-a server-certificate client-certificate --stack ibm`
"""


def test_the_list_is_one_row_per_gateway_on_stdout_and_the_notes_on_stderr() -> None:
    out = status("--from", DRIFT, "--from", STATE)
    assert out.code == 4
    assert out.out == DRIFT_LIST
    assert out.err == DRIFT_NOTES


def test_quiet_silences_the_notes_and_keeps_the_result_and_the_exit_code() -> None:
    out = status("-q", "--from", DRIFT, STATE)
    assert (out.code, out.out, out.err) == (4, DRIFT_LIST, "")


def test_wide_adds_the_address_the_console_and_the_release(tmp_path: Path) -> None:
    def console(document: dict[str, Any]) -> None:
        _stack_outputs(document)["team-a"]["consoleAddress"] = "https://console.example.com"

    out = status("-o", "wide", "-q", "--from", _state_file(tmp_path, console))
    assert out.code == 5
    # The releases are what git binds (Pulumi.ibm.yaml; canary pins its own).
    address = "grpcs://gw-openshell-{}.apps.example.com:443"
    assert out.out.splitlines() == [
        f"NAME        SYNC    HEALTH   CERTIFICATES          ADDRESS{' ' * 45}CONSOLE{' ' * 22}"
        "RELEASE",
        f"batch-jobs  Synced  Healthy  303 days              -{' ' * 51}-{' ' * 28}"
        "openshell-0.0.109",
        f"canary      Synced  Healthy  303 days              {address.format('canary')}    -"
        f"{' ' * 28}openshell-0.0.110 (pinned)",
        f"research    Synced  Healthy  303 days              {address.format('research')}  -"
        f"{' ' * 28}openshell-0.0.109",
        f"team-a      Synced  Healthy  18 days, renewal due  {address.format('team-a')}    "
        "https://console.example.com  openshell-0.0.109",
    ]


def test_a_cell_longer_than_the_terminal_widens_its_column_and_is_never_folded(
    tmp_path: Path,
) -> None:
    host = "gw-openshell-team-a." + ".".join(["very-long-label"] * 12) + ".example.com"

    def long_address(document: dict[str, Any]) -> None:
        _stack_outputs(document)["team-a"]["address"] = f"grpcs://{host}:443"

    out = status("-o", "wide", "-q", "--from", _state_file(tmp_path, long_address))
    lines = out.out.splitlines()
    assert len(lines) == 5  # the header and one row per gateway, at any length
    assert lines[4].startswith(
        f"team-a      Synced  Healthy  18 days, renewal due  grpcs://{host}:443"
    )
    assert len(lines[4]) > 200 and len({len(line.rstrip()) for line in lines[1:]}) > 1
    # On a narrow console too: padded, not wrapped, not cropped.
    built = core.build("ibm", inputs.read([Path(DRIFT), Path(STATE)]), _utc(NOW))
    written = io.StringIO()
    narrow = Console(file=written, width=30, color_system=None)
    printing.show(narrow, view.list_lines(built, wide=False))
    assert written.getvalue() == DRIFT_LIST


def test_every_declared_gateway_is_listed_and_missing_when_the_state_lacks_it(
    tmp_path: Path,
) -> None:
    deployed = ("batch-jobs", "canary", "team-a")  # gateways/ibm also declares research
    resources = stack_resources(dict.fromkeys(deployed))
    for name in deployed:
        resources += gateway_resources(name, exposed=False)
    path = tmp_path / "state.json"
    path.write_text(json.dumps(export(resources)), encoding="utf-8")
    out = status("-q", "--from", str(path))
    assert out.code == 3
    assert out.out == (
        "NAME        SYNC     HEALTH   CERTIFICATES\n"
        "batch-jobs  Synced   Healthy  303 days\n"
        "canary      Synced   Healthy  303 days\n"
        "research    Missing  Missing  -\n"
        "team-a      Synced   Healthy  303 days\n"
    )
    tree = status("research", "-q", "--from", str(path))
    assert tree.code == 3
    assert tree.out.endswith(
        "KIND     NAME      SYNC     HEALTH   MESSAGE\n"
        "Gateway  research  Missing  Missing  declared, not in the state yet\n"
    )


def test_json_and_yaml_are_the_same_document_with_each_console_and_release() -> None:
    stack = json.loads(status("-o", "json", "--from", DRIFT, STATE).out)
    assert yaml.safe_load(status("-o", "yaml", "--from", DRIFT, STATE).out) == stack
    assert [
        (g["name"], g["console"], g["release"], g["releasePinned"]) for g in stack["gateways"]
    ] == [
        ("batch-jobs", None, "openshell-0.0.109", False),
        ("canary", None, "openshell-0.0.110", True),
        ("research", None, "openshell-0.0.109", False),
        ("team-a", None, "openshell-0.0.109", False),
    ]


# --- colour ----------------------------------------------------------------------------------


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _on_terminal(monkeypatch: pytest.MonkeyPatch, *argv: str, no_color: str | None) -> str:
    for name in ("NO_COLOR", "FORCE_COLOR", "COLORTERM", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    if no_color is not None:
        monkeypatch.setenv("NO_COLOR", no_color)
    out = _Terminal()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert cli.main(["status", "ibm", *argv, "--now", NOW]) == 4
    return out.getvalue()


def test_sync_and_health_are_coloured_on_a_terminal_only(monkeypatch: pytest.MonkeyPatch) -> None:
    coloured = _on_terminal(monkeypatch, "-q", "--from", DRIFT, STATE, no_color=None)
    assert coloured.splitlines() == [
        "NAME        SYNC       HEALTH    CERTIFICATES",
        "batch-jobs  \x1b[33mOutOfSync\x1b[0m  \x1b[31mDegraded\x1b[0m  303 days",
        "canary      \x1b[32mSynced\x1b[0m     \x1b[32mHealthy\x1b[0m   303 days",
        "research    \x1b[33mMissing\x1b[0m    \x1b[33mMissing\x1b[0m   303 days",
        "team-a      \x1b[33mOutOfSync\x1b[0m  \x1b[32mHealthy\x1b[0m   18 days, renewal due",
    ]
    tree = _on_terminal(monkeypatch, "batch-jobs", "-q", "--from", DRIFT, STATE, no_color=None)
    assert "Health Status: \x1b[31mDegraded\x1b[0m\n" in tree
    # NO_COLOR (https://no-color.org: any non-empty value) and a pipe (tests' run_cli): none.
    assert _on_terminal(monkeypatch, "-q", "--from", DRIFT, STATE, no_color="1") == DRIFT_LIST
    assert "\x1b" not in status("batch-jobs", "--from", DRIFT, STATE).printed


# --- the state's age -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("delta", "expected"),
    [
        (timedelta(seconds=-3), None),  # the state is newer than the clock
        (timedelta(seconds=-1), "0s"),  # within HumanDuration's tolerance
        (timedelta(0), "0s"),
        (timedelta(seconds=119), "119s"),
        (timedelta(minutes=2), "2m"),
        (timedelta(minutes=5, seconds=30), "5m30s"),
        (timedelta(minutes=179), "179m"),
        (timedelta(hours=3), "3h"),
        (timedelta(hours=5, minutes=10), "5h10m"),
        (timedelta(hours=47, minutes=59), "47h"),
        (timedelta(hours=48), "2d"),
        (timedelta(days=3, hours=4), "3d4h"),
        (timedelta(days=10, hours=20), "10d"),
        (timedelta(days=729), "729d"),
        (timedelta(days=730), "2y"),
        (timedelta(days=760), "2y30d"),
        (timedelta(days=365 * 8 + 100), "8y"),
    ],
)
def test_the_age_reads_as_kubectl_age(delta: timedelta, expected: str | None) -> None:
    assert age.human_duration(delta) == expected


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def test_the_age_is_counted_from_the_checks_clock() -> None:
    def state_note(now: str) -> str:
        out = status("--from", STATE, now=now)
        (line,) = [line for line in out.err.splitlines() if line.startswith("state: ")]
        return line

    # The fixtures' export: deployment.manifest.time 2026-11-20T09:00:00.000000000Z.
    assert state_note(NOW) == "state: 2026-11-20 09:00 UTC (10d ago)"
    assert state_note("2026-11-20T09:05:30Z") == "state: 2026-11-20 09:00 UTC (5m30s ago)"
    assert state_note("2026-11-20T08:00:00Z") == (
        "state: 2026-11-20 09:00 UTC (after the time of the check, 2026-11-20 08:00 UTC:"
        " check --now)"
    )
    assert "state: unknown (no stack export)\n" in status("--from", DRIFT).err


def test_the_documents_and_the_markdown_carry_the_states_time() -> None:
    document = json.loads(status("-o", "json", "--from", DRIFT, STATE).out)
    assert (document["stateTime"], document["stateAgeSeconds"]) == (
        "2026-11-20T09:00:00+00:00",
        10 * 86400 + 20 * 3600 + 30 * 60,
    )
    assert json.loads(status("-o", "json", "--from", DRIFT).out)["stateTime"] is None
    markdown = status("--format", "markdown", "--from", DRIFT, STATE).out
    assert "Checked 2026-12-01 05:30 UTC; state as of 2026-11-20 09:00 UTC (10d ago).\n" in (
        markdown
    )
    # Counted from the check's clock (--now); a state newer than it says so.
    markdown = status("--format", "markdown", "--from", STATE, now="2026-11-20T08:00:00Z").out
    assert (
        "state as of 2026-11-20 09:00 UTC (after the time of the check, 2026-11-20 08:00 UTC:"
        " check --now)." in markdown
    )


def test_the_real_engines_manifest_time_is_read_to_the_microsecond() -> None:
    read = inputs.read([ENGINE / "local-drift-state.json"])
    written = age.state_time(read.checkpoint)
    assert written == datetime(2026, 12, 1, 23, 29, 9, 70805, tzinfo=UTC)  # ...070805735Z
    assert age.describe(written, _utc("2026-12-02T00:00:00Z")) == "2026-12-01 23:29 UTC (30m ago)"


def test_a_manifest_time_that_is_no_time_is_bad_input_and_go_zero_is_none(
    tmp_path: Path,
) -> None:
    def bad(document: dict[str, Any]) -> None:
        document["deployment"]["manifest"]["time"] = "yesterday"

    path = _state_file(tmp_path, bad)
    out = status("--from", path)
    assert (out.code, out.out) == (2, "")
    assert out.err.splitlines()[0] == (
        f"error: {path}: deployment.manifest.time: Input should be a valid datetime or date,"
        " input is too short"
    )

    def zero(document: dict[str, Any]) -> None:
        document["deployment"]["manifest"]["time"] = "0001-01-01T00:00:00Z"

    out = status("-o", "json", "--from", _state_file(tmp_path, zero))
    assert json.loads(out.out)["stateTime"] is None
    out = status("--from", _state_file(tmp_path, zero))
    assert "state: unknown (the export holds no time)\n" in out.err


# --- one gateway: its resource tree ----------------------------------------------------------

TEAM_A = """\
Stack:         ibm
Gateway:       team-a
Address:       grpcs://gw-openshell-team-a.apps.example.com:443
Console:       -
Release:       openshell-0.0.109
State:         2026-11-20 09:00 UTC (10d ago)
Sync Status:   OutOfSync
Health Status: Healthy
Certificates:  18 days (team-a-pki-client-cert), renewal due

KIND                       NAME                         SYNC       HEALTH   MESSAGE
Gateway                    team-a                       OutOfSync  Healthy
├─Database                 team-a-database              Synced     Healthy
│ ├─postgresql:Database    team-a-database-db           Synced     Healthy  present
│ ├─postgresql:Role        team-a-database-db-role      Synced     Healthy  present
│ └─random:RandomPassword  team-a-database-db-password  Synced
├─Exposure                 team-a-exposure              Synced     Healthy
│ └─Route                  team-a-exposure-route        Synced     Healthy  Admitted
├─Namespace                team-a-ns                    Synced     Healthy  Active
├─Pki                      team-a-pki                   OutOfSync
│ ├─Secret                 team-a-pki-server-tls        OutOfSync           live update:\
 data.tls.key
│ ├─tls:LocallySignedCert  team-a-pki-client-cert       Synced              expires 2026-12-20\
 (18 days), renewal due
│ ├─tls:LocallySignedCert  team-a-pki-server-cert       Synced              expires 2026-12-20\
 (18 days), renewal due
│ ├─tls:PrivateKey         team-a-pki-ca-key            Synced
│ └─tls:SelfSignedCert     team-a-pki-ca                Synced              expires 2036-01-05\
 (3322 days)
└─Workload                 team-a-workload              OutOfSync  Healthy
  ├─ConfigMap              team-a-workload-config       Synced
  └─Deployment             team-a-workload-deploy       OutOfSync  Healthy  live update:\
 spec.template.spec.containers[0].image; 1/1 available
"""


def test_a_gateways_resource_tree_and_its_own_exit_code() -> None:
    out = status("team-a", "--from", DRIFT, STATE)
    assert out.code == 3  # team-a is out of sync; the stack as a whole is degraded (4)
    assert out.out == TEAM_A
    assert out.err == "health from the refreshed live state\n"
    assert status("canary", "-q", "--from", DRIFT, STATE).code == 0
    assert status("batch-jobs", "-q", "--from", DRIFT, STATE).code == 4


def test_the_wide_tree_adds_each_objects_id() -> None:
    out = status("batch-jobs", "-o", "wide", "-q", "--from", DRIFT, STATE)
    lines = out.out.splitlines()
    assert lines[10] == (
        "KIND                       NAME                             ID"
        "                               SYNC       HEALTH    MESSAGE"
    )
    assert lines[-1] == (
        "  └─Deployment             batch-jobs-workload-deploy       batch-jobs-workload-deploy"
        "       OutOfSync  Degraded  live update: spec.replicas; rollout exceeded its progress"
        " deadline (ProgressDeadlineExceeded)"
    )


def test_a_preview_shows_the_tree_of_a_gateway_not_deployed_yet() -> None:
    out = status("team-d", "-q", "--from", PREVIEW, STATE)
    assert out.code == 3
    head, table = out.out.split("\n\n")
    assert "Sync Status:   Missing\nHealth Status: Missing\n" in head
    assert table.splitlines()[:6] == [
        "KIND                       NAME                         SYNC     HEALTH   MESSAGE",
        "Gateway                    team-d                       Missing  Missing  not deployed"
        " yet",
        "├─Database                 team-d-database              Missing  Missing",
        "│ ├─postgresql:Database    team-d-database-db           Missing  Missing  git create"
        " (not deployed yet)",
        "│ ├─postgresql:Role        team-d-database-db-role      Missing  Missing  git create"
        " (not deployed yet)",
        "│ └─random:RandomPassword  team-d-database-db-password  Missing           git create"
        " (not deployed yet)",
    ]


def test_an_unknown_gateway_and_markdown_of_one_are_usage_errors() -> None:
    out = status("nope", "--from", STATE)
    assert (out.code, out.out) == (2, "")
    assert out.err == (
        "error: stack ibm has no gateway 'nope' (declared or in the files); its gateways:"
        " batch-jobs, canary, research, team-a\n"
    )
    out = status("team-a", "--format", "markdown", "--from", STATE)
    assert (out.code, out.err) == (
        2,
        "error: -o markdown is the whole stack's report; give no gateway\n",
    )


def test_json_and_yaml_of_a_gateway_carry_its_tree() -> None:
    document = json.loads(status("team-a", "-o", "json", "--from", DRIFT, STATE).out)
    assert (document["stack"], document["state"], document["stateTime"]) == (
        "ibm",
        "out-of-sync",
        "2026-11-20T09:00:00+00:00",
    )
    gateway = document["gateway"]
    assert (gateway["name"], gateway["release"], gateway["releasePinned"]) == (
        "team-a",
        "openshell-0.0.109",
        False,
    )
    rows = {r["name"]: r for r in gateway["resources"]}
    assert rows["team-a-pki-server-tls"] == {
        "urn": "urn:pulumi:ibm::hypershell-gateways::hypershell:gateway:Gateway$"
        "hypershell:gateway:Pki$kubernetes:core/v1:Secret::team-a-pki-server-tls",
        "type": "kubernetes:core/v1:Secret",
        "kind": "Secret",
        "name": "team-a-pki-server-tls",
        "parent": "urn:pulumi:ibm::hypershell-gateways::hypershell:gateway:Gateway$"
        "hypershell:gateway:Pki::team-a-pki",
        "id": "team-a-pki-server-tls",
        "sync": "OutOfSync",
        "health": None,
        "message": "live update: data.tls.key",
    }
    assert rows["team-a"]["parent"] is None
    assert yaml.safe_load(status("team-a", "-o", "yaml", "--from", DRIFT, STATE).out) == document
    # The stack's document lists no resources.
    stack = json.loads(status("-o", "json", "--from", DRIFT, STATE).out)
    assert "resources" not in stack["gateways"][0]


# --- what the real engine wrote --------------------------------------------------------------


def test_the_real_engines_drift_as_a_list_and_a_tree() -> None:
    files = [str(ENGINE / f"local-drift-{kind}.json") for kind in ("refresh", "state")]
    argv = ["--root", str(ROOT), "status", "local"]  # recorded as the local stack
    out = run_cli(*argv, "--from", *files, "--now", "2026-12-02T00:00:00Z")
    assert out.code == 3
    assert out.out == (
        "NAME       SYNC       HEALTH   CERTIFICATES\n"
        "dev        OutOfSync  Healthy  -\n"
        "dev-build  Missing    Healthy  -\n"
        "offline    OutOfSync  Healthy  -\n"
    )
    assert "state: 2026-12-01 23:29 UTC (30m ago)\n" in out.err
    # The ConfigMap kubectl deleted: Missing in the tree, under its Workload.
    tree = run_cli(*argv, "dev-build", "-q", "--from", *files, "--now", "2026-12-02T00:00:00Z")
    lines = tree.out.splitlines()
    assert tree.code == 3
    assert (
        "└─Workload              dev-build-workload                                  Missing"
        "  Healthy"
    ) in lines
    assert (
        "  ├─ConfigMap           dev-build-workload-config                           Missing"
        "           live object missing"
    ) in lines
    assert (
        "  ├─Deployment          dev-build-workload-deploy                           Synced "
        "  Healthy  1/1 available"
    ) in lines


def test_a_parent_chain_of_thousands_is_drawn_to_a_bounded_depth(tmp_path: Path) -> None:
    """A hostile (or broken) state may chain its parents deeper than any recursion allows."""
    from tests.status_builders import resource, urn

    resources = stack_resources({"team-a": None}) + gateway_resources("team-a", exposed=False)
    chain = ["hypershell:gateway:Gateway", "hypershell:gateway:Workload"]
    parent = urn(chain, "team-a-workload")
    for i in range(3000):
        entry = resource("kubernetes:core/v1:ConfigMap", f"team-a-workload-deep-{i}", chain, parent)
        resources.append(entry)
        parent = entry["urn"]
    path = tmp_path / "state.json"
    path.write_text(json.dumps(export(resources)), encoding="utf-8")
    out = status("team-a", "-q", "--from", str(path))
    assert out.code == 0  # its own: the other declared gateways (Missing here) do not count
    deepest = [line for line in out.out.splitlines() if "team-a-workload-deep-2999" in line]
    # Each the only child of the one above: 15 levels of "  ", then its branch, at most.
    assert deepest == [" " * 30 + "└─ConfigMap  team-a-workload-deep-2999    Synced"]

"""The real-engine suite: the real Pulumi CLI, the real pulumi-kubernetes provider and a real
Kubernetes control plane (kube-apiserver, controller manager, scheduler, etcd; kwok for nodes
and pods), all built by ``e2e/build.py`` and started here on loopback for the session.

Run with ``make e2e`` (it builds first). Nothing here is faked: where a controller cannot run
here (the OpenShift router, a Gateway API implementation) ``e2e.routestatus.StatusStandIn``
sets the status it would set, and each test that depends on it says so. Of the four bridged
providers that cannot be built, all four (tls, random, postgresql, keycloak) are stand-in plugins
with real effects (``e2e/providers``; the postgresql one on a real PostgreSQL per project,
tests/e2e/databases.py; the keycloak one against the session's real Keycloak, which every
stack's ``up`` therefore needs: ``lane_keycloak``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from e2e import build, divergences
from e2e import project as e2e_project
from e2e.cluster import Cluster, running_cluster, terminate_as_interrupt
from e2e.engine import Engine
from e2e.keycloak import Keycloak, running_keycloak
from e2e.project import ROOT, E2EProject, make_project
from e2e.routestatus import StatusStandIn
from tests.e2e import realms
from tests.e2e.adoption import Adoption, adopt
from tests.e2e.databases import LaneDatabases
from tests.e2e.lane import FIGURES, NOT_BUILT, UPSTREAM, Deployed, built, deploy, need

SHARED_GATEWAY = ("openshift-ingress", "openshell-grpc-gateway")
NODE_READER = "openshell-gateway-node-reader"


def pytest_configure(config: pytest.Config) -> None:
    # A terminated run stops its servers as Ctrl-C does (e2e/cluster.py).
    terminate_as_interrupt()
    config.addinivalue_line(
        "markers",
        f"{divergences.MARKER}(key): the test's outcome depends on a behaviour in which the "
        "lane's kubernetes provider differs from the pinned one (e2e/divergences.py)",
    )


DEPENDS: dict[str, list[str]] = {}
"""Divergence key -> the node ids of the collected tests that depend on it."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for mark in item.iter_markers(divergences.MARKER):
            key = divergences.by_key(*mark.args).key  # an unknown key fails the collection
            DEPENDS.setdefault(key, []).append(item.nodeid)


@pytest.fixture(scope="session", autouse=True)
def databases() -> Iterator[LaneDatabases]:
    """The lane's PostgreSQL, one server per project made (started when it is made)."""
    made = LaneDatabases()
    e2e_project.database_for = made
    try:
        yield made
    finally:
        e2e_project.database_for = None
        made.close()


@pytest.fixture(scope="session")
def paths() -> dict[str, dict[str, Any]]:
    return built(partial=build.deadline_from_env() is not None)


@pytest.fixture(scope="session")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("e2e")


@pytest.fixture(scope="session")
def engine(paths: dict[str, dict[str, Any]], workdir: Path) -> Iterator[Engine]:
    need(paths, "pulumi", "kubernetes_provider")
    provider = Path(paths["kubernetes_provider"]["pulumi-resource-kubernetes"])
    engine = Engine(
        pulumi=Path(paths["pulumi"]["pulumi"]),
        plugin_dirs=[provider.parent],
        home=workdir / "pulumi-home",
        backend=_mkdir(workdir / "state"),
    )
    yield engine
    engine.close()


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="session")
def cluster(paths: dict[str, dict[str, Any]], workdir: Path) -> Iterator[Cluster]:
    need(paths, "kubernetes", "etcd", "kwok", "gateway_api", "openshift_api")
    version = build.load_versions()["kubernetes"]["version"]
    with running_cluster(paths, workdir / "cluster", kube_version=version) as live:
        crds = [*paths["gateway_api"]["crds"], *paths["openshift_api"]["crds"]]
        for crd in crds:
            live.kubectl("apply", "--server-side", "-f", crd)
        live.kubectl("wait", "--for=condition=Established", "--timeout=60s", "crd", "--all")
        namespace, name = SHARED_GATEWAY
        live.apply(shared_gateway(namespace, name))
        # The node-reader ClusterRole as upstream's reconciler leaves it: applied (client-side)
        # from upstream's own template before any stack (tests/e2e/test_e2e_z_teardown.py).
        role = next(
            d
            for d in yaml.safe_load_all((UPSTREAM / "rbac.yaml").read_text())
            if d and d["kind"] == "ClusterRole"
        )
        assert role["metadata"]["name"] == NODE_READER
        live.kubectl("apply", "-f", "-", input=yaml.safe_dump(role))
        yield live


def shared_gateway(namespace: str, name: str) -> list[Mapping[str, Any]]:
    """The cluster's shared Gateway (and its class) in ``openshift-ingress``, as the aws
    stack expects it (Pulumi.aws.yaml: ingress.gateway): listeners ``grpc`` and ``https``."""
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
        {
            "apiVersion": "gateway.networking.k8s.io/v1",
            "kind": "GatewayClass",
            "metadata": {"name": "e2e"},
            "spec": {"controllerName": StatusStandIn.CONTROLLER},
        },
        {
            "apiVersion": "gateway.networking.k8s.io/v1",
            "kind": "Gateway",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {
                "gatewayClassName": "e2e",
                "listeners": [
                    {
                        "name": "grpc",
                        "protocol": "HTTPS",
                        "port": 443,
                        "hostname": "*.use1.openshell.example.com",
                        "tls": {"mode": "Terminate", "certificateRefs": [{"name": "wildcard"}]},
                        "allowedRoutes": {"namespaces": {"from": "All"}},
                    },
                    {
                        "name": "https",
                        "protocol": "HTTPS",
                        "port": 8443,
                        "hostname": "*.use1.openshell.example.com",
                        "tls": {"mode": "Terminate", "certificateRefs": [{"name": "wildcard"}]},
                        "allowedRoutes": {"namespaces": {"from": "All"}},
                    },
                ],
            },
        },
    ]


@pytest.fixture(scope="session")
def stand_in(cluster: Cluster) -> Iterator[StatusStandIn]:
    """The OpenShift router's and a Gateway API implementation's status writes (stand-in)."""
    with StatusStandIn(cluster) as controller:
        yield controller


# --- the three stacks -------------------------------------------------------------------------

E2E_STACKS = {
    # name: (committed stack it is made from, clusters kept)
    "e2e-local": ("local", None),
    "e2e-route": ("ibm", None),
    "e2e-gwapi": ("aws", ["rosa-us-east-1"]),
}


@pytest.fixture(scope="session")
def projects(workdir: Path, cluster: Cluster) -> dict[str, E2EProject]:
    made = {
        stack: make_project(
            workdir / "projects",
            stack=stack,
            source=source,
            context=cluster.context(),
            clusters=clusters,
        )
        for stack, (source, clusters) in E2E_STACKS.items()
    }
    # A `kubernetesSecrets` credential namespace other than the gateway's own must exist
    # beforehand (docs/credential-drivers.md, "Credential drivers"): made here as its owner
    # would make it.
    for project in made.values():
        for path in sorted(project.declarations.glob("*.yaml")):
            spec = yaml.safe_load(path.read_text()).get("spec", {})
            store = (spec.get("credentials") or {}).get("kubernetesSecrets") or {}
            if store.get("namespace"):
                cluster.kubectl("create", "namespace", store["namespace"])
    return made


@pytest.fixture(scope="session")
def keycloak(paths: dict[str, dict[str, Any]], workdir: Path) -> Iterator[Keycloak]:
    """One real Keycloak for the session (its start takes a minute on 2 cores); each test file
    works in realms of its own."""
    need(paths, "keycloak")
    home = Path(paths["keycloak"]["home"])
    with running_keycloak(home, workdir / "keycloak") as server:
        yield server


@pytest.fixture(scope="session")
def lane_keycloak(
    engine: Engine, keycloak: Keycloak, projects: dict[str, E2EProject]
) -> dict[str, realms.Server]:
    """The session's Keycloak as the lane's stacks need it before their ``up``: the engine's
    keycloak stand-in sends every committed stack's Keycloak URL to it, and each realm the
    lane's stacks name holds its provisioning clients and the groups and users their
    declarations look up (tests/e2e/realms.py)."""
    engine.extra_env.update(realms.urls_env(keycloak, realms.committed_urls(ROOT)))
    wanted = realms.servers(projects.values())
    realms.prepare(keycloak, wanted)
    return wanted


@pytest.fixture(scope="session")
def kube_env(cluster: Cluster) -> dict[str, str]:
    return {"KUBECONFIG": str(cluster.kubeconfig)}


@pytest.fixture(scope="session")
def deployed(
    engine: Engine,
    projects: dict[str, E2EProject],
    kube_env: dict[str, str],
    stand_in: StatusStandIn,
    lane_keycloak: dict[str, realms.Server],
) -> Iterator[dict[str, Deployed]]:
    """Each stack previewed, then brought up from empty, once for the session (its Keycloak
    objects made by the keycloak stand-in in the realms ``lane_keycloak`` prepared)."""
    result = {name: deploy(engine, project, kube_env) for name, project in projects.items()}
    yield result


@pytest.fixture(scope="session")
def adoption(
    engine: Engine,
    cluster: Cluster,
    keycloak: Keycloak,
    databases: LaneDatabases,
    workdir: Path,
    kube_env: dict[str, str],
    lane_keycloak: dict[str, realms.Server],
) -> Adoption:
    """A tenant made as upstream's controller makes it, adopted with the README's steps once for
    the session (tests/e2e/adoption.py): test_e2e_f_adoption_import.py and
    test_e2e_f_adoption_up.py check the one run."""
    return adopt(engine, cluster, keycloak, databases, workdir, kube_env)


def pytest_report_header() -> list[str]:
    versions = build.load_versions()
    return [
        "real engine: pulumi "
        + versions["pulumi"]["version"]
        + ", pulumi-resource-kubernetes "
        + versions["kubernetes_provider"]["plugin_version"]
        + ", kubernetes "
        + versions["kubernetes"]["version"]
        + ", etcd "
        + versions["etcd"]["version"]
        + ", kwok "
        + versions["kwok"]["version"],
        f"cache: {build.cache_root()}",
        *divergences.header(),
    ]


# --- every engine test ran, or the run says why not (issue 43 item 4) -------------------------

RAN: list[str] = []
SKIPPED: dict[str, str] = {}
"""The engine tests that ran, and those skipped with the reason, by node id."""


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and not hasattr(report, "wasxfail"):  # an expected failure is no skip
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        SKIPPED[report.nodeid] = str(reason).removeprefix("Skipped: ")
    elif report.when == "call":
        RAN.append(report.nodeid)


def unbuilt_skip(reason: str) -> bool:
    """A skip of ``need`` (tests/e2e/lane.py): an item CI's build deadline left unbuilt."""
    return reason.startswith(NOT_BUILT)


def skip_problem(complete: bool, skipped: dict[str, str]) -> str | None:
    """Why the run must fail for its skips, or None: with everything built no engine test may
    skip; with CI's deadline only those whose items were not built may."""
    wrong = sorted(n for n, reason in skipped.items() if complete or not unbuilt_skip(reason))
    if not wrong:
        return None
    why = "everything was built" if complete else "their items were built"
    return f"{len(wrong)} engine test(s) skipped although {why}: {', '.join(wrong)}"


def _build_complete() -> bool:
    return build.built_paths() is not None


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if skip_problem(_build_complete(), SKIPPED) is not None and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if FIGURES:
        terminalreporter.section("real-engine figures")
        for line in FIGURES:
            terminalreporter.write_line(line)
    complete = _build_complete()
    problem = skip_problem(complete, SKIPPED)
    if problem is not None:
        terminalreporter.write_line(f"FAILED: {problem}", red=True)
    ran = set(RAN)
    for key, nodeids in sorted(DEPENDS.items()):
        proved = [n for n in nodeids if n in ran]
        if proved:
            terminalreporter.write_line(
                f"provider behaviour {key}: proved on {divergences.lane_version()}, not on the "
                f"pinned {divergences.pinned_version()}, by {', '.join(proved)}"
            )
    unbuilt = sorted(n for n, reason in SKIPPED.items() if unbuilt_skip(reason))
    last = f"engine tests: {len(RAN)} ran, {len(SKIPPED)} skipped"
    if unbuilt:
        last += f" ({len(unbuilt)} for items CI's build deadline left unbuilt)"
    terminalreporter.write_line(last + ("" if complete else "; the lane's build is incomplete"))

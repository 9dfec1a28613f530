"""Generated projects for the hostile-input and leak tests: a plan of clusters and gateways,
written with ``tests.builders``, and the strategy of valid projects. The mutations that break
one on purpose are in ``tests.broken_projects``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

from tests.builders import (
    CONFIG_FILE,
    DECLARATIONS,
    declaration,
    write_stack,
    write_text,
)
from tests.strategies import (
    GATEWAY_NAMES,
    PASSWORDS,
    VALID_IMAGES,
)

# --- the pieces of a project ----------------------------------------------------------------

CLUSTER_KEYS = ("c1", "east", "west", "kind")
MODES = ("route", "gateway-api", "auto-openshift", "none")
DATABASE = {
    "adminHost": "db.example.com",
    "adminUser": "admin",
    "host": "postgres.db.svc.cluster.local",
}


@dataclass(frozen=True)
class ClusterPlan:
    key: str
    mode: str
    mirrors: bool
    metrics: bool

    @property
    def base_domain(self) -> str | None:
        return None if self.mode == "none" else f"{self.key}.example.com"

    @property
    def exposes(self) -> bool:
        return self.mode != "none"

    def config(self) -> dict[str, Any]:
        value: dict[str, Any] = {
            "kubeconfigContext": f"ctx-{self.key}",
            "database": copy.deepcopy(DATABASE),
        }
        if self.mode == "route":
            value |= {"capabilities": {"openshift": True}, "ingress": {"mode": "route"}}
        elif self.mode == "gateway-api":
            value |= {
                "capabilities": {"openshift": True, "gatewayApi": True},
                "ingress": {"mode": "gateway-api", "gateway": {"name": "shared-gw"}},
            }
        elif self.mode == "auto-openshift":
            value |= {"capabilities": {"openshift": True}, "ingress": {"mode": "auto"}}
        else:
            value |= {"ingress": {"mode": "none"}}
        if self.base_domain is not None:
            value["baseDomain"] = self.base_domain
        if self.mirrors:
            value["registryMirrors"] = {"ghcr.io/nvidia": "mirror.internal:5000/nv"}
        if self.metrics:
            value["metricsNamespace"] = "monitoring"
        return value


@dataclass
class GatewayPlan:
    name: str
    cluster: ClusterPlan
    doc: dict[str, Any]
    file: str

    @property
    def namespace(self) -> str:
        spec = self.doc.get("spec", {})
        return str(spec.get("namespace") or f"openshell-{self.name}")

    @property
    def path(self) -> str:
        return f"{DECLARATIONS}/{self.file}"

    def expected_host(self) -> str | None:
        """The hostname a valid render must give this gateway."""
        exposure = self.doc.get("spec", {}).get("exposure", {})
        if not exposure.get("enabled", True) or not self.cluster.exposes:
            return None
        return exposure.get("host") or f"gw-{self.namespace}.{self.cluster.base_domain}"


@dataclass(frozen=True)
class Expected:
    """A problem the CLI must print: ``field`` of ``path`` ('' for the whole file)."""

    path: str
    field: str
    fragment: str = ""


@dataclass
class Project:
    clusters: dict[str, ClusterPlan]
    stack_images: dict[str, str] | None
    secrets: Any
    gateways: list[GatewayPlan]
    config_extra: dict[str, Any] = field(default_factory=dict)
    config_text: str | bytes | None = None
    """Replaces the whole ``Pulumi.test.yaml`` when set."""
    cluster_overrides: dict[str, dict[str, Any]] = field(default_factory=dict)
    files: dict[str, str | bytes] = field(default_factory=dict)
    """Declaration files whose text replaces the gateway's document (or new files)."""
    expected: list[Expected] = field(default_factory=list)
    touched: set[str] = field(default_factory=set)
    """Paths that a problem may name."""
    config_broken: bool = False
    """The stack config itself is broken: declarations are not looked at."""
    locked: set[str] = field(default_factory=set)

    def write(self, root: Path) -> None:
        clusters = {
            key: self.cluster_overrides.get(key, plan.config())
            for key, plan in self.clusters.items()
        }
        write_stack(
            root,
            clusters=clusters,
            secrets=self.secrets,
            stack_images=self.stack_images,
            extra=self.config_extra,
        )
        if self.config_text is not None:
            write_text(root, CONFIG_FILE, self.config_text)
        for gateway in self.gateways:
            if gateway.path not in self.files:
                write_text(root, gateway.path, yaml.safe_dump(gateway.doc, sort_keys=False))
        for path, content in self.files.items():
            write_text(root, path, content)

    @property
    def paths(self) -> set[str]:
        return {CONFIG_FILE, DECLARATIONS, *(g.path for g in self.gateways), *self.files}


# --- valid projects -------------------------------------------------------------------------


@st.composite
def cluster_plans(draw: st.DrawFn) -> dict[str, ClusterPlan]:
    keys = draw(st.lists(st.sampled_from(CLUSTER_KEYS), min_size=1, max_size=2, unique=True))
    return {
        key: ClusterPlan(
            key=key,
            mode=draw(st.sampled_from(MODES)),
            mirrors=draw(st.booleans()),
            metrics=draw(st.booleans()),
        )
        for key in keys
    }


@st.composite
def gateway_plan(draw: st.DrawFn, name: str, clusters: Mapping[str, ClusterPlan]) -> GatewayPlan:
    cluster = clusters[draw(st.sampled_from(sorted(clusters)))]
    spec: dict[str, Any] = {}
    if len(clusters) > 1 or draw(st.booleans()):
        spec["cluster"] = cluster.key
    if draw(st.booleans()):
        spec["namespace"] = f"legacy-{name}"
    namespace = spec.get("namespace", f"openshell-{name}")
    exposure: dict[str, Any] = {}
    if draw(st.booleans()):
        exposure["enabled"] = draw(st.booleans())
    hosts: list[str | None] = [None]
    if cluster.mode != "gateway-api":  # there TLS ends at the listener: *.<baseDomain> only
        hosts.append(f"{name}.vanity.example.org")
    if cluster.base_domain is not None:
        hosts.append(f"gw-{namespace}.{cluster.base_domain}")
    host = draw(st.sampled_from(hosts))
    if host is not None:
        exposure["host"] = host
    if exposure:
        spec["exposure"] = exposure
    overrides = draw(
        st.fixed_dictionaries(
            {},
            optional={
                "gateway": st.sampled_from(VALID_IMAGES),
                "supervisor": st.sampled_from(VALID_IMAGES),
            },
        )
    )
    if overrides:
        spec["images"] = overrides
    if draw(st.booleans()):
        spec["replicas"] = draw(st.integers(1, 10))
    if draw(st.booleans()):
        spec["deletionPolicy"] = draw(st.sampled_from(["Retain", "Delete"]))
    # Every gateway says how people sign in (validate requires it without Keycloak).
    if draw(st.booleans()):
        spec["signIn"] = "none"
    else:
        spec["oidc"] = {"issuer": "https://idp.example.com/realms/tenants"}
    doc = declaration(name, spec)
    file = name + draw(st.sampled_from([".yaml", ".yml"]))
    return GatewayPlan(name=name, cluster=cluster, doc=doc, file=file)


@st.composite
def valid_projects(draw: st.DrawFn, min_gateways: int = 0) -> Project:
    clusters = draw(cluster_plans())
    stack_images = draw(
        st.none()
        | st.fixed_dictionaries(
            {},
            optional={key: st.sampled_from(VALID_IMAGES) for key in ("gateway", "supervisor")},
        )
    )
    secrets: dict[str, Any] = {}
    for key in clusters:
        entry: dict[str, Any] = {
            "dbAdminPassword": draw(PASSWORDS | st.just({"secure": "v1:cGxhY2Vob2xkZXI="}))
        }
        if draw(st.booleans()):
            entry["kubeconfig"] = draw(PASSWORDS)
        secrets[key] = entry
    names = draw(st.lists(GATEWAY_NAMES, min_size=min_gateways, max_size=3, unique=True))
    gateways = [draw(gateway_plan(name, clusters)) for name in names]
    project = Project(clusters=clusters, stack_images=stack_images, secrets=secrets, gateways=[])
    for gateway in gateways:
        project.gateways.append(gateway)
        if draw(st.booleans()):  # a byte-order mark is valid UTF-8 YAML
            project.files[gateway.path] = "\ufeff" + yaml.safe_dump(gateway.doc)
    return project

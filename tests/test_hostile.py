"""Hostile input (issue 5, item 2): generated projects, valid and broken, through the real CLI.

Every run of ``python -m gatewayctl render`` must end in one of two ways: exit 0 with a complete
render, or exit 2 with every problem printed as ``error: <path>: <field>: <message>`` (the
field left out for a problem of the whole file), a last line ``N problem(s); nothing
written`` and no output directory at all. Never exit 1, never a traceback, never partial
output. Where a test breaks a known field of a known file, that file and field must be named.

Each example writes its project into a fresh temporary directory (hypothesis reuses
function-scoped fixtures, so ``tmp_path`` is not used inside ``@given``).
"""

from __future__ import annotations

import copy
import json
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from gatewayctl.render import MARKER
from gatewayctl.stackfile import CONFIG_KEYS
from gatewayctl.yamlfile import SECRETS_KEY
from tests.builders import (
    CONFIG_FILE,
    DECLARATIONS,
    PREFIX,
    STACK,
    declaration,
    declaration_text,
    edited_config,
    write_gateway,
    write_stack,
    write_text,
)
from tests.hostile_helpers import (
    Outcome,
    Reported,
    render_cli,
    reported_problems,
    tree,
    validate_cli,
)

HOSTILE = settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

# --- the pieces of a project ----------------------------------------------------------------

CLUSTER_KEYS = ("c1", "east", "west", "kind")
MODES = ("route", "gateway-api", "auto-openshift", "none")
DATABASE = {
    "adminHost": "db.example.com",
    "adminUser": "admin",
    "host": "postgres.db.svc.cluster.local",
}
VALID_IMAGES = (
    "quay.io/acme/gateway:2.0",
    "localhost:5000/openshell/gateway:dev",
    "registry.internal:5000/nvidia/openshell/gateway@sha256:" + "ab" * 32,
    "ghcr.io/nvidia/openshell/supervisor:0.0.110",
    "nginx",
    "team/app:v1.2.3",
    "[fd00::1]:5000/team/app_x__y:1",
)
WHITESPACE = (" ", "\t", "\n", "\r", "\u00a0", "\u2003")
METACHARACTERS = (";", "&", "|", "`", "$", "<", ">", "(", ")", "\\", '"', "'")
NAME = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,48}[a-z0-9])?", fullmatch=True)
# Keys that are no field of the level they are put in. No ':' (see
# test_field_names_are_printed_verbatim) and no control characters (see
# test_control_characters_in_input_are_escaped_in_messages): both have their own tests.
KEY = st.text(
    alphabet=st.characters(categories=("L", "N", "P", "S", "Zs"), exclude_characters=":"),
    min_size=1,
    max_size=16,
)
DECLARATION_FIELDS: dict[tuple[str, ...], frozenset[str]] = {
    (): frozenset({"apiVersion", "kind", "metadata", "spec"}),
    ("metadata",): frozenset({"name"}),
    ("spec",): frozenset(
        {"cluster", "namespace", "exposure", "images", "replicas", "deletionPolicy"}
    ),
    ("spec", "exposure"): frozenset({"enabled", "host"}),
    ("spec", "images"): frozenset({"gateway", "supervisor"}),
}
CLUSTER_FIELDS = frozenset(
    {
        "kubeconfigContext",
        "capabilities",
        "ingress",
        "baseDomain",
        "registryMirrors",
        "database",
        "storageClass",
        "metricsNamespace",
    }
)
WRONG_TYPES: dict[tuple[str, ...], tuple[Any, ...]] = {
    ("apiVersion",): ("v1", 1, None, ["x"]),
    ("kind",): ("Pod", None, 7),
    ("metadata",): ("team", [], None, 3),
    ("metadata", "name"): (5, None, True, [], {"a": "b"}, 1.5),
    ("spec",): ([], "x", 5, None),
    ("spec", "cluster"): (5, True, [], {"a": "b"}),
    ("spec", "namespace"): (5, True, [], {"a": "b"}),
    ("spec", "exposure"): ([], "on", 1, None),
    ("spec", "exposure", "enabled"): ("yes", "true", 1, [], None),
    ("spec", "exposure", "host"): (5, True, [], {"a": "b"}),
    ("spec", "images"): (["a"], "x", None),
    ("spec", "images", "gateway"): (5, True, [], {"a": "b"}),
    ("spec", "replicas"): ("3", True, 2.5, [], None, 0, 11, -1),
    ("spec", "deletionPolicy"): ("retain", "DELETE", 1, None, True),
}
CLUSTER_WRONG_TYPES: dict[tuple[str, ...], tuple[Any, ...]] = {
    ("capabilities",): ("yes", []),
    ("capabilities", "openshift"): ("yes", 1, None),
    ("ingress", "mode"): ("bogus", "ingress-nginx", 5),
    ("baseDomain",): ("Apps.Example.com", "apps..example.com", "", 5),
    ("database",): ("db", None, []),
    ("database", "adminPort"): ("5432", 0, 70000, 1.5),
    ("database", "adminHost"): ("", "db example com", 5),
    ("registryMirrors",): (["x"], "x"),
    ("storageClass",): ("Fast_SSD", 5),
}
EMPTY_FILES = ("", "\n\n", "# only a comment\n", "---\n", "--- \n...\n", "null\n", "~\n")


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


def put(document: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    """Set ``path`` in ``document``, creating (or replacing non-mapping) parents."""
    *parents, last = path
    for key in parents:
        if not isinstance(document.get(key), dict):
            document[key] = {}
        document = document[key]
    document[last] = value


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
    doc = declaration(name, spec if spec or draw(st.booleans()) else None)
    file = name + draw(st.sampled_from([".yaml", ".yml"]))
    return GatewayPlan(name=name, cluster=cluster, doc=doc, file=file)


PASSWORD = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=24)


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
            "dbAdminPassword": draw(PASSWORD | st.just({"secure": "v1:cGxhY2Vob2xkZXI="}))
        }
        if draw(st.booleans()):
            entry["kubeconfig"] = draw(PASSWORD)
        secrets[key] = entry
    names = draw(st.lists(NAME, min_size=min_gateways, max_size=3, unique=True))
    gateways = [draw(gateway_plan(name, clusters)) for name in names]
    project = Project(clusters=clusters, stack_images=stack_images, secrets=secrets, gateways=[])
    for gateway in gateways:
        project.gateways.append(gateway)
        if draw(st.booleans()):  # a byte-order mark is valid UTF-8 YAML
            project.files[gateway.path] = "\ufeff" + yaml.safe_dump(gateway.doc)
    return project


# --- mutations ------------------------------------------------------------------------------


def _target(draw: st.DrawFn, project: Project, ok: Callable[[GatewayPlan], bool]) -> GatewayPlan:
    free = [g for g in project.gateways if g.path not in project.locked and ok(g)]
    if not free:
        raise LookupError
    gateway = draw(st.sampled_from(free))
    project.locked.add(gateway.path)
    project.touched.add(gateway.path)
    project.files.pop(gateway.path, None)  # drop a byte-order-mark rewrite
    return gateway


def _expect(project: Project, path: str, field_: str, fragment: str = "") -> None:
    project.expected.append(Expected(path, field_, fragment))


def _fresh_name(draw: st.DrawFn, project: Project) -> str:
    taken = {g.name for g in project.gateways}
    return draw(NAME.filter(lambda n: n not in taken))


def wrong_type(draw: st.DrawFn, project: Project) -> None:
    gateway = _target(draw, project, lambda g: True)
    path = draw(st.sampled_from(sorted(WRONG_TYPES)))
    put(gateway.doc, path, draw(st.sampled_from(WRONG_TYPES[path])))
    _expect(project, gateway.path, ".".join(path))


def unknown_field(draw: st.DrawFn, project: Project) -> None:
    gateway = _target(draw, project, lambda g: True)
    level = draw(st.sampled_from(sorted(DECLARATION_FIELDS)))
    key = draw(KEY.filter(lambda k: k not in DECLARATION_FIELDS[level]))
    put(gateway.doc, (*level, key), draw(st.sampled_from(["x", 1, None, [], {"a": 1}])))
    _expect(project, gateway.path, ".".join((*level, key)), "unknown field")


def bad_name(draw: st.DrawFn, project: Project) -> None:
    gateway = _target(draw, project, lambda g: True)
    # Any name other than the file's stem is wrong: malformed, too long, or not the file's.
    name = draw(
        (
            st.from_regex(r"[a-z][a-z0-9-]{49,61}[a-z0-9]", fullmatch=True)  # 51-63: too long
            | st.from_regex(r"[a-z][a-z0-9]{63,90}", fullmatch=True)  # longer than a label
            | st.text(max_size=20)
            | NAME
            | st.sampled_from(["", "-team", "team-", "team.a", "team_a", "Team-A", "tëam"])
        ).filter(lambda n: n != Path(gateway.file).stem)
    )
    put(gateway.doc, ("metadata", "name"), name)
    _expect(project, gateway.path, "metadata.name")


def foreign_slot(draw: st.DrawFn, project: Project) -> None:
    gateway = _target(draw, project, lambda g: g.cluster.base_domain is not None)
    base = gateway.cluster.base_domain
    other = draw(NAME.filter(lambda n: f"openshell-{n}" != gateway.namespace))
    host = draw(
        st.sampled_from(
            [
                f"gw-openshell-{other}.{base}",  # another tenant's slot
                f"{base}",  # the base domain itself
                f"x.gw-{gateway.namespace}.{base}",  # below its own slot
            ]
        )
    )
    put(gateway.doc, ("spec", "exposure", "host"), host)
    _expect(project, gateway.path, "spec.exposure.host", "own slot")


def other_clusters_domain(draw: st.DrawFn, project: Project) -> None:
    gateway = _target(
        draw,
        project,
        lambda g: any(
            c.base_domain is not None and c.key != g.cluster.key for c in project.clusters.values()
        ),
    )
    other = draw(
        st.sampled_from(
            sorted(
                c.key
                for c in project.clusters.values()
                if c.base_domain is not None and c.key != gateway.cluster.key
            )
        )
    )
    host = f"gw-{gateway.namespace}.{project.clusters[other].base_domain}"
    put(gateway.doc, ("spec", "exposure", "host"), host)
    _expect(project, gateway.path, "spec.exposure.host", "may not use it")


def bad_host(draw: st.DrawFn, project: Project) -> None:
    gateway = _target(draw, project, lambda g: True)
    host = draw(
        st.sampled_from(
            [
                "",
                "Gw.Example.org",
                "gw example.org",
                "gw..example.org",
                "-gw.example.org",
                "gw_1.example.org",
                "a" * 64 + ".example.org",
                ".".join(["a" * 60] * 5),
                "grpcs://gw.example.org",
                "gw.example.org:443",
            ]
        )
    )
    put(gateway.doc, ("spec", "exposure", "host"), host)
    _expect(project, gateway.path, "spec.exposure.host")


def bad_image(draw: st.DrawFn, project: Project) -> None:
    gateway = _target(draw, project, lambda g: True)
    image = draw(st.sampled_from(VALID_IMAGES))
    char = draw(st.sampled_from(WHITESPACE + METACHARACTERS))
    at = draw(st.integers(0, len(image)))
    which = draw(st.sampled_from(["gateway", "supervisor"]))
    put(gateway.doc, ("spec", "images", which), image[:at] + char + image[at:])
    _expect(project, gateway.path, f"spec.images.{which}")


def _later(a: str, b: str) -> str:
    """Of two declaration paths, the one read second (the loader reads in file-name order)."""
    return max(a, b, key=lambda p: Path(p).name)


def duplicate_name(draw: st.DrawFn, project: Project) -> None:
    partner = _target(draw, project, lambda g: True)
    other_suffix = ".yml" if partner.file.endswith(".yaml") else ".yaml"
    twin = GatewayPlan(partner.name, partner.cluster, copy.deepcopy(partner.doc), "")
    twin.file = partner.name + other_suffix
    project.gateways.append(twin)
    project.locked.add(twin.path)
    project.touched.add(twin.path)
    _expect(project, _later(partner.path, twin.path), "metadata.name", "already declared")


def duplicate_namespace(draw: st.DrawFn, project: Project) -> None:
    partner = _target(draw, project, lambda g: True)
    name = _fresh_name(draw, project)
    doc = declaration(name, {"cluster": partner.cluster.key, "namespace": partner.namespace})
    twin = GatewayPlan(name, partner.cluster, doc, f"{name}.yaml")
    project.gateways.append(twin)
    project.locked.add(twin.path)
    project.touched.add(twin.path)
    _expect(project, _later(partner.path, twin.path), "spec.namespace", "already used")


def duplicate_host(draw: st.DrawFn, project: Project) -> None:
    partner = _target(
        draw, project, lambda g: g.cluster.exposes and g.cluster.mode != "gateway-api"
    )
    host = f"{partner.name}.vanity.example.org"
    put(partner.doc, ("spec", "exposure"), {"enabled": True, "host": host})
    name = _fresh_name(draw, project)
    doc = declaration(name, {"cluster": partner.cluster.key, "exposure": {"host": host}})
    twin = GatewayPlan(name, partner.cluster, doc, f"{name}.yaml")
    project.gateways.append(twin)
    project.locked.add(twin.path)
    project.touched.add(twin.path)
    _expect(project, _later(partner.path, twin.path), "spec.exposure.host", "already used")


def duplicate_yaml_key(draw: st.DrawFn, project: Project) -> None:
    gateway = _target(draw, project, lambda g: True)
    key = draw(st.sampled_from(["kind", "apiVersion", "metadata"]))
    text = yaml.safe_dump(gateway.doc, sort_keys=False) + yaml.safe_dump({key: gateway.doc[key]})
    project.files[gateway.path] = text
    _expect(project, gateway.path, "", f"invalid YAML: duplicate key {key!r}")


def not_a_mapping(draw: st.DrawFn, project: Project) -> None:
    gateway = _target(draw, project, lambda g: True)
    value = draw(
        st.lists(st.integers() | st.text(max_size=5), min_size=0, max_size=3)
        | st.text(max_size=20)
        | st.integers()
        | st.booleans()
        | st.floats(allow_nan=False)
        | st.just([gateway.doc])
    )
    project.files[gateway.path] = yaml.safe_dump(value)
    _expect(project, gateway.path, "", "expected a YAML mapping")


def empty_file(draw: st.DrawFn, project: Project) -> None:
    gateway = _target(draw, project, lambda g: True)
    project.files[gateway.path] = draw(st.sampled_from(EMPTY_FILES))
    _expect(project, gateway.path, "", "is empty")


def several_documents(draw: st.DrawFn, project: Project) -> None:
    gateway = _target(draw, project, lambda g: True)
    text = yaml.safe_dump(gateway.doc)
    project.files[gateway.path] = text + "---\n" + text
    _expect(project, gateway.path, "", "holds several documents")


def binary(draw: st.DrawFn, project: Project) -> None:
    gateway = _target(draw, project, lambda g: True)
    text = yaml.safe_dump(gateway.doc)
    content = draw(
        st.builds(
            lambda head, tail: head + b"\xff" + tail,  # 0xff is never UTF-8
            st.binary(max_size=24),
            st.binary(max_size=24),
        )
        | st.just(text.encode("utf-16"))
        | st.just(text.encode("latin-1", "replace") + b"\xe9t\xe9\n")
    )
    project.files[gateway.path] = content
    _expect(project, gateway.path, "", "not UTF-8 text")


DECLARATION_MUTATIONS: tuple[Callable[[st.DrawFn, Project], None], ...] = (
    wrong_type,
    unknown_field,
    bad_name,
    foreign_slot,
    other_clusters_domain,
    bad_host,
    bad_image,
    duplicate_name,
    duplicate_namespace,
    duplicate_host,
    duplicate_yaml_key,
    not_a_mapping,
    empty_file,
    several_documents,
    binary,
)


# stack config: the declarations are not read when the config itself is broken


def _config(project: Project) -> None:
    project.config_broken = True
    project.touched.add(CONFIG_FILE)


def cluster_wrong_type(draw: st.DrawFn, project: Project) -> None:
    key = draw(st.sampled_from(sorted(project.clusters)))
    path = draw(st.sampled_from(sorted(CLUSTER_WRONG_TYPES)))
    value = project.clusters[key].config()
    put(value, path, draw(st.sampled_from(CLUSTER_WRONG_TYPES[path])))
    project.cluster_overrides[key] = value
    _config(project)
    _expect(project, CONFIG_FILE, f"{PREFIX}clusters.{key}.{'.'.join(path)}")


def cluster_unknown_field(draw: st.DrawFn, project: Project) -> None:
    key = draw(st.sampled_from(sorted(project.clusters)))
    name = draw(KEY.filter(lambda k: k not in CLUSTER_FIELDS))
    project.cluster_overrides[key] = project.clusters[key].config() | {name: "x"}
    _config(project)
    _expect(project, CONFIG_FILE, f"{PREFIX}clusters.{key}.{name}", "unknown field")


def unknown_config_key(draw: st.DrawFn, project: Project) -> None:
    known = {*CONFIG_KEYS, SECRETS_KEY}
    name = draw(KEY.filter(lambda k: k not in known))
    project.config_extra[f"{PREFIX}{name}"] = draw(st.sampled_from(["x", 1, {"a": 1}]))
    _config(project)
    _expect(project, CONFIG_FILE, f"{PREFIX}{name}", "unknown config key")


def bad_declarations_dir(draw: st.DrawFn, project: Project) -> None:
    value = draw(st.sampled_from(["/etc", "../elsewhere", "stacks/../..", "", 5, None, []]))
    project.config_extra[f"{PREFIX}declarationsDir"] = value
    _config(project)
    _expect(project, CONFIG_FILE, f"{PREFIX}declarationsDir")


def bad_stack_image(draw: st.DrawFn, project: Project) -> None:
    which = draw(st.sampled_from(["gateway", "supervisor", "sandbox"]))
    image = draw(st.sampled_from(VALID_IMAGES))
    char = draw(st.sampled_from(WHITESPACE + METACHARACTERS))
    project.stack_images = (project.stack_images or {}) | {which: image + char}
    _config(project)
    _expect(project, CONFIG_FILE, f"{PREFIX}images.{which}")


def bad_cluster_key(draw: st.DrawFn, project: Project) -> None:
    key = draw(st.sampled_from(sorted(project.clusters)))
    bad = draw(st.sampled_from([key.upper(), f"{key}_1", f"-{key}", "a" * 64, f"{key}.x"]))
    plan = project.clusters.pop(key)
    project.clusters[bad] = plan
    _config(project)
    _expect(project, CONFIG_FILE, f"{PREFIX}clusters.{bad}")


def near_miss_namespace(draw: st.DrawFn, project: Project) -> None:
    prefix = draw(st.sampled_from(["hypershell-gateway:", "hypershell:", "hypershellgateways:"]))
    project.config_extra[f"{prefix}clusters"] = {}
    _config(project)
    _expect(project, CONFIG_FILE, f"{prefix}clusters", "did you mean")


def broken_config_file(draw: st.DrawFn, project: Project) -> None:
    text, fragment, field_ = draw(
        st.sampled_from(
            [
                ("", "is empty", ""),
                ("# nothing\n", "is empty", ""),
                ("- a\n- b\n", "expected a YAML mapping", ""),
                ("config\n", "expected a YAML mapping", ""),
                ("config:\n- a\n", "expected a mapping", "config"),
                ("config: [\n", "invalid YAML", ""),
                ("config: {}\nconfig: {}\n", "duplicate key", ""),
                ("a: 1\n---\nb: 2\n", "holds several documents", ""),
                (b"config:\n  \xff\xfe: 1\n", "not UTF-8 text", ""),
            ]
        )
    )
    project.config_text = text
    _config(project)
    _expect(project, CONFIG_FILE, field_, fragment)


# secrets: checked together with the declarations


def _secrets(project: Project) -> None:
    project.touched.add(CONFIG_FILE)


def bad_secret_entry(draw: st.DrawFn, project: Project) -> None:
    key = draw(st.sampled_from(sorted(project.clusters)))
    which, value = draw(
        st.sampled_from(
            [
                ("dbAdminPassword", 12345678),
                ("dbAdminPassword", ["pw"]),
                ("dbAdminPassword", {"value": "pw"}),
                ("dbAdminPassword", ""),
                ("dbAdminPassword", None),
                ("dbAdminPassword", True),
                ("kubeconfig", {"apiVersion": "v1"}),
                ("kubeconfig", 5),
            ]
        )
    )
    project.secrets = copy.deepcopy(project.secrets)
    project.secrets[key][which] = value
    _secrets(project)
    _expect(project, CONFIG_FILE, f"{PREFIX}clusterSecrets.{key}.{which}")


def missing_secret_entry(draw: st.DrawFn, project: Project) -> None:
    key = draw(st.sampled_from(sorted(project.clusters)))
    project.secrets = {k: v for k, v in project.secrets.items() if k != key}
    _secrets(project)
    _expect(project, CONFIG_FILE, f"{PREFIX}clusterSecrets.{key}", "missing")


def unknown_secret_field(draw: st.DrawFn, project: Project) -> None:
    key = draw(st.sampled_from(sorted(project.clusters)))
    name = draw(KEY.filter(lambda k: k not in {"dbAdminPassword", "kubeconfig"}))
    project.secrets = copy.deepcopy(project.secrets)
    project.secrets[key][name] = "x"
    _secrets(project)
    _expect(project, CONFIG_FILE, f"{PREFIX}clusterSecrets.{key}.{name}", "unknown field")


def secret_for_unknown_cluster(draw: st.DrawFn, project: Project) -> None:
    name = draw(st.sampled_from([k for k in (*CLUSTER_KEYS, "ghost") if k not in project.clusters]))
    project.secrets = project.secrets | {name: {"dbAdminPassword": "pw"}}
    _secrets(project)
    _expect(project, CONFIG_FILE, f"{PREFIX}clusterSecrets.{name}", "no such cluster")


def secrets_not_a_mapping(draw: st.DrawFn, project: Project) -> None:
    project.secrets = draw(st.sampled_from(["pw", ["pw"], 5, None]))
    _secrets(project)
    if project.secrets is None:  # absent: each cluster's secrets are missing
        for key in project.clusters:
            _expect(project, CONFIG_FILE, f"{PREFIX}clusterSecrets.{key}", "missing")
    else:
        _expect(project, CONFIG_FILE, f"{PREFIX}clusterSecrets", "expected a mapping")


CONFIG_MUTATIONS: tuple[Callable[[st.DrawFn, Project], None], ...] = (
    cluster_wrong_type,
    cluster_unknown_field,
    unknown_config_key,
    bad_declarations_dir,
    bad_stack_image,
    bad_cluster_key,
    near_miss_namespace,
    broken_config_file,
    bad_secret_entry,
    missing_secret_entry,
    unknown_secret_field,
    secret_for_unknown_cluster,
    secrets_not_a_mapping,
)


@st.composite
def singly_broken_projects(
    draw: st.DrawFn, mutation: Callable[[st.DrawFn, Project], None]
) -> Project:
    project = draw(valid_projects(min_gateways=2))
    try:
        mutation(draw, project)
    except LookupError:  # no gateway of this project it applies to
        reject()
    return project


@st.composite
def broken_projects(draw: st.DrawFn) -> Project:
    project = draw(valid_projects(min_gateways=1))
    config_side = draw(st.none() | st.sampled_from(CONFIG_MUTATIONS))
    count = draw(st.integers(0 if config_side else 1, 3))
    applied = 0
    for mutation in draw(st.permutations(DECLARATION_MUTATIONS)):
        if applied == count:
            break
        try:
            mutation(draw, project)
        except LookupError:  # no gateway it applies to
            continue
        applied += 1
    if config_side is not None:
        config_side(draw, project)
    if not project.expected:  # every declaration mutation was inapplicable
        binary(draw, project)
    return project


# --- running the CLI ------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    render: Outcome
    validate: Outcome
    written: dict[str, bytes] | None
    """The output directory's files, or None when it does not exist."""


def run(project: Project) -> Run:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory) / "project"
        out = Path(directory) / "out"
        project.write(root)
        rendered = render_cli(root, out)
        validated = validate_cli(root)
        written = tree(out) if out.exists() else None
        leftovers = sorted(p.name for p in Path(directory).iterdir())
    assert leftovers == (["out", "project"] if written is not None else ["project"])
    return Run(rendered, validated, written)


def assert_clean_failure(result: Run, project: Project) -> list[Reported]:
    """Exit 2, only well-formed problem lines, nothing written; the problems, parsed."""
    assert result.render.code == 2, result.render
    assert result.written is None, "an invalid project left an output directory"
    assert result.render.out == ""
    problems = reported_problems(result.render.err, project.paths)
    # validate reads the same input and reports the very same problems
    assert (result.validate.code, result.validate.out) == (2, "")
    assert result.validate.err == result.render.err
    return problems


def named(problems: list[Reported], expected: Expected) -> bool:
    return any(p.names(expected.path, expected.field, expected.fragment) for p in problems)


@HOSTILE
@given(project=valid_projects())
def test_a_valid_generated_project_renders_completely(project: Project) -> None:
    result = run(project)

    assert result.render.code == 0, result.render
    assert result.render.err == ""
    assert result.render.out == _secure_note(project)
    assert result.written is not None
    plan = json.loads(result.written["plan.json"])
    assert plan["stack"] == STACK
    assert [
        (g["name"], g["cluster"], g["namespace"], g["hostname"]) for g in plan["gateways"]
    ] == sorted((g.name, g.cluster.key, g.namespace, g.expected_host()) for g in project.gateways)
    deployments = sorted(
        p for p in result.written if p.endswith("/deployment-openshell-gateway.yaml")
    )
    assert deployments == sorted(
        f"manifests/{g.cluster.key}/{g.namespace}/deployment-openshell-gateway.yaml"
        for g in project.gateways
    )
    assert {p.split("/")[0] for p in result.written} == {"plan.json", "manifests", MARKER}
    gateways, clusters = len(project.gateways), len(project.clusters)
    assert result.validate == Outcome(
        0,
        _plaintext_notes(project) + f"{CONFIG_FILE}: ok ({gateways} gateway{'s' * (gateways != 1)},"
        f" {clusters} cluster{'s' * (clusters != 1)})\n",
        "",
    )


def _secure_note(project: Project) -> str:
    """The render's notes: `secure:` placeholders, then plaintext secrets."""
    count = sum(
        1
        for entry in project.secrets.values()
        for value in entry.values()
        if isinstance(value, dict) and set(value) == {"secure"}
    )
    notes = ""
    if count:
        notes += (
            f"note: {count} `secure:` config values cannot be decrypted offline; rendered with"
            " placeholders (redacted in the output like every secret)\n"
        )
    return notes + _plaintext_notes(project)


def _plaintext_notes(project: Project) -> str:
    """One note per plaintext secret (the generated clusters' database is never on localhost)."""
    notes = ""
    for cluster, entry in sorted(project.secrets.items()):
        for key, value in sorted(entry.items()):
            if not (isinstance(value, dict) and set(value) == {"secure"}):
                path = f"clusterSecrets.{cluster}.{key}"
                notes += (
                    f"note: Pulumi.test.yaml: {path}: plaintext in a file kept in git; set it"
                    f" with `pulumi config set --secret --path '{path}'`\n"
                )
    return notes


@settings(HOSTILE, max_examples=60)
@given(project=broken_projects())
def test_a_broken_generated_project_names_every_problem_and_writes_nothing(
    project: Project,
) -> None:
    result = run(project)

    problems = assert_clean_failure(result, project)
    # With a broken stack config, declarations are still checked on their own, but the rules
    # that need the clusters (cluster, hosts) cannot run: only the config's problems are sure.
    expected = [e for e in project.expected if e.path == CONFIG_FILE or not project.config_broken]
    assert expected
    missing = [e for e in expected if not named(problems, e)]
    assert missing == [], [p.rest for p in problems]
    assert sorted({p.path for p in problems} - project.touched) == []


@pytest.mark.parametrize(
    "mutation",
    DECLARATION_MUTATIONS + CONFIG_MUTATIONS,
    ids=lambda m: m.__name__.replace("_", "-"),
)
@settings(HOSTILE, max_examples=8)
@given(data=st.data())
def test_each_kind_of_breakage_is_named_by_file_and_field(
    mutation: Callable[[st.DrawFn, Project], None], data: st.DataObject
) -> None:
    project = data.draw(singly_broken_projects(mutation))
    result = run(project)

    problems = assert_clean_failure(result, project)
    missing = [e for e in project.expected if not named(problems, e)]
    assert missing == [], [p.rest for p in problems]
    assert sorted({p.path for p in problems} - project.touched) == []


# --- fixed cases: output handling -----------------------------------------------------------


def test_an_invalid_render_leaves_the_previous_output_untouched(tmp_path: Path) -> None:
    root, out = tmp_path / "project", tmp_path / "out"
    write_stack(root)
    write_gateway(root, "team-a", {})
    assert render_cli(root, out).code == 0
    before = tree(out)

    write_gateway(root, "team-b", {"replicas": "two"})
    result = render_cli(root, out)

    assert result.code == 2
    problems = reported_problems(result.err, [f"{DECLARATIONS}/team-b.yaml"])
    assert [p.rest for p in problems] == ["spec.replicas: Input should be a valid integer"]
    assert tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "project"]


def test_render_all_writes_no_stack_when_one_is_invalid(tmp_path: Path) -> None:
    root, out = tmp_path / "project", tmp_path / "out"
    write_stack(root)
    write_stack(root, stack="other")
    write_gateway(root, "fine", {}, stack="other")
    write_gateway(root, "broken", {"cluster": "c2"})

    result = render_cli(root, out, stack="--all")

    assert result.code == 2
    assert not out.exists()
    problems = reported_problems(result.err, [f"{DECLARATIONS}/broken.yaml"])
    assert [p.rest for p in problems] == ["spec.cluster: unknown cluster 'c2'; the stack has c1"]


# --- fixed cases: messages show the input as it is, one problem per line --------------------


def _one_project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    write_stack(root)
    return root


@pytest.mark.parametrize(
    ("file", "character"),
    [
        (f"{DECLARATIONS}/team-a.yaml", "\x00"),
        (f"{DECLARATIONS}/team-a.yaml", "\x07"),
        (f"{DECLARATIONS}/team-a.yaml", "\x7f"),
        (f"{DECLARATIONS}/team-a.yaml", "\ufffe"),
        (CONFIG_FILE, "\x00"),
    ],
    ids=[
        "nul-declaration",
        "bell-declaration",
        "del-declaration",
        "nonchar-declaration",
        "nul-config",
    ],
)
def test_a_character_yaml_refuses_is_one_problem_line(
    tmp_path: Path, file: str, character: str
) -> None:
    root = _one_project(tmp_path)
    text = declaration_text("team-a", {}) if file != CONFIG_FILE else (root / file).read_text()
    write_text(root, file, text + f"# note {character}\n")

    result = render_cli(root, tmp_path / "out")

    assert result.code == 2
    problems = reported_problems(result.err, [file])
    assert len(problems) == 1
    assert problems[0].names(file, "", "invalid YAML")


@pytest.mark.parametrize(
    ("spec", "extra", "line"),
    [
        (
            {":fire:": 1},
            {},
            f"error: {DECLARATIONS}/team-a.yaml: spec.:fire:: unknown field",
        ),
        (
            {"images": {"gateway": "quay.io/acme/app:x:100:"}},
            {},
            f"error: {DECLARATIONS}/team-a.yaml: spec.images.gateway: image reference"
            " 'quay.io/acme/app:x:100:' is not",
        ),
        ({}, {f"{PREFIX}a:b": 1}, f"error: {CONFIG_FILE}: {PREFIX}a:b: unknown config key"),
    ],
    ids=["field", "value", "config-key"],
)
def test_field_names_are_printed_verbatim(
    tmp_path: Path, spec: dict[str, Any], extra: dict[str, Any], line: str
) -> None:
    root = _one_project(tmp_path)
    if extra:
        with edited_config(root, STACK) as config:
            config.update(extra)
    write_gateway(root, "team-a", spec)

    result = render_cli(root, tmp_path / "out")

    assert result.code == 2
    reported_problems(result.err, [CONFIG_FILE, f"{DECLARATIONS}/team-a.yaml"])
    assert line in result.err


@pytest.mark.parametrize(
    ("file", "key"),
    [
        ("team-a.yaml", f"x\nerror: {CONFIG_FILE}: {PREFIX}clusters: forged"),
        ("team-a.yaml", "x\x1b[2Jy"),
        ("team-a.yaml", "p\rq"),
        ("team\na.yaml", None),
    ],
    ids=["newline-in-key", "escape-in-key", "carriage-return-in-key", "newline-in-file-name"],
)
def test_control_characters_in_input_are_escaped_in_messages(
    tmp_path: Path, file: str, key: str | None
) -> None:
    root = _one_project(tmp_path)
    path = f"{DECLARATIONS}/{file}"
    write_gateway(root, "team-a", {key: 1} if key else {}, file=file)

    result = render_cli(root, tmp_path / "out")

    assert result.code == 2
    (problem,) = reported_problems(result.err, [path])
    assert problem.rest.startswith("spec." if key else "metadata.name: ")
    assert "spec.pq:" not in result.err  # the CR must not silently vanish either

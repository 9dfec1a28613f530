"""The web console's resolution (``gatewayctl.resolve.console_plan``): off by default, its exposure
by
the cluster's mode, its refusals with path, field and problem, its images from the declaration,
the release or upstream, and hostile console fields."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.exposure_types import ConsoleHttpRoute, ConsolePortForward, ConsoleRoute
from gatewayctl.resolve.console_plan import DEFAULT_DASHBOARD_IMAGE, DEFAULT_OAUTH2_PROXY_IMAGE
from tests.builders import (
    BASE_DOMAIN,
    DECLARATIONS,
    PREFIX,
    cluster,
    digest,
    gateway_api_cluster,
    write_gateway,
    write_release,
)
from tests.console_helpers import (
    CONSOLE,
    FILE,
    HOST,
    KEYCLOAK,
    NS,
    console_objects,
    project,
    rendered,
    write_stack,
)
from tests.helpers import load, load_problems, only_gateway
from tests.hostile_helpers import (
    render_cli,
    reported_problems,
    validate_cli,
)

# --- resolution ------------------------------------------------------------------------------


def test_off_by_default(tmp_path: Path) -> None:
    project(tmp_path, {})
    gateway = only_gateway(tmp_path)
    assert gateway.args.console is None
    result = rendered(tmp_path)
    assert console_objects(result) == []
    assert not [r for r in result.recording.resources.values() if "console" in r.name]
    assert json.loads(result.files["plan.json"])["gateways"][0]["console"] is None


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({}, ConsoleRoute(host=HOST, router_namespace="openshift-ingress")),
        (
            {"ingress": {"routerNamespace": "routers"}},
            ConsoleRoute(host=HOST, router_namespace="routers"),
        ),
        (
            {"capabilities": {"openshift": False}, "ingress": {"mode": "none"}},
            ConsolePortForward(),
        ),
    ],
)
def test_the_cluster_mode_decides_the_exposure(
    tmp_path: Path, changes: dict[str, Any], expected: object
) -> None:
    project(tmp_path, **changes)
    settings = only_gateway(tmp_path).args.console
    assert settings is not None
    assert settings.exposure == expected
    assert settings.dashboard_image == DEFAULT_DASHBOARD_IMAGE
    assert settings.proxy_image == DEFAULT_OAUTH2_PROXY_IMAGE


@pytest.mark.parametrize(("section", "expected"), [(None, "https"), ("tls-web", "tls-web")])
def test_gateway_api_attaches_to_the_https_listener(
    tmp_path: Path, section: str | None, expected: str
) -> None:
    shared: dict[str, Any] = {"name": "shared-gw"}
    if section is not None:
        shared["httpsSectionName"] = section
    write_stack(
        tmp_path,
        clusters={"c1": gateway_api_cluster(identity=KEYCLOAK, ingress={"gateway": shared})},
    )
    write_gateway(tmp_path, "acme", CONSOLE)
    settings = only_gateway(tmp_path).args.console
    assert settings is not None
    exposure = settings.exposure
    assert isinstance(exposure, ConsoleHttpRoute)
    assert (exposure.host, exposure.gateway.name, exposure.gateway.namespace) == (
        HOST,
        "shared-gw",
        "openshift-ingress",
    )
    assert exposure.gateway.section_name == expected


def test_https_listener_must_not_be_the_grpc_one(tmp_path: Path) -> None:
    write_stack(
        tmp_path,
        clusters={
            "c1": gateway_api_cluster(
                identity=KEYCLOAK, ingress={"gateway": {"name": "g", "httpsSectionName": "grpc"}}
            )
        },
    )
    problems = load_problems(tmp_path)
    assert problems == [
        (
            "Pulumi.test.yaml",
            f"{PREFIX}clusters.c1.ingress.gateway",
            "httpsSectionName and sectionName are both 'grpc': consoles (HTTPRoute) and"
            " gateways (GRPCRoute) attach to two listeners of their own",
        )
    ]


KEYCLOAK_ONLY = "the console signs people in with the cluster's Keycloak: "


@pytest.mark.parametrize(
    ("spec", "changes", "field", "message"),
    [
        (
            CONSOLE,
            {"identity": {}},
            "spec.console.enabled",
            KEYCLOAK_ONLY + "cluster 'c1' has no identity.keycloak",
        ),
        (
            {**CONSOLE, "oidc": {"issuer": "https://login.example.com"}},
            {},
            "spec.console.enabled",
            KEYCLOAK_ONLY + "the gateway brings its own issuer (spec.oidc)",
        ),
        (
            {**CONSOLE, "signIn": "none"},
            {},
            "spec.console.enabled",
            KEYCLOAK_ONLY + "the gateway declares signIn: none",
        ),
        (
            {**CONSOLE, "exposure": {"enabled": False}},
            {},
            "spec.console.enabled",
            "the console needs an exposed gateway, and spec.exposure.enabled is false",
        ),
        (
            {**CONSOLE, "exposure": {"host": "gw.vanity.example.org"}},
            {"baseDomain": None},
            "spec.console.enabled",
            "the console's host is console-<namespace>.<baseDomain>, and cluster 'c1' has no"
            " baseDomain",
        ),
        (
            {**CONSOLE, "namespace": "n" * 56},
            {},
            "spec.console.enabled",
            f"console host 'console-{'n' * 56}.{BASE_DOMAIN}': label 'console-{'n' * 56}' is 64"
            " characters; at most 63",
        ),
    ],
)
def test_refused_with_path_field_and_problem(
    tmp_path: Path, spec: dict[str, Any], changes: dict[str, Any], field: str, message: str
) -> None:
    identity = changes.pop("identity", KEYCLOAK)
    write_stack(tmp_path, clusters={"c1": {**cluster(identity=identity), **changes}})
    if changes.get("baseDomain", "") is None:
        write_stack(
            tmp_path,
            clusters={
                "c1": {k: v for k, v in cluster(identity=identity).items() if k != "baseDomain"}
            },
        )
    write_gateway(tmp_path, "acme", spec)
    assert load_problems(tmp_path) == [(FILE, field, message)]
    outcome = validate_cli(tmp_path)
    assert outcome.code == 2
    assert "Traceback" not in outcome.err
    # Without Keycloak and without spec.oidc, validate also says that no one can sign in.
    nobody = [
        "spec.signIn: no person can sign in: cluster 'c1' has no identity.keycloak and the"
        " gateway declares no spec.oidc; declare spec.oidc (your issuer) or spec.signIn: none"
    ]
    assert [p.rest for p in reported_problems(outcome.err, [FILE])] == [
        f"{field}: {message}",
        *(nobody if identity == {} else []),
    ]
    out = tmp_path / "out"
    assert render_cli(tmp_path, out).code == 2
    assert not out.exists()


def test_two_consoles_on_one_host_are_refused(tmp_path: Path) -> None:
    # Two clusters on one base domain: the same namespace there is the same console host.
    write_stack(
        tmp_path,
        clusters={"c1": cluster(identity=KEYCLOAK), "c2": cluster(identity=KEYCLOAK)},
    )
    write_gateway(
        tmp_path, "acme", {**CONSOLE, "cluster": "c1", "exposure": {"host": "a.example.org"}}
    )
    write_gateway(
        tmp_path,
        "other",
        {**CONSOLE, "cluster": "c2", "namespace": NS, "exposure": {"host": "b.example.org"}},
    )
    assert load_problems(tmp_path) == [
        (
            f"{DECLARATIONS}/other.yaml",
            "spec.console.enabled",
            f"console host {HOST!r} is already used by {FILE}",
        )
    ]


def test_images_from_the_declaration_then_the_release_then_upstream(tmp_path: Path) -> None:
    dashboard = f"quay.io/acme/dashboard:2@{digest('dash')}"
    proxy = f"quay.io/acme/proxy:2@{digest('proxy')}"
    path = tmp_path / write_release(tmp_path, "r1")
    document = yaml.safe_load(path.read_text())
    document["spec"]["images"].update(console=dashboard, oauth2Proxy=proxy)
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    own = f"quay.io/own/proxy:3@{digest('own')}"
    write_stack(
        tmp_path,
        clusters={
            "c1": cluster(
                identity=KEYCLOAK,
                release="r1",
                registryMirrors={"quay.io/acme": "mirror.example.com:5000/acme"},
            )
        },
    )
    write_gateway(tmp_path, "acme", {"console": {"enabled": True, "images": {"oauth2Proxy": own}}})
    settings = only_gateway(tmp_path).args.console
    assert settings is not None
    # The release's dashboard through the mirror (digest kept); the declaration's own proxy.
    assert settings.dashboard_image == f"mirror.example.com:5000/acme/dashboard:2@{digest('dash')}"
    assert settings.proxy_image == own


def test_a_release_without_console_images_still_reads(tmp_path: Path) -> None:
    write_release(tmp_path, "r1")
    write_stack(tmp_path, clusters={"c1": cluster(identity=KEYCLOAK, release="r1")})
    write_gateway(tmp_path, "acme", CONSOLE)
    settings = only_gateway(tmp_path).args.console
    assert settings is not None
    assert (settings.dashboard_image, settings.proxy_image) == (
        DEFAULT_DASHBOARD_IMAGE,
        DEFAULT_OAUTH2_PROXY_IMAGE,
    )
    release = load(tmp_path).releases["r1"].release
    assert (release.console_image("dashboard"), release.console_image("oauth2Proxy")) == (
        None,
        None,
    )


def test_a_production_stack_needs_console_images_by_digest(tmp_path: Path) -> None:
    write_release(tmp_path, "r1")
    write_stack(
        tmp_path,
        clusters={"c1": cluster(identity=KEYCLOAK, release="r1")},
        extra={f"{PREFIX}production": True},
    )
    write_gateway(tmp_path, "acme", CONSOLE)
    assert load_problems(tmp_path) == [
        (
            FILE,
            "spec.console.images.oauth2Proxy",
            f"{DEFAULT_OAUTH2_PROXY_IMAGE!r} (the built-in default) has no digest: the stack is"
            " production, so the console runs images by digest: set"
            " spec.console.images.oauth2Proxy @sha256:..., or pin a release whose"
            " spec.images.oauth2Proxy has one",
        )
    ]
    pinned = f"quay.io/oauth2-proxy/oauth2-proxy:v7.7.1@{digest('p')}"
    write_gateway(
        tmp_path, "acme", {"console": {"enabled": True, "images": {"oauth2Proxy": pinned}}}
    )
    settings = only_gateway(tmp_path).args.console
    assert settings is not None and settings.proxy_image == pinned


# --- hostile input ---------------------------------------------------------------------------

HOSTILE_VALUES: list[tuple[str, Any, str]] = [
    ("enabled", "yes", "Input should be a valid boolean"),
    ("enabled", 1, "Input should be a valid boolean"),
    ("enabled", None, "Input should be a valid boolean"),
    ("images", {"dashboard": "quay.io/x/y:1;rm$(id)"}, "shell metacharacters"),
    ("images", {"oauth2Proxy": "quay.io/x/y:1\n"}, "contains whitespace"),
    ("images", {"oauth2Proxy": "Quay.IO/X/Y"}, "lowercase repository path"),
    ("images", {"dashboard": ["a"]}, "Input should be a valid string"),
    ("images", {"sidecar": "quay.io/x/y:1"}, "unknown field"),
    ("enabeld", True, "unknown field; did you mean 'enabled'?"),
]


@pytest.mark.parametrize(("key", "value", "fragment"), HOSTILE_VALUES)
def test_hostile_console_fields_exit_2_naming_the_field(
    tmp_path: Path, key: str, value: Any, fragment: str
) -> None:
    project(tmp_path, {"console": {key: value}})
    outcome = validate_cli(tmp_path)
    assert outcome.code == 2
    assert "Traceback" not in outcome.err
    field = f"spec.console.{key}"
    if isinstance(value, dict):
        field += f".{next(iter(value))}"
    found = reported_problems(outcome.err, [FILE])
    assert len(found) == 1, outcome.err
    assert found[0].names(FILE, field, fragment), (found, field)
    # Nothing of a hostile value is echoed as control characters.
    assert "\n" not in found[0].rest


def test_console_field_is_not_a_mapping(tmp_path: Path) -> None:
    project(tmp_path, {"console": True})
    assert [p[:2] for p in load_problems(tmp_path)] == [(FILE, "spec.console")]

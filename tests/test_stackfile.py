"""The stack file's name (``gatewayctl.inputs.stackfile``): spelt by one function, listed by one."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.ingress import IngressMode
from gatewayctl.inputs import stackfile
from gatewayctl.inputs.stackfile import stack_file, stacks_with_files
from gatewayctl.resolve.stack import load_stack
from tests.builders import (
    BASE_DOMAIN,
    CONFIG_FILE,
    DECLARATIONS,
    DROP,
    EAST_DOMAIN,
    PREFIX,
    STACK,
    WEST_DOMAIN,
    cluster,
    one_cluster,
    two_clusters,
    write_gateway,
    write_stack,
    write_text,
)
from tests.helpers import load, load_problems, only_gateway, where
from tests.support import ROOT
from tests.test_ingress import ALLOWED

PACKAGE = ROOT / "gatewayctl"

# A stack file's name built from parts: an f-string or concatenation starting with "Pulumi.",
# its glob, or the length of its prefix.
SPELLING = re.compile(r"""f["']Pulumi\.\{|["']Pulumi\.["']\s*\+|["']Pulumi\.\*|len\(["']Pulumi\.""")

UNWIRED: dict[str, int] = {}
"""Modules allowed to spell the stack file themselves: none, every one goes through
``stack_file``."""


def test_the_stack_file_of_a_stack_and_its_pattern() -> None:
    assert stack_file("aws") == "Pulumi.aws.yaml"
    assert stack_file("aws", ".yml") == "Pulumi.aws.yml"
    assert stack_file("*") == "Pulumi.*.yaml"
    assert stackfile.STACK_FILE_SUFFIXES == (".yaml", ".yml")


def test_stacks_are_listed_from_their_files_whatever_their_names(tmp_path: Path) -> None:
    for name in ("Pulumi.b.yaml", "Pulumi.a-b.yaml", "Pulumi.a.yaml", "Pulumi..yaml"):
        (tmp_path / name).write_text("config: {}\n", encoding="utf-8")
    (tmp_path / "Pulumi.dir.yaml").mkdir()  # a glob match, as before the split
    for other in ("Pulumi.yaml", "Pulumi.c.yml", "pulumi.d.yaml", "Pulumi.e.yaml.bak"):
        (tmp_path / other).write_text("config: {}\n", encoding="utf-8")
    assert stacks_with_files(tmp_path) == ["", "a", "a-b", "b", "dir"]
    assert [stack_file(s) for s in stacks_with_files(tmp_path)] == [
        "Pulumi..yaml",
        "Pulumi.a.yaml",
        "Pulumi.a-b.yaml",
        "Pulumi.b.yaml",
        "Pulumi.dir.yaml",
    ]


def test_no_other_module_spells_the_stack_file() -> None:
    found: dict[str, int] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "stackfile.py":
            continue
        count = len(SPELLING.findall(path.read_text(encoding="utf-8")))
        if count:
            found[path.relative_to(PACKAGE).as_posix()] = count
    assert found == UNWIRED


# --- clusters -------------------------------------------------------------------------------


def test_unknown_cluster_lists_the_stacks_clusters(tmp_path: Path) -> None:
    write_stack(tmp_path, clusters=two_clusters())
    source = write_gateway(tmp_path, "team-a", {"cluster": "north"})

    assert load_problems(tmp_path) == [
        (source, "spec.cluster", "unknown cluster 'north'; the stack has east, west")
    ]


def test_cluster_is_required_when_the_stack_has_two(tmp_path: Path) -> None:
    write_stack(tmp_path, clusters=two_clusters())
    source = write_gateway(tmp_path, "team-a")

    assert load_problems(tmp_path) == [
        (source, "spec.cluster", "required: the stack has clusters east, west")
    ]


def test_omitted_cluster_picks_the_only_one(tmp_path: Path) -> None:
    write_stack(tmp_path, clusters={"only-one": cluster()})
    write_gateway(tmp_path, "team-a")

    assert only_gateway(tmp_path).cluster == "only-one"


def test_each_gateway_uses_its_own_clusters_base_domain(tmp_path: Path) -> None:
    write_stack(tmp_path, clusters=two_clusters())
    write_gateway(tmp_path, "a", {"cluster": "east"})
    write_gateway(tmp_path, "b", {"cluster": "west"})

    assert [(g.cluster, g.hostname) for g in load(tmp_path).gateways] == [
        ("east", f"gw-openshell-a.{EAST_DOMAIN}"),
        ("west", f"gw-openshell-b.{WEST_DOMAIN}"),
    ]


# --- stack config ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ingress", "capabilities", "mode"),
    [
        (
            {"mode": "GatewayAPI", "gateway": {"name": "shared-gw"}},
            {"gatewayApi": True},
            IngressMode.GATEWAY_API,
        ),
        ({"mode": "routes"}, {"openshift": True}, IngressMode.ROUTE),
        ({"mode": " Route "}, {"openshift": True}, IngressMode.ROUTE),
        ({"mode": "off"}, {"openshift": True}, IngressMode.NONE),
        ({"mode": "Disabled"}, {}, IngressMode.NONE),
        ({"mode": "AUTO"}, {"openshift": True}, IngressMode.ROUTE),
        (
            {"mode": "auto", "gateway": {"name": "shared-gw"}},
            {"openshift": True, "gatewayApi": True},
            IngressMode.GATEWAY_API,
        ),
    ],
)
def test_ingress_mode_aliases_resolve(
    tmp_path: Path, ingress: dict[str, Any], capabilities: dict[str, Any], mode: IngressMode
) -> None:
    write_stack(tmp_path, clusters={"c1": cluster(ingress=ingress, capabilities=capabilities)})
    write_gateway(tmp_path, "team-a")

    loaded = load(tmp_path)

    assert loaded.cluster("c1").ingress_mode is mode
    assert loaded.gateways[0].ingress_mode is mode
    expected_host = None if mode is IngressMode.NONE else f"gw-openshell-team-a.{BASE_DOMAIN}"
    assert loaded.gateways[0].hostname == expected_host


def test_unknown_ingress_mode_is_a_problem_not_a_fallback(tmp_path: Path) -> None:
    write_stack(tmp_path, clusters=one_cluster(ingress={"mode": "foo"}))

    assert load_problems(tmp_path) == [
        (
            CONFIG_FILE,
            f"{PREFIX}clusters.c1.ingress.mode",
            f"unknown ingress mode 'foo'; expected one of: {ALLOWED}",
        )
    ]


@pytest.mark.parametrize(
    "capabilities",
    [{"openshift": True}, {"openshift": True, "gatewayApi": True}],
)
def test_gateway_api_without_shared_gateway_is_a_problem(
    tmp_path: Path, capabilities: dict[str, Any]
) -> None:
    write_stack(
        tmp_path,
        clusters=one_cluster(ingress={"mode": "gateway-api"}, capabilities=capabilities),
    )

    assert load_problems(tmp_path) == [
        (
            CONFIG_FILE,
            f"{PREFIX}clusters.c1",
            "ingress resolves to gateway-api but ingress.gateway (the shared Gateway's name,"
            " namespace, sectionName) is not set",
        )
    ]


def test_auto_resolving_to_gateway_api_needs_the_shared_gateway_too(tmp_path: Path) -> None:
    write_stack(
        tmp_path,
        clusters=one_cluster(ingress={"mode": "auto"}, capabilities={"gatewayApi": True}),
    )

    assert where(load_problems(tmp_path)) == [(CONFIG_FILE, f"{PREFIX}clusters.c1")]


def test_route_mode_needs_openshift(tmp_path: Path) -> None:
    write_stack(tmp_path, clusters=one_cluster(capabilities={"openshift": False}))

    assert load_problems(tmp_path) == [
        (
            CONFIG_FILE,
            f"{PREFIX}clusters.c1",
            "ingress.mode is route but capabilities.openshift is false",
        )
    ]


def test_gateway_api_mode_needs_the_capability(tmp_path: Path) -> None:
    write_stack(
        tmp_path,
        clusters=one_cluster(ingress={"mode": "gateway-api", "gateway": {"name": "shared"}}),
    )
    assert load_problems(tmp_path) == [
        (
            CONFIG_FILE,
            f"{PREFIX}clusters.c1",
            "ingress.mode is gateway-api but capabilities.gatewayApi is false",
        )
    ]


def test_a_non_string_ingress_mode_says_what_is_expected(tmp_path: Path) -> None:
    write_stack(tmp_path, clusters=one_cluster(ingress={"mode": 5}))
    assert load_problems(tmp_path) == [
        (
            CONFIG_FILE,
            f"{PREFIX}clusters.c1.ingress.mode",
            "expected a string such as route, gateway-api, none or auto, not 5",
        )
    ]


def test_unknown_config_key_under_the_project_prefix(tmp_path: Path) -> None:
    write_stack(
        tmp_path,
        extra={f"{PREFIX}imagez": {"gateway": "x"}, "kubernetes:context": "other-project"},
    )
    write_gateway(tmp_path, "team-a")

    assert load_problems(tmp_path) == [
        (CONFIG_FILE, f"{PREFIX}imagez", f"unknown config key; did you mean '{PREFIX}images'?")
    ]


def test_unknown_config_key_is_reported_with_model_problems(tmp_path: Path) -> None:
    write_stack(
        tmp_path,
        clusters=one_cluster(baseDomain="Apps.Example.com"),
        extra={f"{PREFIX}declarationDir": "typo"},
    )

    assert where(load_problems(tmp_path)) == [
        (CONFIG_FILE, f"{PREFIX}clusters.c1.baseDomain"),
        (CONFIG_FILE, f"{PREFIX}declarationDir"),
    ]


def test_near_miss_config_namespace_is_reported(tmp_path: Path) -> None:
    write_stack(tmp_path, extra={"hypershell-gateway:clusters": {}, "kubernetes:context": "x"})
    assert load_problems(tmp_path) == [
        (CONFIG_FILE, "hypershell-gateway:clusters", f"unknown namespace; did you mean {PREFIX}?")
    ]


def test_a_misspelt_config_key_is_named(tmp_path: Path) -> None:
    write_stack(tmp_path)
    path = tmp_path / CONFIG_FILE
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    document["configg"] = document.pop("config")
    document["secretsprovider"] = "passphrase"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")

    assert load_problems(tmp_path) == [
        (CONFIG_FILE, "configg", "unknown key; did you mean config?")
    ]


def test_unknown_cluster_field(tmp_path: Path) -> None:
    write_stack(tmp_path, clusters=one_cluster(ingress={"gatway": {"name": "x"}}))

    assert load_problems(tmp_path) == [
        (
            CONFIG_FILE,
            f"{PREFIX}clusters.c1.ingress.gatway",
            "unknown field; did you mean 'gateway'?",
        )
    ]


@pytest.mark.parametrize(
    ("base_domain", "message"),
    [
        (
            "Apps.Example.com",
            "base domain 'Apps.Example.com' is not a lowercase RFC 1123 DNS name"
            " (labels of a-z, 0-9 and inner '-', separated by single dots)",
        ),
        (
            "apps..example.com",
            "base domain 'apps..example.com' is not a lowercase RFC 1123 DNS name"
            " (labels of a-z, 0-9 and inner '-', separated by single dots)",
        ),
        ("", "base domain must not be empty"),
    ],
)
def test_bad_base_domain(tmp_path: Path, base_domain: str, message: str) -> None:
    write_stack(tmp_path, clusters=one_cluster(baseDomain=base_domain))

    assert load_problems(tmp_path) == [(CONFIG_FILE, f"{PREFIX}clusters.c1.baseDomain", message)]


def test_mirror_key_with_a_tag_is_a_problem(tmp_path: Path) -> None:
    mirrors = {"ghcr.io/nvidia:1.0": "registry.local/nvidia"}
    write_stack(tmp_path, clusters=one_cluster(registryMirrors=mirrors))

    assert load_problems(tmp_path) == [
        (
            CONFIG_FILE,
            f"{PREFIX}clusters.c1.registryMirrors.ghcr.io/nvidia:1.0",
            "key: 'ghcr.io/nvidia:1.0': a mirror names a repository prefix, without tag or digest",
        )
    ]


def test_mirror_target_with_a_digest_is_a_problem(tmp_path: Path) -> None:
    target = "registry.local/nvidia@sha256:" + "0" * 64
    write_stack(tmp_path, clusters=one_cluster(registryMirrors={"ghcr.io/nvidia": target}))

    assert load_problems(tmp_path) == [
        (
            CONFIG_FILE,
            f"{PREFIX}clusters.c1.registryMirrors.ghcr.io/nvidia",
            f"{target!r}: a mirror names a repository prefix, without tag or digest",
        )
    ]


def test_cluster_name_must_be_a_dns_label(tmp_path: Path) -> None:
    write_stack(tmp_path, clusters={"Roks_1": cluster()})

    assert load_problems(tmp_path) == [
        (
            CONFIG_FILE,
            f"{PREFIX}clusters.Roks_1",
            "key: 'Roks_1' is not a DNS-1123 label (lowercase a-z, 0-9, inner '-', at most 63)",
        )
    ]


def test_stack_without_clusters_or_declarations_dir(tmp_path: Path) -> None:
    write_text(tmp_path, CONFIG_FILE, "config:\n  other-project:key: 1\n")

    assert load_problems(tmp_path) == [
        (CONFIG_FILE, f"{PREFIX}clusters", "required field is missing"),
        (CONFIG_FILE, f"{PREFIX}declarationsDir", "required field is missing"),
    ]


def test_stack_with_an_empty_clusters_map(tmp_path: Path) -> None:
    write_stack(tmp_path, clusters={}, secrets=DROP)

    assert where(load_problems(tmp_path)) == [(CONFIG_FILE, f"{PREFIX}clusters")]


def test_stack_file_config_must_be_a_mapping(tmp_path: Path) -> None:
    write_text(tmp_path, CONFIG_FILE, "config:\n- a\n")

    assert load_problems(tmp_path) == [(CONFIG_FILE, "config", "expected a mapping")]


def test_missing_stack_file(tmp_path: Path) -> None:
    assert load_problems(tmp_path) == [(CONFIG_FILE, "", "cannot read: No such file or directory")]


def test_raw_config_bypasses_the_stack_file(tmp_path: Path) -> None:
    # A real run hands load_stack the keys read by pulumi.Config; no stack file is read.
    (tmp_path / DECLARATIONS).mkdir(parents=True)
    write_gateway(tmp_path, "team-a")
    raw = {"declarationsDir": DECLARATIONS, "clusters": one_cluster()}

    loaded = load_stack(tmp_path, STACK, raw)

    assert [(g.name, g.hostname) for g in loaded.gateways] == [
        ("team-a", f"gw-openshell-team-a.{BASE_DOMAIN}")
    ]


@pytest.mark.parametrize(("written", "read"), [("true", True), ("false", False), (True, True)])
def test_a_boolean_key_as_the_cli_writes_it_back(tmp_path: Path, written: Any, read: bool) -> None:
    # `pulumi stack init` (and any CLI save) writes `selfHeal: true` back as "true": the
    # real-engine lane saw it (e2e/project.py's stacks); both spellings are the same value.
    from tests.builders import PREFIX, STACK, write_stack

    write_stack(
        tmp_path,
        extra={
            f"{PREFIX}selfHeal": written,
            f"{PREFIX}selfHealUnmanaged": written,
            f"{PREFIX}production": "false",
        },
    )
    raw = yaml.safe_load((tmp_path / f"Pulumi.{STACK}.yaml").read_text())["config"]
    config = {k.removeprefix(PREFIX): v for k, v in raw.items() if k.startswith(PREFIX)}
    loaded = load_stack(tmp_path, STACK, config)
    assert (
        loaded.config.self_heal,
        loaded.config.self_heal_unmanaged,
        loaded.config.production,
    ) == (read, read, False)


def test_unmanaged_ignore_takes_kind_and_name_patterns_and_names_a_bad_one(
    tmp_path: Path,
) -> None:
    patterns = ["Secret/builder-dockercfg-*", "ConfigMap/istio-ca-root-cert"]
    write_stack(tmp_path, extra={f"{PREFIX}unmanagedIgnore": patterns})
    write_gateway(tmp_path, "team-a")
    assert load(tmp_path).config.unmanaged_ignore == patterns
    write_stack(tmp_path, extra={f"{PREFIX}unmanagedIgnore": ["Secret/ns/name", "no-kind"]})
    problems = load_problems(tmp_path)
    assert [(p[0], p[1]) for p in problems] == [
        (CONFIG_FILE, f"{PREFIX}unmanagedIgnore.0"),
        (CONFIG_FILE, f"{PREFIX}unmanagedIgnore.1"),
    ]

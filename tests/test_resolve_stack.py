"""Resolution of a stack (``gatewayctl.resolve.stack``): the declarations it reads and in which
order, every problem of every file at once, and the rules across gateways (unique names,
namespaces, hosts and databases), from a small project that each test builds into ``tmp_path``
with ``tests.builders`` (one OpenShift cluster in route mode with a base domain, or two such
clusters); and the committed stacks' decisions.
"""

from __future__ import annotations

from pathlib import Path

from gatewayctl.resolve.stack import load_stack
from tests.builders import (
    BASE_DOMAIN,
    CONFIG_FILE,
    DECLARATIONS,
    EAST_DOMAIN,
    PREFIX,
    WEST_DOMAIN,
    cluster,
    head,
    one_cluster,
    two_clusters,
    write_declaration_text,
    write_gateway,
    write_stack,
)
from tests.helpers import load, load_problems, located_problems, only_gateway, where
from tests.support import ROOT

# --- the declarations read ------------------------------------------------------------------


def test_gateways_are_sorted_by_name_not_by_file_or_creation_order(tmp_path: Path) -> None:
    write_stack(tmp_path)
    # "team-b.yaml" sorts before "team.yaml" as a path ('-' < '.') but after it as a name.
    for name in ("zeta", "team-b", "team", "alpha"):
        write_gateway(tmp_path, name)

    assert [g.name for g in load(tmp_path).gateways] == ["alpha", "team", "team-b", "zeta"]


def test_yml_suffix_is_read_and_dotfiles_and_readmes_are_ignored(tmp_path: Path) -> None:
    write_stack(tmp_path)
    write_gateway(tmp_path, "team-a", file="team-a.yml")
    for name in (
        "README.md",
        "README",
        "README.rst",
        ".gitkeep",
        ".team-b.yaml",
        ".team-b.yaml.swp",
    ):
        write_declaration_text(tmp_path, name, "not a declaration: [")
    (tmp_path / DECLARATIONS / ".archive").mkdir()

    gateway = only_gateway(tmp_path)

    assert (gateway.name, gateway.source) == ("team-a", f"{DECLARATIONS}/team-a.yml")


# --- every problem at once ------------------------------------------------------------------


def test_problems_of_every_file_are_reported_at_once(tmp_path: Path) -> None:
    write_stack(tmp_path)
    a = write_gateway(tmp_path, "a", {"replicas": "two", "exposure": {"hots": "x"}})
    b = write_declaration_text(tmp_path, "b.yaml", "- not\n- a mapping\n")
    c = write_declaration_text(tmp_path, "c.yaml", head("c") + "spec: [\n")
    write_gateway(tmp_path, "d")  # valid: reports nothing

    problems = located_problems(tmp_path)

    assert where(problems) == [
        (a, "spec.exposure.hots"),
        (a, "spec.replicas"),
        (b, ""),
        (f"{c}:6:1", ""),
    ]
    assert problems[2][2] == "expected a YAML mapping, found list"
    assert problems[3][2].startswith("invalid YAML: ")


def test_cross_file_problems_of_every_file_are_reported_at_once(tmp_path: Path) -> None:
    write_stack(tmp_path, clusters=two_clusters())
    write_gateway(tmp_path, "b", {"cluster": "east", "exposure": {"host": "v.example.org"}})
    c = write_gateway(tmp_path, "c", {"cluster": "west", "exposure": {"host": "v.example.org"}})
    d = write_gateway(
        tmp_path, "d", {"cluster": "east", "exposure": {"host": f"gw-openshell-b.{EAST_DOMAIN}"}}
    )
    e = write_gateway(tmp_path, "e")
    f = write_gateway(tmp_path, "f", {"cluster": "west", "namespace": "openshell-c"})
    write_gateway(tmp_path, "g", {"cluster": "west"})  # valid: reports nothing

    problems = load_problems(tmp_path)

    assert where(problems) == [
        (c, "spec.exposure.host"),
        (d, "spec.exposure.host"),
        (e, "spec.cluster"),
        (f, "spec.namespace"),
    ]
    assert problems[3][2] == f"namespace 'openshell-c' on cluster 'west' is already used by {c}"


def test_parse_problems_do_not_hide_other_files_problems(tmp_path: Path) -> None:
    write_stack(tmp_path)
    a = write_gateway(tmp_path, "a", {"replicas": 0})
    b = write_gateway(tmp_path, "b", {"exposure": {"host": f"gw-openshell-a.{BASE_DOMAIN}"}})

    assert where(load_problems(tmp_path)) == [(a, "spec.replicas"), (b, "spec.exposure.host")]


def test_declarations_are_checked_even_when_the_stack_config_is_broken(tmp_path: Path) -> None:
    write_stack(tmp_path, clusters=one_cluster(baseDomain="Not A Domain"))
    source = write_gateway(tmp_path, "team-a", {"replicas": "two"})
    assert where(load_problems(tmp_path)) == [
        (CONFIG_FILE, f"{PREFIX}clusters.c1.baseDomain"),
        (source, "spec.replicas"),
    ]


def test_system_database_name_is_refused_even_when_the_stack_config_is_broken(
    tmp_path: Path,
) -> None:
    write_stack(tmp_path, clusters=one_cluster(baseDomain="Not A Domain"))
    source = write_gateway(tmp_path, "team-a", {"databaseName": "template1"})

    assert where(load_problems(tmp_path)) == [
        (CONFIG_FILE, f"{PREFIX}clusters.c1.baseDomain"),
        (source, "spec.databaseName"),
    ]


# --- unique hosts ---------------------------------------------------------------------------


def test_duplicate_vanity_host_names_the_second_file(tmp_path: Path) -> None:
    write_stack(tmp_path)
    first = write_gateway(tmp_path, "alpha", {"exposure": {"host": "shared.example.org"}})
    second = write_gateway(tmp_path, "beta", {"exposure": {"host": "shared.example.org"}})

    assert load_problems(tmp_path) == [
        (second, "spec.exposure.host", f"host 'shared.example.org' is already used by {first}")
    ]


def test_duplicate_host_across_clusters_is_a_problem(tmp_path: Path) -> None:
    write_stack(tmp_path, clusters=two_clusters())
    first = write_gateway(
        tmp_path, "alpha", {"cluster": "west", "exposure": {"host": "shared.example.org"}}
    )
    second = write_gateway(
        tmp_path, "beta", {"cluster": "east", "exposure": {"host": "shared.example.org"}}
    )

    assert load_problems(tmp_path) == [
        (second, "spec.exposure.host", f"host 'shared.example.org' is already used by {first}")
    ]


# --- unique names and namespaces ------------------------------------------------------------


def test_namespace_collision_on_the_same_cluster(tmp_path: Path) -> None:
    write_stack(tmp_path)
    first = write_gateway(tmp_path, "alpha")
    second = write_gateway(
        tmp_path,
        "beta",
        {"namespace": "openshell-alpha", "exposure": {"host": "beta.example.org"}},
    )

    assert load_problems(tmp_path) == [
        (
            second,
            "spec.namespace",
            f"namespace 'openshell-alpha' on cluster 'c1' is already used by {first}",
        )
    ]


def test_explicit_namespaces_collide_too(tmp_path: Path) -> None:
    write_stack(tmp_path)
    write_gateway(tmp_path, "alpha", {"namespace": "shared", "exposure": {"enabled": False}})
    second = write_gateway(
        tmp_path, "beta", {"namespace": "shared", "exposure": {"enabled": False}}
    )

    assert where(load_problems(tmp_path)) == [(second, "spec.namespace")]


def test_same_namespace_on_different_clusters_is_allowed(tmp_path: Path) -> None:
    write_stack(tmp_path, clusters=two_clusters())
    write_gateway(tmp_path, "alpha", {"cluster": "east", "namespace": "tenant"})
    write_gateway(tmp_path, "beta", {"cluster": "west", "namespace": "tenant"})

    assert [(g.cluster, g.namespace, g.hostname) for g in load(tmp_path).gateways] == [
        ("east", "tenant", f"gw-tenant.{EAST_DOMAIN}"),
        ("west", "tenant", f"gw-tenant.{WEST_DOMAIN}"),
    ]


def test_gateway_names_are_unique_across_yaml_and_yml(tmp_path: Path) -> None:
    write_stack(tmp_path, clusters=two_clusters())
    write_gateway(tmp_path, "team-a", {"cluster": "east"})
    second = write_gateway(tmp_path, "team-a", {"cluster": "west"}, file="team-a.yml")

    # Both clusters use one database server, so gw_team_a would clash there too.
    assert where(load_problems(tmp_path)) == [
        (second, "metadata.name"),
        (second, "spec.databaseName"),
    ]


# --- unique database names ------------------------------------------------------------------


def test_database_names_are_identifiers_and_unique_per_cluster(tmp_path: Path) -> None:
    write_stack(tmp_path)
    write_gateway(tmp_path, "a", {"databaseName": "shared_db"})
    second = write_gateway(tmp_path, "b", {"databaseName": "shared_db"})
    bad = write_gateway(tmp_path, "c", {"databaseName": "Robert'); DROP TABLE"})
    assert load_problems(tmp_path) == [
        (
            second,
            "spec.databaseName",
            f"database 'shared_db' on server db.example.com:5432 is already used by"
            f" {DECLARATIONS}/a.yaml",
        ),
        (
            bad,
            "spec.databaseName",
            '"Robert\'); DROP TABLE" is not a lowercase PostgreSQL identifier (a-z, 0-9,'
            " '_', not starting with a digit, at most 63)",
        ),
    ]


def test_database_names_are_unique_per_database_server_across_clusters(tmp_path: Path) -> None:
    shared = {"database": {"adminHost": "shared-pg.example.com"}}
    clusters = {
        "east": cluster(baseDomain=EAST_DOMAIN, **shared),
        "west": cluster(baseDomain=WEST_DOMAIN, **shared),
        "north": cluster(baseDomain="north.example.com"),
    }
    write_stack(tmp_path, clusters=clusters)
    first = write_gateway(tmp_path, "a", {"cluster": "east", "databaseName": "gw_shared"})
    second = write_gateway(tmp_path, "b", {"cluster": "west", "databaseName": "gw_shared"})
    write_gateway(tmp_path, "c", {"cluster": "north", "databaseName": "gw_shared"})

    assert load_problems(tmp_path) == [
        (
            second,
            "spec.databaseName",
            f"database 'gw_shared' on server shared-pg.example.com:5432 is already used by {first}",
        )
    ]


# --- the committed stacks -------------------------------------------------------------------


def test_committed_stacks_load_with_the_documented_decisions() -> None:
    summary = {
        stack: [
            (g.name, g.cluster, str(g.ingress_mode), g.address is not None, g.args.retain_database)
            for g in load_stack(ROOT, stack).gateways
        ]
        for stack in ("aws", "ibm", "local")
    }

    assert summary == {
        "aws": [
            ("audit", "rosa-us-east-1", "gateway-api", False, False),
            ("ml-platform", "rosa-us-west-2", "gateway-api", True, True),
            ("payments", "rosa-us-east-1", "gateway-api", True, True),
            ("search", "rosa-us-west-2", "gateway-api", True, True),
        ],
        "ibm": [
            ("batch-jobs", "roks-us-east", "route", False, False),
            ("canary", "roks-us-east", "route", True, True),
            ("research", "roks-us-east", "route", True, True),
            ("team-a", "roks-us-east", "route", True, True),
        ],
        "local": [
            ("dev", "kind", "none", False, True),
            ("dev-build", "kind", "none", False, False),
            ("offline", "kind", "none", False, True),
        ],
    }

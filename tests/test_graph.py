"""Issue 25 item 7 (a): ``gatewayctl graph``, stacks → clusters → gateways and what the clusters
share, in Mermaid and DOT; validated as ``validate`` validates; the README's picture is current."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gatewayctl.cli import graph
from gatewayctl.cli import main as cli
from tests.builders import DROP, cluster, copy_project, write_gateway, write_stack, write_text
from tests.support import ROOT

SECRETS = {
    "east": {"c1": {"dbAdminPassword": "pw-east-secret", "keycloakAdminClientSecret": "kc-east"}},
    "west": {
        "c1": {"dbAdminPassword": "pw-west-secret", "keycloakAdminClientSecret": "kc-west"},
        "c2": {"dbAdminPassword": "pw-w2-secret"},
    },
}


def keycloak(url: str) -> dict[str, object]:
    return {"keycloak": {"url": url, "realm": "tenants", "adminClientId": "provisioner"}}


def two_stacks(root: Path) -> Path:
    """Stacks ``east`` and ``west`` sharing one database server and one realm (its URL written
    in another case); ``west/c2`` has its own server on another port and no base domain."""
    east = cluster(
        kubeconfigContext="ctx-east",
        baseDomain="east.example.com",
        identity=keycloak("https://SSO.example.com"),
    )
    write_stack(root, stack="east", clusters={"c1": east}, secrets=SECRETS["east"])
    west = {
        "c1": cluster(
            kubeconfigContext="ctx-west",
            baseDomain="west.example.com",
            identity=keycloak("https://sso.example.com"),
        ),
        "c2": cluster(
            kubeconfigContext="ctx-w2",
            baseDomain=DROP,
            database={"adminHost": "pg.west.example.com", "adminPort": 6432},
        ),
    }
    write_stack(root, stack="west", clusters=west, secrets=SECRETS["west"])
    write_gateway(root, "b-team", stack="east")
    write_gateway(root, "a-team", stack="east")
    write_gateway(root, "web", {"cluster": "c1"}, stack="west")
    batch = {"cluster": "c2", "exposure": {"enabled": False}, "signIn": "none"}
    write_gateway(root, "batch", batch, stack="west")
    return root


MERMAID = """\
%% gatewayctl graph: stacks, clusters, gateways and what they share
flowchart LR
    stack__east(["stack east"])
    cluster__east__c1["cluster c1"]
    gateway__east__a_2dteam("a-team")
    gateway__east__b_2dteam("b-team")
    stack__west(["stack west"])
    cluster__west__c1["cluster c1"]
    gateway__west__web("web")
    cluster__west__c2["cluster c2"]
    gateway__west__batch("batch")
    database__db_2eexample_2ecom_3a5432[("PostgreSQL<br>db.example.com:5432")]
    database__pg_2ewest_2eexample_2ecom_3a6432[("PostgreSQL<br>pg.west.example.com:6432")]
    realm__https_3a_2f_2fsso_2eexample_2ecom__tenants{{"Keycloak realm tenants<br>https://sso.example.com"}}
    domain__east_2eexample_2ecom[/"base domain<br>east.example.com"/]
    domain__west_2eexample_2ecom[/"base domain<br>west.example.com"/]
    stack__east --> cluster__east__c1
    cluster__east__c1 --> gateway__east__a_2dteam
    cluster__east__c1 --> gateway__east__b_2dteam
    stack__west --> cluster__west__c1
    cluster__west__c1 --> gateway__west__web
    stack__west --> cluster__west__c2
    cluster__west__c2 --> gateway__west__batch
    cluster__east__c1 -.-> database__db_2eexample_2ecom_3a5432
    cluster__east__c1 -.-> realm__https_3a_2f_2fsso_2eexample_2ecom__tenants
    cluster__east__c1 -.-> domain__east_2eexample_2ecom
    cluster__west__c1 -.-> database__db_2eexample_2ecom_3a5432
    cluster__west__c1 -.-> realm__https_3a_2f_2fsso_2eexample_2ecom__tenants
    cluster__west__c1 -.-> domain__west_2eexample_2ecom
    cluster__west__c2 -.-> database__pg_2ewest_2eexample_2ecom_3a6432
"""

DOT_WEST = """\
// gatewayctl graph: stacks, clusters, gateways and what they share
digraph gateways {
    rankdir=LR;
    "stack__west" [label="stack west", shape=box, style="rounded,bold"];
    "cluster__west__c1" [label="cluster c1", shape=box];
    "gateway__west__web" [label="web", shape=box, style="rounded"];
    "cluster__west__c2" [label="cluster c2", shape=box];
    "gateway__west__batch" [label="batch", shape=box, style="rounded"];
    "database__db_2eexample_2ecom_3a5432" [label="PostgreSQL\\ndb.example.com:5432", shape=cylinder];
    "database__pg_2ewest_2eexample_2ecom_3a6432" [label="PostgreSQL\\npg.west.example.com:6432", shape=cylinder];
    "realm__https_3a_2f_2fsso_2eexample_2ecom__tenants" [label="Keycloak realm tenants\\nhttps://sso.example.com", shape=hexagon];
    "domain__west_2eexample_2ecom" [label="base domain\\nwest.example.com", shape=note];
    "stack__west" -> "cluster__west__c1";
    "cluster__west__c1" -> "gateway__west__web";
    "stack__west" -> "cluster__west__c2";
    "cluster__west__c2" -> "gateway__west__batch";
    "cluster__west__c1" -> "database__db_2eexample_2ecom_3a5432" [style=dashed];
    "cluster__west__c1" -> "realm__https_3a_2f_2fsso_2eexample_2ecom__tenants" [style=dashed];
    "cluster__west__c1" -> "domain__west_2eexample_2ecom" [style=dashed];
    "cluster__west__c2" -> "database__pg_2ewest_2eexample_2ecom_3a6432" [style=dashed];
}
"""  # noqa: E501 (the lines are the output)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


# --- the picture ------------------------------------------------------------------------------


def test_mermaid_draws_stacks_clusters_gateways_and_one_node_per_shared_server_and_realm(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = two_stacks(tmp_path / "p")
    assert run(capsys, "--root", str(root), "graph", "--all") == (0, MERMAID, "")


def test_dot_draws_the_named_stack_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = two_stacks(tmp_path / "p")
    assert run(capsys, "--root", str(root), "graph", "west", "--format", "dot") == (
        0,
        DOT_WEST,
        "",
    )


def test_several_stacks_are_drawn_sorted_and_once_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = two_stacks(tmp_path / "p")
    assert run(capsys, "--root", str(root), "graph", "west", "east", "west") == (0, MERMAID, "")


def test_the_picture_holds_no_secret(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = two_stacks(tmp_path / "p")
    for fmt in graph.FORMATS:
        code, out, _ = run(capsys, "--root", str(root), "graph", "--all", "--format", fmt)
        assert code == 0
        for secret in ("pw-east-secret", "pw-west-secret", "pw-w2-secret", "kc-east", "kc-west"):
            assert secret not in out
        assert "admin" not in out  # nor the admin user (database.adminUser: admin)


def test_the_same_files_in_another_order_give_the_same_bytes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outputs = []
    for reverse in (False, True):
        project = copy_project(tmp_path / f"p{reverse}", reverse=reverse)
        code, out, _ = run(capsys, "--root", str(project), "graph", "--all", "--format", "dot")
        assert code == 0
        outputs.append(out)
    assert outputs[0] == outputs[1]
    assert outputs[0].count(" -> ") == 27  # 4 clusters, 11 gateways, 12 shared uses


# --- ids and labels ---------------------------------------------------------------------------


def test_node_ids_escape_every_byte_outside_a_z_0_9() -> None:
    assert graph.node_id("cluster", "aws", "rosa-us-east-1") == "cluster__aws__rosa_2dus_2deast_2d1"
    assert graph.node_id("database", "Db_1:5432") == "database___44b_5f1_3a5432"
    assert graph.node_id("gateway", "a", "é") == "gateway__a___c3_a9"


@given(
    st.lists(st.text(max_size=12), min_size=1, max_size=3),
    st.lists(st.text(max_size=12), min_size=1, max_size=3),
)
def test_node_ids_are_safe_and_distinct_names_never_share_one(a: list[str], b: list[str]) -> None:
    first, second = graph.node_id("stack", *a), graph.node_id("stack", *b)
    assert re.fullmatch(r"[a-z][a-z0-9_]*", first)
    assert (first == second) == (a == b)


def test_mermaid_labels_cannot_close_the_quote_or_the_shape_or_carry_html() -> None:
    label = graph.mermaid_label(['a "b"] #c', "<script>&"])
    assert label == '"a #34;b#34;#93; #35;c<br>#60;script#62;#38;"'


@given(st.lists(st.text(max_size=20), min_size=1, max_size=3))
def test_a_mermaid_label_is_only_safe_characters_and_entity_codes(lines: list[str]) -> None:
    body = graph.mermaid_label(lines)[1:-1].replace("<br>", "")
    assert re.fullmatch(r"([A-Za-z0-9 .:/_@-]|#[0-9]+;)*", body)


def test_dot_strings_escape_quotes_backslashes_and_control_characters() -> None:
    assert graph.dot_string('a"b\\n\tc') == '"a\\"b\\\\n c"'


def test_is_graph_knows_both_formats_by_their_first_line() -> None:
    assert graph.is_graph(graph.MERMAID_HEADER + "\nflowchart LR\n")
    assert graph.is_graph(graph.DOT_HEADER + "\ndigraph gateways {\n}\n")
    assert not graph.is_graph("flowchart LR\n" + graph.MERMAID_HEADER + "\n")
    assert not graph.is_graph(graph.MERMAID_HEADER)


# --- input problems: what validate reports ----------------------------------------------------


def broken(root: Path) -> Path:
    """``two_stacks`` with a bad declaration, a gateway no person can sign in to, and an
    unknown cluster."""
    two_stacks(root)
    write_gateway(root, "bad", {"cluster": "c9", "replicas": "many"}, stack="east")
    write_gateway(root, "nobody", {"cluster": "c2", "exposure": {"enabled": False}}, stack="west")
    return root


@pytest.mark.parametrize("selection", [["--all"], ["east"], ["west", "east"]])
def test_bad_input_exits_2_with_the_problems_validate_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], selection: list[str]
) -> None:
    root = broken(tmp_path / "p")
    code, out, err = run(capsys, "--root", str(root), "graph", *selection)
    assert (code, out) == (2, "")
    validate_args = selection if len(selection) == 1 else ["--all"]
    assert run(capsys, "--root", str(root), "validate", *validate_args)[::2] == (2, err)
    assert "error: gateways/east/bad.yaml:6:12: spec.cluster: unknown cluster 'c9'" in err


def test_a_gateway_no_one_signs_in_to_is_refused_as_validate_refuses_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = two_stacks(tmp_path / "p")
    write_gateway(root, "nobody", {"cluster": "c2", "exposure": {"enabled": False}}, stack="west")
    code, out, err = run(capsys, "--root", str(root), "graph", "west")
    assert (code, out) == (2, "")
    assert err.startswith(
        "error: gateways/west/nobody.yaml:5:1: spec.signIn: no person can sign in"
    )
    assert err.endswith("\n1 problem(s); nothing written\n")
    assert run(capsys, "--root", str(root), "validate", "west")[::2] == (2, err)


def test_unknown_stacks_are_each_reported(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "graph", "gcp", "local", "azure") == (
        2,
        "",
        "error: Pulumi.azure.yaml: no such stack; the stacks here are aws, ibm, local\n"
        "error: Pulumi.gcp.yaml: no such stack; the stacks here are aws, ibm, local\n"
        "2 problem(s); nothing written\n",
    )


@pytest.mark.parametrize("args", [[], ["local", "--all"]])
def test_name_stacks_or_all_but_not_both(
    capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    assert run(capsys, "graph", *args) == (
        2,
        "",
        "error: name one or more STACKs or pass --all\n",
    )


# --- --output ---------------------------------------------------------------------------------


def test_output_writes_the_file_and_overwrites_only_a_graph(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = two_stacks(tmp_path / "p")
    out = tmp_path / "picture.dot"
    assert run(capsys, "--root", str(root), "graph", "west", "--format", "dot", "-o", str(out)) == (
        0,
        f"{out}\n",
        "",
    )
    assert out.read_text(encoding="utf-8") == DOT_WEST
    # Its own graph is overwritten, in either format.
    assert run(capsys, "--root", str(root), "graph", "--all", "--output", str(out))[0] == 0
    assert out.read_text(encoding="utf-8") == MERMAID
    other = write_text(tmp_path, "notes.md", "my notes\n")
    assert run(capsys, "--root", str(root), "graph", "--all", "-o", str(other)) == (
        2,
        "",
        f"error: {other}: --output: exists and is not a graph this tool wrote; it is never"
        " overwritten: remove it or choose a new path\n1 problem(s); nothing written\n",
    )
    assert other.read_text(encoding="utf-8") == "my notes\n"


# --- the README's picture ---------------------------------------------------------------------


def test_the_readme_embeds_the_mermaid_graph_of_the_committed_stacks(
    capsys: pytest.CaptureFixture[str],
) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```mermaid\n(.*?)^```$", readme, flags=re.MULTILINE | re.DOTALL)
    code, out, err = run(capsys, "graph", "--all")
    assert (code, err) == (0, "")
    assert blocks == [out], "run: python -m gatewayctl graph --all, and paste it into README.md"


def test_the_help_lists_graph() -> None:
    assert "    graph             draw stacks, clusters, gateways and the database" in (
        cli.parser().format_help()
    )

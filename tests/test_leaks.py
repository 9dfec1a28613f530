"""No leaks: secret inputs and generated secrets never surface.

Sentinel values go into every secret input (each cluster's ``dbAdminPassword`` and
``kubeconfig``) of a generated project and of copies of the committed stacks; the sentinels
must appear nowhere in what the CLI writes (manifests, ``plan.json``) or prints (render and
validate, valid or not), in any of the forms a value could take on the way (raw,
JSON-escaped, URL-quoted, base64), nor in the ``diff`` report. Inside the recording they may
only travel wrapped as Pulumi secrets. Generated secrets (private keys, random passwords and
bytes) are secret outputs, and their placeholder values appear in no rendered file.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components import tokens
from components.identity_types import server_key
from gatewayctl.diff.compare import compare
from gatewayctl.diff.report import build_report
from gatewayctl.diff.sides import Side, render_head, stack_secrets
from gatewayctl.engine import render
from gatewayctl.engine.offline import Recording, is_secret
from gatewayctl.resolve import preparation
from gatewayctl.resolve.stack import load_stack
from tests.builders import (
    CONFIG_FILE,
    DECLARATIONS,
    PREFIX,
    STACK,
    WEST_DOMAIN,
    cluster,
    copy_stack,
    edited_config,
    gateway_api_cluster,
    write_gateway,
    write_secrets_text,
    write_stack,
)
from tests.hostile_helpers import leaks, render_cli, tree, unlocated, validate_cli
from tests.project_strategies import Project, valid_projects
from tests.strategies import HOSTILE
from tests.support import STACKS

PRIVATE_KEY = "tls:index/privateKey:PrivateKey"
RANDOM_PASSWORD = "random:index/randomPassword:RandomPassword"
RANDOM_BYTES = "random:index/randomBytes:RandomBytes"
GENERATED_SECRETS = {
    PRIVATE_KEY: ("privateKeyOpenssh", "privateKeyPem", "privateKeyPemPkcs8"),
    RANDOM_PASSWORD: ("result",),
    RANDOM_BYTES: ("base64", "hex"),
}


def password(cluster_name: str) -> str:
    # ':', '/', '+', '@' and '%' make the raw, JSON, URL-quoted and base64 forms all differ.
    return f"S3NTINEL-pw-{cluster_name}@x:y/z+%w"


def token(cluster_name: str) -> str:
    return f"S3NTINEL-token-{cluster_name}-q9"


def kubeconfig(cluster_name: str) -> str:
    return (
        "apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n"
        f"    token: {token(cluster_name)}\n"
    )


def keycloak_secret(cluster_name: str) -> str:
    return f"S3NTINEL-kc-{cluster_name}#k/%+="


def sentinel_secrets(clusters: list[str]) -> dict[str, dict[str, str]]:
    return {
        c: {
            "dbAdminPassword": password(c),
            "kubeconfig": kubeconfig(c),
            "keycloakAdminClientSecret": keycloak_secret(c),
        }
        for c in clusters
    }


def sentinels(clusters: list[str]) -> list[str]:
    return sorted(
        {s for c in clusters for s in (password(c), token(c), kubeconfig(c), keycloak_secret(c))}
    )


def keycloak_providers(root: Path, stack: str) -> dict[str, str]:
    """Keycloak provider name -> the cluster whose admin client secret it logs in with (the
    first, by name, of the clusters naming its server)."""
    found: dict[str, str] = {}
    for name, config in sorted(load_stack(root, stack).config.clusters.items()):
        server = config.identity.keycloak
        if server is not None:
            found.setdefault(server_key(server.url, server.realm, server.admin_client_id), name)
    return found


def strings(value: Any, secret: bool = False) -> Iterator[tuple[str, bool]]:
    """Every string (keys included) inside ``value`` and whether it sits inside a secret."""
    if is_secret(value):
        yield from strings(value["value"], True)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield str(key), secret
            yield from strings(item, secret)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item, secret)
    elif isinstance(value, str):
        yield value, secret


def carried(recording: Recording, values: list[str]) -> tuple[set[str], list[str]]:
    """Which ``values`` reach the recording, and where one travels in the clear."""
    found: set[str] = set()
    clear = []
    for resource in recording.resources.values():
        for where, props in (("inputs", resource.inputs), ("outputs", resource.outputs)):
            for text, secret in strings(props):
                for value in values:
                    if value in text:
                        found.add(value)
                        if not secret:
                            clear.append(f"{resource.name} {where}: {value}")
    return found, clear


def generated(recording: Recording) -> list[str]:
    """The placeholder values of every generated secret output."""
    return sorted(
        resource.outputs[key]["value"]
        for type_, keys in GENERATED_SECRETS.items()
        for resource in recording.of_type(type_)
        for key in keys
    )


def cli_texts(root: Path, stack: str, out: Path) -> tuple[int, list[str | bytes]]:
    """Render (with its summary) and validate; exit code of the render and every text seen."""
    rendered = render_cli(root, out, stack=stack, quiet=False)
    validated = validate_cli(root, stack=stack)
    written = list(tree(out).values()) if out.exists() else []
    assert rendered.code == validated.code, (rendered, validated)
    return rendered.code, [rendered.out, rendered.err, validated.out, validated.err, *written]


# --- projects with sentinels ----------------------------------------------------------------


def keycloak(url: str) -> dict[str, Any]:
    return {"keycloak": {"url": url, "realm": "r", "adminClientId": "admin"}}


WEST = gateway_api_cluster(
    baseDomain=WEST_DOMAIN, identity=keycloak("https://sso-west.example.com")
)
EAST = cluster(baseDomain="east.example.com", identity=keycloak("https://sso-east.example.com"))


def generated_project(root: Path) -> list[str]:
    """Two clusters (route, gateway-api), three gateways, sentinels in every secret input."""
    clusters = {"east": EAST, "west": WEST}
    write_stack(root, clusters=clusters, secrets=sentinel_secrets(sorted(clusters)))
    write_gateway(root, "alpha", {"cluster": "east"})
    write_gateway(root, "bravo", {"cluster": "west", "deletionPolicy": "Delete"})
    write_gateway(root, "charlie", {"cluster": "east", "exposure": {"enabled": False}})
    return sorted(clusters)


def committed_copy(root: Path, stack: str) -> list[str]:
    """A committed stack whose secrets (``secure:`` or plaintext) are replaced by sentinels."""
    copy_stack(stack, root)
    with edited_config(root, stack) as config:
        clusters = sorted(config[f"{PREFIX}clusters"])
        assert set(config[f"{PREFIX}clusterSecrets"]) == set(clusters)
        config[f"{PREFIX}clusterSecrets"] = sentinel_secrets(clusters)
    return clusters


def project(kind: str, root: Path) -> tuple[str, list[str]]:
    """(stack, clusters) of the project ``kind`` written into ``root``."""
    if kind == "generated":
        return STACK, generated_project(root)
    return kind, committed_copy(root, kind)


KINDS = ("generated", *STACKS)


# --- secret inputs --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_secret_inputs_reach_the_program_only_as_secrets(tmp_path: Path, kind: str) -> None:
    stack, clusters = project(kind, tmp_path)
    recording = render.execute(preparation.prepare(tmp_path, stack)).recording

    servers = keycloak_providers(tmp_path, stack)
    found, clear = carried(
        recording,
        [password(c) for c in clusters]
        + [token(c) for c in clusters]
        + [keycloak_secret(c) for c in clusters],
    )
    # Each sentinel does reach its providers (so the assertions below are not vacuous) ...
    assert servers
    assert found == {password(c) for c in clusters} | {token(c) for c in clusters} | {
        keycloak_secret(c) for c in servers.values()
    }
    # ... and travels only inside secret wrappers.
    assert clear == []
    providers = {
        (r.type, r.name): sorted(k for k, v in r.inputs.items() if is_secret(v))
        for r in recording.resources.values()
        if r.type.startswith("pulumi:providers:")
    }
    gateways = [r.name for r in recording.of_type(tokens.GATEWAY)]
    assert gateways
    assert providers == {
        **{("pulumi:providers:kubernetes", f"{c}-k8s"): ["kubeconfig"] for c in clusters},
        **{("pulumi:providers:postgresql", f"{c}-postgres"): ["password"] for c in clusters},
        **{("pulumi:providers:keycloak", name): ["clientSecret"] for name in servers},
        # Each tenant's owner provider logs in with the tenant's generated password.
        **{
            ("pulumi:providers:postgresql", f"{g}-database-db-owner"): ["password"]
            for g in gateways
        },
    }


@pytest.mark.parametrize("kind", KINDS)
def test_secret_inputs_appear_in_nothing_written_or_printed(tmp_path: Path, kind: str) -> None:
    stack, clusters = project(kind, tmp_path / "project")

    code, texts = cli_texts(tmp_path / "project", stack, tmp_path / "out")

    assert code == 0
    assert any(name.endswith("plan.json") for name in tree(tmp_path / "out"))
    assert leaks(texts, sentinels(clusters)) == []


@settings(HOSTILE, max_examples=25)
@given(base=valid_projects(), suffix=st.text(min_size=1, max_size=20))
def test_any_secret_value_stays_out_of_a_generated_render(base: Project, suffix: str) -> None:
    values = {c: (f"S3NTINEL-{c}-{suffix}", f"S3NTINEL-kube-{c}-{suffix}") for c in base.clusters}
    base.secrets = {
        c: {"dbAdminPassword": pw, "kubeconfig": kube} for c, (pw, kube) in values.items()
    }
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory) / "project"
        base.write(root)
        code, texts = cli_texts(root, STACK, Path(directory) / "out")

    assert code == 0
    assert leaks(texts, [v for pair in values.values() for v in pair]) == []


# Text of the clusterSecrets entry of cluster c1 in Pulumi.test.yaml, each broken near the
# secret. SENTINEL stands for the secret value.
BROKEN_NEAR_THE_SECRET = {
    "int": "    c1:\n      dbAdminPassword: 12345678987654321\n",
    "float": "    c1:\n      dbAdminPassword: 1234.5678987654321\n",
    "mapping-value": "    c1:\n      dbAdminPassword: {value: SENTINEL}\n",
    "mapping-key": "    c1:\n      dbAdminPassword: {SENTINEL: 1}\n",
    "list": "    c1:\n      dbAdminPassword: [SENTINEL]\n",
    "secure-and-more": "    c1:\n      dbAdminPassword: {secure: SENTINEL, extra: 1}\n",
    "unknown-field": "    c1:\n      dbAdminPassword: pw\n      passwrod: SENTINEL\n",
    "entry-is-the-password": "    c1: SENTINEL\n",
    "kubeconfig-mapping": (
        "    c1:\n      dbAdminPassword: pw\n      kubeconfig:\n        apiVersion: v1\n"
        "        users:\n        - user: {token: SENTINEL}\n"
    ),
    "kubeconfig-list": "    c1:\n      dbAdminPassword: pw\n      kubeconfig: [SENTINEL]\n",
    "unknown-cluster": (
        "    c1:\n      dbAdminPassword: pw\n    c9:\n      dbAdminPassword: SENTINEL\n"
    ),
    "duplicate-key": "    c1:\n      dbAdminPassword: SENTINEL\n      dbAdminPassword: SENTINEL\n",
    "mapping-in-scalar": "    c1:\n      dbAdminPassword: SENTINEL: x\n",
    "unclosed-quote": '    c1:\n      dbAdminPassword: "SENTINEL\n',
    "unknown-escape": '    c1:\n      dbAdminPassword: "SENTINEL\\q"\n',
    "leading-percent": "    c1:\n      dbAdminPassword: %SENTINEL\n",
    "leading-at": "    c1:\n      dbAdminPassword: @SENTINEL\n",
    "leading-backtick": "    c1:\n      dbAdminPassword: `SENTINEL\n",
    "leading-ampersand": "    c1:\n      dbAdminPassword: &SENTINEL\n",
    "control-character": "    c1:\n      dbAdminPassword: SENTINEL\x07\n",
    "tab": "    c1:\n\tdbAdminPassword: SENTINEL\n",
}
LEAKING_YAML_ERRORS = {
    # PyYAML's own messages quote the token: read_yaml_mapping prints them verbatim.
    "leading-bang": "    c1:\n      dbAdminPassword: !SENTINEL\n",
    "leading-asterisk": "    c1:\n      dbAdminPassword: *SENTINEL\n",
}
SENTINEL = "S3NTINEL98765"


def broken_secrets_project(root: Path, entry: str, *, broken_declaration: bool) -> None:
    write_secrets_text(root, entry.replace("SENTINEL", SENTINEL))
    # signIn: validate would also report, with the rest, that no one signs in (issue 21).
    spec = {"replicas": "many"} if broken_declaration else {"signIn": "none"}
    write_gateway(root, "team-a", spec)


def assert_broken_without_leak(root: Path, out: Path, secret: str) -> None:
    rendered = render_cli(root, out, quiet=False)
    validated = validate_cli(root)

    assert (rendered.code, validated.code) == (2, 2)
    assert not out.exists()
    # The shape of the report is test_hostile's business; here: it is a report, about this file.
    assert unlocated(rendered.err).startswith(f"error: {CONFIG_FILE}: ")
    assert rendered.err.endswith(" problem(s); nothing written\n")
    assert rendered.err == validated.err
    assert leaks([rendered.printed, validated.printed], [secret]) == []


@pytest.mark.parametrize("broken_declaration", [False, True], ids=["alone", "with-declaration"])
@pytest.mark.parametrize(
    "entry", list(BROKEN_NEAR_THE_SECRET.values()), ids=list(BROKEN_NEAR_THE_SECRET)
)
def test_a_problem_near_a_secret_does_not_print_it(
    tmp_path: Path, entry: str, broken_declaration: bool
) -> None:
    secret = "12345678987654321" if "12345678987654321" in entry else SENTINEL
    secret = "1234.5678987654321" if "1234.5678987654321" in entry else secret
    broken_secrets_project(tmp_path, entry, broken_declaration=broken_declaration)

    assert_broken_without_leak(tmp_path, tmp_path / "out", secret)


@pytest.mark.parametrize("entry", list(LEAKING_YAML_ERRORS.values()), ids=list(LEAKING_YAML_ERRORS))
def test_a_yaml_error_in_a_secret_does_not_print_it(tmp_path: Path, entry: str) -> None:
    broken_secrets_project(tmp_path, entry, broken_declaration=False)

    assert_broken_without_leak(tmp_path, tmp_path / "out", SENTINEL)


def test_a_config_problem_elsewhere_does_not_print_the_secrets(tmp_path: Path) -> None:
    clusters = {"east": cluster(baseDomain="east.example.com", ingress={"mode": "bogus"})}
    write_stack(tmp_path, clusters=clusters, secrets=sentinel_secrets(["east"]))
    write_gateway(tmp_path, "team-a", {"replicas": 0})

    rendered = render_cli(tmp_path, tmp_path / "out", quiet=False)

    assert rendered.code == 2
    assert f"{PREFIX}clusters.east.ingress.mode" in rendered.err
    assert leaks([rendered.printed], sentinels(["east"])) == []


def test_diff_report_holds_no_secret_even_unscrubbed(tmp_path: Path) -> None:
    # `python -m gatewayctl diff` renders the base ref in a git worktree; no git here, so the report
    # is built from the same functions over two in-process renders: a base, and a head that
    # adds, removes and changes gateways and rotates every secret.
    base_root, head_root = tmp_path / "base", tmp_path / "head"
    clusters = generated_project(base_root)
    generated_project(head_root)
    rotated = {
        c: {
            "dbAdminPassword": password(f"{c}-rotated"),
            "kubeconfig": kubeconfig(f"{c}-rotated"),
            "keycloakAdminClientSecret": keycloak_secret(f"{c}-rotated"),
        }
        for c in clusters
    }
    write_stack(head_root, clusters={"east": EAST, "west": WEST}, secrets=rotated)
    (head_root / DECLARATIONS / "charlie.yaml").unlink()
    write_gateway(head_root, "alpha", {"cluster": "east", "replicas": 3})
    write_gateway(head_root, "delta", {"cluster": "west"})
    write_gateway(head_root, "bravo", {"cluster": "west", "access": {"users": ["user:erin"]}})
    secrets = sentinels(clusters) + sentinels([f"{c}-rotated" for c in clusters])

    base_render = render.execute(preparation.prepare(base_root, STACK))
    base = Side(files=base_render.files, secrets=stack_secrets(base_root, STACK))
    head = render_head(preparation.prepare(head_root, STACK))
    head_recording = render.execute(preparation.prepare(head_root, STACK)).recording
    secrets += generated(base_render.recording) + generated(head_recording)
    change = compare(STACK, base, head)
    unscrubbed = compare(
        STACK,
        dataclasses.replace(base, secrets=frozenset()),
        dataclasses.replace(head, secrets=frozenset()),
    )
    reports = [
        build_report([stack], base_label="base", command="diff") for stack in (change, unscrubbed)
    ]

    # The scrub list (a second guard) does hold the passwords ...
    assert {password(c) for c in clusters} <= base.secrets
    assert {password(f"{c}-rotated") for c in clusters} <= head.secrets
    assert [(g.name, g.status) for g in change.gateways] == [
        ("alpha", "changed"),
        ("bravo", "changed"),  # user:erin gains the user role
        ("charlie", "removed"),
        ("delta", "added"),
    ]
    assert all("delta" in report and "charlie" in report for report in reports)
    assert all("- `bravo`: `user:erin` **gains** user" in report for report in reports)
    # ... but the report is clean without it too: the render already redacted every secret.
    assert leaks(reports, secrets) == []


# --- generated secrets ----------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_generated_secrets_are_secret_outputs(tmp_path: Path, kind: str) -> None:
    stack, _ = project(kind, tmp_path)
    result = render.execute(preparation.prepare(tmp_path, stack))
    recording = result.recording
    gateways = len(result.gateways)

    # Random bytes: the key-encryption key of each gateway on the default driver, and the
    # cookie secret of each web console.
    kek = sum(g.credentials.driver == "kek" for g in result.prepared.loaded.gateways)
    consoles = sum(g.args.console is not None for g in result.prepared.loaded.gateways)
    assert gateways >= 3
    assert kek >= 2
    assert [len(recording.of_type(t)) for t in GENERATED_SECRETS] == [
        4 * gateways,
        gateways,
        kek + consoles,
    ]
    for type_, keys in GENERATED_SECRETS.items():
        for resource in recording.of_type(type_):
            secret = sorted(k for k, v in resource.outputs.items() if is_secret(v))
            assert set(keys) <= set(secret), (resource.name, secret)
            assert all(isinstance(resource.outputs[k]["value"], str) for k in keys)


@pytest.mark.parametrize("kind", KINDS)
def test_generated_secrets_travel_as_secrets_and_are_never_written(
    tmp_path: Path, kind: str
) -> None:
    stack, _ = project(kind, tmp_path / "project")
    recording = render.execute(preparation.prepare(tmp_path / "project", stack)).recording
    values = generated(recording)

    found, clear = carried(recording, values)
    assert found == set(values)
    assert clear == []
    code, texts = cli_texts(tmp_path / "project", stack, tmp_path / "out")
    assert code == 0
    assert leaks(texts, values) == []

"""Hostile YAML and misplaced problems, through the real CLI.

YAML scalars that crash or leak: a value YAML resolves to a type but cannot convert is a
problem of its field with its line; no message quotes a secret, nor any value whole; a file
too large, too deep or with too many nodes is refused before it costs anything.

Problems named in the wrong place or not at all: a registry mirror's problem is the stack
file's; a malformed ``clusters`` value is one problem; a config key in another case of the
project's namespace is reported; path fields (``declarationsDir``, ``sslRootCert``) stay
inside the project and never reach the OS as something it refuses.

Every case runs ``python -m gatewayctl render`` and ``validate`` in-process: exit 2, the same
well-formed problem lines from both, nothing written.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.images import (
    DEFAULT_GATEWAY_IMAGE,
    DEFAULT_SANDBOX_IMAGE,
    DEFAULT_SUPERVISOR_IMAGE,
)
from gatewayctl.errors import ELLIPSIS, QUOTED_LIMIT
from gatewayctl.inputs.yamlfile import MAX_DEPTH, MAX_FILE_BYTES, MAX_NODES
from tests.builders import (
    CONFIG_FILE,
    DECLARATIONS,
    PREFIX,
    cluster,
    head,
    one_cluster,
    write_gateway,
    write_secrets_text,
    write_stack,
    write_text,
)
from tests.hostile_helpers import leaks, render_cli, reported_problems, unlocated, validate_cli
from tests.strategies import (
    HOSTILE,
    JUNK_SCALARS,
    MARKED_SECRETS,
    PREFIX_CASES,
    SECRET_MARKER,
    YAML_TAGS,
)

DECLARATION = f"{DECLARATIONS}/team-a.yaml"
PATHS = [CONFIG_FILE, DECLARATION, DECLARATIONS]


QUIET = {"signIn": "none"}
"""A gateway no person signs in to, said on purpose: validate reports the others with the
rest of a stack's problems (issue 21), and these tests compare validate with render."""


def refused(root: Path, out: Path, *, located: bool = False) -> list[str]:
    """Render and validate ``root``: both exit 2 with the same problems and write nothing.
    Returns the problem lines, without ``error: `` and the summary, and without where each
    problem is unless ``located``."""
    rendered = render_cli(root, out, quiet=False)
    validated = validate_cli(root)
    assert (rendered.code, validated.code) == (2, 2), (rendered, validated)
    assert not out.exists()
    assert rendered.out == validated.out == ""
    assert rendered.err == validated.err
    reported_problems(rendered.err, PATHS)  # the shape: one problem a line, then the summary
    lines = [line.removeprefix("error: ") for line in rendered.err.splitlines()[:-1]]
    return lines if located else [unlocated(line) for line in lines]


def declaration_with(spec_text: str) -> str:
    """The team-a declaration whose ``spec:`` block is ``spec_text`` (from line 6)."""
    return head("team-a") + "spec:\n" + spec_text


# --- values that do not convert -------------------------------------------------------------

IMPLICIT = "in YAML but is not a valid one; quote it to make it a string"


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("!!int ten", "tagged !!int but is not an integer"),
        ("!!int 0x", "tagged !!int but is not an integer"),
        ("!!float many", "tagged !!float but is not a floating-point number"),
        ("!!bool maybe", "tagged !!bool but is not a boolean"),
        ("!!timestamp garbage", "tagged !!timestamp but is not a date or time"),
        ("!!timestamp 2026-02-30", "tagged !!timestamp but is not a date or time"),
        ("!!binary a", "tagged !!binary but is not base64 data"),
        ("2026-02-30", f"reads as a date or time {IMPLICIT}"),
        ("2026-13-01", f"reads as a date or time {IMPLICIT}"),
        ("2026-01-01 25:00:00", f"reads as a date or time {IMPLICIT}"),
        ("0x_", f"reads as an integer {IMPLICIT}"),
        ("0b_", f"reads as an integer {IMPLICIT}"),
    ],
)
def test_a_scalar_that_does_not_convert_is_a_problem_of_its_field_and_line(
    tmp_path: Path, value: str, problem: str
) -> None:
    write_stack(tmp_path)
    write_text(tmp_path, DECLARATION, declaration_with(f"  replicas: {value}\n"))

    lines = refused(tmp_path, tmp_path / "out", located=True)

    # At the value: `  replicas: ` is 12 characters.
    assert lines == [f"{DECLARATION}:6:13: spec.replicas: invalid value: {problem}"]


def test_a_key_that_does_not_convert_names_its_mapping(tmp_path: Path) -> None:
    write_stack(tmp_path)
    write_text(tmp_path, DECLARATION, declaration_with("  replicas: 1\n  !!int ten: 1\n"))

    lines = refused(tmp_path, tmp_path / "out", located=True)

    assert lines == [f"{DECLARATION}:7:3: spec: invalid key: tagged !!int but is not an integer"]


@pytest.mark.parametrize(
    ("value", "problem", "column"),
    [
        ("!!map [a]", "invalid YAML: expected a mapping, found a sequence", 13),
        ("!!omap [a]", "invalid YAML: expected a mapping of length 1", 21),  # at the item
        ("!!set [a]", "invalid YAML: expected a mapping node", 13),
    ],
)
def test_a_tag_on_the_wrong_kind_of_node_is_invalid_yaml(
    tmp_path: Path, value: str, problem: str, column: int
) -> None:
    write_stack(tmp_path)
    write_text(tmp_path, DECLARATION, declaration_with(f"  replicas: {value}\n"))

    lines = refused(tmp_path, tmp_path / "out", located=True)

    assert [line.split(": ", 1) for line in lines] == [[f"{DECLARATION}:6:{column}", problem]]


FIELDS = (
    "replicas",
    "namespace",
    "cluster",
    "deletionPolicy",
    "exposure:\n    host",
    "exposure:\n    enabled",
    "images:\n    gateway",
)


@settings(HOSTILE, max_examples=60)
@given(field=st.sampled_from(FIELDS), tag=st.sampled_from(YAML_TAGS), junk=JUNK_SCALARS)
def test_any_tag_on_any_junk_scalar_is_a_clean_result(field: str, tag: str, junk: str) -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory) / "project"
        write_stack(root)
        # No Keycloak on the built cluster: the gateway says no one signs in (validate).
        spec = f"  {field}: {tag}{junk}\n  signIn: none\n"
        write_text(root, DECLARATION, declaration_with(spec))
        rendered = render_cli(root, Path(directory) / "out")
        validated = validate_cli(root)
        written = (Path(directory) / "out").exists()

    assert rendered.code in (0, 2), rendered
    assert validated.code == rendered.code
    assert "Traceback" not in rendered.err + validated.err
    if rendered.code == 2:
        assert not written
        problems = reported_problems(rendered.err, PATHS)
        assert rendered.err == validated.err
        name = field.replace(":\n    ", ".")
        # Each problem is the field's, or the file's when YAML cannot read it at all.
        assert all(
            p.names(DECLARATION, f"spec.{name}") or (p.names(DECLARATION, "") and p.location != "")
            for p in problems
        ), rendered.err


# --- secrets are never quoted ---------------------------------------------------------------


def secrets_project(root: Path, entry: str) -> int:
    """A valid project whose cluster c1 has the ``clusterSecrets`` entry ``entry`` (text);
    returns the line number of the entry's first line."""
    first = write_secrets_text(root, "    c1:\n" + entry) + 1
    write_gateway(root, "team-a", {"signIn": "none"})  # no Keycloak here (validate)
    return first


def assert_not_printed(lines: list[str], secret: str) -> None:
    printed = "\n".join(lines)
    assert SECRET_MARKER.casefold() not in printed.casefold(), printed
    assert leaks([printed], [secret]) == []


@pytest.mark.parametrize(
    ("entry", "secret", "line"),  # the line: <entry>'s or <next>'s, then the column
    [
        (
            "      dbAdminPassword: !!int Q7zxPassw0rd\n",
            "Q7zxPassw0rd",
            f"<entry>:24: {PREFIX}clusterSecrets.c1.dbAdminPassword: invalid value: tagged"
            " !!int but is not an integer",
        ),
        (
            "      dbAdminPassword: !!float Q7zxPassw0rd\n",
            "Q7zxPassw0rd",
            f"<entry>:24: {PREFIX}clusterSecrets.c1.dbAdminPassword: invalid value: tagged"
            " !!float but is not a floating-point number",
        ),
        (
            "      dbAdminPassword: !!timestamp Q7zx-2026\n",
            "Q7zx-2026",
            f"<entry>:24: {PREFIX}clusterSecrets.c1.dbAdminPassword: invalid value: tagged"
            " !!timestamp but is not a date or time",
        ),
        (
            "      dbAdminPassword: !Q7zx!secret\n",
            "!Q7zx!secret",
            "<entry>:24: invalid YAML: undefined tag handle: a value starting with '!' must be"
            " quoted",
        ),
        (
            "      dbAdminPassword: {Q7zxKey: 1, Q7zxKey: 2}\n",
            "Q7zxKey",
            "<entry>:37: invalid YAML: duplicate key",  # the second key
        ),
        (
            "      kubeconfig:\n        users: [{token: !!bool Q7zxToken}]\n",
            "Q7zxToken",
            f"<next>:25: {PREFIX}clusterSecrets.c1.kubeconfig: invalid value: tagged !!bool but"
            " is not a boolean",
        ),
        (
            "      dbAdminPassword: {secure: !!int Q7zxCipher}\n",
            "Q7zxCipher",
            f"<entry>:33: {PREFIX}clusterSecrets.c1.dbAdminPassword: invalid value: tagged !!int"
            " but is not an integer",
        ),
    ],
    ids=[
        "int",
        "float-lowercases",
        "timestamp",
        "undefined-handle",
        "duplicate-key-in-value",
        "kubeconfig-inner-key",
        "secure",
    ],
)
def test_a_secret_that_does_not_convert_is_named_not_quoted(
    tmp_path: Path, entry: str, secret: str, line: str
) -> None:
    first = secrets_project(tmp_path, entry)

    lines = refused(tmp_path, tmp_path / "out", located=True)

    expected = line.replace("<entry>", str(first)).replace("<next>", str(first + 1))
    assert lines == [f"{CONFIG_FILE}:{expected}"]
    assert_not_printed(lines, secret)


def test_a_duplicate_secret_name_is_named(tmp_path: Path) -> None:
    # Keys down to the secret's name are config structure, not secret: they are quoted.
    first = secrets_project(tmp_path, "      dbAdminPassword: a\n      dbAdminPassword: b\n")

    lines = refused(tmp_path, tmp_path / "out", located=True)

    assert lines == [f"{CONFIG_FILE}:{first + 1}:7: invalid YAML: duplicate key 'dbAdminPassword'"]


SECRET_FORMS = (
    "!!int {}",
    "!!float {}",
    "!!bool {}",
    "!!timestamp {}",
    "!!binary {}",
    "!!null {}",
    "!!set {}",
    "!!omap {}",
    "!!pairs {}",
    "!!seq {}",
    "!!map {}",
    "!{} x",
    "!<{}> x",
    "!!{} x",
    "!{}!tail",
    "&{} x",
    "*{}",
    "{}",
    "[{}]",
    "{{{}: 1}}",
    "{{{}: 1, {}: 2}}",
    '"{}',
    "'{}",
)


@settings(HOSTILE, max_examples=80)
@given(
    form=st.sampled_from(SECRET_FORMS),
    secret=MARKED_SECRETS,
    name=st.sampled_from(["dbAdminPassword", "kubeconfig"]),
    secure=st.booleans(),
)
def test_no_tag_or_junk_around_a_secret_prints_it(
    form: str, secret: str, name: str, secure: bool
) -> None:
    value = form.replace("{}", secret).replace("{{", "{").replace("}}", "}")
    if secure:
        value = f"{{secure: {value}}}"
    entry = f"      dbAdminPassword: pw\n      {name}: {value}\n"
    if name == "dbAdminPassword":
        entry = f"      dbAdminPassword: {value}\n"
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory) / "project"
        secrets_project(root, entry)
        rendered = render_cli(root, Path(directory) / "out", quiet=False)
        validated = validate_cli(root)
        written = (Path(directory) / "out").exists()

    # Some forms make a value that is a string after all ('"x' closes at the line's end...):
    # then the stack is valid, and a valid render prints no secret either.
    assert rendered.code in (0, 2), rendered
    assert validated.code == rendered.code
    assert written == (rendered.code == 0)
    printed = rendered.out + rendered.err + validated.out + validated.err
    assert "Traceback" not in printed
    assert SECRET_MARKER.casefold() not in printed.casefold(), printed
    assert leaks([printed], [secret]) == []


# --- size, depth and node limits ------------------------------------------------------------


def padded(text: str, size: int) -> str:
    """``text`` followed by a comment that makes it exactly ``size`` bytes."""
    filler = size - len(text.encode()) - len("#\n")
    assert filler >= 0
    return text + "#" + "c" * filler + "\n"


@pytest.mark.parametrize("file", [DECLARATION, CONFIG_FILE])
def test_a_file_over_the_size_limit_is_refused_unread(tmp_path: Path, file: str) -> None:
    write_stack(tmp_path)
    write_gateway(tmp_path, "team-a")
    write_text(tmp_path, file, padded((tmp_path / file).read_text(), MAX_FILE_BYTES + 1))

    lines = refused(tmp_path, tmp_path / "out")

    assert lines[0] == (
        f"{file}: is larger than 1,048,576 bytes (1 MiB), the most a declaration or a stack file"
        " may hold; it is not read"
    )
    assert len(lines) == 1


def test_a_file_at_the_size_limit_is_read(tmp_path: Path) -> None:
    write_stack(tmp_path)
    write_gateway(tmp_path, "team-a", {"signIn": "none"})  # no Keycloak here (validate)
    write_text(tmp_path, DECLARATION, padded((tmp_path / DECLARATION).read_text(), MAX_FILE_BYTES))

    result = validate_cli(tmp_path)

    assert result.code == 0, result
    assert result.out == f"{CONFIG_FILE}: ok (1 gateway, 1 cluster)\n"
    assert all(line.startswith("note: ") for line in result.err.splitlines())  # no error


DEEP = 5_000


@pytest.mark.parametrize(
    ("file", "text", "where"),
    [
        # The first node too deep: the 31st list (under the file's mapping and spec's), ...
        (DECLARATION, declaration_with("  x: " + "[" * DEEP + "]" * DEEP + "\n"), "6:36"),
        # ... the 32nd (spec's value is the first), the key of the 30th mapping, ...
        (DECLARATION, declaration_with("- " * DEEP + "x\n"), "6:63"),
        (DECLARATION, declaration_with("  x: " + "{a: " * DEEP + "1" + "}" * DEEP + "\n"), "6:123"),
        # ... the 30th list under config's mapping.
        (CONFIG_FILE, f"config:\n  {PREFIX}clusters: " + "[" * DEEP + "]" * DEEP + "\n", "2:63"),
    ],
    ids=["flow-lists", "block-lists", "flow-mappings", "stack-file"],
)
def test_deep_nesting_is_refused_where_it_passes_the_limit(
    tmp_path: Path, file: str, text: str, where: str
) -> None:
    write_stack(tmp_path)
    write_gateway(tmp_path, "team-a")
    write_text(tmp_path, file, text)

    lines = refused(tmp_path, tmp_path / "out", located=True)

    assert lines == [f"{file}:{where}: nests deeper than {MAX_DEPTH} levels; not read further"]


def nested(keys: int) -> str:
    """``spec`` text of ``keys`` mappings nested in each other, the last holding ``leaf``, on
    line ``5 + keys``: the leaf is at depth ``keys + 2`` (under the file's mapping and
    ``spec``'s)."""
    text = "".join(" " * (i + 1) + f"k{i}:\n" for i in range(keys - 1))
    return text + " " * keys + f"k{keys - 1}: leaf\n"


def test_nesting_at_the_depth_limit_is_read(tmp_path: Path) -> None:
    write_stack(tmp_path)
    write_text(tmp_path, DECLARATION, declaration_with(nested(MAX_DEPTH - 2)))

    lines = refused(tmp_path, tmp_path / "out")

    # Read, then refused by the model: the field is unknown.
    assert lines == [f"{DECLARATION}: spec.k0: unknown field"]


def test_nesting_one_level_over_the_limit_is_refused(tmp_path: Path) -> None:
    write_stack(tmp_path)
    write_text(tmp_path, DECLARATION, declaration_with(nested(MAX_DEPTH - 1)))

    lines = refused(tmp_path, tmp_path / "out", located=True)

    # The last key, on the last line, is the first node too deep.
    line, column = 5 + MAX_DEPTH - 1, MAX_DEPTH
    assert lines == [
        f"{DECLARATION}:{line}:{column}: nests deeper than {MAX_DEPTH} levels; not read further"
    ]


def test_more_nodes_than_the_limit_are_refused(tmp_path: Path) -> None:
    write_stack(tmp_path)
    write_text(tmp_path, DECLARATION, declaration_with("  x: [" + "0," * MAX_NODES + "0]\n"))

    lines = refused(tmp_path, tmp_path / "out", located=True)

    assert lines == [
        # 13 nodes before the list's first item (at column 7), two characters an item
        f"{DECLARATION}:6:{7 + 2 * (MAX_NODES - 13)}: holds more than {MAX_NODES:,} values; not"
        " read further"
    ]


# --- values are never echoed whole ----------------------------------------------------------

LONG = 900_000
"""Characters of a value: under the size limit, far over what a message may quote."""
QUOTED = re.compile(r"'[^']*'")


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"exposure": {"host": "a" * LONG + ".example.org"}}, "spec.exposure.host"),
        ({"images": {"gateway": "quay.io/" + "a" * LONG + " x"}}, "spec.images.gateway"),
        ({"namespace": "n" * LONG}, "spec.namespace"),
    ],
    ids=["host", "image", "namespace"],
)
def test_a_long_value_is_quoted_cut_short(tmp_path: Path, spec: dict[str, Any], field: str) -> None:
    write_stack(tmp_path)
    write_gateway(tmp_path, "team-a", {**spec, "signIn": "none"})

    lines = refused(tmp_path, tmp_path / "out")

    (line,) = lines
    assert line.startswith(f"{DECLARATION}: {field}: ")
    quoted = QUOTED.findall(line)
    assert quoted, line
    assert max(len(q) for q in quoted) == QUOTED_LIMIT + len(ELLIPSIS) + 2
    assert len(line) < 1_000


def test_a_long_unknown_key_is_cut_short(tmp_path: Path) -> None:
    write_stack(tmp_path)
    key = "k" * 50_000
    write_gateway(tmp_path, "team-a", {key: 1})

    lines = refused(tmp_path, tmp_path / "out")

    assert lines == [f"{DECLARATION}: spec.{'k' * (200 - len('spec.'))}{ELLIPSIS}: unknown field"]


# --- a registry mirror's problem is the stack file's ----------------------------------------

MIRROR = f"{PREFIX}clusters.c1.registryMirrors.ghcr.io/nvidia"
LONG_TARGET = "mirror.internal:5000/" + "m" * 230
"""A mirror every ghcr.io/nvidia image name outgrows (255 characters) once rewritten."""
TOO_LONG = (
    f"image reference 'mirror.internal:5000/{'m' * (QUOTED_LIMIT - 21)}{ELLIPSIS}': name is"
    " longer than 255 characters"
)
"""The error of an image rewritten by LONG_TARGET, its reference cut short as messages do."""


def test_a_mirror_that_breaks_the_built_in_images_is_named_in_the_stack_file(
    tmp_path: Path,
) -> None:
    write_stack(tmp_path, clusters=one_cluster(registryMirrors={"ghcr.io/nvidia": LONG_TARGET}))
    write_gateway(tmp_path, "team-a", QUIET)
    write_gateway(tmp_path, "team-b", QUIET)

    lines = refused(tmp_path, tmp_path / "out")

    # Once for the stack, not once per gateway; nothing on the declarations.
    assert lines == [
        f"{CONFIG_FILE}: {MIRROR}: turns the built-in default {field} image {image!r} into an"
        f" invalid reference: {TOO_LONG}"
        for field, image in [
            ("gateway", DEFAULT_GATEWAY_IMAGE),
            ("sandbox", DEFAULT_SANDBOX_IMAGE),
            ("supervisor", DEFAULT_SUPERVISOR_IMAGE),
        ]
    ]


def test_a_mirror_that_breaks_a_stack_default_names_the_default(tmp_path: Path) -> None:
    write_stack(
        tmp_path,
        clusters=one_cluster(registryMirrors={"ghcr.io/nvidia": LONG_TARGET, "quay.io": "q.io"}),
        stack_images={"sandbox": "ghcr.io/nvidia/sandbox:1"},
    )
    write_gateway(tmp_path, "team-a", QUIET)

    lines = refused(tmp_path, tmp_path / "out")

    assert (
        f"{CONFIG_FILE}: {MIRROR}: turns the stack default ({PREFIX}images.sandbox) sandbox"
        f" image 'ghcr.io/nvidia/sandbox:1' into an invalid reference: {TOO_LONG}"
    ) in lines
    assert [line for line in lines if not line.startswith(f"{CONFIG_FILE}: {MIRROR}: ")] == []


def test_a_mirror_that_breaks_a_declarations_own_image_names_both(tmp_path: Path) -> None:
    write_stack(tmp_path, clusters=one_cluster(registryMirrors={"ghcr.io/nvidia": LONG_TARGET}))
    write_gateway(
        tmp_path, "team-a", {"images": {"gateway": "ghcr.io/nvidia/gateway-x:1"}, **QUIET}
    )

    lines = refused(tmp_path, tmp_path / "out")

    assert [line for line in lines if line.startswith(DECLARATION)] == [
        f"{DECLARATION}: spec.images.gateway: after {CONFIG_FILE}: {MIRROR}: {TOO_LONG}"
    ]
    # The built-in supervisor and sandbox images are the stack file's problem.
    assert len(lines) == 3
    assert all(line.startswith((DECLARATION, f"{CONFIG_FILE}: {MIRROR}: ")) for line in lines)


# --- a malformed clusters value is one problem ----------------------------------------------


@pytest.mark.parametrize(
    ("value", "found"),
    [
        ([], "found a list"),
        (["c1"], "found a list"),
        ("c1", "found a string"),
        (None, "found null"),
        (5, "found an integer"),
        (True, "found a boolean"),
    ],
    ids=["empty-list", "list", "string", "null", "integer", "boolean"],
)
def test_a_malformed_clusters_value_is_one_problem(
    tmp_path: Path, value: object, found: str
) -> None:
    write_stack(tmp_path, extra={f"{PREFIX}clusters": value})
    write_gateway(tmp_path, "team-a")

    lines = refused(tmp_path, tmp_path / "out")

    assert lines == [
        f"{CONFIG_FILE}: {PREFIX}clusters: expected a mapping of cluster name to its settings,"
        f" {found}"
    ]


def test_an_empty_clusters_mapping_is_one_problem(tmp_path: Path) -> None:
    write_stack(tmp_path, extra={f"{PREFIX}clusters": {}})
    write_gateway(tmp_path, "team-a")

    lines = refused(tmp_path, tmp_path / "out")

    assert lines == [
        f"{CONFIG_FILE}: {PREFIX}clusters: is empty; expected a mapping of cluster name to its"
        " settings"
    ]


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        (
            "images",
            ["quay.io/a:1"],
            "a mapping of default images (gateway, supervisor, sandbox), found a list",
        ),
        ("images", None, "a mapping of default images (gateway, supervisor, sandbox), found null"),
        ("selector", "team=a", "a mapping with matchLabels, found a string"),
    ],
)
def test_another_malformed_object_key_is_one_problem(
    tmp_path: Path, key: str, value: object, expected: str
) -> None:
    write_stack(tmp_path, extra={f"{PREFIX}{key}": value})
    write_gateway(tmp_path, "team-a")

    lines = refused(tmp_path, tmp_path / "out")

    assert lines == [f"{CONFIG_FILE}: {PREFIX}{key}: expected {expected}"]


# --- the project's namespace in another case ------------------------------------------------


@settings(HOSTILE, max_examples=20)
@given(namespace=PREFIX_CASES, key=st.sampled_from(["clusters", "images", "declarationsDir"]))
def test_a_key_in_another_case_of_the_namespace_is_reported(namespace: str, key: str) -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory) / "project"
        write_stack(root, extra={f"{namespace}:{key}": {"c2": cluster()}})
        write_gateway(root, "team-a")
        lines = refused(root, Path(directory) / "out")

    assert lines == [
        f"{CONFIG_FILE}: {namespace}:{key}: unknown namespace (namespaces are case-sensitive);"
        f" did you mean {PREFIX}?"
    ]


# --- path fields ----------------------------------------------------------------------------

INSIDE = "must be a path inside the project, relative to its root"


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("/etc/ssl/certs/ca-certificates.crt", f"'/etc/ssl/certs/ca-certificates.crt' {INSIDE}"),
        ("../ca.pem", f"'../ca.pem' {INSIDE}"),
        ("certs/../../ca.pem", f"'certs/../../ca.pem' {INSIDE}"),
        ("certs/ca\x00.pem", "'certs/ca\\x00.pem' contains a control character"),
        ("c" * 256 + ".pem", f"'{'c' * 128}{ELLIPSIS}' has a component longer than 255 bytes"),
        ("c/" * 600 + "ca.pem", "is 1,206 characters long; at most 1024"),
        ("", "must not be empty"),
    ],
    ids=["absolute", "parent", "inner-parent", "nul", "long-component", "long-path", "empty"],
)
def test_ssl_root_cert_outside_the_project_is_refused(
    tmp_path: Path, value: str, problem: str
) -> None:
    database = {
        "adminHost": "db.example.com",
        "adminUser": "admin",
        "host": "postgres.db.svc.cluster.local",
        "sslRootCert": value,
    }
    write_stack(tmp_path, clusters={"c1": cluster(database=database)})
    write_gateway(tmp_path, "team-a")

    lines = refused(tmp_path, tmp_path / "out")

    assert lines == [f"{CONFIG_FILE}: {PREFIX}clusters.c1.database.sslRootCert: {problem}"]


def test_ssl_root_cert_linked_outside_the_project_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (tmp_path / "outside.pem").write_text("not a CA\n")
    (root / "certs").mkdir(parents=True)
    os.symlink(tmp_path / "outside.pem", root / "certs" / "ca.pem")
    database = {
        "adminHost": "db.example.com",
        "adminUser": "admin",
        "host": "postgres.db.svc.cluster.local",
        "sslRootCert": "certs/ca.pem",
    }
    write_stack(root, clusters={"c1": cluster(database=database)})
    write_gateway(root, "team-a", QUIET)

    lines = refused(root, tmp_path / "out")

    assert lines == [
        f"{CONFIG_FILE}: {PREFIX}clusters.c1.database.sslRootCert: 'certs/ca.pem' leads outside"
        " the project through a symbolic link; it must be a file inside the project"
    ]


def test_ssl_root_cert_linked_inside_the_project_is_read(tmp_path: Path) -> None:
    (tmp_path / "certs").mkdir()
    (tmp_path / "certs" / "bundle.pem").write_text("a CA bundle\n")
    os.symlink("bundle.pem", tmp_path / "certs" / "ca.pem")
    database = {
        "adminHost": "db.example.com",
        "adminUser": "admin",
        "host": "postgres.db.svc.cluster.local",
        "sslRootCert": "certs/ca.pem",
    }
    write_stack(tmp_path, clusters={"c1": cluster(database=database)})
    write_gateway(tmp_path, "team-a", {"signIn": "none"})  # no Keycloak here (validate)

    result = validate_cli(tmp_path)

    assert result.code == 0, result
    assert result.out == f"{CONFIG_FILE}: ok (1 gateway, 1 cluster)\n"
    assert all(line.startswith("note: ") for line in result.err.splitlines())  # no error


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("stacks/te\x00st", "'stacks/te\\x00st' contains a control character"),
        ("stacks/\x1b[2Jtest", "'stacks/\\x1b[2Jtest' contains a control character"),
        ("d" * 300, f"'{'d' * 128}{ELLIPSIS}' has a component longer than 255 bytes"),
        ("/".join(["d" * 200] * 30), "is 6,029 characters long; at most 1024"),
    ],
    ids=["nul", "escape", "long-component", "long-path"],
)
def test_a_declarations_dir_the_os_would_refuse_is_a_problem(
    tmp_path: Path, value: str, problem: str
) -> None:
    write_stack(tmp_path, extra={f"{PREFIX}declarationsDir": value})
    write_gateway(tmp_path, "team-a")

    lines = refused(tmp_path, tmp_path / "out")

    assert lines == [f"{CONFIG_FILE}: {PREFIX}declarationsDir: {problem}"]


def test_a_declarations_dir_the_os_would_refuse_is_a_problem_with_broken_clusters(
    tmp_path: Path,
) -> None:
    # With the clusters broken the declarations are still checked on their own: not through
    # a path the OS refuses.
    write_stack(
        tmp_path, extra={f"{PREFIX}declarationsDir": "stacks/\x00", f"{PREFIX}clusters": "c1"}
    )
    write_gateway(tmp_path, "team-a")

    lines = refused(tmp_path, tmp_path / "out")

    assert lines == [
        f"{CONFIG_FILE}: {PREFIX}clusters: expected a mapping of cluster name to its settings,"
        " found a string",
        f"{CONFIG_FILE}: {PREFIX}declarationsDir: 'stacks/\\x00' contains a control character",
    ]

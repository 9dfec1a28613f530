"""Hostile release files through the real CLI: every run of ``render`` and ``validate`` ends with
exit 0 and a complete render, or exit 2 with every problem as ``error: <path>: <field>:
<message>`` naming the release file (and its field where one is to blame), and nothing written.
Never exit 1, never a traceback."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gatewayctl.inputs.release_files import DIGEST
from gatewayctl.inputs.yamlfile import MAX_DEPTH, MAX_FILE_BYTES
from tests.builders import (
    API_VERSION,
    CONFIG_FILE,
    DECLARATIONS,
    digest,
    one_cluster,
    write_gateway,
    write_stack,
    write_text,
)
from tests.hostile_helpers import Outcome, Reported, render_cli, reported_problems, validate_cli
from tests.strategies import HOSTILE, JUNK_SCALARS, YAML_TAGS

RELEASE = "releases/r1.yaml"
PATHS = [CONFIG_FILE, RELEASE, f"{DECLARATIONS}/team-a.yaml"]
GOOD = {
    "gateway": f"ghcr.io/acme/gateway:1@{digest('g')}",
    "supervisor": f"ghcr.io/acme/supervisor:1@{digest('s')}",
    "sandbox": f"ghcr.io/acme/sandbox:1@{digest('b')}",
}


def release_text(**fields: str) -> str:
    """``releases/r1.yaml`` as written by hand, each field's value text as given."""
    values = {"name": "r1", "note": "n", **GOOD, **fields}
    return (
        f"apiVersion: {API_VERSION}\nkind: Release\nmetadata:\n  name: {values['name']}\n"
        f"spec:\n  note: {values['note']}\n  images:\n"
        + "".join(
            f"    {which}: {values[which]}\n" for which in ("gateway", "supervisor", "sandbox")
        )
    )


def run(text: str | bytes) -> tuple[Outcome, Outcome, bool]:
    """Render and validate a one-gateway project bound to the release ``text``."""
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory) / "project"
        write_stack(root, clusters=one_cluster(release="r1"))
        # No person signs in: validate would otherwise refuse the gateway on that alone.
        write_gateway(root, "team-a", {"signIn": "none"})
        write_text(root, RELEASE, text)
        out = Path(directory) / "out"
        rendered = render_cli(root, out)
        validated = validate_cli(root)
        return rendered, validated, out.exists()


def assert_clean(rendered: Outcome, validated: Outcome, written: bool) -> list[Reported]:
    """Exit 0 with a render, or exit 2 naming the release file with nothing written; the
    problems of the release file are returned."""
    assert rendered.code in (0, 2), rendered
    assert validated.code == rendered.code
    assert "Traceback" not in rendered.err + validated.err
    if rendered.code == 0:
        assert written
        return []
    assert not written
    assert rendered.err == validated.err
    problems = reported_problems(rendered.err, PATHS)
    # A broken release is its file's problem; the binding then names a release there is not.
    assert {p.path for p in problems} <= {RELEASE, CONFIG_FILE}, rendered.err
    assert any(p.path == RELEASE for p in problems), rendered.err
    return [p for p in problems if p.path == RELEASE]


FIELDS = ("name", "note", "gateway", "supervisor", "sandbox")
FIELD_PATHS = {
    "name": "metadata.name",
    "note": "spec.note",
    **{which: f"spec.images.{which}" for which in ("gateway", "supervisor", "sandbox")},
}


@settings(HOSTILE, max_examples=60)
@given(field=st.sampled_from(FIELDS), tag=st.sampled_from(YAML_TAGS), junk=JUNK_SCALARS)
def test_any_tag_on_any_junk_value_is_a_clean_result(field: str, tag: str, junk: str) -> None:
    rest = assert_clean(*run(release_text(**{field: f"{tag}{junk}"})))
    for problem in rest:
        # The field's problem, or the file's when YAML cannot read it (with its line).
        assert problem.rest.startswith(f"{FIELD_PATHS[field]}: ") or (
            problem.location and problem.rest.startswith("invalid YAML: ")
        ), problem


@settings(HOSTILE, max_examples=40)
@example(suffix=digest("pinned"))
@given(
    suffix=st.text(
        st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=0, max_size=80
    )
)
def test_any_digest_text_is_pinned_or_refused_by_its_field(suffix: str) -> None:
    rendered, validated, written = run(release_text(gateway=f"'ghcr.io/acme/gateway@{suffix}'"))
    rest = assert_clean(rendered, validated, written)
    if DIGEST.fullmatch(suffix):
        assert rest == []
    else:
        assert rest and all(
            p.rest.startswith("spec.images.gateway: ")
            or (p.location and p.rest.startswith("invalid YAML: "))
            for p in rest
        ), rest


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"\xff\xfe not text", "not UTF-8 text"),
        (b"", "is empty; expected one YAML mapping"),
        (b"- a list\n", "expected a YAML mapping, found list"),
        (b"a: 1\n---\nb: 2\n", "holds several documents; expected one YAML mapping"),
        (b"x" * (MAX_FILE_BYTES + 1), "is larger than 1,048,576 bytes (1 MiB)"),
        ("a:\n" + "".join("  " * i + "- \n" for i in range(1, MAX_DEPTH + 2)), "nests deeper"),
        (b"a: &x [*x]\n", None),
        (b"metadata: {name: r1}\nkind: !!python/object:os.system ls\n", "unknown tag"),
    ],
)
def test_a_file_that_is_no_release_at_all_is_refused_whole(
    content: str | bytes, problem: str | None
) -> None:
    rest = assert_clean(*run(content))
    assert rest, "refused"
    if problem is not None:
        assert any(problem in p.rest for p in rest), rest


def test_a_long_hostile_value_is_quoted_cut_short() -> None:
    rest = assert_clean(*run(release_text(gateway="'ghcr.io/acme/gateway@" + "z" * 5000 + "'")))
    assert len(rest) == 1
    assert re.fullmatch(r"spec\.images\.gateway: digest '.{1,140}' is not sha256:.*", rest[0].rest)
    assert len(rest[0].rest) < 400

"""The render's YAML writer (``gatewayctl.inputs.yamlwrite.dump_yaml``): PyYAML's bytes, written
directly for a manifest's kinds of values and by PyYAML for anything else.

The judge is PyYAML itself (``yamlwrite._pyyaml``, the ``yaml.dump`` call the render used
before): generated documents, every committed golden manifest, and the cases the direct writer
leaves to PyYAML (an alias, a long line, a long key, another type).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from gatewayctl.inputs import yamlwrite
from gatewayctl.inputs.yamlwrite import dump_yaml

GOLDEN = Path(__file__).parent / "golden"

# Text that YAML reads as something else, or that libyaml must quote, escape or block.
TRICKY = [
    "", " ", "true", "False", "yes", "off", "null", "~", "NULL", "0", "-1", "1.0", "1e3", ".inf",
    "0x1F", "0o17", "1_000", "1:20", "2026-12-04", "2026-12-04 01:02:03", "<<", "=", "-", "- a",
    "? a", ": a", "a: b", "a #b", "#a", "'a'", '"a"', "a'b", "@a", "`a", "&a", "*a", "!a", "|",
    ">", "%a", "{a}", "[a]", "a,b", " a", "a ", "a\n", "\na", "a\nb", "a\n\nb\n", "a\nb\n\n",
    " a\nb", "a \nb", "a\tb", "\t", "é", "\u2028", "\x85", "\ufeff", "\x00", "\U0001f600",
    "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
]  # fmt: skip
ALPHABET = st.sampled_from([*"ab z09:#-'\"\n\t{}[],&*!|>%@`~?.=\\", "é", "\u2028", "\x85"])
TEXT = st.one_of(st.sampled_from(TRICKY), st.text(ALPHABET, max_size=12), st.text(max_size=8))
SCALARS = st.one_of(
    TEXT, st.integers(-(2**70), 2**70), st.booleans(), st.none(), st.sampled_from([0, 1, -1])
)
DOCUMENTS = st.dictionaries(
    TEXT,
    st.recursive(
        SCALARS,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
        max_leaves=24,
    ),
    max_size=6,
)


@settings(max_examples=600, deadline=None)
@given(DOCUMENTS)
def test_generated_documents_are_written_as_pyyaml_writes_them(document: dict[str, Any]) -> None:
    assert dump_yaml(document) == yamlwrite._pyyaml(document)


def _golden_manifests() -> list[Path]:
    return sorted(GOLDEN.glob("*/manifests/**/*.yaml"))


def test_every_golden_manifest_is_written_directly_byte_for_byte() -> None:
    paths = _golden_manifests()
    assert len(paths) > 100
    for path in paths:
        text = path.read_text()
        # _written raises where it would leave the document to PyYAML: every manifest the
        # render writes is of the kinds it writes itself.
        assert yamlwrite._written(yaml.safe_load(text)) == text, path


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        (
            {"a": [{"b": "p\nq", "c": ["m\nn"]}]},
            "a:\n- b: |-\n    p\n    q\n  c:\n  - |-\n    m\n    n\n",
        ),
        ({"d": [["u\nv", "w"]], "e": {}}, "d:\n- - |-\n    u\n    v\n  - w\ne: {}\n"),
        ({"k": " lead\nx\n"}, "k: |2\n   lead\n  x\n"),
        (
            {"k": "", "t": "true", "n": 12, "b": False, "z": None},
            "b: false\nk: ''\nn: 12\nt: 'true'\nz: null\n",
        ),
        ({"k": "é"}, 'k: "\\xE9"\n'),
    ],
)  # fmt: skip
def test_layout_and_quoting(document: dict[str, Any], expected: str) -> None:
    assert yamlwrite._pyyaml(document) == expected  # the judge agrees with the expectation
    assert yamlwrite._written(document) == expected


@pytest.mark.parametrize(
    "document",
    [
        pytest.param({"a": (shared := {"x": 1}), "b": shared}, id="alias"),
        pytest.param({"a": "word " * 200}, id="folded-line"),
        pytest.param({"k" * 200: 1}, id="long-key"),
        pytest.param({"a": 1.5}, id="float"),
        pytest.param({"a": (1, 2)}, id="tuple"),
        pytest.param({1: "a"}, id="int-key"),
        pytest.param({}, id="empty"),
    ],
)
def test_what_the_direct_writer_leaves_to_pyyaml(document: dict[Any, Any]) -> None:
    with pytest.raises(yamlwrite._NotDirectError):
        yamlwrite._written(document)
    assert dump_yaml(document) == yamlwrite._pyyaml(document)


def test_an_alias_is_still_written_as_pyyaml_writes_it() -> None:
    shared = {"x": 1}
    assert dump_yaml({"a": shared, "b": shared}) == "a: &id001\n  x: 1\nb: *id001\n"

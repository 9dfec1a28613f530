"""Hypothesis strategies the tests share: names and labels, hostnames, image references, paths,
YAML scalars, secrets; and the settings of the property tests that run the CLI.

Whole generated projects (valid, and broken on purpose) are in ``tests.project_strategies``.
"""

from __future__ import annotations

import string
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from tests.builders import PREFIX

HOSTILE = settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
"""Property tests that run the CLI on a project written to disk: slow examples, few of them."""


# --- names and labels -----------------------------------------------------------------------

DNS_LABELS = st.from_regex(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", fullmatch=True)
"""A lowercase RFC 1123 label of 1-63 characters."""
SHORT_LABELS = st.from_regex(r"[a-z0-9]([-a-z0-9]{0,60}[a-z0-9])?", fullmatch=True)
"""A label of at most 62 characters: room for one more."""
GATEWAY_NAMES = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,48}[a-z0-9])?", fullmatch=True)
"""A valid gateway name (at most 50 characters)."""
NAMESPACES = st.from_regex(r"[a-z0-9]([-a-z0-9]{0,58}[a-z0-9])?", fullmatch=True)
"""Namespaces that fit a host slot (gw- + at most 60 = 63)."""
UNKNOWN_KEYS = st.text(
    alphabet=st.characters(categories=("L", "N", "P", "S", "Zs"), exclude_characters=":"),
    min_size=1,
    max_size=16,
)
"""Keys for a field that does not exist. No ':' (see test_hostile's
test_field_names_are_printed_verbatim) and no control characters (see
test_control_characters_in_input_are_escaped_in_messages): both have their own tests."""
PREFIX_CASES = (
    st.lists(st.booleans(), min_size=len(PREFIX) - 1, max_size=len(PREFIX) - 1)
    .map(
        lambda upper: "".join(
            c.upper() if u else c for c, u in zip(PREFIX[:-1], upper, strict=True)
        )
    )
    .filter(lambda namespace: namespace != PREFIX[:-1])
)
"""The project's config namespace (``PREFIX`` without its ':') in any other case."""


# --- hostnames ------------------------------------------------------------------------------

# Base domains short enough (at most 6 * 30 + 5 = 185) that gw-<ns>.<base> stays within 253:
# fully qualified (two labels or more) and ending in a label that is not numeric (check_host).
BASE_LABELS = st.from_regex(r"[a-z0-9]([-a-z0-9]{0,28}[a-z0-9])?", fullmatch=True)
TOP_LABELS = st.from_regex(r"[a-z]([-a-z0-9]{0,28}[a-z0-9])?", fullmatch=True)


def domains(max_labels: int) -> st.SearchStrategy[str]:
    """Fully qualified domains of 2 to ``max_labels`` labels whose last label has a letter."""
    return st.builds(
        lambda labels, top: ".".join([*labels, top]),
        st.lists(BASE_LABELS, min_size=1, max_size=max_labels - 1),
        TOP_LABELS,
    )


BASE_DOMAINS = domains(6)


# --- image references -----------------------------------------------------------------------

VALID_IMAGES = (
    "quay.io/acme/gateway:2.0",
    "localhost:5000/openshell/gateway:dev",
    "registry.internal:5000/nvidia/openshell/gateway@sha256:" + "ab" * 32,
    "ghcr.io/nvidia/openshell/supervisor:0.0.110",
    "nginx",
    "team/app:v1.2.3",
    "[fd00::1]:5000/team/app_x__y:1",
)
"""Valid references of every shape, to sample from."""
WHITESPACE = (" ", "\t", "\n", "\r", "\u00a0", "\u2003")
METACHARACTERS = (";", "&", "|", "`", "$", "<", ">", "(", ")", "\\", '"', "'")
"""Characters no image reference may hold."""

_DOMAIN_LABELS = st.from_regex(r"[a-zA-Z0-9]([a-zA-Z0-9-]{0,14}[a-zA-Z0-9])?", fullmatch=True)
REGISTRY_HOSTS = st.lists(_DOMAIN_LABELS, min_size=2, max_size=4).map(".".join)
_PORTS = st.one_of(st.just(""), st.integers(min_value=1, max_value=65535).map(lambda p: f":{p}"))
REGISTRIES = st.builds(lambda host, port: host + port, REGISTRY_HOSTS, _PORTS)
PATH_COMPONENTS = st.from_regex(r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*", fullmatch=True).filter(
    lambda c: len(c) <= 30
)
IMAGE_TAGS = st.none() | st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}", fullmatch=True)
DIGESTS = (
    st.none()
    | st.builds(
        lambda algorithm, hex_: f"{algorithm}:{hex_}",
        st.just("sha256"),
        st.text("0123456789abcdef", min_size=64, max_size=64),
    )
    | st.builds(
        lambda hex_: f"sha512:{hex_}", st.text("0123456789abcdef", min_size=128, max_size=128)
    )
)


# --- paths ----------------------------------------------------------------------------------

PATH_SEGMENTS = st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,11}", fullmatch=True)
RELATIVE_PATHS = st.lists(PATH_SEGMENTS, min_size=1, max_size=3).map("/".join)


# --- YAML scalars ---------------------------------------------------------------------------

YAML_TAGS = ("", "!!int ", "!!float ", "!!bool ", "!!timestamp ", "!!binary ", "!!null ", "!!str ")
"""No tag, or a standard tag, to put before a scalar."""
JUNK_SCALARS = st.one_of(
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=12),
    st.from_regex(
        r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([ Tt][0-9]{1,2}:[0-9]{2}:[0-9]{2})?", fullmatch=True
    ),
    st.from_regex(r"[-+]?0[xbo][0-9a-fA-F_]{0,4}", fullmatch=True),
    st.from_regex(r"[-+]?[0-9_]{1,4}(:[0-9_]{1,3}){1,2}(\.[0-9_]*)?", fullmatch=True),
    st.from_regex(r"[-+]?(\.[0-9]+|[0-9][0-9_]*\.[0-9_]*)([eE][-+][0-9]+)?", fullmatch=True),
    st.sampled_from(["~", "null", "yes", "No", "on", "OFF", ".inf", "-.Inf", ".NaN", "=", "<<"]),
)
"""Plain scalars near YAML's implicit types: dates, numbers in every base, sexagesimals,
booleans, nulls, merge keys, and any text."""


# --- secrets --------------------------------------------------------------------------------

PASSWORDS = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=24)
SECRET_MARKER = "Q7zx"
"""Starts every ``MARKED_SECRETS`` value: found in the output (any case), some of it leaked."""
MARKED_SECRETS = st.builds(
    lambda rest: SECRET_MARKER + rest,
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=16),
)
PRINTABLE_TEXT = st.text(alphabet=st.sampled_from(sorted(set(string.printable) - {"\x0b", "\x0c"})))
"""Text of printable ASCII (0x20-0x7E), tab, line feed and carriage return: string.printable
without its vertical tab and form feed."""


# --- two stacks, for the rules across stacks ------------------------------------------------

CONTEXTS = ("ctx-1", "ctx-2")
DOMAINS = ("one.example.com", "two.example.com")
PORTS = (5432, 6432)
STACK_NAMESPACES = ("tenant-a", "tenant-b")
DATABASES = ("gw_a", "gw_b")
VANITY = ("grpc.example.org", "api.example.net")


@st.composite
def two_stacks(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    """Per stack (a, b): the context, base domain and database port of its one cluster, and one
    gateway's namespace, database name and host (None: its slot), from few enough values that
    the two often share some."""
    return {
        stack: {
            "context": draw(st.sampled_from(CONTEXTS)),
            "domain": draw(st.sampled_from(DOMAINS)),
            "port": draw(st.sampled_from(PORTS)),
            "namespace": draw(st.sampled_from(STACK_NAMESPACES)),
            "database": draw(st.sampled_from(DATABASES)),
            "host": draw(st.sampled_from((None, *VANITY))),
        }
        for stack in ("a", "b")
    }

"""Image references: grammar, precedence and registry mirrors (components/images.py, §5.4)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components.images import (
    DEFAULT_GATEWAY_IMAGE,
    DEFAULT_SANDBOX_IMAGE,
    DEFAULT_SUPERVISOR_IMAGE,
    ImageRef,
    ImageReferenceError,
    parse_image,
    resolve_image,
    rewrite_with_mirrors,
)
from tests.strategies import DIGESTS, IMAGE_TAGS, PATH_COMPONENTS, REGISTRIES, REGISTRY_HOSTS

SHA256 = "sha256:" + "0123456789abcdef" * 4
SHA512 = "sha512:" + "fedcba9876543210" * 8
GRAMMAR = " is not [registry[:port]/]repository[:tag][@digest] with a lowercase repository path"


def grammar_message(reference: str) -> str:
    return f"image reference {reference!r}{GRAMMAR}"


def error_of(reference: str) -> str:
    with pytest.raises(ImageReferenceError) as info:
        parse_image(reference)
    return str(info.value)


# --- parse_image: accepted -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("reference", "expected"),
    [
        (
            "ghcr.io/nvidia/openshell/gateway:0.0.109",
            ImageRef("ghcr.io", "nvidia/openshell/gateway", "0.0.109", None),
        ),
        (
            "localhost:5001/openshell/gateway:dev",
            ImageRef("localhost:5001", "openshell/gateway", "dev", None),
        ),
        (
            "image-registry.openshift-image-registry.svc:5000/openshift/openshell-gateway:0.0.109",
            ImageRef(
                "image-registry.openshift-image-registry.svc:5000",
                "openshift/openshell-gateway",
                "0.0.109",
                None,
            ),
        ),
        ("nginx", ImageRef(None, "nginx", None, None)),
        ("nginx:1.27", ImageRef(None, "nginx", "1.27", None)),
        (f"nginx@{SHA256}", ImageRef(None, "nginx", None, SHA256)),
        (
            f"ghcr.io/nvidia/openshell/gateway:0.0.109@{SHA256}",
            ImageRef("ghcr.io", "nvidia/openshell/gateway", "0.0.109", SHA256),
        ),
        (f"quay.io/a/b@{SHA512}", ImageRef("quay.io", "a/b", None, SHA512)),
        ("[::1]:5000/x", ImageRef("[::1]:5000", "x", None, None)),
        ("localhost/app", ImageRef("localhost", "app", None, None)),
        ("Registry.Example.COM/app", ImageRef("Registry.Example.COM", "app", None, None)),
        ("a.b/c.d/e__f/g---h:Tag_1.x-y", ImageRef("a.b", "c.d/e__f/g---h", "Tag_1.x-y", None)),
    ],
)
def test_parse_realistic_references(reference: str, expected: ImageRef) -> None:
    assert parse_image(reference) == expected
    assert str(parse_image(reference)) == reference


@pytest.mark.parametrize(
    ("reference", "expected"),
    [
        ("library/nginx:1.27", ImageRef(None, "library/nginx", "1.27", None)),
        ("team/app", ImageRef(None, "team/app", None, None)),
        ("openshell/gateway:dev", ImageRef(None, "openshell/gateway", "dev", None)),
    ],
)
def test_first_component_without_dot_or_port_is_a_repository(
    reference: str, expected: ImageRef
) -> None:
    ref = parse_image(reference)
    assert ref.registry is None
    assert ref == expected


def test_first_component_that_cannot_be_a_host_is_a_repository() -> None:
    # "_" is not allowed in a host, so the regex never binds it as a registry.
    assert parse_image("team_a/app:1") == ImageRef(None, "team_a/app", "1", None)


def test_builtin_defaults_parse() -> None:
    assert parse_image(DEFAULT_GATEWAY_IMAGE) == ImageRef(
        "ghcr.io", "nvidia/openshell/gateway", "0.0.109"
    )
    assert parse_image(DEFAULT_SUPERVISOR_IMAGE) == ImageRef(
        "ghcr.io", "nvidia/openshell/supervisor", "0.0.109"
    )
    assert parse_image(DEFAULT_SANDBOX_IMAGE) == ImageRef(
        "ghcr.io", "nvidia/openshell-community/sandboxes/base", "latest"
    )


def test_image_ref_name_and_str() -> None:
    ref = ImageRef("ghcr.io", "nvidia/gw", "1", SHA256)
    assert ref.name == "ghcr.io/nvidia/gw"
    assert str(ref) == f"ghcr.io/nvidia/gw:1@{SHA256}"
    assert ImageRef(None, "nginx").name == "nginx"
    assert str(ImageRef(None, "nginx")) == "nginx"


# --- parse_image: rejected -----------------------------------------------------------------


def test_empty_is_rejected() -> None:
    assert error_of("") == "image reference must not be empty"


@pytest.mark.parametrize(
    "reference",
    ["nginx 1.27", "nginx\t", "nginx:1.27\n", "\nnginx", " ", "ghcr.io/a\u00a0b"],
)
def test_whitespace_is_rejected(reference: str) -> None:
    assert error_of(reference) == f"image reference {reference!r} contains whitespace"


@pytest.mark.parametrize(
    ("reference", "named"),
    [
        ("nginx;rm", "';'"),
        ("nginx&x", "'&'"),
        ("nginx|x", "'|'"),
        ("nginx`id`", "a backtick"),
        ("nginx$x", "'$'"),
        ("nginx$(id)", "'$', '(', ')'"),
        ('nginx"x', "a double quote"),
        ("nginx'x", "a single quote"),
        ("nginx<x>", "'<', '>'"),
        ("nginx\\x", "a backslash"),
        ("a;b&c|d", "'&', ';', '|'"),
    ],
)
def test_shell_metacharacters_are_named(reference: str, named: str) -> None:
    assert error_of(reference) == (
        f"image reference {reference!r} contains shell metacharacters: {named}"
    )


def test_whitespace_is_reported_before_metacharacters() -> None:
    assert error_of("a; b") == "image reference 'a; b' contains whitespace"


@pytest.mark.parametrize(
    "reference",
    [
        "ghcr.io/NVIDIA/gateway:1",
        "Nginx",
        "nginx/App",
        "Team/app",
        "ghcr.io/nvidia/gateway:",
        "ghcr.io/nvidia/gateway:-1",
        "ghcr.io//gateway",
        "ghcr.io/nvidia/",
        "/nginx",
        "nginx:" + "a" * 129,
        "nginx@sha256:abc",
        "nginx@sha256:" + "0" * 63,
        "nginx@sha256:" + "0" * 65,
        "nginx@sha512:" + "0" * 64,
        "nginx@sha256:" + "A" * 64,
        "nginx@md5:" + "0" * 32,
        "-ghcr.io/x",
        "ghcr.io:port/x",
        "a..b/x",
        "x_/y",
    ],
)
def test_grammar_violations(reference: str) -> None:
    assert error_of(reference) == grammar_message(reference)


def test_tag_of_128_characters_is_accepted() -> None:
    assert parse_image("nginx:" + "a" * 128).tag == "a" * 128


@pytest.mark.parametrize("reference", ["nginx:v\u00e9", "nginx:\u0663", "nginx:\u00aa1"])
def test_non_ascii_tag_is_rejected(reference: str) -> None:
    assert error_of(reference) == grammar_message(reference)


def test_name_longer_than_255_is_rejected() -> None:
    reference = "ghcr.io/" + "/".join(["a" * 60] * 4) + ":1"  # name is 8 + 243 = 251
    assert parse_image(reference).tag == "1"
    longer = "ghcr.io/" + "/".join(["a" * 61] * 4) + ":1"  # name is 8 + 247 = 255
    assert parse_image(longer).tag == "1"
    too_long = "ghcr.io/" + "/".join(["a" * 61] * 4) + "b:1"  # 256
    assert error_of(too_long) == (
        f"image reference {too_long!r}: name is longer than 255 characters"
    )


def test_image_reference_error_is_a_value_error() -> None:
    assert issubclass(ImageReferenceError, ValueError)


# --- round trip ----------------------------------------------------------------------------


@given(
    REGISTRIES,
    st.lists(PATH_COMPONENTS, min_size=1, max_size=4).map("/".join),
    IMAGE_TAGS,
    DIGESTS,
)
def test_round_trip_with_registry(
    registry: str, repository: str, tag: str | None, digest: str | None
) -> None:
    ref = ImageRef(registry, repository, tag, digest)
    assert parse_image(str(ref)) == ref


@given(PATH_COMPONENTS, IMAGE_TAGS, DIGESTS)
def test_round_trip_single_component_without_registry(
    repository: str, tag: str | None, digest: str | None
) -> None:
    ref = ImageRef(None, repository, tag, digest)
    assert parse_image(str(ref)) == ref


@given(
    # A first component with no dot and not "localhost" is never a registry.
    PATH_COMPONENTS.filter(lambda c: "." not in c and c != "localhost"),
    st.lists(PATH_COMPONENTS, min_size=1, max_size=3).map("/".join),
    IMAGE_TAGS,
    DIGESTS,
)
def test_round_trip_multi_component_without_registry(
    first: str, rest: str, tag: str | None, digest: str | None
) -> None:
    ref = ImageRef(None, f"{first}/{rest}", tag, digest)
    assert parse_image(str(ref)) == ref


# --- rewrite_with_mirrors ------------------------------------------------------------------

GATEWAY = parse_image("ghcr.io/nvidia/openshell/gateway:0.0.109")


@pytest.mark.parametrize(
    "mirrors",
    [
        {"ghcr.io": "mirror.internal/ghcr", "ghcr.io/nvidia": "registry.internal:5000/nvidia"},
        {"ghcr.io/nvidia": "registry.internal:5000/nvidia", "ghcr.io": "mirror.internal/ghcr"},
    ],
)
def test_longest_prefix_wins_in_any_order(mirrors: dict[str, str]) -> None:
    assert rewrite_with_mirrors(GATEWAY, mirrors) == ImageRef(
        "registry.internal:5000", "nvidia/openshell/gateway", "0.0.109", None
    )


def test_shorter_prefix_applies_where_longer_does_not() -> None:
    mirrors = {"ghcr.io": "mirror.internal/ghcr", "ghcr.io/nvidia": "registry.internal/nv"}
    image = parse_image("ghcr.io/other/app:2")
    assert rewrite_with_mirrors(image, mirrors) == ImageRef(
        "mirror.internal", "ghcr/other/app", "2", None
    )


def test_prefix_matches_only_on_slash_boundaries() -> None:
    image = parse_image("ghcr.io/nvidiax/openshell/gateway:1")
    assert rewrite_with_mirrors(image, {"ghcr.io/nvidia": "registry.internal/nvidia"}) == image
    assert rewrite_with_mirrors(image, {"ghcr.i": "registry.internal/x"}) == image


def test_prefix_equal_to_the_whole_name_matches() -> None:
    image = parse_image("ghcr.io/nvidia/openshell/gateway:1")
    mirrors = {"ghcr.io/nvidia/openshell/gateway": "registry.internal/gw"}
    assert rewrite_with_mirrors(image, mirrors) == ImageRef("registry.internal", "gw", "1", None)


def test_tag_and_digest_are_kept() -> None:
    image = parse_image(f"ghcr.io/nvidia/openshell/gateway:0.0.109@{SHA256}")
    rewritten = rewrite_with_mirrors(image, {"ghcr.io": "registry.internal:5000"})
    assert rewritten == ImageRef(
        "registry.internal:5000", "nvidia/openshell/gateway", "0.0.109", SHA256
    )
    assert str(rewritten) == f"registry.internal:5000/nvidia/openshell/gateway:0.0.109@{SHA256}"


def test_no_match_leaves_the_image_unchanged() -> None:
    assert rewrite_with_mirrors(GATEWAY, {"quay.io": "registry.internal"}) == GATEWAY
    assert rewrite_with_mirrors(GATEWAY, {}) == GATEWAY


# --- resolve_image -------------------------------------------------------------------------

OVERRIDE = "quay.io/team-a/gateway:1"
STACK = "registry.example.com/openshell/gateway:2"
BUILTIN = "ghcr.io/nvidia/openshell/gateway:0.0.109"


@pytest.mark.parametrize(
    ("override", "stack_default", "expected"),
    [
        (OVERRIDE, STACK, OVERRIDE),
        (OVERRIDE, None, OVERRIDE),
        (None, STACK, STACK),
        (None, None, BUILTIN),
    ],
)
def test_resolve_precedence(override: str | None, stack_default: str | None, expected: str) -> None:
    assert (
        resolve_image(
            override=override, stack_default=stack_default, builtin_default=BUILTIN, mirrors={}
        )
        == expected
    )


MIRRORS = {
    "quay.io": "mirror.internal/quay",
    "registry.example.com": "mirror.internal/example",
    "ghcr.io": "mirror.internal/ghcr",
}


@pytest.mark.parametrize(
    ("override", "stack_default", "expected"),
    [
        (OVERRIDE, STACK, "mirror.internal/quay/team-a/gateway:1"),
        (None, STACK, "mirror.internal/example/openshell/gateway:2"),
        (None, None, "mirror.internal/ghcr/nvidia/openshell/gateway:0.0.109"),
    ],
)
def test_resolve_applies_mirrors_to_the_chosen_image(
    override: str | None, stack_default: str | None, expected: str
) -> None:
    assert (
        resolve_image(
            override=override,
            stack_default=stack_default,
            builtin_default=BUILTIN,
            mirrors=MIRRORS,
        )
        == expected
    )


def test_resolve_rejects_an_invalid_override_even_with_valid_defaults() -> None:
    with pytest.raises(ImageReferenceError) as info:
        resolve_image(
            override="quay.io/Team/gw:1", stack_default=STACK, builtin_default=BUILTIN, mirrors={}
        )
    assert str(info.value) == grammar_message("quay.io/Team/gw:1")


# --- registry ports ------------------------------------------------------------------------


def port_message(reference: str, port: str) -> str:
    return f"image reference {reference!r}: registry port {port} is out of range (1-65535)"


@pytest.mark.parametrize(
    ("reference", "port"),
    [
        ("localhost:0/app", "0"),
        ("registry.internal:65536/app:1", "65536"),
        ("registry.internal:99999/nvidia/gateway@" + SHA256, "99999"),
        ("[fd00::1]:0/team/app", "0"),
        ("[::1]:70000/x", "70000"),
        ("mirror:000/x", "000"),
        ("registry.internal:" + "9" * 40 + "/app", "9" * 40),
    ],
)
def test_registry_port_out_of_range_is_rejected(reference: str, port: str) -> None:
    assert error_of(reference) == port_message(reference, port)


@pytest.mark.parametrize(
    ("reference", "registry"),
    [
        ("localhost:1/app", "localhost:1"),
        ("registry.internal:65535/app", "registry.internal:65535"),
        ("[fd00::1]:443/app", "[fd00::1]:443"),
        ("mirror:080/x", "mirror:080"),  # leading zeros: still port 80
        ("[fd00::1]/app", "[fd00::1]"),
    ],
)
def test_registry_port_in_range_is_accepted(reference: str, registry: str) -> None:
    assert parse_image(reference).registry == registry


@given(REGISTRY_HOSTS, st.integers(min_value=65536, max_value=10**12))
def test_every_port_above_65535_is_rejected(host: str, port: int) -> None:
    reference = f"{host}:{port}/app:1"
    assert error_of(reference) == port_message(reference, str(port))


@given(REGISTRY_HOSTS, st.integers(min_value=1, max_value=65535))
def test_every_port_from_1_to_65535_is_accepted(host: str, port: int) -> None:
    assert parse_image(f"{host}:{port}/app:1").registry == f"{host}:{port}"


# --- registry hosts compare case-insensitively -----------------------------------------------

MIRROR = {"ghcr.io/nvidia": "registry.internal:5000/nvidia"}


@pytest.mark.parametrize(
    "reference",
    ["GHCR.IO/nvidia/openshell/gateway:1", "Ghcr.Io/nvidia/openshell/gateway:1"],
)
def test_an_uppercase_registry_host_still_takes_the_mirror(reference: str) -> None:
    assert rewrite_with_mirrors(parse_image(reference), MIRROR) == ImageRef(
        "registry.internal:5000", "nvidia/openshell/gateway", "1", None
    )


def test_an_uppercase_mirror_key_matches_a_lowercase_image() -> None:
    mirrors = {"GHCR.io/nvidia": "registry.internal:5000/nvidia"}
    assert rewrite_with_mirrors(GATEWAY, mirrors) == ImageRef(
        "registry.internal:5000", "nvidia/openshell/gateway", "0.0.109", None
    )


def test_the_longest_prefix_wins_whatever_the_case() -> None:
    mirrors = {"ghcr.io/nvidia": "mirror.internal/nv", "GHCR.IO/nvidia/openshell": "registry/os"}
    image = parse_image("Ghcr.io/nvidia/openshell/gateway:1")
    assert str(rewrite_with_mirrors(image, mirrors)) == "registry/os/gateway:1"


def test_an_unmirrored_uppercase_registry_host_is_kept_as_written() -> None:
    image = parse_image("Quay.IO/team/app:1")
    assert rewrite_with_mirrors(image, MIRROR) == image


@given(
    st.lists(st.booleans(), min_size=len("ghcr.io"), max_size=len("ghcr.io")),
    st.lists(PATH_COMPONENTS, min_size=1, max_size=3).map("/".join),
)
def test_a_mirror_applies_to_every_casing_of_its_registry_host(
    upper: list[bool], path: str
) -> None:
    host = "".join(c.upper() if u else c for c, u in zip("ghcr.io", upper, strict=True))
    image = parse_image(f"{host}/nvidia/{path}:2")
    assert str(rewrite_with_mirrors(image, MIRROR)) == f"registry.internal:5000/nvidia/{path}:2"

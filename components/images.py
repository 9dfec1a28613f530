"""Container image references: grammar, precedence and registry mirrors
(docs/upstream-differences.md, "4. Image references are checked").

The grammar is the OCI distribution reference grammar (distribution/reference): an optional
registry host (with port), a lowercase repository path, an optional tag and an optional
digest. Whitespace and shell metacharacters are named explicitly in the error.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

_PATH_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_PORT = r"(?::[0-9]+)?"
# distribution/reference: the first component is a registry only when it looks like one (a
# dot, a port, localhost or an IPv6 literal); otherwise "team/app" is a repository path.
_DOMAIN = (
    rf"(?:localhost{_PORT}|\[[0-9a-fA-F:]+\]{_PORT}"
    rf"|{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})+{_PORT}|{_DOMAIN_COMPONENT}:[0-9]+)"
)
_TAG = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"  # ASCII only, unlike Python's \w
_DIGEST = r"sha256:[a-f0-9]{64}|sha512:[a-f0-9]{128}"
_REFERENCE = re.compile(
    rf"(?:(?P<registry>{_DOMAIN})/)?"
    rf"(?P<repository>{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*)"
    rf"(?::(?P<tag>{_TAG}))?"
    rf"(?:@(?P<digest>{_DIGEST}))?"
)
REFERENCE_PATTERN = (
    f"^(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*(?::{_TAG})?(?:@(?:{_DIGEST}))?$"
)
"""The grammar of :data:`_REFERENCE` as one anchored pattern without named groups (a JSON
Schema ``pattern``: ECMA-262 reads it as Python does)."""
_NAME_MAX = 255
_REGISTRY_PORT = re.compile(r":([0-9]+)$")  # after the host or the bracketed IPv6 literal
_PORT_MAX = 65535
_FORBIDDEN = {
    ";": "';'",
    "&": "'&'",
    "|": "'|'",
    "`": "a backtick",
    "$": "'$'",
    "<": "'<'",
    ">": "'>'",
    "(": "'('",
    ")": "')'",
    "\\": "a backslash",
    '"': "a double quote",
    "'": "a single quote",
}

DEFAULT_GATEWAY_IMAGE = "ghcr.io/nvidia/openshell/gateway:0.0.109"
DEFAULT_SUPERVISOR_IMAGE = "ghcr.io/nvidia/openshell/supervisor:0.0.109"
DEFAULT_SANDBOX_IMAGE = "ghcr.io/nvidia/openshell-community/sandboxes/base:latest"


class ImageReferenceError(ValueError):
    """An image reference that does not follow the grammar; the message is for people."""


@dataclass(frozen=True, slots=True)
class ImageRef:
    """A parsed image reference; ``str()`` gives back the canonical text."""

    registry: str | None
    repository: str
    tag: str | None = None
    digest: str | None = None

    @property
    def name(self) -> str:
        """Registry and repository: the part registry mirrors match on."""
        return f"{self.registry}/{self.repository}" if self.registry else self.repository

    def __str__(self) -> str:
        text = self.name
        if self.tag is not None:
            text += f":{self.tag}"
        if self.digest is not None:
            text += f"@{self.digest}"
        return text


def parse_image(reference: str) -> ImageRef:
    """Parse ``reference`` or raise ImageReferenceError saying what is wrong with it."""
    if not reference:
        raise ImageReferenceError("image reference must not be empty")
    if any(ch.isspace() for ch in reference):
        raise ImageReferenceError(f"image reference {reference!r} contains whitespace")
    bad = sorted({label for ch, label in _FORBIDDEN.items() if ch in reference})
    if bad:
        raise ImageReferenceError(
            f"image reference {reference!r} contains shell metacharacters: {', '.join(bad)}"
        )
    match = _REFERENCE.fullmatch(reference)
    if match is None:
        raise ImageReferenceError(
            f"image reference {reference!r} is not [registry[:port]/]repository[:tag][@digest]"
            " with a lowercase repository path"
        )
    ref = ImageRef(
        registry=match["registry"],
        repository=match["repository"],
        tag=match["tag"],
        digest=match["digest"],
    )
    if len(ref.name) > _NAME_MAX:
        raise ImageReferenceError(
            f"image reference {reference!r}: name is longer than {_NAME_MAX} characters"
        )
    port = _REGISTRY_PORT.search(ref.registry or "")
    # The grammar takes any digits; a TCP port is 1-65535. Length first: int() of thousands
    # of digits is refused by Python itself.
    digits = port[1].lstrip("0") if port is not None else ""
    if port is not None and (len(digits) > 5 or not 1 <= int(digits or "0") <= _PORT_MAX):
        raise ImageReferenceError(
            f"image reference {reference!r}: registry port {port[1]} is out of range"
            f" (1-{_PORT_MAX})"
        )
    return ref


def rewrite_with_mirrors(image: ImageRef, mirrors: Mapping[str, str]) -> ImageRef:
    """Apply registry mirrors: the longest prefix of the image name (on ``/`` boundaries) wins.

    Prefixes match the name as written: ``nginx`` is not expanded to
    ``docker.io/library/nginx``, so mirror such images by the name the declarations use. The
    registry host compares case-insensitively, as DNS does (``GHCR.io/x`` is ``ghcr.io/x``);
    the repository path is lowercase by the grammar, so the whole name is compared lowercased.

    ``{"ghcr.io/nvidia": "registry.internal:5000/nvidia"}`` turns
    ``ghcr.io/nvidia/openshell/gateway:1`` into
    ``registry.internal:5000/nvidia/openshell/gateway:1``.
    """
    name = image.name
    folded = name.lower()  # ASCII by the grammar: the same length as ``name``
    best: str | None = None
    for prefix in mirrors:
        key = prefix.lower()
        if (folded == key or folded.startswith(key + "/")) and (
            best is None or len(prefix) > len(best)
        ):
            best = prefix
    if best is None:
        return image
    rewritten = parse_image(mirrors[best] + name[len(best) :])
    return ImageRef(rewritten.registry, rewritten.repository, image.tag, image.digest)


def resolve_image(
    *,
    override: str | None,
    stack_default: str | None,
    builtin_default: str,
    mirrors: Mapping[str, str],
) -> str:
    """Per-gateway field > stack default > built-in default, then the cluster's mirrors.

    ``stack_default`` is the gateway's release image when it has a release
    (gatewayctl.resolve.stack).
    """
    chosen = override or stack_default or builtin_default
    return str(rewrite_with_mirrors(parse_image(chosen), mirrors))

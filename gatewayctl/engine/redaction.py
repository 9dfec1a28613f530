"""Redaction of a render: every secret value becomes :data:`REDACTED` (keys kept), and
scrubbing (:class:`Scrubber`, the diff's second guard): every value of a render that equals a
plaintext secret becomes :data:`REDACTED`, by value where values are, never by substring.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import yaml

from gatewayctl import lazy
from gatewayctl.inputs.secrets import REDACTED
from gatewayctl.inputs.yamlwrite import dump_yaml

# --- redaction ------------------------------------------------------------------------------


def _mask(value: Any, is_secret: Callable[[Any], bool]) -> Any:
    if is_secret(value):
        return _mask(value["value"], is_secret)
    if isinstance(value, dict):
        return {k: _mask(v, is_secret) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v, is_secret) for v in value]
    return None if value is None else REDACTED


def _clean(value: Any, is_secret: Callable[[Any], bool]) -> Any:
    # A secret's wire form is a mapping (``offline.secret``): nothing else is asked. A string,
    # the most common value, is kept without a call.
    if isinstance(value, dict):
        if is_secret(value):
            return _mask(value["value"], is_secret)
        return {k: v if type(v) is str else _clean(v, is_secret) for k, v in value.items()}
    if isinstance(value, list):
        return [v if type(v) is str else _clean(v, is_secret) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def clean(value: Any) -> Any:
    """Redact secrets (keys kept), turn whole floats back into ints (the wire has only doubles)."""
    # Imported here, not at the top: the wire form of a secret is a Pulumi SDK internal that
    # only the offline engine reads, and the diff (which imports this module for its
    # Scrubber) must not load the SDK to compare two renders.

    return _clean(value, lazy.offline.is_secret)


# --- scrubbing ------------------------------------------------------------------------------
#
# The render already redacts every secret. The diff report also replaces any value of either
# render that equals a plaintext `clusterSecrets` value, before anything is compared or
# formatted: never by substring of the report's text, which mangled it (`Config` as a password
# turned `kind: ConfigMap` into `[secret]Map`) and told readers the password by where it
# blanked.


MANIFESTS = "manifests/"
"""The prefix of the rendered Kubernetes object files."""

_UNESCAPED = re.compile(r"[A-Za-z0-9_./:@+=,;~%^&*!?#$<>()\[\]{}|-]+")
"""Characters that YAML and JSON write as they are in any quoting style (not a space: a long
scalar may be folded there)."""
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class Scrubber:
    """Replaces, in rendered data, every value that equals a secret with the render's marker.

    By value, where values are: a string scalar of a manifest or of the plan whose text equals
    a secret (surrounding white space aside) becomes :data:`REDACTED`; so does a path
    component of a manifest file (cluster, namespace) that equals one. A secret of several
    lines is also replaced where it occurs inside a longer value (a block of lines does not
    occur by chance). Keys, and values that merely contain a one-line secret, are left alone:
    substring replacement mangled the report (``Config`` → ``[secret]Map``) and told readers
    the password by where it blanked. A file is parsed only when its text holds a fragment of
    some secret; one that changes is written again as the render writes it.
    """

    def __init__(self, secrets: Iterable[str]) -> None:
        self.whole = frozenset(s.strip() for s in secrets if s.strip())
        self.blocks = sorted(
            (s for s in self.whole if len([ln for ln in s.splitlines() if ln.strip()]) > 1),
            key=lambda s: (-len(s), s),
        )
        probes = [max(_UNESCAPED.findall(s), key=len, default="") for s in self.whole]
        self.always = any(not probe.strip() for probe in probes)
        self.probes = sorted({p for p in probes if p.strip()}, key=len, reverse=True)

    def __bool__(self) -> bool:
        return bool(self.whole)

    def might_hold(self, text: str) -> bool:
        """False only when no secret can be a value in ``text`` (no fragment of one is in it)."""
        return bool(self.whole) and (self.always or any(p in text for p in self.probes))

    def text(self, value: str) -> str:
        if value.strip() in self.whole:
            return REDACTED
        for block in self.blocks:
            if block in value:
                value = value.replace(block, REDACTED)
        return value

    def value(self, value: Any) -> Any:
        """``value`` (parsed YAML or JSON) with every string equal to a secret replaced."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {key: self.value(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.value(item) for item in value]
        return value

    def path(self, path: str) -> str:
        return "/".join(self.text(part) if part else part for part in path.split("/"))

    def manifest(self, text: str) -> str:
        """A rendered manifest file, scrubbed; the same text when nothing in it is a secret."""
        if not self.might_hold(text):
            return text
        try:
            document = yaml.load(text, Loader=_SafeLoader)  # the C or Python *safe* loader
        except yaml.YAMLError:
            return self.free_text(text)
        scrubbed = self.value(document)
        if scrubbed == document:
            return text
        if not isinstance(scrubbed, dict):
            return self.free_text(text)
        return dump_yaml(scrubbed)

    def plan(self, plan: dict[str, Any], text: str) -> dict[str, Any]:
        scrubbed: dict[str, Any] = self.value(plan) if self.might_hold(text) else plan
        return scrubbed

    def free_text(self, text: str) -> str:
        """Text with no structure (a message, an unparsable file): each secret is replaced
        where it stands as a token of its own, never inside a longer word or name."""
        for secret in sorted(self.whole, key=lambda s: (-len(s), s)):
            pattern = rf"(?<![\w.\-]){re.escape(secret)}(?![\w.\-])"
            text = re.sub(pattern, lambda _: REDACTED, text)
        return text

    def files(self, files: Mapping[str, str]) -> dict[str, str]:
        """The manifest files of a side, scrubbed (paths included); other files as they are."""
        if not self:
            return dict(files)
        return {
            (self.path(path) if path.startswith(MANIFESTS) else path): (
                self.manifest(text) if path.startswith(MANIFESTS) else text
            )
            for path, text in files.items()
        }


def scrub(text: str, secrets: Iterable[str]) -> str:
    """Free text (an error message) with each secret replaced where it stands as a token."""
    return Scrubber(secrets).free_text(text)

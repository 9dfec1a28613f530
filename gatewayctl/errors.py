"""The tool's errors, in one hierarchy, and input problems reported all at once as
``path: field: problem``, or ``path:line:column: field: problem`` where the field's place in
its file is known (``gatewayctl.inputs.locations``).

``GatewayctlError`` is the base of every error the tool reports itself; ``gatewayctl.cli.main.main``
is the one place each kind becomes an exit code:

- ``InvalidInputError``: declarations, stack config or an output path that cannot be used,
  every problem listed; exit 2, nothing written.
- ``UsageError``: a command line that cannot be used as given (arguments that conflict, a
  ``--base`` ref that names no commit); exit 2, the message on one line.
- ``ToolError``: the tool could not finish for a reason it names (git, the base render of a
  diff); exit 1, the message on one line.

Any other exception is one the tool did not expect: exit 1, one line naming its type, and the
traceback with ``--debug`` (or ``GATEWAYCTL_DEBUG=1``) for a bug report.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gatewayctl import lazy

if TYPE_CHECKING:
    from pydantic import ValidationError


@dataclass(frozen=True, order=True, slots=True)
class Problem:
    """One thing wrong with one field of one file.

    Field and message are made safe on the way in (:func:`safe`): they quote input, so the
    secret parts of a URL are hidden and a value of megabytes is not echoed whole.
    """

    path: str
    field: str
    message: str
    line: int | None = dataclasses.field(default=None, compare=False)
    """Where in ``path`` (1-based line and column), when known: the YAML reader's own problems
    carry it, the others get it from :func:`gatewayctl.inputs.locations.locate`. Not part of what
    makes two problems the same, nor of their order."""
    column: int | None = dataclasses.field(default=None, compare=False)
    at_key: bool = dataclasses.field(default=False, compare=False)
    """The problem is the key itself (an unknown field): it is located at the key, not at its
    value."""

    located_as: str = dataclasses.field(default="", compare=False, repr=False)
    """The field as given, when :func:`safe` changed it (a key under ``clusterSecrets`` hidden,
    a path cut): what :func:`gatewayctl.inputs.locations.locate` looks up, for a place only;
    never printed."""

    def __post_init__(self) -> None:
        shown = safe(self.field, field=True)
        if shown != self.field and not self.located_as:
            object.__setattr__(self, "located_as", self.field)
        object.__setattr__(self, "field", shown)
        object.__setattr__(self, "message", safe(self.message))

    @property
    def where(self) -> str:
        """``path``, or ``path:line:column`` when the place is known."""
        if self.line is None:
            return self.path
        return f"{self.path}:{self.line}" + (f":{self.column}" if self.column is not None else "")

    def __str__(self) -> str:
        parts = [self.where, self.field, self.message] if self.field else [self.where, self.message]
        return ": ".join(printable(part) for part in parts)


def annotation(problem: Problem, file: str | None) -> str:
    """``problem`` as a GitHub Actions workflow command, ``::error file=F,line=L,col=C::field:
    problem``, shown on the file's line in the pull request; without ``file`` (no file of the
    workspace) the whole problem is the message. The values are escaped as the runner reads
    them (actions/toolkit packages/core/src/command.ts: ``escapeData``, ``escapeProperty``)."""
    if file is None:
        return f"::error::{_command_data(printable(str(problem)))}"
    properties = {"file": file, "line": problem.line, "col": problem.column}
    shown = ",".join(
        f"{key}={_command_property(printable(str(value)))}"
        for key, value in properties.items()
        if value is not None
    )
    text = f"{problem.field}: {problem.message}" if problem.field else problem.message
    return f"::error {shown}::{_command_data(printable(text))}"


def _command_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _command_property(text: str) -> str:
    return _command_data(text).replace(":", "%3A").replace(",", "%2C")


def printable(text: str) -> str:
    """Non-printable characters as escapes: keys and file names come from input, and a newline
    or an escape sequence must not forge another "error:" line or reach the terminal."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


QUOTED_LIMIT = 128
"""Characters of a quoted value kept in a message, then an ellipsis: enough for an image
reference with its digest, not for a value of megabytes."""
RUN_LIMIT = 200
"""Characters kept of an unquoted run without whitespace (a field path, an unquoted value)."""
TEXT_LIMIT = 2_000
"""Characters kept of a whole field or message."""
ELLIPSIS = "\u2026"

# A value quoted by repr(): opens after a non-word character (so the apostrophe of "stack's"
# opens nothing) and closes at the next unescaped quote of the same kind, or at the end of a
# text already cut.
_QUOTED = re.compile(
    r"""(?<!\w)(?P<q>['"])(?P<body>(?:(?!(?P=q))[^\\]|\\.)*)(?P<close>(?P=q)|\\?\Z)""",
    re.DOTALL,
)
_RUN = re.compile(rf"\S{{{RUN_LIMIT + 1},}}")


def shorten(text: str) -> str:
    """``text`` with every quoted value cut to ``QUOTED_LIMIT`` characters, every other run
    without whitespace to ``RUN_LIMIT`` and the whole to ``TEXT_LIMIT``, each cut marked with
    an ellipsis. Text within the limits is returned unchanged."""
    if len(text) <= QUOTED_LIMIT:
        return text
    # Bound the cost of the patterns below; the end is cut anyway.
    text = text[: 4 * TEXT_LIMIT]

    def quoted(match: re.Match[str]) -> str:
        body = match["body"]
        if len(body) <= QUOTED_LIMIT:
            return match[0]
        return match["q"] + body[:QUOTED_LIMIT] + ELLIPSIS + match["q"]

    text = _QUOTED.sub(quoted, text)
    text = _RUN.sub(lambda match: match[0][:RUN_LIMIT] + ELLIPSIS, text)
    return text if len(text) <= TEXT_LIMIT else text[:TEXT_LIMIT] + ELLIPSIS


def safe(text: str, *, field: bool = False) -> str:
    """``text`` as the tool may show it: every URL without its user info, query and fragment
    (:func:`redact_urls`), every scheme-less ``user:password@host`` without its user info
    (:func:`redact_userinfo`), every key under ``clusterSecrets`` that is no name the tool
    knows hidden (:func:`redact_secret_keys`; ``field``: ``text`` is a whole field path, which
    may hold white space), then cut to the limits (:func:`shorten`). Every problem (its field
    and message: the lines on stderr, the ``-o json|yaml`` problems document, the GitHub
    annotations) and every one-line error passes here, so no field, whatever its check quotes,
    can echo a secret."""
    return shorten(redact_userinfo(redact_secret_keys(redact_urls(text), whole=field)))


HIDDEN = "[secret]"
"""What stands for a hidden part of a URL (as the render's marker stands for a secret)."""

# ``scheme://`` (RFC 3986 §3.1) and what follows it: within a quoted value, the rest of the
# value, white space included (a value with a space is still quoted whole); elsewhere, up to
# white space, a quote or a bracket (a rule written out, ``ssh://[user@]host``, is no URL).
_SCHEME = re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://")
_UNQUOTED_URL = re.compile(_SCHEME.pattern + r"""[^\s'"\[\]]*""")


def _hide(rest: str) -> str:
    """What follows ``scheme://``, with the user info, the query and the fragment hidden.

    Hides more rather than less for a malformed URL: the user info is everything before the
    last ``@`` ahead of the query or fragment (a ``/`` in a password does not end it), and
    the query or fragment is everything from the first ``?`` or ``#`` on."""
    cut = min((i for i in (rest.find("?"), rest.find("#")) if i >= 0), default=len(rest))
    at = rest.rfind("@", 0, cut)
    head, tail = rest[:cut], rest[cut:]
    if at >= 0:
        head = f"{HIDDEN}@{head[at + 1 :]}"
    if tail:
        tail = f"{tail[0]}{HIDDEN}"
    return head + tail


def _redact_run(text: str, pattern: re.Pattern[str]) -> str:
    def hide(match: re.Match[str]) -> str:
        scheme = _SCHEME.match(match[0])
        assert scheme is not None
        return scheme[0] + _hide(match[0][scheme.end() :])

    return pattern.sub(hide, text)


def redact_urls(text: str) -> str:
    """``text`` with the user info, query and fragment of every URL in it replaced by
    :data:`HIDDEN` (``https://[secret]@vault.example.com/v1?[secret]``): they carry
    passwords and tokens. A value quoted by ``repr`` is a URL from its ``scheme://`` to its
    closing quote."""
    if "://" not in text:
        return text
    parts: list[str] = []
    last = 0
    for match in _QUOTED.finditer(text):
        parts.append(_redact_run(text[last : match.start()], _UNQUOTED_URL))
        body = match["body"]
        found = _SCHEME.search(body)
        if found is not None:
            body = body[: found.end()] + _hide(body[found.end() :])
        parts.append(match["q"] + body + match["close"])
        last = match.end()
    parts.append(_redact_run(text[last:], _UNQUOTED_URL))
    return "".join(parts)


# ``user:password@host`` without a scheme (a URL's is :func:`redact_urls`'): from the start of
# a token (not inside a path, ``registry/repo:tag@...``) to the last ``@`` before white space
# or a quote, followed by a host; an image digest (``name:tag@sha256:<hex>``) is no host.
_USERINFO = re.compile(
    r"""(?<![^\s'"(\[=,;])(?P<user>[^\s'"@/:\[\]()=,;]+):(?!//)[^\s'"]*@"""
    r"""(?=[A-Za-z0-9\[])(?![a-z0-9]+(?:[+._-][a-z0-9]+)*:[0-9a-fA-F]{32,})"""
)


def redact_userinfo(text: str) -> str:
    """``text`` with the user info of every scheme-less ``user:password@host`` replaced by
    :data:`HIDDEN` (``[secret]@db.example.com``): a password pasted where a host belongs."""
    if "@" not in text:
        return text
    return _USERINFO.sub(f"{HIDDEN}@", text)


SECRETS_KEY = "clusterSecrets"
"""The stack file's secret config object (``gatewayctl.inputs.yamlfile``)."""
SECRET_NAMES = frozenset({"dbAdminPassword", "kubeconfig", "keycloakAdminClientSecret"})
"""The keys of one cluster's secrets (``gatewayctl.inputs.secrets.ClusterSecrets``): the only
keys below a cluster under ``clusterSecrets`` a message may show."""
_SECRETS_PATH = re.compile(rf"(?<![\w-]){SECRETS_KEY}\.")
_CLUSTER_NAME = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")


def redact_secret_keys(text: str, *, whole: bool = False) -> str:
    """``text`` with every key under ``clusterSecrets`` that is no name the tool knows replaced
    by :data:`HIDDEN`, and the rest of its path with it: a secret pasted as a key (where a
    value belongs, or for a cluster's name) is as secret as a value. Shown are a cluster's name
    (a DNS label, as every cluster's is) and a cluster's secret names (:data:`SECRET_NAMES`).
    A path ends at white space or a quote, or with ``whole`` (a problem's field) at the end
    of ``text``."""
    if SECRETS_KEY not in text:
        return text
    parts: list[str] = []
    last = 0
    for match in _SECRETS_PATH.finditer(text):
        if match.start() < last:
            continue
        end = len(text) if whole else _path_end(text, match.end())
        parts += [text[last : match.end()], _shown_keys(text[match.end() : end])]
        last = end
    return "".join(parts) + text[last:]


def _path_end(text: str, start: int) -> int:
    ends = [i for i in (text.find(c, start) for c in (": ", " ", "\t", "\n", "'", '"')) if i >= 0]
    return min(ends, default=len(text))


def _secret_name(key: str) -> bool:
    """One of :data:`SECRET_NAMES`, or a misspelling of one (``dbAdminPasword``), which the
    problem names with its suggestion: a pasted secret is never this close to a name."""
    # only where a clusterSecrets path is shown

    return key in SECRET_NAMES or bool(lazy.difflib.get_close_matches(key, SECRET_NAMES, 1, 0.85))


def _shown_keys(path: str) -> str:
    keys = path.split(".")
    for depth, key in enumerate(keys):
        known = _CLUSTER_NAME.fullmatch(key) if depth == 0 else depth == 1 and _secret_name(key)
        if not known:
            return ".".join([*keys[:depth], HIDDEN])
    return path


class GatewayctlError(Exception):
    """An error the tool reports itself (see the module docstring for the kinds)."""


class InvalidInputError(GatewayctlError):
    """Declarations or stack config that cannot be used; carries every problem found."""

    def __init__(self, problems: Iterable[Problem]):
        self.problems = sorted(set(problems))
        super().__init__("\n".join(str(p) for p in self.problems))


class UsageError(GatewayctlError):
    """The command line cannot be used as given; the message says why, on one line."""


class ToolError(GatewayctlError):
    """The tool could not finish for a reason it names; the message holds no secret."""


def from_validation_error(
    path: str,
    error: ValidationError,
    prefix: str = "",
    *,
    model: type | None = None,
    document: object = None,
) -> list[Problem]:
    """Turn pydantic's errors into problems whose field is the dotted YAML path.

    With the ``model`` validated and the ``document`` it was given, an unknown field names the
    field it most likely meant (``unknown field; did you mean 'vault'?``) and the problems of
    that field, absent because of the typo, are left out (:mod:`gatewayctl.typos`)."""
    items = error.errors(include_url=False)
    meant: dict[tuple[object, ...], str] = {}
    if model is not None:
        suggestions = lazy.typos.Suggestions(model, document)
        for item in items:
            if item["type"] == "extra_forbidden" and "[key]" not in item["loc"]:
                found = suggestions.meant(item["loc"])
                if found is not None:
                    meant[item["loc"]] = found
    # Problems of a field a typo left out: the typo's "did you mean" names it. Each problem
    # looks its own field and parents up, whatever the number of typos.
    absent = {(*loc[:-1], name) for loc, name in meant.items()}
    problems = []
    for item in items:
        loc = item["loc"]
        if any(loc[:end] in absent for end in range(1, len(loc) + 1)):
            continue
        parts = [prefix] if prefix else []
        parts += [str(part) for part in loc if part not in {"__root__", "[key]"}]
        field = ".".join(parts)
        message = item["msg"].removeprefix("Value error, ")
        if "[key]" in loc:
            message = f"key: {message}"
        if item["type"] in {"missing", "extra_forbidden"}:
            message = {"missing": "required field is missing", "extra_forbidden": "unknown field"}[
                item["type"]
            ]
        if loc in meant:
            message += f"; did you mean {meant[loc]!r}?"
        at_key = item["type"] == "extra_forbidden" or "[key]" in loc
        problems.append(Problem(path, field, message, at_key=at_key))
    return problems

"""The base of every input model and the field types the stack config and the declarations
share (docs/declaring.md): DNS labels, image references, release names, project paths, label keys
and values.

Models are the edge: frozen, unknown fields forbidden, camelCase aliases matching the YAML.
Rules that involve one field live with the models; rules across files live in
``gatewayctl.resolve.stack``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from components import naming
from components.hostnames import check_dns_name
from components.images import REFERENCE_PATTERN, parse_image


class Model(BaseModel):
    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        populate_by_name=False,
        strict=True,
        hide_input_in_errors=True,
        # Attribute docstrings are the fields' descriptions in the JSON Schema
        # (gatewayctl.inputs.schema).
        use_attribute_docstrings=True,
    )


@dataclass(frozen=True, eq=False)  # hashed by identity: typing hashes Annotated metadata
class JsonSchema:
    """JSON Schema keywords for a field type, beside the validator that enforces its rule, so
    the schema editors read (``gatewayctl.inputs.schema``) flags the mistakes ``validate``
    refuses (issue 42 item 17). Each keyword is a necessary condition of the validator's rule:
    it never refuses what the validator accepts, and the validator stays the judge
    (tests/test_declaration_schema_corpus.py runs both on a corpus of mistakes and valid input).
    Patterns are anchored and use only what ECMA-262 and Python's ``re`` read alike."""

    keywords: Mapping[str, Any]

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {**handler(core_schema), **self.keywords}


def unnamed(pattern: str) -> str:
    """``pattern`` without Python's named groups (``(?P<name>``), which ECMA-262 writes
    another way: each becomes a plain group."""
    return re.sub(r"\(\?P<\w+>", "(?:", pattern)


DNS_LABEL_PATTERN = "^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?$"
"""A DNS-1123 label (``naming.is_dns1123_label``); with ``maxLength`` 63."""
DNS_LABEL_BODY = "[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?"
DNS_NAME_BODY = f"{DNS_LABEL_BODY}(?:\\.{DNS_LABEL_BODY})*"
DNS_NAME_PATTERN = f"^(?=.{{1,253}}$){DNS_NAME_BODY}$"
"""A lowercase RFC 1123 DNS name (``components.hostnames.check_dns_name``)."""


def dns_label_schema(max_length: int = naming.DNS1123_LABEL_MAX, **more: Any) -> JsonSchema:
    return JsonSchema({"pattern": DNS_LABEL_PATTERN, "maxLength": max_length, **more})


def none_of(names: Iterable[str], prefixes: Iterable[str] = ()) -> dict[str, Any]:
    """``not`` any of ``names`` and no name starting with one of ``prefixes``."""
    choices: list[dict[str, Any]] = [{"enum": sorted(names)}]
    starts = sorted(prefixes)
    if starts:
        choices.append({"pattern": "^(?:" + "|".join(re.escape(p) for p in starts) + ")"})
    return {"not": {"anyOf": choices} if len(choices) > 1 else choices[0]}


def _image(value: object) -> object:
    if isinstance(value, str):
        parse_image(value)
    return value


def check_dns_label(value: object) -> object:
    """A DNS-1123 label passes; any other string is a ValueError (other types: the str type
    reports them)."""
    if isinstance(value, str) and not naming.is_dns1123_label(value):
        raise ValueError(
            f"{value!r} is not a DNS-1123 label (lowercase a-z, 0-9, inner '-', at most 63)"
        )
    return value


RELEASE_NAME_MAX = 63
_RELEASE_NAME = re.compile(r"[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?")


def release_name_problem(value: str) -> str | None:
    """What keeps ``value`` from being a release name (``releases/<name>.yaml``), or None."""
    if len(value) > RELEASE_NAME_MAX or not _RELEASE_NAME.fullmatch(value):
        return (
            f"{value!r} is not a release name (lowercase a-z, 0-9, inner '.' and '-', at most"
            f" {RELEASE_NAME_MAX})"
        )
    return None


def _release_name(value: object) -> object:
    if isinstance(value, str) and (problem := release_name_problem(value)) is not None:
        raise ValueError(problem)
    return value


ImageReference = Annotated[
    str,
    BeforeValidator(_image),
    JsonSchema({"pattern": REFERENCE_PATTERN}),
]
ReleaseName = Annotated[
    str,
    BeforeValidator(_release_name),
    JsonSchema({"pattern": "^[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?$", "maxLength": RELEASE_NAME_MAX}),
]
"""The name of a release, ``releases/<name>.yaml`` (gatewayctl.inputs.release_files)."""
DnsLabel = Annotated[str, BeforeValidator(check_dns_label), dns_label_schema()]


PATH_MAX = 1024
"""Characters of a path field: a path inside the project is short."""
NAME_MAX = 255
"""Bytes of one path component (Linux NAME_MAX): a longer name is an OS error, not a file."""


def project_path_problem(path: str) -> str | None:
    """What keeps ``path`` from being a path inside the project, relative to its root; None
    when it is one. A path the OS would refuse to look up is a problem here, not an OS error
    later."""
    if not path:
        return "must not be empty"
    if any(not c.isprintable() for c in path):
        return f"{path!r} contains a control character"
    if len(path) > PATH_MAX:
        return f"is {len(path):,} characters long; at most {PATH_MAX}"
    pure = PurePosixPath(path)
    if any(len(part.encode("utf-8", "surrogatepass")) > NAME_MAX for part in pure.parts):
        return f"{path!r} has a component longer than {NAME_MAX} bytes"
    if pure.is_absolute() or ".." in pure.parts:
        return f"{path!r} must be a path inside the project, relative to its root"
    return None


def is_inside_project(path: str) -> bool:
    """A non-empty relative path that does not climb out of the project root."""
    return project_path_problem(path) is None


def _project_path(value: object) -> object:
    if isinstance(value, str) and (problem := project_path_problem(value)) is not None:
        raise ValueError(problem)
    return value


ProjectPath = Annotated[str, BeforeValidator(_project_path)]
"""A file or directory of the project, relative to its root (resolved symbolic links are
checked where the file is read)."""


_LABEL_NAME = re.compile(r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?")


def _label_key(value: object) -> object:
    if not isinstance(value, str):
        return value
    prefix, _, name = value.rpartition("/")
    if (
        not name
        or len(name) > naming.DNS1123_LABEL_MAX
        or not _LABEL_NAME.fullmatch(name)
        or (prefix and not _is_dns_name(prefix))
    ):
        raise ValueError(f"{value!r} is not a Kubernetes label key ([prefix/]name)")
    return value


def _is_dns_name(value: str) -> bool:
    try:
        check_dns_name(value)
    except ValueError:
        return False
    return True


def _label_value(value: object) -> object:
    if isinstance(value, str) and (
        len(value) > naming.DNS1123_LABEL_MAX or not _LABEL_NAME.fullmatch(value)
    ):
        raise ValueError(f"{value!r} is not a Kubernetes label value")
    return value


LabelKey = Annotated[
    str,
    BeforeValidator(_label_key),
    JsonSchema(
        {
            # [a DNS name /] a name of at most 63 (k8s.io/apimachinery IsQualifiedName)
            "pattern": f"^(?:(?=[^/]{{1,253}}/){DNS_NAME_BODY}/)?"
            "(?=[^/]{1,63}$)[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?$"
        }
    ),
]
LabelValue = Annotated[
    str,
    BeforeValidator(_label_value),
    JsonSchema({"pattern": "^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)?$", "maxLength": 63}),
]


@dataclass(frozen=True, eq=False)
class KeysByPattern:
    """A map whose keys have a pattern: pydantic writes the key's pattern as
    ``patternProperties``, which lets every other key through unchecked; this writes it as
    ``propertyNames`` (every key must match) with the values' schema for every key. ``key``,
    if given, is the keys' ``title``: the word a reference shows for a key (``<cluster>``)."""

    key: str | None = None

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = dict(handler(core_schema))
        ((pattern, values),) = schema.pop("patternProperties").items()
        names = {"type": "string", "pattern": pattern, **schema.pop("propertyNames", {})}
        return {
            **schema,
            "propertyNames": names if self.key is None else {**names, "title": self.key},
            "additionalProperties": values,
        }


Labels = Annotated[dict[LabelKey, LabelValue], KeysByPattern()]
"""Kubernetes labels: keys and values as the API server takes them."""

"""The stack file, ``Pulumi.<stack>.yaml``: its name, and the project's config keys it holds.

:func:`stack_file` is the one place the file's name is spelt; every message, glob and path
that names a stack file goes through it. The file is read with the strict YAML reader
(:mod:`gatewayctl.inputs.yamlfile`) like every other file of the project, and its project keys are
parsed into the :class:`StackConfig` model; the rules across its clusters and the
declarations are :mod:`gatewayctl.resolve.stack`'s, its secrets :mod:`gatewayctl.inputs.secrets`'.
"""

from __future__ import annotations

import dataclasses
import difflib
import fnmatch
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from components import naming
from gatewayctl.errors import InvalidInputError, Problem, from_validation_error
from gatewayctl.inputs.clusters import StackConfig
from gatewayctl.inputs.environment import KEY as ENVIRONMENT_KEY
from gatewayctl.inputs.environment import with_environment
from gatewayctl.inputs.yamlfile import SECRETS_KEY, parse_yaml_mapping, read_yaml_mapping
from gatewayctl.typos import closest

PROJECT = "hypershell-gateways"
STRING_KEYS = ("declarationsDir", "environment")
OBJECT_KEYS = ("images", "clusters", "selector", "unmanagedIgnore")
BOOL_KEYS = ("production", "selfHeal", "selfHealUnmanaged")
CONFIG_KEYS = STRING_KEYS + OBJECT_KEYS + BOOL_KEYS
STACK_FILE_SUFFIXES = (".yaml", ".yml")
"""Endings of a file named like a stack file: this tool reads the first; no output of it may
take a name with either (:mod:`gatewayctl.engine.write_guard`)."""


def stack_file(stack: str, suffix: str = STACK_FILE_SUFFIXES[0]) -> str:
    """The stack file of ``stack``, relative to the project root (``Pulumi.<stack>.yaml``).

    ``stack_file("*")`` is the pattern of every stack file."""
    return f"Pulumi.{stack}{suffix}"


def stacks_with_files(root: Path) -> list[str]:
    """The stack of every ``Pulumi.<stack>.yaml`` in ``root``, sorted; any name, valid or not
    (``Pulumi..yaml`` gives ``""``)."""
    prefix, suffix = stack_file("*").split("*")
    return sorted(p.name[len(prefix) : -len(suffix)] for p in root.glob(stack_file("*")))


STACK_NAME_RULE = "a DNS-1123 label (lowercase a-z, 0-9, inner '-', at most 63)"


def stack_name_problems(stack: str) -> list[Problem]:
    """A stack name is a Kubernetes-style name: it names files, directories and objects."""
    if naming.is_dns1123_label(stack):
        return []
    message = f"stack name {stack!r} is not {STACK_NAME_RULE}"
    return [Problem(stack_file(stack), "", message)]


T = TypeVar("T")

STACK_PATTERN = re.compile(r"[a-z0-9*](?:[-a-z0-9*]{0,61}[a-z0-9*])?")
"""A stack name, or a pattern with ``*`` (``fnmatch``) over names, which are DNS-1123 labels."""


def stacks_matching(pattern: Any, stacks: Sequence[str]) -> tuple[list[str], str | None]:
    """The ``stacks`` a settings file's entry takes (a name, or ``aws-*``), or why it takes
    none (the entry is no name or pattern; it matches no stack), for the caller's problem."""
    if not isinstance(pattern, str) or not STACK_PATTERN.fullmatch(pattern):
        return [], "is no stack name or pattern (a-z, 0-9, -, *)"
    matched = fnmatch.filter(stacks, pattern)
    if not matched:
        return [], f"matches no stack; the stacks here are {', '.join(stacks)}"
    return matched, None


def per_stack(
    settings: str,
    entries: Mapping[Any, Any],
    stacks: Sequence[str],
    parse: Callable[[Any, str, list[Problem]], T | None],
    what: str,
    problems: list[Problem],
) -> dict[str, T]:
    """A settings file's ``stacks`` mapping (a stack name or pattern → its entry) as each
    stack's parsed entry: ``parse(entry, field, problems)`` once per entry, given to every
    stack its key matches; a key that is no name or pattern, or matches no stack, and a stack
    two keys match (``what`` it would have twice) are problems."""
    found: dict[str, T] = {}
    for name, entry in entries.items():
        field = f"stacks.{name}"
        matched, why = stacks_matching(name, stacks)
        if why is not None:  # the key is the field: the problem need not repeat it
            problems.append(Problem(settings, field, why, at_key=True))
        parsed = parse(entry, field, problems)
        for stack in matched:
            if stack in found:
                message = f"stack {stack} has {what} from another entry already"
                problems.append(Problem(settings, field, message))
            elif parsed is not None:
                found[stack] = parsed
    return found


def unknown_keys(
    settings: str, item: Mapping[Any, Any], field: str, keys: Sequence[str]
) -> list[Problem]:
    """A problem at each key of ``item`` not among ``keys``."""
    expected = f"unknown key; expected one of {', '.join(keys)}"
    return [Problem(settings, f"{field}.{k}", expected, at_key=True) for k in item if k not in keys]


def all_stacks(root: Path) -> list[str]:
    """Every stack with a ``Pulumi.<stack>.yaml`` in the project root, sorted; only valid
    names (the others are :func:`stack_file_problems`)."""
    return [stack for stack in stacks_with_files(root) if naming.is_dns1123_label(stack)]


def stack_file_problems(root: Path) -> list[Problem]:
    """``Pulumi.<name>.yaml`` files whose name is no valid stack name (``Pulumi..yaml``)."""
    return [problem for stack in stacks_with_files(root) for problem in stack_name_problems(stack)]


def requested_stacks(root: Path, stack: str | None) -> list[str]:
    """The one ``stack`` named, or every stack when None; InvalidInputError when a name is
    not a stack here or, for every stack, when a stack file's name is no stack name."""
    known = all_stacks(root)
    problems = stack_name_problems(stack) if stack is not None else stack_file_problems(root)
    if not known and not problems:
        message = f"no {stack_file('<stack>')} here; is --root the project?"
        problems = [Problem(str(root), "", message)]
    elif stack is not None and not problems and stack not in known:
        message = f"no such stack; the stacks here are {', '.join(known)}"
        problems = [Problem(stack_file(stack), "", message)]
    if problems:
        raise InvalidInputError(problems)
    return known if stack is None else [stack]


def read_stack_config(
    root: Path, stack: str, text: str | None = None, *, merge: bool = True
) -> tuple[str, dict[str, Any]]:
    """Read ``Pulumi.<stack>.yaml`` (or ``text``, its content about to be written); return its
    path for messages and the project's keys, merged with the environment the stack names
    (``gatewayctl.inputs.environment``) unless ``merge`` is False (the file's own keys)."""
    display = stack_file(stack)
    try:
        if text is None:
            document = read_yaml_mapping(root / display, display)
        else:
            document = parse_yaml_mapping(text, display)
    except InvalidInputError as error:
        # A value's field as the other config problems name it: without the `config.` level.
        raise InvalidInputError(
            dataclasses.replace(p, field=p.field.removeprefix("config.")) for p in error.problems
        ) from None
    if "config" not in document:
        # Other top-level keys are the stack file's own (secretsprovider, ...) or hold YAML
        # anchors; one that looks like a misspelt `config` would hide the whole config.
        near = [str(k) for k in document if difflib.get_close_matches(str(k), ["config"], 1, 0.8)]
        if near:
            raise InvalidInputError(
                Problem(display, key, "unknown key; did you mean config?", at_key=True)
                for key in sorted(near)
            )
    config = document.get("config", {})
    if not isinstance(config, dict):
        raise InvalidInputError([Problem(display, "config", "expected a mapping")])
    prefix = f"{PROJECT}:"
    problems = []
    for key in config:
        if not isinstance(key, str) or ":" not in key:
            problems.append(Problem(display, f"config.{key}", "keys are <namespace>:<name>"))
        elif not key.startswith(prefix) and _near_project(namespace := key.split(":", 1)[0]):
            # Pulumi matches namespaces exactly: the value would be left unread, silently.
            case = " (namespaces are case-sensitive)" if namespace.casefold() == PROJECT else ""
            message = f"unknown namespace{case}; did you mean {prefix}?"
            problems.append(Problem(display, key, message, at_key=True))
    if problems:
        raise InvalidInputError(problems)
    own = {k.removeprefix(prefix): v for k, v in config.items() if k.startswith(prefix)}
    return display, with_environment(root, display, own, project=PROJECT) if merge else own


def _near_project(namespace: str) -> bool:
    """A namespace that is the project's in another case, or close to it (a typo)."""
    folded = namespace.casefold()
    return folded.startswith("hypershell") or bool(
        difflib.get_close_matches(folded, [PROJECT], 1, 0.8)
    )


_OBJECTS = {
    "clusters": "a mapping of cluster name to its settings",
    "images": "a mapping of default images (gateway, supervisor, sandbox)",
    "selector": "a mapping with matchLabels",
}


def _kind(value: object) -> str:
    """What a YAML value is, in YAML's words."""
    kinds = {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean"}
    kinds |= {int: "an integer", float: "a number", type(None): "null"}
    return kinds.get(type(value), type(value).__name__)


def _unknown_key(meant: str | None) -> str:
    return "unknown config key" + (f"; did you mean '{PROJECT}:{meant}'?" if meant else "")


def parse_stack_config(display: str, raw: Mapping[str, Any]) -> StackConfig:
    # ``environment`` is resolved into the keys it brings (read_stack_config), not a setting.
    values = {key: raw[key] for key in CONFIG_KEYS if key in raw and key != ENVIRONMENT_KEY}
    unknown = sorted(set(raw) - set(CONFIG_KEYS) - {SECRETS_KEY})
    # A misspelt key names the key it meant; that key's own problems (missing) are left out.
    candidates = [k for k in (*CONFIG_KEYS, SECRETS_KEY) if k not in raw]
    meant = {key: closest(key, candidates) for key in unknown}
    problems = [
        Problem(display, f"{PROJECT}:{key}", _unknown_key(meant[key]), at_key=True)
        for key in unknown
    ]
    absent = {name for name in meant.values() if name is not None}
    # One problem for an object key of the wrong shape, not the model's view of it.
    malformed = {
        key
        for key in _OBJECTS
        if key in values
        and not isinstance(values[key], dict)
        and not (key == "selector" and values[key] is None)
    }
    problems += [
        Problem(
            display, f"{PROJECT}:{key}", f"expected {_OBJECTS[key]}, found {_kind(values[key])}"
        )
        for key in sorted(malformed)
    ]
    if values.get("clusters") == {}:
        malformed.add("clusters")
        problems.append(
            Problem(display, f"{PROJECT}:clusters", f"is empty; expected {_OBJECTS['clusters']}")
        )
    try:
        config = StackConfig.model_validate(
            {k: v for k, v in values.items() if k not in malformed}, by_alias=True
        )
    except ValidationError as error:
        problems += [
            dataclasses.replace(p, field=f"{PROJECT}:{p.field}")
            for p in from_validation_error(display, error, model=StackConfig, document=values)
            if p.field.split(".", 1)[0] not in malformed | absent
        ]
        raise InvalidInputError(problems) from None
    if problems:
        raise InvalidInputError(problems)
    return config

"""``gatewayctl rotate <gateway> <secret>...``: raise a declaration's rotation counters by one.

A counter of ``spec.rotation`` (:mod:`gatewayctl.inputs.rotation_secrets`) feeds its secret's
replacement trigger: raised in a pull request, the offline diff previews the replacement and
the merge's ``pulumi up`` carries it out, so a rotation is a reviewed change, not a laptop's.
The declaration is edited as text (:mod:`.textedit`): each counter's value replaced, or a
``<key>: 1`` line added under ``rotation:``, which is added under ``spec:`` (and ``spec:`` at
the end of the file) when absent; every other byte is kept. The edited text is read back and
must be the same declaration with only those counters raised, and must validate, before the
file is replaced in one rename.

Refused (exit 2, nothing written): the KEK without ``accept_loss`` (the gateway cannot
re-encrypt what its users stored: it is lost), the KEK of a gateway whose credential driver
holds none, the console's cookie secret of a gateway without a console.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError
from yaml.nodes import MappingNode, ScalarNode

from components import naming
from gatewayctl.deploy import textedit
from gatewayctl.errors import (
    InvalidInputError,
    Problem,
    ToolError,
    UsageError,
    from_validation_error,
)
from gatewayctl.inputs.clusters import StackConfig
from gatewayctl.inputs.declarations import DECLARATION_SUFFIXES
from gatewayctl.inputs.gateway_declaration import GatewayDeclaration
from gatewayctl.inputs.rotation_secrets import BY_NAME, SECRETS, Secret
from gatewayctl.inputs.stackfile import (
    all_stacks,
    parse_stack_config,
    read_stack_config,
    requested_stacks,
)
from gatewayctl.inputs.yamlfile import parse_yaml_mapping, read_yaml_mapping
from gatewayctl.resolve.stack import load_stack, selects

INT_TAG = "tag:yaml.org,2002:int"
BY_HAND = "raise the counter by hand"


@dataclass(frozen=True, kw_only=True)
class Raised:
    secret: Secret
    before: int
    after: int


@dataclass(frozen=True, kw_only=True)
class Rotation:
    stack: str
    gateway: str
    path: str
    """The declaration, as the stack names it (``gateways/ibm/team-a.yaml``)."""
    before: str
    text: str
    """The declaration as it will be written."""
    raised: tuple[Raised, ...]


# --- which file --------------------------------------------------------------------------------


def _declares(root: Path, config: StackConfig, gateway: str) -> bool:
    """Whether the stack's declarations directory holds ``gateway``'s file (and, in a shared
    inventory, the stack takes it)."""
    for suffix in DECLARATION_SUFFIXES:
        display = f"{config.declarations_dir.rstrip('/')}/{gateway}{suffix}"
        if not (root / display).is_file():
            continue
        if config.selector is None:
            return True
        try:
            document = read_yaml_mapping(root / display, display)
            declaration = GatewayDeclaration.model_validate(document, by_alias=True)
        except (InvalidInputError, ValidationError):
            return True  # its problems are reported by the stack's validation
        return selects(config, declaration)
    return False


def stack_of(root: Path, gateway: str) -> str:
    """The one stack that declares ``gateway``; a problem when none or several do."""
    found = []
    for stack in all_stacks(root):
        try:
            display, raw = read_stack_config(root, stack)
            config = parse_stack_config(display, raw)
        except (InvalidInputError, OSError):
            continue  # reported when the stack is named
        if _declares(root, config, gateway):
            found.append(stack)
    if not found:
        raise UsageError(
            f"no stack declares a gateway {gateway!r} (gateways/<stack>/{gateway}.yaml); name"
            " its stack with --stack"
        )
    if len(found) > 1:
        raise UsageError(
            f"gateway {gateway!r} is declared in stacks {', '.join(found)}: name one with --stack"
        )
    return found[0]


# --- editing -----------------------------------------------------------------------------------


def _refuse(path: str, field: str, why: str) -> InvalidInputError:
    return InvalidInputError([Problem(path, field, f"{why}; {BY_HAND}")])


def _lines(counters: Mapping[str, int], keys: Sequence[str], indent: int, newline: str) -> str:
    return "".join(f"{' ' * indent}{key}: {counters[key]}{newline}" for key in keys)


def _block(path: str, field: str, found: tuple[ScalarNode, Any] | None) -> MappingNode | None:
    """The value of ``found`` as a block mapping with entries, None when absent; refused when
    it is anything else (an alias, a flow mapping ``{}``, empty)."""
    if found is None:
        return None
    key, body = found
    if textedit.is_alias(key, body) or not isinstance(body, MappingNode):
        raise _refuse(path, field, "not written out as a mapping")
    if body.flow_style or not body.value:
        raise _refuse(path, field, "not a block mapping with entries")
    return body


def edit_counters(text: str, path: str, counters: Mapping[str, int]) -> str:
    """``text`` with each ``spec.rotation.<key>`` of ``counters`` set to its value, every other
    byte kept; missing keys (and ``rotation:``, ``spec:``) are added."""
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    if not isinstance(root, MappingNode) or root.flow_style or not root.value:
        raise _refuse(path, "", "the declaration is not a block mapping")
    newline = textedit.newline(text)
    keys = [s.key for s in SECRETS if s.key in counters]
    spec_found = textedit.value(root, "spec")
    spec = _block(path, "spec", spec_found)
    if spec_found is None or spec is None:
        column = root.value[0][0].start_mark.column
        lines = f"{' ' * column}spec:{newline}{' ' * (column + 2)}rotation:{newline}"
        lines += _lines(counters, keys, column + 4, newline)
        return (text if text.endswith("\n") or not text else text + newline) + lines
    spec_key = spec_found[0]
    indent = spec.value[0][0].start_mark.column
    step = indent - spec_key.start_mark.column
    rotation_found = textedit.value(spec, "rotation")
    rotation = _block(path, "spec.rotation", rotation_found)
    if rotation_found is None or rotation is None:
        at = textedit.line_offset(text, spec_key.end_mark.line + 1)
        lines = f"{' ' * indent}rotation:{newline}" + _lines(counters, keys, indent + step, newline)
        return text[:at] + lines + text[at:]
    edits: list[tuple[int, int, str]] = []
    missing = []
    for key in keys:
        found = textedit.value(rotation, key)
        if found is None:
            missing.append(key)
            continue
        node = found[1]
        start, end = node.start_mark.index, node.end_mark.index
        if (
            textedit.is_alias(*found)
            or not isinstance(node, ScalarNode)
            or node.tag != INT_TAG
            or node.style is not None
            or text[start : start + 1] == "&"
        ):
            raise _refuse(path, f"spec.rotation.{key}", "the counter is not a plain number")
        edits.append((start, end, str(counters[key])))
    if missing:
        at = textedit.line_offset(text, rotation_found[0].end_mark.line + 1)
        column = rotation.value[0][0].start_mark.column
        edits.append((at, at, _lines(counters, missing, column, newline)))
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    return text


def _expected(document: Mapping[str, Any], counters: Mapping[str, int]) -> dict[str, Any]:
    spec = dict(document.get("spec") or {})
    spec["rotation"] = {**(spec.get("rotation") or {}), **counters}
    return {**document, "spec": spec}


# --- the rotation ------------------------------------------------------------------------------


def _problems(
    path: str, declaration: GatewayDeclaration, secrets: Sequence[Secret], *, accept_loss: bool
) -> list[Problem]:
    spec = declaration.spec
    problems = []
    if BY_NAME["kek"] in secrets:
        if spec.credentials.driver != "kek":
            problems.append(
                Problem(
                    path,
                    "spec.credentials.driver",
                    f"the driver is {spec.credentials.driver!r}: the gateway holds no KEK to"
                    " rotate (only driver 'kek' does)",
                )
            )
        elif not accept_loss:
            problems.append(
                Problem(
                    path,
                    "spec.rotation.kek",
                    "a new KEK loses every credential the gateway's users stored (the gateway"
                    " cannot re-encrypt them with the new key): pass --accept-credential-loss"
                    " to rotate it anyway",
                )
            )
    if BY_NAME["console-cookie"] in secrets and not spec.console.enabled:
        problems.append(
            Problem(
                path,
                "spec.console.enabled",
                "the console is not enabled: there is no console cookie secret to rotate",
            )
        )
    return problems


def rotate(
    root: Path,
    gateway: str,
    names: Sequence[str],
    stack: str | None = None,
    *,
    accept_loss: bool = False,
) -> Rotation:
    """The rotation of ``names`` (the secrets' command-line names) of ``gateway``, checked, not
    written."""
    if not naming.is_dns1123_label(gateway):
        raise UsageError(f"{gateway!r} is no gateway name (a DNS label: a-z, 0-9, '-')")
    unknown = [n for n in names if n not in BY_NAME]
    if unknown or not names:
        raise UsageError(
            f"unknown secret {', '.join(map(repr, unknown))}; the secrets are {', '.join(BY_NAME)}"
            if unknown
            else f"name a secret to rotate: {', '.join(BY_NAME)}"
        )
    secrets = [s for s in SECRETS if s.name in names]
    if stack is None:
        stack = stack_of(root, gateway)
    requested_stacks(root, stack)
    loaded = load_stack(root, stack)
    mine = [g for g in loaded.gateways if g.name == gateway]
    if not mine:
        known = ", ".join(g.name for g in loaded.gateways) or "none"
        raise InvalidInputError(
            [
                Problem(
                    loaded.config_path,
                    "declarationsDir",
                    f"stack {stack!r} has no gateway {gateway!r}; its gateways: {known}",
                )
            ]
        )
    path = mine[0].source
    before = (root / path).read_text(encoding="utf-8")
    document = parse_yaml_mapping(before, path)
    clusters = None if loaded.config.selector else sorted(loaded.config.clusters)
    context = {"clusters": clusters}
    declaration = GatewayDeclaration.model_validate(document, by_alias=True, context=context)
    problems = _problems(path, declaration, secrets, accept_loss=accept_loss)
    if problems:
        raise InvalidInputError(problems)
    current = declaration.spec.rotation.model_dump(by_alias=True)
    counters = {s.key: current[s.key] + 1 for s in secrets}
    text = edit_counters(before, path, counters)
    unsafe = ToolError(f"{path}: the counters could not be edited safely; {BY_HAND}")
    try:
        edited = parse_yaml_mapping(text, path)
    except InvalidInputError:
        raise unsafe from None  # a problem of the text this command made
    if edited != _expected(document, counters):  # the edit is the counters, only
        raise unsafe
    try:
        GatewayDeclaration.model_validate(edited, by_alias=True, context=context)
    except ValidationError as error:
        raise InvalidInputError(
            from_validation_error(path, error, model=GatewayDeclaration, document=edited)
        ) from None
    return Rotation(
        stack=stack,
        gateway=gateway,
        path=path,
        before=before,
        text=text,
        raised=tuple(
            Raised(secret=s, before=current[s.key], after=counters[s.key]) for s in secrets
        ),
    )


def write(root: Path, rotation: Rotation) -> None:
    """Replace the declaration in one rename (:func:`.textedit.replace`)."""
    textedit.replace(root, rotation.path, rotation.text, BY_HAND)


def diff(rotation: Rotation) -> str:
    """The change as a unified diff of the declaration."""
    return "".join(
        difflib.unified_diff(
            rotation.before.splitlines(keepends=True),
            rotation.text.splitlines(keepends=True),
            f"a/{rotation.path}",
            f"b/{rotation.path}",
        )
    )


NEXT = (
    "next: commit {path} on a branch and open a pull request; its offline diff"
    " (gatewayctl diff {stack} --base main) previews the replacement, the merge's pulumi up"
    " carries it out"
)


def report(rotation: Rotation) -> list[str]:
    """What the command prints: each counter raised and what its rotation means."""
    lines = []
    for r in rotation.raised:
        lines.append(f"{rotation.path}: {r.secret.field}: {r.before} → {r.after}")
    lines += [f"  {r.secret.name}: {r.secret.means}" for r in rotation.raised]
    return lines


def document(rotation: Rotation, *, dry_run: bool) -> dict[str, Any]:
    """``rotate -o json|yaml``: what :func:`report` prints, as data."""
    return {
        "stack": rotation.stack,
        "gateway": rotation.gateway,
        "path": rotation.path,
        "dryRun": dry_run,
        "written": not dry_run,
        "secrets": [
            {
                "secret": r.secret.name,
                "field": r.secret.field,
                "before": r.before,
                "after": r.after,
                "means": r.secret.means,
            }
            for r in rotation.raised
        ],
    }

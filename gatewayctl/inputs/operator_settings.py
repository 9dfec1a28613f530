"""The Pulumi Kubernetes Operator's settings (``deploy/operator.yaml``) and who drives each
stack: the operator for the stacks it owns, CI for the others (:func:`drivers`).

One driver per stack: the settings name the stacks the operator owns (``stacks``), the
workflows ask :func:`drivers` and skip those, and ``operator-manifests`` emits a ``Stack`` for
exactly those (``gatewayctl.deploy.operator``). A stack driven twice would have the operator's
updates and CI's ``pulumi up`` fight over its lock, and the drift check race the operator's
corrections. Nothing here is secret (Secrets are referenced by name).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, ValidationError

from gatewayctl.errors import InvalidInputError, Problem, from_validation_error
from gatewayctl.inputs.model import DnsLabel, Model
from gatewayctl.inputs.stackfile import all_stacks, stack_file
from gatewayctl.inputs.yamlfile import read_yaml_mapping

SETTINGS = "deploy/operator.yaml"
PULUMI_VERSION_FILE = ".pulumi.version"
"""The Pulumi CLI version, declared once: the workflows install it (pulumi/actions
``pulumi-version-file``) and the operator's workspace image is pinned to it. It equals the
``pulumi`` SDK pinned in pyproject.toml (the CLI and the SDK are released together)."""

RESERVED_ENV = {
    "PULUMI_ACCESS_TOKEN": "set from accessToken",
    "PULUMI_HOME": "set by the workspace agent (agent/pkg/server/server.go)",
    "PULUMI_ENV": "set by the operator on the workspace pod (workspace_controller.go)",
    "POD_NAMESPACE": "set by the operator on the workspace pod (workspace_controller.go)",
    "POD_SA_NAME": "set by the operator on the workspace pod (workspace_controller.go)",
    "AGENT_MEMLIMIT": "set by the operator on the workspace pod (workspace_controller.go)",
}
"""Variables ``envFromSecrets`` may not define: this file's own ``accessToken``, and what the
operator and its agent set in the workspace's ``pulumi`` container (pulumi-kubernetes-operator
``operator/internal/controller/auto/workspace_controller.go`` ``newStatefulSet``). Other
``PULUMI_*`` names stay allowed: the operator's docs set ``PULUMI_BACKEND_URL`` this way, and a
passphrase secrets provider needs ``PULUMI_CONFIG_PASSPHRASE``."""

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SECRET_KEY = re.compile(r"[-._a-zA-Z0-9]+")
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOST = rf"{_LABEL}(?:\.{_LABEL})*"
_PORT = r"(?::([0-9]{1,5}))?"
_REPO_PATH = r"[A-Za-z0-9._~][A-Za-z0-9._~/-]*"
_REPO_URL = re.compile(
    rf"https://{_HOST}{_PORT}/{_REPO_PATH}"
    rf"|ssh://(?:[A-Za-z0-9_][A-Za-z0-9._-]*@)?{_HOST}{_PORT}/{_REPO_PATH}"
    rf"|git@{_HOST}:{_REPO_PATH}"
)
_REPO_RULE = (
    "must be an https://host/path, ssh://[user@]host/path or git@host:path repository URL:"
    " no password or token in it, no whitespace, no part starting with '-'"
)
_REF = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._/-]*")


def _shown(value: str, limit: int = 60) -> str:
    return repr(value if len(value) <= limit else value[:limit] + "...")


def _repo_url(value: object) -> object:
    """A git remote that cannot smuggle an option into ``git``/``ssh`` (``-oProxyCommand=``,
    ``--upload-pack=``) nor carry a credential (a committed file). The value is never echoed:
    it may hold a token."""
    if not isinstance(value, str):
        return value  # the str type reports it
    match = _REPO_URL.fullmatch(value) if len(value) <= 2048 else None
    ports = [int(port) for port in match.groups() if port] if match is not None else []
    if match is None or not all(1 <= port <= 65535 for port in ports):
        raise ValueError(_REPO_RULE)
    return value


def _git_ref(value: object) -> object:
    """A branch name ``git check-ref-format`` accepts, and never an option."""
    if not isinstance(value, str):
        return value
    if (
        len(value) > 255
        or not _REF.fullmatch(value)
        or ".." in value
        or "//" in value
        or "/." in value
        or value.endswith(("/", ".", ".lock"))
    ):
        raise ValueError(
            f"{_shown(value)} is not a branch name: letters, digits, '.', '_', '-' and '/',"
            " starting with a letter, digit or '_', no '..', '//' or '/.', not ending in '/',"
            " '.' or '.lock'"
        )
    return value


def _env_name(value: object) -> object:
    if not isinstance(value, str):
        return value
    if not _ENV_NAME.fullmatch(value):
        raise ValueError(
            f"{_shown(value)} is not an environment variable name (letters, digits and '_',"
            " not starting with a digit)"
        )
    if value in RESERVED_ENV:
        raise ValueError(f"{value} is reserved: {RESERVED_ENV[value]}")
    return value


def _secret_data_key(value: object) -> object:
    if isinstance(value, str) and (len(value) > 253 or not _SECRET_KEY.fullmatch(value)):
        raise ValueError(f"{_shown(value)} is not a Secret key (letters, digits, '-', '_', '.')")
    return value


RepoUrl = Annotated[str, BeforeValidator(_repo_url)]
GitRef = Annotated[str, BeforeValidator(_git_ref)]
EnvName = Annotated[str, BeforeValidator(_env_name)]
SecretDataKey = Annotated[str, BeforeValidator(_secret_data_key)]


class SecretKey(Model):
    name: DnsLabel
    key: SecretDataKey


class OperatorSettings(Model):
    namespace: DnsLabel
    project_repo: RepoUrl = Field(alias="projectRepo")
    branch: GitRef
    organization: str = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    service_account_name: DnsLabel = Field(alias="serviceAccountName")
    resync_frequency_seconds: int = Field(alias="resyncFrequencySeconds", ge=60, le=2**63 - 1)
    access_token: SecretKey = Field(alias="accessToken")
    git_token: SecretKey | None = Field(None, alias="gitToken")
    stacks: list[str] | None = None
    """The stacks the operator owns; the workflows skip them."""
    exclude: list[str] | None = None
    """Older form: the operator owns every stack but these (a new stack goes to the operator)."""
    env_from_secrets: dict[str, dict[EnvName, SecretKey]] = Field(
        default_factory=dict, alias="envFromSecrets"
    )


# --- reading the settings -------------------------------------------------------------------


def load_settings(root: Path) -> OperatorSettings:
    # The strict reader turns a value that does not convert to its YAML tag, or nesting too
    # deep, into a problem naming the field and line, never the value (gatewayctl.inputs.yamlfile).
    document = read_yaml_mapping(root / SETTINGS, SETTINGS)
    try:
        return OperatorSettings.model_validate(document, by_alias=True)
    except ValidationError as error:
        raise InvalidInputError(
            from_validation_error(SETTINGS, error, model=OperatorSettings, document=document)
        ) from None


def cli_version(root: Path) -> str:
    """The Pulumi CLI version of :data:`PULUMI_VERSION_FILE`."""
    try:
        text = (root / PULUMI_VERSION_FILE).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        text = ""
    if not re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", text):
        raise InvalidInputError(
            [Problem(PULUMI_VERSION_FILE, "", "must hold the Pulumi CLI version, such as 3.272.0")]
        )
    return text


# --- ownership --------------------------------------------------------------------------------


def owned_stacks(settings: OperatorSettings, stacks: Sequence[str]) -> list[str]:
    """The stacks of the project the operator owns, in ``stacks``' order."""
    if settings.stacks is not None:
        return [stack for stack in stacks if _listed(stack, settings.stacks)]
    excluded = settings.exclude or []
    return [stack for stack in stacks if not _listed(stack, excluded)]


def _listed(stack: str, entries: Sequence[str]) -> bool:
    """``stack`` is one of ``entries``, names or patterns with ``*`` (``aws-*``: every shard
    of an environment, as deploy/stacks.yaml takes them)."""
    return any(fnmatch.fnmatchcase(stack, entry) for entry in entries)


def settings_problems(settings: OperatorSettings, stacks: Sequence[str]) -> list[Problem]:
    """Ownership that is missing or ambiguous, and stack names in ``stacks``, ``exclude`` and
    ``envFromSecrets`` that name no ``Pulumi.<stack>.yaml``, or no stack the operator owns.

    A typo there is silent otherwise: a stack meant for the operator stays with CI (or the
    reverse), or the stack meant to get credentials runs without them.
    """
    problems: list[Problem] = []
    if settings.stacks is not None and settings.exclude is not None:
        problems.append(
            Problem(
                SETTINGS,
                "exclude",
                "use stacks (the stacks the operator owns) or the older exclude, not both",
            )
        )
    elif settings.stacks is None and settings.exclude is None:
        problems.append(
            Problem(
                SETTINGS,
                "stacks",
                "required: the stacks the operator owns (the workflows skip them); [] for none",
            )
        )
    known = set(stacks)
    listed = ", ".join(stacks) if stacks else "none"
    named = [(f"stacks.{i}", stack) for i, stack in enumerate(settings.stacks or [])]
    named += [(f"exclude.{i}", stack) for i, stack in enumerate(settings.exclude or [])]
    problems += [
        Problem(
            SETTINGS,
            field,
            (
                f"{_shown(stack)} matches no stack of this project (stacks: {listed})"
                if "*" in stack
                else f"{_shown(stack)} names no stack of this project (no {stack_file(stack)};"
                f" stacks: {listed})"
            ),
        )
        for field, stack in named
        if not any(fnmatch.fnmatchcase(known_stack, stack) for known_stack in stacks)
    ]
    problems += [
        Problem(
            SETTINGS,
            f"envFromSecrets.{stack}",
            f"{_shown(stack)} names no stack of this project (no {stack_file(stack)};"
            f" stacks: {listed})",
        )
        for stack in settings.env_from_secrets
        if stack not in known
    ]
    for field, names in (("stacks", settings.stacks), ("exclude", settings.exclude)):
        for i, stack in enumerate(names or []):
            if stack in (names or [])[:i]:
                problems.append(
                    Problem(SETTINGS, f"{field}.{i}", f"{_shown(stack)} is listed twice")
                )
    owned = owned_stacks(settings, stacks)
    problems += [
        Problem(
            SETTINGS,
            f"envFromSecrets.{stack}",
            f"the operator does not own stack {stack!r} (it owns: {', '.join(owned) or 'none'})",
        )
        for stack in settings.env_from_secrets
        if stack in known and stack not in owned
    ]
    return problems


Driver = Literal["ci", "operator"]


def drivers(root: Path, stacks: Sequence[str]) -> dict[str, Driver]:
    """Who runs ``pulumi up``, refresh and drift correction for each of ``stacks``: the
    operator for the stacks it owns, CI for the others (all of them without a settings file)."""
    path = root / SETTINGS
    if not path.exists() and not path.is_symlink():
        return dict.fromkeys(stacks, "ci")
    settings = load_settings(root)
    problems = settings_problems(settings, all_stacks(root))
    if problems:
        raise InvalidInputError(problems)
    owned = set(owned_stacks(settings, all_stacks(root)))
    return {stack: "operator" if stack in owned else "ci" for stack in stacks}

"""An environment's configuration said once, for every stack of it (issue 39 point 4, shards).

A large environment is deployed as several stacks of the recommended size (its shards), each
selecting its gateways from one inventory by a label. What they share, the clusters (their
API servers, database servers, identity, releases) and the images, is written once, in
``environments/<name>.yaml``, and each shard's ``Pulumi.<stack>.yaml`` names it::

    # Pulumi.aws-2.yaml
    config:
      hypershell-gateways:environment: aws       # environments/aws.yaml: clusters, images
      hypershell-gateways:declarationsDir: inventory/aws
      hypershell-gateways:selector: {matchLabels: {shard: "2"}}
      hypershell-gateways:clusterSecrets: {...}  # per stack: each stack encrypts its own

The environment file holds ``clusters`` and ``images``, as a stack file's config does without
the project's namespace. The other keys are each stack's own: ``selector`` (which gateways),
``clusterSecrets`` (a stack's secrets provider encrypts them; the environment file is plain
YAML in git), ``environment``, and the scalar keys Pulumi.yaml types (``declarationsDir``,
``production``, ``selfHeal``): the CLI requires a typed key without a default of every stack
and writes the default of one with a default into every stack's config before the program
runs (pulumi/pulumi sdk/go/common/workspace ``ValidateStackConfigAndApplyProjectConfig``), so
the program could not tell an environment's value from that default. A key is said once: set
in both files it is a problem. The stack's config is
the two merged; every command and the program under ``pulumi up`` read it so
(:func:`with_environment`), and a problem of a key the environment holds is reported in the
environment file (``gatewayctl.inputs.locations``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from components import naming
from gatewayctl.errors import InvalidInputError, Problem
from gatewayctl.inputs.yamlfile import SECRETS_KEY, read_yaml_mapping
from gatewayctl.typos import closest

KEY = "environment"
"""The stack config key naming the environment."""
DIRECTORY = "environments"
SHARED_KEYS = ("clusters", "images")
"""The keys an environment file may hold: what its stacks share."""
_TYPED = (
    "a scalar key Pulumi.yaml types, which the CLI requires of, or defaults in, every stack's"
    " own config"
)
STACK_ONLY = {
    "selector": "each stack selects its own gateways",
    SECRETS_KEY: "each stack's secrets provider encrypts its own; this file is plain text in git",
    KEY: "an environment names no other",
    "declarationsDir": _TYPED,
    "production": _TYPED,
    "selfHeal": _TYPED,
    "selfHealUnmanaged": _TYPED,
    "unmanagedIgnore": "what status --live lets be is each stack's own choice",
}


def environment_file(name: str) -> str:
    """The environment's file, relative to the project root."""
    return f"{DIRECTORY}/{name}.yaml"


def with_environment(
    root: Path, display: str, raw: Mapping[str, Any], *, project: str
) -> dict[str, Any]:
    """``raw`` (a stack's config keys, without the project's namespace) merged with the
    environment it names, if any; InvalidInputError naming the file and key of each problem:
    an environment name that is no DNS label, a missing or unreadable file, a key the file
    may not hold, a key said in both files."""
    name = raw.get(KEY)
    if name is None:
        return dict(raw)
    field = f"{project}:{KEY}"
    if not isinstance(name, str) or not naming.is_dns1123_label(name):
        raise InvalidInputError(
            [Problem(display, field, f"{name!r} is not an environment name (a DNS-1123 label)")]
        )
    path = environment_file(name)
    if not (root / path).is_file():
        raise InvalidInputError(
            [Problem(display, field, f"no {path}: the environment's file is missing")]
        )
    shared = read_yaml_mapping(root / path, path)
    problems = []
    for key in sorted(shared, key=str):
        if key in STACK_ONLY:
            problems.append(
                Problem(path, str(key), f"a stack's own key: {STACK_ONLY[key]}", at_key=True)
            )
        elif key not in SHARED_KEYS:
            meant = closest(str(key), list(SHARED_KEYS))
            hint = (
                f"; did you mean {meant!r}?" if meant else f"; it may hold {', '.join(SHARED_KEYS)}"
            )
            problems.append(Problem(path, str(key), f"unknown key{hint}", at_key=True))
        elif key in raw:
            problems.append(
                Problem(
                    display,
                    f"{project}:{key}",
                    f"also set in {path}: an environment's key is said once, there",
                    at_key=True,
                )
            )
    if problems:
        raise InvalidInputError(problems)
    return {**{k: v for k, v in raw.items()}, **shared}

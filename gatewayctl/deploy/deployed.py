"""Which stacks CI deploys: ``deploy/stacks.yaml`` (``deployed``), read by ``gatewayctl stacks
--deployed`` and ``gatewayctl driver --deployed`` for the workflows' matrices (pull-request
previews, deploys, drift checks), so that a new stack, a new shard above all, is covered once
its stack file exists and matches, with no workflow to edit (issue 39 point 4).

Each entry is a stack name or a pattern with ``*`` (``fnmatch``, on stack names, which are
DNS-1123 labels); each must match a stack of the project, so a typo cannot leave a stack
undeployed in silence. Without the file every stack is deployed.
"""

from __future__ import annotations

from pathlib import Path

from gatewayctl.errors import InvalidInputError, Problem
from gatewayctl.inputs.stackfile import all_stacks, stacks_matching
from gatewayctl.inputs.yamlfile import read_yaml_mapping

SETTINGS = "deploy/stacks.yaml"
KEY = "deployed"


def deployed_stacks(root: Path) -> list[str]:
    """The project's stacks CI deploys, sorted; InvalidInputError naming the file and entry
    of each problem."""
    stacks = all_stacks(root)
    path = root / SETTINGS
    if not path.exists() and not path.is_symlink():
        return stacks
    document = read_yaml_mapping(path, SETTINGS)
    problems = [
        Problem(SETTINGS, str(key), f"unknown key; the file holds {KEY!r}", at_key=True)
        for key in document
        if key != KEY
    ]
    entries = document.get(KEY)
    if not isinstance(entries, list) or not entries:
        problems.append(
            Problem(SETTINGS, KEY, "expected a list of stack names or patterns (aws-*)")
        )
        raise InvalidInputError(problems)
    chosen: set[str] = set()
    for index, entry in enumerate(entries):
        field = f"{KEY}.{index}"
        matched, why = stacks_matching(entry, stacks)
        if why is not None:
            problems.append(Problem(SETTINGS, field, f"{entry!r} {why}"))
        chosen.update(matched)
    if problems:
        raise InvalidInputError(problems)
    return sorted(chosen)

"""The stacks a command works on, prepared: each one validated (in workers with ``--jobs``),
every problem of all of them raised at once; and the notes ``render`` and ``validate`` print
about what they hold.

Every command that reads declarations through here (``validate``, ``render``, ``diff``,
``import-file``, ``operator-manifests``, ``graph``) runs the same validation, ``validate``'s
own rules included (``gatewayctl.resolve.signin_plan.validate_rules``: a gateway nobody can sign
in to, an adopted gateway keeping its Keycloak client without Keycloak's ids of it): a
declaration ``validate`` rejects is rejected by each, with the same problems.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from gatewayctl import lazy
from gatewayctl.errors import InvalidInputError

if TYPE_CHECKING:
    from gatewayctl import printing
    from gatewayctl.resolve import preparation


def _prepare_all(
    root: Path, stacks: Sequence[str], jobs: int = 1
) -> list[lazy.preparation.Prepared]:
    # Named as a debug traceback shows it (tests/test_errors.py), though every command shares it.

    validated: list[lazy.parallel.Validated]
    if jobs > 1 and len(stacks) > 1:  # in workers (gatewayctl.engine.parallel)
        validated = lazy.parallel.prepare_stacks(root, stacks, jobs=jobs)
    else:
        validated = []
        for stack in stacks:
            try:
                validated.append(lazy.preparation.prepare(root, stack))
            except InvalidInputError as error:
                validated.append(error)
    problems = [
        p for item in validated if isinstance(item, InvalidInputError) for p in item.problems
    ]
    prepared = [item for item in validated if not isinstance(item, InvalidInputError)]
    # The stacks validated here are not loaded again to be compared with the others.
    loaded = {item.loaded.name: item.loaded for item in prepared}
    problems += lazy.inventory.coverage_problems(root, stacks, loaded)
    if problems:
        # Every problem at once: validate's own rules too, not only once the others are fixed.
        own = [p for stack in stacks for p in lazy.stack.validate_rules(root, stack)]
        raise InvalidInputError([*problems, *own])
    if own := [p for item in prepared for p in lazy.signin_plan.validate_rules(item.loaded)]:
        raise InvalidInputError(own)
    return prepared


def warn(notes: printing.Notes, root: Path, prepared: Sequence[preparation.Prepared]) -> None:
    """Notes on what the offline run does not need but ``pulumi up`` does, or should not see."""

    shown: set[str] = set()  # the releases are the project's: one note for all its stacks
    for item in prepared:
        for warning in [
            *item.plaintext_notes,
            *lazy.preparation.size_notes(item.loaded),
            *lazy.preparation.absent_ca_bundles(root, item.loaded),
            *item.release_notes,
        ]:
            if warning not in shown:
                shown.add(warning)
                notes(warning)

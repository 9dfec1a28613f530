"""The stacks a command works on, prepared: each one validated (in workers with ``--jobs``),
every problem of all of them raised at once; and the notes ``render`` and ``validate`` print
about what they hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from gatewayctl.errors import InvalidInputError

if TYPE_CHECKING:
    from gatewayctl import printing
    from gatewayctl.engine import parallel
    from gatewayctl.resolve import preparation


def _prepare_all(root: Path, stacks: Sequence[str], jobs: int = 1) -> list[preparation.Prepared]:
    # Named as a debug traceback shows it (tests/test_errors.py), though every command shares it.
    from gatewayctl.resolve import inventory, preparation

    validated: list[parallel.Validated]
    if jobs > 1 and len(stacks) > 1:  # in workers (gatewayctl.engine.parallel)
        from gatewayctl.engine import parallel

        validated = parallel.prepare_stacks(root, stacks, jobs=jobs)
    else:
        validated = []
        for stack in stacks:
            try:
                validated.append(preparation.prepare(root, stack))
            except InvalidInputError as error:
                validated.append(error)
    problems = [
        p for item in validated if isinstance(item, InvalidInputError) for p in item.problems
    ]
    prepared = [item for item in validated if not isinstance(item, InvalidInputError)]
    # The stacks validated here are not loaded again to be compared with the others.
    loaded = {item.loaded.name: item.loaded for item in prepared}
    problems += inventory.coverage_problems(root, stacks, loaded)
    if problems:
        raise InvalidInputError(problems)
    return prepared


def warn(notes: printing.Notes, root: Path, prepared: Sequence[preparation.Prepared]) -> None:
    """Notes on what the offline run does not need but ``pulumi up`` does, or should not see."""
    from gatewayctl.resolve.preparation import absent_ca_bundles, size_notes

    shown: set[str] = set()  # the releases are the project's: one note for all its stacks
    for item in prepared:
        for warning in [
            *item.plaintext_notes,
            *size_notes(item.loaded),
            *absent_ca_bundles(root, item.loaded),
            *item.release_notes,
        ]:
            if warning not in shown:
                shown.add(warning)
                notes(warning)

"""The declarations directory: every entry read as a declaration or reported, none skipped.

A declaration is one ``*.yaml`` or ``*.yml`` file, named after its gateway, parsed into the
:class:`GatewayDeclaration` model on its own. Subdirectories, other files, and symbolic links
that are broken or lead out of the project are problems (a gateway whose file were skipped
would be deleted); dotfiles and READMEs are ignored. What a stack makes of its declarations
(its clusters, images, hosts, and the rules across gateways) is :mod:`gatewayctl.resolve.stack`'s.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from pydantic import ValidationError

from gatewayctl.errors import InvalidInputError, Problem, from_validation_error
from gatewayctl.inputs.gateway_declaration import GatewayDeclaration
from gatewayctl.inputs.yamlfile import read_yaml_mapping

DECLARATION_SUFFIXES = (".yaml", ".yml")


def _directory_problem(root: Path, directory: str) -> str | None:
    """What is wrong with the declarations directory itself, if anything. ``declarationsDir``
    is a relative path without ``..`` (the model); here it must also not lead out of the
    project through a symbolic link."""
    base = root / directory
    try:
        if not base.exists():
            return f"{directory!r} does not exist"
        if not base.is_dir():
            return f"{directory!r} is not a directory"
        inside = base.resolve().is_relative_to(root.resolve())
    except OSError as error:  # permission, a symbolic link loop...: a problem, not a crash
        return f"{directory!r} cannot be read: {error.strerror}"
    if not inside:
        return (
            f"{directory!r} leads outside the project through a symbolic link; it must be a"
            " path inside the project"
        )
    return None


def _unread_entry(root: Path, path: Path) -> str | None:
    """Why an entry of the declarations directory is not read as a declaration, or None when
    it is one. Nothing there is skipped silently (a gateway whose file is skipped would be
    deleted), except dotfiles and READMEs."""
    if path.is_symlink():
        target = os.readlink(path)
        try:
            resolved = Path(os.path.realpath(path, strict=True))
        except OSError as error:
            return f"broken symbolic link to {target!r}: {error.strerror}"
        if not resolved.is_relative_to(root.resolve()):
            return (
                f"symbolic link to {target!r} leads outside the project; a declaration must be"
                " inside it"
            )
    if path.is_dir():
        return "is a directory; declarations are not read from subdirectories"
    if path.suffix not in DECLARATION_SUFFIXES:
        return (
            "only *.yaml and *.yml files are declarations (names starting with '.' or README"
            " are ignored)"
        )
    if not path.is_file():
        return "not a regular file"
    return None


def load_declarations(
    root: Path,
    directory: str,
    clusters: Iterable[str] | None,
    *,
    config_path: str | None = None,
) -> tuple[list[tuple[str, GatewayDeclaration]], list[Problem]]:
    """Parse every ``*.yaml`` and ``*.yml`` file of the declarations directory, in name order.

    Returns the declarations that are valid on their own and the problems of the others, so
    the cross-file rules still run over the valid ones and every problem is reported at once.
    Every other entry of the directory is a problem too, except dotfiles and READMEs. A problem
    of the directory itself names ``config_path``'s ``declarationsDir`` (the directory alone
    when there is no config path, as for a shared inventory).
    """
    # In a shared inventory (clusters None) other stacks' clusters are not errors.
    context = {"clusters": sorted(clusters) if clusters is not None else None}
    wrong = _directory_problem(root, directory)
    entries: list[Path] = []
    if wrong is None:
        try:
            entries = sorted((root / directory).iterdir())
        except OSError as error:
            wrong = f"{directory!r} cannot be read: {error.strerror}"
    if wrong is not None:
        if config_path is None:
            return [], [Problem(directory, "", wrong)]
        return [], [Problem(config_path, "declarationsDir", wrong)]
    problems: list[Problem] = []
    declarations: list[tuple[str, GatewayDeclaration]] = []
    for path in entries:
        if path.name.startswith((".", "README")):
            continue
        display = path.relative_to(root).as_posix()
        unread = _unread_entry(root, path)
        if unread is not None:
            problems.append(Problem(display, "", unread))
            continue
        try:
            document = read_yaml_mapping(path, display)
            declaration = GatewayDeclaration.model_validate(
                document, by_alias=True, context=context
            )
        except InvalidInputError as error:
            problems += error.problems
            continue
        except ValidationError as error:
            problems += from_validation_error(
                display, error, model=GatewayDeclaration, document=document
            )
            continue
        if path.stem != declaration.metadata.name:
            problems.append(
                Problem(
                    display,
                    "metadata.name",
                    f"{declaration.metadata.name!r} must match the file name {path.stem!r}",
                )
            )
            continue
        declarations.append((display, declaration))
    return declarations, problems


def real_path(root: Path, directory: str) -> Path:
    """Where a declarations directory (or a file in one) really is: two spellings or a symlink
    are one inventory."""
    try:
        return (root / directory).resolve()
    except (OSError, RuntimeError):  # a symlink loop: compare as written
        return root / directory

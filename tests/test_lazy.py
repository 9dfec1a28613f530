"""The lazy imports live in one table (issue 46, item 3): ``gatewayctl/lazy.py``'s ``MODULES``
and its ``TYPE_CHECKING`` imports name the same modules, every entry is used, no module of the
tool imports inside a function, and an entry is imported on first use, once."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from gatewayctl import lazy
from tests.architecture import ROOT, TOOL, lazy_table


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _type_checking_imports(tree: ast.Module) -> dict[str, str]:
    """name → module, from the ``if TYPE_CHECKING:`` block's imports."""
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.Import):
                    for alias in statement.names:
                        found[alias.asname or alias.name] = alias.name
                elif isinstance(statement, ast.ImportFrom):
                    for alias in statement.names:
                        found[alias.asname or alias.name] = f"{statement.module}.{alias.name}"
    return found


def _guarded(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """Under ``if TYPE_CHECKING:`` or in a ``try`` (an optional module and its fallback)."""
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.Try):
            return True
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def function_local_imports(path: Path, root: Path = ROOT) -> list[str]:
    """``path:line`` of each import inside a function, outside TYPE_CHECKING and try blocks."""
    tree = _tree(path)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Import | ast.ImportFrom) or _guarded(node, parents):
            continue
        up: ast.AST = node
        while up in parents:
            up = parents[up]
            if isinstance(up, ast.FunctionDef | ast.AsyncFunctionDef):
                found.append(f"{path.relative_to(root)}:{node.lineno}")
                break
    return found


def test_the_table_and_the_type_checkers_imports_agree() -> None:
    assert _type_checking_imports(_tree(ROOT / TOOL / "lazy.py")) == lazy.MODULES
    assert lazy_table() == lazy.MODULES
    assert sorted(lazy.__all__) == sorted(lazy.MODULES)


def test_no_module_of_the_tool_imports_inside_a_function() -> None:
    found = [
        where
        for path in sorted((ROOT / TOOL).rglob("*.py"))
        for where in function_local_imports(path)
    ]
    assert found == [], "import it through gatewayctl/lazy.py's table"


def test_the_finder_sees_an_import_inside_a_function(tmp_path: Path) -> None:
    (tmp_path / "gatewayctl").mkdir()
    module = tmp_path / "gatewayctl" / "m.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    import json\n"
        "def f():\n    import yaml\n    try:\n        import ujson\n    except ImportError:\n"
        "        pass\n    if TYPE_CHECKING:\n        import csv\n"
        "    def g():\n        from a import b\n"
    )
    assert function_local_imports(module, tmp_path) == ["gatewayctl/m.py:5", "gatewayctl/m.py:13"]


def test_every_entry_is_used() -> None:
    used = {
        node.attr
        for path in sorted((ROOT / TOOL).rglob("*.py"))
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "lazy"
    }
    assert sorted(set(lazy.MODULES) - used) == []
    assert sorted(used - set(lazy.MODULES)) == []


def test_an_entry_is_imported_on_first_use_and_kept() -> None:
    program = (
        "import sys\n"
        "from gatewayctl import lazy\n"
        "before = 'gatewayctl.engine.render' in sys.modules\n"
        "first = lazy.render\n"
        "print(before, first is sys.modules['gatewayctl.engine.render'],"
        " 'render' in vars(lazy), lazy.render is first)\n"
        "try:\n    lazy.no_such_module\nexcept AttributeError as e:\n    print(e)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.splitlines() == [
        "False True True True",
        "module 'gatewayctl.lazy' has no attribute 'no_such_module'",
    ]

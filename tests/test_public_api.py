"""The public list of names is kept in one place, toolweave/_public.py (issue 16 item 6)."""

from __future__ import annotations

import ast
import subprocess
import sys
import types
from pathlib import Path

import toolweave

PUBLIC = Path(toolweave.__file__).parent / "_public.py"


def test_public_all_is_exactly_what_public_py_imports() -> None:
    import toolweave._public as public

    bound = {
        name
        for name, value in vars(public).items()
        if not name.startswith("__") and not isinstance(value, types.ModuleType)
    }
    assert set(toolweave.__all__) == bound | {"__version__"}
    assert len(toolweave.__all__) == len(set(toolweave.__all__))


def test_public_names_are_explicit_re_exports_that_type_checkers_see() -> None:
    tree = ast.parse(PUBLIC.read_text(encoding="utf-8"))
    plain = [
        alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.asname != alias.name
    ]
    assert plain == [], "import public names as `name as name` (explicit re-export)"
    assert all(isinstance(node, ast.ImportFrom | ast.Expr) for node in tree.body)


def test_import_toolweave_reads_the_list_without_loading_the_api() -> None:
    probe = (
        "import sys, toolweave\n"
        "assert 'build_graph' in toolweave.__all__\n"
        "print(sorted(m for m in ('toolweave._public', 'langgraph') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "[]"

"""Imports point one way: state <- tools <- llm <- coordinators <- graph <- toolweave.

Every ``import`` in a layer's source folder (including imports inside functions and
``TYPE_CHECKING`` blocks) may name only its own layer or a lower one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

LAYERS: dict[str, int] = {
    "toolweave.state": 0,
    "toolweave.tools": 1,
    "toolweave.llm": 2,
    "toolweave.coordinators": 3,
    "toolweave.graph": 4,
}
"""Import prefix -> rank; everything else under ``toolweave`` is the top layer."""

TOP = 5

FOLDERS: dict[str, int] = {
    "state": 0,
    "tools": 1,
    "llm": 2,
    "coordinators": 3,
    "graph": 4,
}


def rank_of(module: str) -> int | None:
    """The layer of an imported module, or ``None`` when it is not toolweave's."""
    if module != "toolweave" and not module.startswith("toolweave."):
        return None
    for prefix, rank in LAYERS.items():
        if module == prefix or module.startswith(prefix + "."):
            return rank
    return TOP


def imported_modules(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


def violations(folder: str, rank: int) -> list[str]:
    bad: list[str] = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        for lineno, module in imported_modules(path):
            target = rank_of(module)
            if target is not None and target > rank:
                bad.append(f"{path.relative_to(ROOT)}:{lineno} imports {module}")
    return bad


@pytest.mark.parametrize(("folder", "rank"), sorted(FOLDERS.items(), key=lambda kv: kv[1]))
def test_layers_import_only_downwards(folder: str, rank: int) -> None:
    assert violations(folder, rank) == []


def test_layers_check_catches_an_upward_import(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("from toolweave.graph.walk import next_step\n")
    assert rank_of("toolweave.graph.walk") == 4
    assert [m for _, m in imported_modules(tmp_path / "m.py")] == ["toolweave.graph.walk"]
    assert rank_of("toolweave.cli") == TOP
    assert rank_of("langgraph.graph") is None


LIBRARY = ("state", "tools", "llm", "coordinators", "graph", "toolweave")
"""The library's source folders: everything the ``toolweave`` wheel is built from."""


def test_W5_no_library_module_imports_the_demo_package() -> None:
    # issue 16 item 5: the hospital demo is an installed plugin, never an import
    bad = [
        f"{path.relative_to(ROOT)}:{lineno} imports {module}"
        for folder in LIBRARY
        for path in sorted((ROOT / folder).rglob("*.py"))
        for lineno, module in imported_modules(path)
        if module.split(".")[0] == "toolweave_korhaz"
        or module.startswith("toolweave.domains.korhaz")
    ]
    assert bad == []

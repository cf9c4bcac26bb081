"""toolweave: tool orchestration for RAG chatbots on LangGraph.

Tools declare where, when and with what they run; coordinators split tasks into subtask
trees; one LangGraph ``StateGraph`` runs it all. Start with :func:`build_graph`.
"""

from __future__ import annotations

import ast
import importlib
import logging as _logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolweave._public import *  # noqa: F403

__version__ = "0.1.0"

# X6: toolweave logs through its own loggers, all under "toolweave"; an application
# that never configured logging sees nothing from them (no last-resort handler output).
_logging.getLogger(__name__).addHandler(_logging.NullHandler())


def _public_names() -> list[str]:
    """The names ``_public.py`` imports, read from its source: ``import toolweave`` stays cheap."""
    tree = ast.parse((Path(__file__).parent / "_public.py").read_text(encoding="utf-8"))
    return [
        alias.asname or alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    ]


__all__ = [*_public_names(), "__version__"]


def __getattr__(name: str) -> Any:
    """Import the public API on first use (PEP 562), so ``import toolweave`` stays light."""
    if name in __all__:
        value = getattr(importlib.import_module("toolweave._public"), name)
        globals()[name] = value
        return value
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})

"""The tool registry (T1, F3)."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from typing import Any

from toolweave.tools.base import ChatbotTool

logger = logging.getLogger(__name__)

AnyTool = ChatbotTool[Any]


class ToolRegistry:
    """Tools by name; the last one registered under a name wins (T1).

    Lookup accepts the plain name and the domain-prefixed ``"<domain>.<name>"``
    (F3). A registry is built once and shared; it holds no per-request data.
    """

    def __init__(self, tools: Iterable[AnyTool] = ()) -> None:
        self._tools: dict[str, AnyTool] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: AnyTool) -> AnyTool:
        """Add ``tool``; a tool already under the same name is replaced with a warning (T1)."""
        name = getattr(tool, "name", None)
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"{type(tool).__name__} has no name: set the class attribute `name`")
        previous = self._tools.get(name)
        if previous is not None and previous is not tool:
            logger.warning(
                "tool %r: %s replaces %s (last loaded wins)",
                name,
                type(tool).__qualname__,
                type(previous).__qualname__,
            )
        self._tools[name] = tool
        return tool

    def get(self, name: str) -> AnyTool | None:
        """The tool for a plain or domain-prefixed name (F3), or ``None``."""
        tool = self._tools.get(name)
        if tool is not None:
            return tool
        prefix, dot, plain = name.rpartition(".")
        if not dot:
            return None
        tool = self._tools.get(plain)
        if tool is not None and tool.domain in (None, prefix):
            return tool
        return None

    def __getitem__(self, name: str) -> AnyTool:
        tool = self.get(name)
        if tool is None:
            raise KeyError(name)
        return tool

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __iter__(self) -> Iterator[AnyTool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def names(self) -> list[str]:
        """Registered names, in registration order."""
        return list(self._tools)

"""The tool registry (T1, F3): names are checked on registration, lookups are exact."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from typing import Any

from toolweave.state.names import check_tool_name, qualified_name, split_qualified_name
from toolweave.tools.base import ChatbotTool

logger = logging.getLogger(__name__)

AnyTool = ChatbotTool[Any]


class ToolRegistry:
    """Tools by name; the last one registered under a name wins (T1).

    Names must be lower_snake_case (:mod:`toolweave.state.names`); registering
    anything else raises :class:`~toolweave.ConfigurationError` naming the tool.
    Lookup accepts the plain name and the domain-prefixed ``"<domain>.<name>"``,
    where the prefix must be the tool's own domain (F3). A registry is built
    once and shared; it holds no per-request data.
    """

    def __init__(self, tools: Iterable[AnyTool] = ()) -> None:
        self._tools: dict[str, AnyTool] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: AnyTool) -> AnyTool:
        """Add ``tool``; a tool already under the same name is replaced with a warning (T1).

        Raises:
            ConfigurationError: The tool's ``name`` is missing or not lower_snake_case.
        """
        name = check_tool_name(getattr(tool, "name", None), type(tool).__qualname__)
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
        """The tool for a plain or domain-prefixed name (F3), or ``None``.

        ``"<domain>.<name>"`` finds the tool called ``<name>`` only when its
        ``domain`` is exactly ``<domain>`` (everything before the last dot); a
        domain-less tool is found by its plain name only.
        """
        domain, plain = split_qualified_name(name)
        tool = self._tools.get(plain)
        if tool is None or (domain is not None and tool.domain != domain):
            return None
        return tool

    def qualified_name(self, tool: AnyTool) -> str:
        """The prefixed name under which :meth:`get` finds ``tool`` (``"<domain>.<name>"``)."""
        return qualified_name(tool.domain, tool.name)

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

"""The registry of AI system tools: explicit, by decorator, or from plugins (W1, W5, T1)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeVar

from toolweave.tools.ai.base import AiTool, AiToolDefinition, define_tool
from toolweave.tools.registry import KeyedRegistry

logger = logging.getLogger(__name__)

ToolClassT = TypeVar("ToolClassT", bound=type[AiTool])


@dataclass(frozen=True)
class RegisteredAiTool:
    """A registered AI system tool: the singleton and its checked definition."""

    tool: AiTool
    definition: AiToolDefinition
    source: str = "explicit"
    """Where it came from: ``"explicit"``, ``"decorator"`` or ``"plugin <name>"``."""

    @property
    def id(self) -> str:
        """The tool's id."""
        return self.definition.id


class AiToolRegistry(KeyedRegistry[RegisteredAiTool]):
    """AI system tools by id; ``define`` runs once, at registration (W1).

    The last tool registered under an id wins, with a warning naming both (T1).
    A registry is built once and shared; it holds no per-request data.
    """

    def __init__(self, tools: Iterable[AiTool] = ()) -> None:
        self._tools: dict[str, RegisteredAiTool] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: AiTool, *, source: str = "explicit") -> RegisteredAiTool:
        """Define and check ``tool`` and add it (W1).

        Raises:
            AiToolDefinitionError: The definition is incomplete or its schema is invalid.
        """
        entry = RegisteredAiTool(tool=tool, definition=define_tool(tool), source=source)
        previous = self._tools.get(entry.id)
        if previous is not None and previous.tool is not tool:
            logger.warning(
                "AI tool %r: %s (%s) replaces %s (%s) (last loaded wins)",
                entry.id,
                type(tool).__qualname__,
                source,
                type(previous.tool).__qualname__,
                previous.source,
            )
        self._tools[entry.id] = entry
        return entry

    def component(self, cls: ToolClassT) -> ToolClassT:
        """Class decorator: register one instance of ``cls`` (the seed's ``@AiToolComponent``)."""
        self.register(cls(), source="decorator")
        return cls

    def ids(self) -> list[str]:
        """Registered ids, in registration order."""
        return list(self._tools)

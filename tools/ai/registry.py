"""The registry of AI system tools: explicit, by decorator, or from plugins (W1, W5, T1)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeVar

from toolweave.state.errors import ConfigurationError
from toolweave.state.names import check_same_source, to_tool_name
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

    The last tool registered under an id wins, with a warning (T1); T14 clashes are refused.
    """

    def __init__(self, tools: Iterable[AiTool] = ()) -> None:
        self._tools: dict[str, RegisteredAiTool] = {}
        self._ids_by_name: dict[str, str] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: AiTool, *, source: str = "explicit") -> RegisteredAiTool:
        """Define and check ``tool`` and add it (W1).

        Raises:
            AiToolDefinitionError: The definition is incomplete or its schema is invalid.
            ConfigurationError: Another id maps to the same tool name (T14), naming both.
        """
        entry = RegisteredAiTool(tool=tool, definition=define_tool(tool), source=source)
        self._check_name(entry)
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

    def _check_name(self, entry: RegisteredAiTool) -> None:
        """T14: an id must not map to another id's tool name (``fill-form``, ``fill_form``)."""
        try:
            name = to_tool_name(entry.id)
        except ConfigurationError:
            return  # no tool name at all: as_chatbot_tool says so if it is ever asked for one
        check_same_source(name, self._ids_by_name.setdefault(name, entry.id), entry.id)

    def component(self, cls: ToolClassT) -> ToolClassT:
        """Class decorator: register one instance of ``cls`` (the seed's ``@AiToolComponent``)."""
        self.register(cls(), source="decorator")
        return cls

    def ids(self) -> list[str]:
        """Registered ids, in registration order."""
        return list(self._tools)

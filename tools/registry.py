"""The tool registry (T1, F3): names are checked on registration, lookups are exact."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from typing import Any, Generic, TypeVar

from toolweave.state.errors import ConfigurationError
from toolweave.state.names import (
    check_same_source,
    check_tool_name,
    qualified_name,
    split_qualified_name,
)
from toolweave.tools.base import ChatbotTool
from toolweave.tools.declaration import check_declaration

logger = logging.getLogger(__name__)

AnyTool = ChatbotTool[Any]
EntryT = TypeVar("EntryT")

NOT_A_TOOL_LIST = (
    "the tools must be a list of tool instances, not {kind}: build_graph(domain, [tool, ...]), "
    "the domain first (T1)"
)
A_TOOL_CLASS = (
    "{cls} is a tool class, not a tool: register an instance, {cls}() (tools are long-lived "
    "instances shared by every run, T1)"
)


def _tool_list(tools: object) -> Iterable[object]:
    """``tools`` as an iterable of tools, or a :class:`ConfigurationError` saying what to pass."""
    if isinstance(tools, (str, bytes, ChatbotTool)) or not isinstance(tools, Iterable):
        raise ConfigurationError(NOT_A_TOOL_LIST.format(kind=type(tools).__name__))
    return tools


class KeyedRegistry(Generic[EntryT]):
    """What the tool registries share: entries by key (``_tools``), in registration order."""

    _tools: dict[str, EntryT]

    def get(self, key: str) -> EntryT | None:
        """The entry registered under ``key``, or ``None``."""
        return self._tools.get(key)

    def __getitem__(self, key: str) -> EntryT:
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return found

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def __iter__(self) -> Iterator[EntryT]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)


def _source(tool: AnyTool) -> str:
    """The name a tool came by: its outside name (T14), else its own."""
    return getattr(tool, "source_name", None) or tool.name


def _shown(tool: AnyTool) -> str:
    """A tool for a log line: its class, and the outside name it was adapted from."""
    outside = getattr(tool, "source_name", None)
    source = "" if outside is None else f" (from {outside!r})"
    return f"{type(tool).__qualname__}{source}"


class ToolRegistry(KeyedRegistry[AnyTool]):
    """Tools by name; the last one registered under a name wins (T1).

    Lookup takes the plain name or ``"<domain>.<name>"`` (F3); no per-request data.
    """

    def __init__(self, tools: Iterable[AnyTool] = ()) -> None:
        """Register ``tools`` in order.

        Raises:
            ConfigurationError: ``tools`` is not a list of tools (one tool, a domain), or
                :meth:`register` refuses one of them.
        """
        self._tools: dict[str, AnyTool] = {}
        for tool in _tool_list(tools):
            self.register(tool)  # type: ignore[arg-type]  # register checks what it is

    def register(self, tool: AnyTool) -> AnyTool:
        """Add ``tool``; a tool already under the same name is replaced with a warning (T1).

        Raises:
            ConfigurationError: ``tool`` is a class, not an instance; the ``name`` is missing or
                not lower_snake_case, the tool under it came from another outside name (T14),
                or :func:`check_declaration` refuses it.
        """
        if isinstance(tool, type):
            raise ConfigurationError(A_TOOL_CLASS.format(cls=tool.__qualname__))
        name = check_tool_name(getattr(tool, "name", None), type(tool).__qualname__)
        check_declaration(tool)
        previous = self._tools.get(name)
        if previous is not None and previous is not tool:
            check_same_source(name, _source(previous), _source(tool))
            logger.warning(
                "tool %r: %s replaces %s (last loaded wins)", name, _shown(tool), _shown(previous)
            )
        self._tools[name] = tool
        return tool

    def get(self, name: str) -> AnyTool | None:
        """The tool for a plain or ``"<domain>.<name>"`` name (F3), or ``None``."""
        domain, plain = split_qualified_name(name)
        tool = self._tools.get(plain)
        if tool is None or (domain is not None and tool.domain != domain):
            return None
        return tool

    def qualified_name(self, tool: AnyTool) -> str:
        """The prefixed name under which :meth:`get` finds ``tool`` (``"<domain>.<name>"``)."""
        return qualified_name(tool.domain, tool.name)

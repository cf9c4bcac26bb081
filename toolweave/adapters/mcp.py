"""The tools of MCP servers as toolweave tools, via langchain-mcp-adapters (``toolweave[mcp]``)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel
from typing_extensions import TypedDict, Unpack

from toolweave.adapters.langchain import from_langchain_tool
from toolweave.state.errors import ConfigurationError
from toolweave.tools.base import ChatbotTool, EligibleSystem

MISSING_EXTRA = "MCP support needs the mcp extra: pip install 'toolweave[mcp]'"


class McpToolOptions(TypedDict, total=False):
    """How :func:`aload_mcp_tools` and :func:`load_mcp_tools` shape the tools they load."""

    domain: str | None
    """The domain the tools may run in (T2); ``None`` (the default): every domain."""
    eligible_system: EligibleSystem
    """Their system filter (T3)."""
    prefix_server_name: bool
    """Name each tool ``<server>_<tool>`` to keep servers apart (T1); default ``False``."""
    priority: int
    """Execution order on a task (A6); default 100."""
    ask_for_missing_inputs: bool
    """Ask the user for an unfilled required argument instead of declining (T13, Q1)."""


async def aload_mcp_tools(
    connections: Mapping[str, Mapping[str, Any]], **options: Unpack[McpToolOptions]
) -> list[ChatbotTool[BaseModel]]:
    """Connect to MCP servers and return their tools as ChatbotTools.

    Args:
        connections: Server name → connection, as langchain-mcp-adapters takes it, e.g.
            ``{"transport": "streamable_http", "url": "http://127.0.0.1:8000/mcp"}``.
        **options: See :class:`McpToolOptions`.

    Returns:
        One ChatbotTool per MCP tool, in the servers' order; each call opens its own MCP
        session (T11), runs only with its required arguments filled, and an MCP error
        result is a failure (R7), never context (T13).
    """
    try:
        from langchain_mcp_adapters.client import MultiServerMCPClient
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        raise ConfigurationError(MISSING_EXTRA) from exc
    client = MultiServerMCPClient(
        {name: dict(conn) for name, conn in connections.items()},  # type: ignore[misc]
        tool_name_prefix=options.get("prefix_server_name", False),
    )
    tools = await client.get_tools()
    return [
        from_langchain_tool(
            tool, domain=options.get("domain"), eligible_system=options.get("eligible_system"),
            priority=options.get("priority", 100),
            ask_for_missing_inputs=options.get("ask_for_missing_inputs", False),
        )
        for tool in tools
    ]  # fmt: skip


def load_mcp_tools(
    connections: Mapping[str, Mapping[str, Any]], **options: Unpack[McpToolOptions]
) -> list[ChatbotTool[BaseModel]]:
    """Sync :func:`aload_mcp_tools`, for scripts and notebooks outside an event loop."""
    return asyncio.run(aload_mcp_tools(connections, **options))

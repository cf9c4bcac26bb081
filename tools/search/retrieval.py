"""The default RAG retrieval tool of a domain (A5): keyword search over a document store."""

from __future__ import annotations

from typing import Any

from toolweave.state.results import ToolResult
from toolweave.tools.base import ChatbotTool, EmptyRequest, ToolCallContext
from toolweave.tools.search.protocol import DocumentStore

DEFAULT_LIMIT = 8
"""Sentences a retrieval returns by default."""


def name_tool(tool: Any, name: str, domain: str | None) -> None:
    """Give a search tool instance its name and domain (T1, T2).

    ``name`` and ``domain`` are class attributes of the tool contract; a search tool
    is configured per instance (one per store), so the instance attributes shadow them.
    """
    tool.name = name
    tool.domain = domain


class RetrievalTool(ChatbotTool[EmptyRequest]):
    """Searches a :class:`DocumentStore` with the execution text and returns the hits as context.

    It is never routed (``executable_instruction`` is ``None``): the orchestrator
    runs a domain's default retrieval tool beside the routed tools (A5), and
    coordinators may force it (F1). The instance holds only its configuration,
    so one instance serves concurrent runs (T11).

    Args:
        name: The tool's unique name, e.g. ``"korhaz_search"`` (T1).
        domain: The domain it belongs to, or ``None`` for every domain (T2).
        store: The store to search.
        limit: Most sentences per search.
        lang: Search only documents in this language; ``None`` searches all.
    """

    priority = 500
    request_model = EmptyRequest
    executable_instruction = None
    description = (
        "Keyword search in the domain's documents (RAG retrieval). "
        "Kulcsszavas keresés a tudástár dokumentumaiban."
    )

    def __init__(
        self,
        name: str,
        domain: str | None,
        store: DocumentStore,
        limit: int = DEFAULT_LIMIT,
        *,
        lang: str | None = None,
    ) -> None:
        if limit <= 0:
            raise ValueError("limit must be positive")
        name_tool(self, name, domain)
        self.store = store
        self.limit = limit
        self.lang = lang

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
        """Search with ``ctx.text``; the hits as context (R2), or ``None`` when none (R1)."""
        ctx.progress("SEARCHING")
        documents = self.store.search(ctx.text, limit=self.limit, lang=self.lang)
        ctx.progress("FOUND", detail=str(len(documents)))
        return ToolResult.as_context(self.name, documents) if documents else None

"""The default RAG retrieval tool of a domain (A5, D9): passages found by keywords and meaning."""

from __future__ import annotations

from typing import Any

from toolweave.state.documents import UniqueTextDocument
from toolweave.state.results import ToolResult
from toolweave.tools.base import ALL, ChatbotTool, EmptyRequest, ToolCallContext
from toolweave.tools.search import vectors
from toolweave.tools.search.passages import NEIGHBOURS, passages
from toolweave.tools.search.protocol import DocumentStore, with_page_counts

DEFAULT_LIMIT = 8  # hits (best sentences) widened to passages
DEFAULT_MAX_CHARS = 2_400  # D9, A10: the answer and gatekeeper calls carry it; 8,000 a question


def retrieve(
    store: DocumentStore,
    question: str,
    *,
    limit: int = DEFAULT_LIMIT,
    lang: str | None = None,
    max_chars: int = DEFAULT_MAX_CHARS,
    neighbours: int = NEIGHBOURS,
    also: str = "",
) -> list[UniqueTextDocument]:
    """The default retrieval of ``question``: the store's fused ranking, hits widened to passages.

    The better half of the hits is widened by ``neighbours`` sentences; the rest stay lone.

    Args:
        store: The documents.
        question: The text to search with.
        limit: Hits to widen (the best ``limit`` sentences of the fused ranking).
        lang: Only documents in this language, when given.
        max_chars: Most characters of sentence text returned.
        neighbours: Sentences either side of each hit (same page); 0 returns the hits.
        also: More words to search with (D9): the question with them is a second
            search, fused with the question's; up to half ``limit`` more hits are widened.
    """
    search = getattr(store, "fused_search", None) or store.search
    hits: list[UniqueTextDocument] = search(question, limit=limit, lang=lang)
    if also.strip():  # the question with the words: an off-subject word cannot lead alone
        more: list[UniqueTextDocument] = search(f"{question} {also}", limit=limit, lang=lang)
        hits = vectors.fused_documents(hits, more, limit + limit // 2)
    widen = widened(hits)
    found = passages(
        hits, store.page_sentences, max_chars=max_chars, neighbours=neighbours, widened=widen
    )
    return with_page_counts(store, found)  # R9: "p. N" only for a document of several


def widened(hits: list[UniqueTextDocument]) -> int:
    """How many of ``hits`` (best first) get their neighbours: the better half (A10, D9).

    A low-ranked hit's neighbours rarely hold the asked fact and cost every call that
    reads the context; the hit itself stays, alone.
    """
    return (len(hits) + 1) // 2


def name_tool(tool: Any, name: str, domain: str | None) -> None:
    """Give a search tool instance (one per store) its name and domain (T1, T2)."""
    tool.name = name
    tool.domain = domain


class RetrievalTool(ChatbotTool[EmptyRequest]):
    """Searches a :class:`DocumentStore` with the execution text and returns passages (D9).

    Never routed: it runs beside the routed tools (A5) or forced (F1); stateless (T11).

    Args:
        name: The tool's unique name, e.g. ``"docs_search"`` (T1).
        domain: The domain it belongs to, or ``None`` for every domain (T2).
        store: The store to search (by meaning too when it has an embedding model).
        limit: Hits per search, each widened to its passage.
        lang: Search only documents in this language; ``None`` searches all.
        max_chars: Most characters of passage text per search.
        neighbours: Sentences either side of a hit a passage holds (0: lone sentences).
    """

    priority = 500
    eligible_system = ALL  # T3: the documents answer whatever the system filter
    request_model = EmptyRequest
    executable_instruction = None
    description = (
        "Search in the domain's documents by keywords and meaning (RAG retrieval). "
        "Keresés a tudástár dokumentumaiban."
    )

    def __init__(
        self,
        name: str,
        domain: str | None,
        store: DocumentStore,
        limit: int = DEFAULT_LIMIT,
        *,
        lang: str | None = None,
        max_chars: int = DEFAULT_MAX_CHARS,
        neighbours: int = NEIGHBOURS,
    ) -> None:
        if limit <= 0 or max_chars <= 0 or neighbours < 0:
            raise ValueError("limit and max_chars must be positive, neighbours not negative")
        name_tool(self, name, domain)
        self.store = store
        self.limit = limit
        self.lang = lang
        self.max_chars = max_chars
        self.neighbours = neighbours

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
        """Search with ``ctx.text`` (and ``ctx.search_words``, D9): passages (R2), or ``None``."""
        ctx.progress("SEARCHING")
        documents = retrieve(
            self.store,
            ctx.text,
            limit=self.limit,
            lang=self.lang,
            max_chars=self.max_chars,
            neighbours=self.neighbours,
            also=ctx.search_words,
        )
        ctx.progress("FOUND", detail=str(len(documents)))
        return ToolResult.as_context(self.name, documents) if documents else None

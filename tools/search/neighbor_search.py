"""``NeighborPageSearchTool``: the cheap step of deep fallback, next pages (SPEC D3, D4, D6)."""

from __future__ import annotations

from collections.abc import Iterable

from toolweave.state.documents import UniqueTextDocument
from toolweave.state.results import ToolResult
from toolweave.tools.base import ALL, EmptyRequest, PriorContext, ToolCallContext
from toolweave.tools.consumers import ContextConsumerTool
from toolweave.tools.search.novelty import Known
from toolweave.tools.search.page_graph import PageRef
from toolweave.tools.search.page_reading import (
    matching_sentences,
    open_heading,
    read_pages,
    subtask_question,
    unread,
    unread_wording,
)
from toolweave.tools.search.protocol import DocumentStore
from toolweave.tools.search.retrieval import name_tool
from toolweave.tools.search.rewrites import search_phrasings


def context_pages(prior_context: PriorContext) -> list[PageRef]:
    """The pages of the documents in the context buffer, best-scored first, without repeats."""
    documents: list[UniqueTextDocument] = [
        doc for entries in prior_context.values() for entry in entries for doc in entry.documents
    ]
    documents.sort(key=lambda doc: doc.sentence_score, reverse=True)  # stable: buffer order
    return list(
        dict.fromkeys(PageRef(d.document_id, d.page) for d in documents if d.page is not None)
    )


class NeighborPageSearchTool(ContextConsumerTool[EmptyRequest]):
    """Reads the pages next to the prior context's pages (B2, D6); forced only (D4), R5.

    Args:
        name: The tool's unique name (T1).
        domain: Its domain, or ``None`` for every domain (T2).
        store: The store holding the pages.
        k: How far to look: pages ``p-k .. p+k`` of each context page ``p``.
        page_limit: Pages read at most per search.
        enough: Pages that must answer before the reading stops.
    """

    priority = 300
    eligible_system = ALL  # T3: the documents answer whatever the system filter
    executable_instruction = None
    description = (
        "Neighbor page search: reads the pages next to those already in the context "
        "(forced by the deep-search coordinator only)."
    )

    def __init__(
        self,
        name: str,
        domain: str | None,
        store: DocumentStore,
        k: int = 1,
        *,
        page_limit: int = 6,
        enough: int = 1,
    ) -> None:
        if k < 1:
            raise ValueError("k must be at least 1")
        name_tool(self, name, domain)
        self.store = store
        self.k = k
        self.page_limit = page_limit
        self.enough = enough

    def neighbours(self, pages: Iterable[PageRef]) -> list[tuple[PageRef, str]]:
        """Pages ``±1..k`` of each page, nearest first, each with the heading it continues."""
        found: dict[PageRef, str] = {}
        existing: dict[str, set[int]] = {}
        for ref in pages:
            numbers = existing.setdefault(
                ref.document_id, set(self.store.pages_of(ref.document_id))
            )
            for distance in range(1, self.k + 1):
                for number in (ref.page + distance, ref.page - distance):
                    other = PageRef(ref.document_id, number)
                    if number not in numbers or other in found:
                        continue
                    before = self.store.page(ref.document_id, number - 1)
                    found[other] = "" if before is None else open_heading(before)
        return list(found.items())[: self.page_limit]

    def execute_with_prior_context(
        self, request: EmptyRequest, ctx: ToolCallContext, prior_context: PriorContext
    ) -> ToolResult | None:
        """Read the neighbour pages for the subtask's question; ``None`` when none adds news, D8."""
        question = subtask_question(ctx)
        ctx.progress("SEARCHING", detail="pages next to the context")
        pages = self.neighbours(context_pages(prior_context))
        ctx.progress("CANDIDATE_PAGES", detail=str(len(pages)))
        phrasings = search_phrasings(ctx, question)
        known = Known.of_prior(prior_context)  # D8: a page read back into the context is no find
        refs = [ref for ref, _ in pages]
        wording = unread_wording(question, phrasings)
        hits = matching_sentences(self.store, refs, wording)
        # A10, D7: the pages' own passages first; a page is read only when they say nothing
        found = unread(self.store, hits, known, wording, whole=ctx.llm is not None)
        if not found and ctx.llm is not None and not ctx.llm.exhausted:
            found = read_pages(
                ctx,
                self.store,
                pages,
                question,
                enough=self.enough,
                phrasings=phrasings,
                known=known,
            )
        ctx.progress("FOUND", detail=str(len(found)))  # a number: phrases say it in words (P4)
        return ToolResult.as_guaranteed_context(self.name, found) if found else None

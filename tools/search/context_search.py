"""``ContextSearchTool``: the full search of deep fallback (SPEC D3, D4, D5, D8)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import zip_longest
from types import EllipsisType

from langchain_core.retrievers import BaseRetriever

from toolweave.state.documents import DocumentKey, UniqueTextDocument
from toolweave.state.results import ToolResult
from toolweave.tools.base import ALL, ChatbotTool, EmptyRequest, PriorContext, ToolCallContext
from toolweave.tools.consumers import ContextConsumerTool
from toolweave.tools.search.novelty import Known
from toolweave.tools.search.page_graph import PageRef
from toolweave.tools.search.page_reading import (
    by_meaning,
    read_pages,
    subtask_question,
    unread,
    unread_wording,
)
from toolweave.tools.search.protocol import PageGraphStore
from toolweave.tools.search.retrieval import name_tool
from toolweave.tools.search.retrievers import retrieved_pages
from toolweave.tools.search.rewrites import CorpusWordsCache, search_phrasings


def interleave(ranked: Sequence[Sequence[UniqueTextDocument]]) -> list[UniqueTextDocument]:
    """The lists' documents taking turns (every list's first, then every second, ...), once each."""
    kept: dict[DocumentKey, UniqueTextDocument] = {}
    for row in zip_longest(*ranked):
        for doc in row:
            if doc is not None:
                kept.setdefault(doc.key, doc)
    return list(kept.values())


class ContextSearchTool(ContextConsumerTool[EmptyRequest]):
    """Keyword, retriever and graph search, then per-page reading; forced only (D4), R5.

    Args:
        name: The tool's unique name (T1).
        domain: Its domain, or ``None`` for every domain (T2).
        store: The store to search (e.g. ``SqliteDocumentStore``).
        max_brute_force_page_count: D5 limit; ``None`` allows the whole-domain scan.
        page_limit: Candidate pages read at most per search.
        keyword_limit: Sentences the keyword search fetches to find candidate pages.
        graph_seeds: Best keyword pages whose graph links join the candidates.
        graph_links: Links followed per seed page.
        best_sentences: Sentences returned when D5 skips the reading.
        enough: Pages that must answer before the reading stops.
        retrievers: LangChain retrievers proposing more candidate pages.
    """

    priority = 400
    eligible_system = ALL  # T3: the documents answer whatever the system filter
    executable_instruction = None
    description = (
        "Deep search: reads the domain's pages with the model to answer a missing piece "
        "(forced by the deep-search coordinator only)."
    )
    max_brute_force_page_count: int | None = None
    """D5: above this many candidate pages no page is read; set, the domain scan never runs."""

    def __init__(
        self,
        name: str,
        domain: str | None,
        store: PageGraphStore,
        *,
        max_brute_force_page_count: int | EllipsisType | None = ...,
        page_limit: int = 8,
        keyword_limit: int = 40,
        graph_seeds: int = 2,
        graph_links: int = 3,
        best_sentences: int = 5,
        enough: int = 1,
        retrievers: Sequence[BaseRetriever] = (),
    ) -> None:
        name_tool(self, name, domain)
        self.store = store
        if not isinstance(max_brute_force_page_count, EllipsisType):
            self.max_brute_force_page_count = max_brute_force_page_count
        self.page_limit = page_limit
        self.keyword_limit = keyword_limit
        self.graph_seeds = graph_seeds
        self.graph_links = graph_links
        self.best_sentences = best_sentences
        self.enough = enough
        self.retrievers = tuple(retrievers)
        self.corpus_words = CorpusWordsCache()  # D8: derived phrasings

    def candidate_pages(
        self, question: str, phrasings: Sequence[str] = ()
    ) -> tuple[list[PageRef], list[UniqueTextDocument]]:
        """Candidate pages (keyword hits, retriever pages, graph links) and the keyword hits."""
        queries = [*phrasings, question]
        found = [self.store.search(query, limit=self.keyword_limit) for query in queries]
        hits = interleave(found)
        pages = dict.fromkeys(PageRef(d.document_id, d.page) for d in hits if d.page is not None)
        seeds = list(pages)[: self.graph_seeds]
        for query in queries:
            for ref in retrieved_pages(self.retrievers, query):
                pages.setdefault(ref, None)
        for seed in seeds:
            for link in self.store.linked_pages(
                seed.document_id, seed.page, limit=self.graph_links
            ):
                pages.setdefault(link.page, None)
        return list(pages), hits

    # a consumer in the graph (D8) whose plain execute also works, knowing no context
    def execute(  # type: ignore[override]
        self, request: EmptyRequest, ctx: ToolCallContext
    ) -> ToolResult | None:
        """Answer the subtask's question from the domain, knowing no context (D3, D5)."""
        return self.search(ctx, Known())

    aexecute = ChatbotTool.aexecute  # type: ignore[assignment]  # execute, in a worker thread

    def execute_with_prior_context(
        self, request: EmptyRequest, ctx: ToolCallContext, prior_context: PriorContext
    ) -> ToolResult | None:
        """Answer the subtask's question with what the context does not hold yet (D3, D5, D8)."""
        return self.search(ctx, Known.of_prior(prior_context))

    def unread_reason(self, ctx: ToolCallContext, candidates: int) -> tuple[str, str] | None:
        """Why no candidate page may be read (a progress key and detail), or ``None``."""
        limit = self.max_brute_force_page_count
        if ctx.llm is None:
            return "NOT_READ", "no model to read with"
        if ctx.llm.exhausted:
            return "BUDGET_SPENT", f"0/{candidates} pages read"
        if limit is not None and candidates > limit:
            return "TOO_MANY_PAGES", f"{candidates} > {limit}"
        return None

    def unread_first(
        self,
        ctx: ToolCallContext,
        question: str,
        phrasings: Sequence[str],
        hits: Sequence[UniqueTextDocument],
        known: Known,
        candidates: int,
    ) -> tuple[bool, ToolResult | None]:
        """The pages' own passages for the piece, when they settle it without a read (A10, D7).

        A model call is made only where the passages cannot answer: the hits' passages are
        taken unread when their pages say every lacking word of one rewrite; no model, the
        D5 limit or a spent budget returns what the passages give, found or not. Returns
        whether the search is settled, and its result.
        """
        why = self.unread_reason(ctx, candidates)
        if why is not None:
            ctx.progress(*why)  # D5, D7: no page is read; the best passages, unread (D9)
        wording = unread_wording(question, phrasings)
        whole = why is None or why[0] == "BUDGET_SPENT"  # meant to read: whole pieces only
        best = unread(self.store, hits[: self.best_sentences], known, wording, whole=whole)
        if best:
            ctx.progress("FOUND", detail=str(len(best)))  # a number: phrases say it in words
            return True, ToolResult.as_guaranteed_context(self.name, best)
        return why is not None, None

    def search(self, ctx: ToolCallContext, known: Known) -> ToolResult | None:
        """The search for the subtask's piece by its rewrites and phrasings (D8); D5 bounds it."""
        question = subtask_question(ctx)
        ctx.progress("SEARCHING_FOR", detail=question)  # P4: each missing piece by name
        candidates, hits = self.candidate_pages(
            question, self.corpus_words.lookups(ctx, self.store, question)
        )
        hits = known.new(hits)
        phrasings = search_phrasings(ctx, question)  # D8: the gatekeeper's rewrites
        ctx.progress("CANDIDATE_PAGES", detail=str(len(candidates)))
        limit = self.max_brute_force_page_count
        if not candidates:
            if limit is not None:  # D5: never scan the whole domain
                ctx.progress("NOT_FOUND", detail="no candidate page; domain scan disabled")
                return self.nearest(ctx, question, phrasings, known)
            candidates = self.store.page_refs()
            ctx.progress("SCANNING_DOMAIN", detail=f"{len(candidates)} pages")
        else:
            answered, found_unread = self.unread_first(
                ctx, question, phrasings, hits, known, len(candidates)
            )
            if found_unread is not None:
                return found_unread
            if answered:
                return self.nearest(ctx, question, phrasings, known)
            candidates = candidates[: self.page_limit]
        pages = [(ref, "") for ref in candidates]
        found = read_pages(
            ctx,
            self.store,
            pages,
            question,
            enough=self.enough,
            phrasings=phrasings,
            known=known,
            echoes=True,
        )
        if found:
            ctx.progress("FOUND", detail=str(len(found)))
            return ToolResult.as_guaranteed_context(self.name, found)
        return self.nearest(ctx, question, phrasings, known)

    def nearest(
        self, ctx: ToolCallContext, question: str, phrasings: Sequence[str], known: Known
    ) -> ToolResult | None:
        """When words found nothing new: the sentences nearest the piece by meaning (D8, D9).

        They join the answer's context as plain context, not guaranteed: no model and no
        word judged them, so the answer step uses them only if they answer.
        """
        near = by_meaning(self.store, unread_wording(question, phrasings), known)
        ctx.progress("FOUND", detail=str(len(near)))  # a number: phrases say it in words (P4)
        return ToolResult.as_context(self.name, near) if near else None

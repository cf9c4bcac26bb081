"""Per-page LLM reading shared by the deep-search tools (D3, D5, D6): one call per page (D7)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import zip_longest

from toolweave.state.documents import UniqueTextDocument
from toolweave.state.marker import extract_coordinator_task
from toolweave.tools.base import ToolCallContext
from toolweave.tools.language import detect_language
from toolweave.tools.search.novelty import Known, content_terms
from toolweave.tools.search.page_graph import PageRef
from toolweave.tools.search.passages import passages, under
from toolweave.tools.search.protocol import DocumentStore, with_page_counts
from toolweave.tools.search.retrieval import DEFAULT_LIMIT
from toolweave.tools.search.rewrites import best_question
from toolweave.tools.search.text import content_words, sections, word_terms, words

READ_SCORE = 1.0  # sentence_score of an answer read from a page: above any keyword hit
FIGURE = re.compile(r"\d+(?:[ \u00a0]\d{3})*(?:[:.,]\d+)*")  # "7:00", "14 000", "1.5": one each
SUPPORT_CHARS = 600  # most characters of the page's own sentences standing for one answer
MEANING_LIMIT = DEFAULT_LIMIT  # nearest sentences by meaning a wording is looked up by (D8)
UNREAD_CHARS = 1_200  # most characters of unread passages one deep search returns (D7, D9)


def subtask_question(ctx: ToolCallContext) -> str:
    """The question a search tool answers: its subtask's own prompt (M5), never the parent's."""
    return extract_coordinator_task(ctx.text).strip() or ctx.task.task_prompt


def open_heading(text: str) -> str:
    """The heading of the last section of a page (empty when the page has none)."""
    found = sections(text)
    return found[-1][0] if found else ""


def page_passage(store: DocumentStore, ref: PageRef, *, continues: str = "") -> str | None:
    """The text the model reads for one page (``None``: no such page, or empty)."""
    text = store.page(ref.document_id, ref.page)
    if text is None or not text.strip():
        return None
    info = store.document(ref.document_id)
    title = info.name if info is not None and info.name else ref.document_id
    one_page = info is not None and info.page_count == 1  # no "p. 1" to copy (R6)
    lines = [f"# {title}" if one_page else f"# {title} (p. {ref.page})"]
    if continues and not text.lstrip().startswith("#"):
        lines.append(f"## {continues}")
    lines.append(text.strip())
    return "\n".join(lines)


def _terms(text: str) -> set[str]:
    return {term for word in words(text) for term in word_terms(word)}


def _page_terms(store: DocumentStore, hit: UniqueTextDocument) -> set[str]:
    if hit.page is None:
        return _terms(hit.text)
    return _terms(" ".join(s.text for s in store.page_sentences(hit.document_id, hit.page)))


def unread_wording(question: str, phrasings: Sequence[str]) -> Sequence[str]:
    """What an unread hit must say (D8): the piece's rewrites, else the piece itself."""
    return phrasings or (question,)


def unread(
    store: DocumentStore,
    hits: Sequence[UniqueTextDocument],
    known: Known,
    wording: Sequence[str],
    *,
    whole: bool,
) -> list[UniqueTextDocument]:
    """The new ones of ``hits`` (best first) widened to passages, unread (D5, D7, D9).

    A hit counts only when it says a content word of one of ``wording`` the context lacks
    and, when ``whole``, its page says every such word of that wording (D8).
    """
    lacking = [words for text in wording if (words := [word_terms(w) for w in known.lacking(text)])]
    pages: dict[tuple[str, int | None], set[str]] = {}
    fresh = []
    for hit in known.new(hits):
        where = (hit.document_id, hit.page)
        if whole and where not in pages:
            pages[where] = _page_terms(store, hit)
        said = _terms(hit.text)
        if any(
            any(said.intersection(word) for word in words)
            and (not whole or all(pages[where].intersection(word) for word in words))
            for words in lacking
        ):
            fresh.append(hit)
    found = passages(fresh, store.page_sentences, max_chars=UNREAD_CHARS)
    return with_page_counts(store, known.new(found))


def by_meaning(
    store: DocumentStore, wording: Sequence[str], known: Known, *, limit: int = MEANING_LIMIT
) -> list[UniqueTextDocument]:
    """The sentences nearest a wording by meaning that the context lacks, each alone (D8, D9).

    For a deep search whose words found nothing new: of each wording's ``limit`` nearest
    sentences (as many as the first retrieval takes hits), those the context does not
    hold, within :data:`UNREAD_CHARS`. A wording the context holds every word of is not
    looked up; a lookup that reaches only the context's own sentences finds nothing (a
    ranking by meaning always has a nearest sentence, so it never goes further down).
    Lone sentences, not passages: no word judged them, so they cost the answer little.
    ``[]`` when the store ranks by keywords alone.
    """
    semantic = getattr(store, "semantic_search", None)
    if semantic is None or getattr(store, "embeddings", None) is None:
        return []
    ranked = [known.new(semantic(text, limit=limit)) for text in wording if known.lacking(text)]
    fresh = {doc.key: doc for row in zip_longest(*ranked) for doc in row if doc is not None}
    found = passages(
        list(fresh.values()), store.page_sentences, max_chars=UNREAD_CHARS, neighbours=0
    )
    return with_page_counts(store, found)


def matching_sentences(
    store: DocumentStore, pages: Sequence[PageRef], wording: Sequence[str]
) -> list[UniqueTextDocument]:
    """The sentences of ``pages`` sharing a content word with ``wording``, most shared first."""
    wanted = set().union(*(content_terms(text) for text in wording))
    scored: list[tuple[int, int, UniqueTextDocument]] = []
    for rank, ref in enumerate(pages):
        info = store.document(ref.document_id)
        name = info.name if info is not None and info.name else ref.document_id
        for sentence in store.page_sentences(ref.document_id, ref.page):
            shared = len(wanted & _terms(sentence.text))
            if shared:
                update = {"sentence_score": float(shared), "document_name": name}
                if info is not None:
                    update["document_url"] = info.url
                scored.append((-shared, rank, sentence.model_copy(update=update)))
    scored.sort(key=lambda item: item[:2])
    return [sentence for _, _, sentence in scored]


def _support_score(sentence: str, figures: set[str], terms: set[str]) -> tuple[int, int]:
    """The answer's figures and content words a sentence says."""
    return len(figures & set(FIGURE.findall(sentence))), len(terms & _terms(sentence))


def supporting_sentences(
    store: DocumentStore, read: UniqueTextDocument
) -> list[UniqueTextDocument]:
    """The page's own sentences a read answer rests on, in place of the answer (R9, D3).

    A sentence must say an answer's figure, or (no figures) half its content words;
    ``[read]`` when none does.
    """
    if read.page is None:
        return [read]
    figures = set(FIGURE.findall(read.text))
    terms = content_terms(read.text)
    page = store.page_sentences(read.document_id, read.page)
    scored = [(_support_score(s.text, figures, terms), s) for s in page]
    scored.sort(key=lambda item: item[0], reverse=True)  # stable: page order among equals
    if figures:
        chosen = [s for (shared, _), s in scored if shared]
    else:
        need = max(1, (len(terms) + 1) // 2)
        chosen = [s for (_, said), s in scored[:1] if said >= need]
    if not chosen:
        return [read]
    hits = [under(s, read, read.sentence_score) for s in chosen[:3]]
    found = passages(hits, store.page_sentences, max_chars=SUPPORT_CHARS, neighbours=0)
    return [d.model_copy(update={"page_count": read.page_count}) for d in found]


def grounded(answer: str, passage: str, question: str, user_lang: str) -> bool:
    """Whether an answer adds to its question a word or number its page says (D8)."""
    asked = _terms(question)
    added = [w for w in content_words(answer) if not any(t in asked for t in word_terms(w))]
    if not added:
        return False
    if detect_language(passage).lang != user_lang:
        return True
    have = _terms(passage)
    return any(any(t in have for t in word_terms(w)) for w in added)


def read_pages(
    ctx: ToolCallContext,
    store: DocumentStore,
    pages: Sequence[tuple[PageRef, str]],
    question: str,
    *,
    enough: int,
    phrasings: Sequence[str] = (),
    known: Known | None = None,
    echoes: bool = False,
) -> list[UniqueTextDocument]:
    """Read ``(page, heading it continues)`` pairs with ``ctx.llm`` until ``enough`` answered (D7).

    Args:
        ctx: The tool call.
        store: The store holding the pages.
        pages: The pages, loaded one at a time.
        question: What to answer.
        enough: Pages that must answer before the reading stops.
        phrasings: Other wordings of ``question`` (D8); the closest to a page is added.
        known: What the context holds (D8); an answer that only repeats it does not count.
        echoes: With no new answer, return up to ``enough`` that repeat the context.

    Returns:
        Per page that answered, the sentences its answer rests on (R9), else the answer.
    """
    found: list[list[UniqueTextDocument]] = []  # per page that answered
    repeated: list[list[UniqueTextDocument]] = []
    if ctx.llm is None:
        return []
    for index, (ref, continues) in enumerate(pages, start=1):
        if ctx.llm.exhausted:
            ctx.progress("BUDGET_SPENT", detail=f"{index - 1}/{len(pages)} pages read")
            break
        passage = page_passage(store, ref, continues=continues)
        if passage is None:
            continue
        info = store.document(ref.document_id)
        name = info.name if info is not None and info.name else ref.document_id
        page = f" (p. {ref.page})" if info is not None and info.page_count > 1 else ""
        at = f"{index}/{len(pages)}: {name}{page}"  # P4: each page read, then what came of it
        ctx.progress("READING_PAGE", detail=at)
        closest = best_question(question, phrasings, passage)
        asked = question if closest == question else f"{question} ({closest})"
        answer = ctx.llm.read_passage(asked, passage)
        if not answer or not answer.strip() or not grounded(answer, passage, asked, ctx.user_lang):
            ctx.progress("NOT_IN_PAGE", detail=at)  # no answer, or none the page holds
            continue
        read = UniqueTextDocument(
            document_id=ref.document_id,
            document_name=name,
            document_url=None if info is None else info.url,
            page=ref.page,
            sentence_number=0,
            text=answer.strip(),
            sentence_score=READ_SCORE,
            page_count=None if info is None else info.page_count,  # R9: one page, no "p. 1"
        )
        if known is not None and known.holds(read):
            ctx.progress("NOTHING_NEW", detail=at)
            if not known.repeats(read):  # another piece's find is not even an echo
                repeated.append(supporting_sentences(store, read))
            continue
        ctx.progress("ANSWER_IN_PAGE", detail=at)
        found.append(supporting_sentences(store, read))
        if len(found) >= enough:
            break
    kept = found or (repeated[:enough] if echoes else [])
    return [doc for page in kept for doc in page]

"""Retrieved text at sentence granularity (R6)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from toolweave.state.errors import ConflictingDocumentsError

DocumentKey = tuple[str, int | None, int | None]
SentenceKey = tuple[str, int | None, int | None, str]
"""An identity with its text: what R6 removes when it is seen twice (R11)."""

CONFLICTING_TEXTS = (
    "tool {tool!r} returned {count} different texts under one identity (document_id="
    "{document_id!r}, page={page!r}, sentence_number={sentence!r}); give each its own "
    "sentence_number (or page), or leave sentence_number out to have them numbered in "
    "order (R11)"
)


class UniqueTextDocument(BaseModel):
    """One sentence (or passage) of a source document; identity ``key`` (R6, R11)."""

    model_config = ConfigDict(frozen=True)

    document_id: str
    """Stable id of the source document (a path, URL or store key)."""
    document_name: str = ""
    """Human readable title, shown in the sources list."""
    document_url: str | None = None
    """Where a person can open the document, if anywhere."""
    page: int | None = None
    """1-based page number inside the document, if paged."""
    sentence_number: int | None = None
    """1-based sentence number inside the page, if known."""
    text: str
    """The sentence or passage itself."""
    sentence_score: float = Field(default=0.0)
    """Relevance score given by the tool that found it; higher is better."""
    page_count: int | None = None
    """How many pages its document has, when known (R9: one page, no page cited); no identity."""

    @property
    def key(self) -> DocumentKey:
        """The identity triple of R6."""
        return (self.document_id, self.page, self.sentence_number)


def _as_document(doc: UniqueTextDocument | Mapping[str, Any]) -> UniqueTextDocument:
    """A document, also from the plain dict a state reader may hand the reducer."""
    return doc if isinstance(doc, UniqueTextDocument) else UniqueTextDocument.model_validate(doc)


def merge_documents(
    left: Iterable[UniqueTextDocument | Mapping[str, Any]],
    right: Iterable[UniqueTextDocument | Mapping[str, Any]],
) -> list[UniqueTextDocument]:
    """Merge two document lists by R6 identity: the higher score, first-seen order (R11)."""
    merged: dict[DocumentKey | SentenceKey, UniqueTextDocument] = {}
    for doc in map(_as_document, (*left, *right)):
        key: DocumentKey | SentenceKey = (doc.document_id, doc.page, doc.sentence_number)
        seen = merged.get(key)  # doc.key, inlined (hot)
        if seen is not None and seen.text != doc.text:  # R11: not the same sentence
            key = (doc.document_id, doc.page, doc.sentence_number, doc.text)
            seen = merged.get(key)
        if seen is None or doc.sentence_score > seen.sentence_score:
            merged[key] = doc
    return list(merged.values())


def repeated(
    present: Iterable[UniqueTextDocument | Mapping[str, Any]],
    incoming: Iterable[UniqueTextDocument],
) -> int:
    """How many of ``incoming`` :func:`merge_documents` removes after ``present`` (R11)."""
    seen: set[SentenceKey] = {
        (d.document_id, d.page, d.sentence_number, d.text) for d in map(_as_document, present)
    }
    removed = 0
    for doc in incoming:
        sentence = (doc.document_id, doc.page, doc.sentence_number, doc.text)
        if sentence in seen:
            removed += 1
        else:
            seen.add(sentence)
    return removed


def complete_identities(
    tool_name: str, documents: Sequence[UniqueTextDocument]
) -> Sequence[UniqueTextDocument]:
    """The documents of one result, each different text under its own identity (R11).

    Unnumbered clashes are numbered in order; numbered ones: :class:`ConflictingDocumentsError`.
    """
    texts: dict[DocumentKey, set[str]] = {}
    for doc in documents:
        texts.setdefault((doc.document_id, doc.page, doc.sentence_number), set()).add(doc.text)
    clashes = {key: len(found) for key, found in texts.items() if len(found) > 1}
    if not clashes:
        return documents
    for (document_id, page, no), count in clashes.items():
        if no is not None:
            raise ConflictingDocumentsError(
                CONFLICTING_TEXTS.format(
                    tool=tool_name, count=count, document_id=document_id, page=page, sentence=no
                )
            )
    return _numbered(documents, set(clashes))


def _numbered(
    documents: Sequence[UniqueTextDocument], clashes: set[DocumentKey]
) -> list[UniqueTextDocument]:
    """``documents`` with those under a clashing identity numbered in order (R11)."""
    taken: dict[tuple[str, int | None], set[int]] = {}
    for doc in documents:
        if doc.sentence_number is not None:
            taken.setdefault((doc.document_id, doc.page), set()).add(doc.sentence_number)
    given: dict[SentenceKey, int] = {}
    last: dict[tuple[str, int | None], int] = {}
    completed: list[UniqueTextDocument] = []
    for doc in documents:
        if (doc.document_id, doc.page, doc.sentence_number) not in clashes:
            completed.append(doc)
            continue
        place, sentence = (doc.document_id, doc.page), (doc.document_id, doc.page, None, doc.text)
        number = given.get(sentence)
        if number is None:
            used = taken.get(place, set())
            number = last.get(place, 0) + 1
            while number in used:
                number += 1
            last[place] = given[sentence] = number
        completed.append(doc.model_copy(update={"sentence_number": number}))
    return completed


# Keys of an answer message's ``response_metadata`` (R9, docs/guides/answers.md): its own
# sources, its kept citing sentences with their quotes, its uncited sources' first passages.
MESSAGE_SOURCES_KEY = "toolweave_sources"
MESSAGE_SENTENCES_KEY = "toolweave_sentences"
MESSAGE_SNIPPETS_KEY = "toolweave_snippets"
MESSAGE_DOMAIN_KEY = "toolweave_domain"  # the domain whose graph answered (S5, nested runs)
SNIPPET_CHARS = 180  # of an uncited source's first passage (the chat page's SNIPPET_CHARS)


class Source(BaseModel):
    """One document a final answer used (R9): its name, the pages used and its address."""

    model_config = ConfigDict(frozen=True)

    document_id: str
    """Stable id of the document."""
    name: str
    """Its title (the id when it has none)."""
    pages: tuple[int, ...] = ()
    """The pages the answer drew on, in first-use order (none for an unpaged document)."""
    url: str | None = None
    """Where a person can open it, if anywhere."""
    page_count: int | None = None
    """How many pages the document has, when the tool that found it knew (else ``None``)."""

    @property
    def cited_pages(self) -> tuple[int, ...]:
        """The pages a surface cites (R9): :attr:`pages`, none for a one-page document."""
        return () if self.page_count == 1 else self.pages


class AnswerSentence(BaseModel):
    """One sentence of a generated answer and the sources it rests on (R9)."""

    model_config = ConfigDict(frozen=True)

    text: str
    """The sentence, without citation markers."""
    sources: tuple[int, ...] = ()
    """Its sources: 1-based positions in the state's ``sources`` (empty when dropped)."""
    documents: tuple[str, ...] = ()
    """The ``document_id`` s of the passages it cited (or was found in), kept or not."""
    supported: bool = True
    """Whether those passages hold what it says; an unsupported one is not in the answer."""
    quotes: tuple[str, ...] = ()
    """For each of its ``sources``, in order, the sentence of that source that supports it."""

    def marked(self) -> str:
        """The sentence with its sources' numbers, as a surface shows it: ``"Open 8-16. [1]"``."""
        return self.text + (f" [{', '.join(map(str, self.sources))}]" if self.sources else "")


def sources_of(documents: Iterable[UniqueTextDocument | Mapping[str, Any]]) -> list[Source]:
    """One :class:`Source` per document, its pages merged, in the order first used (R9)."""
    found: dict[str, Source] = {}
    for doc in map(_as_document, documents):
        seen = found.get(doc.document_id)
        if seen is None:
            seen = Source(
                document_id=doc.document_id,
                name=doc.document_name or doc.document_id,
                url=doc.document_url,
                page_count=doc.page_count,
            )
        elif seen.page_count is None and doc.page_count is not None:
            seen = seen.model_copy(update={"page_count": doc.page_count})
        if doc.page is not None and doc.page not in seen.pages:
            seen = seen.model_copy(update={"pages": (*seen.pages, doc.page)})
        found[doc.document_id] = seen
    return list(found.values())


def as_sources(values: Iterable[Source | Mapping[str, Any]] | None) -> list[Source]:
    """Sources as stored in a checkpoint or state read over an API (models or dicts)."""
    return [s if isinstance(s, Source) else Source.model_validate(s) for s in values or ()]


def as_sentences(
    values: Iterable[AnswerSentence | Mapping[str, Any]] | None,
) -> list[AnswerSentence]:
    """Answer sentences as stored in a checkpoint or read over an API (models or dicts)."""
    return [
        s if isinstance(s, AnswerSentence) else AnswerSentence.model_validate(s)
        for s in values or ()
    ]


def shortened(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` characters with "…" when longer."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1].rstrip() + "…"


def message_metadata(
    sources: Iterable[Source | Mapping[str, Any]],
    sentences: Iterable[AnswerSentence | Mapping[str, Any]],
    documents: Iterable[UniqueTextDocument | Mapping[str, Any]],
) -> dict[str, Any]:
    """What an answer's message carries of its sources, sentences and documents (R9), as JSON."""
    listed = as_sources(sources)
    said = [s for s in as_sentences(sentences) if s.supported]
    meta: dict[str, Any] = {MESSAGE_SOURCES_KEY: [s.model_dump(mode="json") for s in listed]}
    cited: set[int] = {n for s in said for n in s.sources}
    if cited:
        keep = {"text", "sources", "quotes"}
        meta[MESSAGE_SENTENCES_KEY] = [s.model_dump(mode="json", include=keep) for s in said]
    uncited = {s.document_id for n, s in enumerate(listed, start=1) if n not in cited}
    snippets: dict[str, str] = {}
    for doc in map(_as_document, documents):
        if doc.document_id in uncited and doc.document_id not in snippets:
            snippets[doc.document_id] = shortened(doc.text, SNIPPET_CHARS)
    if snippets:
        meta[MESSAGE_SNIPPETS_KEY] = snippets
    return meta

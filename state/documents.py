"""Retrieved text at sentence granularity (R6)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

DocumentKey = tuple[str, int | None, int | None]


class UniqueTextDocument(BaseModel):
    """One sentence (or passage) of a source document.

    Identity is ``(document_id, page, sentence_number)`` (R6): the same sentence
    found by two tools appears once in the final context, with the higher score.
    """

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

    @property
    def key(self) -> DocumentKey:
        """The identity triple of R6."""
        return (self.document_id, self.page, self.sentence_number)


def _as_document(doc: UniqueTextDocument | Mapping[str, Any]) -> UniqueTextDocument:
    """A document, also from the plain dict a state reader may hand the reducer.

    Outside strict msgpack mode (``LANGGRAPH_STRICT_MSGPACK``), the LangGraph server
    reads thread state (``GET /threads/{id}/state``) with a serializer that turns
    models into dicts, and replays the documents channel's writes through this
    reducer; without this, that request fails once a thread has documents.
    """
    return doc if isinstance(doc, UniqueTextDocument) else UniqueTextDocument.model_validate(doc)


def merge_documents(
    left: Iterable[UniqueTextDocument | Mapping[str, Any]],
    right: Iterable[UniqueTextDocument | Mapping[str, Any]],
) -> list[UniqueTextDocument]:
    """Merge two document lists by R6 identity, keeping the higher score.

    First-seen order is kept so that the final context is stable.
    """
    merged: dict[DocumentKey, UniqueTextDocument] = {}
    for doc in map(_as_document, (*left, *right)):
        key = (doc.document_id, doc.page, doc.sentence_number)  # doc.key, inlined (hot)
        seen = merged.get(key)
        if seen is None or doc.sentence_score > seen.sentence_score:
            merged[key] = doc
    return list(merged.values())


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
            )
        if doc.page is not None and doc.page not in seen.pages:
            seen = seen.model_copy(update={"pages": (*seen.pages, doc.page)})
        found[doc.document_id] = seen
    return list(found.values())


def as_sources(values: Iterable[Source | Mapping[str, Any]] | None) -> list[Source]:
    """Sources as stored in a checkpoint or state read over an API (models or dicts)."""
    return [s if isinstance(s, Source) else Source.model_validate(s) for s in values or ()]

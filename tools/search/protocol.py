"""What retrieval needs from a document store: the ``DocumentStore`` protocol and its records."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from toolweave.state.documents import UniqueTextDocument
from toolweave.tools.search.page_graph import PageLink, PageRef


@dataclass(frozen=True)
class SourceDocument:
    """A document to add to a store."""

    document_id: str
    """Stable id; adding another document with the same id replaces this one."""
    pages: tuple[str, ...]
    """Page texts; page ``n`` is ``pages[n - 1]``."""
    name: str = ""
    """Human readable title."""
    url: str | None = None
    """Where a person can open the document."""
    lang: str | None = None
    """ISO 639-1 language code, if known."""


@dataclass(frozen=True)
class DocumentInfo:
    """What a store knows about one document besides its text."""

    document_id: str
    name: str
    url: str | None
    lang: str | None
    page_count: int


@runtime_checkable
class DocumentStore(Protocol):
    """What retrieval tools need from a document store."""

    def add_document(
        self,
        document_id: str,
        pages: Sequence[str] | str,
        *,
        name: str = "",
        url: str | None = None,
        lang: str | None = None,
    ) -> int:
        """Add or atomically replace a document (by :meth:`add_documents`); returns its sentences.

        Args:
            document_id: Stable id of the document.
            pages: Page texts (page 1 first), or one string for a one-page document.
            name: Human readable title.
            url: Where a person can open the document.
            lang: ISO 639-1 language code, if known.
        """
        page_list = (pages,) if isinstance(pages, str) else tuple(pages)
        return self.add_documents([SourceDocument(document_id, page_list, name, url, lang)])

    def add_documents(self, documents: Iterable[SourceDocument]) -> int:
        """Add or replace several documents; returns their sentence count."""
        ...

    def remove_document(self, document_id: str) -> bool:
        """Remove a document; ``False`` when it was not there."""
        ...

    def search(
        self, query: str, *, limit: int = 8, lang: str | None = None
    ) -> list[UniqueTextDocument]:
        """The sentences best matching ``query``, best first."""
        ...

    def document(self, document_id: str) -> DocumentInfo | None:
        """Metadata of a document, or ``None``."""
        ...

    def page(self, document_id: str, page: int) -> str | None:
        """The text of one page (1-based), or ``None``."""
        ...

    def pages_of(self, document_id: str) -> list[int]:
        """The page numbers a document has, ascending."""
        ...

    def page_sentences(self, document_id: str, page: int) -> list[UniqueTextDocument]:
        """The sentences of one page, in order, with score 0."""
        ...


@runtime_checkable
class PageGraphStore(DocumentStore, Protocol):
    """A store the deep-search tools can walk: every page, and the page graph (D5, D6)."""

    def page_count(self) -> int:
        """Pages over all documents."""
        ...

    def page_refs(self, *, limit: int | None = None) -> list[PageRef]:
        """Every page (by document, then page number), at most ``limit``."""
        ...

    def linked_pages(self, document_id: str, page: int, *, limit: int = 8) -> list[PageLink]:
        """Pages linked to one page by adjacency or shared rare terms, best first."""
        ...


def with_page_counts(
    store: DocumentStore, documents: Sequence[UniqueTextDocument]
) -> list[UniqueTextDocument]:
    """``documents``, each with its document's page count as ``store`` knows it (R9)."""
    counts: dict[str, int | None] = {}
    counted: list[UniqueTextDocument] = []
    for doc in documents:
        if doc.document_id not in counts:
            info = store.document(doc.document_id)
            counts[doc.document_id] = None if info is None else info.page_count
        count = counts[doc.document_id]
        if count is not None and doc.page_count != count:
            doc = doc.model_copy(update={"page_count": count})
        counted.append(doc)
    return counted

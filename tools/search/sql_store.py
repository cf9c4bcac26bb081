"""The search both SQL document stores share, over a small SQL-dialect seam.

:class:`SqlDocumentStore` holds everything that reads alike in SQLite and
PostgreSQL: document and page lookups, the page graph's walk, and keyword
search's re-ranking (candidates from the database's own ranking, re-ranked by
the share of query words each sentence holds). A subclass supplies the dialect:

- :attr:`SqlDocumentStore.dialect`, the table names, whether rows carry a
  collection and the parameter marker, which the shared queries are written in
  (:class:`SqlDialect`);
- :meth:`SqlDocumentStore._fetch`, one read query on its connection;
- :meth:`SqlDocumentStore._candidates`, the database's full-text ranking;
- :meth:`SqlDocumentStore._rare_terms` and
  :meth:`SqlDocumentStore._pages_with_term`, the term counts of the page graph;

and its own writing (``add_documents``, ``remove_document``) and life cycle.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from toolweave.state.documents import UniqueTextDocument
from toolweave.tools.search.page_graph import PageLink, PageRef, followed_terms, link_pages
from toolweave.tools.search.protocol import DocumentInfo, PageGraphStore
from toolweave.tools.search.text import Query, parse_query

COVERAGE_WEIGHT = 0.7
"""Share of ``sentence_score`` given by how many query words a sentence holds."""
MIN_CANDIDATES = 40
"""Fewest candidates the database ranks for one search."""

Row = tuple[Any, ...]
"""One result row of a query."""

CandidateRow = tuple[str, str, str | None, int, int, str, float, str, str]
"""``(document_id, name, url, page, sentence_number, text, rank, terms, context)``."""


@dataclass(frozen=True)
class SqlDialect:
    """What the text of the shared queries depends on.

    Attributes:
        table_prefix: Put before ``documents``, ``pages`` and ``sentences``.
        collections: Whether rows carry a ``collection`` column (several stores in
            one database); its value is then the first parameter of every query.
        marker: The parameter marker (``?`` or ``%s``); the queries are written with ``?``.
    """

    table_prefix: str = ""
    collections: bool = False
    marker: str = "?"

    def sql(self, template: str) -> str:
        """``template`` (one of this module's queries) in this dialect."""
        return _render(self, template)


@lru_cache(maxsize=256)
def _render(dialect: SqlDialect, template: str) -> str:
    prefix, scoped = dialect.table_prefix, dialect.collections

    def only(alias: str) -> str:
        return f"{alias}collection = ? AND " if scoped else ""

    def same(a: str, b: str) -> str:
        return f" AND {a}.collection = {b}.collection" if scoped else ""

    text = template.format(
        documents=f"{prefix}documents",
        pages=f"{prefix}pages",
        sentences=f"{prefix}sentences",
        only=only(""),
        only_d=only("d."),
        only_s=only("s."),
        where_collection=" WHERE collection = ?" if scoped else "",
        pages_of_d=same("p", "d"),
        documents_of_s=same("d", "s"),
    )
    return text.replace("?", dialect.marker)


DOCUMENT = (
    "SELECT d.name, d.url, d.lang, (SELECT COUNT(*) FROM {pages} p"
    " WHERE p.document_id = d.id{pages_of_d}) FROM {documents} d WHERE {only_d}d.id = ?"
)
DOCUMENT_IDS = "SELECT id FROM {documents}{where_collection} ORDER BY id"
DOCUMENT_COUNT = "SELECT COUNT(*) FROM {documents}{where_collection}"
PAGE = "SELECT text FROM {pages} WHERE {only}document_id = ? AND page = ?"
PAGES_OF = "SELECT page FROM {pages} WHERE {only}document_id = ? ORDER BY page"
NEIGHBOUR_PAGES = (
    "SELECT page FROM {pages} WHERE {only}document_id = ? AND page IN (?, ?) ORDER BY page"
)
PAGE_COUNT = "SELECT COUNT(*) FROM {pages}{where_collection}"
PAGE_REFS = "SELECT document_id, page FROM {pages}{where_collection} ORDER BY document_id, page"
PAGE_SENTENCES = (
    "SELECT d.name, d.url, s.sentence_number, s.text FROM {sentences} s"
    " JOIN {documents} d ON d.id = s.document_id{documents_of_s}"
    " WHERE {only_s}s.document_id = ? AND s.page = ? ORDER BY s.sentence_number"
)


def _sentence(
    row: tuple[str, str, str | None, int, int, str], score: float = 0.0
) -> UniqueTextDocument:
    """A stored sentence ``(document_id, name, url, page, sentence_number, text)`` as a result."""
    document_id, name, url, page, number, text = row
    return UniqueTextDocument(
        document_id=document_id,
        document_name=name,
        document_url=url,
        page=page,
        sentence_number=number,
        text=text,
        sentence_score=score,
    )


class SqlDocumentStore(PageGraphStore):
    """A :class:`~toolweave.tools.search.protocol.PageGraphStore` over SQL (see the module)."""

    dialect: SqlDialect = SqlDialect()
    """The text of the shared queries."""
    candidates_per_result = 5
    """Sentences the database ranks per sentence returned (the re-ranking pool)."""
    _stopwords: frozenset[str]

    @property
    def _scope(self) -> tuple[object, ...]:
        """The parameters every shared query starts with (the collection, if any)."""
        return ()

    # -- the dialect ---------------------------------------------------------------------

    @abstractmethod
    def _fetch(self, sql: str, params: Sequence[object]) -> list[Row]:
        """The rows of one read query (``sql`` is in :attr:`dialect`)."""

    @abstractmethod
    def _candidates(
        self, parsed: Query, count: int, lang: str | None, document_ids: list[str] | None
    ) -> list[CandidateRow]:
        """At most ``count`` sentences matching ``parsed``, best first by the database's rank."""

    @abstractmethod
    def _relevance(self, rank: float) -> float:
        """A candidate's database rank mapped to ``[0, 1)``, higher is better."""

    @abstractmethod
    def _page_terms(self, ref: PageRef) -> set[str]:
        """The index terms of one page's sentences."""

    @abstractmethod
    def _rare_terms(self, terms: list[str]) -> list[tuple[str, int]]:
        """The rare ones of ``terms`` with their sentence counts, rarest first (page graph)."""

    @abstractmethod
    def _pages_with_term(self, term: str) -> list[tuple[str, int]]:
        """``(document_id, page)`` of every page holding the index term ``term``."""

    def _read(self, template: str, *params: object) -> list[Row]:
        return self._fetch(self.dialect.sql(template), (*self._scope, *params))

    # -- search --------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        limit: int = 8,
        lang: str | None = None,
        document_ids: Collection[str] | None = None,
    ) -> list[UniqueTextDocument]:
        """Keyword search at sentence level: the database's ranking, re-ranked by coverage.

        The database ranks candidates (the sentence, and with less weight its
        document title and section heading); they are re-ranked by the share of
        query words each holds, so a sentence with all the words beats a short
        one with a single word.

        Args:
            query: User text; any characters are safe (bound parameters only).
            limit: Most sentences to return.
            lang: Only documents in this language, when given.
            document_ids: Only these documents, when given.

        Returns:
            Sentences best first; ``sentence_score`` in ``[0, 1)`` mixes word
            coverage and the normalised database rank.
        """
        parsed = parse_query(query, self._stopwords)
        if not parsed.words or limit <= 0 or (document_ids is not None and not document_ids):
            return []
        count = max(limit * self.candidates_per_result, MIN_CANDIDATES)
        ids = None if document_ids is None else list(document_ids)
        found = [
            _sentence(
                (doc_id, name, url, page, number, text),
                COVERAGE_WEIGHT * parsed.coverage(terms, context)
                + (1.0 - COVERAGE_WEIGHT) * self._relevance(float(rank)),
            )
            for doc_id, name, url, page, number, text, rank, terms, context in self._candidates(
                parsed, count, lang, ids
            )
        ]
        found.sort(key=lambda doc: doc.sentence_score, reverse=True)  # stable: rank breaks ties
        return found[:limit]

    # -- documents and pages -------------------------------------------------------------

    def document(self, document_id: str) -> DocumentInfo | None:
        """Metadata of a document, or ``None`` when it is not stored."""
        rows = self._read(DOCUMENT, document_id)
        return DocumentInfo(document_id, *rows[0]) if rows else None

    def document_ids(self) -> list[str]:
        """Ids of the stored documents, sorted."""
        return [row[0] for row in self._read(DOCUMENT_IDS)]

    def page(self, document_id: str, page: int) -> str | None:
        """The text of page ``page`` (1-based) of a document, or ``None``."""
        rows = self._read(PAGE, document_id, page)
        return str(rows[0][0]) if rows else None

    def pages_of(self, document_id: str) -> list[int]:
        """The page numbers of a document, ascending (empty when it is not stored)."""
        return [row[0] for row in self._read(PAGES_OF, document_id)]

    def page_sentences(self, document_id: str, page: int) -> list[UniqueTextDocument]:
        """The sentences of one page in order, as documents with score 0."""
        return [
            _sentence((document_id, name, url, page, number, text))
            for name, url, number, text in self._read(PAGE_SENTENCES, document_id, page)
        ]

    def page_count(self) -> int:
        """How many pages the store holds, over all documents."""
        return int(self._read(PAGE_COUNT)[0][0])

    def page_refs(self, *, limit: int | None = None) -> list[PageRef]:
        """Every page of every document (by document id, then page), at most ``limit``."""
        bounded = () if limit is None else (limit,)
        rows = self._read(PAGE_REFS + (" LIMIT ?" if bounded else ""), *bounded)
        return [PageRef(document_id, page) for document_id, page in rows]

    def linked_pages(self, document_id: str, page: int, *, limit: int = 8) -> list[PageLink]:
        """The page graph: pages linked to one page by adjacency or shared rare terms.

        Args:
            document_id: The page's document.
            page: The page number (1-based).
            limit: Most links to return.

        Returns:
            Links best first: the neighbour pages (same document, page ±1), then the
            pages sharing the most and rarest terms with it (see ``page_graph``).
        """
        ref = PageRef(document_id, page)
        neighbours = [
            row[0] for row in self._read(NEIGHBOUR_PAGES, document_id, page - 1, page + 1)
        ]
        rare = self._rare_terms(followed_terms(self._page_terms(ref)))
        return link_pages(ref, neighbours, rare, self._pages_with_term, limit=limit)

    def __len__(self) -> int:
        return int(self._read(DOCUMENT_COUNT)[0][0])

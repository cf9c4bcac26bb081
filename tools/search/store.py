"""The embedded default document store: SQLite with an FTS5 index of stemmed sentences."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from toolweave.state.documents import UniqueTextDocument
from toolweave.tools.search import sqlite_sql as sql
from toolweave.tools.search.page_graph import PageLink, PageRef, linked_pages
from toolweave.tools.search.protocol import DocumentInfo, SourceDocument
from toolweave.tools.search.text import parse_query, stopword_set

CONTEXT_WEIGHT = 0.3
"""BM25 weight of a sentence's context (document title and section heading) against its own."""
COVERAGE_WEIGHT = 0.7
"""Share of ``sentence_score`` given by how many query words a sentence holds."""
CANDIDATES_PER_RESULT = 5
"""BM25 candidates fetched per requested result before re-ranking by coverage."""


def normalise_score(bm25: float) -> float:
    """Map an FTS5 ``bm25()`` value (lower is better) to ``(0, 1)``, higher is better."""
    relevance = max(-bm25, 0.0)
    return relevance / (1.0 + relevance)


class SqliteDocumentStore:
    """The embedded default store: SQLite with an FTS5 index of stemmed sentences.

    ``path`` is a database file or ``":memory:"``. One connection serves all
    threads, guarded by a lock, so one store can be shared by concurrent runs.
    ``stopwords`` are a domain's own words to drop from queries (words nearly every
    document holds, such as a hospital's "hospital"), added to the kit's function words.
    """

    def __init__(self, path: str | Path = ":memory:", *, stopwords: Iterable[str] = ()) -> None:
        self._path = str(path)
        self._extra_stopwords = tuple(stopwords)
        self._stopwords = stopword_set(self._extra_stopwords)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self._path, check_same_thread=False, isolation_level=None)
        with self._lock:
            pragmas = sql.PRAGMAS if self._path == ":memory:" else sql.FILE_PRAGMAS + sql.PRAGMAS
            for pragma in pragmas:
                self._conn.execute(pragma)
            self._conn.executescript(sql.SCHEMA)

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def add_document(
        self,
        document_id: str,
        pages: Sequence[str] | str,
        *,
        name: str = "",
        url: str | None = None,
        lang: str | None = None,
    ) -> int:
        """Add a document, replacing one with the same id in a single transaction.

        Args:
            document_id: Stable id of the document.
            pages: Page texts (page 1 first), or one string for a one-page document.
            name: Human readable title.
            url: Where a person can open the document.
            lang: ISO 639-1 language code, if known.

        Returns:
            The number of sentences indexed.
        """
        page_list = (pages,) if isinstance(pages, str) else tuple(pages)
        document = SourceDocument(document_id, page_list, name=name, url=url, lang=lang)
        return self.add_documents([document])

    def add_documents(self, documents: Iterable[SourceDocument]) -> int:
        """Add or replace several documents in one transaction; returns the sentence count.

        Sentences are prepared (split, stemmed) before the write lock is taken and
        inserted with ``executemany``: batching many documents per call is the
        fast path for bulk loads. Either every document lands or none does.
        """
        prepared = [(doc, sql.sentence_rows(doc)) for doc in documents]
        with self._transaction() as conn:
            first_id = sql.next_sentence_id(conn)
            return sql.insert_documents(conn, prepared, first_id) - first_id

    def remove_document(self, document_id: str) -> bool:
        """Remove a document and its sentences; ``False`` when it was not there."""
        with self._transaction() as conn:
            return sql.delete_document(conn, document_id)

    def search(
        self,
        query: str,
        *,
        limit: int = 8,
        lang: str | None = None,
        document_ids: Collection[str] | None = None,
    ) -> list[UniqueTextDocument]:
        """Keyword search at sentence level: an OR of stemmed query terms, re-ranked.

        FTS5 BM25 (the sentence, and with less weight its document title and
        section heading) picks candidates; they are re-ranked by the share of
        query words each holds, so a sentence with all the words beats a short
        one with a single word.

        Args:
            query: User text; any characters are safe.
            limit: Most sentences to return.
            lang: Only documents in this language, when given.
            document_ids: Only these documents, when given.

        Returns:
            Sentences best first; ``sentence_score`` in ``[0, 1)`` mixes word
            coverage and normalised BM25.
        """
        parsed = parse_query(query, self._stopwords)
        if not parsed.words or limit <= 0 or (document_ids is not None and not document_ids):
            return []
        inner = ""
        params: list[object] = []
        if lang is not None:
            inner += sql.ONLY_LANG
            params.append(lang)
        if document_ids is not None:
            ids = list(document_ids)
            inner += sql.ONLY_DOCUMENTS.format(marks=sql.placeholders(ids))
            params.extend(ids)
        params.append(max(limit * CANDIDATES_PER_RESULT, 40))
        query = sql.SEARCH.format(inner=inner, context_weight=CONTEXT_WEIGHT)
        with self._lock:
            expression = sql.candidate_expression(self._conn, parsed)
            rows = self._conn.execute(query, [expression, *params]).fetchall()
        found = [
            UniqueTextDocument(
                document_id=doc_id,
                document_name=name,
                document_url=url,
                page=page,
                sentence_number=number,
                text=text,
                sentence_score=COVERAGE_WEIGHT * parsed.coverage(terms, context)
                + (1.0 - COVERAGE_WEIGHT) * normalise_score(rank),
            )
            for doc_id, name, url, page, number, text, rank, terms, context in rows
        ]
        found.sort(key=lambda doc: doc.sentence_score, reverse=True)  # stable: BM25 breaks ties
        return found[:limit]

    def document(self, document_id: str) -> DocumentInfo | None:
        """Metadata of a document, or ``None`` when it is not stored."""
        with self._lock:
            row = self._conn.execute(
                "SELECT d.name, d.url, d.lang, (SELECT COUNT(*) FROM pages p"
                " WHERE p.document_id = d.id) FROM documents d WHERE d.id = ?",
                (document_id,),
            ).fetchone()
        return None if row is None else DocumentInfo(document_id, *row)

    def document_ids(self) -> list[str]:
        """Ids of the stored documents, sorted."""
        with self._lock:
            rows = self._conn.execute("SELECT id FROM documents ORDER BY id").fetchall()
        return [row[0] for row in rows]

    def page(self, document_id: str, page: int) -> str | None:
        """The text of page ``page`` (1-based) of a document, or ``None``."""
        with self._lock:
            row = self._conn.execute(
                "SELECT text FROM pages WHERE document_id = ? AND page = ?", (document_id, page)
            ).fetchone()
        return None if row is None else str(row[0])

    def pages_of(self, document_id: str) -> list[int]:
        """The page numbers of a document, ascending (empty when it is not stored)."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT page FROM pages WHERE document_id = ? ORDER BY page", (document_id,)
            ).fetchall()
        return [row[0] for row in rows]

    def page_sentences(self, document_id: str, page: int) -> list[UniqueTextDocument]:
        """The sentences of one page in order, as documents with score 0."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT d.name, d.url, s.sentence_number, s.text FROM sentences s"
                " JOIN documents d ON d.id = s.document_id"
                " WHERE s.document_id = ? AND s.page = ? ORDER BY s.sentence_number",
                (document_id, page),
            ).fetchall()
        return [
            UniqueTextDocument(
                document_id=document_id,
                document_name=name,
                document_url=url,
                page=page,
                sentence_number=number,
                text=text,
            )
            for name, url, number, text in rows
        ]

    def page_count(self) -> int:
        """How many pages the store holds, over all documents."""
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM pages").fetchone()[0])

    def page_refs(self, *, limit: int | None = None) -> list[PageRef]:
        """Every page of every document (by document id, then page), at most ``limit``."""
        query = "SELECT document_id, page FROM pages ORDER BY document_id, page"
        params: tuple[int, ...] = ()
        if limit is not None:
            query, params = query + " LIMIT ?", (limit,)
        with self._lock:
            rows = self._conn.execute(query, params).fetchall()
        return [PageRef(document_id, page) for document_id, page in rows]

    def linked_pages(self, document_id: str, page: int, *, limit: int = 8) -> list[PageLink]:
        """The page graph: pages linked to one page by adjacency or shared rare terms.

        Args:
            document_id: The page's document.
            page: The page number (1-based).
            limit: Most links to return.

        Returns:
            Links best first: the neighbour pages (same document, page ±1), then the
            pages sharing the most and rarest terms with it.
        """
        with self._lock:
            return linked_pages(self._conn, PageRef(document_id, page), limit=limit)

    def copy(self, path: str | Path = ":memory:") -> SqliteDocumentStore:
        """A new store at ``path`` holding the same documents (SQLite's backup API: fast)."""
        other = SqliteDocumentStore(path, stopwords=self._extra_stopwords)
        with self._lock, other._lock:
            self._conn.backup(other._conn)
        return other

    def save(self, path: str | Path) -> None:
        """Write the whole store to the file ``path`` (replaced), for :meth:`load`."""
        target = sqlite3.connect(str(path))
        try:
            with self._lock:
                self._conn.backup(target)
        finally:
            target.close()

    @classmethod
    def load(cls, path: str | Path, *, stopwords: Iterable[str] = ()) -> SqliteDocumentStore:
        """A new in-memory store copied from the store file at ``path`` (opened read-only).

        Raises:
            sqlite3.Error: The file is not a readable store.
        """
        source = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)
        try:
            source.execute("SELECT COUNT(*) FROM documents JOIN sentences").fetchone()
            other = cls(stopwords=stopwords)
            with other._lock:
                source.backup(other._conn)
        finally:
            source.close()
        return other

    def optimize(self) -> None:
        """Merge the FTS5 index segments (after a bulk load; makes queries faster)."""
        with self._lock:
            self._conn.execute("INSERT INTO sentence_fts (sentence_fts) VALUES ('optimize')")

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0])

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._conn.close()

    def __repr__(self) -> str:
        return f"SqliteDocumentStore({self._path!r})"

"""The embedded default document store: SQLite with an FTS5 index of stemmed sentences."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from toolweave.state.documents import UniqueTextDocument
from toolweave.tools.search.protocol import DocumentInfo, SourceDocument
from toolweave.tools.search.text import index_terms, parse_query, sections

CONTEXT_WEIGHT = 0.3
"""BM25 weight of a sentence's context (document title and section heading) against its own."""
COVERAGE_WEIGHT = 0.7
"""Share of ``sentence_score`` given by how many query words a sentence holds."""
CANDIDATES_PER_RESULT = 5
"""BM25 candidates fetched per requested result before re-ranking by coverage."""


_SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, url TEXT, lang TEXT);
CREATE TABLE IF NOT EXISTS pages (
    document_id TEXT NOT NULL, page INTEGER NOT NULL, text TEXT NOT NULL,
    PRIMARY KEY (document_id, page));
CREATE TABLE IF NOT EXISTS sentences (
    id INTEGER PRIMARY KEY, document_id TEXT NOT NULL, page INTEGER NOT NULL,
    sentence_number INTEGER NOT NULL, text TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS sentences_by_page ON sentences (document_id, page, sentence_number);
CREATE VIRTUAL TABLE IF NOT EXISTS sentence_fts USING fts5(
    terms, context, tokenize = 'unicode61 remove_diacritics 2', prefix = '4 5 6');
"""

_SEARCH = """
SELECT s.document_id, d.name, d.url, s.page, s.sentence_number, s.text,
    bm25(sentence_fts, 1.0, {context_weight}), sentence_fts.terms, sentence_fts.context
FROM sentence_fts
JOIN sentences AS s ON s.id = sentence_fts.rowid
JOIN documents AS d ON d.id = s.document_id
WHERE sentence_fts MATCH ? {filters}
ORDER BY 7, s.document_id, s.page, s.sentence_number
LIMIT ?
"""


def normalise_score(bm25: float) -> float:
    """Map an FTS5 ``bm25()`` value (lower is better) to ``(0, 1)``, higher is better."""
    relevance = max(-bm25, 0.0)
    return relevance / (1.0 + relevance)


class SqliteDocumentStore:
    """The embedded default store: SQLite with an FTS5 index of stemmed sentences.

    ``path`` is a database file or ``":memory:"``. One connection serves all
    threads, guarded by a lock, so one store can be shared by concurrent runs.
    """

    def __init__(self, path: str | Path = ":memory:") -> None:
        self._path = str(path)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self._path, check_same_thread=False, isolation_level=None)
        with self._lock:
            self._conn.executescript(_SCHEMA)

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
        """Add or replace several documents in one transaction; returns the sentence count."""
        prepared = [(doc, _sentence_rows(doc)) for doc in documents]
        count = 0
        with self._transaction() as conn:
            for doc, rows in prepared:
                _delete(conn, doc.document_id)
                conn.execute(
                    "INSERT INTO documents (id, name, url, lang) VALUES (?, ?, ?, ?)",
                    (doc.document_id, doc.name, doc.url, doc.lang),
                )
                conn.executemany(
                    "INSERT INTO pages (document_id, page, text) VALUES (?, ?, ?)",
                    [(doc.document_id, no, text) for no, text in enumerate(doc.pages, start=1)],
                )
                for page, number, sentence, terms, context in rows:
                    cursor = conn.execute(
                        "INSERT INTO sentences (document_id, page, sentence_number, text)"
                        " VALUES (?, ?, ?, ?)",
                        (doc.document_id, page, number, sentence),
                    )
                    conn.execute(
                        "INSERT INTO sentence_fts (rowid, terms, context) VALUES (?, ?, ?)",
                        (cursor.lastrowid, terms, context),
                    )
                count += len(rows)
        return count

    def remove_document(self, document_id: str) -> bool:
        """Remove a document and its sentences; ``False`` when it was not there."""
        with self._transaction() as conn:
            return _delete(conn, document_id)

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
        parsed = parse_query(query)
        expression = parsed.expression()
        if expression is None or limit <= 0 or (document_ids is not None and not document_ids):
            return []
        filters = ""
        params: list[object] = [expression]
        if lang is not None:
            filters += " AND d.lang = ?"
            params.append(lang)
        if document_ids is not None:
            ids = list(document_ids)
            filters += f" AND s.document_id IN ({', '.join('?' * len(ids))})"
            params.extend(ids)
        params.append(max(limit * CANDIDATES_PER_RESULT, 40))
        sql = _SEARCH.format(filters=filters, context_weight=CONTEXT_WEIGHT)
        with self._lock:
            rows = self._conn.execute(sql, params).fetchall()
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

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0])

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._conn.close()

    def __repr__(self) -> str:
        return f"SqliteDocumentStore({self._path!r})"


def _sentence_rows(doc: SourceDocument) -> list[tuple[int, int, str, str, str]]:
    rows: list[tuple[int, int, str, str, str]] = []
    for page_no, text in enumerate(doc.pages, start=1):
        for number, (heading, sentence) in enumerate(sections(text), start=1):
            context = index_terms(f"{doc.name} {heading}", doc.lang)
            rows.append((page_no, number, sentence, index_terms(sentence, doc.lang), context))
    return rows


def _delete(conn: sqlite3.Connection, document_id: str) -> bool:
    conn.execute(
        "DELETE FROM sentence_fts WHERE rowid IN (SELECT id FROM sentences WHERE document_id = ?)",
        (document_id,),
    )
    conn.execute("DELETE FROM sentences WHERE document_id = ?", (document_id,))
    conn.execute("DELETE FROM pages WHERE document_id = ?", (document_id,))
    return conn.execute("DELETE FROM documents WHERE id = ?", (document_id,)).rowcount > 0

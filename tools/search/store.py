"""The embedded default document store: SQLite with an FTS5 index of stemmed sentences."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from toolweave.tools.embeddings import resolve
from toolweave.tools.search import sqlite_sql as sql
from toolweave.tools.search import vectors
from toolweave.tools.search.page_graph import RARE_TERM_MAX_SENTENCES, RARE_TERMS_PER_PAGE
from toolweave.tools.search.protocol import SourceDocument
from toolweave.tools.search.sql_store import CandidateRow, Row, SqlDocumentStore, VectorRow
from toolweave.tools.search.text import Query, stopword_set

CONTEXT_WEIGHT = 0.3  # BM25 weight of a sentence's title and heading against its own


class SqliteDocumentStore(SqlDocumentStore):
    """The embedded default store: SQLite with an FTS5 index of stemmed sentences.

    ``path`` is a file or ``":memory:"``; ``stopwords``: a domain's own words dropped from
    queries; ``embeddings`` (D9): ``"auto"`` (the bundled model), ``None`` or any ``Embeddings``.
    """

    page_terms_sql = sql.PAGE_TERMS  # the terms live in the FTS5 table

    def __init__(
        self,
        path: str | Path = ":memory:",
        *,
        stopwords: Iterable[str] = (),
        embeddings: vectors.EmbeddingsOption = "auto",
    ) -> None:
        self._embeddings = resolve(embeddings)
        self._writes = 0
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

    @property
    def stopwords(self) -> tuple[str, ...]:
        """The domain's own stop words given to the store (routing honours them too)."""
        return self._extra_stopwords

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._writes += 1
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def add_documents(self, documents: Iterable[SourceDocument]) -> int:
        """Add or replace several documents in one transaction (all or none); the sentence count."""
        prepared = [(doc, sql.sentence_rows(doc)) for doc in documents]
        model = "" if self._embeddings is None else vectors.model_id(self._embeddings)
        embedded = [
            (model, self._sentence_vectors([(row[0], row[2]) for row in rows]))
            for _, rows in prepared
        ]
        with self._transaction() as conn:
            first_id = sql.next_sentence_id(conn)
            return sql.insert_documents(conn, prepared, first_id, embedded) - first_id

    def remove_document(self, document_id: str) -> bool:
        """Remove a document and its sentences; ``False`` when it was not there."""
        with self._transaction() as conn:
            return sql.delete_document(conn, document_id)

    def _fetch(self, sql: str, params: Sequence[object]) -> list[Row]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def _candidates(
        self, parsed: Query, count: int, lang: str | None, document_ids: list[str] | None
    ) -> list[CandidateRow]:
        """FTS5 BM25 candidates: the sentence and, with less weight, its title and heading."""
        inner = ""
        params: list[object] = []
        if lang is not None:
            inner += sql.ONLY_LANG
            params.append(lang)
        if document_ids is not None:
            inner += sql.ONLY_DOCUMENTS.format(marks=sql.placeholders(document_ids))
            params.extend(document_ids)
        query = sql.SEARCH.format(inner=inner, context_weight=CONTEXT_WEIGHT)
        with self._lock:
            expression = sql.candidate_expression(self._conn, parsed)
            return self._conn.execute(query, [expression, *params, count]).fetchall()

    def _vector_version(self) -> object:
        with self._lock:
            return (self._writes, self._conn.execute("PRAGMA data_version").fetchone()[0])

    def _write_vectors(self, model: str, rows: Sequence[VectorRow]) -> None:
        with self._transaction() as conn:
            conn.executemany(sql.INSERT_VECTOR, [(*row[:3], model, row[3]) for row in rows])

    def _relevance(self, rank: float) -> float:
        relevance = max(-rank, 0.0)  # FTS5's bm25(): lower is better
        return relevance / (1.0 + relevance)

    def _rare_terms(self, terms: list[str]) -> list[tuple[str, int]]:
        counted: list[tuple[int, str]] = []
        for term in terms:
            rows = self._fetch(sql.TERM_SENTENCES, (term,))
            if rows and 2 <= rows[0][0] <= RARE_TERM_MAX_SENTENCES:
                counted.append((int(rows[0][0]), term))
        counted.sort()
        return [(term, count) for count, term in counted[:RARE_TERMS_PER_PAGE]]

    def _pages_with_term(self, term: str) -> list[tuple[str, int]]:
        return [
            (doc, page) for doc, page in self._fetch(sql.PAGES_WITH_TERM, (sql.term_match(term),))
        ]

    def copy(self, path: str | Path = ":memory:") -> SqliteDocumentStore:
        """A new store at ``path`` holding the same documents (SQLite's backup API: fast)."""
        other = SqliteDocumentStore(path, stopwords=self._extra_stopwords, embeddings=None)
        other._embeddings = self._embeddings
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
    def load(
        cls,
        path: str | Path,
        *,
        stopwords: Iterable[str] = (),
        embeddings: vectors.EmbeddingsOption = "auto",
    ) -> SqliteDocumentStore:
        """A new in-memory store copied from the store file at ``path``, its vectors included.

        Raises:
            sqlite3.Error: The file is not a readable store.
        """
        source = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)
        try:
            source.execute("SELECT COUNT(*) FROM documents JOIN sentences").fetchone()
            other = cls(stopwords=stopwords, embeddings=embeddings)
            with other._lock:
                source.backup(other._conn)
                other._conn.executescript(sql.SCHEMA)  # a file from before a table was added
        finally:
            source.close()
        return other

    def optimize(self) -> None:
        """Merge the FTS5 index segments (after a bulk load; makes queries faster)."""
        with self._lock:
            self._conn.execute("INSERT INTO sentence_fts (sentence_fts) VALUES ('optimize')")

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._conn.close()

    def __repr__(self) -> str:
        return f"SqliteDocumentStore({self._path!r})"

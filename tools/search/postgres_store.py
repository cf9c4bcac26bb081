"""``PostgresDocumentStore``: documents in PostgreSQL (``toolweave[postgres]``), by collection."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from toolweave.state.errors import ConfigurationError, DatabaseUnavailableError
from toolweave.tools.embeddings import resolve
from toolweave.tools.search import vectors
from toolweave.tools.search.page_graph import RARE_TERM_MAX_SENTENCES, RARE_TERMS_PER_PAGE
from toolweave.tools.search.protocol import SourceDocument
from toolweave.tools.search.sql_store import (
    CandidateRow,
    Row,
    SqlDialect,
    SqlDocumentStore,
    VectorRow,
)
from toolweave.tools.search.sqlite_sql import COMMON_WORD_SENTENCES, sentence_rows
from toolweave.tools.search.text import Query, QueryWord, page_sections, stopword_set

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg_pool import ConnectionPool

MISSING_EXTRA = "the PostgreSQL document store needs: pip install 'toolweave[postgres]'"
UNREACHABLE = "the document database cannot be reached ({error})"

CONTEXT_WEIGHT = "B"  # tsvector weight of a sentence's heading and title (the sentence: A)
TEXT_SEARCH_CONFIG = {"hu": "hungarian", "en": "english"}

SCHEMA = """
CREATE TABLE IF NOT EXISTS toolweave_documents (
    collection TEXT NOT NULL, id TEXT NOT NULL, name TEXT NOT NULL, url TEXT, lang TEXT,
    PRIMARY KEY (collection, id));
CREATE TABLE IF NOT EXISTS toolweave_pages (
    collection TEXT NOT NULL, document_id TEXT NOT NULL, page INTEGER NOT NULL,
    text TEXT NOT NULL,
    PRIMARY KEY (collection, document_id, page),
    FOREIGN KEY (collection, document_id)
        REFERENCES toolweave_documents (collection, id) ON DELETE CASCADE);
CREATE TABLE IF NOT EXISTS toolweave_sentences (
    collection TEXT NOT NULL, document_id TEXT NOT NULL, page INTEGER NOT NULL,
    sentence_number INTEGER NOT NULL, text TEXT NOT NULL, terms TEXT NOT NULL,
    context TEXT NOT NULL, tsv TSVECTOR NOT NULL,
    PRIMARY KEY (collection, document_id, page, sentence_number),
    FOREIGN KEY (collection, document_id)
        REFERENCES toolweave_documents (collection, id) ON DELETE CASCADE);
CREATE INDEX IF NOT EXISTS toolweave_sentences_tsv ON toolweave_sentences USING GIN (tsv);
CREATE TABLE IF NOT EXISTS toolweave_sentence_vectors (
    collection TEXT NOT NULL, document_id TEXT NOT NULL, page INTEGER NOT NULL,
    sentence_number INTEGER NOT NULL, model TEXT NOT NULL, vector BYTEA NOT NULL,
    PRIMARY KEY (collection, model, document_id, page, sentence_number),
    FOREIGN KEY (collection, document_id)
        REFERENCES toolweave_documents (collection, id) ON DELETE CASCADE);
CREATE TABLE IF NOT EXISTS toolweave_generations (
    collection TEXT PRIMARY KEY, generation BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS toolweave_terms (
    collection TEXT NOT NULL, term TEXT NOT NULL, sentences INTEGER NOT NULL,
    PRIMARY KEY (collection, term));
"""


def _sentence_vector(configs: int) -> str:
    """SQL of a sentence's ``tsvector``: words (A), heading (B), toolweave's stems (C)."""
    words = " || ".join(
        f"setweight(to_tsvector(%(cfg{n})s::regconfig, r.text), 'A')" for n in range(1, configs + 1)
    )
    heading = f"setweight(to_tsvector(%(cfg1)s::regconfig, r.heading), '{CONTEXT_WEIGHT}')"
    return f"{words} || {heading} || setweight(to_tsvector('simple', r.terms), 'C')"


def _insert_sentences(configs: int) -> str:
    return (
        "INSERT INTO toolweave_sentences"
        " (collection, document_id, page, sentence_number, text, terms, context, tsv)"
        " SELECT %(collection)s, %(document_id)s, r.page, r.number, r.text, r.terms, r.context,"
        f" {_sentence_vector(configs)}"
        " FROM unnest(%(pages)s::int[], %(numbers)s::int[], %(texts)s::text[],"
        " %(terms)s::text[], %(contexts)s::text[], %(headings)s::text[])"
        " AS r(page, number, text, terms, context, heading)"
    )


INSERT_SENTENCES = {1: _insert_sentences(1), 2: _insert_sentences(2)}  # by configurations

COUNT_TERMS = (
    "INSERT INTO toolweave_terms (collection, term, sentences)"
    " SELECT %s, t.term, t.n FROM unnest(%s::text[], %s::int[]) AS t(term, n)"
    " ON CONFLICT (collection, term)"
    " DO UPDATE SET sentences = toolweave_terms.sentences + EXCLUDED.sentences"
)

INSERT_VECTORS = (
    "INSERT INTO toolweave_sentence_vectors"
    " (collection, document_id, page, sentence_number, model, vector)"
    " SELECT %s, v.document_id, v.page, v.number, %s, v.vector"
    " FROM unnest(%s::text[], %s::int[], %s::int[], %s::bytea[])"
    " AS v(document_id, page, number, vector)"
    " ON CONFLICT DO NOTHING"
)
BUMP_GENERATION = (
    "INSERT INTO toolweave_generations (collection, generation) VALUES (%s, 1)"
    " ON CONFLICT (collection)"
    " DO UPDATE SET generation = toolweave_generations.generation + 1"
)
"""Every write bumps its collection's generation: a store's cached vectors know they are stale."""

WORD_QUERIES = """
SELECT websearch_to_tsquery('hungarian', w)::text, websearch_to_tsquery('english', w)::text
FROM unnest(%(words)s::text[]) WITH ORDINALITY AS q(w, n) ORDER BY n
"""

WORD_COUNTS = """
SELECT term, sentences FROM toolweave_terms WHERE collection = %(collection)s
AND term = ANY(%(terms)s)
"""

SEARCH = """
SELECT s.document_id, d.name, d.url, s.page, s.sentence_number, s.text,
    ts_rank_cd(s.tsv, query) AS rank, s.terms, s.context
FROM toolweave_sentences s
JOIN toolweave_documents d ON d.collection = s.collection AND d.id = s.document_id,
    CAST(%(query)s AS tsquery) AS query
WHERE s.collection = %(collection)s AND s.tsv @@ query {filters}
ORDER BY rank DESC, s.document_id, s.page, s.sentence_number
LIMIT %(limit)s
"""


def _or_query(*queries: str) -> str:
    """One tsquery text OR-ing every lexeme of ``queries`` (``websearch`` ANDs them)."""
    lexemes: dict[str, None] = {}
    for query in queries:
        for part in query.replace("(", " ").replace(")", " ").split():
            if part.startswith("'") and (part.endswith("'") or part.endswith("':*")):
                lexemes[part] = None
    return " | ".join(lexemes)


SENTENCE_COLUMNS = ("pages", "numbers", "texts", "terms", "contexts")


def _columns(rows: Sequence[Sequence[Any]], count: int) -> list[list[Any]]:
    """The first ``count`` columns of ``rows``, each as a list (for ``unnest``)."""
    return [[row[i] for row in rows] for i in range(count)]


def _quote_lexeme(term: str) -> str:
    return "'" + term.replace("'", "''").replace("\\", "\\\\") + "'"


class PostgresDocumentStore(SqlDocumentStore):
    """A :class:`~toolweave.tools.search.protocol.PageGraphStore` in PostgreSQL.

    Args:
        conninfo: A ``postgresql://`` URL, or ``None`` with ``pool`` given.
        collection: Which collection (one per domain) this store reads and writes.
        pool: A ``psycopg_pool.ConnectionPool`` to share; the store then never closes it.
        max_connections: Size of the pool the store opens for ``conninfo``.
        timeout: Seconds to wait for the first connection (else ``DatabaseUnavailableError``).
        stopwords: A domain's own words to drop from queries (added to the kit's).
        embeddings: D9: ``"auto"`` (default: the bundled static model when the ``embeddings``
            extra is installed), ``None`` (keywords only) or any LangChain ``Embeddings``.

    The tables are created on first use; a store is safe to share between threads.
    """

    dialect = SqlDialect(table_prefix="toolweave_", collections=True, marker="%s")
    candidates_per_result = 6

    def __init__(
        self,
        conninfo: str | None = None,
        *,
        collection: str = "default",
        pool: ConnectionPool[Any] | None = None,
        max_connections: int = 4,
        timeout: float = 10.0,
        stopwords: Iterable[str] = (),
        embeddings: vectors.EmbeddingsOption = "auto",
    ) -> None:
        self.stopwords = tuple(stopwords)  # the domain's own (routing honours them too)
        self._stopwords = stopword_set(self.stopwords)
        self._embeddings = resolve(embeddings)
        if (conninfo is None) == (pool is None):
            raise ConfigurationError("PostgresDocumentStore takes a conninfo or a pool, not both")
        try:
            import psycopg
            from psycopg_pool import ConnectionPool, PoolTimeout
        except ImportError as exc:  # pragma: no cover - depends on the installed extras
            raise ConfigurationError(MISSING_EXTRA) from exc
        self.collection = collection
        self._owns_pool = pool is None
        if pool is None:
            pool = ConnectionPool(
                conninfo or "",
                min_size=1,
                max_size=max_connections,
                kwargs={"autocommit": True, "prepare_threshold": None},
                open=False,
            )
            try:
                pool.open(wait=True, timeout=timeout)
            except (PoolTimeout, psycopg.Error) as exc:  # the URL (and its password) stays out
                pool.close()
                raise DatabaseUnavailableError(
                    UNREACHABLE.format(error=type(exc).__name__)
                ) from None
        self._pool: ConnectionPool[Connection[Any]] = pool
        with self._pool.connection() as conn:
            conn.execute(SCHEMA)

    def add_documents(self, documents: Iterable[SourceDocument]) -> int:
        """Add or replace documents, each in its own transaction; returns the sentence count."""
        total = 0
        for doc in documents:
            rows = sentence_rows(doc)
            embedded = self._sentence_vectors([(r[0], r[2]) for r in rows])
            config = TEXT_SEARCH_CONFIG.get(doc.lang or "")  # else Hungarian and English
            configs = (config,) if config else ("hungarian", "english")
            names = {f"cfg{n}": name for n, name in enumerate(configs, start=1)}
            with self._pool.connection() as conn, conn.transaction():
                _, removed = self._delete_rows(conn, doc.document_id)
                conn.execute(
                    "INSERT INTO toolweave_documents (collection, id, name, url, lang)"
                    " VALUES (%s, %s, %s, %s, %s)",
                    (self.collection, doc.document_id, doc.name, doc.url, doc.lang),
                )
                conn.execute(
                    "INSERT INTO toolweave_pages (collection, document_id, page, text)"
                    " SELECT %s, %s, p.page, p.text"
                    " FROM unnest(%s::int[], %s::text[]) AS p(page, text)",
                    (
                        self.collection,
                        doc.document_id,
                        list(range(1, len(doc.pages) + 1)),
                        list(doc.pages),
                    ),
                )
                headings = _headings(doc)
                conn.execute(
                    INSERT_SENTENCES[len(configs)],
                    {
                        "collection": self.collection,
                        "document_id": doc.document_id,
                        **dict(zip(SENTENCE_COLUMNS, _columns(rows, 5), strict=True)),
                        "headings": [headings.get((r[0], r[1]), doc.name) for r in rows],
                        **names,
                    },
                )
                added = Counter(t for r in rows for t in set(r[3].split()))
                added.subtract(removed)
                self._count_terms(conn, added)
                if embedded is not None and self._embeddings is not None:
                    model = vectors.model_id(self._embeddings)
                    keyed = [
                        (doc.document_id, r[0], r[1], v)
                        for r, v in zip(rows, embedded, strict=True)
                    ]
                    self._insert_vectors(conn, model, keyed)
                conn.execute(BUMP_GENERATION, (self.collection,))
            total += len(rows)
        return total

    def remove_document(self, document_id: str) -> bool:
        """Remove a document and its sentences; ``False`` when it was not there."""
        with self._pool.connection() as conn, conn.transaction():
            deleted, removed = self._delete_rows(conn, document_id)
            self._count_terms(conn, Counter({t: -n for t, n in removed.items()}))
            conn.execute(BUMP_GENERATION, (self.collection,))
            return deleted

    def _insert_vectors(self, conn: Connection[Any], model: str, rows: Sequence[VectorRow]) -> None:
        conn.execute(INSERT_VECTORS, (self.collection, model, *_columns(rows, 4)))

    def _write_vectors(self, model: str, rows: Sequence[VectorRow]) -> None:
        with self._pool.connection() as conn, conn.transaction():
            self._insert_vectors(conn, model, rows)
            conn.execute(BUMP_GENERATION, (self.collection,))

    def _vector_version(self) -> object:
        rows = self._fetch(
            "SELECT generation FROM toolweave_generations WHERE collection = %s", (self.collection,)
        )
        return rows[0][0] if rows else 0

    def _delete_rows(self, conn: Connection[Any], document_id: str) -> tuple[bool, Counter[str]]:
        """Delete a document's rows; returns whether it existed and its terms' sentence counts."""
        rows = conn.execute(
            "SELECT terms FROM toolweave_sentences WHERE collection = %s AND document_id = %s",
            (self.collection, document_id),
        ).fetchall()
        deleted = conn.execute(
            "DELETE FROM toolweave_documents WHERE collection = %s AND id = %s",
            (self.collection, document_id),
        ).rowcount
        return deleted > 0, Counter(t for (terms,) in rows for t in set(terms.split()))

    def _count_terms(self, conn: Connection[Any], delta: Counter[str]) -> None:
        """Apply sentence-count changes in term order (no deadlock); drop unheld terms."""
        changes = sorted((term, n) for term, n in delta.items() if n)
        if not changes:
            return
        conn.execute(
            COUNT_TERMS, (self.collection, [term for term, _ in changes], [n for _, n in changes])
        )
        if any(n < 0 for _, n in changes):
            conn.execute(
                "DELETE FROM toolweave_terms WHERE collection = %s AND term = ANY(%s)"
                " AND sentences <= 0",
                (self.collection, [term for term, n in changes if n < 0]),
            )

    @property
    def _scope(self) -> tuple[object, ...]:
        return (self.collection,)

    def _fetch(self, sql: str, params: Sequence[object]) -> list[Row]:
        with self._pool.connection() as conn:
            return conn.execute(sql, params).fetchall()

    def _candidates(
        self, parsed: Query, count: int, lang: str | None, document_ids: list[str] | None
    ) -> list[CandidateRow]:
        """PostgreSQL's ``ts_rank_cd`` candidates of the query (see :meth:`_candidate_query`)."""
        filters = ""
        params: dict[str, Any] = {"collection": self.collection, "limit": count}
        if lang is not None:
            filters += " AND d.lang = %(lang)s"
            params["lang"] = lang
        if document_ids is not None:
            filters += " AND s.document_id = ANY(%(ids)s)"
            params["ids"] = document_ids
        with self._pool.connection() as conn:
            tsquery = self._candidate_query(conn, parsed.words)
            if not tsquery:
                return []
            params["query"] = tsquery
            return conn.execute(SEARCH.format(filters=filters), params).fetchall()

    def _relevance(self, rank: float) -> float:
        return rank / (1.0 + rank)

    def _candidate_query(self, conn: Connection[Any], parsed: Sequence[QueryWord]) -> str:
        """The tsquery selecting candidates: each word's lexemes OR-ed, common words together."""
        own = [
            [_quote_lexeme(term) for term in sorted(word.terms)]
            + ([f"{_quote_lexeme(word.prefix)}:*"] if word.prefix is not None else [])
            for word in parsed
        ]
        counts = dict(
            conn.execute(
                WORD_COUNTS,
                {"collection": self.collection, "terms": [t for w in parsed for t in w.terms]},
            ).fetchall()
        )
        frequency = [max((counts.get(t, 0) for t in word.terms), default=0) for word in parsed]
        stems = conn.execute(WORD_QUERIES, {"words": [w.word for w in parsed]}).fetchall()
        if len(stems) != len(own):  # the two parsers disagree: use toolweave's stems alone
            stems = [("", "")] * len(own)
        per_word = [_or_query(*pg, " ".join(lex)) for pg, lex in zip(stems, own, strict=True)]
        rare = [
            q for q, f in zip(per_word, frequency, strict=True) if q and f <= COMMON_WORD_SENTENCES
        ]
        if rare:
            return " | ".join(f"({q})" for q in rare)
        return " & ".join(f"({q})" for q in per_word if q)

    def _rare_terms(self, terms: list[str]) -> list[tuple[str, int]]:
        rows = self._fetch(
            "SELECT term, sentences FROM toolweave_terms WHERE collection = %s"
            " AND term = ANY(%s) AND sentences BETWEEN 2 AND %s"
            " ORDER BY sentences, term LIMIT %s",
            (self.collection, terms, RARE_TERM_MAX_SENTENCES, RARE_TERMS_PER_PAGE),
        )
        return [(term, count) for term, count in rows]

    def _pages_with_term(self, term: str) -> list[tuple[str, int]]:
        rows = self._fetch(
            "SELECT DISTINCT document_id, page FROM toolweave_sentences"
            " WHERE collection = %s AND tsv @@ CAST(%s AS tsquery)"
            " AND (' ' || terms || ' ') LIKE %s",
            (self.collection, _quote_lexeme(term), f"% {term} %"),
        )
        return [(doc, page) for doc, page in rows]

    def clear(self) -> None:
        """Remove every document of the collection (tests, re-ingestion from scratch)."""
        with self._pool.connection() as conn, conn.transaction():
            conn.execute(
                "DELETE FROM toolweave_documents WHERE collection = %s", (self.collection,)
            )
            conn.execute("DELETE FROM toolweave_terms WHERE collection = %s", (self.collection,))
            conn.execute(BUMP_GENERATION, (self.collection,))

    def close(self) -> None:
        """Close the connection pool (when the store opened it)."""
        if self._owns_pool:
            self._pool.close()

    def __repr__(self) -> str:
        return f"PostgresDocumentStore(collection={self.collection!r})"


def _headings(doc: SourceDocument) -> dict[tuple[int, int], str]:
    """``(page, sentence number)`` → the document title and section heading of the sentence."""
    headings: dict[tuple[int, int], str] = {}
    for page_no, found in enumerate(page_sections(doc.pages), start=1):
        for number, (heading, _sentence) in enumerate(found, start=1):
            headings[(page_no, number)] = f"{doc.name} {heading}".strip()
    return headings

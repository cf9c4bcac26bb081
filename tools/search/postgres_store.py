"""``PostgresDocumentStore``: documents in PostgreSQL, for large corpora and several processes.

Full-text search uses PostgreSQL's own text-search configurations: each sentence's
``tsvector`` holds its words stemmed by the ``hungarian`` or ``english`` configuration
(by the document's language; both when it is unknown), its section heading with less
weight, and toolweave's own folded stems (the same terms the SQLite store indexes), so a
query typed without accents still matches. A query is parsed by ``websearch_to_tsquery``
in both languages plus toolweave's stems, its words OR-ed, candidates ranked by
``ts_rank_cd`` inside the database, then re-ranked by the share of query words each
sentence holds, exactly as the SQLite store does. The page graph's rare terms come from a
term-frequency table kept up to date on every add and remove.

Several collections (one per domain) share the tables; each document is written in one
transaction. Install with ``pip install 'toolweave[postgres]'``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from toolweave.state.documents import UniqueTextDocument
from toolweave.state.errors import ConfigurationError, DatabaseUnavailableError
from toolweave.tools.search.page_graph import (
    MIN_TERM_LENGTH,
    RARE_TERM_MAX_SENTENCES,
    RARE_TERMS_PER_PAGE,
    PageLink,
    PageRef,
)
from toolweave.tools.search.protocol import DocumentInfo, SourceDocument
from toolweave.tools.search.sqlite_sql import sentence_rows
from toolweave.tools.search.text import (
    STOPWORDS,
    QueryWord,
    fold,
    parse_query,
    sections,
    stopword_set,
    words,
)

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg_pool import ConnectionPool

MISSING_EXTRA = "the PostgreSQL document store needs: pip install 'toolweave[postgres]'"
UNREACHABLE = "the document database cannot be reached ({error})"

CANDIDATES_PER_RESULT = 6
"""Sentences ranked by the database per sentence returned (the re-ranking pool)."""
COVERAGE_WEIGHT = 0.7
"""Share of the final score that comes from query-word coverage (as in the SQLite store)."""
CONTEXT_WEIGHT = "B"
"""``tsvector`` weight of a sentence's heading and document title (the sentence is ``A``)."""

TEXT_SEARCH_CONFIG = {"hu": "hungarian", "en": "english"}
"""Document language → PostgreSQL text-search configuration."""

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
CREATE TABLE IF NOT EXISTS toolweave_terms (
    collection TEXT NOT NULL, term TEXT NOT NULL, sentences INTEGER NOT NULL,
    PRIMARY KEY (collection, term));
"""


def _sentence_vector(configs: int) -> str:
    """SQL of a sentence's ``tsvector`` over the ``unnest`` columns of :data:`INSERT_SENTENCES`.

    Its words in ``configs`` configurations (weight A), its heading (weight B) and
    toolweave's own folded stems (weight C, ``simple``).
    """
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


INSERT_SENTENCES = {1: _insert_sentences(1), 2: _insert_sentences(2)}
"""One statement per document (all its sentences), by the number of configurations."""

COUNT_TERMS = (
    "INSERT INTO toolweave_terms (collection, term, sentences)"
    " SELECT %s, t.term, t.n FROM unnest(%s::text[], %s::int[]) AS t(term, n)"
    " ON CONFLICT (collection, term)"
    " DO UPDATE SET sentences = toolweave_terms.sentences + EXCLUDED.sentences"
)

COMMON_WORD_SENTENCES = 3_000
"""A query word held by more sentences than this selects no candidates alone (as in SQLite)."""

WORD_QUERIES = """
SELECT websearch_to_tsquery('hungarian', w)::text, websearch_to_tsquery('english', w)::text
FROM unnest(%(words)s::text[]) WITH ORDINALITY AS q(w, n) ORDER BY n
"""

WORD_COUNTS = """
SELECT term, sentences FROM toolweave_terms WHERE collection = %(collection)s
AND term = ANY(%(terms)s)
"""

SEARCH = """
SELECT s.document_id, d.name, d.url, s.page, s.sentence_number, s.text, s.terms, s.context,
    ts_rank_cd(s.tsv, query) AS rank
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


def query_words(query: str, stopwords: frozenset[str] = STOPWORDS) -> list[str]:
    """The words :func:`~toolweave.tools.search.text.parse_query` keeps, in its order.

    PostgreSQL's configurations know only their own language's stop words, so an
    English "the" would match Hungarian-indexed text; the text kit's list knows both
    (plus a domain's own, see :func:`~toolweave.tools.search.text.stopword_set`).
    """
    found = list(dict.fromkeys(words(query)))
    content = [w for w in found if w not in stopwords and fold(w) not in stopwords]
    return content or found


def _quote_lexeme(term: str) -> str:
    return "'" + term.replace("'", "''").replace("\\", "\\\\") + "'"


def _configs(lang: str | None) -> tuple[str, ...]:
    """The text-search configurations a document's sentences are indexed with.

    Its language's, or Hungarian and English when the language is unknown.
    """
    config = TEXT_SEARCH_CONFIG.get(lang or "")
    return (config,) if config else ("hungarian", "english")


def _score(rank: float) -> float:
    return rank / (1.0 + rank)


class PostgresDocumentStore:
    """A :class:`~toolweave.tools.search.protocol.PageGraphStore` in PostgreSQL.

    Args:
        conninfo: A ``postgresql://`` URL, or ``None`` with ``pool`` given.
        collection: Which collection (one per domain) this store reads and writes.
        pool: A ``psycopg_pool.ConnectionPool`` to share; the store then never closes it.
        max_connections: Size of the pool the store opens for ``conninfo``.
        timeout: Seconds to wait for the first connection before
            :class:`~toolweave.state.errors.DatabaseUnavailableError`.
        stopwords: A domain's own words to drop from queries (added to the kit's).

    The tables are created on first use. A store is safe to share between threads and
    concurrent runs (each call takes a connection from the pool).
    """

    def __init__(
        self,
        conninfo: str | None = None,
        *,
        collection: str = "default",
        pool: ConnectionPool[Any] | None = None,
        max_connections: int = 4,
        timeout: float = 10.0,
        stopwords: Iterable[str] = (),
    ) -> None:
        self._stopwords = stopword_set(stopwords)
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
        self._pool = pool
        with self._connection() as conn:
            conn.execute(SCHEMA)

    @contextmanager
    def _connection(self) -> Iterator[Connection[Any]]:
        with self._pool.connection() as conn:
            yield conn

    # -- writing -----------------------------------------------------------------------

    def add_document(
        self,
        document_id: str,
        pages: Sequence[str] | str,
        *,
        name: str = "",
        url: str | None = None,
        lang: str | None = None,
    ) -> int:
        """Add a document, replacing one with the same id, in one transaction."""
        page_list = (pages,) if isinstance(pages, str) else tuple(pages)
        return self.add_documents([SourceDocument(document_id, page_list, name, url, lang)])

    def add_documents(self, documents: Iterable[SourceDocument]) -> int:
        """Add or replace documents, each in its own transaction; returns the sentence count."""
        total = 0
        for doc in documents:
            rows = sentence_rows(doc)
            configs = _configs(doc.lang)
            names = {f"cfg{n}": name for n, name in enumerate(configs, start=1)}
            with self._connection() as conn, conn.transaction():
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
                        "pages": [r[0] for r in rows],
                        "numbers": [r[1] for r in rows],
                        "texts": [r[2] for r in rows],
                        "terms": [r[3] for r in rows],
                        "contexts": [r[4] for r in rows],
                        "headings": [headings.get((r[0], r[1]), doc.name) for r in rows],
                        **names,
                    },
                )
                added = Counter(t for r in rows for t in set(r[3].split()))
                added.subtract(removed)
                self._count_terms(conn, added)
            total += len(rows)
        return total

    def remove_document(self, document_id: str) -> bool:
        """Remove a document and its sentences; ``False`` when it was not there."""
        with self._connection() as conn, conn.transaction():
            deleted, removed = self._delete_rows(conn, document_id)
            self._count_terms(conn, Counter({t: -n for t, n in removed.items()}))
            return deleted

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
        """Apply sentence-count changes to the term table; drop terms no sentence holds.

        Rows are touched in term order, so concurrent writers never deadlock.
        """
        changes = sorted((term, n) for term, n in delta.items() if n)
        if not changes:
            return
        conn.execute(
            COUNT_TERMS,
            (self.collection, [term for term, _ in changes], [n for _, n in changes]),
        )
        if any(n < 0 for _, n in changes):
            conn.execute(
                "DELETE FROM toolweave_terms WHERE collection = %s AND term = ANY(%s)"
                " AND sentences <= 0",
                (self.collection, [term for term, n in changes if n < 0]),
            )

    # -- reading -----------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        limit: int = 8,
        lang: str | None = None,
        document_ids: Sequence[str] | None = None,
    ) -> list[UniqueTextDocument]:
        """Sentences best matching ``query``: PostgreSQL ranks, word coverage re-ranks.

        Args:
            query: User text; any characters are safe (bound parameters only).
            limit: Most sentences to return.
            lang: Only documents in this language, when given.
            document_ids: Only these documents, when given.

        Returns:
            Sentences best first; ``sentence_score`` in ``[0, 1)``.
        """
        parsed = parse_query(query, self._stopwords)
        if not parsed.words or limit <= 0 or (document_ids is not None and not document_ids):
            return []
        kept = query_words(query, self._stopwords)
        filters = ""
        params: dict[str, Any] = {
            "collection": self.collection,
            "limit": max(limit * CANDIDATES_PER_RESULT, 40),
        }
        if lang is not None:
            filters += " AND d.lang = %(lang)s"
            params["lang"] = lang
        if document_ids is not None:
            filters += " AND s.document_id = ANY(%(ids)s)"
            params["ids"] = list(document_ids)
        with self._connection() as conn:
            tsquery = self._candidate_query(conn, parsed.words, kept)
            if not tsquery:
                return []
            params["query"] = tsquery
            rows = conn.execute(SEARCH.format(filters=filters), params).fetchall()
        found = [
            UniqueTextDocument(
                document_id=doc_id,
                document_name=name,
                document_url=url,
                page=page,
                sentence_number=number,
                text=text,
                sentence_score=COVERAGE_WEIGHT * parsed.coverage(terms, context)
                + (1.0 - COVERAGE_WEIGHT) * _score(float(rank)),
            )
            for doc_id, name, url, page, number, text, terms, context, rank in rows
        ]
        found.sort(key=lambda doc: doc.sentence_score, reverse=True)
        return found[:limit]

    def _candidate_query(
        self, conn: Connection[Any], parsed: Sequence[QueryWord], words: Sequence[str]
    ) -> str:
        """The tsquery selecting candidate sentences: each query word's lexemes, OR-ed.

        A word's lexemes are its stems by PostgreSQL's Hungarian and English
        configurations plus toolweave's folded stems and prefix. Words that more than
        :data:`COMMON_WORD_SENTENCES` sentences hold select nothing alone (ranking
        every sentence with a very common word costs time in proportion to their
        number); they still count in the re-ranking. If every word is that common, the
        candidates are the sentences holding all of them.
        """
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
        stems = conn.execute(WORD_QUERIES, {"words": list(words)}).fetchall()
        if len(stems) != len(own):  # the two parsers disagree: use toolweave's stems alone
            stems = [("", "")] * len(own)
        per_word = [_or_query(*pg, " ".join(lex)) for pg, lex in zip(stems, own, strict=True)]
        rare = [
            q for q, f in zip(per_word, frequency, strict=True) if q and f <= COMMON_WORD_SENTENCES
        ]
        if rare:
            return " | ".join(f"({q})" for q in rare)
        common = [q for q in per_word if q]
        return " & ".join(f"({q})" for q in common)

    def document(self, document_id: str) -> DocumentInfo | None:
        """Metadata of a document, or ``None`` when it is not stored."""
        with self._connection() as conn:
            row = conn.execute(
                "SELECT d.name, d.url, d.lang, (SELECT COUNT(*) FROM toolweave_pages p"
                " WHERE p.collection = d.collection AND p.document_id = d.id)"
                " FROM toolweave_documents d WHERE d.collection = %s AND d.id = %s",
                (self.collection, document_id),
            ).fetchone()
        return None if row is None else DocumentInfo(document_id, row[0], row[1], row[2], row[3])

    def document_ids(self) -> list[str]:
        """Ids of the stored documents, sorted."""
        with self._connection() as conn:
            rows = conn.execute(
                "SELECT id FROM toolweave_documents WHERE collection = %s ORDER BY id",
                (self.collection,),
            ).fetchall()
        return [row[0] for row in rows]

    def page(self, document_id: str, page: int) -> str | None:
        """The text of page ``page`` (1-based) of a document, or ``None``."""
        with self._connection() as conn:
            row = conn.execute(
                "SELECT text FROM toolweave_pages"
                " WHERE collection = %s AND document_id = %s AND page = %s",
                (self.collection, document_id, page),
            ).fetchone()
        return None if row is None else str(row[0])

    def pages_of(self, document_id: str) -> list[int]:
        """The page numbers of a document, ascending (empty when it is not stored)."""
        with self._connection() as conn:
            rows = conn.execute(
                "SELECT page FROM toolweave_pages WHERE collection = %s AND document_id = %s"
                " ORDER BY page",
                (self.collection, document_id),
            ).fetchall()
        return [row[0] for row in rows]

    def page_sentences(self, document_id: str, page: int) -> list[UniqueTextDocument]:
        """The sentences of one page in order, as documents with score 0."""
        with self._connection() as conn:
            rows = conn.execute(
                "SELECT d.name, d.url, s.sentence_number, s.text FROM toolweave_sentences s"
                " JOIN toolweave_documents d ON d.collection = s.collection"
                " AND d.id = s.document_id"
                " WHERE s.collection = %s AND s.document_id = %s AND s.page = %s"
                " ORDER BY s.sentence_number",
                (self.collection, document_id, page),
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
        """How many pages the collection holds, over all documents."""
        with self._connection() as conn:
            row = conn.execute(
                "SELECT COUNT(*) FROM toolweave_pages WHERE collection = %s", (self.collection,)
            ).fetchone()
        return int(row[0]) if row else 0

    def page_refs(self, *, limit: int | None = None) -> list[PageRef]:
        """Every page of every document (by document id, then page), at most ``limit``."""
        with self._connection() as conn:
            rows = conn.execute(
                "SELECT document_id, page FROM toolweave_pages WHERE collection = %s"
                " ORDER BY document_id, page LIMIT %s",
                (self.collection, limit),
            ).fetchall()
        return [PageRef(document_id, page) for document_id, page in rows]

    def linked_pages(self, document_id: str, page: int, *, limit: int = 8) -> list[PageLink]:
        """The page graph: neighbour pages first, then pages sharing the page's rare terms.

        The same rules as the SQLite store's (``page_graph``): a term held by
        2..``RARE_TERM_MAX_SENTENCES`` sentences is rare, the ``RARE_TERMS_PER_PAGE``
        rarest of a page are followed, each adding ``1 / frequency`` to a page's score.
        """
        ref = PageRef(document_id, page)
        links: dict[PageRef, PageLink] = {}
        with self._connection() as conn:
            for neighbour in conn.execute(
                "SELECT page FROM toolweave_pages WHERE collection = %s AND document_id = %s"
                " AND page IN (%s, %s) ORDER BY page",
                (self.collection, document_id, page - 1, page + 1),
            ).fetchall():
                other = PageRef(document_id, neighbour[0])
                links[other] = PageLink(other, 1.0)
            terms = {
                term
                for (text,) in conn.execute(
                    "SELECT terms FROM toolweave_sentences"
                    " WHERE collection = %s AND document_id = %s AND page = %s",
                    (self.collection, document_id, page),
                ).fetchall()
                for term in text.split()
                if len(term) >= MIN_TERM_LENGTH and not term.isdigit()
            }
            rare = conn.execute(
                "SELECT term, sentences FROM toolweave_terms WHERE collection = %s"
                " AND term = ANY(%s) AND sentences BETWEEN 2 AND %s"
                " ORDER BY sentences, term LIMIT %s",
                (self.collection, sorted(terms), RARE_TERM_MAX_SENTENCES, RARE_TERMS_PER_PAGE),
            ).fetchall()
            shared: dict[PageRef, tuple[float, list[str]]] = {}
            for term, count in rare:
                for other_doc, other_page in conn.execute(
                    "SELECT DISTINCT document_id, page FROM toolweave_sentences"
                    " WHERE collection = %s AND tsv @@ CAST(%s AS tsquery)"
                    " AND (' ' || terms || ' ') LIKE %s",
                    (self.collection, _quote_lexeme(term), f"% {term} %"),
                ).fetchall():
                    other = PageRef(other_doc, other_page)
                    if other == ref:
                        continue
                    score, names = shared.get(other, (0.0, []))
                    shared[other] = (score + 1.0 / count, [*names, term])
        ranked = sorted(shared.items(), key=lambda item: (-item[1][0], item[0]))
        for other, (score, names) in ranked:
            if other not in links:
                links[other] = PageLink(other, score, tuple(names))
        return list(links.values())[:limit]

    def __len__(self) -> int:
        with self._connection() as conn:
            row = conn.execute(
                "SELECT COUNT(*) FROM toolweave_documents WHERE collection = %s",
                (self.collection,),
            ).fetchone()
        return int(row[0]) if row else 0

    def clear(self) -> None:
        """Remove every document of the collection (tests, re-ingestion from scratch)."""
        with self._connection() as conn, conn.transaction():
            conn.execute(
                "DELETE FROM toolweave_documents WHERE collection = %s", (self.collection,)
            )
            conn.execute("DELETE FROM toolweave_terms WHERE collection = %s", (self.collection,))

    def close(self) -> None:
        """Close the connection pool (when the store opened it)."""
        if self._owns_pool:
            self._pool.close()

    def __repr__(self) -> str:
        return f"PostgresDocumentStore(collection={self.collection!r})"


def _headings(doc: SourceDocument) -> dict[tuple[int, int], str]:
    """``(page, sentence number)`` → the document title and section heading of the sentence."""
    headings: dict[tuple[int, int], str] = {}
    for page_no, text in enumerate(doc.pages, start=1):
        for number, (heading, _sentence) in enumerate(sections(text), start=1):
            headings[(page_no, number)] = f"{doc.name} {heading}".strip()
    return headings


__all__ = ["PostgresDocumentStore"]

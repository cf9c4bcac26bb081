"""SQL of :class:`~toolweave.tools.search.store.SqliteDocumentStore`: schema, queries, row prep."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

from toolweave.tools.search.protocol import SourceDocument
from toolweave.tools.search.text import Query, all_of, index_terms, page_sections

LARGE_STORE_SENTENCES = 20_000  # a larger store narrows the candidates of multi-word queries
COMMON_WORD_SENTENCES = 3_000
"""A query word held by more sentences selects no candidates alone (it still counts in the
re-ranking): ranking them all would cost time in proportion to their number."""

SCHEMA = """
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
CREATE TABLE IF NOT EXISTS sentence_vectors (
    document_id TEXT NOT NULL, page INTEGER NOT NULL, sentence_number INTEGER NOT NULL,
    model TEXT NOT NULL, vector BLOB NOT NULL,
    PRIMARY KEY (model, document_id, page, sentence_number));
CREATE VIRTUAL TABLE IF NOT EXISTS temp.sentence_vocab USING fts5vocab(main, sentence_fts, 'col');
"""

FILE_PRAGMAS = ("PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL")  # files only
PRAGMAS = ("PRAGMA temp_store = MEMORY", "PRAGMA cache_size = -65536")

SEARCH = """
SELECT s.document_id, d.name, d.url, s.page, s.sentence_number, s.text,
    hit.rank, f.terms, f.context
FROM (
    SELECT rowid, bm25(sentence_fts, 1.0, {context_weight}) AS rank
    FROM sentence_fts WHERE sentence_fts MATCH ? {inner}
    ORDER BY rank LIMIT ?
) AS hit
JOIN sentence_fts AS f ON f.rowid = hit.rowid
JOIN sentences AS s ON s.id = hit.rowid
JOIN documents AS d ON d.id = s.document_id
ORDER BY hit.rank, s.document_id, s.page, s.sentence_number
"""  # FTS5 ranks and cuts inside the index (fast), then the rows are joined

ONLY_LANG = " AND rowid IN (SELECT s.id FROM sentences s JOIN documents d ON d.id = s.document_id"
ONLY_LANG += " WHERE d.lang = ?)"
ONLY_DOCUMENTS = " AND rowid IN (SELECT id FROM sentences WHERE document_id IN ({marks}))"

INSERT_DOCUMENT = "INSERT INTO documents (id, name, url, lang) VALUES (?, ?, ?, ?)"
INSERT_PAGE = "INSERT INTO pages (document_id, page, text) VALUES (?, ?, ?)"
INSERT_SENTENCE = (
    "INSERT INTO sentences (id, document_id, page, sentence_number, text) VALUES (?, ?, ?, ?, ?)"
)
INSERT_FTS = "INSERT INTO sentence_fts (rowid, terms, context) VALUES (?, ?, ?)"
INSERT_VECTOR = (
    "INSERT OR REPLACE INTO sentence_vectors (document_id, page, sentence_number, model, vector)"
    " VALUES (?, ?, ?, ?, ?)"
)

SentenceRow = tuple[int, int, str, str, str]  # page, sentence_number, text, terms, context


def sentence_rows(doc: SourceDocument) -> list[SentenceRow]:
    """The sentences of a document with their index terms (pure Python, outside the lock)."""
    rows: list[SentenceRow] = []
    contexts: dict[str, str] = {}
    for page_no, found in enumerate(page_sections(doc.pages), start=1):
        for number, (heading, sentence) in enumerate(found, start=1):
            context = contexts.get(heading)
            if context is None:
                context = contexts[heading] = index_terms(f"{doc.name} {heading}", doc.lang)
            rows.append((page_no, number, sentence, index_terms(sentence, doc.lang), context))
    return rows


def insert_documents(
    conn: sqlite3.Connection,
    prepared: Sequence[tuple[SourceDocument, list[SentenceRow]]],
    first_id: int,
    vectors: Sequence[tuple[str, list[bytes] | None]] = (),
) -> int:
    """Add or replace documents (the last of an id) in the open transaction; the next free id."""
    latest = {doc.document_id: (doc, rows) for doc, rows in prepared}
    embedded = [
        (doc.document_id, page_no, number, model, value)
        for (doc, rows), (model, values) in zip(prepared, vectors, strict=False)
        if values is not None and latest[doc.document_id][0] is doc
        for (page_no, number, *_), value in zip(rows, values, strict=True)
    ]
    for document_id in stored_ids(conn, list(latest)):
        delete_document(conn, document_id)
    documents, pages, sentences, terms = [], [], [], []
    next_id = first_id
    for doc, rows in latest.values():
        documents.append((doc.document_id, doc.name, doc.url, doc.lang))
        pages += [(doc.document_id, no, text) for no, text in enumerate(doc.pages, start=1)]
        for page_no, number, text, indexed, context in rows:
            sentences.append((next_id, doc.document_id, page_no, number, text))
            terms.append((next_id, indexed, context))
            next_id += 1
    conn.executemany(INSERT_DOCUMENT, documents)
    conn.executemany(INSERT_PAGE, pages)
    conn.executemany(INSERT_SENTENCE, sentences)
    conn.executemany(INSERT_FTS, terms)
    conn.executemany(INSERT_VECTOR, embedded)
    return next_id


STORED_IDS_CHUNK = 500  # ids per IN (...) lookup, below SQLite's bound-parameter limit


def stored_ids(conn: sqlite3.Connection, document_ids: Sequence[str]) -> list[str]:
    """Which of ``document_ids`` are stored."""
    found: list[str] = []
    for start in range(0, len(document_ids), STORED_IDS_CHUNK):
        chunk = document_ids[start : start + STORED_IDS_CHUNK]
        query = f"SELECT id FROM documents WHERE id IN ({placeholders(chunk)})"
        found += [row[0] for row in conn.execute(query, chunk)]
    return found


def next_sentence_id(conn: sqlite3.Connection) -> int:
    """The first unused sentence id."""
    return int(conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM sentences").fetchone()[0])


def delete_document(conn: sqlite3.Connection, document_id: str) -> bool:
    """Delete a document and its pages, sentences and index rows; ``False`` if absent."""
    conn.execute(
        "DELETE FROM sentence_fts WHERE rowid IN (SELECT id FROM sentences WHERE document_id = ?)",
        (document_id,),
    )
    conn.execute("DELETE FROM sentences WHERE document_id = ?", (document_id,))
    conn.execute("DELETE FROM sentence_vectors WHERE document_id = ?", (document_id,))
    conn.execute("DELETE FROM pages WHERE document_id = ?", (document_id,))
    return conn.execute("DELETE FROM documents WHERE id = ?", (document_id,)).rowcount > 0


def candidate_expression(conn: sqlite3.Connection, query: Query) -> str | None:
    """The FTS5 expression selecting a query's candidates: its words OR-ed (common ones AND-ed)."""
    full = query.expression()
    if full is None or len(query.words) < 2:
        return full
    size = conn.execute("SELECT COALESCE(MAX(id), 0) FROM sentences").fetchone()[0]
    if size <= LARGE_STORE_SENTENCES:
        return full
    rare: list[str] = []
    common: list[str] = []
    for word in query.words:
        expression = word.expression()
        held = conn.execute(
            "SELECT COUNT(*) FROM (SELECT 1 FROM sentence_fts WHERE sentence_fts MATCH ? LIMIT ?)",
            (expression, COMMON_WORD_SENTENCES + 1),
        ).fetchone()[0]
        (common if held > COMMON_WORD_SENTENCES else rare).append(expression)
    if not common:
        return full
    together = all_of(common)
    parts = [*rare, together] if len(common) > 1 or not rare else rare
    return " OR ".join(f"({part})" for part in parts if part)


PAGE_TERMS = (
    "SELECT f.terms FROM sentences s JOIN sentence_fts f ON f.rowid = s.id"
    " WHERE s.document_id = ? AND s.page = ?"
)
TERM_SENTENCES = "SELECT doc FROM sentence_vocab WHERE col = 'terms' AND term = ?"
PAGES_WITH_TERM = (
    "SELECT DISTINCT s.document_id, s.page FROM sentence_fts f"
    " JOIN sentences s ON s.id = f.rowid WHERE sentence_fts MATCH ?"
)  # bound as term_match(term)


def term_match(term: str) -> str:
    """The FTS5 expression matching one index term in the ``terms`` column."""
    return 'terms : "' + term.replace('"', '""') + '"'


def placeholders(values: Iterable[object]) -> str:
    """``?, ?, ?`` for an ``IN (...)`` list."""
    return ", ".join("?" for _ in values)

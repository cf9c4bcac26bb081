"""The page graph of the seed's "graph search": pages linked by adjacency and by rare terms.

Two pages are linked when they are neighbours in one document (page ±1) or when
they share index terms that few sentences of the store hold (rare terms, such as
a proper name or a code). Links are computed lazily, per page, from the FTS5
index and its ``fts5vocab`` term counts, so ingestion pays nothing for them.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

RARE_TERM_MAX_SENTENCES = 12
"""A term held by at most this many sentences counts as rare."""
RARE_TERMS_PER_PAGE = 8
"""The rarest terms of a page that are followed to other pages."""
MIN_TERM_LENGTH = 4
"""Shorter terms (stems of short words, numbers) are never followed."""


@dataclass(frozen=True, order=True)
class PageRef:
    """One page of one document."""

    document_id: str
    page: int


@dataclass(frozen=True)
class PageLink:
    """A page linked to another, and why."""

    page: PageRef
    score: float
    """Higher is closer: 1.0 for a neighbour page, else the summed rarity of shared terms."""
    shared_terms: tuple[str, ...] = field(default=())
    """The rare terms both pages hold (empty for a neighbour page)."""


def page_terms(conn: sqlite3.Connection, ref: PageRef) -> set[str]:
    """The index terms of a page's sentences."""
    rows = conn.execute(
        "SELECT f.terms FROM sentences s JOIN sentence_fts f ON f.rowid = s.id"
        " WHERE s.document_id = ? AND s.page = ?",
        (ref.document_id, ref.page),
    ).fetchall()
    return {term for (terms,) in rows for term in str(terms).split()}


def rare_terms(conn: sqlite3.Connection, terms: set[str]) -> list[tuple[str, int]]:
    """The rarest of ``terms`` held by 2..``RARE_TERM_MAX_SENTENCES`` sentences, rarest first."""
    counted: list[tuple[int, str]] = []
    for term in terms:
        if len(term) < MIN_TERM_LENGTH or term.isdigit():
            continue
        row = conn.execute(
            "SELECT doc FROM sentence_vocab WHERE col = 'terms' AND term = ?", (term,)
        ).fetchone()
        if row is not None and 2 <= row[0] <= RARE_TERM_MAX_SENTENCES:
            counted.append((int(row[0]), term))
    counted.sort()
    return [(term, count) for count, term in counted[:RARE_TERMS_PER_PAGE]]


def linked_pages(conn: sqlite3.Connection, ref: PageRef, *, limit: int) -> list[PageLink]:
    """Pages linked to ``ref``: its neighbours first, then pages sharing its rare terms.

    Args:
        conn: The store's connection (the caller holds its lock).
        ref: The page to start from.
        limit: Most links to return.

    Returns:
        Links best first, ``ref`` itself excluded.
    """
    links: dict[PageRef, PageLink] = {}
    for page in (ref.page - 1, ref.page + 1):
        row = conn.execute(
            "SELECT 1 FROM pages WHERE document_id = ? AND page = ?", (ref.document_id, page)
        ).fetchone()
        if row is not None:
            neighbour = PageRef(ref.document_id, page)
            links[neighbour] = PageLink(neighbour, 1.0)
    shared: dict[PageRef, tuple[float, list[str]]] = {}
    for term, count in rare_terms(conn, page_terms(conn, ref)):
        rows = conn.execute(
            "SELECT DISTINCT s.document_id, s.page FROM sentence_fts f"
            " JOIN sentences s ON s.id = f.rowid WHERE sentence_fts MATCH ?",
            ('terms : "' + term.replace('"', '""') + '"',),
        ).fetchall()
        for document_id, page in rows:
            other = PageRef(document_id, page)
            if other == ref:
                continue
            score, names = shared.get(other, (0.0, []))
            shared[other] = (score + 1.0 / count, [*names, term])
    ranked = sorted(shared.items(), key=lambda item: (-item[1][0], item[0]))
    for other, (score, names) in ranked:
        if other not in links:
            links[other] = PageLink(other, score, tuple(names))
    return list(links.values())[:limit]

"""The page graph of the seed's "graph search": pages linked by adjacency and by rare terms.

Two pages are linked when they are neighbours in one document (page ±1) or when
they share index terms that few sentences of the store hold (rare terms, such as
a proper name or a code). Links are computed lazily, per page, from the store's
term counts (SQLite's ``fts5vocab``, PostgreSQL's term table), by :func:`link_pages`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
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


def followed_terms(terms: Iterable[str]) -> list[str]:
    """The terms of a page the graph may follow: long enough and no numbers, sorted."""
    return sorted(t for t in set(terms) if len(t) >= MIN_TERM_LENGTH and not t.isdigit())


def link_pages(
    ref: PageRef,
    neighbours: Iterable[int],
    rare: Iterable[tuple[str, int]],
    pages_with_term: Callable[[str], Iterable[tuple[str, int]]],
    *,
    limit: int,
) -> list[PageLink]:
    """Pages linked to ``ref``: its neighbours first, then pages sharing its rare terms.

    Each rare term adds ``1 / count`` to every other page holding it; ``ref`` is excluded.
    """
    links: dict[PageRef, PageLink] = {}
    for page in neighbours:
        neighbour = PageRef(ref.document_id, page)
        links[neighbour] = PageLink(neighbour, 1.0)
    shared: dict[PageRef, tuple[float, list[str]]] = {}
    for term, count in rare:
        for document_id, page in pages_with_term(term):
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

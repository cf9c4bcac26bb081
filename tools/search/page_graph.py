"""The page graph: pages linked by adjacency (page ±1) and by rare terms they share."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

RARE_TERM_MAX_SENTENCES = 12  # a term held by at most this many sentences is rare
RARE_TERMS_PER_PAGE = 8  # the rarest terms of a page followed to other pages
MIN_TERM_LENGTH = 4  # shorter terms are never followed


@dataclass(frozen=True, order=True)
class PageRef:
    """One page of one document."""

    document_id: str
    page: int


@dataclass(frozen=True)
class PageLink:
    """A page linked to another, and why."""

    page: PageRef
    score: float  # 1.0 for a neighbour page, else the summed rarity of shared terms
    shared_terms: tuple[str, ...] = field(default=())


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
    """Pages linked to ``ref``: its neighbours, then pages sharing rare terms (``1/count`` each)."""
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

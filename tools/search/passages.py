"""D9: search hits widened to passages (a sentence with its neighbours), within a budget."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from toolweave.state.documents import DocumentKey, UniqueTextDocument

NEIGHBOURS = 1  # sentences before and after a hit (same page) a passage holds
NEIGHBOUR_SHARE = 0.5  # a neighbour's score as a share of its hit's (never outranks it)
PageSentences = Callable[[str, int], Sequence[UniqueTextDocument]]  # a store's page_sentences


@dataclass
class _Picked:
    """The sentences chosen so far, with the rank of the best hit each belongs to."""

    budget: int
    used: int = 0
    chosen: dict[DocumentKey, UniqueTextDocument] = field(default_factory=dict)
    rank: dict[DocumentKey, int] = field(default_factory=dict)

    def add(self, rank: int, sentences: Sequence[UniqueTextDocument]) -> bool:
        """Add the new ones of ``sentences`` if they fit; ``False`` (nothing added) if not."""
        new = [s for s in sentences if s.key not in self.chosen]
        cost = sum(len(s.text) for s in new)
        if self.used + cost > self.budget:
            return False
        self.used += cost
        for sentence in new:
            self.chosen[sentence.key] = sentence
            self.rank[sentence.key] = rank
        return True

    def promote(self, rank: int, hit: UniqueTextDocument) -> None:
        """A hit already chosen as a neighbour keeps the hit's (higher) score."""
        if hit.sentence_score > self.chosen[hit.key].sentence_score:
            self.chosen[hit.key] = hit
        self.rank[hit.key] = min(self.rank[hit.key], rank)


def under(doc: UniqueTextDocument, hit: UniqueTextDocument, score: float) -> UniqueTextDocument:
    """``doc`` (a store's sentence) scored ``score``, under ``hit``'s document name and address."""
    named = {"document_name": hit.document_name, "document_url": hit.document_url}
    return doc.model_copy(update={"sentence_score": score, **named})


def _around(
    hit: UniqueTextDocument, page: Sequence[UniqueTextDocument], neighbours: int
) -> list[UniqueTextDocument]:
    """The hit with up to ``neighbours`` sentences either side of it, in page order."""
    at = next((i for i, s in enumerate(page) if s.sentence_number == hit.sentence_number), None)
    if at is None:
        return [hit]
    low, high = max(0, at - neighbours), min(len(page), at + neighbours + 1)
    score = hit.sentence_score * NEIGHBOUR_SHARE
    return [hit if i == at else under(page[i], hit, score) for i in range(low, high)]


def _ordered(picked: _Picked) -> list[UniqueTextDocument]:
    """The chosen sentences run by run (consecutive on a page), runs by their best hit."""
    runs: list[list[UniqueTextDocument]] = []
    ordered = sorted(
        picked.chosen.values(), key=lambda d: (d.document_id, d.page or 0, d.sentence_number or 0)
    )
    for doc in ordered:
        last = runs[-1][-1] if runs else None
        joined = (
            last is not None
            and (last.document_id, last.page) == (doc.document_id, doc.page)
            and doc.sentence_number is not None
            and last.sentence_number is not None
            and doc.sentence_number - last.sentence_number <= 1
        )
        if joined:
            runs[-1].append(doc)
        else:
            runs.append([doc])
    runs.sort(key=lambda run: min(picked.rank[d.key] for d in run))
    return [doc for run in runs for doc in run]


def passages(
    hits: Sequence[UniqueTextDocument],
    page_sentences: PageSentences,
    *,
    max_chars: int,
    neighbours: int = NEIGHBOURS,
    widened: int | None = None,
) -> list[UniqueTextDocument]:
    """``hits`` (best first) widened by ``neighbours`` sentences, at most ``max_chars`` of text.

    Only the best ``widened`` hits get their neighbours (``None``: every hit); the rest
    are lone sentences.
    """
    picked = _Picked(budget=max_chars)
    pages: dict[tuple[str, int], Sequence[UniqueTextDocument]] = {}
    widen = len(hits) if widened is None else widened
    for rank, hit in enumerate(hits):
        if hit.key in picked.chosen:
            picked.promote(rank, hit)
            continue
        around = [hit]
        near = neighbours > 0 and rank < widen
        if near and hit.page is not None and hit.sentence_number is not None:
            where = (hit.document_id, hit.page)
            if where not in pages:
                pages[where] = page_sentences(*where)
            around = _around(hit, pages[where], neighbours)
        if not picked.add(rank, around):
            picked.add(rank, [hit])
    return _ordered(picked)

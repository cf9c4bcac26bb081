"""Pseudo-relevance feedback: the words a query's best passages add (D8, offline).

The classic domain-general expansion (RM3's shape): search the query, take its
best passages, and weigh each of their words by how often they use it against
how many pages of the store hold it (term frequency times inverse document
frequency, by the store's own pages). The best words the query lacks are the
documents' own words for its subject; no word list is involved. The defaults are
RM3's usual ones, fixed for any domain: 10 terms from 3 feedback passages.
"""

from __future__ import annotations

import math
import threading
import weakref
from collections import Counter
from collections.abc import Sized
from typing import Any

from toolweave.tools.search.protocol import DocumentStore, PageGraphStore
from toolweave.tools.search.text import STOPWORDS, content_words, word_terms, words

FEEDBACK_PASSAGES = 3
"""Passages the feedback is taken from (RM3's usual ``fbDocs``)."""
FEEDBACK_TERMS = 10
"""Words the feedback adds (RM3's usual ``fbTerms``)."""
MIN_WORD = 3
"""Shorter words (and numbers) are never offered."""


def _key(word: str) -> str:
    """One term per word: its first stem (case and accents folded)."""
    terms = word_terms(word)
    return min(terms) if terms else word


def _candidates(text: str) -> list[str]:
    return [w for w in words(text) if len(w) >= MIN_WORD and not w.isdigit() and w not in STOPWORDS]


class PageFrequencies:
    """How many pages of a store hold each term: the store's own document frequencies."""

    def __init__(self, store: PageGraphStore) -> None:
        self.pages = 0
        self.held: Counter[str] = Counter()
        for ref in store.page_refs():
            self.pages += 1
            text = store.page(ref.document_id, ref.page) or ""
            self.held.update({_key(w) for w in _candidates(text)})

    def idf(self, term: str) -> float:
        """``log(N / df)``; a term no page holds counts as held by one."""
        return math.log(max(self.pages, 1) / max(self.held[term], 1))


class FeedbackWords:
    """Each store's page frequencies, built once per content; a search holds one."""

    def __init__(self) -> None:
        self._built: weakref.WeakKeyDictionary[Any, tuple[tuple[int, int], PageFrequencies]] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()

    def frequencies(self, store: PageGraphStore) -> PageFrequencies:
        """The store's page frequencies, from the cache while its content is unchanged."""
        stamp = (store.page_count(), len(store) if isinstance(store, Sized) else 0)
        with self._lock:
            cached = self._built.get(store)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        built = PageFrequencies(store)
        with self._lock:
            self._built[store] = (stamp, built)
        return built

    def words_for(
        self,
        store: DocumentStore,
        query: str,
        *,
        passages: int = FEEDBACK_PASSAGES,
        terms: int = FEEDBACK_TERMS,
    ) -> tuple[str, ...]:
        """The ``terms`` words ``query``'s best ``passages`` use most distinctively.

        A word weighs its share of each feedback passage's words, summed, times its
        inverse page frequency; words of the query (same stem) are left out. Empty
        for a store that cannot list its pages, or when the query finds nothing.
        """
        if not isinstance(store, PageGraphStore):
            return ()
        found = store.search(query, limit=passages)
        if not found:
            return ()
        frequencies = self.frequencies(store)
        asked = {t for w in content_words(query) for t in word_terms(w)}
        weights: Counter[str] = Counter()
        surface: dict[str, Counter[str]] = {}
        for doc in found:
            own = [w for w in _candidates(doc.text) if asked.isdisjoint(word_terms(w))]
            for word in own:
                key = _key(word)
                weights[key] += frequencies.idf(key) / len(own)
                surface.setdefault(key, Counter())[word] += 1
        best = [key for key, weight in weights.most_common(terms) if weight > 0]
        return tuple(surface[key].most_common(1)[0][0] for key in best)

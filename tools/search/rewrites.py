"""Search phrasings of a missing piece: the model's rewrites, and words of the documents (D8)."""

from __future__ import annotations

import threading
import weakref
from collections import Counter
from collections.abc import Sequence, Sized
from functools import cached_property
from typing import Any

from toolweave.tools import embeddings
from toolweave.tools.base import ToolCallContext
from toolweave.tools.search.protocol import DocumentStore, PageGraphStore
from toolweave.tools.search.text import STOPWORDS, content_words, fold, word_terms, words

NEAREST = 2  # corpus words taken per word the corpus lacks (one phrasing each)
MIN_PHRASING = 2  # fewest distinct words of a derived phrasing (one near word finds anything)
MIN_WORD = 3  # shorter corpus words (and numbers) are never a replacement


def search_phrasings(ctx: ToolCallContext, piece: str) -> tuple[str, ...]:
    """The rewrites a deep-search subtask carries (its ``important_words``), not the piece."""
    own = (p.strip() for p in ctx.task.important_words)
    return tuple(dict.fromkeys(p for p in own if p and p != piece))


def _trigrams(word: str) -> frozenset[str]:
    padded = f" {fold(word)} "
    return frozenset(padded[i : i + 3] for i in range(len(padded) - 2))


class CorpusWords:
    """The words of a store's documents, and the nearest of them (mutual neighbours) to another."""

    def __init__(self, counts: Counter[str]) -> None:
        self.words = tuple(word for word, _ in counts.most_common())
        self.family: dict[str, list[int]] = {}
        for index, word in enumerate(self.words):
            for term in word_terms(word):
                self.family.setdefault(term, []).append(index)
        self._lock = threading.Lock()

    def has(self, word: str) -> bool:
        """Whether a document uses ``word`` (or a form of it with the same stem)."""
        return any(term in self.family for term in word_terms(word))

    @cached_property
    def _vectors(self) -> Any:
        """Unit vectors of the corpus words (static model), or ``None`` without the extra."""
        if not self.words or not embeddings.extra_installed():
            return None
        return embeddings.StaticEmbeddings(cache_dir=None).matrix(list(self.words))

    @cached_property
    def _grams(self) -> list[frozenset[str]]:
        return [_trigrams(word) for word in self.words]

    def _similarities(self, word: str | int) -> list[float]:
        """Similarity of ``word`` (text, or a corpus word's index) to every corpus word."""
        with self._lock:  # the vectors are computed once, by one thread
            vectors = self._vectors
        if vectors is not None:
            if isinstance(word, int):
                row = vectors[word]
            else:
                row = embeddings.StaticEmbeddings(cache_dir=None).matrix([word])[0]
            found: list[float] = (vectors @ row).tolist()
            return found
        grams = self._grams[word] if isinstance(word, int) else _trigrams(word)
        return [len(grams & other) / len(grams | other) for other in self._grams]

    def _closest_other(self, index: int) -> float:
        """How near the corpus word ``index`` is to its nearest corpus word of another stem."""
        same = {i for term in word_terms(self.words[index]) for i in self.family.get(term, ())}
        scores = self._similarities(index)
        return max((s for i, s in enumerate(scores) if i not in same), default=0.0)

    def nearest(self, word: str, count: int = NEAREST) -> list[str]:
        """Up to ``count`` corpus words near ``word`` (mutual neighbours), nearest first."""
        scores = self._similarities(word)
        ranked = sorted(range(len(scores)), key=lambda i: -scores[i])[:count]
        return [
            self.words[i] for i in ranked if scores[i] > 0 and scores[i] >= self._closest_other(i)
        ]

    def phrasings(self, piece: str) -> tuple[str, ...]:
        """The piece with each word no document uses replaced by its :meth:`nearest` (or none)."""
        words_ = [w for w in content_words(piece) if not w.isdigit()]
        absent = {w: self.nearest(w) for w in words_ if not self.has(w)}
        if not any(absent.values()):
            return ()
        found: list[str] = []
        for rank in range(NEAREST):
            replaced = False
            kept: list[str] = []
            for word in words_:
                near = absent.get(word)
                if near is None:
                    kept.append(word)
                elif near:
                    kept.append(near[min(rank, len(near) - 1)])
                    replaced = replaced or rank < len(near)
            distinct = list(dict.fromkeys(kept))
            if replaced and len(distinct) >= MIN_PHRASING:
                found.append(" ".join(distinct))
        return tuple(dict.fromkeys(found))


def build_corpus_words(store: PageGraphStore) -> CorpusWords:
    """The words of every page of ``store`` (function words and numbers left out)."""
    counts: Counter[str] = Counter()
    for ref in store.page_refs():
        text = store.page(ref.document_id, ref.page) or ""
        counts.update(
            w for w in words(text) if len(w) >= MIN_WORD and not w.isdigit() and w not in STOPWORDS
        )
    return CorpusWords(counts)


class CorpusWordsCache:
    """Each store's :class:`CorpusWords`, built once per content (stores held weakly)."""

    def __init__(self) -> None:
        self._built: weakref.WeakKeyDictionary[Any, tuple[tuple[int, int], CorpusWords]] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()

    def words_of(self, store: PageGraphStore) -> CorpusWords:
        """The store's corpus words, from the cache when its content is unchanged."""
        stamp = store.page_count(), len(store) if isinstance(store, Sized) else 0  # its content
        with self._lock:
            cached = self._built.get(store)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        built = build_corpus_words(store)
        with self._lock:
            self._built[store] = (stamp, built)
        return built

    def lookups(self, ctx: ToolCallContext, store: DocumentStore, piece: str) -> tuple[str, ...]:
        """What a deep search looks ``piece`` up by besides itself: rewrites, then derived (D8)."""
        given = search_phrasings(ctx, piece)
        derived: list[str] = []
        if isinstance(store, PageGraphStore):  # in the documents' own words
            corpus = self.words_of(store)
            derived = [found for text in given or (piece,) for found in corpus.phrasings(text)]
        return tuple(p for p in dict.fromkeys([*given, *derived]) if p != piece)


def best_question(piece: str, phrasings: Sequence[str], passage: str) -> str:
    """The wording of the piece that shares the most words with ``passage`` (the piece on a tie)."""
    if not phrasings:
        return piece
    have = {term for word in words(passage) for term in word_terms(word)}

    def shared(text: str) -> int:
        return sum(any(t in have for t in word_terms(w)) for w in content_words(text))

    return max([piece, *phrasings], key=shared)

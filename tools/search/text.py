"""Keyword search's use of the text kit (:mod:`toolweave.tools.text`): index terms, FTS5 queries."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from toolweave.tools.text import QUERY_STOPWORDS, hungarian_base, polish_core, stem, stems
from toolweave.tools.text import content_words as content_words
from toolweave.tools.text import fold as fold
from toolweave.tools.text import page_sections as page_sections
from toolweave.tools.text import sections as sections
from toolweave.tools.text import split_sentences as split_sentences
from toolweave.tools.text import words as words

PREFIX_LENGTH = 6  # most characters of the prefix term a query word adds
MIN_PREFIX = 4
MIN_CORE_TERM = 3  # a two-letter core ("ps" of "pies") would join unrelated short words
STOPWORDS = QUERY_STOPWORDS  # a domain passes its own as the store's ``stopwords``


@lru_cache(maxsize=65536)
def word_terms(word: str, lang: str | None = None) -> tuple[str, ...]:
    """Index terms of one case-folded word: its folded form and stems (in ``lang``, else all).

    Polish stemming adds the word's Polish core (:func:`~toolweave.tools.text.polish_core`) of
    :data:`MIN_CORE_TERM` letters or more: "pieniądze" and "pieniędzy" share "pieniedz".
    Hungarian stemming adds the verb under a potential form
    (:func:`~toolweave.tools.text.hungarian_base`): "parkolhatok" and "parkolni" share "parkol".
    """
    core = polish_core(word) if lang in (None, "pl") else ""
    kept = core if len(core) >= MIN_CORE_TERM else ""
    base = hungarian_base(word) if lang in (None, "hu") else ""
    return tuple(dict.fromkeys(t for t in (fold(word), *stems(word, lang), kept, base) if t))


def index_terms(text: str, lang: str | None = None) -> str:
    """The space-separated terms stored in the FTS5 index for ``text`` in language ``lang``."""
    return " ".join(term for word in words(text) for term in word_terms(word, lang))


def stopword_set(extra: Iterable[str] = ()) -> frozenset[str]:
    """:data:`STOPWORDS` plus ``extra`` (a domain's), each also in folded form."""
    given = {w.casefold() for w in extra if w.strip()}
    return STOPWORDS | frozenset(given) | frozenset(fold(w) for w in given)


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def all_of(expressions: list[str]) -> str | None:
    """The AND of FTS5 expressions, each parenthesised; ``None`` if empty."""
    return " AND ".join(f"({e})" for e in expressions) if expressions else None


@dataclass(frozen=True)
class QueryWord:
    """The index terms one query word matches: exact terms and an optional prefix."""

    terms: frozenset[str]
    prefix: str | None
    word: str = ""  # case-folded, as typed

    def expression(self) -> str:
        """An FTS5 ``MATCH`` expression for this word alone: its terms and prefix, OR-ed."""
        parts = [_quote(term) for term in sorted(self.terms)]
        if self.prefix is not None:
            parts.append(_quote(self.prefix) + "*")
        return " OR ".join(parts)

    def matches(self, indexed: set[str]) -> bool:
        """Whether a sentence with these index terms contains the word."""
        if self.terms & indexed:
            return True
        prefix = self.prefix
        return prefix is not None and any(term.startswith(prefix) for term in indexed)


@dataclass(frozen=True)
class Query:
    """A parsed keyword query: its content words, each with the terms it matches."""

    words: tuple[QueryWord, ...]

    def expression(self) -> str | None:
        """An FTS5 ``MATCH`` expression (an OR of quoted terms: no user syntax), or ``None``."""
        terms = (term for word in self.words for term in word.expression().split(" OR "))
        parts = dict.fromkeys(term for term in terms if term)
        return " OR ".join(parts) if parts else None

    def coverage(self, terms: str, context: str = "") -> float:
        """Share of the query words found in a sentence (``terms``), or half in its ``context``."""
        if not self.words:
            return 0.0
        own, around = set(terms.split()), set(context.split())
        found = sum(
            1.0 if w.matches(own) else 0.5 if w.matches(around) else 0.0 for w in self.words
        )
        return found / len(self.words)


def parse_query(text: str, stopwords: frozenset[str] = STOPWORDS) -> Query:
    """Parse user text into a :class:`Query`: each word's terms and its Hungarian stem's prefix."""
    query_words = []
    for word in content_words(text, stopwords):
        prefix = stem(word, "hu")[:PREFIX_LENGTH]
        kept = prefix if len(prefix) >= MIN_PREFIX else None
        query_words.append(QueryWord(frozenset(word_terms(word)), kept, word))
    return Query(tuple(query_words))


def match_expression(text: str) -> str | None:
    """The FTS5 ``MATCH`` expression for user text (see :meth:`Query.expression`)."""
    return parse_query(text).expression()

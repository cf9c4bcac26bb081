"""Keyword search's use of the text kit (:mod:`toolweave.tools.text`): index terms, FTS5 queries.

A word is indexed folded plus its stem in the document's language (every language's
when unknown); query words are stemmed in every language and also match the prefix
of their Hungarian stem, which joins forms the stemmer leaves apart.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from toolweave.tools.text import QUERY_STOPWORDS, stem, stems
from toolweave.tools.text import fold as fold
from toolweave.tools.text import sections as sections
from toolweave.tools.text import split_sentences as split_sentences
from toolweave.tools.text import words as words

PREFIX_LENGTH = 6
"""Most characters of the prefix term a query word adds (``"parkol"*``)."""
MIN_PREFIX = 4
"""Fewest characters a prefix term may have."""

STOPWORDS = QUERY_STOPWORDS
"""The kit's query stop words, dropped from queries (unless a query has nothing else).

Words every document of one domain holds are that domain's to name: pass them as
``stopwords`` to the store (they are added to these).
"""


@lru_cache(maxsize=65536)
def word_terms(word: str, lang: str | None = None) -> tuple[str, ...]:
    """Index terms of one case-folded word: its folded form and folded stems.

    ``lang`` (``"hu"``, ``"en"``, ``"pl"``) stems in that language only; else in every one.
    """
    return tuple(dict.fromkeys(t for t in (fold(word), *stems(word, lang)) if t))


def index_terms(text: str, lang: str | None = None) -> str:
    """The space-separated terms stored in the FTS5 index for ``text`` in language ``lang``.

    Queries are stemmed in every language, so they match whatever ``lang`` was.
    """
    return " ".join(term for word in words(text) for term in word_terms(word, lang))


def stopword_set(extra: Iterable[str] = ()) -> frozenset[str]:
    """:data:`STOPWORDS` plus ``extra`` (a domain's), each also in folded form."""
    given = {w.casefold() for w in extra if w.strip()}
    return STOPWORDS | frozenset(given) | frozenset(fold(w) for w in given)


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def any_of(expressions: list[str]) -> str | None:
    """The OR of FTS5 expressions (each an OR of terms), duplicates removed; ``None`` if empty."""
    parts = dict.fromkeys(part for e in expressions for part in e.split(" OR ") if part)
    return " OR ".join(parts) if parts else None


def all_of(expressions: list[str]) -> str | None:
    """The AND of FTS5 expressions, each parenthesised; ``None`` if empty."""
    return " AND ".join(f"({e})" for e in expressions) if expressions else None


@dataclass(frozen=True)
class QueryWord:
    """The index terms one query word matches: exact terms and an optional prefix."""

    terms: frozenset[str]
    prefix: str | None
    word: str = ""
    """The case-folded word as the user typed it."""

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
        """An FTS5 ``MATCH`` expression (an OR of quoted terms), or ``None`` if empty.

        Every term is a quoted string of word characters only, so no user text
        (quotes, ``AND``, ``*``, parentheses, ``:``) can cause an FTS syntax error.
        """
        return any_of([word.expression() for word in self.words])

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
    """Parse user text into a :class:`Query`; stopwords are dropped unless nothing else is left.

    A word matches its folded form and stems, and, when its folded Hungarian stem has 4
    or more letters, as a prefix (``PREFIX_LENGTH`` at most), which joins inflected forms
    the stemmer keeps apart.
    """
    query_words = []
    for word in content_words(text, stopwords):
        prefix = stem(word, "hu")[:PREFIX_LENGTH]
        kept = prefix if len(prefix) >= MIN_PREFIX else None
        query_words.append(QueryWord(frozenset(word_terms(word)), kept, word))
    return Query(tuple(query_words))


def content_words(text: str, stopwords: frozenset[str] = STOPWORDS) -> list[str]:
    """The distinct case-folded words of ``text`` without ``stopwords``, unless none is left.

    A word is dropped when it or its folded form is in ``stopwords``; a text of
    stop words only keeps them all (a query "who is who" still searches).
    """
    found = list(dict.fromkeys(words(text)))
    content = [w for w in found if w not in stopwords and fold(w) not in stopwords]
    return content or found


def match_expression(text: str) -> str | None:
    """The FTS5 ``MATCH`` expression for user text (see :meth:`Query.expression`)."""
    return parse_query(text).expression()

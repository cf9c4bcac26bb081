"""Text analysis for keyword search: sentence splitting, folding, stemming, FTS5 queries.

Hungarian and English are stemmed with Snowball (``snowballstemmer``); every word
is indexed as its case- and diacritic-folded surface form plus its stem in the
document's language (both stems when the language is unknown). Query words are
stemmed in both languages, so a query matches whatever language it is in.
Queries additionally match the prefix of a word's Hungarian stem, which joins
inflected forms the stemmer leaves apart (``parkolás`` / ``parkolni`` / ``parkoló``).
"""

from __future__ import annotations

import re
import threading
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol, cast

import snowballstemmer

PREFIX_LENGTH = 6
"""Most characters of the prefix term a query word adds (``"parkol"*``)."""
MIN_PREFIX = 4
"""Fewest characters a prefix term may have."""

_WORD = re.compile(r"\w+")
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+(?=[\"'„(«]?[A-ZÁÉÍÓÖŐÚÜŰ0-9])")
_HEADING = re.compile(r"^\s*#{1,6}\s")
_MARKUP = re.compile(r"^\s*(?:#{1,6}\s+|[-*+]\s+|>\s*)|\*\*|__|`")

ABBREVIATIONS = frozenset(
    {
        # Hungarian
        "dr", "prof", "pl", "stb", "ill", "kb", "u", "ú", "krt", "tel", "sz", "em", "fszt",
        "ld", "vö", "ún", "vmint", "db", "kft", "zrt", "bt", "ifj", "özv",
        # English
        "mr", "mrs", "ms", "st", "vs", "etc", "e.g", "i.e", "approx", "dept", "bldg",
    }
)  # fmt: skip
"""Words after which a full stop does not end a sentence (compared case-folded)."""

STOPWORDS = frozenset(
    {
        # Hungarian
        "a", "az", "egy", "és", "is", "van", "vannak", "nincs", "hogy", "mi", "mit", "mikor",
        "hol", "hogyan", "melyik", "milyen", "ki", "kit", "meg", "el", "be", "fel", "le",
        "de", "vagy", "ha", "nem", "igen", "lehet", "kell", "ez", "azt", "ezt", "én", "te",
        "ön", "ott", "itt", "on", "en", "ban", "ben", "nál", "nél", "hoz", "kórház",
        "kórházban", "kórháznál", "kórházba",
        # English
        "the", "an", "and", "or", "are", "was", "to", "of", "in", "at",
        "for", "with", "what", "when", "where", "who", "how", "which", "do", "does", "i", "my",
        "me", "can", "it", "this", "that", "there", "hospital", "please",
    }
)  # fmt: skip
"""Words dropped from queries (unless a query has nothing else)."""

_local = threading.local()


class _Stemmer(Protocol):
    def stemWord(self, word: str) -> str: ...


def fold(text: str) -> str:
    """Lower-case ``text`` and strip its diacritics (``Kórház`` -> ``korhaz``)."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def words(text: str) -> list[str]:
    """The case-folded words of ``text`` (diacritics kept, for the stemmers)."""
    return _WORD.findall(text.casefold())


def _stemmers() -> tuple[_Stemmer, _Stemmer]:
    # Snowball stemmer objects keep state while stemming: one pair per thread.
    pair = cast("tuple[_Stemmer, _Stemmer] | None", getattr(_local, "stemmers", None))
    if pair is None:
        pair = (
            cast(_Stemmer, snowballstemmer.stemmer("hungarian")),
            cast(_Stemmer, snowballstemmer.stemmer("english")),
        )
        _local.stemmers = pair
    return pair


@lru_cache(maxsize=65536)
def word_terms(word: str, lang: str | None = None) -> tuple[str, ...]:
    """Index terms of one case-folded word: its folded form and folded stems.

    Args:
        word: A case-folded word.
        lang: ``"hu"`` or ``"en"`` stems with that language only; anything else
            (or ``None``) with both.
    """
    hungarian, english = _stemmers()
    terms = [fold(word)]
    if lang != "en":
        terms.append(fold(hungarian.stemWord(word)))
    if lang != "hu":
        terms.append(fold(english.stemWord(word)))
    return tuple(dict.fromkeys(t for t in terms if t))


def index_terms(text: str, lang: str | None = None) -> str:
    """The space-separated terms stored in the FTS5 index for ``text`` in language ``lang``.

    Queries are stemmed in both languages, so they match whatever ``lang`` was.
    """
    return " ".join(term for word in words(text) for term in word_terms(word, lang))


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


def parse_query(text: str) -> Query:
    """Parse user text into a :class:`Query`; stopwords are dropped unless nothing else is left.

    Each word matches its folded form and stems; a word whose folded Hungarian
    stem has at least 4 characters also matches as a prefix (at most
    ``PREFIX_LENGTH`` characters), which joins inflected forms the stemmer keeps apart.
    """
    hungarian, _ = _stemmers()
    found = list(dict.fromkeys(words(text)))
    content = [w for w in found if w not in STOPWORDS and fold(w) not in STOPWORDS]
    query_words = []
    for word in content or found:
        stem = fold(hungarian.stemWord(word))[:PREFIX_LENGTH]
        query_words.append(
            QueryWord(frozenset(word_terms(word)), stem if len(stem) >= MIN_PREFIX else None)
        )
    return Query(tuple(query_words))


def match_expression(text: str) -> str | None:
    """The FTS5 ``MATCH`` expression for user text (see :meth:`Query.expression`)."""
    return parse_query(text).expression()


def split_sentences(text: str) -> list[str]:
    """Split page text into sentences (markdown headings are not sentences)."""
    return [sentence for _, sentence in sections(text)]


def sections(text: str) -> list[tuple[str, str]]:
    """Split page text into ``(heading, sentence)`` pairs.

    Every non-empty line starts a new sentence; a markdown heading line is no
    sentence but the heading of the sentences after it. A full stop followed by
    an upper-case letter ends a sentence unless it follows a known abbreviation
    (``dr.``, ``pl.``, ``Mr.``).
    """
    pairs: list[tuple[str, str]] = []
    heading = ""
    for raw in text.splitlines():
        line = _MARKUP.sub("", raw).strip()
        if not line or line.startswith("<!--"):
            continue
        if _HEADING.match(raw):
            heading = line
            continue
        pending = ""
        for piece in _SENTENCE_END.split(line):
            pending = f"{pending} {piece}" if pending else piece
            last = pending.rsplit(None, 1)[-1].rstrip(".").casefold()
            if pending.endswith(".") and last in ABBREVIATIONS:
                continue
            pairs.append((heading, pending))
            pending = ""
        if pending:
            pairs.append((heading, pending))
    return pairs

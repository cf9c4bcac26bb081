"""The text kit: tokenising, folding, stemming (Hungarian, English) and sentence splitting.

One definition of *word*, *stem* and *sentence* for everything that reads text:
the keyword search (:mod:`toolweave.tools.search.text` builds its index terms
and FTS5 queries from these) and the offline model (:mod:`toolweave.llm.lexical`
and :mod:`toolweave.llm.offline_reading` match questions against tools and
passages with them). It sits in ``tools/`` because both layers can import it
(``state <- tools <- llm``) and it needs nothing above ``state``.

- A *word* is a run of letters and digits (no underscores), case-folded.
- *Folding* case-folds and strips diacritics (``Kórház`` -> ``korhaz``).
- A *stem* is Snowball's (``snowballstemmer``) in Hungarian or English, folded;
  with no language, :func:`stems` gives both.
- A *sentence* ends at ``.``, ``!``, ``?`` or ``…`` followed by white space and
  an upper-case letter or digit, except after a known abbreviation (``dr.``,
  ``pl.``, ``Mr.``); every non-empty line is a sentence of its own, and a
  markdown heading is no sentence but the heading of those after it.

No domain words live here: a domain passes its own (stop words, synonyms) as
configuration to the tools that use this kit.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from functools import lru_cache
from typing import Protocol, cast

import snowballstemmer

TOKEN = re.compile(r"[^\W_]+")
"""A word: a run of letters and digits (for surface forms; :func:`words` case-folds them)."""
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+(?=[\"'„(«]?[A-ZÁÉÍÓÖŐÚÜŰ0-9])")
_HEADING = re.compile(r"^\s*(#{1,6})\s+(.*)$")
_MARKUP = re.compile(r"^\s*(?:#{1,6}\s+|[-*+]\s+|>\s*|\d{1,3}\.\s+(?=\D))|\*\*|__|`")

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

LANGUAGES = ("hu", "en")
"""The languages the kit stems."""

_local = threading.local()


class _Stemmer(Protocol):
    def stemWord(self, word: str) -> str: ...


def fold(text: str) -> str:
    """Case-fold ``text`` and strip its diacritics (``Kórház`` -> ``korhaz``)."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def words(text: str) -> list[str]:
    """The case-folded words of ``text``, diacritics kept (what the stemmers read)."""
    return TOKEN.findall(text.casefold())


def _stemmers() -> dict[str, _Stemmer]:
    # Snowball stemmer objects keep state while stemming: one set per thread.
    found = cast("dict[str, _Stemmer] | None", getattr(_local, "stemmers", None))
    if found is None:
        found = {
            "hu": cast(_Stemmer, snowballstemmer.stemmer("hungarian")),
            "en": cast(_Stemmer, snowballstemmer.stemmer("english")),
        }
        _local.stemmers = found
    return found


@lru_cache(maxsize=65536)
def stem(word: str, lang: str) -> str:
    """The folded Snowball stem of one case-folded ``word`` in ``lang`` (``"hu"`` or ``"en"``).

    Raises:
        KeyError: ``lang`` is not one of :data:`LANGUAGES`.
    """
    return fold(_stemmers()[lang].stemWord(word))


@lru_cache(maxsize=65536)
def stems(word: str, lang: str | None = None) -> tuple[str, ...]:
    """The distinct folded stems of ``word``: in ``lang``, or in every language when ``None``."""
    langs = (lang,) if lang in LANGUAGES else LANGUAGES
    return tuple(dict.fromkeys(s for s in (stem(word, code) for code in langs) if s))


def line_sentences(line: str) -> list[str]:
    """The sentences of one line of plain text (abbreviations do not end one)."""
    found: list[str] = []
    pending = ""
    for piece in _SENTENCE_END.split(line):
        pending = f"{pending} {piece}" if pending else piece
        last = pending.rsplit(None, 1)[-1].rstrip(".").casefold() if pending.strip() else ""
        if pending.endswith(".") and last in ABBREVIATIONS:
            continue
        found.append(pending)
        pending = ""
    if pending:
        found.append(pending)
    return [sentence.strip() for sentence in found if sentence.strip()]


def heading(raw_line: str) -> tuple[int, str] | None:
    """``(level, text)`` when ``raw_line`` is a markdown heading (``## Parking``), else ``None``."""
    match = _HEADING.match(raw_line)
    return None if match is None else (len(match.group(1)), match.group(2).strip())


def strip_markup(raw_line: str) -> str:
    """A line without its list (``-``, ``1.``), quote or heading marker and emphasis/code marks."""
    return _MARKUP.sub("", raw_line).strip()


def sections(text: str) -> list[tuple[str, str]]:
    """Split page text into ``(heading, sentence)`` pairs.

    Every non-empty line starts a new sentence; a markdown heading line is no
    sentence but the heading of the sentences after it; HTML comments
    (``<!-- page -->``) are skipped.
    """
    pairs: list[tuple[str, str]] = []
    current = ""
    for raw in text.splitlines():
        line = strip_markup(raw)
        if not line or line.startswith("<!--"):
            continue
        if heading(raw) is not None:
            current = line
            continue
        pairs += [(current, sentence) for sentence in line_sentences(line)]
    return pairs


def split_sentences(text: str) -> list[str]:
    """Split page text into sentences (markdown headings are not sentences)."""
    return [sentence for _, sentence in sections(text)]


__all__ = [
    "ABBREVIATIONS",
    "LANGUAGES",
    "TOKEN",
    "fold",
    "heading",
    "line_sentences",
    "sections",
    "split_sentences",
    "stem",
    "stems",
    "strip_markup",
    "words",
]

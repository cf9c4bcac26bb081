"""The language detector for short chat messages: Hungarian or English (T10), written once.

Every caller reads one :class:`LanguageGuess`: the platform's normalization
cross-checks a model's language tag against its *confident* verdict
(``graph/normalized.py``: small models tag nearly everything with the domain's
language), and the offline model answers in its *leaning*
(:meth:`LanguageGuess.leaning`, through :func:`toolweave.llm.lexical.detect_language`).

The evidence is words that say nothing about the topic (so names and domain
words do not sway it): the text kit's stop words of one language only
(:data:`toolweave.tools.text.STOPWORDS_HU`, ``STOPWORDS_EN``) and a few more cue
words, weekday names, and Hungarian's letters: ``ő``/``ű`` exist in no other
major language, the other accented vowels count once per message, since a
Hungarian name (Kovács) may stand in an English sentence; so do ``ő``/``ű`` in a
capitalised word after the first, a name ("When are Dr. Dóra Szűcs's office
hours?"). A verdict is
*confident* with at least ``MIN_EVIDENCE`` points on the winning side and at
least twice the other's, or when the message is one greeting of one language
(``"hello"``, ``"thanks"``, ``"szia"``; :data:`toolweave.tools.text.GREETINGS_EN`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from toolweave.tools.text import (
    GREETINGS_EN,
    GREETINGS_HU,
    STOPWORDS_EN,
    STOPWORDS_HU,
    TOKEN,
    fold,
    words,
)

MIN_EVIDENCE = 2

HUNGARIAN_CUES = frozenset(
    {
        "ban", "ben", "együtt", "holnap", "hova", "hányadik", "hétfőn", "hétvégén", "igen", "is",
        "kinek", "kérek", "lehetséges", "ma", "meddig", "mennyibe", "mikortól", "mindig",
        "nál", "nél", "pénteken", "ra", "re", "soha", "szabad", "szedhetek", "szedhetem", "ön",
    }
)  # fmt: skip
"""Hungarian words that tell the language but are no Hungarian-only stop words ("is": also)."""
ENGLISH_CUES = frozenset(
    {
        "is", "many", "may", "much", "must", "number", "open", "take", "today", "together",
        "tomorrow", "weekend",
    }
)  # fmt: skip
"""English words that tell the language but are no English-only stop words ("is": also)."""

HUNGARIAN_WORDS = (STOPWORDS_HU - STOPWORDS_EN) | HUNGARIAN_CUES
"""Hungarian words that say nothing about the topic (all but "is" no English words)."""
ENGLISH_WORDS = (STOPWORDS_EN - STOPWORDS_HU) | ENGLISH_CUES
"""English words that say nothing about the topic (all but "is" no Hungarian words)."""

WEEKDAY_PREFIXES = (
    ("monday", "hetfo"),
    ("tuesday", "kedd"),
    ("wednesday", "szerd"),
    ("thursday", "thurs", "csutortok"),
    ("friday", "pentek"),
    ("saturday", "szombat"),
    ("sunday", "vasarnap"),
)
"""Folded prefixes of each weekday's names, Monday first; the last one is Hungarian."""
WEEKDAYS_EN = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")

_HUNGARIAN_DAYS = tuple(prefixes[-1] for prefixes in WEEKDAY_PREFIXES)
_HUNGARIAN_ONLY = re.compile(r"[őűŐŰ]")
_ACCENTED = re.compile(r"[áéíóöúüÁÉÍÓÖÚÜ]")


@dataclass(frozen=True)
class LanguageGuess:
    """The detector's verdict: a language code, or ``None`` when it cannot tell."""

    lang: str | None
    hungarian: int
    """Points for Hungarian."""
    english: int
    """Points for English."""

    @property
    def confident(self) -> bool:
        """Whether the verdict is strong enough to override a model's tag."""
        return self.lang is not None

    def leaning(self, default: str) -> str:
        """The language with more points, however few; ``default`` on a tie."""
        if self.hungarian > self.english:
            return "hu"
        if self.english > self.hungarian:
            return "en"
        return default


def _points(found: list[str], text: str) -> tuple[int, int]:
    hungarian = sum(1 for w in found if w in HUNGARIAN_WORDS)
    hungarian += sum(
        1 for w in found if w not in HUNGARIAN_WORDS and fold(w).startswith(_HUNGARIAN_DAYS)
    )
    english = sum(1 for w in found if w in ENGLISH_WORDS or w in WEEKDAYS_EN)
    tokens = TOKEN.findall(text)  # as written: a capital marks a name
    written = [t for i, t in enumerate(tokens) if i == 0 or not t[:1].isupper()]
    hungarian += 2 * sum(len(_HUNGARIAN_ONLY.findall(t)) for t in written)
    hungarian += 1 if _ACCENTED.search(text) or _HUNGARIAN_ONLY.search(text) else 0
    return hungarian, english


def detect_language(text: str) -> LanguageGuess:
    """Guess whether ``text`` is Hungarian or English (see the module docstring)."""
    found = words(text)
    hungarian, english = _points(found, text)
    greeting = len(found) == 1 and found[0] in GREETINGS_EN | GREETINGS_HU
    needed = 1 if greeting else MIN_EVIDENCE
    lang: str | None = None
    if hungarian >= needed and hungarian >= 2 * english:
        lang = "hu"
    elif english >= needed and english >= 2 * hungarian:
        lang = "en"
    return LanguageGuess(lang, hungarian, english)

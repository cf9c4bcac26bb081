"""A deterministic language detector for short chat messages: Hungarian or English (T10).

A model's language tag is cross-checked against it (``graph/normalized.py``):
small models tag nearly everything with the domain's language. The evidence is
function words (which carry no topic, so names and domain words do not sway it)
and Hungarian's letters: ``ő``/``ű`` exist in no other major language, the other
accented vowels count once per message, since a Hungarian name (Kovács) may stand
in an English sentence. A verdict is *confident* only with at least
``MIN_EVIDENCE`` points on the winning side and at least twice the other's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from toolweave.tools.search.text import words

MIN_EVIDENCE = 2

HUNGARIAN_WORDS = frozenset(
    {
        "az", "egy", "és", "hogy", "nem", "igen", "van", "vannak", "nincs", "volt", "lesz",
        "mi", "mit", "mikor", "hol", "hová", "hova", "honnan", "hogyan", "miért", "melyik",
        "milyen", "mennyi", "mennyibe", "hány", "hányadik", "ki", "kit", "kinek", "kell",
        "lehet", "szabad", "tudok", "tudom", "tud", "meg", "is", "vagy", "de", "ha", "már",
        "még", "csak", "itt", "ott", "ez", "ezt", "azt", "én", "ön", "nekem", "kérem",
        "kérek", "szeretnék", "köszönöm", "szia", "jó", "napot", "mert", "mellett", "együtt",
        "után", "előtt", "alatt", "között", "nál", "nél", "ban", "ben", "ra", "re", "se",
        "sem", "mindig", "soha", "holnap", "ma", "hétvégén", "hétfőn", "pénteken", "szedhetek",
        "szedhetem", "lehetséges", "mikortól", "meddig", "akkor", "pedig", "ahol",
    }
)  # fmt: skip
"""Hungarian words that say nothing about the topic (and are no English words)."""

ENGLISH_WORDS = frozenset(
    {
        "the", "is", "are", "was", "were", "be", "been", "what", "when", "where", "who",
        "whom", "why", "how", "which", "can", "could", "should", "would", "will", "may",
        "must", "do", "does", "did", "i", "my", "me", "you", "your", "we", "our", "it", "its",
        "there", "this", "that", "these", "those", "of", "to", "in", "on", "at", "for",
        "with", "from", "by", "and", "or", "not", "an", "any", "some", "have", "has", "if",
        "please", "thanks", "hello", "hi", "much", "many", "open", "take", "get", "need",
        "about", "together", "after", "before", "tomorrow", "today", "weekend", "number",
    }
)  # fmt: skip
"""English words that say nothing about the topic (and are no Hungarian words)."""

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


def detect_language(text: str) -> LanguageGuess:
    """Guess whether ``text`` is Hungarian or English (see the module docstring)."""
    found = words(text)
    hungarian = sum(1 for w in found if w in HUNGARIAN_WORDS)
    english = sum(1 for w in found if w in ENGLISH_WORDS)
    hungarian += 2 * len(_HUNGARIAN_ONLY.findall(text)) + (1 if _ACCENTED.search(text) else 0)
    lang: str | None = None
    if hungarian >= MIN_EVIDENCE and hungarian >= 2 * english:
        lang = "hu"
    elif english >= MIN_EVIDENCE and english >= 2 * hungarian:
        lang = "en"
    return LanguageGuess(lang, hungarian, english)


__all__ = ["ENGLISH_WORDS", "HUNGARIAN_WORDS", "LanguageGuess", "detect_language"]

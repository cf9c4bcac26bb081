"""The language detector for short chat messages: Hungarian, English or Polish (T10).

A message mostly in another language (German, French, Spanish, Italian, Dutch,
Portuguese: their most frequent function words) is that language, not Hungarian or
Polish for a shared accent or a word like "im": its code (``"de"``...) reaches the
prompts ("answer in German") and a domain's own phrases, and the library's own texts
fall back to English.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

from toolweave.tools.memo import per_step
from toolweave.tools.text import (
    GREETINGS_EN,
    GREETINGS_HU,
    GREETINGS_PL,
    LANGUAGES,
    STOPWORDS_EN,
    STOPWORDS_HU,
    STOPWORDS_PL,
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

POLISH_CUES = frozenset(
    {
        "dobry", "dzień", "dzisiaj", "dziś", "jutro", "kosztuje", "mają", "nigdy", "poniedziałek",
        "razem", "sobota", "sobotę", "środa", "środę", "teraz", "trwa", "trwają", "wczoraj",
        "wtorek", "czwartek", "piątek", "niedziela", "niedzielę", "zawsze",
    }
)  # fmt: skip
"""Polish words that tell the language but are no Polish stop words (weekdays, "trwa")."""
_OTHER_LANGUAGES = {
    "de": "der die das den dem des ein eine einen einem einer und ist sind nicht mit für "
    "auf ich sie wir ihr mir mich mein meine meinen wie wann wo was warum wer bitte gibt es "
    "auch noch nach bei aus zum zur vom kann können muss habe haben hat wird werden ins "
    "über schon oder aber dass sich möchte möchten brauche",
    "fr": "le la les un une des du et est sont pas avec pour sur je vous nous mon ma mes "
    "comment quand où quoi pourquoi qui peux dois ai avez au aux ce cette dans il elle "
    "mais ou voudrais",
    "es": "el la los las un una unos y es son con para por sobre yo usted nosotros mi mis "
    "cómo cuándo dónde qué quién puedo tengo hay del al este esta pero quiero necesito",
    "it": "il lo la gli le un una è sono non con per su io lei noi mio mia come quando "
    "dove cosa perché chi posso ho del della al ma vorrei",
    "nl": "de het een en zijn niet met voor op ik wij mijn hoe wanneer waar wat waarom "
    "wie kan moet heb hebben er van naar bij wil",
    "pt": "os as um uma é são não com para por sobre eu você nós meu minha como quando "
    "onde que porque quem posso tenho há do da no na quero",
}  # fmt: skip

POLISH_SHARED = frozenset({"co", "o", "u", "na", "ta", "ty"})
"""Polish stop words written in English or Hungarian text too ("Co.", "o'clock", "u.", "N/A",
"ty"), so they tell nothing."""

HUNGARIAN_WORDS = (STOPWORDS_HU - STOPWORDS_EN) | HUNGARIAN_CUES
"""Hungarian words that say nothing about the topic (all but "is" no English words)."""
ENGLISH_WORDS = (STOPWORDS_EN - STOPWORDS_HU) | ENGLISH_CUES
"""English words that say nothing about the topic (all but "is" no Hungarian words)."""
POLISH_WORDS = (
    STOPWORDS_PL - STOPWORDS_EN - STOPWORDS_HU - HUNGARIAN_CUES - ENGLISH_CUES - POLISH_SHARED
) | POLISH_CUES
"""Polish words that say nothing about the topic, none of them a Hungarian or English one."""

OTHER_LANGUAGE_WORDS = {
    code: frozenset(listed.split())
    - STOPWORDS_EN
    - STOPWORDS_HU
    - STOPWORDS_PL
    - HUNGARIAN_WORDS
    - ENGLISH_WORDS
    - POLISH_WORDS
    for code, listed in _OTHER_LANGUAGES.items()
}
"""Per language without a kit of its own, its function words that no kit's stop words share."""
_OTHER_WRITTEN = {code: frozenset(listed.split()) for code, listed in _OTHER_LANGUAGES.items()}
"""Per language without a kit of its own, all its listed function words, kit words too."""

WEEKDAY_PREFIXES = (
    ("monday", "poniedzial", "hetfo"),
    ("tuesday", "wtorek", "wtorku", "wtorki", "kedd"),
    ("wednesday", "sroda", "srode", "srody", "srodzie", "szerd"),
    ("thursday", "thurs", "czwartek", "czwartku", "czwartki", "csutortok"),
    ("friday", "piatek", "piatku", "piatki", "pentek"),
    ("saturday", "sobot", "szombat"),
    ("sunday", "niedziel", "vasarnap"),
)
"""Folded prefixes of each weekday's names (English, Polish, Hungarian), Monday first; the
last one is Hungarian. Polish forms are listed whole where a stem begins another word
("środek", "piąty", "czwarty", "wtórny").
"""
NOT_WEEKDAYS = ("srodek",)
"""Folded words a weekday's prefix begins that name no day ("środek", a means)."""
WEEKDAYS_EN = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")

_HUNGARIAN_DAYS = tuple(prefixes[-1] for prefixes in WEEKDAY_PREFIXES)
_HUNGARIAN_ONLY = re.compile(r"[őűŐŰ]")
_ACCENTED = re.compile(r"[áéíöúüÁÉÍÖÚÜőűŐŰ]")
_POLISH_ONLY = re.compile(r"[ąćęłńśźżĄĆĘŁŃŚŹŻ]")
_SHARED_ACCENT = re.compile(r"[óÓ]")


@dataclass(frozen=True)
class LanguageGuess:
    """The detector's verdict: a language code, or ``None`` when it cannot tell."""

    lang: str | None
    hungarian: int
    english: int
    polish: int = 0
    others: tuple[tuple[str, int], ...] = ()
    """Points of the languages without a kit of their own (``("de", 3)``), those above 0."""

    @property
    def points(self) -> dict[str, int]:
        """Points per language code."""
        return {"hu": self.hungarian, "en": self.english, "pl": self.polish, **dict(self.others)}

    def leaning(self, default: str) -> str:
        """The language with the most points, however few; ``default`` on a tie."""
        ranked = sorted(self.points.values(), reverse=True)
        if ranked[0] == ranked[1]:
            return default
        return max(self.points, key=self.points.__getitem__)


def _written(text: str) -> list[str]:
    """The words as written, but capitalised ones after the first (a capital marks a name)."""
    tokens = TOKEN.findall(text)
    return [t for i, t in enumerate(tokens) if i == 0 or not t[:1].isupper()]


def _hungarian(found: list[str], written: list[str]) -> int:
    points = sum(1 for w in found if w in HUNGARIAN_WORDS)
    points += sum(
        1 for w in found if w not in HUNGARIAN_WORDS and fold(w).startswith(_HUNGARIAN_DAYS)
    )
    return points + 2 * sum(len(_HUNGARIAN_ONLY.findall(t)) for t in written)


def _polish(found: list[str], written: list[str]) -> int:
    points = sum(1 for w in found if w in POLISH_WORDS)
    return points + 2 * sum(1 for t in written if _POLISH_ONLY.search(t))


def _points(found: list[str], text: str, *, accents: bool = True) -> tuple[int, int, int]:
    """The kit languages' points.

    ``accents=False``: letters other languages write too (``á é ó ü``) count for none;
    only ``ő ű`` and the Polish letters do.
    """
    written = _written(text)
    hungarian = _hungarian(found, written)
    english = sum(1 for w in found if w in ENGLISH_WORDS or w in WEEKDAYS_EN)
    polish = _polish(found, written) + (1 if _POLISH_ONLY.search(text) else 0)
    shared = accents and _SHARED_ACCENT.search(text) is not None
    if (accents and _ACCENTED.search(text)) or (shared and not polish):
        hungarian += 1
    if shared and polish:
        polish += 1  # "próbny" beside other Polish evidence
    return hungarian, english, polish


def _verdict(points: dict[str, int], needed: int) -> str | None:
    """The language with ``needed`` points or more and at least twice each other's."""
    for lang, own in points.items():
        others = [p for code, p in points.items() if code != lang]
        if own >= needed and all(own >= 2 * p for p in others):
            return lang
    return None


def _beside_others(
    found: list[str], text: str, others: tuple[tuple[str, int], ...], own: OwnLanguage | None
) -> dict[str, int]:
    """Every language's points, where another language has evidence, without what it shares.

    A word that language writes too ("de": Hungarian "but", Spanish "of") and an accent it
    writes too ("pádel") are then evidence for no kit language: "Quiero reservar una pista
    de pádel." is Spanish, not Hungarian for its "de" and "á". The domain's own language
    writes its function words (``own``) too.
    """
    theirs = frozenset().union(
        *(_OTHER_WRITTEN.get(code, frozenset()) for code, _ in others),
        own.words if own is not None and own.lang in dict(others) else frozenset(),
    )
    own_found = [word for word in found if word not in theirs]
    return dict(LanguageGuess(None, *_points(own_found, text, accents=False), others).points)


@dataclass(frozen=True)
class OwnLanguage:
    """A domain's language that no kit knows, and the function words the domain names for it.

    A domain writes its language's function words as its store's ``stopwords=`` (the guide
    asks it to); the detector takes them as evidence for that language (T10, N1), as it
    takes :data:`OTHER_LANGUAGE_WORDS`, so a message mostly in them is the domain's
    language, not a kit language for a shared word ("a", "de") or an accent.
    """

    lang: str
    words: frozenset[str]


def own_language(default_language: str, stopwords: Iterable[str]) -> OwnLanguage | None:
    """The domain's :class:`OwnLanguage`, or ``None`` for a kit language or no stop words."""
    if default_language in LANGUAGES:
        return None
    named = frozenset(word.lower() for text in stopwords for word in TOKEN.findall(text))
    return OwnLanguage(default_language, named) if named else None


def _other_points(found: list[str], own: OwnLanguage | None) -> tuple[tuple[str, int], ...]:
    """The points of each language without a kit, the domain's own one with its words."""
    listed = dict(OTHER_LANGUAGE_WORDS)
    if own is not None:
        listed[own.lang] = listed.get(own.lang, frozenset()) | own.words
    return tuple(
        (code, points)
        for code, words_of in listed.items()
        if (points := sum(1 for w in found if w in words_of))
    )


@per_step
def detect_language(text: str, own: OwnLanguage | None = None) -> LanguageGuess:
    """Guess whether ``text`` is Hungarian, English or Polish (see the module docstring).

    ``own``: the domain's language the kit does not know, with its function words.
    """
    found = words(text)
    hungarian, english, polish = _points(found, text)
    greeting = len(found) == 1 and found[0] in GREETINGS_EN | GREETINGS_HU | GREETINGS_PL
    needed = 1 if greeting else MIN_EVIDENCE
    others = _other_points(found, own)
    guess = LanguageGuess(None, hungarian, english, polish, others)
    kit = _verdict(LanguageGuess(None, hungarian, english, polish).points, needed)
    if not others:
        return replace(guess, lang=kit)
    other = _verdict(_beside_others(found, text, others, own), needed)  # where it dominates all
    # else a kit's language as before: "Rue de la Paix"
    return replace(guess, lang=other if other in dict(others) else kit)

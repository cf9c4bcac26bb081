"""Lexical matching for the offline assistant: stopwords, word matching, language (hu, en).

Words, folding and stems are the text kit's (:mod:`toolweave.tools.text`), the
same the keyword search indexes with; this module adds what the offline model
needs on top: stopword lists, "same word" matching (:func:`related`), weekday
names in both languages and a language guess.
"""

from __future__ import annotations

from functools import lru_cache

from toolweave.tools import text as kit


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


EN_STOPWORDS = _wordset(
    """a about above after again all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers him his how i if in into is it its
    just me more most my no nor not now of off on once only or other our out over own same
    she should so some such than that the their them then there these they this those
    through to too under until up very was we were what when where which while who whom
    why will with would you your yours please tell know want like need get let thanks
    thank hello hi hey ok okay yes there's what's is there any"""
)
HU_STOPWORDS = _wordset(
    """a az egy és vagy de hogy is nem van vannak volt lesz lenne mi mit mik mikor hol
    hová honnan hogyan milyen melyik ki kik kit miért mennyi hány hányan meg már még csak
    ez ezt ennek ezek azt annak azok itt ott én te ő ti ők nekem neked nekünk kell lehet
    tud tudok tudom tudna szeretnék szeretném szeretne kérem kérlek kérdés alatt után előtt
    mellett között szerint felé pedig ha akkor mert sem se minden valami lenne legyen
    vagyok helyzet rendben köszönöm köszi szia helló hello jó napot van-e vajon ill illetve
    azaz mint mind ami amely amelyik aki ahol amikor ahogy nincs nincsenek egyéb arra erre
    rá neki velem vele ezzel azzal abban ebben arról erről mert más menni mennem megyek
    mehetek jönni jönnöm jövök"""
)
ROUTING_STOPWORDS = _wordset(
    """true false user users asks ask asking question questions tool answer answers whether
    wants information info about mentions mention message text request requests
    igaz hamis felhasználó kérdez kérdezi kérdése eszköz információ"""
)
"""Words of routing questions that say nothing about the subject."""
GREETINGS = _wordset("hello hi hey thanks thank szia helló hello köszönöm köszi jó napot üdv")
QUESTION_WORDS = _wordset(
    """what when where which who whom why how whose mi mit mikor hol hová honnan hogyan
    milyen melyik ki kik kit miért mennyi hány"""
)
FOLLOWUP_OPENERS = (
    "and what about",
    "what about",
    "how about",
    "and",
    "also",
    "és mi a helyzet",
    "mi a helyzet",
    "és mi van",
    "és",
    "meg",
    "illetve",
)

WEEKDAYS_EN = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
WEEKDAYS_HU = ("hétfő", "kedd", "szerda", "csütörtök", "péntek", "szombat", "vasárnap")
_WEEKDAY_PREFIXES = (
    ("monday", "hetfo"),
    ("tuesday", "kedd"),
    ("wednesday", "szerd"),
    ("thursday", "thurs", "csutortok"),
    ("friday", "pentek"),
    ("saturday", "szombat"),
    ("sunday", "vasarnap"),
)


def fold(text: str) -> str:
    """Case-fold ``text`` and strip accents: ``"Kardiológián"`` → ``"kardiologian"`` (the kit's)."""
    return kit.fold(text)


def words(text: str) -> list[str]:
    """The case-folded words of ``text``, accents kept (the kit's)."""
    return kit.words(text)


def is_stopword(word: str) -> bool:
    """Whether ``word`` is a stopword in English or Hungarian."""
    lowered = word.lower()
    return lowered in EN_STOPWORDS or lowered in HU_STOPWORDS


def content_words(text: str) -> list[str]:
    """Words that carry meaning: no stopwords of either language; numbers kept; unique."""
    seen: dict[str, None] = {}
    for word in words(text):
        if word.isdigit() or (len(word) > 1 and not is_stopword(word)):
            seen.setdefault(word, None)
    return list(seen)


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The word's stem: the kit's Hungarian Snowball stem, then its English one (both folded).

    The offline model reads questions whose language it does not know yet, so a
    word is stemmed in both languages in turn (``"kardiológián"`` -> ``"kardiologia"``,
    ``"parking"`` -> ``"park"``). Numbers stay as they are.
    """
    token = word.casefold()
    if token.isdigit():
        return token
    hungarian = kit.stem(token, "hu")
    return kit.stem(hungarian, "en") or hungarian


@lru_cache(maxsize=1 << 18)
def related(a: str, b: str) -> bool:
    """Whether two words look like forms of one word.

    Same stem (:func:`stem`, or the kit's stem in one language for both words:
    ``"parked"``/``"parking"`` in English), or a long common prefix of their stems.
    """
    sa, sb = stem(a), stem(b)
    if sa == sb or not set(kit.stems(a.casefold())).isdisjoint(kit.stems(b.casefold())):
        return True
    common = 0
    for x, y in zip(sa, sb, strict=False):
        if x != y:
            break
        common += 1
    return common >= 4 and common >= min(len(sa), len(sb)) - 1


@lru_cache(maxsize=1 << 18)
def matches(a: str, b: str) -> bool:
    """:func:`related`, or the same weekday in either language (``"friday"``/``"péntek"``)."""
    day = weekday(a)
    if day is not None and day == weekday(b):
        return True
    return related(a, b)


@lru_cache(maxsize=65536)
def weekday(word: str) -> int | None:
    """0 (Monday) to 6 (Sunday) when ``word`` is a weekday name in English or Hungarian."""
    token = fold(word)
    for index, prefixes in enumerate(_WEEKDAY_PREFIXES):
        if any(token.startswith(p) for p in prefixes):
            return index
    return None


def detect_language(text: str, default: str = "en") -> str:
    """``"hu"`` or ``"en"`` by stopwords, weekday names and Hungarian letters; else ``default``."""
    tokens = words(text)
    lowered = text.lower()
    hu = sum(t in _HU_ONLY for t in tokens) + 2 * sum(ch in "őű" for ch in lowered)
    hu += sum(ch in "áéíóöüú" for ch in lowered) // 2
    hu += sum(fold(t).startswith(_HU_WEEKDAYS) for t in tokens)
    en = sum(t in _EN_ONLY or t in WEEKDAYS_EN for t in tokens)
    if hu > en:
        return "hu"
    if en > hu:
        return "en"
    return default


_HU_ONLY = HU_STOPWORDS - EN_STOPWORDS
_EN_ONLY = EN_STOPWORDS - HU_STOPWORDS
_HU_WEEKDAYS = tuple(prefixes[-1] for prefixes in _WEEKDAY_PREFIXES)


__all__ = [
    "FOLLOWUP_OPENERS",
    "GREETINGS",
    "QUESTION_WORDS",
    "ROUTING_STOPWORDS",
    "content_words",
    "detect_language",
    "fold",
    "is_stopword",
    "matches",
    "related",
    "stem",
    "weekday",
    "words",
]

"""Lexical matching for the offline assistant: content words, word matching, language."""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Sequence
from functools import lru_cache

from toolweave.tools import text as kit
from toolweave.tools.language import NOT_WEEKDAYS, WEEKDAY_PREFIXES
from toolweave.tools.language import detect_language as guess_language
from toolweave.tools.memo import per_step
from toolweave.tools.text import fold as fold
from toolweave.tools.text import words as words


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


ROUTING_STOPWORDS = _wordset(
    """true false user users asks ask asking question questions tool answer answers whether
    wants information info about mentions mention message text request requests
    igaz hamis felhasználó kérdez kérdezi kérdése eszköz információ
    prawda fałsz użytkownik użytkownika pyta pytanie pytania narzędzie odpowiedź
    informacja informacje informacji"""
)
"""Words of routing questions that say nothing about the subject (en, hu, pl)."""
GREETINGS = kit.GREETINGS_EN | kit.GREETINGS_HU | kit.GREETINGS_PL
GENERIC_WORDS = _wordset(
    """free new old good bad best better big small large little long short high low full
    next last first second third other another same different right wrong real sure
    possible available nearest closest near cheap cheapest quick fast soon late early
    get give make take put bring keep let find show look see try use come go help like
    need want wish would please tell say know think mean work something someone somebody
    anything anyone everyone everything nothing thing things stuff people person way kind
    lot part piece time times year years month week day days today tomorrow yesterday
    tonight morning afternoon evening night still again already ever always never really
    actually current currently one two three four five six seven ten hundred many much
    few more most less enough exist exists happen become seem recommend suggest
    szabad új régi jó rossz legjobb nagy kicsi kis hosszú rövid magas alacsony teljes
    következő utolsó első második harmadik más másik ugyanaz különböző legközelebbi közeli
    olcsó legolcsóbb gyors gyorsan hamar késő korán ad adj vesz vegyél kap kapok hoz hozz
    visz tart tesz csinál néz mutat mutasd keres keresek talál segít segíts akar szeretne
    kér kérek kérem mond mondd gondol valami valaki valamit valakit bármi bárki mindenki
    minden semmi dolog dolgot ember emberek mód fajta rész idő időt ideje idén év hónap hét
    ma holnap tegnap ma este reggel délután éjjel éjszaka megint újra mindig soha tényleg jelenleg
    kettő két három négy öt hat hét tíz száz sok kevés több legtöbb kevesebb elég létezik
    történik ajánl ajánlj javasol
    nowy nowa nowe nowego nowej nowym stary stara stare dobry dobra dobre dobrze zły
    duży duża duże mały mała małe długi długo krótki wysoki niski pełny następny następna
    następne ostatni ostatnia ostatnie pierwszy pierwsza pierwsze drugi druga drugie
    trzeci inny inna inne innego taki taka takie sam sama samo różny prawdziwy pewny
    możliwy możliwe dostępny dostępne najbliższy najbliższa blisko tani tanio najtańszy
    szybki szybko wkrótce późno wcześnie dostać dostanę dać daj wziąć wezmę brać zrobić
    robić pokazać pokaż zobaczyć szukać szukam znaleźć znajdę pomóc pomóż chcieć
    potrzeba trzeba powiedzieć powiedz wiedzieć wiem myśleć znaczy używać użyć polecić
    praca pracy pracę pracą
    zaproponować istnieje coś ktoś cokolwiek ktokolwiek każdy wszyscy wszystko nic nikt
    rzecz rzeczy sprawa sprawy ludzie osoba osoby sposób rodzaj część czas czasu raz razy
    rok roku lata lat latach miesiąc miesiąca miesięcy tydzień tygodnia tygodni dzień dnia
    dni dzisiaj dziś jutro wczoraj wieczorem rano noc nocy wciąż nadal znowu ponownie
    zawsze nigdy naprawdę obecnie teraz jeden jedna jedno dwa dwie trzy cztery pięć sześć
    siedem dziesięć sto wiele dużo mało więcej najwięcej mniej wystarczy"""
)
"""Words saying how, when, how much or who, not what about: one alone is no evidence."""
ANSWER_WORDS = _wordset("yes no igen nem tak nie")
"""Words that answer a yes-or-no question when an answer opens with them."""
QUESTION_WORDS = kit.QUESTION_FORMS_HU | _wordset(
    """what when where which who whom why how whose mi mit mikor hol hová honnan hogyan
    milyen melyik ki kik kit miért mennyi hány
    co czego czym kto kogo komu kiedy gdzie dokąd skąd jak jaki jaka jakie jakiego
    jakiej jakim jakich który która które którego której których ile ilu dlaczego czemu
    czyj czyja czyje"""
)
FOLLOWUP_OPENERS = (
    "and what about", "what about", "how about", "and", "also", "és mi a helyzet", "mi a helyzet",
    "és mi van", "és", "meg", "illetve", "a co z", "a jak z", "oraz",
)  # fmt: skip
QUESTION_CONJUNCTIONS = frozenset(["a", "i"])
"""Polish "and", an opener only before a question word ("A gdzie?"): elsewhere "a" is the
English or Hungarian article and "i" the English pronoun."""
QUESTION_OPENERS = frozenset(fold(w) for w in QUESTION_WORDS)
"""The question words, folded: a message opening with one asks something."""


@lru_cache(maxsize=65536)
def is_generic(word: str) -> bool:
    """Whether ``word`` is a form of one of :data:`GENERIC_WORDS`.

    The same folded stem, or a Polish form of one (:func:`polish_forms`: "robi" of "robić").
    """
    if fold(word) in _GENERIC_FOLDED or stem(word) in _GENERIC_STEMS:
        return True
    alike = _GENERIC_CORES.get(kit.polish_core(word.casefold()), ())
    return any(polish_forms(word, generic) for generic in alike)


def holds_run(said: Sequence[str], run: Sequence[str]) -> bool:
    """Whether ``run`` (not empty) occurs in ``said`` as consecutive items."""
    size = len(run)
    return size > 0 and any(said[i : i + size] == run for i in range(len(said) - size + 1))


def is_stopword(word: str) -> bool:
    """Whether ``word`` is one of the text kit's stop words, also typed without its accents.

    "sie" is "się", "hany" is "hány": a word of plain letters is a stop word when a stop word
    folds to it (a word written with its accents is read as written).
    """
    token = word.lower()
    return token in kit.STOPWORDS or (token.isascii() and token in _FOLDED_STOPWORDS)


@per_step
def content_words(text: str) -> list[str]:
    """Words that carry meaning: no stopwords of either language; numbers kept; unique."""
    kept = (w for w in words(text) if w.isdigit() or (len(w) > 1 and not is_stopword(w)))
    return list(dict.fromkeys(kept))


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The word's Hungarian, then English Snowball stem (folded): the language is not known yet."""
    token = word.casefold()
    if token.isdigit():
        return token
    hungarian = kit.stem(token, "hu")
    return kit.stem(hungarian, "en") or hungarian


MIN_STEM = 4
"""Shorter stems are no evidence alone: two stemmers in turn cut unrelated words alike."""
SHORT_STEM = 3
"""Letters a stem shorter than :data:`MIN_STEM` needs to join two longer words of one language."""


@lru_cache(maxsize=1 << 18)
def related(a: str, b: str) -> bool:
    """Whether two words look like forms of one word.

    Same stem (:func:`stem`, or one language's for both), one stem beginning the other, or one
    letter apart after over :data:`MIN_STEM` letters; shorter shared stems count only guarded.
    """
    sa, sb = stem(a), stem(b)
    single = set(kit.stems(a.casefold())) & set(kit.stems(b.casefold()))
    shared = single | ({sa} if sa == sb else set())
    if any(len(s) >= MIN_STEM for s in shared):
        return True
    if shared:
        short, long = sorted((fold(a), fold(b)), key=len)
        if long.startswith(short) and (len(short) >= MIN_STEM or short in single):
            return True
        if max(map(len, single), default=0) >= SHORT_STEM and min(len(a), len(b)) > MIN_STEM:
            return True  # two inflected forms of one short stem: "egyek"/"egyen" (eszik)
    if compound_tail(a, b) or compound_tail(b, a) or one_verb(a, b):
        return True
    if dropped_vowel(fold(a), fold(b)) or dropped_vowel(fold(b), fold(a)):
        return True
    common = len(os.path.commonprefix([sa, sb]))  # noqa: RUF071 - letters, not paths
    if common == min(len(sa), len(sb)):  # one stem begins the other
        return common >= MIN_STEM
    return common > MIN_STEM and common >= min(len(sa), len(sb)) - 1  # one letter differs


_VOWELS = frozenset("aeiouy")
UNSTABLE_AT = 5
"""Letters before a stem's unstable vowel at least, so short words never join this way."""


def dropped_vowel(a: str, b: str) -> bool:
    """Whether folded ``b`` is a form of ``a`` whose stem drops a vowel of ``a`` (Hungarian).

    "dohányoz|ni" and "dohányz|ás", "kórterem" and "kórtermek": the words part at a vowel
    of ``a`` past :data:`UNSTABLE_AT` letters, and without it ``a`` goes on as ``b`` does
    (its next letter, a consonant, is ``b``'s).
    """
    at = len(os.path.commonprefix([a, b]))  # noqa: RUF071 - letters, not paths
    if at < UNSTABLE_AT or at >= len(a) - 1 or a[at] not in _VOWELS:
        return False
    rest = a[:at] + a[at + 1 :]
    return len(os.path.commonprefix([rest, b])) > at  # noqa: RUF071 - letters, not paths


def one_verb(a: str, b: str) -> bool:
    """Whether two Hungarian words are forms of one verb of :data:`MIN_STEM` letters or more.

    "kiválthatja" (can fill) and "kiváltani" (to fill), "parkolás" and "parkolni": the verb
    under each (:func:`~toolweave.tools.text.hungarian_base`, else the word's own stem).
    """
    ta, tb = a.casefold(), b.casefold()
    base_a, base_b = kit.hungarian_base(ta), kit.hungarian_base(tb)
    if not (base_a or base_b):
        return False
    verb_a, verb_b = base_a or kit.stem(ta, "hu"), base_b or kit.stem(tb, "hu")
    return verb_a == verb_b and len(verb_a) >= MIN_STEM


COMPOUND_STEM = 5
"""Letters a stem needs to be found as the last part of a compound (:func:`compound_tail`)."""
COMPOUND_HEAD = 4
"""Letters the first part of a compound has at least."""
COMPOUND_ENDING = 3
"""Letters of an ending after the stem, at most."""


def compound_tail(part: str, whole: str) -> bool:
    """Whether ``whole`` is a compound (written as one word) that ends in a form of ``part``."""
    if len(whole) < len(part) + COMPOUND_HEAD - COMPOUND_ENDING or len(part) < COMPOUND_STEM:
        return False
    core, folded = stem(part), fold(whole)
    if len(core) < COMPOUND_STEM or len(folded) < len(core) + COMPOUND_HEAD:
        return False
    at = folded.find(core, COMPOUND_HEAD)
    return at >= 0 and len(folded) - at - len(core) <= COMPOUND_ENDING


@lru_cache(maxsize=1 << 18)
def matches(a: str, b: str) -> bool:
    """:func:`related`, or the same weekday in either language (``"friday"``/``"péntek"``)."""
    day = weekday(a)
    return (day is not None and day == weekday(b)) or related(a, b) or polish_forms(a, b)


@lru_cache(maxsize=1 << 18)
def polish_forms(a: str, b: str) -> bool:
    """Whether two words are forms of one Polish word: the same core (Polish stemming).

    Cores (:func:`~toolweave.tools.text.polish_core`) of :data:`MIN_STEM` letters or more
    suffice. A shorter core ("ulga"/"ulgę", "nowy"/"nowego", "pies"/"psa") needs one of the two
    words to show it is Polish: :func:`_polish_mark`.
    """
    core = kit.polish_core(a.casefold())
    if not core or core != kit.polish_core(b.casefold()):
        return False
    return len(core) >= MIN_STEM or any(_polish_mark(w, core) for w in (a, b))


POLISH_LONG_ENDINGS = frozenset(e for e in kit.POLISH_ENDINGS if len(e) > 1)
"""Polish endings of two letters or more ("nowego", "psem"): "data"/"date" do not join."""


def _polish_mark(word: str, core: str) -> bool:
    """Whether ``word`` shows it is a Polish form of ``core``.

    Its core is not where it begins (a fleeting *e* or alternating vowel: "pies" of "ps"), or, for
    a core of :data:`SHORT_STEM` letters, it has a Polish letter or a Polish ending of two letters.
    """
    folded = fold(word)
    if not folded.startswith(core):
        return True
    polish = any(ch in kit.POLISH_LETTERS for ch in word.casefold())
    return len(core) >= SHORT_STEM and (polish or folded[len(core) :] in POLISH_LONG_ENDINGS)


@lru_cache(maxsize=1 << 18)
def word_matches(a: str, b: str) -> bool:
    """Routing's and reading's word match: :func:`matches`, or one typo apart (5+ letters)."""
    if matches(a, b):
        return True
    from rapidfuzz.distance import OSA  # imported on first use

    fa, fb = fold(a), fold(b)
    return (
        min(len(fa), len(fb)) >= 5
        and not fa.isdigit()
        and OSA.distance(fa, fb, score_cutoff=1) <= 1
    )


MONTH_PREFIXES = (
    ("januar", "stycz"), ("februar", "luty", "lutego", "lutym"),
    ("march", "marcius", "marzec", "marca", "marcu"), ("april", "kwiet", "kwieci"),
    ("majus", "maja", "maju"), ("june", "junius", "czerw"),
    ("july", "julius", "lipiec", "lipca", "lipcu"), ("august", "augusz", "sierp"),
    ("septemb", "szeptemb", "wrzes"), ("octob", "oktob", "pazdziern"),
    ("novemb", "listopad"), ("decemb", "grudz", "grudn"),
)  # fmt: skip
"""Folded beginnings of the months' names in English, Hungarian and Polish, January first."""
MONTH_WORDS = {"may": 5, "maj": 5}
"""Month names too short to be the beginning of a longer word."""


@lru_cache(maxsize=65536)
def month(word: str) -> int | None:
    """1 (January) to 12 when ``word`` is a month's name or its inflected form (en, hu, pl)."""
    token = fold(word)
    if token in MONTH_WORDS:
        return MONTH_WORDS[token]
    for number, prefixes in enumerate(MONTH_PREFIXES, start=1):
        for prefix in prefixes:
            if token.startswith(prefix) and (len(prefix) >= 5 or len(token) <= len(prefix) + 2):
                return number
    return None


_DATES = (
    (re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})"), "ymd"),
    (re.compile(r"(\d{4})\.\s*(\d{1,2})\.\s*(\d{1,2})"), "ymd"),
    (re.compile(r"(\d{1,2})\.\s*(\d{1,2})\.\s*(\d{4})"), "dmy"),
    (re.compile(r"(\d{1,2})(?:st|nd|rd|th)?\.?\s+(?:of\s+)?([^\W\d_]+),?\s+(\d{4})"), "dMy"),
    (re.compile(r"(\d{4})\.?\s+([^\W\d_]+)\s+(\d{1,2})"), "yMd"),
    (re.compile(r"([^\W\d_]+)\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})"), "Mdy"),
)
"""How a text writes a date: ``2027-05-28``, ``2027. 05. 28.``, ``28.05.2027``, ``28 maja 2027``,
``3rd of December 2026``, ``May 28, 2027`` (a month by name in English, Hungarian or Polish)."""


def _written_dates(text: str) -> list[tuple[int, dt.date]]:
    """Every calendar date ``text`` writes, with where it starts (forms: :data:`_DATES`)."""
    found: list[tuple[int, dt.date]] = []
    for pattern, order in _DATES:
        for match in pattern.finditer(text):
            parts = dict(zip(order, match.groups(), strict=True))
            named = parts.get("M")
            number = month(named) if named is not None else int(parts["m"])
            try:
                day = dt.date(int(parts["y"]), number or 0, int(parts["d"]))
            except ValueError:
                continue  # no month, or no such day
            found.append((match.start(), day))
    return found


def written_dates(text: str) -> list[tuple[int, dt.date]]:
    """Every calendar date ``text`` writes, with where it starts, in the order written."""
    return sorted(_written_dates(text), key=lambda item: item[0])


def dates_in(text: str) -> set[tuple[int, int, int]]:
    """The calendar dates ``text`` writes, as ``(year, month, day)``."""
    return {(day.year, day.month, day.day) for _, day in _written_dates(text)}


@lru_cache(maxsize=65536)
def weekday(word: str) -> int | None:
    """0 (Monday) to 6 (Sunday) when ``word`` is a weekday name in English, Polish or Hungarian."""
    token = fold(word)
    if token.startswith(NOT_WEEKDAYS):
        return None
    return next(
        (i for i, prefixes in enumerate(WEEKDAY_PREFIXES) if token.startswith(prefixes)), None
    )


def detect_language(text: str, default: str = "en") -> str:
    """``"hu"``, ``"en"`` or ``"pl"``, whichever the detector leans to; else ``default``."""
    return guess_language(text).leaning(default)


_FOLDED_STOPWORDS = frozenset(fold(w) for w in kit.STOPWORDS)
_GENERIC_FOLDED = frozenset(fold(w) for w in GENERIC_WORDS)
_GENERIC_STEMS = frozenset(stem(w) for w in GENERIC_WORDS if len(stem(w)) >= MIN_STEM)


def _by_polish_core(given: frozenset[str]) -> dict[str, tuple[str, ...]]:
    """``given``'s words under their Polish cores (:func:`~toolweave.tools.text.polish_core`)."""
    found: dict[str, tuple[str, ...]] = {}
    for word in sorted(given):
        if core := kit.polish_core(word):
            found[core] = (*found.get(core, ()), word)
    return found


_GENERIC_CORES = _by_polish_core(GENERIC_WORDS)

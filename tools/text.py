"""The text kit: tokenising, folding, stemming (Hungarian, English, Polish), sentence splitting."""

from __future__ import annotations

import json
import re
import threading
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from typing import Protocol, cast

import snowballstemmer

from toolweave.tools.memo import per_step

TOKEN = re.compile(r"[^\W_]+")
"""A word: a run of letters and digits (for surface forms; :func:`words` case-folds them)."""
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+(?=[\"'„(«]?[A-ZÁÉÍÓÖŐÚÜŰĆŁŃŚŹŻ0-9])")
_HEADING = re.compile(r"^\s*(#{1,6})\s+(.*)$")
_MARKUP = re.compile(r"^\s*(?:#{1,6}\s+|[-*+]\s+|>\s*|\d{1,3}\.\s+(?=\D))|\*\*|__|`")

ABBREVIATIONS = frozenset(
    {
        # Hungarian
        "dr", "prof", "pl", "stb", "ill", "kb", "u", "ú", "krt", "tel", "sz", "em", "fszt",
        "ld", "vö", "ún", "vmint", "db", "kft", "zrt", "bt", "ifj", "özv",
        # English
        "mr", "mrs", "ms", "st", "vs", "etc", "e.g", "i.e", "approx", "dept", "bldg",
        # Polish
        "np", "ul", "tj", "tzn", "tzw", "itd", "itp", "nr", "godz", "pok", "mgr", "inż", "ds",
        "sp", "o.o", "wg",
    }
)  # fmt: skip
"""Words after which a full stop does not end a sentence (compared case-folded)."""

LANGUAGES = ("hu", "en", "pl")
"""The languages the kit stems (Snowball's stemmer of each; Polish since snowballstemmer 3.0)."""


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


FUNCTION_WORDS_EN = _wordset(
    """a an and are at be can do does for how i in is it me my of on or please that the
    there this to was what when where which who with"""
)
"""English articles, prepositions, question words: no query is about them."""
FUNCTION_WORDS_HU = _wordset(
    """a az azt de egy ez ezt ha hogy hogyan hol is itt kell ki kit lehet meg melyik mi
    mikor milyen mit nem nincs ott te vagy van vannak én és"""
)
"""Hungarian articles, conjunctions, question words: no query is about them."""
PARTICLES_HU = _wordset("ban ben el en fel hoz igen le nál nél ön")
"""Hungarian verb prefixes and suffixes written apart ("le kell mondani", "kórház ban")."""
PRONOUNS_HU = _wordset(
    """ő ők maga magam magad magunk magatok maguk magát magamat magadat magunkat magukat
    magammal magaddal magával magunkkal magukkal magamnak magának"""
)  # the Hungarian stemmer cuts "magammal" and "magát" to "mag" (a seed, a core)
PRONOUNS = PRONOUNS_HU | _wordset(
    """he him his she her hers its we us our they them their you your myself yourself
    himself herself itself ourselves themselves"""
)
"""Personal and reflexive pronouns (English and Hungarian): no query is about them."""
HEDGES = _wordset(
    """exactly precisely actually really currently perhaps maybe possibly pontosan
    tényleg esetleg egyébként dokładnie właściwie naprawdę"""
)
"""Hedges and intensifiers ("where exactly", "pontosan hol"): how the person asks, never what
about, so no sentence of the answer need say them."""
STOPWORDS_EN = FUNCTION_WORDS_EN | _wordset(
    """about above after again all also am any as because been before being below between
    both but by could did doing down during each few from further get had has have having
    he hello her here hers hey hi him his if into its just know let like more most need no
    nor not now off ok okay once only other our out over own same she should so some such
    tell than thank thanks their them then there's these they those through too under until
    up very want we were what's while whom why will would yes you your yours myself
    yourself himself herself itself ourselves themselves"""
)
"""English stop words: the function words, pronouns, greetings and polite verbs."""
QUESTION_FORMS_HU = _wordset(
    """hánytól hányig hánykor hányra hányat hányba hányban hányból hánynak hányhoz hánnyal
    hányért hányszor hányadik hányadikán hányas mennyit mennyibe mennyiben mennyiből
    mennyire mennyitől mennyihez mennyinek mennyivel mennyiért melyiket melyikre melyikbe
    melyikben melyikből melyiktől melyikhez melyiknek melyikkel melyikért melyiken
    milyenek milyenre milyenbe milyenben milyenből milyentől milyenhez milyennek milyennel
    mikorra mikortól mikorig meddig mettől mióta mitől mire mivel miből miről miben minek
    mihez kinek kivel kitől kihez kiről kiben kiből kiért kiket kié hova"""
)
"""Hungarian question words with their case endings ("hánytól", "mennyibe", "melyikben"):
a question word still, whatever ending it takes: it says how the person asks, never what about."""
STOPWORDS_HU = (
    FUNCTION_WORDS_HU
    | QUESTION_FORMS_HU
    | _wordset(
        """abban ahogy ahol aki akkor alatt amely amelyik ami amikor annak arra arról azaz azok
    azzal csak ebben egyéb előtt ennek erre erről ezek ezzel felé helló helyzet honnan hová
    hány hányan ill illetve jó jönni jönnöm jövök kik kérdés kérem kérlek köszi köszönöm
    között legyen lenne lesz megyek mehetek mellett mennem menni mennyi mert mik mind minden
    mint miért már más még napot neked nekem neki nekünk nincsenek pedig rendben rá se sem
    szeretne szeretnék szeretném szerint szia ti tud tudna tudok tudom után vagyok vajon
    valami van-e vele velem volt"""
    )
    | PRONOUNS_HU
)
"""Hungarian stop words: the function words, pronouns, greetings and polite verbs."""
GREETINGS_EN = _wordset("hello hi hey thanks thank")
"""English greetings and thanks (stop words too)."""
GREETINGS_HU = _wordset("szia helló köszönöm köszi jó napot üdv")
"""Hungarian greetings and thanks (stop words too, but "üdv")."""
FUNCTION_WORDS_PL = _wordset(
    """a aby albo czy czyli dla do gdy gdzie i ile ilu jak jaka jaki jakie jakiego jakiej
    jakich jakim jako jeśli jeżeli jest kiedy kto kogo komu która które którego której
    który których którym którą lub między na nie niż o od oraz po pod przed przez przy są
    się to tego tym u w we więc z za ze że żeby"""
)
"""Polish function words, "jest"/"są", "nie", "się": no query is about them (not "ale", "bez",
"tej", "ten", "pan", "go", "one", "tu", "nad": content words in English or Hungarian)."""
PRONOUNS_PL = _wordset(
    """ja ty on ona ono my wy oni mnie mi mną ciebie cię ci tobą jego jej ich im nim niej
    nich nas nam nami was wam wami siebie sobie sobą mój moja moje mojego mojej moim moją
    moich moimi twój twoja twoje twojego twojej swój swoja swoje swojego swojej swoim"""
)
"""Polish personal, possessive and reflexive pronouns: no query is about them."""
STOPWORDS_PL = (
    FUNCTION_WORDS_PL
    | PRONOUNS_PL
    | _wordset(
        """bardzo być był była było będzie chcę chciałbym chciałabym chcemy co coś czego
        czym dlaczego dokąd dziękuję dzięki gdyby jakiś jakaś jakieś jakiegoś jakiejś jakimś
        jakichś już jeszcze jestem jesteś mam mamy można
        mogę może możesz muszę musi nad pani państwo potrzebuję proszę skąd tak także tam
        te też ta tu tylko również cześć witam"""
    )
)
"""Polish stop words: function words, pronouns ("jakieś", some), greetings, polite and modal
verbs (not "ma")."""
GREETINGS_PL = _wordset("cześć witam dziękuję dzięki")
"""Polish greetings and thanks (stop words too)."""
STOPWORDS = STOPWORDS_EN | STOPWORDS_HU | STOPWORDS_PL | PARTICLES_HU | PRONOUNS | HEDGES
"""What the offline model drops from a question: every stop word, and particles ("el")."""
QUERY_STOPWORDS = (
    FUNCTION_WORDS_EN | FUNCTION_WORDS_HU | QUESTION_FORMS_HU | FUNCTION_WORDS_PL
    | PARTICLES_HU | PRONOUNS | PRONOUNS_PL | HEDGES
)  # fmt: skip
"""Dropped from queries and tool texts: function words (question words in any case form, as
"kihez", "kogo"), particles, pronouns (a domain adds more)."""

_local = threading.local()


class _Stemmer(Protocol):
    def stemWord(self, word: str) -> str: ...


STROKED_LETTERS = str.maketrans({"ł": "l", "đ": "d", "ø": "o", "ħ": "h"})
"""Letters whose mark is a stroke, not an accent: Unicode does not decompose them, yet people
type them without it as they type accents ("rozlacza" for "rozłącza")."""


def fold(text: str) -> str:
    """Case-fold ``text``, strip its accents and strokes (``Kórház``: ``korhaz``, ``ł``: ``l``)."""
    if text.isascii():  # no diacritics, and NFKD leaves ASCII as it is
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text.casefold().translate(STROKED_LETTERS))
    if decomposed.isascii():
        return decomposed
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def words(text: str) -> list[str]:
    """The case-folded words of ``text``, diacritics kept (what the stemmers read)."""
    return TOKEN.findall(text.casefold())


def _stemmers() -> dict[str, _Stemmer]:
    # Snowball stemmers keep state while stemming: one set per thread
    found = cast("dict[str, _Stemmer] | None", getattr(_local, "stemmers", None))
    if found is None:
        names = {"hu": "hungarian", "en": "english", "pl": "polish"}
        found = {code: cast(_Stemmer, snowballstemmer.stemmer(n)) for code, n in names.items()}
        _local.stemmers = found
    return found


@lru_cache(maxsize=65536)
def stem(word: str, lang: str) -> str:
    """The folded Snowball stem of one case-folded ``word`` in ``lang`` (one of :data:`LANGUAGES`).

    Raises:
        KeyError: ``lang`` is not one of :data:`LANGUAGES`.
    """
    return fold(_stemmers()[lang].stemWord(word))


@lru_cache(maxsize=65536)
def stems(word: str, lang: str | None = None) -> tuple[str, ...]:
    """The distinct folded stems of ``word``: in ``lang``, or in every language when ``None``."""
    langs = (lang,) if lang in LANGUAGES else LANGUAGES
    return tuple(dict.fromkeys(s for s in (stem(word, code) for code in langs) if s))


POLISH_ENDINGS = tuple(
    sorted(
        _wordset("ami ach ego emu ymi imi ych ich owi om ów ie ej ym im em ą ę a e i o u y"),
        key=len,
        reverse=True,
    )
)
"""Polish case endings, cut from a short word the Polish stemmer leaves whole ("psa")."""
POLISH_LETTERS = frozenset("ąćęłńóśźż")
"""Letters only Polish of the kit's languages writes: a word with one is a Polish word."""
MIN_POLISH_CORE = 2
"""Letters a Polish core keeps at least (:func:`polish_core`): "ps" of "psa" and "pies"."""
_FLEETING_E = re.compile(r"(?<=[^aeiouyąęó])i?e(?=[^aeiouyąęó]$)")
_POLISH_ALTERNATIONS = str.maketrans("ąó", "ęo")  # "pieniądze"/"pieniędzy", "stół"/"stołu"


@lru_cache(maxsize=65536)
def polish_core(word: str) -> str:
    """The folded core every Polish form of one case-folded ``word`` shares.

    The Polish Snowball stem, with *ą* read as *ę* and *ó* as *o* (vowels that alternate in a
    stem: "pieniądze"/"pieniędzy"). A short word the stemmer leaves whole loses one of
    :data:`POLISH_ENDINGS` ("psa"), or, ending in a consonant, the fleeting *e* before it
    ("pies", "wniosek"). A core shorter than :data:`MIN_POLISH_CORE` is empty.
    """
    core = _stemmers()["pl"].stemWord(word)
    if core == word:
        ending = next((e for e in POLISH_ENDINGS if word.endswith(e)), "")
        core = word[: len(word) - len(ending)] if ending else _FLEETING_E.sub("", word)
    core = fold(core.translate(_POLISH_ALTERNATIONS))
    return core if len(core) >= MIN_POLISH_CORE else ""


HUNGARIAN_VERB_MARKS = ("hat", "het", "j", "n")
"""What the Snowball stemmer leaves on a Hungarian verb: the potential "-hat/-het" ("can ..."),
the imperative "-j" and the infinitive's "-n" ("parkolhat", "parkolj", "parkoln")."""
HUNGARIAN_NOUN_MARKS = ("ás", "és")
"""The suffix that makes a noun of a Hungarian verb ("parkolás" of "parkol")."""
MIN_HUNGARIAN_BASE = 3
"""Letters the verb under a mark keeps at least ("fordul" of "fordulhat"; not "le" of "lehet")."""
_CONSONANT_END = re.compile(r"[^aeiouáéíóöőúüű]$")
_LINKING_VOWEL = re.compile(r"(?<=[^aeiouáéíóöőúüű]{2})[ae]$")
"""The vowel an infinitive puts after two consonants ("kiválta-ni", "küld-e-ni"): not the verb's."""


@lru_cache(maxsize=65536)
def hungarian_base(word: str) -> str:
    """The folded verb one case-folded Hungarian ``word`` is a form of, or ``""``.

    Questions ask what one *can* do ("Hol parkolhatok?"); pages tell one to do it
    ("parkoljon"), name the doing ("Parkolás") or say it ("parkolni lehet"). The Snowball
    stemmer leaves each its own stem; this is the verb under all of them ("parkol"): the
    stem without one of :data:`HUNGARIAN_VERB_MARKS` (a mark of one letter only after a
    consonant, "-n" only of an infinitive) or of :data:`HUNGARIAN_NOUN_MARKS`, when at
    least :data:`MIN_HUNGARIAN_BASE` letters stay ("lehet" and "mehet" keep their stems).
    """
    stemmed = _stemmers()["hu"].stemWord(word)
    for mark in (*HUNGARIAN_VERB_MARKS, *HUNGARIAN_NOUN_MARKS):
        base = stemmed.removesuffix(mark)
        if mark == "n":  # "kiváltani": the infinitive's linking vowel goes with it
            base = _LINKING_VOWEL.sub("", base) if word.endswith("ni") else stemmed
        if base == stemmed or len(base) < MIN_HUNGARIAN_BASE:
            continue
        if len(mark) == 1 and not _CONSONANT_END.search(base):
            continue
        return fold(base)
    return ""


def content_words(text: str, stopwords: frozenset[str] = QUERY_STOPWORDS) -> list[str]:
    """The distinct case-folded words of ``text`` without ``stopwords``, unless none is left."""
    found = list(dict.fromkeys(words(text)))
    content = [w for w in found if w not in stopwords and fold(w) not in stopwords]
    return content or found


def line_sentences(line: str) -> list[str]:
    """The sentences of one line: neither an abbreviation nor a run of initials ends one."""
    found: list[str] = []
    pending = ""
    pieces = _SENTENCE_END.split(line)
    for index, piece in enumerate(pieces):
        pending = f"{pending} {piece}" if pending else piece
        following = pieces[index + 1] if index + 1 < len(pieces) else ""
        if _goes_on(pending, following):
            continue
        found.append(pending)
        pending = ""
    if pending:
        found.append(pending)
    return [sentence.strip() for sentence in found if sentence.strip()]


def _goes_on(pending: str, following: str) -> bool:
    """Whether the full stop ending ``pending`` is an abbreviation's or an initial's."""
    tokens = pending.split()
    if not tokens or not pending.endswith("."):
        return False
    if tokens[-1].rstrip(".").casefold() in ABBREVIATIONS:
        return True
    if not _is_initial(tokens[-1]) or not following:
        return False
    after = following.split(None, 1)[0] if following.strip() else ""
    return _is_initial(after) or (len(tokens) > 1 and _is_initial(tokens[-2]))


def _is_initial(token: str) -> bool:
    """``J.``: one upper-case letter and a full stop."""
    return len(token) == 2 and token[1] == "." and token[0].isupper()


def heading(raw_line: str) -> tuple[int, str] | None:
    """``(level, text)`` when ``raw_line`` is a markdown heading (``## Parking``), else ``None``."""
    match = _HEADING.match(raw_line)
    return None if match is None else (len(match.group(1)), match.group(2).strip())


def strip_markup(raw_line: str) -> str:
    """A line without its list (``-``, ``1.``), quote or heading marker and emphasis/code marks."""
    return _MARKUP.sub("", raw_line).strip()


_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+")


Section = tuple[str, str]
"""The open section of a page: its heading line, and the subject its list items carry."""


@per_step
def sections(text: str) -> list[tuple[str, str]]:
    """Split page text into ``(heading, sentence)`` pairs; each line starts a sentence.

    A list item under a section heading says what it says of the heading's subject
    ("## Single room" / "- 14,000 Ft a night"): its first sentence begins with the heading
    ("Single room: 14,000 Ft a night"), unless it names every word of it or begins with a
    label of its own ("Deposit: 5,000 Ft"). A page's title (``#``) is not repeated: the
    passage's label names the page (a page of a document: :func:`page_sections`).
    """
    return _sections(text, ("", ""))[0]


def page_sections(pages: Sequence[str]) -> list[list[tuple[str, str]]]:
    """:func:`sections` of each page of one document; a page break does not end a section.

    A list that goes on over a page break stays under its heading: the next page's lines
    before its first heading belong to the section the previous page left open.
    """
    found: list[list[tuple[str, str]]] = []
    opened: Section = ("", "")
    for text in pages:
        pairs, opened = _sections(text, opened)
        found.append(pairs)
    return found


def _sections(text: str, opened: Section) -> tuple[list[tuple[str, str]], Section]:
    pairs: list[tuple[str, str]] = []
    current, subject = opened
    for raw in text.splitlines():
        line = strip_markup(raw)
        if not line or line.startswith("<!--"):
            continue
        if (found := heading(raw)) is not None:
            current, subject = line, line if found[0] > 1 else ""
            continue
        pairs += [(current, sentence) for sentence in sentences_under(raw, subject)]
    return pairs, (current, subject)


def sentences_under(raw_line: str, subject: str) -> list[str]:
    """The sentences of one raw line under a section heading ``subject`` (``""``: none).

    A list item's first sentence begins with ``subject`` unless it names every word of it
    or has a label of its own (:func:`sections`).
    """
    found = line_sentences(strip_markup(raw_line))
    listed = found and _LIST_ITEM.match(raw_line)
    if subject and listed and not _names_all(found[0], subject):
        found[0] = f"{subject.rstrip(':')}: {found[0]}"
    return found


_OWN_LABEL = re.compile(r"^[^:\d]{1,60}:\s")  # "Deposit: 5,000 Ft" names its own subject


def _names_all(sentence: str, subject: str) -> bool:
    if _OWN_LABEL.match(sentence):
        return True
    said = {fold(w) for w in words(sentence)}
    return all(fold(w) in said for w in content_words(subject))


def split_sentences(text: str) -> list[str]:
    """Split page text into sentences (markdown headings are not sentences)."""
    return [sentence for _, sentence in sections(text)]


def readable(text: str) -> str:
    """A JSON object or list as ``"Field: value"`` lines (R10); what is not JSON passes."""
    stripped = text.strip()
    if stripped[:1] not in ("{", "["):
        return text
    try:
        data = json.loads(stripped)
    except ValueError:
        return text
    items = data.items() if isinstance(data, dict) else [("", data)]
    lines = [
        f"{_label(key)}: {value}" if key else value
        for key, value in ((k, _flat_value(v)) for k, v in items)
        if value
    ]
    return "\n".join(lines) or text


def _label(key: object) -> str:
    label = str(key).replace("_", " ").strip()
    return label[:1].upper() + label[1:]


def _flat_value(value: object) -> str:
    """A JSON value on one line: lists joined with ", ", objects as "key: value" pairs."""
    if value is None or value == "" or value == [] or value == {}:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        parts = [_flat_value(v) for v in value]
        joiner = "; " if any(isinstance(v, dict) for v in value) else ", "
        return joiner.join(p for p in parts if p)
    if isinstance(value, dict):
        pairs = [(k, _flat_value(v)) for k, v in value.items()]
        return ", ".join(f"{str(k).replace('_', ' ')} {v}" for k, v in pairs if v)
    return str(value)

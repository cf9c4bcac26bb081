"""Reading heuristics of the offline model: the gatekeeper (D1), page reading (D3), answers (A7)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from toolweave.llm.lexical import (
    GREETINGS,
    QUESTION_OPENERS,
    content_words,
    fold,
    is_generic,
    matches,
    month,
    stem,
    weekday,
    word_matches,
)
from toolweave.llm.port import AnswerPart, AnswerRequest
from toolweave.state.documents import UniqueTextDocument
from toolweave.tools import text as kit

QUANTITY_CUES = (
    "mikor", "mennyi", "hany", "meddig", "mettol", "dij", "telefonszam", "arak",
    "when", "much", "many", "long", "cost", "price", "fee", "phone", "number",
    "kiedy", "ile", "dlugo", "koszt", "cena", "ceny", "cene", "oplat", "telefon", "numer",
)  # fmt: skip
"""Folded word prefixes that ask for a time, amount, count, price or number."""


WHEN_PHRASES = frozenset({("what", "time"), ("which", "time"), ("what", "day"), ("which", "day")})
"""English question phrases asking *when* ("What time is the karaoke night?", "Which day is
the market?"): their noun says how the person asks, never what about (Q2's question forms)."""


def when_phrase_words(question: str) -> frozenset[str]:
    """The nouns of :data:`WHEN_PHRASES` in ``question`` that appear nowhere else in it."""
    tokens = kit.words(question)
    in_phrase = [b for a, b in itertools.pairwise(tokens) if (a, b) in WHEN_PHRASES]
    return frozenset(w for w in in_phrase if tokens.count(w) == in_phrase.count(w))


def wanted_words(question: str) -> list[str]:
    """The question's content words (greetings and the noun of "what time" dropped)."""
    asked = when_phrase_words(question)
    return [w for w in content_words(question) if w not in GREETINGS and w not in asked]


def opens_with(question: str, cues: tuple[str, ...]) -> bool:
    """Whether a word of ``question`` (stop words included: question words are) opens as a cue."""
    return any(fold(word).startswith(cues) for word in kit.words(question))


def asks_for_quantity(question: str) -> bool:
    """Whether the question asks for a time, amount, count, price or number."""
    return opens_with(question, QUANTITY_CUES) or bool(when_phrase_words(question))


PHONE_NUMBER = re.compile(r"(?:\+|\b06)\d?[\d \-/]{6,}\d")
"""A phone number as the corpus writes one: ``+36 1 555 0170``, ``06 1 555 0170``."""
PHONE_STEMS = frozenset({"phon", "telephon", "number", "call", "szam", "telefonszam"})
"""Stems (:func:`~toolweave.llm.lexical.stem`) of words that ask for a phone number."""
PHONE_PREFIXES = ("telefon", "hivn", "hivj", "hivh", "hivha", "felhiv", "elerhet")
"""Folded prefixes of Hungarian words that ask for one ("hívni", "felhívhatom")."""


def phone_cue(word: str) -> bool:
    """Whether ``word`` asks for a phone number ("phone", "call", "számon", "hívni")."""
    return stem(word) in PHONE_STEMS or fold(word).startswith(PHONE_PREFIXES)


def asks_for_phone(question: str) -> bool:
    """Whether the question asks for a phone number: a word of it does (:func:`phone_cue`)."""
    return any(phone_cue(word) for word in kit.words(question))


def has_figure(text: str) -> bool:
    """Whether ``text`` holds a digit."""
    return any(ch.isdigit() for ch in text)


def enough(found: float, wanted: float, *, titled: bool) -> bool:
    """Whether ``found`` of ``wanted`` key words answer: over half, or half under a naming title."""
    return found > 0 and (found * 2 > wanted or (found * 2 == wanted and titled))


def hits(wanted: Sequence[str], have: Iterable[str]) -> int:
    """How many wanted words some word of ``have`` matches."""
    present = list(have)
    return sum(any(matches(w, h) for h in present) for w in wanted)


@dataclass(frozen=True)
class ReadSentence:
    """A sentence of a passage with the words of the headings above it."""

    text: str
    heading_words: tuple[str, ...]


def passage_sentences(passage: str) -> list[ReadSentence]:
    """A passage's sentences, line by line; each carries its title and section heading words."""
    found: list[ReadSentence] = []
    title, section = "", ""
    for raw in passage.splitlines():
        heading = kit.heading(raw)
        if heading is not None:
            level, text = heading
            title, section = (text, "") if level == 1 else (title, text)
            continue
        line = kit.strip_markup(raw)
        if not line:
            continue
        context = tuple(content_words(f"{title} {section}"))
        found.extend(ReadSentence(s, context) for s in kit.sentences_under(raw, section))
    return found


def read(question: str, passage: str, *, max_sentences: int) -> str | None:
    """The passage's sentences answering ``question`` (:func:`enough`), or ``None``."""
    wanted = wanted_words(question)
    if not wanted:
        return None
    quantity = asks_for_quantity(question)
    picked = []
    for sentence in passage_sentences(passage):
        found = hits(wanted, [*content_words(sentence.text), *sentence.heading_words])
        titled = hits(wanted, sentence.heading_words) > 0
        if not enough(found, len(wanted), titled=titled):
            continue
        if quantity and not has_figure(sentence.text):
            continue
        picked.append(sentence.text)
    return " ".join(picked[:max_sentences]) or None


def context_runs(
    documents: Iterable[UniqueTextDocument], guaranteed: Iterable[str]
) -> list[list[str]]:
    """The context as the offline gatekeeper reads it, in runs (D1).

    Each guaranteed text alone, then each page's passages in their order on the page.
    """
    ordered = sorted(documents, key=lambda d: d.sentence_number or 0)
    return [[g] for g in guaranteed] + page_runs((d.document_id, d.page, d.text) for d in ordered)


def one_page_says(question: str, passages: Iterable[Sequence[str]], share: float) -> bool:
    """Whether one run of ``passages`` (a page's hits, a text) says ``share`` of the question.

    ``share`` of its words, and as much of its subject words (:func:`subject_words`): a page
    that says only how or when the question asks ("free", "days") or the kind of fact it
    asks for ("cost") does not speak to what it asks about.
    """
    shares = (wanted_words(question), subject_words(question))
    for passage in passages:
        said = content_words(" ".join(passage))
        if all(hits(words, said) >= share * len(words) for words in shares):
            return True
    return False


def subject_words(question: str) -> list[str]:
    """The question's words naming what it asks about; all its words when none is left (D1, D8).

    Not a word saying how or when (:func:`says_how`: "free", "days", "tart"): one alone is no
    evidence; nor, in a question asking for a kind of fact (:func:`asked_kind`), a word naming
    that kind (:func:`kind_cue`: "cost", "phone", "e-mail").
    """
    wanted = wanted_words(question)
    kind = asked_kind(question) is not None
    subject = [w for w in wanted if not says_how(w) and not (kind and kind_cue(w))]
    return subject or wanted


def kind_cue(word: str) -> bool:
    """Whether ``word`` names a kind of fact: an amount, price, number, phone or e-mail."""
    return fold(word).startswith((*QUANTITY_CUES, *EMAIL_CUES)) or phone_cue(word)


EMAIL_CUES = ("mail", "email")
"""Folded word prefixes asking for an e-mail address ("e-mail", "mailem", "e-mail-cím")."""
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
"""An e-mail address."""


def asks_for_email(question: str) -> bool:
    """Whether the question asks for an e-mail address (a word of it opens as "mail" does)."""
    return opens_with(question, EMAIL_CUES)


def says_email(text: str) -> bool:
    """Whether ``text`` holds an e-mail address."""
    return EMAIL.search(text) is not None


def asked_kind(question: str) -> Callable[[str], bool] | None:
    """The test of a sentence giving the kind of fact ``question`` asks for, or ``None`` (D1).

    An e-mail address for an e-mail; a figure for a time, amount, count, price or number
    (:func:`asks_for_quantity`), but no ordinal for an amount or count ("10. dnia", "4th
    floor" place something in a row; they answer *when*, or a phone's "number", only);
    ``None`` for a question asking for no such kind.
    """
    if asks_for_email(question):
        return says_email
    if not asks_for_quantity(question):
        return None
    if asks_for_time(question) or asks_for_phone(question):
        return has_figure
    return has_amount


def has_amount(text: str) -> bool:
    """Whether ``text`` holds a figure that is not an ordinal ("4th", "10. dnia")."""
    return has_figure(ORDINAL.sub(" ", text))


def lacks_asked_kind(question: str, passages: Iterable[Sequence[str]]) -> bool:
    """Whether no run of ``passages`` (a page's hits, a text) gives the kind of fact asked.

    The sentence that gives it (:func:`asked_kind`) must, with the sentence before it and
    what a pronoun opening it stands for (:func:`antecedent_of`), say half the question's
    words and half its subject words (:func:`subject_words`) at least.
    """
    gives = asked_kind(question)
    if gives is None:
        return False
    shares = (wanted_words(question), subject_words(question))
    for passage in passages:
        sentences = [s for text in passage for s in kit.line_sentences(text)]
        for index, sentence in enumerate(sentences):
            if not gives(sentence):
                continue
            before = sentences[max(0, index - 1) : index]
            named = antecedent_of(sentence, sentences[:index][::-1])
            window = content_words(" ".join([*before, sentence, named]))
            if all(hits(words, window) * 2 >= len(words) for words in shares):
                return False
    return True


SourceT = TypeVar("SourceT")

ANSWER_FILLERS = frozenset({
    "find", "much", "many", "long", "mennyibe", "kerul", "kerulne", "hanykor", "hanyadik", "meddig",
    "mettol", "ideig",
})  # fmt: skip
"""Folded question words that ask *how* rather than *about what*: not key words of an answer
("mennyi ideig", how long: "ideig" is the "long")."""
FIGURE_VERBS = frozenset({
    "tart", "tartanak", "cost", "costs", "take", "takes", "kosztuje", "kosztuja", "trwa", "trwaja",
})  # fmt: skip
"""Folded verbs a price or a time span is asked with ("meddig tart", "how much does it cost"):
a key word of an answer where a page says it, but a page giving the figure seldom does ("A
látogatási idő 15:00-17:00"), so no piece a search could add (:func:`adds_no_piece`)."""


def asks_how(word: str) -> bool:
    """Whether a question's ``word`` asks *how* (much, long), not *about what* (A10, D1).

    No key word of an answer; nor, where the reading quotes a passage of the asked kind
    (a price for "mennyibe kerül"), a piece a search could add: the gatekeeper is not
    asked for it.
    """
    return fold(word) in ANSWER_FILLERS


def adds_no_piece(word: str) -> bool:
    """Whether a question's ``word`` the context lacks is no piece a search could add (A10, D1).

    It asks how (:func:`asks_how`), or it is the verb a price or a time span is asked with
    (:data:`FIGURE_VERBS`), where the reading quotes a passage of the asked kind.
    """
    return asks_how(word) or fold(word) in FIGURE_VERBS


def question_names(question: str) -> set[str]:
    """Capitalised words of ``question`` after its first word (names: "Hofstadter")."""
    return {t.casefold() for t in kit.TOKEN.findall(question)[1:] if t[:1].isupper()}


MIN_DOCUMENTS_APART = 3
"""Documents a context needs before a word few of them hold tells them apart."""
KEEP_SHARE = 0.75
"""A picked sentence scores at least this share of the best one's score."""
FIGURE_BONUS = 0.5
"""What the figure a question asks for adds to a sentence's score (:func:`figure_weight`)."""
CONTEXT_WEIGHT = 0.5
"""A key word's score in a sentence when only its page's title (or sentence before) holds it."""
TIME_CUES = (
    "mikor", "hanykor", "meddig", "mettol", "nyitva",
    "when", "hours", "open",
    "kiedy", "godzin", "otwart", "czynn",
)  # fmt: skip
"""Folded word prefixes of a question asking *when*: a clock time or a weekday answers it."""
CLOCK = re.compile(r"\b\d{1,2}[:.]\d{2}\b")
ISO_MONTH = re.compile(r"\b\d{4}-(\d{2})-\d{2}\b")
"""A date written in digits (``2027-11-01``), its month caught."""
NUMBER_WORDS = frozenset(
    {"egy", "ket", "ketto", "harom", "negy", "ot", "hat", "het", "nyolc", "kilenc", "tiz",
     "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}
)  # fmt: skip
"""Folded number words: "négy órán át" and "two visitors" give a figure as digits do."""


COUNT_CUES = frozenset({"many", "hany"})
"""Folded question words asking *how many* (not "hánykor", at what time)."""
PHONE = re.compile(r"\+?\d[\d ]{6,}\d")
"""A phone number: seven or more digits, spaces between them allowed."""
ORDINAL = re.compile(r"\b\d+(?:st|nd|rd|th\b|\.(?=\s+\w))", re.IGNORECASE)
"""An ordinal: "4th floor", "4. emelet", "14. szám" (a place in a row, not a count)."""


def asks_for_count(question: str) -> bool:
    """Whether the question asks *how many*: a count answers it, not a clock time."""
    return any(fold(word) in COUNT_CUES for word in kit.words(question))


def has_count(text: str) -> bool:
    """Whether ``text`` gives a count: a number or number word, no clock time, phone or ordinal."""
    bare = ORDINAL.sub(" ", PHONE.sub(" ", CLOCK.sub(" ", text)))
    counted = NUMBER_WORDS - {"egy"}  # "egy" is the Hungarian article as often as "one"
    return has_figure(bare) or any(fold(w) in counted for w in kit.words(text))


def asks_for_time(question: str) -> bool:
    """Whether the question asks *when* (a time of day, a day, opening hours, "what time")."""
    return opens_with(question, TIME_CUES) or bool(when_phrase_words(question))


def figure_weight(text: str, *, time: bool) -> float:
    """How well ``text`` gives the figure a *when* (``time``: a clock or day) or *how much* asks."""
    if time:
        text = PHONE_NUMBER.sub(" ", text)
    clock = bool(CLOCK.search(text)) or any(weekday(w) is not None for w in kit.words(text))
    if time and clock:
        return 1.0
    figure = has_figure(text) or any(fold(w) in NUMBER_WORDS for w in kit.words(text))
    return (0.5 if time else 1.0) if figure else 0.0


@dataclass(frozen=True)
class Candidate(Generic[SourceT]):
    """A context sentence that may answer a question, with the title of its page."""

    source: SourceT
    text: str
    title: str = ""
    retrieval_score: float = 0.0
    before: str = ""
    """The sentence before it on its page, if in the context (it may name whom "her" means)."""
    antecedent: str = ""
    """For a pronoun-led sentence, what the pronoun stands for (:func:`antecedent_of`)."""


ANAPHORS = frozenset({"her", "his", "its", "their", "she", "he", "it", "they", "this", "these"})
"""Folded English words that open a sentence about something an earlier one named."""
ANTECEDENT_REACH = 3
"""How many sentences back :func:`antecedent_of` looks for what a pronoun stands for."""


def anaphoric(text: str) -> bool:
    """Whether ``text`` opens with a pronoun standing for something named before it."""
    said = kit.words(text)
    return bool(said) and fold(said[0]) in ANAPHORS


def antecedent_of(text: str, earlier: Sequence[str | None]) -> str:
    """What a pronoun-led ``text`` is about: the nearest of ``earlier`` without one, or ``""``."""
    if not anaphoric(text):
        return ""
    return next((s for s in earlier[:ANTECEDENT_REACH] if s and not anaphoric(s)), "")


EXISTENCE = re.compile(
    r"\s*(?:(?:is|are)\s+there|van(?:nak)?(?:-e)?)\s+(?:(?:a|an|any|some|az|egy)\s+)?([^\W\d_]+)",
    re.IGNORECASE,
)
"""A question asking whether something exists: "Is there a gym…?", "Van posta…?"."""


def existence_subject(question: str) -> str | None:
    """The thing an existence question asks about; a sentence not naming it does not answer."""
    found = EXISTENCE.match(question)
    if found is None:
        return None
    said = content_words(found.group(1))
    return said[0] if said else None


def unnamed_subject(question: str, texts: Iterable[str]) -> str | None:
    """The subject of an existence question that none of ``texts`` names, else ``None`` (R9, A7)."""
    subject = existence_subject(question)
    if subject is None:
        return None
    named = any(matches(subject, word) for text in texts for word in content_words(text))
    return None if named else subject


def uncovered_subject(question: str, passages: Sequence[tuple[str, str]]) -> str | None:
    """What the question asks about that ``(title, sentence)`` passages cannot speak to (R9)."""
    subject = unnamed_subject(question, (t for pair in passages for t in pair))
    if subject is not None:
        return subject
    wanted = [w for w in wanted_words(question) if not asks_how(w)]
    candidates = [Candidate(source=None, text=text, title=title) for title, text in passages]
    documents, held = _held_by(wanted, candidates)
    lacking = missing_subject(documents, _unseen(documents, held))
    if qualified_subject(question, lacking, context_names(candidates)):
        return " ".join(sorted(lacking))
    return None


def answering(question: str, candidates: Sequence[Candidate[SourceT]]) -> list[Candidate[SourceT]]:
    """The candidates that answer ``question``, best first (A7); none when none does (R9).

    A sentence answers with enough key words (:func:`enough`) of its own, the sentence before and
    its title (:meth:`_Reading.scored`); those under :data:`KEEP_SHARE` of the best are dropped.
    """
    reading = _Reading.of(question, candidates)
    if reading is None:
        return []
    scored = [
        item
        for position, candidate in enumerate(candidates)
        if (item := reading.scored(position, candidate)) is not None
    ]
    if not scored:
        return []
    best = max(item[0] for item in scored)
    kept = [item for item in scored if item[0] >= KEEP_SHARE * best]
    kept.sort(key=lambda item: (-item[0], not item[1], -item[3].retrieval_score, item[2]))
    return [item[3] for item in kept]


Scored = tuple[float, bool, int, "Candidate[SourceT]"]
"""A candidate that answers: its score, whether its title holds a key word, its place."""


class _Reading:
    """What :func:`answering` reads off the question and the context, once."""

    def __init__(
        self, question: str, candidates: Sequence[Candidate[Any]], wanted: list[str]
    ) -> None:
        self.wanted = as_context_writes(wanted, candidates)
        self.names = question_names(question)
        self.weight = {w: 2 if w in self.names else 1 for w in self.wanted}
        self.total = sum(self.weight.values())
        self.quantity = asks_for_quantity(question)
        self.time = asks_for_time(question)
        self.count = asks_for_count(question)
        self.phone = asks_for_phone(question)
        self.subject = existence_subject(question)
        self.documents, self.held = _held_by(self.wanted, candidates)
        self.unseen = _unseen(self.documents, self.held)
        self.lacking = missing_subject(self.documents, self.unseen)
        self.qualified = qualified_subject(question, self.lacking, context_names(candidates))

    @classmethod
    def of(cls, question: str, candidates: Sequence[Candidate[SourceT]]) -> _Reading | None:
        """The question's reading; ``None`` when nothing of the context can answer it."""
        wanted = [w for w in wanted_words(question) if not asks_how(w)]
        reading = cls(question, candidates, wanted) if wanted else None
        return None if reading is None or reading.qualified else reading

    def _own(self, candidate: Candidate[SourceT], text_words: list[str]) -> tuple[int, list[str]]:
        """The key words' weight the sentence holds, and the key words it lacks."""
        rest = [w for w in self.wanted if not any(matches(w, h) for h in text_words)]
        own = sum(self.weight[w] for w in self.wanted if w not in rest)
        if self.phone and PHONE_NUMBER.search(candidate.text):  # the number asked for is here
            own += sum(self.weight[w] for w in rest if phone_cue(w))
            rest = [w for w in rest if not phone_cue(w)]
        if self.time and CLOCK.search(candidate.text):  # "open", "hours": the hours are here
            own += sum(self.weight[w] for w in rest if asks_for_time(w))
            rest = [w for w in rest if not asks_for_time(w)]
        dated = {int(number) for number in ISO_MONTH.findall(candidate.text)}
        if dated:  # "November" is said by a date of November written in digits
            own += sum(self.weight[w] for w in rest if month(w) in dated)
            rest = [w for w in rest if month(w) not in dated]
        return own, rest

    def _from_context(
        self, candidate: Candidate[SourceT], rest: list[str], figure: float
    ) -> tuple[list[str], list[str]]:
        """The lacking key words the sentence before gives, and those its antecedent gives."""
        before_words = content_words(candidate.before)
        from_before = [
            w
            for w in rest
            if (figure or w in self.names) and any(matches(w, h) for h in before_words)
        ]
        antecedent_words = content_words(candidate.antecedent)
        from_antecedent = [
            w for w in rest if w not in from_before and any(matches(w, h) for h in antecedent_words)
        ]
        return [*from_before, *from_antecedent], from_antecedent

    def _answers(self, candidate: Candidate[SourceT], rest: list[str], given: list[str]) -> bool:
        """The sentence says the missing subject (or ``given`` it), and a count when asked (R9)."""
        said = [w for w in self.wanted if w not in rest or w in given]
        if self.lacking and not any(distinctive(self.documents, self.held[w]) for w in said):
            return False  # the context's common words, not its missing subject
        return not self.count or has_count(candidate.text)

    def _needed(self, rest: list[str], given: list[str]) -> int:
        """The key words' weight a sentence is measured against; 0: only generic words said."""
        said = [w for w in self.wanted if w not in rest or w in given]
        if all(is_generic(w) for w in said) and not all(is_generic(w) for w in self.wanted):
            return 0
        missed = [w for w in rest if w not in given and (says_how(w) or self._common(w))]
        return max(self.total - sum(self.weight[w] for w in missed), 1)

    def _common(self, word: str) -> bool:
        """Whether most of the context's documents hold ``word``: it tells no sentence apart."""
        return self.documents >= MIN_DOCUMENTS_APART and self.held[word] * 2 > self.documents

    def scored(self, position: int, candidate: Candidate[SourceT]) -> Scored[SourceT] | None:
        """The candidate's score when it answers the question, else ``None``."""
        text_words = content_words(candidate.text)
        own, rest = self._own(candidate, text_words)
        if not own:
            return None
        title_words = content_words(candidate.title)
        if self.subject and not any(matches(self.subject, h) for h in [*text_words, *title_words]):
            return None  # an existence question's subject is not what the sentence is about
        asks_figure = self.quantity or self.time
        figure = figure_weight(candidate.text, time=self.time) if asks_figure else 0.0
        from_before, from_antecedent = self._from_context(candidate, rest, figure)
        from_title = [w for w in rest if any(matches(w, h) for h in title_words)]
        with_before = own + sum(self.weight[w] for w in from_before)
        titled = hits(self.wanted, title_words) > 0
        half = bool(from_title) or (titled and self.unseen.isdisjoint(rest))
        needed = self._needed(rest, [*from_before, *from_title])
        if not needed or not enough(with_before, needed, titled=half):
            return None
        if not self._answers(candidate, rest, from_before):
            return None
        introduced = [
            w
            for w in from_before
            if w in self.names or w in from_antecedent or not has_figure(candidate.before)
        ]
        titled_only = [w for w in from_title if w not in introduced]
        score = own + CONTEXT_WEIGHT * sum(self.weight[w] for w in [*introduced, *titled_only])
        return score + FIGURE_BONUS * figure, titled, position, candidate


def as_context_writes(wanted: Sequence[str], candidates: Sequence[Candidate[SourceT]]) -> list[str]:
    """The key words, each mistyped one as the context writes it (:func:`word_matches`)."""
    have = dict.fromkeys(w for c in candidates for w in content_words(f"{c.title} {c.text}"))
    found: list[str] = []
    for word in wanted:
        if not any(matches(word, h) for h in have):
            word = next((h for h in have if word_matches(word, h)), word)
        found.append(word)
    return found


def _held_by(
    wanted: Sequence[str], candidates: Sequence[Candidate[SourceT]]
) -> tuple[int, dict[str, int]]:
    """How many documents (page titles) the context has, and how many hold each key word."""
    documents: dict[str, list[str]] = {}
    for candidate in candidates:
        words = documents.setdefault(candidate.title, content_words(candidate.title))
        words.extend(content_words(candidate.text))
    held = {w: sum(any(matches(w, h) for h in d) for d in documents.values()) for w in wanted}
    return len(documents), held


def _unseen(documents: int, held: dict[str, int]) -> set[str]:
    """The non-generic key words no document of a context of several holds (title or text)."""
    if documents < 2:
        return set()
    return {w for w, count in held.items() if not count and not says_how(w)}


def missing_subject(documents: int, unseen: set[str]) -> set[str]:
    """The unseen key words naming a subject the context lacks, with enough documents to tell."""
    if documents < MIN_DOCUMENTS_APART:
        return set()
    return {w for w in unseen if weekday(w) is None and not w.isdigit() and not phone_cue(w)}


def says_how(word: str) -> bool:
    """Whether ``word`` says how or when, not what about: generic, or a month's name.

    "I marry in June, do I get days off?": a page on days off for a wedding answers
    without naming June, as it answers "…tomorrow?" without naming tomorrow.
    """
    return is_generic(word) or month(word) is not None


def qualified_subject(question: str, lacking: set[str], names: set[str]) -> bool:
    """Whether a ``lacking`` key word qualifies a word the context writes as a name (``names``)."""
    if not lacking:
        return False
    tokens: list[str] = kit.TOKEN.findall(question)
    return any(
        first.casefold() in lacking
        and any(matches(second.casefold(), name) for name in names)
        and not (first[:1].islower() and second[:1].isupper())
        for first, second in itertools.pairwise(tokens)
    )


def context_names(candidates: Sequence[Candidate[SourceT]]) -> set[str]:
    """Folded words the context's sentences write capitalised after their first word."""
    later = (kit.TOKEN.findall(candidate.text)[1:] for candidate in candidates)
    return {fold(t) for tokens in later for t in tokens if t[:1].isupper() and len(t) > 2}


def distinctive(documents: int, count: int) -> bool:
    """Whether a key word held by ``count`` of the documents tells them apart (at most a third)."""
    return 0 < count <= max(1, documents // 3)


def page_runs(texts: Iterable[tuple[str, int | None, str]]) -> list[list[str]]:
    """Group ``(document_id, page, text)`` into runs per page, in first-seen order."""
    runs: dict[tuple[str, int | None], list[str]] = {}
    for document_id, page, text in texts:
        runs.setdefault((document_id, page), []).append(text)
    return list(runs.values())


PART_JOINERS = frozenset({"and", "also", "plus", "es", "illetve", "valamint", "meg"})
"""Folded conjunctions that may join two questions in one message (language, not domain)."""
AUXILIARIES = frozenset({"is", "are", "do", "does", "can", "could", "will", "should", "may"})
"""Folded English verbs a yes/no question opens with ("…, and can I renew it online?")."""
_OPENER_STEMS = tuple(sorted(q for q in QUESTION_OPENERS if len(q) >= 4))
"""The question words a longer word may open with ("mennyibe"): one ``startswith`` call."""
_TOKEN = re.compile(r"\w+|,", re.UNICODE)


def _opens_question(word: str) -> bool:
    """Whether ``word`` opens a question: a question word ("mennyibe" too) or an auxiliary."""
    folded = fold(word)
    return folded in QUESTION_OPENERS or folded in AUXILIARIES or folded.startswith(_OPENER_STEMS)


def _clause_cuts(sentence: str) -> list[tuple[int, int]]:
    """Where a question starts after a joiner or comma in ``sentence``: (end before, start)."""
    tokens = list(_TOKEN.finditer(sentence))
    cuts: list[tuple[int, int]] = []
    for at, token in enumerate(tokens[1:], start=1):
        if not _opens_question(token.group()):
            continue
        first = at - (fold(tokens[at - 1].group()) in PART_JOINERS)
        if first > 0 and tokens[first - 1].group() == ",":
            first -= 1
        if 0 < first < at:
            cuts.append((tokens[first].start(), token.start()))
    return cuts


def question_parts(question: str) -> list[str]:
    """The questions one message asks, each on its own (S6); ``[question]`` when one."""
    pieces: list[str] = []
    for sentence in re.split(r"(?<=\?)\s+", question.strip()):
        cuts = _clause_cuts(sentence)
        starts = [0, *(start for _, start in cuts)]
        ends = [*(end for end, _ in cuts), len(sentence)]
        for start, end in zip(starts, ends, strict=True):
            piece = sentence[start:end].strip(" ,;")
            if piece and pieces and (not _own_words(piece) or _points_back(piece)):
                pieces[-1] = f"{pieces[-1]} {piece}"
            elif piece:
                pieces.append(piece)
    return pieces if len(pieces) > 1 else [question]


def _own_words(piece: str) -> bool:
    """Whether ``piece`` names a subject itself (as :func:`missing_subject` reads key words)."""
    return any(
        not asks_how(w)
        and weekday(w) is None
        and not w.isdigit()
        and not phone_cue(w)
        and not is_generic(w)
        for w in wanted_words(piece)
    )


POINTING_BACK = ANAPHORS | frozenset(
    {"him", "them", "that", "those", "ott", "oda", "annak", "ennek", "azt", "ezt", "neki", "nala"}
)
"""Folded words by which a question points at what the one before it named."""


def _points_back(piece: str) -> bool:
    """Whether ``piece`` points at something named before it ("her", "it", "ott")."""
    return any(fold(w) in POINTING_BACK for w in kit.words(piece))


def answer_lines(
    request: AnswerRequest, max_sentences: int
) -> list[tuple[str, UniqueTextDocument | None]]:
    """The answer's lines, each with the document it quotes (``None``: guaranteed; S6, Q8)."""
    asked = request.domain_words.asked  # N1: the domain's own words are not looked for
    question = asked(request.question)
    whole = AnswerPart(question, request.documents, request.guaranteed)
    replies = "" if request.parts else request.replies
    lines: list[tuple[str, UniqueTextDocument | None]] = []
    for part in request.parts or (whole,):
        lines += [(text.strip(), None) for text in part.guaranteed if text.strip()]
        prompt = asked(part.prompt)
        picked = _read(prompt, part.documents, max_sentences, replies)
        if not picked and not part.guaranteed:
            picked = _read(prompt, request.documents, max_sentences, replies)
        lines += [(c.text, c.source) for c in picked]
    if request.parts and not lines:
        picked = _read(question, request.documents, max_sentences, request.replies)
        lines = [(c.text, c.source) for c in picked]
    if not request.parts and replies and not any(doc for _, doc in lines):
        # the replies in words the context does not use ("Cardiology" for a page
        # that says "Kardiológia"): the tool understood them; read the question alone
        lines += [(c.text, c.source) for c in _read(question, request.documents, max_sentences)]
    lines += [(text.strip(), None) for text in request.guaranteed if text.strip()]
    kept: dict[str, UniqueTextDocument | None] = {}
    for text, doc in lines:  # each line once, where it first comes
        kept.setdefault(text, doc)
    return list(kept.items())


def _read(
    question: str, documents: Sequence[UniqueTextDocument], max_sentences: int, replies: str = ""
) -> list[Candidate[UniqueTextDocument]]:
    """The sentences answering ``question``, then each question it joins (S6); ``replies``: Q8."""
    picked = _pick(f"{question} {replies}".strip(), documents, max_sentences)
    clauses = question_parts(question)
    if len(clauses) < 2:
        return picked
    seen = {(id(c.source), c.text) for c in picked}
    for clause in clauses:
        for candidate in _pick(f"{clause} {replies}".strip(), documents, max_sentences):
            if (id(candidate.source), candidate.text) not in seen:
                seen.add((id(candidate.source), candidate.text))
                picked.append(candidate)
    return picked


def _pick(
    question: str, documents: Sequence[UniqueTextDocument], max_sentences: int
) -> list[Candidate[UniqueTextDocument]]:
    """The sentences that answer ``question``, in context order (none when none does)."""
    by_number = {
        (d.document_id, d.page, d.sentence_number): d.text.strip()
        for d in documents
        if d.sentence_number
    }
    candidates: list[Candidate[UniqueTextDocument]] = []
    for doc in documents:
        if doc.sentence_number:
            earlier = [
                by_number.get((doc.document_id, doc.page, doc.sentence_number - back))
                for back in range(1, ANTECEDENT_REACH + 1)
            ]
            runs: list[tuple[Sequence[str | None], str]] = [(earlier, doc.text.strip())]
        else:
            sentences = kit.split_sentences(doc.text)
            runs = [(sentences[:i][::-1], s) for i, s in enumerate(sentences)]
        for before, sentence in runs:
            if sentence:
                candidates.append(
                    Candidate(
                        doc,
                        sentence,
                        doc.document_name,
                        doc.sentence_score,
                        (before[0] or "") if before else "",
                        antecedent_of(sentence, before),
                    )
                )
    best = answering(question, candidates)[:max_sentences]
    order = {id(c): i for i, c in enumerate(candidates)}
    return sorted(best, key=lambda c: order[id(c)])

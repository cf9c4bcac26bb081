"""Reading heuristics of the offline model: the gatekeeper (D1) and per-page reading (D3).

Sentences, headings and words are the text kit's (:mod:`toolweave.tools.text`).

Lexical stand-ins for what a model does:

- a question asking *when*, *how much*, *how many* or for a number or fee is
  answered precisely only by a sentence about it that holds a figure;
- a sentence under a heading is read with that heading and the document's
  title (a list item under "## Visiting hours" is about visiting hours).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from toolweave.llm.lexical import (
    GREETINGS,
    QUESTION_WORDS,
    content_words,
    fold,
    is_generic,
    matches,
    month,
    stem,
    weekday,
    word_matches,
)
from toolweave.tools import text as kit

QUANTITY_CUES = (
    "mikor", "mennyi", "hany", "meddig", "mettol", "dij", "telefonszam", "arak",
    "when", "much", "many", "long", "cost", "price", "fee", "phone", "number",
    "kiedy", "ile", "dlugo", "koszt", "cena", "ceny", "cene", "oplat", "telefon", "numer",
)  # fmt: skip
"""Folded word prefixes that ask for a time, amount, count, price or number."""


def wanted_words(question: str) -> list[str]:
    """The question's content words (greetings dropped)."""
    return [w for w in content_words(question) if w not in GREETINGS]


def asks_for_quantity(question: str) -> bool:
    """Whether the question asks for a time, amount, count, price or number."""
    # every word, stop words included: question words are stop words
    return any(fold(word).startswith(QUANTITY_CUES) for word in kit.words(question))


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
    """Whether ``found`` of ``wanted`` key words answer a question.

    More than half, or half on a page whose title or heading names one of them
    (the page is about the subject).
    """
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
            if level == 1:
                title, section = text, ""
            else:
                section = text
            continue
        line = kit.strip_markup(raw)
        if not line:
            continue
        context = tuple(content_words(f"{title} {section}"))
        found.extend(ReadSentence(s, context) for s in kit.line_sentences(line))
    return found


def read(question: str, passage: str, *, max_sentences: int) -> str | None:
    """The passage's sentences answering ``question``, or ``None``.

    A sentence answers when it (with its headings) holds more than half the
    question's content words, or half and its headings name one of them
    (:func:`enough`); for a quantity question it must also hold a figure.
    """
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


def lacks_figure(question: str, passages: Iterable[Sequence[str]]) -> bool:
    """True for a quantity question that no relevant context sentence answers with a figure.

    Args:
        question: The user's question.
        passages: Runs of consecutive sentences (one page's hits, one guaranteed text).

    A sentence with a figure answers when it, read with the sentence before it
    (which may name what "it" or "her" is), holds at least half the question's words.
    """
    if not asks_for_quantity(question):
        return False
    wanted = wanted_words(question)
    for passage in passages:
        sentences = [s for text in passage for s in kit.line_sentences(text)]
        for index, sentence in enumerate(sentences):
            if not has_figure(sentence):
                continue
            window = " ".join(sentences[max(0, index - 1) : index + 1])
            if hits(wanted, content_words(window)) * 2 >= len(wanted):
                return False
    return True


SourceT = TypeVar("SourceT")

ANSWER_FILLERS = frozenset(
    {
        "find",
        "much",
        "many",
        "long",
        "mennyibe",
        "kerul",
        "kerulne",
        "hanykor",
        "hanyadik",
        "meddig",
        "mettol",
    }
)
"""Folded question words that ask *how* rather than *about what* ("how much", "how long",
"where can I find", "mennyibe kerül", "hánykor", "hányadik", "meddig"): not key words of an answer.
"""


def _weighted(wanted: Sequence[str], weight: dict[str, int], have: Sequence[str]) -> int:
    return sum(weight[w] for w in wanted if any(matches(w, h) for h in have))


def _names(question: str) -> set[str]:
    """Capitalised words of ``question`` after its first word (names: "Hofstadter")."""
    tokens = kit.TOKEN.findall(question)
    return {t.casefold() for t in tokens[1:] if t[:1].isupper()}


MIN_DOCUMENTS_APART = 3
"""Documents a context needs before a word few of them hold tells them apart."""
KEEP_SHARE = 0.75
"""A picked sentence scores at least this share of the best one's score."""
FIGURE_BONUS = 0.5
"""What the figure a question asks for adds to a sentence's score (:func:`figure_weight`)."""
CONTEXT_WEIGHT = 0.5
"""What a key word counts for in a sentence's score when only its page's title (or, for a
name, the sentence before it) holds it."""
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
"""Folded question words asking *how many* ("how many beds", "hány ágyas"); "hánykor"
(at what time) is not one."""
PHONE = re.compile(r"\+?\d[\d ]{6,}\d")
"""A phone number: seven or more digits, spaces between them allowed."""
ORDINAL = re.compile(r"\b\d+(?:st|nd|rd|th\b|\.(?=\s+\w))", re.IGNORECASE)
"""An ordinal: "4th floor", "4. emelet", "14. szám" (a place in a row, not a count)."""


def asks_for_count(question: str) -> bool:
    """Whether the question asks *how many*: a count answers it, not a clock time."""
    return any(fold(word) in COUNT_CUES for word in kit.words(question))


def has_count(text: str) -> bool:
    """Whether ``text`` gives a count: a number that is no clock time or phone number.

    A number word counts too: "two visitors", "3 munkanapon belül"; not "15:00-18:00",
    "+36 1 555 0180" or the ordinal "4. emelet".
    """
    bare = ORDINAL.sub(" ", PHONE.sub(" ", CLOCK.sub(" ", text)))
    counted = NUMBER_WORDS - {"egy"}  # "egy" is the Hungarian article as often as "one"
    return has_figure(bare) or any(fold(w) in counted for w in kit.words(text))


def asks_for_time(question: str) -> bool:
    """Whether the question asks *when* (a time of day, a day, opening hours)."""
    return any(fold(word).startswith(TIME_CUES) for word in kit.words(question))


def figure_weight(text: str, *, time: bool) -> float:
    """How well ``text`` gives the figure a *when* or *how much* question asks for, 0 to 1.

    A digit or a number word gives a figure; for a *when* question (``time``) a clock
    time (``9:30``) or a weekday gives it fully, any other figure ("within 2 working
    days") half, and a phone number none: it says whom to call, not when.
    """
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
    """The sentence just before it on its page, if the context holds it (it may name
    whom "her" or "it" means)."""
    antecedent: str = ""
    """When it opens with a pronoun ("Her phone number is…"), the nearest sentence
    before it on its page, in the context, that does not (:func:`antecedent_of`)."""


ANAPHORS = frozenset({"her", "his", "its", "their", "she", "he", "it", "they", "this", "these"})
"""Folded English words that open a sentence about something an earlier one named."""
ANTECEDENT_REACH = 3
"""How many sentences back :func:`antecedent_of` looks for what a pronoun stands for."""


def anaphoric(text: str) -> bool:
    """Whether ``text`` opens with a pronoun standing for something named before it."""
    said = kit.words(text)
    return bool(said) and fold(said[0]) in ANAPHORS


def antecedent_of(text: str, earlier: Sequence[str | None]) -> str:
    """The sentence a pronoun-led ``text`` is about, or ``""``.

    It is the nearest of ``earlier`` (nearest first; ``None`` for one the context
    does not hold) that opens with no pronoun.

    "Her phone number and e-mail address…" two sentences after "The patient rights
    representative of the hospital is dr. Fehér Ilona." is about the representative.
    """
    if not anaphoric(text):
        return ""
    for sentence in earlier[:ANTECEDENT_REACH]:
        if sentence and not anaphoric(sentence):
            return sentence
    return ""


EXISTENCE = re.compile(
    r"\s*(?:(?:is|are)\s+there|van(?:nak)?(?:-e)?)\s+(?:(?:a|an|any|some|az|egy)\s+)?([^\W\d_]+)",
    re.IGNORECASE,
)
"""A question asking whether something exists: "Is there a gym…?", "Van posta…?"."""


def existence_subject(question: str) -> str | None:
    """The thing an existence question asks about ("posta" in "Van posta a kórházban?").

    A sentence that does not name it (nor its page's title) does not answer: the
    smoking rule "A kórház teljes területén tilos a dohányzás" says nothing about a
    post office on the hospital's grounds.
    """
    found = EXISTENCE.match(question)
    if found is None:
        return None
    said = content_words(found.group(1))
    return said[0] if said else None


def unnamed_subject(question: str, texts: Iterable[str]) -> str | None:
    """The subject of an existence question that none of ``texts`` names, else ``None``.

    ``texts``: what the answer may draw on (the context's sentences and their pages' titles). "Van
    fodrász a kórházban?" over a context that never says "fodrász" is not covered, whatever else the
    context holds: no sentence of it can say there is one, or that there is none (R9, A7).
    """
    subject = existence_subject(question)
    if subject is None:
        return None
    for text in texts:
        if any(matches(subject, word) for word in content_words(text)):
            return None
    return subject


def uncovered_subject(question: str, passages: Sequence[tuple[str, str]]) -> str | None:
    """What the question asks about that ``passages`` cannot speak to, else ``None`` (R9).

    ``passages``: the context as ``(page title, sentence)`` pairs. Two cases, the
    offline reading's own (:func:`answering`):

    - an existence question whose subject no passage names
      (:func:`unnamed_subject`): "Van fodrász a kórházban?";
    - a question about a kind of a named thing the context never qualifies so
      (:func:`qualified_subject`): "Who is the head of the plastic surgery
      department?" over pages that name Surgery and never "plastic".
    """
    subject = unnamed_subject(question, (t for pair in passages for t in pair))
    if subject is not None:
        return subject
    wanted = [w for w in wanted_words(question) if fold(w) not in ANSWER_FILLERS]
    candidates = [Candidate(source=None, text=text, title=title) for title, text in passages]
    documents, held = _held_by(wanted, candidates)
    lacking = missing_subject(documents, _unseen(documents, held))
    if qualified_subject(question, lacking, context_names(candidates)):
        return " ".join(sorted(lacking))
    return None


def answering(question: str, candidates: Sequence[Candidate[SourceT]]) -> list[Candidate[SourceT]]:
    """The candidates that answer ``question``, best first (A7); none when none does (R9).

    With none, the answer says the context does not cover the question.

    The question's key words are its content words (greetings and the *how*
    words of :data:`ANSWER_FILLERS` dropped; a capitalised name counts twice).

    - A sentence answers when it holds a key word itself and, with the names the
      sentence before it holds (whom "her" means), and, when it opens with a
      pronoun, with every key word of its :func:`antecedent_of` (whom the
      pronoun means: "Her e-mail address is…"), more than half of the key
      words, or exactly half on a page whose title holds one (:func:`enough`);
      so a sentence matching only a word every page shares ("kórház") never
      answers a question about a swimming pool. A title that only repeats the
      sentence's word allows the half only when the context's documents use every
      key word the sentence lacks (it may say it otherwise: "do not eat" for
      "fasting"); a key word no document of a context of several holds
      (:func:`_unseen`: "Can I bring my dog…") is a subject the sources do not
      cover: then a sentence answers only when it holds a :func:`distinctive`
      key word, one few of the context's documents hold, not only words many
      pages share ("Mikor van nyitva a kórházi kápolna?" is not answered by the
      pharmacy's opening hours because both say "kórházi" and "nyitva").
      When the question asks *when* or *how much* and the sentence gives
      such a figure, every word of the sentence before counts (it names what the
      figure is about).
    - An existence question ("Is there a gym…?", "Van posta…?") is answered only
      by a sentence naming what it asks about, or on a page whose title does
      (:func:`existence_subject`).
    - A *how many* question is answered only by a sentence giving a count
      (:func:`has_count`), not by a clock time, a phone number or an ordinal.
    - Its score: the key words it holds, plus :data:`CONTEXT_WEIGHT` for each
      further one that only its page's title holds (the page is about it) or the
      sentence before it: a name, a word of the antecedent of its pronoun, or,
      when the sentence gives the asked figure,
      any word of a sentence before that gives no figure of its own ("The copy is
      ready within 3 working days" after "Copies of medical records can be
      requested…"); plus :data:`FIGURE_BONUS` times :func:`figure_weight` for a
      *when* or *how much* question (a clock time answers *when* best).

    Sentences below :data:`KEEP_SHARE` of the best are dropped; ties go to a page
    whose title names the subject, then to the retrieval order.
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


@dataclass(frozen=True)
class _Reading:
    """What :func:`answering` reads off the question and the context, once."""

    wanted: list[str]
    names: set[str]
    weight: dict[str, int]
    total: int
    quantity: bool
    time: bool
    count: bool
    phone: bool
    subject: str | None
    documents: int
    held: dict[str, int]
    unseen: set[str]
    lacking: set[str]

    @classmethod
    def of(cls, question: str, candidates: Sequence[Candidate[SourceT]]) -> _Reading | None:
        """The question's reading; ``None`` when nothing of the context can answer it."""
        wanted = [w for w in wanted_words(question) if fold(w) not in ANSWER_FILLERS]
        if not wanted:
            return None
        wanted = as_context_writes(wanted, candidates)
        names = _names(question)
        weight = {w: 2 if w in names else 1 for w in wanted}
        documents, held = _held_by(wanted, candidates)
        unseen = _unseen(documents, held)
        lacking = missing_subject(documents, unseen)
        if qualified_subject(question, lacking, context_names(candidates)):
            return None
        return cls(
            wanted=wanted,
            names=names,
            weight=weight,
            total=sum(weight.values()),
            quantity=asks_for_quantity(question),
            time=asks_for_time(question),
            count=asks_for_count(question),
            phone=asks_for_phone(question),
            subject=existence_subject(question),
            documents=documents,
            held=held,
            unseen=unseen,
            lacking=lacking,
        )

    def _own(self, candidate: Candidate[SourceT], text_words: list[str]) -> tuple[int, list[str]]:
        """The key words' weight the sentence holds, and the key words it lacks."""
        own = _weighted(self.wanted, self.weight, text_words)
        rest = [w for w in self.wanted if not any(matches(w, h) for h in text_words)]
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

    def _answers(
        self, candidate: Candidate[SourceT], rest: list[str], from_before: list[str]
    ) -> bool:
        """The sentence says the missing subject, and a count when one is asked (R9)."""
        said = [w for w in self.wanted if w not in rest or w in from_before]
        if self.lacking and not any(distinctive(self.documents, self.held[w]) for w in said):
            return False  # the context's common words, not its missing subject
        return not self.count or has_count(candidate.text)

    def _needed(self, rest: list[str], given: list[str]) -> int:
        """The key words' weight a sentence is measured against, or 0 when it cannot answer.

        A generic key word (:func:`~toolweave.llm.lexical.is_generic`: "see" in "When does
        cardiology see patients?") counts when the sentence says it and is not missed when it does
        not; but a sentence that says only generic key words of a question that has others answers
        nothing ("year" alone, for a question about days off this year). ``given``: key words the
        sentence lacks that the sentence before it or its page's title give.
        """
        said = [w for w in self.wanted if w not in rest or w in given]
        if all(is_generic(w) for w in said) and not all(is_generic(w) for w in self.wanted):
            return 0
        missed = [w for w in rest if w not in given and is_generic(w)]
        return max(self.total - sum(self.weight[w] for w in missed), 1)

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
    """The key words, each mistyped one as the context writes it ("cardiolgy" -> "cardiology").

    A key word that matches no word of the context's sentences and titles takes the
    place of the context's word one typo away from it (:func:`word_matches`: five
    letters or more), as routing reads a task's words.
    """
    have: dict[str, None] = {}
    for candidate in candidates:
        have.update(dict.fromkeys(content_words(f"{candidate.title} {candidate.text}")))
    found: list[str] = []
    for word in wanted:
        if not any(matches(word, h) for h in have):
            word = next((h for h in have if word_matches(word, h)), word)
        found.append(word)
    return found


def _held_by(
    wanted: Sequence[str], candidates: Sequence[Candidate[SourceT]]
) -> tuple[int, dict[str, int]]:
    """How many documents the context has, and how many of them hold each key word.

    A document is the candidates of one page title; its title's words count.
    """
    documents: dict[str, list[str]] = {}
    for candidate in candidates:
        words = documents.setdefault(candidate.title, content_words(candidate.title))
        words.extend(content_words(candidate.text))
    held = {w: sum(any(matches(w, h) for h in d) for d in documents.values()) for w in wanted}
    return len(documents), held


def _unseen(documents: int, held: dict[str, int]) -> set[str]:
    """The key words no document of a context of several documents holds (title or text).

    A context of one document is what a tool or search found about the question's subject; a key
    word it lacks may be its way of saying it ("vezeti" for "osztályvezető"), so none counts as
    unseen there. Nor does a generic word (:func:`~toolweave.llm.lexical.is_generic`: "do" in "what
    do I do?"): it says how, not what about.
    """
    if documents < 2:
        return set()
    return {w for w, count in held.items() if not count and not is_generic(w)}


def missing_subject(documents: int, unseen: set[str]) -> set[str]:
    """The unseen key words that name a subject the context lacks.

    Only in a context of :data:`MIN_DOCUMENTS_APART` documents or more: fewer tell no
    common word from a distinctive one. A word that cannot name a subject is left
    out: a weekday or a number asks for a detail ("on Friday", "a 4-year-old"), and a
    word asking for a phone for the number ("Hívni szeretném…", "call"); a generic
    word ("see" in "When does cardiology see patients?") is never unseen (:func:`_unseen`).
    """
    if documents < MIN_DOCUMENTS_APART:
        return set()
    return {w for w in unseen if weekday(w) is None and not w.isdigit() and not phone_cue(w)}


def qualified_subject(question: str, lacking: set[str], names: set[str]) -> bool:
    """Whether the question asks about a kind of a named thing that no context document names.

    A missing key word (:func:`missing_subject`) right before a word the context writes as a name
    (capitalised inside a sentence, ``names``) qualifies that name: "plastic surgery" over a context
    that says "Surgery" and never "plastic" asks about a department the sources do not have, and
    "The head of Surgery is dr. Szabó András." does not answer it. Then no sentence answers. A
    missing word before a common noun is left alone: "cserepes virágot", "fél óra" say in other
    words what the context may say ("növény", "30 perc"). So is a lowercase word before a word the
    question itself capitalises: a qualifier is written as the name it is part of ("plastic
    surgery", "Plastic Surgery"), and "Kiedy wypada Wszystkich Świętych?" asks when the named day
    falls, not about a kind of it.
    """
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
    found: set[str] = set()
    for candidate in candidates:
        tokens = kit.TOKEN.findall(candidate.text)
        found.update(fold(t) for t in tokens[1:] if t[:1].isupper() and len(t) > 2)
    return found


def distinctive(documents: int, count: int) -> bool:
    """Whether a key word held by ``count`` of the context's documents tells them apart.

    It is when at most a third of them (at least one) hold it: "gym" on the one
    page about the gym, not "hospital" or "open", which many pages share.
    """
    return 0 < count <= max(1, documents // 3)


def page_runs(texts: Iterable[tuple[str, int | None, str]]) -> list[list[str]]:
    """Group ``(document_id, page, text)`` into runs per page, in first-seen order."""
    runs: dict[tuple[str, int | None], list[str]] = {}
    for document_id, page, text in texts:
        runs.setdefault((document_id, page), []).append(text)
    return list(runs.values())


PART_JOINERS = frozenset({"and", "also", "plus", "es", "illetve", "valamint", "meg"})
"""Folded conjunctions that may join two questions in one message ("…, and how much…?",
"…, és mennyibe…?"): function words of the language, not of any domain."""
AUXILIARIES = frozenset({"is", "are", "do", "does", "can", "could", "will", "should", "may"})
"""Folded English verbs a yes/no question opens with ("…, and can I renew it online?")."""
_QUESTION_OPENERS = frozenset(fold(w) for w in QUESTION_WORDS)
_OPENER_STEMS = tuple(sorted(q for q in _QUESTION_OPENERS if len(q) >= 4))
"""The question words a longer word may open with ("mennyibe"): one ``startswith`` call."""
_TOKEN = re.compile(r"\w+|,", re.UNICODE)


def _opens_question(word: str) -> bool:
    """Whether ``word`` opens a question: a question word ("mennyibe" too) or an auxiliary."""
    folded = fold(word)
    if folded in _QUESTION_OPENERS or folded in AUXILIARIES:
        return True
    return folded.startswith(_OPENER_STEMS)


def _clause_cuts(sentence: str) -> list[tuple[int, int]]:
    """Where a new question begins inside ``sentence``: (end of the one before, its start).

    A new question begins at a question word or verb right after a joiner
    (:data:`PART_JOINERS`) or a comma, the joiner and comma belonging to neither.
    """
    tokens = list(_TOKEN.finditer(sentence))
    cuts: list[tuple[int, int]] = []
    for at, token in enumerate(tokens[1:], start=1):
        if not _opens_question(token.group()):
            continue
        first = at
        if first > 0 and fold(tokens[first - 1].group()) in PART_JOINERS:
            first -= 1
        if first > 0 and tokens[first - 1].group() == ",":
            first -= 1
        if first < at and first > 0:
            cuts.append((tokens[first].start(), token.start()))
    return cuts


def question_parts(question: str) -> list[str]:
    """The questions one message asks, each on its own (S6); ``[question]`` when one.

    A message asks two questions where a conjunction ("and", "és", …) or a comma is followed by a
    question word or a question's verb ("When is the library open on Sunday and how much is the
    annual membership?"), or where a sentence ending in a question mark is followed by another. A
    piece naming no subject of its own ("…, and how much?", "…, mi a számuk?") or with a word
    pointing back ("…, and what is her phone number?") stays with the piece before it: it asks about
    the same thing.
    """
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
    """Whether ``piece`` names a subject itself: a key word that can name one.

    Not a *how* word (:data:`ANSWER_FILLERS`), nor a word asking for a detail of
    what the piece before named: a weekday, a number, a word asking for a phone
    ("mi a számuk?"), a generic word (as :func:`missing_subject` reads them).
    """
    return any(
        fold(w) not in ANSWER_FILLERS
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

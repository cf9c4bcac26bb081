"""Rules of what an answer may say, for every assistant (R9, A7, Q8), applied by the answer node."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import replace

from toolweave.llm import lexical, offline_reading, prompts
from toolweave.llm.chat_messages import passage_label, passage_source
from toolweave.llm.chat_model import CUT_MARK
from toolweave.llm.citations import Checked, checkable, says_something
from toolweave.llm.lexical import ANSWER_WORDS, content_words, fold, holds_run, matches, weekday
from toolweave.llm.offline_reading import answer_lines
from toolweave.llm.port import CITATION, AnswerRequest, cited_documents
from toolweave.llm.structured import looping_reply
from toolweave.state.documents import UniqueTextDocument
from toolweave.tools import text as kit
from toolweave.tools.language import detect_language


def uncovered_subject(request: AnswerRequest) -> str | None:
    """What the question asks that no stored passage speaks to (every part, S6), or ``None``."""
    if any(text.strip() for text in request.guaranteed):
        return None
    if any(d.sentence_number is None for d in request.documents):
        return None  # a tool's own data, not a page's sentence: it may say it its own way
    own = request.domain_words.asked  # N1: the domain's own words are no subject
    asked = [(own(p.prompt), p.documents or request.documents) for p in request.parts]
    if not asked:
        clauses = offline_reading.question_parts(own(request.question))
        asked = [(clause, request.documents) for clause in clauses]
    subjects = [_uncovered(question, _passages(docs)) for question, docs in asked]
    if any(subject is None for subject in subjects):
        return None
    return "; ".join(dict.fromkeys(s for s in subjects if s))


READING_SENTENCES = 4
"""Sentences the reading of :func:`reading_quotes` picks at most (the offline model's own)."""


def reading_quotes(request: AnswerRequest) -> UniqueTextDocument | None:
    """The first passage the offline reading quotes to answer the question, else ``None``."""
    return next(iter(_quoted(request)), None)


def _quoted(request: AnswerRequest) -> list[UniqueTextDocument]:
    """The page sentences the offline reading quotes to answer the question, in its order."""
    if uncovered_subject(request) is not None:
        return []
    lines = answer_lines(request, READING_SENTENCES)
    return [doc for _, doc in lines if doc is not None and doc.sentence_number]


def misses_the_figure(answer: str, request: AnswerRequest) -> bool:
    """Whether ``answer`` gives no figure its question asks for where the reading quotes one.

    The reading's first sentence, or a later one that names what the question is about
    ("Egyágyas kórterem: 14 000 Ft" after "Az egyágyas kórterem díját a Térítési díjak
    tájékoztató tartalmazza." for what a single room costs).
    """
    question = request.question
    if not offline_reading.asks_for_quantity(question):
        return False
    time, said = offline_reading.asks_for_time(question), CITATION.sub("", answer)
    if offline_reading.figure_weight(said, time=time) > 0:
        return time and _drops_the_date(said, request)
    quoted, subject = _quoted(request), asked_subject(question)
    figures = [d for n, d in enumerate(quoted) if n == 0 or _names_subject(d.text, subject)]
    return any(offline_reading.figure_weight(d.text, time=time) > 0 for d in figures)


def _drops_the_date(said: str, request: AnswerRequest) -> bool:
    """Whether a *when* answer gives a day or a year, no date, where the reading quotes one.

    "Wszystkich Świętych wypada w poniedziałek 2027." for "2027-11-01 (poniedziałek):
    Wszystkich Świętych": a weekday and a year are a figure, not the date that was asked. An
    answer with a clock time, a month's name or a date of its own stands.
    """
    if offline_reading.CLOCK.search(said) or lexical.dates_in(said):
        return False
    if any(lexical.month(word) is not None for word in kit.words(said)):
        return False
    quoted = _quoted(request)
    return bool(quoted) and bool(lexical.dates_in(quoted[0].text))


def uncovered_words(request: AnswerRequest) -> tuple[str, ...]:
    """The folded words of what the question asks about that no stored passage names (R9)."""
    docs = request.documents
    if not docs or any(d.sentence_number is None for d in docs):
        return ()
    subject = _uncovered(request.question, _passages(docs))
    return tuple(fold(w) for w in content_words(subject or ""))


def _passages(docs: Sequence[UniqueTextDocument]) -> tuple[tuple[str, str], ...]:
    return tuple((d.document_name, d.text) for d in docs)


@functools.lru_cache(maxsize=16)
def _uncovered(question: str, passages: tuple[tuple[str, str], ...]) -> str | None:
    """The offline reading's uncovered subject, cached: asked up to three times per answer (PF1)."""
    return offline_reading.uncovered_subject(question, passages)


def asked_subject(question: str) -> tuple[str, ...]:
    """The question's content words that name what it is about (a weekday only says when)."""
    wanted = offline_reading.wanted_words(question)
    return tuple(w for w in wanted if not w.isdigit() and weekday(w) is None)


def _figures(sentence: str) -> bool:
    """Whether ``sentence`` states a figure: a time, number, phone or address (not a name)."""
    return any(not token.startswith("name:") for token in checkable(sentence))


def _names_subject(text: str, subject: Sequence[str]) -> bool:
    return any(matches(asked, word) for word in content_words(text) for asked in subject)


def strays(
    text: str, sources: Sequence[int], request: AnswerRequest, subject: Sequence[str]
) -> bool:
    """Whether a sentence may be about another subject than the one asked (R9).

    It rests on passages (``sources``, 1-based; none: the guaranteed context, always
    relevant), and neither ``text`` nor those passages (with their page's name and their
    neighbours in the context) say a word of the question's ``subject``
    (:func:`asked_subject`): a figure of something else, or a page's other sentences
    ("Every patient has the right to health care." beside the CT booking number).
    """
    if not subject or not sources or _names_subject(text, subject):
        return False  # resting on no passage: the guaranteed context, always relevant (R5)
    docs = request.documents
    cited = [docs[i - 1] for i in sources if 0 < i <= len(docs)]
    around = [d for c in cited for d in _run_of(c, docs)]
    return not any(_names_subject(f"{passage_source(d)} {d.text}", subject) for d in around)


def borrows_figure(
    text: str, sources: Sequence[int], request: AnswerRequest, subject: Sequence[str]
) -> bool:
    """Whether a sentence says the asked subject's words with another subject's figure (R9).

    It states a figure, rests on passages (``sources``, 1-based), and restates a word of the
    question's ``subject`` (:func:`asked_subject`) while those passages (with their page's
    name and the context's sentences above them on the page, its heading) name none, the
    passages written in the user's language (the answer's): "Premia roczna wynosi 120 zł
    miesięcznie." citing only "Pakiet rodzinny kosztuje 120 zł miesięcznie", the figure
    held, the subject not. Over pages in another language the words cannot be compared
    (a short sentence's own language is no sure guess: "120 zł" reads as Polish): it stands.
    So does a sentence whose passages share a word of the subject, unless it says a subject
    word no passage of the context names (:func:`_unseen_subject`: "Premia roczna wynosi
    2 000 zł rocznie" citing a language course's "2 000 zł rocznie") and its passages hold
    none of the names the question asks about ("Wszystkich Świętych wypada …": the holiday
    named, the verb "wypada" written nowhere, it stands).
    """
    if not subject or not sources or not _figures(text) or not _names_subject(text, subject):
        return False
    docs = request.documents
    cited = [docs[i - 1] for i in sources if 0 < i <= len(docs)]
    said = " ".join(f"{passage_source(d)} {d.text}" for c in cited for d in _run_of(c, docs, (-1,)))
    if detect_language(said).lang != request.user_lang:  # the answer's language is the user's
        return False
    if not _names_subject(said, subject):
        return True
    unseen = _unseen_subject(request.question, _passages(docs)) if _on_pages(request) else ()
    names = tuple(offline_reading.question_names(request.question))
    return _names_subject(text, unseen) and not (names and _names_subject(said, names))


def _on_pages(request: AnswerRequest) -> bool:
    """Whether the context is page sentences only: a tool's own data says things its own way."""
    return not any(t.strip() for t in request.guaranteed) and all(
        d.sentence_number is not None for d in request.documents
    )


@functools.lru_cache(maxsize=16)
def _unseen_subject(question: str, passages: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    """The question's subject words no passage of the context (title or text) names (R9).

    "premia" of "Ile wynosi premia roczna?" over pages that never say it: a sentence that
    says it with a figure took the figure from something else, even where its passage
    shares another of the question's words ("rocznie").
    """
    said = [w for title, text in passages for w in content_words(f"{title} {text}")]
    return tuple(
        w
        for w in asked_subject(question)
        if not offline_reading.says_how(w) and not any(matches(w, h) for h in said)
    )


def _run_of(
    doc: UniqueTextDocument, docs: Sequence[UniqueTextDocument], steps: Sequence[int] = (-1, 1)
) -> list[UniqueTextDocument]:
    """``doc`` with the context's sentences next to it on its page, without a gap (its heading).

    ``steps``: ``(-1,)`` for the sentences above it only.
    """
    if doc.sentence_number is None:
        return [doc]
    mine = {
        d.sentence_number: d
        for d in docs
        if (d.document_id, d.page) == (doc.document_id, doc.page) and d.sentence_number is not None
    }
    run, at = [doc], doc.sentence_number
    for step in steps:
        n = at + step
        while n in mine:
            run.append(mine[n])
            n += step
    return run


def without_strays(checked: Sequence[Checked], request: AnswerRequest) -> list[Checked]:
    """``checked`` with each stray figure dropped where the answer also says what was asked (R9).

    A supported sentence that :func:`strays` is not kept when another kept sentence names the
    question's subject and the stray cites none of the passages such sentences cite: it gives
    the figure of something else ("the representative's hours on Tuesday" for "is the
    surgery open on Tuesday?"). Alone, or resting on a passage an on-subject sentence cites
    (its next sentence, "It is on the 2nd floor"), it stays. A sentence that
    :func:`borrows_figure` is not supported, alone or not.
    """
    subject = asked_subject(request.question)
    checked = [
        replace(c, supported=False)
        if c.supported and borrows_figure(c.claim.text, c.sources, request, subject)
        else c
        for c in checked
    ]
    kept = [c for c in checked if c.supported and says_something(c.claim.text)]
    stray = {id(c) for c in kept if strays(c.claim.text, c.sources, request, subject)}
    anchors = {i for c in kept if id(c) not in stray for i in c.sources}
    if not stray or len(stray) == len(kept):
        return list(checked)
    return [
        replace(c, supported=False) if id(c) in stray and not anchors & set(c.sources) else c
        for c in checked
    ]


def repeats_clarification(answer: str, request: AnswerRequest) -> str | None:
    """The clarification question ``answer`` asks again, word for word or by its key words (Q8)."""
    own = [_folded_words(s) for s in kit.split_sentences(answer) if s.rstrip().endswith("?")]
    whole = _folded_words(answer)
    for exchange in request.clarifications:
        for sentence in _questions(exchange.question):
            asked = _folded_words(sentence)
            keys = {fold(w) for w in content_words(sentence)}
            if whole == asked or any(
                holds_run(said, asked) or (keys and keys <= set(said)) for said in own
            ):
                return exchange.question
    return None


def _folded_words(text: str) -> list[str]:
    return [fold(w) for w in kit.words(text)]


def _questions(text: str) -> list[str]:
    """The sentences of ``text`` that ask (end in "?"); all of it when none does."""
    return [s for s in kit.split_sentences(text) if s.rstrip().endswith("?")] or [text]


def says_only_the_question(answer: str, question: str) -> bool:
    """Whether ``answer`` only asks, or says ``question`` back: no sentence tells anything."""
    sentences = _sentences(answer)
    return bool(sentences) and not _tells_beyond(sentences, question)


def says_yes_and_no_more(answer: str, request: AnswerRequest) -> bool:
    """Whether ``answer`` is only a yes or no and the question, where the context says more."""
    sentences = _sentences(answer)
    opened = [s for s in sentences if fold((kit.words(s) or [""])[0]) in ANSWER_WORDS]
    if not opened or any(s.rstrip().endswith("?") for s in opened):
        return False
    rest = [_after_first_word(s) if s in opened else s for s in sentences]
    if _tells_beyond([s for s in rest if kit.words(s)], request.question):
        return False
    return uncovered_subject(request) is None and bool(answer_lines(request, READING_SENTENCES))


def _sentences(answer: str) -> list[str]:
    """The answer's sentences, its citation markers left out."""
    return [s for s in kit.split_sentences(CITATION.sub("", answer)) if s.strip()]


def _tells_beyond(sentences: Sequence[str], question: str) -> bool:
    """Whether one of ``sentences`` tells something ``question`` does not (:func:`_tells`)."""
    asked = [fold(w) for w in content_words(question)]
    figures = {fold(t) for t in checkable(question)}
    return any(_tells(s, asked, figures) for s in sentences)


def _after_first_word(sentence: str) -> str:
    """``sentence`` without its first word ("Yes, the clinic is open." -> "the clinic is open.")."""
    match = kit.TOKEN.search(sentence)
    return sentence[match.end() :].lstrip(" ,;:-–—") if match else sentence


def _tells(sentence: str, asked: Sequence[str], figures: set[str]) -> bool:
    """Whether ``sentence`` states something (:func:`says_only_the_question`)."""
    if sentence.rstrip().endswith("?"):
        return False
    said = [fold(w) for w in kit.words(sentence)]
    if not said or said[0] in ANSWER_WORDS:
        return True
    if any(fold(t) not in figures for t in checkable(sentence)):
        return True
    own = [fold(w) for w in content_words(sentence)]
    new = any(not any(matches(w, a) for a in asked) for w in own)
    return new or not all(any(matches(w, a) for w in own) for a in asked)


ECHOED = 40
"""Characters of a passage's text that, after its ``[n]`` as the context numbers it, are an echo."""
ECHO_LABEL = re.compile(r"^\s*(guaranteed context\b[^:\n]*|context)\s*:", re.I | re.M)
"""A line of an answer that begins as the answer prompt's own sections do."""


def echoes_prompt(answer: str, request: AnswerRequest) -> bool:
    """Whether ``answer`` copies the prompt's layout: a section's label or a passage's."""
    if ECHO_LABEL.search(answer):
        return True
    return any(
        passage_label(n, doc) in answer
        or f"[{n}] {doc.text.strip()[:ECHOED]}" in answer  # a context line, as numbered
        or (doc.page is not None and f"{passage_source(doc)}: " in answer)
        for n, doc in enumerate(request.documents, 1)
        if doc.text.strip()
    )


def quoted_citations(answer: str, request: AnswerRequest) -> str:
    """What an answer of markers alone ("[3]") cites, quoted, each passage with its marker."""
    cited = cited_documents(answer, request.documents)
    number = {id(doc): n for n, doc in enumerate(request.documents, start=1)}
    lines = [f"{doc.text.strip()} [{number[id(doc)]}]" for doc in cited if doc.text.strip()]
    return "\n".join(lines) or prompts.no_information_answer(request.user_lang, request.texts)


def cites_only(answer: str) -> bool:
    """Whether ``answer`` is citation markers and nothing else ("[3]"): no answer in words."""
    return bool(CITATION.search(answer)) and not any(
        ch.isalnum() for ch in CITATION.sub("", answer)
    )


def repeats_itself(answer: str) -> bool:
    """Whether ``answer`` is a loop: its tail, written three times or more (X3)."""
    return looping_reply(answer.removesuffix(CUT_MARK))


PLACEHOLDER_LINE = re.compile(r"^[ \t]*(?:null|none|nil|undefined)[ \t]*(?:\n|$)", re.I | re.M)
"""A line that is a code placeholder alone: JSON's ``null``, Python's ``None``."""


def without_placeholders(answer: str) -> str:
    """``answer`` without its lines that are a code placeholder alone ("null")."""
    return PLACEHOLDER_LINE.sub("", answer)

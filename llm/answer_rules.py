"""Rules of what an answer may say, for every assistant (R9, A7).

The answer node applies them around the answer call:

- :func:`uncovered_subject`: a question the context cannot speak to gets "no
  information" and no call;
- :func:`cites_only` and :func:`quoted_citations`: an answer of citation markers
  alone ("[3]") becomes the passages it cites;
- :func:`echoes_prompt`: an answer that writes back the answer prompt is no answer;
- :func:`repeats_itself`: nor is one that loops ("szabad szabad szabad ...");
- :func:`without_placeholders`: a line that is a code placeholder alone ("null") is
  dropped;
- :func:`repeats_clarification`: an answer that asks again the clarification question
  the person just answered is no answer (Q8);
- :func:`says_only_the_question`: nor is one that only asks, or says back the
  person's own question (R9);
- :func:`says_yes_and_no_more`: nor is a yes (or a no) that says the question back
  and nothing else, when the library's own reading quotes what the context says;
- :func:`misses_the_figure`: nor is one that gives no figure to a question asking
  *when* or *how much*, where the library's own reading quotes a sentence that gives
  it (R9).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from toolweave.llm import offline_reading, prompts
from toolweave.llm.chat_messages import passage_label, passage_source
from toolweave.llm.chat_model import CUT_MARK
from toolweave.llm.citations import checkable
from toolweave.llm.lexical import ANSWER_WORDS, content_words, fold, matches
from toolweave.llm.offline_answer import answer_lines
from toolweave.llm.port import CITATION, AnswerRequest, cited_documents
from toolweave.llm.structured import looping_reply
from toolweave.state.documents import UniqueTextDocument
from toolweave.tools import text as kit


def uncovered_subject(request: AnswerRequest) -> str | None:
    """What the question asks about that the context cannot speak to, else ``None`` (R9).

    "Van fodrász a kórházban?" over a context that never names a hairdresser (in a
    sentence or a page title), or "Who is the head of the plastic surgery
    department?" over pages that name Surgery and never "plastic", with no guaranteed
    context: no sentence can answer (:func:`~toolweave.llm.offline_reading.uncovered_subject`).
    A model asked anyway says "Igen, a kórházban van fodrász." (the 1.5B model did) or
    names the head of Surgery, so no assistant is asked.

    Only over stored pages' sentences: a tool's own data ("kardiológia: 3 free beds"
    for "Van szabad ágy a kardiológián?", no sentence number) answers in the tool's
    words, maybe in another language, so the assistant reads it.

    A question of several parts (S6) is not covered only when no part is: each part
    (a subtask's prompt over its own documents, else each question the message joins,
    :func:`~toolweave.llm.offline_reading.question_parts`) is judged on its own, so
    one part the context lacks never takes the other's answer away.
    """
    if any(text.strip() for text in request.guaranteed):
        return None
    if any(d.sentence_number is None for d in request.documents):
        return None  # a tool's own data, not a page's sentence: it may say it its own way
    asked = [(p.prompt, p.documents or request.documents) for p in request.parts]
    if not asked:
        clauses = offline_reading.question_parts(request.question)
        asked = [(clause, request.documents) for clause in clauses]
    subjects = [_uncovered(question, _passages(docs)) for question, docs in asked]
    if any(subject is None for subject in subjects):
        return None
    return "; ".join(dict.fromkeys(s for s in subjects if s))


READING_SENTENCES = 4
"""Sentences the reading of :func:`reading_quotes` picks at most (the offline model's own)."""


def reading_quotes(request: AnswerRequest) -> UniqueTextDocument | None:
    """The first passage the offline reading quotes to answer the question, else ``None``.

    The library's own reading of the context (:mod:`~toolweave.llm.offline_answer`,
    no model call): a sentence of a stored page that answers the question, with
    nothing the question asks about left unnamed (:func:`uncovered_subject`). The
    deep fallback asks no gatekeeper when it finds one (A10, D1).
    """
    if uncovered_subject(request) is not None:
        return None
    lines = answer_lines(request, READING_SENTENCES)
    return next((doc for _, doc in lines if doc is not None and doc.sentence_number), None)


def misses_the_figure(answer: str, request: AnswerRequest) -> bool:
    """Whether ``answer`` gives no figure that its question asks for and the context holds.

    A question asking *when*, *how much*, *how many* or for a number
    (:func:`~toolweave.llm.offline_reading.asks_for_quantity`) is answered by a figure:
    a time, a day, an amount, a count. An answer without one, where the offline
    reading (:func:`reading_quotes`) quotes a sentence of a stored page that has one,
    has told something else about the subject (a small model answered "how much is
    the allowance?" with when it is paid). Any figure in the answer, or a reading that
    quotes none, leaves the answer as written: whether its figure is the right one is
    the citation check's to say (:func:`~toolweave.llm.citations.verify`).
    """
    question = request.question
    if not offline_reading.asks_for_quantity(question):
        return False
    time = offline_reading.asks_for_time(question)
    if offline_reading.figure_weight(CITATION.sub("", answer), time=time) > 0:
        return False
    quoted = reading_quotes(request)
    return quoted is not None and offline_reading.figure_weight(quoted.text, time=time) > 0


def uncovered_words(request: AnswerRequest) -> tuple[str, ...]:
    """The folded words of what the question asks about that no passage names (R9).

    :func:`~toolweave.llm.offline_reading.uncovered_subject` over the passages alone,
    guaranteed context or not ("szegedi" in "Mikor lehet látogatni a betegeket a
    szegedi kórházban?" over one hospital's pages, a deep search's reading beside them):
    a sentence restating it speaks of what the sources do not cover
    (:func:`~toolweave.llm.citations.verify`). Only over stored pages' sentences.
    """
    docs = request.documents
    if not docs or any(d.sentence_number is None for d in docs):
        return ()
    subject = _uncovered(request.question, _passages(docs))
    return tuple(fold(w) for w in content_words(subject or ""))


def _passages(docs: Sequence[UniqueTextDocument]) -> tuple[tuple[str, str], ...]:
    return tuple((d.document_name, d.text) for d in docs)


@functools.lru_cache(maxsize=16)
def _uncovered(question: str, passages: tuple[tuple[str, str], ...]) -> str | None:
    """:func:`~toolweave.llm.offline_reading.uncovered_subject`, once per question and context.

    The answer node asks it of one question and context twice, before the answer call
    (:func:`uncovered_subject`) and in the check of its sentences (:func:`uncovered_words`),
    and a constrained answer's stream a third time (PF1).
    """
    return offline_reading.uncovered_subject(question, passages)


def repeats_clarification(answer: str, request: AnswerRequest) -> str | None:
    """The clarification question ``answer`` asks again, else ``None`` (Q8).

    After the person answered "Which branch do you mean?", an answer that asks it again is no
    answer: the 1.5B model answered with the clarification question, word for word, in every such
    case of the hospital's set. The answer repeats it when it is that question, or when one of its
    own questions (a sentence ending in "?") holds a question of it word for word, or every key word
    of one ("Could you tell me which branch you mean?").
    """
    own = [_folded_words(s) for s in kit.split_sentences(answer) if s.rstrip().endswith("?")]
    whole = _folded_words(answer)
    for exchange in request.clarifications:
        for sentence in _questions(exchange.question):
            asked = _folded_words(sentence)
            keys = {fold(w) for w in content_words(sentence)}
            if whole == asked or any(
                _holds_run(said, asked) or (keys and keys <= set(said)) for said in own
            ):
                return exchange.question
    return None


def _folded_words(text: str) -> list[str]:
    return [fold(w) for w in kit.words(text)]


def _questions(text: str) -> list[str]:
    """The sentences of ``text`` that ask (end in "?"); all of it when none does."""
    asking = [s for s in kit.split_sentences(text) if s.rstrip().endswith("?")]
    return asking or [text]


def _holds_run(said: list[str], asked: list[str]) -> bool:
    """Whether ``asked`` occurs in ``said`` as a run of consecutive words."""
    size = len(asked)
    return size > 0 and any(said[i : i + size] == asked for i in range(len(said) - size + 1))


def says_only_the_question(answer: str, question: str) -> bool:
    """Whether ``answer`` only asks, or says ``question`` back: no sentence tells anything.

    A small model may answer with the question itself, or with a question of its own made of the
    question's words; either is no answer, whatever passage it cites. A sentence tells something
    unless it asks (ends in "?") or says the question back: it holds every content word of the
    question and no other, no figure (a number, time, phone number, address) the question does not
    hold, and does not open with a yes or a no.
    """
    sentences = _sentences(answer)
    return bool(sentences) and not _tells_beyond(sentences, question)


def says_yes_and_no_more(answer: str, request: AnswerRequest) -> bool:
    """Whether ``answer`` is a yes or a no and the question said back, where the context says more.

    "Yes, the clinic is open on Tuesday." to "Is the clinic open on Tuesday?" tells the person
    nothing they can check: not the hours, not the passage's words. When the offline reading
    (:func:`~toolweave.llm.offline_answer.answer_lines`) quotes the context for the question, it is
    the better answer: what the sources say, which answers the yes or no too. An answer that adds
    any word, figure or name of its own stands.
    """
    sentences = _sentences(answer)
    opened = [s for s in sentences if _opens_with_yes_or_no(s)]
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


def _opens_with_yes_or_no(sentence: str) -> bool:
    said = kit.words(sentence)
    return bool(said) and fold(said[0]) in ANSWER_WORDS


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


ECHO_LABEL = re.compile(r"^\s*(guaranteed context\b[^:\n]*|context)\s*:", re.I | re.M)
"""A line of an answer that begins as the answer prompt's own sections do."""


def echoes_prompt(answer: str, request: AnswerRequest) -> bool:
    """Whether ``answer`` copies the answer prompt's layout instead of answering.

    A small model may write back its prompt: the 0.5B model answered "When can I visit a patient in
    surgery?" with "Guaranteed context: (none)", "Context:" and all eight passages ("[1] Visiting
    hours, p. 1: On the Surgery ward …"). An answer echoes when a line begins with a section of the
    prompt ("Context:") or it holds a passage's own label (``[1] Visiting hours, p. 1: ``,
    :func:`~toolweave.llm.chat_messages.passage_label`), with or without its number when it names a
    page ("Kardiológiai vizsgálatok, p. 1: A Holter-készüléket …", the 0.5B model again; a bare
    "Kardiológia: " may be how an answer begins).
    """
    if ECHO_LABEL.search(answer):
        return True
    return any(
        passage_label(n, doc) in answer
        or (doc.page is not None and f"{passage_source(doc)}: " in answer)
        for n, doc in enumerate(request.documents, 1)
    )


def quoted_citations(answer: str, request: AnswerRequest) -> str:
    """What an answer of markers alone ("[3]") cites, quoted, each passage with its marker.

    A marker that names no context passage quotes nothing; when none does, the answer
    says the sources do not cover the question.
    """
    cited = cited_documents(answer, request.documents)
    number = {id(doc): n for n, doc in enumerate(request.documents, start=1)}
    lines = [f"{doc.text.strip()} [{number[id(doc)]}]" for doc in cited if doc.text.strip()]
    return "\n".join(lines) or prompts.no_information_answer(request.user_lang)


def cites_only(answer: str) -> bool:
    """Whether ``answer`` is citation markers and nothing else ("[3]"): no answer in words.

    The 1.5B model answered "Which phone number do I call to book a CT scan?" with
    "[3]" alone: it picked the passage and wrote nothing of it.
    """
    return bool(CITATION.search(answer)) and not any(
        ch.isalnum() for ch in CITATION.sub("", answer)
    )


def repeats_itself(answer: str) -> bool:
    """Whether ``answer`` is a loop: its tail, written three times or more (X3).

    The chat-model assistant closes such a stream as soon as it repeats
    (:func:`~toolweave.llm.structured.looping_reply`) and marks the answer with
    :data:`~toolweave.llm.chat_model.CUT_MARK`; an assistant that streams none is
    read the same way. What a loop said before it began to repeat is not kept either:
    a small model that loops has lost its thread.
    """
    return looping_reply(answer.removesuffix(CUT_MARK))


PLACEHOLDER_LINE = re.compile(r"^[ \t]*(?:null|none|nil|undefined)[ \t]*(?:\n|$)", re.I | re.M)
"""A line that is a code placeholder alone: JSON's ``null``, Python's ``None``."""


def without_placeholders(answer: str) -> str:
    """``answer`` without its lines that are a code placeholder alone ("null").

    The 1.5B model answered "I would like a callback from the radiology department."
    with a line "null" above the callback tool's text: the routing reply's word for
    no, written as an answer. No person reads "null" as anything.
    """
    return PLACEHOLDER_LINE.sub("", answer)

"""``OfflineAssistant``: a deterministic LLM port without any model (Hungarian and English).

Lexical routing, rule-based extraction, extractive answers. It lets the library,
its examples and tests run with no API key; it is not meant to match an LLM.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from types import MappingProxyType
from typing import ClassVar

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from toolweave.llm import offline_reading, prompts
from toolweave.llm.lexical import (
    FOLLOWUP_OPENERS,
    GREETINGS,
    QUESTION_WORDS,
    content_words,
    detect_language,
    fold,
    is_stopword,
    matches,
    weekday,
    words,
)
from toolweave.llm.offline_extract import extract_request
from toolweave.llm.offline_routing import (
    RoutingRule,
    offline_decision,
)
from toolweave.llm.passthrough import stream_message
from toolweave.llm.port import (
    AnswerPart,
    AnswerRequest,
    ContextVerdict,
    ExtractedRequest,
    LlmAssistant,
    Normalized,
    RoutingVerdict,
)
from toolweave.state.documents import UniqueTextDocument
from toolweave.tools import text as kit
from toolweave.tools.registry import AnyTool

OFFLINE_LABEL = "offline model (no LLM: lexical routing, extractive answers)"
_TEXTS = {
    "en": {"missing": "What is known about {word}?"},
    "hu": {"missing": "Mit tudunk erről: {word}?"},
    "pl": {"missing": "Co wiadomo o: {word}?"},
}


def _texts(lang: str) -> dict[str, str]:
    return _TEXTS.get(lang, _TEXTS["en"])


def _strip_opener(message: str) -> tuple[str, bool]:
    """The message without a follow-up opener ("and", "what about", "és", …)."""
    stripped = message.strip()
    folded = fold(stripped)
    for opener in FOLLOWUP_OPENERS:
        key = fold(opener)
        if folded == key or folded.startswith(key + " ") or folded.startswith(key + ","):
            return stripped[len(key) :].lstrip(" ,"), True
    return stripped, False


def _replace_word(text: str, old: str, new: str) -> str:
    pattern = re.compile(rf"(?<!\w){re.escape(old)}(?!\w)", re.IGNORECASE)
    return pattern.sub(lambda m: new.capitalize() if m.group()[0].isupper() else new, text, 1)


def _is_subject(word: str) -> bool:
    """A word that can be what a question is about (not a function, question or day word)."""
    return (
        not is_stopword(word)
        and word.casefold() not in QUESTION_WORDS
        and weekday(word) is None
        and not word.isdigit()
    )


POINTING_WORDS = frozenset(
    [
        "it",
        "its",
        "they",
        "their",
        "them",
        "there",
        "that",
        "this",
        "those",
        "these",
        "he",
        "she",
        "his",
        "her",
        "him",
        "ott",
        "oda",
        "onnan",
        "annak",
        "ennek",
        "erre",
        "arra",
        "ezt",
        "azt",
        "ők",
        "neki",
        "nála",
        "előtte",
        "utána",
    ]
)
"""Words of a follow-up that point back at the earlier question's subject."""
_SAME_WORD = MappingProxyType({"az": "a", "an": "a"})
"""Function words that are one word in two spellings (the article before a vowel)."""


def _function_word(token: str | None) -> str | None:
    if token is None or not is_stopword(token):
        return None
    return _SAME_WORD.get(token.casefold(), token.casefold())


def _neighbours(tokens: list[str], at: int) -> tuple[str | None, str | None]:
    """The function words right before and after ``tokens[at]`` (``None`` where there is none)."""
    before = _function_word(tokens[at - 1] if at > 0 else None)
    return before, _function_word(tokens[at + 1] if at + 1 < len(tokens) else None)


def _is_name(tokens: list[str], at: int) -> bool:
    """Whether ``tokens[at]`` is capitalised inside its sentence (a name, not a first word)."""
    return at > 0 and tokens[at][:1].isupper()


def _counterpart(text: str, new: str, body: list[str]) -> str | None:
    """The word of ``text`` that ``new`` takes the place of in a follow-up, if any.

    A day replaces the day, a number the number. Another word replaces the word
    of ``text`` in the same place: one with the same ending (``cardiology`` for
    ``neurology``), else one next to the same function word (``the gym`` for
    ``the sauna``, ``ibuprofen with`` for ``paracetamol with``, ``a kardiológián``
    for ``a sebészeten``), else, for a name, the earlier question's name.
    """
    candidates = content_words(text)
    day = weekday(new)
    if day is not None:
        return next((w for w in candidates if weekday(w) is not None), None)
    if new.isdigit():
        return next((w for w in candidates if w.isdigit()), None)
    rhyme = next((w for w in candidates if _same_ending(w, new) and weekday(w) is None), None)
    if rhyme is not None:
        return rhyme
    at = next((i for i, t in enumerate(body) if t.casefold() == new.casefold()), None)
    return None if at is None else _in_same_place(text, body, at)


def _same_ending(word: str, new: str) -> bool:
    """``word`` and ``new`` end in the same four letters or more (``-ology``, ``-ológián``)."""
    a, b = fold(word), fold(new)
    common = 0
    while common < min(len(a), len(b)) and a[-1 - common] == b[-1 - common]:
        common += 1
    return common >= 4


def _in_same_place(text: str, body: list[str], at: int) -> str | None:
    """The subject word of ``text`` beside the function word ``body[at]`` has, or its name."""
    before, after = _neighbours(body, at)
    tokens: list[str] = kit.TOKEN.findall(text)
    for i, token in enumerate(tokens):
        if not _is_subject(token):
            continue
        left, right = _neighbours(tokens, i)
        if (before is not None and left == before) or (after is not None and right == after):
            return token
    if body[at][:1].isupper():  # a name takes the place of a name
        return next(
            (t for i, t in enumerate(tokens) if _is_subject(t) and _is_name(tokens, i)), None
        )
    return None


def _add_day(text: str, phrase: str) -> str:
    """``text`` with ``phrase`` (``"on Friday"``, ``"pénteken"``) put before its final mark."""
    stripped = text.rstrip()
    mark = stripped[-1] if stripped and stripped[-1] in "?.!" else ""
    return f"{stripped.removesuffix(mark).rstrip()} {phrase}{mark}"


def resolve_followup(message: str, previous: str | None) -> str:
    """Turn a follow-up into a standalone question using the previous question (A1).

    What the follow-up changes replaces its counterpart in the previous question
    (:func:`_counterpart`), and a day it adds goes into the question: ``"and on
    Friday?"`` after ``"When are visiting hours at cardiology?"`` gives ``"When
    are visiting hours at cardiology on Friday?"``; ``"and the sauna?"`` after
    ``"When is the gym open on Saturday?"`` gives ``"When is the sauna open on
    Saturday?"``. Only words with no counterpart are appended.
    """
    return _resolve(message, previous)[0]


def _resolve(message: str, previous: str | None) -> tuple[str, bool]:
    """:func:`resolve_followup`, and whether the rules resolved the message completely.

    Not complete: words had to be appended, or a message with words pointing back
    (``it``, ``ott``) was left as it is.
    """
    if previous is None:
        return message, True
    body, opened = _strip_opener(message)
    new = content_words(body)
    asks = any(w in QUESTION_WORDS for w in words(body))
    tokens: list[str] = kit.TOKEN.findall(body)
    pointing = any(t.casefold() in POINTING_WORDS for t in tokens)
    if not (opened or (len(new) <= 2 and not asks)) or not new:
        return (message, not pointing) if new or not opened else (previous, True)
    if asks and len(new) >= 2 and not pointing:
        return body, True  # its own question, pointing back at nothing: it stands alone
    surface = {w.casefold(): w for w in tokens}
    result, extra = previous, []
    for word in new:
        if any(matches(word, old) for old in content_words(result)):
            continue
        written = surface.get(word, word)
        old = _counterpart(result, word, tokens)
        if old is not None:
            result = _replace_word(result, old, written)
        elif weekday(word) is not None:
            at = next(i for i, t in enumerate(tokens) if t.casefold() == word)
            before, _ = _neighbours(tokens, at)
            result = _add_day(result, f"{tokens[at - 1]} {written}" if before else written)
        else:
            extra.append(written)
    if extra:
        return f"{result.rstrip()} {' '.join(extra)}", False
    return result, True


def _previous_question(message: str, history: Sequence[BaseMessage]) -> str | None:
    """The earlier question ``message`` follows, each earlier message resolved in turn (A1).

    ``history`` may end with ``message`` itself (the graph's messages); it does not count.
    """
    asked = [m.text for m in history if isinstance(m, HumanMessage)]
    if asked and asked[-1].strip() == message.strip():
        asked.pop()
    previous: str | None = None
    for text in asked:
        previous = resolve_followup(text, previous)
    return previous


def resolved_by_rules(message: str, history: Sequence[BaseMessage]) -> bool:
    """Whether the offline rules turn ``message`` into a standalone question completely.

    Measured on the labelled follow-ups (``bench/followups.py``), their rewrite is
    right more often than a small model's; the graph asks a model that reads
    messages rules-first (``normalizes_first_message = False``) only for the rest.
    """
    previous = _previous_question(message, history)
    return _resolve(message, previous)[1]


def normalize_offline(
    message: str, history: Sequence[BaseMessage], *, default_lang: str = "en"
) -> Normalized:
    """Normalization without a model: language by the detector, follow-ups by rules (A1, T10).

    The chat-model assistant reads a first message this way too: it has nothing to
    rewrite, so a model call would buy nothing (A10).
    """
    previous = _previous_question(message, history)
    question = resolve_followup(message, previous)
    lang = detect_language(message, default="")
    if not lang:
        lang = detect_language(previous or "", default=default_lang)
    important = [w for w in content_words(question) if w not in GREETINGS]
    greeting = any(w in GREETINGS for w in words(message))
    prompt_type = "smalltalk" if greeting and not important else "factual"
    return Normalized(
        question=question,
        user_lang=lang,
        important_words=tuple(important),
        prompt_type=prompt_type,
    )


class OfflineAssistant(LlmAssistant):
    """Deterministic assistant without an LLM: lexical routing, extractive answers.

    Example:
        >>> assistant = OfflineAssistant()
        >>> assistant.normalize("Mikor van rendelés pénteken?", []).user_lang
        'hu'
    """

    local_extraction: ClassVar[bool] = True
    inline_async: ClassVar[bool] = True
    """CPU only and quick: the async twins run the sync methods inline (no worker thread)."""

    def __init__(
        self,
        *,
        routing: RoutingRule | None = None,
        max_sentences: int = 4,
        coverage: float = 0.5,
        history_window: int = 6,
    ) -> None:
        """Configure the heuristics.

        Args:
            routing: The routing decision's thresholds (default: the fitted
                :class:`~toolweave.llm.offline_routing.RoutingRule`).
            max_sentences: Context sentences an answer quotes at most.
            coverage: Share of the question's words the context must contain (D1).
            history_window: Earlier messages a follow-up is resolved against (A1).
        """
        self.label = OFFLINE_LABEL
        self.routing = routing or RoutingRule()
        self.max_sentences = max_sentences
        self.coverage = coverage
        self.history_window = history_window

    def normalize(
        self, message: str, history: Sequence[BaseMessage], *, default_lang: str = "en"
    ) -> Normalized:
        """Language by stopwords and letters; follow-ups rewritten from history (A1)."""
        return normalize_offline(
            message, history[-self.history_window :], default_lang=default_lang
        )

    def route(self, task_prompt: str, tools: Sequence[AnyTool]) -> list[RoutingVerdict]:
        """A tool runs when the task's words match its routing question and description.

        Scores and the decision rule are :mod:`~toolweave.llm.offline_routing`'s: a word
        weighs less the more candidates share it, and a tool runs when its score is high
        enough, close enough to the best and explains enough of the task
        (:class:`~toolweave.llm.offline_routing.RoutingRule`, fitted on a labelled set).
        """
        scores, held, abstain, winner, routed = offline_decision(task_prompt, tools, self.routing)
        verdicts: list[RoutingVerdict] = []
        for tool in tools:
            found = scores.get(tool.name)
            if found is None:
                verdicts.append(RoutingVerdict(tool.name, False, "no routing question"))
                continue
            reason = (
                f"matched: {', '.join(found.hits)} (score {found.score:.2f}, "
                f"coverage {found.coverage:.0%})"
                if found.hits
                else "no matching words"
            )
            if tool.name == winner:
                reason = "the clear winner of the candidate ranking"
            if abstain:
                reason = "a pasted error message or a definitional question: no request"
            if tool.name in held:
                reason += "; a finished answer needs its declared intent (A9)"
            verdicts.append(RoutingVerdict(tool.name, tool.name in routed, reason))
        return verdicts

    def generate_tool_request(
        self, user_prompt: str, system_prompt: str, tasks: str | None, tool: AnyTool
    ) -> dict[str, ExtractedRequest]:
        """Fill the request model's fields from ``user_prompt`` by rules (T7)."""
        return {tool.name: extract_request(user_prompt, tool.request_model)}

    def answer(self, request: AnswerRequest) -> AIMessage:
        """Quote the context sentences that answer the question, each part of it (A7, S6).

        Sentences are picked by :func:`~toolweave.llm.offline_reading.answering`
        (:meth:`_pick`), for the whole question and for each question it joins
        (:func:`~toolweave.llm.offline_reading.question_parts`: "When is it open on
        Sunday and how much is the membership?"). A question split into subtasks is
        answered part by part, each from its own results (:meth:`_reading`). The
        person's clarification replies are part of the question (Q8). With no such
        sentence and no guaranteed text the answer says plainly, in the user's
        language, that the sources do not cover the question. The sources are not
        part of the text: :meth:`answer_sources` names the documents of the quoted
        sentences (R9).
        """
        lines = [text for text, _ in self._reading(request)]
        if not lines:
            return stream_message(prompts.no_information_answer(request.user_lang))
        return stream_message("\n".join(lines))

    def answer_sources(self, request: AnswerRequest, answer: str) -> list[UniqueTextDocument]:
        """The documents of the sentences :meth:`answer` quoted, in answer order (R9).

        A guaranteed text that is a context sentence word for word quotes that sentence.
        """
        guaranteed = {t.strip() for t in request.guaranteed}
        quoted = [d for d in request.documents if d.text.strip() in guaranteed]
        picked = [doc for _, doc in self._reading(request) if doc is not None]
        return list(dict.fromkeys([*quoted, *picked]))

    def _reading(self, request: AnswerRequest) -> list[tuple[str, UniqueTextDocument | None]]:
        """The answer's lines, each with the document it quotes (``None``: a guaranteed text).

        Without parts: the guaranteed texts, then the sentences answering the question
        with its clarification replies (Q8), or, when none does, the question alone
        (a reply in other words than the context's). With parts (S6): per part, its guaranteed
        texts and the sentences of its own documents answering its prompt (of the whole
        context when its own answer nothing); then the guaranteed texts of no part (a
        deep search's answers). When no part finds anything, the whole question is read
        from the whole context.
        """
        whole = AnswerPart(request.question, request.documents, request.guaranteed)
        replies = "" if request.parts else request.replies
        lines: list[tuple[str, UniqueTextDocument | None]] = []
        for part in request.parts or (whole,):
            lines += [(text.strip(), None) for text in part.guaranteed if text.strip()]
            picked = self._read(part.prompt, part.documents, replies)
            if not picked and not part.guaranteed:
                picked = self._read(part.prompt, request.documents, replies)
            lines += [(c.text, c.source) for c in picked]
        if request.parts and not lines:
            picked = self._read(request.question, request.documents, request.replies)
            lines = [(c.text, c.source) for c in picked]
        if not request.parts and replies and not any(doc for _, doc in lines):
            # the replies in words the context does not use ("Cardiology" for a page
            # that says "Kardiológia"): the tool understood them; read the question alone
            lines += [(c.text, c.source) for c in self._read(request.question, request.documents)]
        lines += [(text.strip(), None) for text in request.guaranteed if text.strip()]
        kept: dict[str, UniqueTextDocument | None] = {}
        for text, doc in lines:  # each line once, where it first comes
            kept.setdefault(text, doc)
        return list(kept.items())

    def _read(
        self, question: str, documents: Sequence[UniqueTextDocument], replies: str = ""
    ) -> list[offline_reading.Candidate[UniqueTextDocument]]:
        """The sentences answering ``question`` and each question it joins (S6), in that order.

        "When is the library open on Sunday and how much is the annual membership?":
        the whole question's sentences (the Sunday hours), then those of each of its
        questions not quoted yet (the membership fee). ``replies``, the person's
        clarification replies, belong to each (Q8).
        """
        picked = self._pick(f"{question} {replies}".strip(), documents)
        clauses = offline_reading.question_parts(question)
        if len(clauses) < 2:
            return picked
        seen = {(id(c.source), c.text) for c in picked}
        for clause in clauses:
            for candidate in self._pick(f"{clause} {replies}".strip(), documents):
                if (id(candidate.source), candidate.text) not in seen:
                    seen.add((id(candidate.source), candidate.text))
                    picked.append(candidate)
        return picked

    def _pick(
        self, question: str, documents: Sequence[UniqueTextDocument]
    ) -> list[offline_reading.Candidate[UniqueTextDocument]]:
        """The sentences that answer ``question``, in context order (none when none does)."""
        by_number = {
            (d.document_id, d.page, d.sentence_number): d.text.strip()
            for d in documents
            if d.sentence_number
        }
        candidates: list[offline_reading.Candidate[UniqueTextDocument]] = []
        for doc in documents:
            if doc.sentence_number:
                earlier = [
                    by_number.get((doc.document_id, doc.page, doc.sentence_number - back))
                    for back in range(1, offline_reading.ANTECEDENT_REACH + 1)
                ]
                runs: list[tuple[Sequence[str | None], str]] = [(earlier, doc.text.strip())]
            else:
                sentences = kit.split_sentences(doc.text)
                runs = [(sentences[:i][::-1], s) for i, s in enumerate(sentences)]
            for before, sentence in runs:
                if sentence:
                    candidates.append(
                        offline_reading.Candidate(
                            doc,
                            sentence,
                            doc.document_name,
                            doc.sentence_score,
                            (before[0] or "") if before else "",
                            offline_reading.antecedent_of(sentence, before),
                        )
                    )
        best = offline_reading.answering(question, candidates)[: self.max_sentences]
        order = {id(c): i for i, c in enumerate(candidates)}
        return sorted(best, key=lambda c: order[id(c)])

    def read_passage(self, question: str, passage: str, *, user_lang: str) -> str | None:
        """The passage's sentences holding at least half the question's words, or ``None``.

        A sentence is read with its headings (title and section); a question asking
        *when* or *how much* takes only sentences with a figure (see ``offline_reading``).
        """
        return offline_reading.read(question, passage, max_sentences=self.max_sentences)

    def judge_context(
        self,
        question: str,
        documents: Sequence[UniqueTextDocument],
        guaranteed: Sequence[str],
    ) -> ContextVerdict:
        """Sufficient when the context contains enough of the question's words (D1).

        A question asking *when* or *how much* also needs a context sentence about
        it that holds a figure; if none does, the question itself is the missing piece.
        Otherwise each question word the context lacks is a piece, searched by the
        question's words (its rewrite, D8); the deep search adds the documents' words
        near them.
        """
        wanted = [w for w in content_words(question) if w not in GREETINGS]
        if not wanted:
            return ContextVerdict(sufficient=True)
        have = content_words(" ".join([*guaranteed, *(d.text for d in documents)]))
        if not have:
            return ContextVerdict(sufficient=False, missing=(question,))
        uncovered = [w for w in wanted if not any(matches(w, h) for h in have)]
        if 1 - len(uncovered) / len(wanted) >= self.coverage:
            ordered = sorted(documents, key=lambda d: d.sentence_number or 0)
            runs = offline_reading.page_runs((d.document_id, d.page, d.text) for d in ordered)
            if offline_reading.lacks_figure(question, [*([g] for g in guaranteed), *runs]):
                return ContextVerdict(sufficient=False, missing=(question,))
            return ContextVerdict(sufficient=True)
        template = _texts(detect_language(question))["missing"]
        pieces = [template.format(word=w) for w in uncovered]
        # D8: each piece is searched by the question's words together (one word alone
        # reads any sentence that has it); the search adds the documents' words near them
        search = (" ".join(wanted),)
        return ContextVerdict(
            sufficient=False, missing=tuple(pieces), rewrites=dict.fromkeys(pieces, search)
        )

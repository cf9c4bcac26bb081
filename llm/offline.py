"""``OfflineAssistant``: a deterministic LLM port without any model, one module per concern."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import ClassVar

from langchain_core.messages import AIMessage, BaseMessage

from toolweave.llm import offline_reading, prompts
from toolweave.llm.domain_words import DomainWords
from toolweave.llm.lexical import content_words, detect_language, matches
from toolweave.llm.offline_extract import extract_request
from toolweave.llm.offline_followup import normalize_offline as normalize_offline
from toolweave.llm.offline_followup import resolve_followup as resolve_followup
from toolweave.llm.offline_followup import resolved_by_rules as resolved_by_rules
from toolweave.llm.offline_reading import answer_lines
from toolweave.llm.offline_routing import RoutingRule, offline_decision
from toolweave.llm.passthrough import stream_message
from toolweave.llm.port import (
    AnswerRequest,
    ContextVerdict,
    ExtractedRequest,
    LlmAssistant,
    Normalized,
    RoutingVerdict,
)
from toolweave.state.documents import UniqueTextDocument
from toolweave.tools.language import OwnLanguage
from toolweave.tools.language import detect_language as guess_language
from toolweave.tools.registry import AnyTool

OFFLINE_LABEL = "offline model (no LLM: lexical routing, extractive answers)"
_MISSING = {
    "en": "What is known about {word}?",
    "hu": "Mit tudunk erről: {word}?",
    "pl": "Co wiadomo o: {word}?",
    "fr": "Que sait-on de : {word} ?",
}
"""The gatekeeper's missing piece for a word the context lacks, by the question's language."""


def missing_template(question: str, own: OwnLanguage | None = None) -> str:
    """The missing piece's form for ``question`` (D1, T10).

    A question in the domain's own language (``own``, one no kit knows) gets its piece in
    that language if the library has one, else the word alone ("tarifários"), never a
    kit language's sentence ("What is known about tarifários?", "Mit tudunk erről: vou?").
    """
    if own is not None and guess_language(question, own).lang in (None, own.lang):
        return _MISSING.get(own.lang, "{word}")
    return _MISSING.get(detect_language(question), _MISSING["en"])


class OfflineAssistant(LlmAssistant):
    """Deterministic assistant without an LLM: lexical routing, extractive answers.

    Example:
        >>> assistant = OfflineAssistant()
        >>> assistant.normalize("Mikor van rendelés pénteken?", []).user_lang
        'hu'
    """

    local_extraction: ClassVar[bool] = True
    inline_async: ClassVar[bool] = True
    free_calls: ClassVar[bool] = True
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
        self.domain_words = DomainWords()

    def for_domain(self, words: DomainWords) -> OfflineAssistant:
        """A copy that drops the domain's own ``words`` from what it routes and reads (N1)."""
        if words == self.domain_words:
            return self
        adapted = copy.copy(self)
        adapted.domain_words = words
        return adapted

    def normalize(
        self, message: str, history: Sequence[BaseMessage], *, default_lang: str = "en"
    ) -> Normalized:
        """Language by stopwords and letters; follow-ups rewritten from history (A1)."""
        return normalize_offline(
            message, history[-self.history_window :], default_lang=default_lang
        )

    def route(self, task_prompt: str, tools: Sequence[AnyTool]) -> list[RoutingVerdict]:
        """A tool runs when the task's words match its texts (:class:`RoutingRule`)."""
        asked = self.domain_words.asked(task_prompt)  # N1, T12: stop words are no evidence
        scores, held, abstain, winner, routed = offline_decision(asked, tools, self.routing)
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
        """Quote the context sentences that answer the question, each part of it (A7, S6, Q8)."""
        lines = "\n".join(text for text, _ in answer_lines(request, self.max_sentences))
        return stream_message(
            lines or prompts.no_information_answer(request.user_lang, request.texts)
        )

    def answer_sources(self, request: AnswerRequest, answer: str) -> list[UniqueTextDocument]:
        """The documents of the sentences :meth:`answer` quoted, in answer order (R9)."""
        guaranteed = {t.strip() for t in request.guaranteed}
        quoted = [d for d in request.documents if d.text.strip() in guaranteed]
        picked = [doc for _, doc in answer_lines(request, self.max_sentences) if doc is not None]
        return list(dict.fromkeys([*quoted, *picked]))

    def read_passage(self, question: str, passage: str, *, user_lang: str) -> str | None:
        """The passage's sentences holding at least half the question's words, or ``None`` (D3)."""
        return offline_reading.read(question, passage, max_sentences=self.max_sentences)

    def judge_context(
        self, question: str, documents: Sequence[UniqueTextDocument], guaranteed: Sequence[str]
    ) -> ContextVerdict:
        """Sufficient when the context contains enough of the question's words (D1, D8).

        The store's stop words are no word the context must hold, nor a missing piece
        (N1, D1: "What is known about quels?" for a French question).
        """
        asked = self.domain_words.asked(question)
        wanted = offline_reading.wanted_words(asked)
        if not wanted:
            return ContextVerdict(sufficient=True)
        have = content_words(" ".join([*guaranteed, *(d.text for d in documents)]))
        if not have:
            return ContextVerdict(sufficient=False, missing=(question,))
        uncovered = [w for w in wanted if not any(matches(w, h) for h in have)]
        if 1 - len(uncovered) / len(wanted) >= self.coverage:
            texts = offline_reading.context_runs(documents, guaranteed)
            # D1, D8: words spread over pages on other subjects do not answer; one page must
            # say the covered share of the words and of the subject words, and a question
            # asking for a kind of fact ("when", "how much", an e-mail) that kind about it
            on_one_page = offline_reading.one_page_says(asked, texts, self.coverage)
            if not on_one_page or offline_reading.lacks_asked_kind(question, texts):
                return ContextVerdict(sufficient=False, missing=(question,))
            return ContextVerdict(sufficient=True)
        template = missing_template(question, self.domain_words.language)
        pieces = [template.format(word=w) for w in uncovered]
        # D8: each piece is searched by the question's words together (one word alone
        # reads any sentence that has it); the search adds the documents' words near them
        search = (" ".join(wanted),)
        return ContextVerdict(
            sufficient=False, missing=tuple(pieces), rewrites=dict.fromkeys(pieces, search)
        )

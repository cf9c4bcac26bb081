"""The LLM port: what the orchestrator asks of a language model (T5, T7, A1, D1, A7)."""

from __future__ import annotations

import asyncio
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Concatenate, ParamSpec, TypeAlias, TypeVar, cast

from langchain_core.messages import AIMessage, BaseMessage
from pydantic import BaseModel

from toolweave.llm.domain_words import DomainWords
from toolweave.llm.offline_extract import extract_request
from toolweave.state.documents import UniqueTextDocument
from toolweave.tools.effects import Steps, adrive, call, drive, perform
from toolweave.tools.registry import AnyTool
from toolweave.tools.texts import Texts

P = ParamSpec("P")
T = TypeVar("T")
Tools: TypeAlias = Sequence[AnyTool]
"""The candidate tools of one call."""
ExtractedRequest = dict[str, Any] | None
"""A tool's request as extracted from text, before validation into ``request_model``."""


@dataclass(frozen=True)
class Normalized:
    """The outcome of normalizing one user message (A1, T10)."""

    question: str
    """A standalone question: a follow-up is rewritten from the earlier turns (A1)."""
    user_lang: str
    """ISO 639-1 code of the user's language, e.g. ``"hu"`` or ``"en"`` (T10)."""
    important_words: tuple[str, ...] = ()
    """Key words of the question."""
    prompt_type: str | None = None
    """Kind of question, e.g. ``"factual"``, ``"smalltalk"`` (D2)."""


@dataclass(frozen=True)
class RoutingVerdict:
    """The routing model's yes/no for one candidate tool (T5)."""

    tool: str
    run: bool
    reason: str = ""
    best: bool = False
    """Whether the model named this tool the one that fits the task best (T5)."""
    confidence: float | None = None
    """P(yes) read from the model's log-probabilities (``llm.confidence``); ``None``: none given."""


@dataclass(frozen=True)
class Activation:
    """Routing verdicts for a task's candidates and, where fused, their requests."""

    verdicts: tuple[RoutingVerdict, ...]
    """One verdict per candidate tool, in the order the tools were given."""
    requests: Mapping[str, ExtractedRequest] = field(default_factory=dict)
    """Requests extracted in the same pass, keyed by tool name (routed tools only)."""
    llm_calls: int = 1
    """How many model calls the activation spent (the benchmark reports it)."""
    search_words: str = ""
    """Search words the routing call gave, in the documents' language (D9); ``""``: none."""
    formless: frozenset[str] = frozenset()
    """Tools asked in a fused call without their request form (A10: a long form rides with the
    best-ranked candidate only); a yes is filled when the tool runs."""

    def routed(self) -> list[str]:
        """Names of the tools the model said yes to, in the order given."""
        return [v.tool for v in self.verdicts if v.run]


@dataclass(frozen=True)
class DecompositionSchema:
    """What one coordinator asks the model to fill from a task prompt alone (C1, M2)."""

    name: str
    """The coordinator's name: the key of its value in :class:`Decompositions`."""
    model: type[BaseModel]
    """The decomposition schema (a pydantic model)."""
    instruction: str = ""
    """What to fill, in words for the model; the fields' descriptions add to it."""


@dataclass(frozen=True)
class Decompositions:
    """The filled decomposition schemas of one task prompt, and what they cost."""

    values: Mapping[str, dict[str, Any] | None]
    """Coordinator name → the schema's fields as JSON data; ``None`` when not filled."""
    llm_calls: int = 0
    """Model calls spent (0 when filled without a model, as offline)."""


def extract_decompositions_offline(
    task_prompt: str, schemas: Sequence[DecompositionSchema]
) -> Decompositions:
    """Fill every schema from the text without a model (the offline extraction, T7)."""
    return Decompositions(
        values={schema.name: extract_request(task_prompt, schema.model) for schema in schemas}
    )


@dataclass(frozen=True)
class ContextVerdict:
    """The context gatekeeper's verdict (D1), with the words to search each gap by (D8)."""

    sufficient: bool
    missing: tuple[str, ...] = ()
    """The pieces of information the context lacks, one sub-question each."""
    rewrites: Mapping[str, tuple[str, ...]] = field(default_factory=dict, hash=False)
    """Per missing piece, 1-3 phrasings of it in the documents' words and language (D8).

    The deep search looks a piece up by these; one without any by words from the documents.
    """

    def phrasings(self, piece: str) -> tuple[str, ...]:
        """The rewrites of ``piece`` (empty when the gatekeeper gave none)."""
        return tuple(self.rewrites.get(piece, ()))


@dataclass(frozen=True)
class AnswerPart:
    """One part of a question a coordinator split into subtasks, with its own results (S6)."""

    prompt: str
    """The subtask's own prompt (``task_prompt``), e.g. "How much is the annual fee?"."""
    documents: Sequence[UniqueTextDocument] = ()
    """The part's documents: those of :attr:`AnswerRequest.documents` its results hold."""
    guaranteed: Sequence[str] = ()
    """The part's guaranteed context texts (also in :attr:`AnswerRequest.guaranteed`)."""


@dataclass(frozen=True)
class ClarificationExchange:
    """A clarification question the person was asked in this request, and their reply (Q8)."""

    question: str
    """What the tool asked, e.g. "Which branch do you mean?"."""
    reply: str
    """What the person replied, e.g. "Central" (a choice's number read as that choice)."""
    asker: str = ""
    """Who asked, as ``"task_no:tool_name"`` (``""``: not known); only its last reply counts."""


@dataclass(frozen=True)
class AnswerRequest:
    """Everything the final answer is generated from (A7, T8, S6, Q8)."""

    question: str
    user_lang: str
    system_prompt: str
    """Domain prompt plus the supplements of the activated tools (T8)."""
    documents: Sequence[UniqueTextDocument]
    """Deduplicated RAG context (R2, R6)."""
    guaranteed: Sequence[str]
    """Guaranteed context texts; never dropped (R5, M6)."""
    history: Sequence[BaseMessage] = ()
    """Earlier turns before this question (not its clarifications: :attr:`clarifications`)."""
    parts: Sequence[AnswerPart] = ()
    """The parts of a question a coordinator split into subtasks, in order (S6), each answered."""
    clarifications: Sequence[ClarificationExchange] = ()
    """This request's clarification questions and replies, in order (Q8): never asked again."""
    failing: Sequence[str] = ()
    """Sentences of an earlier answer its cited passages do not support (R9): asked once more."""
    texts: Texts = field(default_factory=dict)
    """The domain's own sentences for people (``Domain.texts``): "no information" in its
    languages (:func:`toolweave.llm.prompts.no_information_answer`)."""
    domain_words: DomainWords = field(default_factory=DomainWords)
    """The domain's own words: rules that read the context for the question do not look for
    its store's stop words (:meth:`DomainWords.asked`; N1, T12)."""

    @property
    def guaranteed_texts(self) -> list[str]:
        """The guaranteed context texts that say something, stripped, in order (R5)."""
        return [text.strip() for text in self.guaranteed if text.strip()]

    @property
    def first_cited(self) -> int:
        """The first document's number in a citing answer's context: after the guaranteed texts."""
        return len(self.guaranteed_texts) + 1

    @property
    def replies(self) -> str:
        """The person's clarification replies in force (each asker's last), in order (Q8)."""
        last = {(c.asker or str(n)): c for n, c in enumerate(self.clarifications)}
        return " ".join(c.reply.strip() for c in last.values() if c.reply.strip())

    @property
    def asked(self) -> str:
        """The question with the person's clarification replies after it (Q8)."""
        return " ".join(t for t in (self.question.strip(), self.replies) if t)


CITATION = re.compile(r"\[\s*(\d+(?:\s*[,;]\s*\d+)*)\s*\]")
"""A citation marker of an answer: ``[4]``, ``[1, 3]``."""
UNSTREAMED = "toolweave_unstreamed"
"""``response_metadata`` key of an answer not streamed yet (R9): the node streams it (P2)."""


def cited_ids(text: str) -> list[int]:
    """The numbers the citation markers of ``text`` give, in order (1-based)."""
    return [int(n) for marker in CITATION.finditer(text) for n in re.split(r"[,;]", marker[1])]


def cited_documents(
    answer: str, documents: Sequence[UniqueTextDocument]
) -> list[UniqueTextDocument]:
    """The documents ``answer`` cites by number (1-based), in the order first cited (R9)."""
    cited = dict.fromkeys(n - 1 for n in cited_ids(answer) if 0 < n <= len(documents))
    return [documents[index] for index in cited]


def _async_twin(
    method: Callable[Concatenate[Any, P], T],
) -> Callable[Concatenate[Any, P], Coroutine[Any, Any, T]]:
    """The default async twin of a port method: the assistant's own method, off the loop."""
    name = method.__name__

    async def twin(self: LlmAssistant, /, *args: P.args, **kwargs: P.kwargs) -> T:
        own: Callable[P, T] = getattr(self, name)
        if self.inline_async:
            return own(*args, **kwargs)
        return await asyncio.to_thread(own, *args, **kwargs)

    twin.__name__ = twin.__qualname__ = f"a{name}"
    twin.__doc__ = f"Async :meth:`{name}`; the default runs it off the event loop."
    return twin


def _steps_of(method: Callable[Concatenate[Any, P], T]) -> Callable[Concatenate[Any, P], Steps[T]]:
    """The default steps of a port method: one call of the assistant's own method pair."""
    name = method.__name__

    def steps(self: LlmAssistant, /, *args: P.args, **kwargs: P.kwargs) -> Steps[T]:
        pair = call(getattr(self, name), getattr(self, f"a{name}"), *args, **kwargs)
        return cast(T, (yield from perform(pair)))

    steps.__name__ = steps.__qualname__ = f"{name}_steps"
    steps.__doc__ = f":meth:`{name}` as steps."
    return steps


class LlmAssistant(ABC):
    """The language-model port of the orchestrator (``ILlmAssistant``).

    Every method has a sync, an async (``a``-prefixed) and a steps (``_steps``) form: override the
    sync methods (and native async twins), or the steps methods. Keep no per-request state on it.
    """

    label: str = "LLM"
    """What answers, in words for people (the CLI prints it)."""
    local_extraction: ClassVar[bool] = False
    """True when extraction costs no model call of its own: an activation counts as one call."""
    inline_async: ClassVar[bool] = False
    """True when the sync methods are quick and CPU-only: the async twins run them inline."""
    free_calls: ClassVar[bool] = False
    """True when a call costs no model time (in-process rules, like the offline model): the
    deep-fallback cap (D7, ``Limits.deep_fallback_llm_calls``) does not count its page reads."""
    normalizes_first_message: ClassVar[bool] = True
    """False: the graph reads a message with the offline rules whenever they suffice, and sends
    only the rest to :meth:`normalize` (A10, A1)."""

    def for_domain(self, words: DomainWords) -> LlmAssistant:
        """This assistant for a domain whose own ``words`` are no evidence (N1, T12).

        A model reads them in context and returns itself; rules that weigh words (the offline
        model) drop them from what they read.
        """
        return self

    def scores_routing(self) -> bool:
        """Whether routing verdicts come with a P(yes) (``RoutingVerdict.confidence``)."""
        return False

    @abstractmethod
    def normalize(
        self, message: str, history: Sequence[BaseMessage], *, default_lang: str = "en"
    ) -> Normalized:
        """Language, key words, prompt type and a standalone question (A1, T10)."""

    @abstractmethod
    def route(self, task_prompt: str, tools: Tools) -> list[RoutingVerdict]:
        """One call answering every candidate's routing question at once (T5, M2)."""

    @abstractmethod
    def generate_tool_request(
        self, user_prompt: str, system_prompt: str, tasks: str | None, tool: AnyTool
    ) -> dict[str, ExtractedRequest]:
        """Constrained extraction of ``tool``'s request (T7), keyed by the tool's name.

        ``system_prompt`` may hold ``{tasks}`` and ``{instruction}`` (the tool's) to be filled.
        """

    def route_and_extract(
        self, task_prompt: str, execution_text: str, tools: Tools, *, extraction_prompt: str
    ) -> Activation:
        """Route, then extract the routed tools' requests.

        Assistants that fuse both into one structured call override it (the 3-call target).
        """
        return drive(self.route_then_extract(task_prompt, execution_text, tools, extraction_prompt))

    def extract_decompositions(
        self, task_prompt: str, schemas: Sequence[DecompositionSchema]
    ) -> Decompositions:
        """Fill the coordinators' decomposition schemas from ``task_prompt`` alone (C1, M2).

        The default fills them without a model (:func:`extract_decompositions_offline`).
        """
        return extract_decompositions_offline(task_prompt, schemas)

    def judge_context(
        self, question: str, documents: Sequence[UniqueTextDocument], guaranteed: Sequence[str]
    ) -> ContextVerdict:
        """The context gatekeeper (D1); the default says the context suffices."""
        return ContextVerdict(sufficient=True)

    def read_passage(self, question: str, passage: str, *, user_lang: str) -> str | None:
        """Answer ``question`` from ``passage`` alone, or ``None`` (D3, D5); the default cannot."""
        return None

    def answer_sources(self, request: AnswerRequest, answer: str) -> list[UniqueTextDocument]:
        """The documents of ``request.documents`` that ``answer`` used, in answer order (R9).

        The default reads the ``[n]`` markers (1-based); no marker, nothing used.
        """
        return cited_documents(answer, request.documents)

    @abstractmethod
    def answer(self, request: AnswerRequest) -> AIMessage:
        """Generate the final answer, streaming its tokens through a LangChain chat model.

        Called inside a graph node, so the tokens reach ``stream_mode="messages"`` (P2); return the
        message as streamed (same id), e.g. by :func:`toolweave.llm.passthrough.stream_message`.
        """

    # -- async twins: the graph's steps await these under ainvoke/astream ---------------

    anormalize = _async_twin(normalize)
    aroute = _async_twin(route)
    agenerate_tool_request = _async_twin(generate_tool_request)

    async def aroute_and_extract(
        self, task_prompt: str, execution_text: str, tools: Tools, *, extraction_prompt: str
    ) -> Activation:
        """Async :meth:`route_and_extract`, over the async routing and extraction."""
        steps = self.route_then_extract(task_prompt, execution_text, tools, extraction_prompt)
        return await adrive(steps)

    aextract_decompositions = _async_twin(extract_decompositions)
    ajudge_context = _async_twin(judge_context)
    aread_passage = _async_twin(read_passage)
    aanswer = _async_twin(answer)

    # -- steps: what the graph yields from; the defaults call the sync/async pair ------

    normalize_steps = _steps_of(normalize)
    route_steps = _steps_of(route)
    generate_tool_request_steps = _steps_of(generate_tool_request)

    def route_and_extract_steps(
        self,
        task_prompt: str,
        execution_text: str,
        tools: Tools,
        *,
        extraction_prompt: str,
        search_language: str | None = None,
    ) -> Steps[Activation]:
        """Steps of :meth:`route_and_extract`; ``search_language`` asks for search words (D9)."""
        if self._brings("route_and_extract") or self._brings("aroute_and_extract"):
            pair = call(
                self.route_and_extract,
                self.aroute_and_extract,
                task_prompt,
                execution_text,
                tools,
                extraction_prompt=extraction_prompt,
            )
            return (yield from perform(pair))
        steps = self.route_then_extract(task_prompt, execution_text, tools, extraction_prompt)
        return (yield from steps)

    extract_decompositions_steps = _steps_of(extract_decompositions)
    judge_context_steps = _steps_of(judge_context)
    read_passage_steps = _steps_of(read_passage)
    answer_steps = _steps_of(answer)

    def route_then_extract(
        self, task_prompt: str, execution_text: str, tools: Tools, extraction_prompt: str
    ) -> Steps[Activation]:
        """Route, then extract each routed tool's request: the default activation's steps."""
        verdicts = tuple((yield from self.route_steps(task_prompt, tools)))
        by_name = {tool.name: tool for tool in tools}
        requests: dict[str, ExtractedRequest] = {}
        calls = 1
        for name in (v.tool for v in verdicts if v.run):
            tool = by_name.get(name)
            if tool is None or not tool.request_model.model_fields:
                continue
            extracted = yield from self.generate_tool_request_steps(
                execution_text, extraction_prompt, None, tool
            )
            requests[name] = extracted.get(name)
            calls += 0 if self.local_extraction else 1
        return Activation(verdicts=verdicts, requests=requests, llm_calls=calls)

    def _brings(self, name: str) -> bool:
        """Whether the method ``name`` is this assistant's own, not the port's default."""
        return name in vars(self) or getattr(type(self), name) is not getattr(LlmAssistant, name)

"""``ChatModelAssistant``: the LLM port over any LangChain chat model, each call as steps."""

from __future__ import annotations

import functools
import logging
import re
import uuid
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import replace
from typing import Any, ClassVar, Concatenate, ParamSpec, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, SecretStr, ValidationError

from toolweave.llm import prompts, retries, structured
from toolweave.llm.chat_messages import (
    cached_tools_block,
    cited_context,
    dialogue,
    format_context,
    format_exchanges,
    format_history,
    part_lines,
    verdicts,
)
from toolweave.llm.citations import citation_schema, marked_text, reply_claims
from toolweave.llm.cited_stream import CHECKED, SHOWN, Streamed, cited_stream, gate_for
from toolweave.llm.confidence import routing_confidences
from toolweave.llm.errors import LlmRequestError
from toolweave.llm.offline_extract import INVENTED_INPUT, ground_request, invented_required
from toolweave.llm.passthrough import ANSWER_TAG
from toolweave.llm.port import (
    UNSTREAMED,
    Activation,
    AnswerRequest,
    ContextVerdict,
    Decompositions,
    DecompositionSchema,
    ExtractedRequest,
    LlmAssistant,
    Normalized,
    RoutingVerdict,
    Tools,
)
from toolweave.llm.replies import (
    REWRITES_PER_PIECE,
    GatekeeperReply,
    NormalizedReply,
    PassageReply,
    cut_gatekeeper_reply,
    cut_routing_reply,
    decomposition_block,
    decomposition_schema,
    fills_something,
    fused_forms,
    offered_tools,
    offline_request,
    routing_keys,
    routing_reply,
    search_words,
)
from toolweave.llm.structured import Schema, StructuredOutput, looping_reply, structured_steps
from toolweave.state.documents import UniqueTextDocument
from toolweave.state.run_scope import with_secrets
from toolweave.tools.consumers import ClarifiableContextConsumerTool, ClarifiableTool
from toolweave.tools.effects import Steps, adrive, drive
from toolweave.tools.language import detect_language
from toolweave.tools.registry import AnyTool

T = TypeVar("T")
P = ParamSpec("P")
logger = logging.getLogger(__name__)
HISTORY_WINDOW = 6
"""Earlier messages a follow-up is resolved against and the answer sees (A1)."""
_LANG = re.compile(r"^[a-z]{2,3}$")
ANSWER_TOKENS = 1024
"""The answer call's default ``max_tokens`` (OpenAI-compatible models): a few paragraphs."""
CUT_MARK = " […]"
"""Ends an answer that stopped at its token limit, so it never reads as a whole one."""


def _whole_or_completed(streamed: Streamed, schema: type[BaseModel]) -> BaseModel | None:
    """The streamed constrained reply, or (cut or looping) its completed sentences, or ``None``."""
    try:
        return schema.model_validate_json(streamed.raw.text)
    except ValidationError:
        reason = retries.finish_reason(streamed.raw)
    if reason not in ("length", retries.REPEATING) or not streamed.gate.items:
        logger.warning("cited_answer: streamed reply did not validate, asking unstreamed")
        return None
    logger.warning(
        "cited_answer: reply %s after %d sentences; the cut one is dropped (X3)",
        "cut at the token limit" if reason == "length" else "closed as a loop",
        len(streamed.gate.items),
    )
    return streamed.gate.reply


def _model_name(model: BaseChatModel) -> str | None:
    name = getattr(model, "model_name", None) or getattr(model, "model", None)
    return name if isinstance(name, str) else None


def _describe(model: BaseChatModel) -> str:
    name = _model_name(model)
    return type(model).__name__ if name is None else f"{type(model).__name__} ({name})"


def _api_key(model: BaseChatModel) -> str | None:
    """The API key a LangChain chat model was configured with, if it exposes one."""
    for name in ("openai_api_key", "api_key", "anthropic_api_key", "google_api_key"):
        value = getattr(model, name, None)
        if isinstance(value, SecretStr):
            return value.get_secret_value()
    return None


def with_request_timeout(model: BaseChatModel, timeout: float | None) -> BaseChatModel:
    """``model`` sending ``timeout`` with every request (OpenAI-compatible clients only)."""
    if timeout is None or not retries.is_openai_compatible(model):
        return model
    extra = dict(getattr(model, "model_kwargs", None) or {})
    extra["timeout"] = timeout
    return model.model_copy(update={"model_kwargs": extra})


DECISION_TEMPERATURE = 0.0
"""Sampling temperature of the deciding calls: the same question gets the same routing."""
FIXED_TEMPERATURE_MODELS = ("o1", "o3", "o4", "gpt-5")
"""Name prefixes of OpenAI reasoning models accepting no temperature (``gpt-5-chat`` does)."""


def with_temperature(model: BaseChatModel, temperature: float | None) -> BaseChatModel:
    """``model`` sampling at ``temperature`` when it has that setting and accepts it, else as is."""
    if temperature is None or "temperature" not in type(model).model_fields:
        return model
    folded = (_model_name(model) or "").lower()
    if folded.startswith(FIXED_TEMPERATURE_MODELS) and not folded.startswith("gpt-5-chat"):
        return model
    return model.model_copy(update={"temperature": temperature})


NULL_WORDS = frozenset({"null", "none", "n/a"})
"""A page answer that is one of these is JSON's null written as a string."""


def gatekeeper_verdict(reply: GatekeeperReply, question: str) -> ContextVerdict:
    """An insufficient gatekeeper reply as a verdict (no piece: the question) (D1, D8)."""
    missing: dict[str, tuple[str, ...]] = {}
    for piece in reply.missing:
        asked = piece.question.strip()
        if not asked or asked in missing:
            continue
        kept = [s for s in dict.fromkeys(x.strip() for x in piece.search) if s and s != asked]
        missing[asked] = tuple(kept[:REWRITES_PER_PIECE])
    return ContextVerdict(
        sufficient=False,
        missing=tuple(missing) or (question,),
        rewrites={piece: found for piece, found in missing.items() if found},
    )


ROUTING_LOGPROBS = 5
"""Alternatives per token the routing call asks log-probabilities for (T5)."""


def _scored(verdict: RoutingVerdict, scores: Mapping[str, float]) -> RoutingVerdict:
    """``verdict`` with its P(yes) from ``scores`` (a verdict the reply did not hold has none)."""
    score = scores.get(verdict.tool)
    return verdict if score is None else replace(verdict, confidence=score)


def _driven(
    steps: Callable[Concatenate[ChatModelAssistant, P], Steps[T]],
) -> tuple[
    Callable[Concatenate[ChatModelAssistant, P], T],
    Callable[Concatenate[ChatModelAssistant, P], Coroutine[Any, Any, T]],
]:
    """The sync and async methods of ``steps``, driven with the API key redacted (X4, X6)."""
    name = steps.__name__.removesuffix("_steps")

    def method(self: ChatModelAssistant, /, *args: P.args, **kwargs: P.kwargs) -> T:
        with with_secrets(self._secrets):
            return drive(steps(self, *args, **kwargs))

    async def amethod(self: ChatModelAssistant, /, *args: P.args, **kwargs: P.kwargs) -> T:
        with with_secrets(self._secrets):
            return await adrive(steps(self, *args, **kwargs))

    method.__name__ = method.__qualname__ = name
    amethod.__name__ = amethod.__qualname__ = f"a{name}"
    method.__doc__ = f":meth:`{steps.__name__}`, sync."
    amethod.__doc__ = f":meth:`{steps.__name__}`, async."
    return method, amethod


class ChatModelAssistant(LlmAssistant):
    """The LLM port over any LangChain chat model.

    Calls are retried (X2), structured replies get a schema-derived ``max_tokens`` and fall back
    across output modes; no per-request state is kept, so one instance serves concurrent runs.
    """

    normalizes_first_message: ClassVar[bool] = False
    """A first message, or a follow-up the offline rules resolve, costs no call (A10, A1)."""

    def __init__(
        self,
        model: BaseChatModel,
        *,
        max_retries: int = 2,
        timeout: float | None = None,
        retry_after_cap: float = 30.0,
        label: str | None = None,
        fuse_routing: bool = True,
        history_window: int = HISTORY_WINDOW,
        initial_backoff: float = 0.5,
        max_backoff: float = 8.0,
        require_finish_reason: bool | None = None,
        structured_cache_size: int = 256,
        answer_tokens: int | None = ANSWER_TOKENS,
        decision_temperature: float | None = DECISION_TEMPERATURE,
        routing_logprobs: int | None = ROUTING_LOGPROBS,
        cite_sentences: bool | None = None,
    ) -> None:
        """Wrap ``model``.

        Args:
            model: Any LangChain chat model with ``with_structured_output``. Turn the client's own
                retries off (``max_retries=0`` on ``ChatOpenAI``): toolweave retries.
            max_retries: Retries of a call after transient failures (attempts = 1 + this).
            timeout: Seconds one request may take: sent with every request of an OpenAI-compatible
                model, and the bound of every async call; ``None`` keeps the model's own timeout.
            retry_after_cap: Longest wait a ``Retry-After`` header is honoured for.
            label: What answers, in words for people; defaults to the model's class and name.
            fuse_routing: Route and extract in one structured call (3-call target).
            history_window: Earlier messages seen by normalization and the answer.
            initial_backoff: Seconds before the first retry; doubled after each.
            max_backoff: Longest backoff wait.
            require_finish_reason: Treat a reply without a finish reason as cut off (retried, never
                returned); default: on for OpenAI-compatible models, which always send one.
            structured_cache_size: Structured-output runnables kept built (LRU).
            answer_tokens: ``max_tokens`` of the answer call (OpenAI-compatible models); an answer
                that stops there ends in :data:`CUT_MARK`. ``None``: the model's own limit.
            decision_temperature: Sampling temperature of every structured call, so one question
                is routed the same way each time (the answer keeps the model's own). ``None``: the
                model's own; not on OpenAI reasoning models (:data:`FIXED_TEMPERATURE_MODELS`).
            routing_logprobs: Alternatives per token whose log-probabilities the routing call asks
                of an OpenAI-compatible model, giving each verdict its P(yes); a server rejecting
                them is asked without from then on. ``None``: never asked (yes/no only).
            cite_sentences: Ask for the answer as sentences, each with the ids of the passages it
                rests on, in one structured call allowing only the context's ids (R9). ``False``:
                free text with ``[n]`` markers. Default: on for OpenAI-compatible models.
        """
        self.model = model
        openai = retries.is_openai_compatible(model)
        self.policy = retries.LlmRetryPolicy(
            max_retries=max_retries,
            initial_backoff=initial_backoff,
            max_backoff=max_backoff,
            retry_after_cap=retry_after_cap,
            timeout=timeout,
        )
        self.label = label or _describe(model)
        self.fuse_routing = fuse_routing
        self.history_window = history_window
        self.require_finish_reason = (
            openai if require_finish_reason is None else require_finish_reason
        )
        key = _api_key(model)
        self._secrets = frozenset(() if key is None else (key,))
        self._calling = with_request_timeout(model, timeout)
        self.answer_tokens = answer_tokens
        self._answering = self._calling
        if answer_tokens is not None and openai:
            self._answering = self._calling.model_copy(update={"max_tokens": answer_tokens})
        self.decision_temperature = decision_temperature
        self.cite_sentences = openai if cite_sentences is None else cite_sentences
        self.structured = StructuredOutput(
            with_temperature(self._calling, decision_temperature),
            cache_size=structured_cache_size,
            top_logprobs=routing_logprobs,
        )
        """Bound structured-output runnables (cached) and the mode the model accepts."""

    def scores_routing(self) -> bool:
        """Whether the routing call asks for log-probabilities (the server may still send none)."""
        return self.structured.top_logprobs is not None

    def secret_values(self) -> frozenset[str]:
        """The model's API key: redacted wherever this assistant is used (X4)."""
        return self._secrets

    def _structured(
        self, schema: Schema, system: str, human: str, what: str, **options: Any
    ) -> Steps[Any]:
        """:func:`structured_steps` of ``system`` and ``human`` (``options``: its keywords)."""
        messages = [SystemMessage(content=system), HumanMessage(content=human)]
        return structured_steps(
            self.structured, schema, messages, policy=self.policy, what=what, **options
        )

    def _routing(self, schema: Schema, system: str, human: str, what: str) -> Steps[Any]:
        """A routing call: ``(reply, P(yes) by tool)``; a cut reply keeps its best fit (T5, X2)."""
        keys = routing_keys(schema)
        reply = yield from self._structured(
            schema,
            system,
            human,
            what,
            salvage=functools.partial(cut_routing_reply, keys),
            scored=lambda parsed, raw: (parsed, routing_confidences(raw, keys)),
        )
        return reply if isinstance(reply, tuple) else (reply, {})

    # -- normalize (A1, T10) --------------------------------------------------------------

    def normalize_steps(
        self, message: str, history: Sequence[BaseMessage], *, default_lang: str = "en"
    ) -> Steps[Normalized]:
        """One structured call: standalone question, language, key words, prompt type (A1)."""
        system = prompts.normalize_system(
            history=format_history(history, self.history_window), default_lang=default_lang
        )
        reply: NormalizedReply | None = yield from self._structured(
            NormalizedReply, system, message, "normalize"
        )
        if reply is None or not reply.question.strip():
            return Normalized(question=message, user_lang=default_lang)
        lang = reply.user_lang.strip().lower()
        return Normalized(
            question=reply.question.strip(),
            user_lang=lang if _LANG.match(lang) else default_lang,
            important_words=tuple(w.strip() for w in reply.important_words if w.strip()),
            prompt_type=reply.prompt_type,
        )

    # -- routing (T5) ---------------------------------------------------------------------

    def route_steps(self, task_prompt: str, tools: Tools) -> Steps[list[RoutingVerdict]]:
        """One structured call answering every offered tool's routing question (T5)."""
        offered = offered_tools(tools)
        reply: Any = None
        scores: dict[str, float] = {}
        if offered:
            system = prompts.routing_system(
                tools=cached_tools_block(tuple(offered), with_instruction=False),
                terminal=any(tool.returns_answer for tool in offered),
            )
            schema = routing_reply(offered, fused=False)
            reply, scores = yield from self._routing(schema, system, task_prompt, "routing")
        return [_scored(verdict, scores) for _, verdict in verdicts(tools, offered, reply)]

    # -- extraction (T7) ------------------------------------------------------------------

    def generate_tool_request_steps(
        self, user_prompt: str, system_prompt: str, tasks: str | None, tool: AnyTool
    ) -> Steps[dict[str, ExtractedRequest]]:
        """Constrained extraction into ``tool.request_model`` (T7), values not written ``None``."""
        if not tool.request_model.model_fields:
            return {tool.name: {}}
        system = prompts.fill_extraction_prompt(
            system_prompt, tasks=tasks, instruction=tool.instruction
        )
        reply: BaseModel | None = yield from self._structured(
            tool.request_model, system, user_prompt, "extraction"
        )
        dumped = None if reply is None else reply.model_dump(mode="json")
        return {tool.name: ground_request(dumped, tool.request_model, user_prompt)}

    # -- coordinators' decomposition (C1, M2) ---------------------------------------------

    def extract_decompositions_steps(
        self, task_prompt: str, schemas: Sequence[DecompositionSchema]
    ) -> Steps[Decompositions]:
        """ONE structured call filling every coordinator's decomposition schema (C1, M2, T7)."""
        if not schemas:
            return Decompositions(values={}, llm_calls=0)
        system = prompts.decomposition_system(coordinators=decomposition_block(schemas))
        reply: BaseModel | None = yield from self._structured(
            decomposition_schema(schemas), system, task_prompt, "decomposition"
        )
        values: dict[str, dict[str, Any] | None] = {}
        for i, schema in enumerate(schemas):
            filled = None if reply is None else getattr(reply, f"coordinator_{i}")
            dumped = None if filled is None else filled.model_dump(mode="json")
            values[schema.name] = ground_request(dumped, schema.model, task_prompt)
        return Decompositions(values=values, llm_calls=1)

    # -- fused activation (T5 + T7) -------------------------------------------------------

    def route_and_extract_steps(
        self,
        task_prompt: str,
        execution_text: str,
        tools: Tools,
        *,
        extraction_prompt: str,
        search_language: str | None = None,
    ) -> Steps[Activation]:
        """Route and extract in ONE structured call when ``fuse_routing`` (T5, T7, M2, Q1, D9)."""
        if not self.fuse_routing or execution_text != task_prompt:
            steps = self.route_then_extract(task_prompt, execution_text, tools, extraction_prompt)
            return (yield from steps)
        offered = offered_tools(tools)
        if not offered:
            none = tuple(verdict for _, verdict in verdicts(tools, offered, None))
            return Activation(verdicts=none, requests={}, llm_calls=0)
        forms = fused_forms(tools, task_prompt)  # A10: a long form rides only when it pays
        system = prompts.fused_routing_system(
            tools=cached_tools_block(tuple(offered), with_instruction=forms),
            extraction_guidance=fused_guidance(extraction_prompt),
            terminal=any(tool.returns_answer for tool in offered),
            search_language=search_language,
        )
        schema = routing_reply(offered, fused=forms, search=search_language is not None)
        reply, scores = yield from self._routing(schema, system, task_prompt, "activation")
        pairs = verdicts(tools, offered, reply)
        requests: dict[str, ExtractedRequest] = {}
        kept: list[RoutingVerdict] = []
        for (entry, verdict), tool in zip(pairs, tools, strict=True):  # verdicts follow tools
            verdict = _scored(verdict, scores)
            kept.append(verdict)
            if entry is None or not verdict.run or tool.name not in forms:
                continue  # no form carried: filled by a call of its own when it runs
            filled = None if entry.request is None else entry.request.model_dump(mode="json")
            requests[tool.name] = ground_request(filled, tool.request_model, task_prompt)
            asks = isinstance(tool, ClarifiableTool | ClarifiableContextConsumerTool)
            if not asks and invented_required(filled, requests[tool.name]):
                kept[-1] = replace(verdict, run=False, reason=INVENTED_INPUT)  # T7
                del requests[tool.name]
        requests.update(_unfilled(tools, kept, forms, task_prompt))
        formless = frozenset(t.name for t in offered if t.request_model.model_fields) - forms
        return Activation(
            tuple(kept),
            requests,
            llm_calls=1,
            search_words=search_words(reply, question=task_prompt, prompt=system),
            formless=formless,
        )

    # -- gatekeeper (D1) and page reading (D3) -------------------------------------------

    def judge_context_steps(
        self, question: str, documents: Sequence[UniqueTextDocument], guaranteed: Sequence[str]
    ) -> Steps[ContextVerdict]:
        """One structured call: does the context suffice, and what is missing (D1)."""
        if not documents and not any(text.strip() for text in guaranteed):
            return ContextVerdict(sufficient=False, missing=(question,))
        context = "\n".join([*guaranteed, format_context(documents)]).strip()
        lang = detect_language(" ".join(d.text for d in documents) or " ".join(guaranteed)).lang
        system = prompts.gatekeeper_search_system(
            context=context, documents_language="" if lang is None else prompts.language_name(lang)
        )
        reply: GatekeeperReply | None = yield from self._structured(
            GatekeeperReply,
            system,
            question,
            "gatekeeper",
            salvage=cut_gatekeeper_reply,
            max_tokens=structured.token_budget(GatekeeperReply),
        )
        if reply is None or reply.sufficient:
            return ContextVerdict(sufficient=True)
        return gatekeeper_verdict(reply, question)

    def read_passage_steps(
        self, question: str, passage: str, *, user_lang: str
    ) -> Steps[str | None]:
        """One structured call: the answer the passage gives, or ``None`` (D3, D5)."""
        language = prompts.language_name(user_lang)
        system = prompts.read_page_system(language=language, passage=passage)
        reply: PassageReply | None = yield from self._structured(
            PassageReply, system, question, "read_passage"
        )
        answer = None if reply is None else (reply.answer or "").strip()
        if not answer or answer.strip("\"'.").casefold() in NULL_WORDS:  # null, written as text
            return None
        return answer

    # -- the answer (A7, P2) --------------------------------------------------------------

    def _answer_messages(self, request: AnswerRequest, *, cited: bool) -> list[BaseMessage]:
        """The answer call's messages: instructions, the dialogue, the question (A7, Q8)."""
        own, documents = request.guaranteed_texts, request.documents
        first = request.first_cited if cited else 1  # R5, R9: a cited answer numbers its own
        instructions = prompts.answer_system(
            language=prompts.language_name(request.user_lang),
            context=cited_context(own, documents) if cited else format_context(documents),
            guaranteed="" if cited else "\n".join(own),
            parts=part_lines(request.parts, documents, start=first),  # S6
            exchanges=format_exchanges(request.clarifications),  # Q8
            cited=cited,
            failing=request.failing,  # R9: asked once more
        )
        system = "\n\n".join(p for p in (request.system_prompt.strip(), instructions) if p)
        return [
            SystemMessage(content=system),
            *dialogue(request.history, self.history_window),
            HumanMessage(content=request.asked),  # Q8: the replies are part of the request
        ]

    def _cited_answer_steps(self, request: AnswerRequest) -> Steps[AIMessage | None]:
        """The constrained answer (R9), marked :data:`UNSTREAMED` (P2); ``None`` if never valid."""
        schema = citation_schema(len(request.guaranteed_texts) + len(request.documents))
        messages = self._answer_messages(request, cited=True)
        streamed = yield from self._streamed_cited_steps(request, schema, messages)
        if streamed is not None:
            return streamed
        reply = yield from structured_steps(
            self.structured,
            schema,
            messages,
            policy=self.policy,
            what="cited_answer",
            max_tokens=self.answer_tokens,
        )
        if reply is None:
            return None
        text = marked_text(reply_claims(reply, request.documents, first=request.first_cited))
        meta = {UNSTREAMED: True}
        return AIMessage(content=text, id=f"lc_run--{uuid.uuid4()}", response_metadata=meta)

    def _streamed_cited_steps(
        self, request: AnswerRequest, schema: type[BaseModel], messages: list[BaseMessage]
    ) -> Steps[AIMessage | None]:
        """The constrained answer streamed (``json_schema``), kept sentences shown as they come."""
        output = self.structured
        if not output.openai_compatible or output.mode != "json_schema":
            return None
        bound = output.bound(schema, "json_schema", self.answer_tokens)
        step = cited_stream(
            bound.llm,
            bound.messages(messages),
            functools.partial(gate_for, request, schema),
            timeout=self.policy.timeout,
            stop=looping_reply,
        )
        try:
            streamed = yield from retries.retrying(step, policy=self.policy, what="cited_answer")
        except LlmRequestError as exc:
            if output.fallback("json_schema", exc) is None:
                raise
            return None
        reply = _whole_or_completed(streamed, schema)
        if reply is None:
            return None
        text = marked_text(reply_claims(reply, request.documents, first=request.first_cited))
        meta = {UNSTREAMED: True, SHOWN: streamed.shown.text, CHECKED: tuple(streamed.gate.checked)}
        return AIMessage(content=text, id=streamed.shown.id, response_metadata=meta)

    def answer_steps(self, request: AnswerRequest) -> Steps[AIMessage]:
        """The answer: constrained citing (:attr:`cite_sentences`), else streamed text (A7, X3)."""
        if self.cite_sentences and request.documents:
            cited = yield from self._cited_answer_steps(request)
            if cited is not None:
                return cited
            logger.warning("answer: no valid cited reply; answering as text with markers")
        messages = self._answer_messages(request, cited=False)
        config: RunnableConfig = {"run_name": "answer", "tags": [ANSWER_TAG]}
        step = retries.ModelCall(
            self._answering,
            messages,
            config,
            self.policy.timeout,
            request_timeout=retries.is_openai_compatible(self.model),
        ).streamed(stop=looping_reply)
        accept = retries.require_finish_reason("answer") if self.require_finish_reason else None
        reply = yield from retries.retrying(step, policy=self.policy, what="answer", accept=accept)
        text = reply.text
        cut = {
            "length": f"stopped at its token limit ({self.answer_tokens})",
            retries.REPEATING: "repeated itself; its stream was closed (X3)",
        }.get(retries.finish_reason(reply) or "")
        if cut is not None:  # marked, never passed off as whole
            logger.warning("answer: the model %s", cut)
            text = text.rstrip() + CUT_MARK
        logger.debug("answer: %d characters", len(text))
        return AIMessage(content=text, id=reply.id)

    # -- the sync and async methods: the steps above, driven -----------------------------

    normalize, anormalize = _driven(normalize_steps)
    route, aroute = _driven(route_steps)
    generate_tool_request, agenerate_tool_request = _driven(generate_tool_request_steps)
    route_and_extract, aroute_and_extract = _driven(route_and_extract_steps)
    extract_decompositions, aextract_decompositions = _driven(extract_decompositions_steps)
    judge_context, ajudge_context = _driven(judge_context_steps)
    read_passage, aread_passage = _driven(read_passage_steps)
    answer, aanswer = _driven(answer_steps)


def _unfilled(
    tools: Tools, kept: Sequence[RoutingVerdict], forms: frozenset[str], task: str
) -> dict[str, ExtractedRequest]:
    """A10, T7: the offline requests of yeses whose uncarried form the task fills nothing of."""
    unfilled: dict[str, ExtractedRequest] = {}
    for tool, verdict in zip(tools, kept, strict=True):
        if not verdict.run or tool.name in forms or not tool.request_model.model_fields:
            continue
        values = offline_request(task, tool)
        if not fills_something(values, tool.request_model):
            unfilled[tool.name] = values
    return unfilled


def fused_guidance(extraction_prompt: str) -> str:
    """The caller's extraction prompt as the fused routing call adds it ("" if the default)."""
    if extraction_prompt == prompts.EXTRACTION_SYSTEM_PROMPT:
        return ""
    return prompts.fill_extraction_prompt(
        extraction_prompt, tasks=None, instruction="Follow each tool's instruction above."
    )

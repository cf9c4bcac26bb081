"""``ChatModelAssistant``: the LLM port over any LangChain chat model (T5, T7, A1, D1, X2)."""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Sequence
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, SecretStr

from toolweave.llm import prompts
from toolweave.llm.passthrough import ANSWER_TAG
from toolweave.llm.port import (
    Activation,
    AnswerRequest,
    ContextVerdict,
    Decompositions,
    DecompositionSchema,
    ExtractedRequest,
    LlmAssistant,
    Normalized,
    RoutingVerdict,
)
from toolweave.llm.replies import (
    GatekeeperReply,
    NormalizedReply,
    PassageReply,
    decomposition_block,
    decomposition_schema,
    offered_tools,
    routing_schema,
    tools_block,
)
from toolweave.llm.structured import (
    Invoke,
    LlmRetryPolicy,
    Plan,
    StructuredOutput,
    arun_plan,
    finish_reason,
    is_openai_compatible,
    require_finish_reason,
    retrying,
    run_plan,
    structured_plan,
)
from toolweave.state.documents import UniqueTextDocument
from toolweave.state.run_scope import with_secrets
from toolweave.tools.registry import AnyTool

T = TypeVar("T")
logger = logging.getLogger(__name__)

HISTORY_WINDOW = 6
"""Earlier messages a follow-up is resolved against and the answer sees (A1)."""

_NOT_OFFERED = "no routing question: runs only when forced"
_NO_REPLY = "no valid routing reply"
_LANG = re.compile(r"^[a-z]{2,3}$")


def format_history(history: Sequence[BaseMessage], window: int) -> str:
    """The last ``window`` user/assistant turns as ``User: …`` / ``Assistant: …`` lines."""
    lines: list[str] = []
    for message in _dialogue(history, window):
        who = "User" if isinstance(message, HumanMessage) else "Assistant"
        lines.append(f"{who}: {message.text}")
    return "\n".join(lines)


def _dialogue(history: Sequence[BaseMessage], window: int) -> list[BaseMessage]:
    """Plain-text copies of the last ``window`` human/AI messages (tool calls dropped)."""
    turns = [m for m in history if isinstance(m, HumanMessage | AIMessage) and m.text.strip()]
    kept = turns[-window:] if window > 0 else []
    return [
        HumanMessage(content=m.text) if isinstance(m, HumanMessage) else AIMessage(content=m.text)
        for m in kept
    ]


def format_context(documents: Sequence[UniqueTextDocument]) -> str:
    """Numbered context passages: ``[n] name, p. 3: text``."""
    lines: list[str] = []
    for n, doc in enumerate(documents, start=1):
        source = doc.document_name or doc.document_id
        if doc.page is not None:
            source = f"{source}, p. {doc.page}"
        lines.append(f"[{n}] {source}: {doc.text}")
    return "\n".join(lines)


def _describe(model: BaseChatModel) -> str:
    name = getattr(model, "model_name", None) or getattr(model, "model", None)
    return f"{type(model).__name__} ({name})" if isinstance(name, str) else type(model).__name__


def _api_key(model: BaseChatModel) -> str | None:
    """The API key a LangChain chat model was configured with, if it exposes one."""
    for name in ("openai_api_key", "api_key", "anthropic_api_key", "google_api_key"):
        value = getattr(model, name, None)
        if isinstance(value, SecretStr):
            return value.get_secret_value()
    return None


def with_request_timeout(model: BaseChatModel, timeout: float | None) -> BaseChatModel:
    """``model`` sending ``timeout`` with every request (OpenAI-compatible clients only).

    The client's own timeout is fixed when it is built; the per-request option
    wins over it. Other models keep their own timeout (the async path bounds
    every call with ``asyncio.wait_for`` regardless).
    """
    if timeout is None or not is_openai_compatible(model):
        return model
    extra = dict(getattr(model, "model_kwargs", None) or {})
    extra["timeout"] = timeout
    copied: BaseChatModel = model.model_copy(update={"model_kwargs": extra})
    return copied


@functools.lru_cache(maxsize=256)
def _tools_block(tools: tuple[AnyTool, ...], *, with_instruction: bool) -> str:
    """:func:`tools_block`, built once per candidate set (as its routing schema is)."""
    return tools_block(tools, with_instruction=with_instruction)


def _verdicts(
    tools: Sequence[AnyTool], offered: Sequence[AnyTool], reply: BaseModel | None
) -> list[tuple[Any, RoutingVerdict]]:
    """Each tool's (reply entry or ``None``, verdict), in the order of ``tools`` (T5).

    A tool's entry is the reply field of its position among ``offered``, found by
    identity in one pass (no per-tool scan: quadratic at 1000 tools).
    """
    position = {id(tool): i for i, tool in enumerate(offered)}
    pairs: list[tuple[Any, RoutingVerdict]] = []
    for tool in tools:
        at = position.get(id(tool))
        if at is None:
            pairs.append((None, RoutingVerdict(tool=tool.name, run=False, reason=_NOT_OFFERED)))
        elif reply is None:
            pairs.append((None, RoutingVerdict(tool=tool.name, run=False, reason=_NO_REPLY)))
        else:
            entry = getattr(reply, f"tool_{at}")
            verdict = RoutingVerdict(tool=tool.name, run=bool(entry.run), reason=str(entry.reason))
            pairs.append((entry, verdict))
    return pairs


class ChatModelAssistant(LlmAssistant):
    """The LLM port over any LangChain chat model.

    Every call is retried on transient errors (X2): connection errors, timeouts,
    429 (waiting what ``Retry-After`` asks, up to ``retry_after_cap``), 5xx, a body
    that is not JSON, a streamed reply cut off mid-way. Structured replies get a
    ``max_tokens`` derived from their schema (OpenAI-compatible models); one that
    stops at the limit is asked once more with twice the tokens, one that does not
    validate once more, and then it reads as "no" / ``None``. The structured-output
    mode falls back from ``json_schema`` to ``json_mode`` to ``function_calling``
    when the server rejects one, and the choice is kept for later calls. Every
    method has a native async twin over the chat model's ``ainvoke``. The
    assistant keeps no per-request state, so one instance serves concurrent runs.

    Example:
        >>> from langchain_openai import ChatOpenAI  # doctest: +SKIP
        >>> model = ChatOpenAI(model="gpt-4o-mini", max_retries=0)  # doctest: +SKIP
        >>> assistant = ChatModelAssistant(model, timeout=30, max_retries=2)  # doctest: +SKIP
    """

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
    ) -> None:
        """Wrap ``model``.

        Args:
            model: Any LangChain chat model; structured calls use its
                ``with_structured_output``. Turn the client's own retries off
                (``max_retries=0`` on ``ChatOpenAI``): toolweave retries.
            max_retries: Retries of a call after transient failures (attempts = 1 + this).
            timeout: Seconds one request may take: sent with every request of an
                OpenAI-compatible model, and the bound of every async call;
                ``None`` keeps the model's own timeout.
            retry_after_cap: Longest wait a ``Retry-After`` header is honoured for.
            label: What answers, in words for people; defaults to the model's class and name.
            fuse_routing: Route and extract in one structured call (3-call target).
            history_window: Earlier messages seen by normalization and the answer.
            initial_backoff: Seconds before the first retry; doubled after each.
            max_backoff: Longest backoff wait.
            require_finish_reason: Treat a reply without a finish reason as cut off
                (retried, never returned); default: on for OpenAI-compatible models,
                which always send one.
            structured_cache_size: Structured-output runnables kept built (LRU).
        """
        self.model = model
        self.policy = LlmRetryPolicy(
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
            is_openai_compatible(model) if require_finish_reason is None else require_finish_reason
        )
        key = _api_key(model)
        self._secrets = frozenset(() if key is None else (key,))
        self._calling = with_request_timeout(model, timeout)
        self.structured = StructuredOutput(self._calling, cache_size=structured_cache_size)
        """Bound structured-output runnables (cached) and the mode the model accepts."""

    def secret_values(self) -> frozenset[str]:
        """The model's API key: redacted wherever this assistant is used (X4)."""
        return self._secrets

    def _run(self, plan: Plan[T]) -> T:
        """Drive ``plan`` with the API key redacted from its errors and log lines (X4, X6)."""
        with with_secrets(self._secrets):
            return run_plan(plan)

    async def _arun(self, plan: Plan[T]) -> T:
        with with_secrets(self._secrets):
            return await arun_plan(plan)

    def _structured(
        self, schema: type[BaseModel], messages: list[BaseMessage], what: str
    ) -> Plan[Any]:
        return structured_plan(self.structured, schema, messages, policy=self.policy, what=what)

    # -- normalize (A1, T10) --------------------------------------------------------------

    def normalize(
        self, message: str, history: Sequence[BaseMessage], *, default_lang: str = "en"
    ) -> Normalized:
        """One structured call: standalone question, language, key words, prompt type (A1)."""
        return self._run(self._normalize(message, history, default_lang))

    async def anormalize(
        self, message: str, history: Sequence[BaseMessage], *, default_lang: str = "en"
    ) -> Normalized:
        """Async :meth:`normalize` over the chat model's ``ainvoke``."""
        return await self._arun(self._normalize(message, history, default_lang))

    def _normalize(
        self, message: str, history: Sequence[BaseMessage], default_lang: str
    ) -> Plan[Normalized]:
        system = prompts.normalize_system(
            history=format_history(history, self.history_window), default_lang=default_lang
        )
        messages: list[BaseMessage] = [SystemMessage(content=system), HumanMessage(content=message)]
        reply: NormalizedReply | None = yield from self._structured(
            NormalizedReply, messages, "normalize"
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

    def route(self, task_prompt: str, tools: Sequence[AnyTool]) -> list[RoutingVerdict]:
        """One structured call answering every offered tool's routing question (T5)."""
        return self._run(self._route(task_prompt, tools))

    async def aroute(self, task_prompt: str, tools: Sequence[AnyTool]) -> list[RoutingVerdict]:
        """Async :meth:`route`."""
        return await self._arun(self._route(task_prompt, tools))

    def _route(self, task_prompt: str, tools: Sequence[AnyTool]) -> Plan[list[RoutingVerdict]]:
        offered = offered_tools(tools)
        reply: BaseModel | None = None
        if offered:
            system = prompts.routing_system(
                tools=_tools_block(tuple(offered), with_instruction=False)
            )
            reply = yield from self._structured(
                routing_schema(offered, fused=False),
                [SystemMessage(content=system), HumanMessage(content=task_prompt)],
                "routing",
            )
        return [verdict for _, verdict in _verdicts(tools, offered, reply)]

    # -- extraction (T7) ------------------------------------------------------------------

    def generate_tool_request(
        self, user_prompt: str, system_prompt: str, tasks: str | None, tool: AnyTool
    ) -> dict[str, ExtractedRequest]:
        """Constrained extraction into ``tool.request_model`` (T7); ``None`` when it fails."""
        return self._run(self._extract(user_prompt, system_prompt, tasks, tool))

    async def agenerate_tool_request(
        self, user_prompt: str, system_prompt: str, tasks: str | None, tool: AnyTool
    ) -> dict[str, ExtractedRequest]:
        """Async :meth:`generate_tool_request`."""
        return await self._arun(self._extract(user_prompt, system_prompt, tasks, tool))

    def _extract(
        self, user_prompt: str, system_prompt: str, tasks: str | None, tool: AnyTool
    ) -> Plan[dict[str, ExtractedRequest]]:
        if not tool.request_model.model_fields:
            return {tool.name: {}}
        system = prompts.fill_extraction_prompt(
            system_prompt, tasks=tasks, instruction=tool.instruction
        )
        reply: BaseModel | None = yield from self._structured(
            tool.request_model,
            [SystemMessage(content=system), HumanMessage(content=user_prompt)],
            "extraction",
        )
        return {tool.name: None if reply is None else reply.model_dump(mode="json")}

    # -- coordinators' decomposition (C1, M2) ---------------------------------------------

    def extract_decompositions(
        self, task_prompt: str, schemas: Sequence[DecompositionSchema]
    ) -> Decompositions:
        """ONE structured call filling every coordinator's decomposition schema (C1, M2)."""
        return self._run(self._decompose(task_prompt, schemas))

    async def aextract_decompositions(
        self, task_prompt: str, schemas: Sequence[DecompositionSchema]
    ) -> Decompositions:
        """Async :meth:`extract_decompositions`."""
        return await self._arun(self._decompose(task_prompt, schemas))

    def _decompose(
        self, task_prompt: str, schemas: Sequence[DecompositionSchema]
    ) -> Plan[Decompositions]:
        if not schemas:
            return Decompositions(values={}, llm_calls=0)
        system = prompts.decomposition_system(coordinators=decomposition_block(schemas))
        reply: BaseModel | None = yield from self._structured(
            decomposition_schema(schemas),
            [SystemMessage(content=system), HumanMessage(content=task_prompt)],
            "decomposition",
        )
        values: dict[str, dict[str, Any] | None] = {}
        for i, schema in enumerate(schemas):
            filled = None if reply is None else getattr(reply, f"coordinator_{i}")
            values[schema.name] = None if filled is None else filled.model_dump(mode="json")
        return Decompositions(values=values, llm_calls=1)

    # -- fused activation (T5 + T7) -------------------------------------------------------

    def route_and_extract(
        self,
        task_prompt: str,
        execution_text: str,
        tools: Sequence[AnyTool],
        *,
        extraction_prompt: str,
    ) -> Activation:
        """Route and extract in ONE structured call when ``fuse_routing`` (T5 + T7).

        Routing sees only the task prompt (M2), so a subtask whose execution text
        carries its parent's context (M3) is routed and extracted in two steps.
        """
        if not self.fuse_routing or execution_text != task_prompt:
            return super().route_and_extract(
                task_prompt, execution_text, tools, extraction_prompt=extraction_prompt
            )
        return self._run(self._activate(task_prompt, tools, extraction_prompt))

    async def aroute_and_extract(
        self,
        task_prompt: str,
        execution_text: str,
        tools: Sequence[AnyTool],
        *,
        extraction_prompt: str,
    ) -> Activation:
        """Async :meth:`route_and_extract`."""
        if not self.fuse_routing or execution_text != task_prompt:
            return await super().aroute_and_extract(
                task_prompt, execution_text, tools, extraction_prompt=extraction_prompt
            )
        return await self._arun(self._activate(task_prompt, tools, extraction_prompt))

    def _activate(
        self, task_prompt: str, tools: Sequence[AnyTool], extraction_prompt: str
    ) -> Plan[Activation]:
        offered = offered_tools(tools)
        if not offered:
            verdicts = tuple(verdict for _, verdict in _verdicts(tools, offered, None))
            return Activation(verdicts=verdicts, requests={}, llm_calls=0)
        guidance = prompts.fill_extraction_prompt(
            extraction_prompt, tasks=None, instruction="Follow each tool's instruction above."
        )
        system = prompts.fused_routing_system(
            tools=_tools_block(tuple(offered), with_instruction=True), extraction_guidance=guidance
        )
        reply: BaseModel | None = yield from self._structured(
            routing_schema(offered, fused=True),
            [SystemMessage(content=system), HumanMessage(content=task_prompt)],
            "activation",
        )
        pairs = _verdicts(tools, offered, reply)
        requests: dict[str, ExtractedRequest] = {}
        for (entry, verdict), tool in zip(pairs, tools, strict=True):  # verdicts follow tools
            if entry is None or not verdict.run or not tool.request_model.model_fields:
                continue
            request = entry.request
            requests[tool.name] = None if request is None else request.model_dump(mode="json")
        return Activation(
            verdicts=tuple(verdict for _, verdict in pairs), requests=requests, llm_calls=1
        )

    # -- gatekeeper (D1) and page reading (D3) -------------------------------------------

    def judge_context(
        self,
        question: str,
        documents: Sequence[UniqueTextDocument],
        guaranteed: Sequence[str],
    ) -> ContextVerdict:
        """One structured call: does the context suffice, and what is missing (D1)."""
        return self._run(self._judge(question, documents, guaranteed))

    async def ajudge_context(
        self,
        question: str,
        documents: Sequence[UniqueTextDocument],
        guaranteed: Sequence[str],
    ) -> ContextVerdict:
        """Async :meth:`judge_context`."""
        return await self._arun(self._judge(question, documents, guaranteed))

    def _judge(
        self,
        question: str,
        documents: Sequence[UniqueTextDocument],
        guaranteed: Sequence[str],
    ) -> Plan[ContextVerdict]:
        if not documents and not any(text.strip() for text in guaranteed):
            return ContextVerdict(sufficient=False, missing=(question,))
        context = "\n".join([*guaranteed, format_context(documents)]).strip()
        reply: GatekeeperReply | None = yield from self._structured(
            GatekeeperReply,
            [
                SystemMessage(content=prompts.gatekeeper_system(context=context)),
                HumanMessage(content=question),
            ],
            "gatekeeper",
        )
        if reply is None or reply.sufficient:
            return ContextVerdict(sufficient=True)
        return ContextVerdict(
            sufficient=False, missing=tuple(m.strip() for m in reply.missing if m.strip())
        )

    def read_passage(self, question: str, passage: str, *, user_lang: str) -> str | None:
        """One structured call: the answer the passage gives, or ``None`` (D3, D5)."""
        return self._run(self._read(question, passage, user_lang))

    async def aread_passage(self, question: str, passage: str, *, user_lang: str) -> str | None:
        """Async :meth:`read_passage`."""
        return await self._arun(self._read(question, passage, user_lang))

    def _read(self, question: str, passage: str, user_lang: str) -> Plan[str | None]:
        system = prompts.read_passage_system(
            language=prompts.language_name(user_lang), passage=passage
        )
        reply: PassageReply | None = yield from self._structured(
            PassageReply,
            [SystemMessage(content=system), HumanMessage(content=question)],
            "read_passage",
        )
        answer = None if reply is None else (reply.answer or "").strip()
        return answer or None

    # -- the answer (A7, P2) --------------------------------------------------------------

    def answer(self, request: AnswerRequest) -> AIMessage:
        """One chat-model call, tagged :data:`ANSWER_TAG`; LangGraph streams its tokens (A7).

        A transient failure is retried like every call, and so is a stream that
        broke off mid-way (no finish reason): it is never kept as the answer.
        Listeners see the tokens of the retry after the partial ones.
        """
        return self._run(self._answer(request))

    async def aanswer(self, request: AnswerRequest) -> AIMessage:
        """Async :meth:`answer` over the chat model's ``ainvoke`` (tokens still stream)."""
        return await self._arun(self._answer(request))

    def _answer(self, request: AnswerRequest) -> Plan[AIMessage]:
        instructions = prompts.answer_system(
            language=prompts.language_name(request.user_lang),
            context=format_context(request.documents),
            guaranteed="\n".join(t.strip() for t in request.guaranteed if t.strip()),
        )
        system = "\n\n".join(p for p in (request.system_prompt.strip(), instructions) if p)
        messages: list[BaseMessage] = [
            SystemMessage(content=system),
            *_dialogue(request.history, self.history_window),
            HumanMessage(content=request.question),
        ]
        config: RunnableConfig = {"run_name": "answer", "tags": [ANSWER_TAG]}
        step = Invoke(
            self._calling,
            messages,
            config,
            self.policy.timeout,
            request_timeout=is_openai_compatible(self.model),
        )
        accept = require_finish_reason("answer") if self.require_finish_reason else None
        reply = yield from retrying(step, policy=self.policy, what="answer", accept=accept)
        if finish_reason(reply) == "length":
            logger.warning("answer: the model stopped at its token limit")
        logger.debug("answer: %d characters", len(reply.text))
        return AIMessage(content=reply.text, id=reply.id)


__all__ = [
    "HISTORY_WINDOW",
    "ChatModelAssistant",
    "format_context",
    "format_history",
    "with_request_timeout",
]

"""``ChatModelAssistant``: the LLM port over any LangChain chat model (T5, T7, A1, D1, X2)."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel

from toolweave.llm import prompts
from toolweave.llm.passthrough import ANSWER_TAG
from toolweave.llm.port import (
    Activation,
    AnswerRequest,
    ContextVerdict,
    ExtractedRequest,
    LlmAssistant,
    Normalized,
    RoutingVerdict,
)
from toolweave.llm.replies import (
    GatekeeperReply,
    NormalizedReply,
    PassageReply,
    offered_tools,
    routing_schema,
    tools_block,
)
from toolweave.llm.structured import LlmRetryPolicy, invoke_with_retry, structured_call
from toolweave.state.documents import UniqueTextDocument
from toolweave.tools.registry import AnyTool

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


class ChatModelAssistant(LlmAssistant):
    """The LLM port over any LangChain chat model.

    Every call is retried on transient errors (X2); structured replies that do not
    validate are asked for once more and then read as "no" / ``None``. The
    assistant keeps no per-request state, so one instance serves concurrent runs.

    Example:
        >>> from langchain_openai import ChatOpenAI  # doctest: +SKIP
        >>> model = ChatOpenAI(model="gpt-4o-mini", timeout=60)  # doctest: +SKIP
        >>> assistant = ChatModelAssistant(model)  # doctest: +SKIP
    """

    def __init__(
        self,
        model: BaseChatModel,
        *,
        max_retries: int = 2,
        label: str | None = None,
        fuse_routing: bool = True,
        history_window: int = HISTORY_WINDOW,
        initial_backoff: float = 0.5,
    ) -> None:
        """Wrap ``model``.

        Args:
            model: Any LangChain chat model; structured calls use its
                ``with_structured_output`` (JSON schema on ``ChatOpenAI``).
            max_retries: Retries of a call after transient failures.
            label: What answers, in words for people; defaults to the model's class and name.
            fuse_routing: Route and extract in one structured call (3-call target).
            history_window: Earlier messages seen by normalization and the answer.
            initial_backoff: Seconds before the first retry; doubled after each.
        """
        self.model = model
        self.policy = LlmRetryPolicy(max_retries=max_retries, initial_backoff=initial_backoff)
        self.label = label or _describe(model)
        self.fuse_routing = fuse_routing
        self.history_window = history_window

    def normalize(
        self, message: str, history: Sequence[BaseMessage], *, default_lang: str = "en"
    ) -> Normalized:
        """One structured call: standalone question, language, key words, prompt type (A1)."""
        system = prompts.normalize_system(
            history=format_history(history, self.history_window), default_lang=default_lang
        )
        reply = structured_call(
            self.model,
            NormalizedReply,
            [SystemMessage(content=system), HumanMessage(content=message)],
            policy=self.policy,
            what="normalize",
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

    def route(self, task_prompt: str, tools: Sequence[AnyTool]) -> list[RoutingVerdict]:
        """One structured call answering every offered tool's routing question (T5)."""
        offered = offered_tools(tools)
        reply: BaseModel | None = None
        if offered:
            system = prompts.routing_system(tools=tools_block(offered, with_instruction=False))
            reply = structured_call(
                self.model,
                routing_schema(offered, fused=False),
                [SystemMessage(content=system), HumanMessage(content=task_prompt)],
                policy=self.policy,
                what="routing",
            )
        return [self._verdict(tool, offered, reply) for tool in tools]

    @staticmethod
    def _verdict(tool: AnyTool, offered: list[AnyTool], reply: BaseModel | None) -> RoutingVerdict:
        if tool not in offered:
            return RoutingVerdict(tool=tool.name, run=False, reason=_NOT_OFFERED)
        if reply is None:
            return RoutingVerdict(tool=tool.name, run=False, reason=_NO_REPLY)
        entry = getattr(reply, f"tool_{offered.index(tool)}")
        return RoutingVerdict(tool=tool.name, run=bool(entry.run), reason=str(entry.reason))

    def generate_tool_request(
        self, user_prompt: str, system_prompt: str, tasks: str | None, tool: AnyTool
    ) -> dict[str, ExtractedRequest]:
        """Constrained extraction into ``tool.request_model`` (T7); ``None`` when it fails."""
        if not tool.request_model.model_fields:
            return {tool.name: {}}
        system = prompts.fill_extraction_prompt(
            system_prompt, tasks=tasks, instruction=tool.instruction
        )
        reply = structured_call(
            self.model,
            tool.request_model,
            [SystemMessage(content=system), HumanMessage(content=user_prompt)],
            policy=self.policy,
            what="extraction",
        )
        return {tool.name: None if reply is None else reply.model_dump(mode="json")}

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
        offered = offered_tools(tools)
        if not offered:
            verdicts = tuple(self._verdict(tool, offered, None) for tool in tools)
            return Activation(verdicts=verdicts, requests={}, llm_calls=0)
        guidance = prompts.fill_extraction_prompt(
            extraction_prompt, tasks=None, instruction="Follow each tool's instruction above."
        )
        system = prompts.fused_routing_system(
            tools=tools_block(offered, with_instruction=True), extraction_guidance=guidance
        )
        reply = structured_call(
            self.model,
            routing_schema(offered, fused=True),
            [SystemMessage(content=system), HumanMessage(content=task_prompt)],
            policy=self.policy,
            what="activation",
        )
        verdicts = tuple(self._verdict(tool, offered, reply) for tool in tools)
        requests: dict[str, ExtractedRequest] = {}
        for tool, verdict in zip(tools, verdicts, strict=True):  # verdicts follow tools
            if reply is None or not verdict.run or not tool.request_model.model_fields:
                continue
            request = getattr(reply, f"tool_{offered.index(tool)}").request
            requests[tool.name] = None if request is None else request.model_dump(mode="json")
        return Activation(verdicts=verdicts, requests=requests, llm_calls=1)

    def judge_context(
        self,
        question: str,
        documents: Sequence[UniqueTextDocument],
        guaranteed: Sequence[str],
    ) -> ContextVerdict:
        """One structured call: does the context suffice, and what is missing (D1)."""
        if not documents and not any(text.strip() for text in guaranteed):
            return ContextVerdict(sufficient=False, missing=(question,))
        context = "\n".join([*guaranteed, format_context(documents)]).strip()
        reply = structured_call(
            self.model,
            GatekeeperReply,
            [
                SystemMessage(content=prompts.gatekeeper_system(context=context)),
                HumanMessage(content=question),
            ],
            policy=self.policy,
            what="gatekeeper",
        )
        if reply is None or reply.sufficient:
            return ContextVerdict(sufficient=True)
        return ContextVerdict(
            sufficient=False, missing=tuple(m.strip() for m in reply.missing if m.strip())
        )

    def read_passage(self, question: str, passage: str, *, user_lang: str) -> str | None:
        """One structured call: the answer the passage gives, or ``None`` (D3, D5)."""
        system = prompts.read_passage_system(
            language=prompts.language_name(user_lang), passage=passage
        )
        reply = structured_call(
            self.model,
            PassageReply,
            [SystemMessage(content=system), HumanMessage(content=question)],
            policy=self.policy,
            what="read_passage",
        )
        answer = None if reply is None else (reply.answer or "").strip()
        return answer or None

    def answer(self, request: AnswerRequest) -> AIMessage:
        """One chat-model call, tagged :data:`ANSWER_TAG`; LangGraph streams its tokens (A7).

        A transient failure is retried like every call; if it broke off mid-stream,
        listeners see the tokens of the retry after the partial ones.
        """
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
        reply = invoke_with_retry(
            self.model,
            messages,
            policy=self.policy,
            what="answer",
            config={"run_name": "answer", "tags": [ANSWER_TAG]},
        )
        logger.debug("answer: %d characters", len(reply.text))
        return AIMessage(content=reply.text, id=reply.id)


__all__ = ["HISTORY_WINDOW", "ChatModelAssistant", "format_context", "format_history"]

"""Test doubles for code built on toolweave.

:class:`FunctionAssistant` is an LLM port of plain or async functions; :class:`ScriptedChatModel`
a chat model that replays scripted replies and records every call, without a network.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeAlias, TypeVar, cast

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field, PrivateAttr

from toolweave.llm import port
from toolweave.llm.passthrough import (
    AsyncRun,
    Messages,
    Stop,
    SyncRun,
    split_for_streaming,
    stream_message,
)
from toolweave.llm.port import AnswerRequest, ContextVerdict, Decompositions, Normalized, Tools
from toolweave.state.documents import UniqueTextDocument
from toolweave.tools.registry import AnyTool

T = TypeVar("T")
ExtractedRequest: TypeAlias = port.ExtractedRequest
Schemas: TypeAlias = Sequence[port.DecompositionSchema]
Documents: TypeAlias = Sequence[UniqueTextDocument]
Texts: TypeAlias = Sequence[str]
MaybeAwaitable: TypeAlias = T | Awaitable[T]
"""A step function may be plain or ``async``: FunctionAssistant accepts both."""

NormalizeFn = Callable[[str, Sequence[BaseMessage]], "MaybeAwaitable[Normalized | str]"]
RouteFn = Callable[[str, Sequence[AnyTool]], MaybeAwaitable[Iterable[str]]]
ExtractFn = Callable[[str, AnyTool], MaybeAwaitable[ExtractedRequest]]
JudgeFn = Callable[[str, Documents, Texts], "MaybeAwaitable[bool | ContextVerdict]"]
ReadFn = Callable[[str, str], MaybeAwaitable[str | None]]
"""``read(question, passage)`` → the passage's answer or ``None`` (D3)."""
AnswerFn = Callable[[AnswerRequest], MaybeAwaitable[str]]
DecomposeFn = Callable[[str, port.DecompositionSchema], "MaybeAwaitable[dict[str, Any] | None]"]
"""``decompose(task_prompt, schema)`` → the schema's fields as a dict, or ``None`` (C1)."""


async def _awaited(value: MaybeAwaitable[T]) -> T:
    """The value, awaited when a step function was ``async``."""
    return await value if inspect.isawaitable(value) else value


def _now(value: MaybeAwaitable[T]) -> T:
    """The value on the sync path: an awaitable runs to the end (in a helper thread in a loop)."""
    if not inspect.isawaitable(value):
        return value
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_awaited(value))
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, _awaited(value)).result()


def context_answer(request: AnswerRequest) -> str:
    """The default answer: guaranteed texts, then document texts, one per line."""
    return "\n".join([*request.guaranteed, *(doc.text for doc in request.documents)])


class FunctionAssistant(port.LlmAssistant):
    """An :class:`~toolweave.llm.port.LlmAssistant` whose steps are plain or async functions.

    Every argument is optional, plain or ``async`` (awaited natively under ``ainvoke``):
    ``normalize(message, history)`` (a ``Normalized`` or the question; default as is),
    ``route(task_text, tools)`` (tool names; default none), ``extract(task_text, tool)``,
    ``read(question, passage)`` (default ``None``), ``judge(question, documents, guaranteed)``
    (default sufficient), ``answer(request)`` (streamed; default the context texts) and
    ``decompose(task_prompt, schema)`` (default the offline extraction). It keeps no state.

    Example:
        >>> assistant = FunctionAssistant(route=lambda text, tools: ["opening_hours"])
        >>> assistant.normalize("Hi", []).question
        'Hi'
    """

    local_extraction: ClassVar[bool] = True

    def __init__(
        self,
        *,
        normalize: NormalizeFn | None = None,
        route: RouteFn | None = None,
        extract: ExtractFn | None = None,
        judge: JudgeFn | None = None,
        answer: AnswerFn | None = None,
        read: ReadFn | None = None,
        decompose: DecomposeFn | None = None,
        label: str = "function assistant",
    ) -> None:
        """Store the step functions; see the class docstring for their defaults."""
        self.label = label
        self._normalize = normalize
        self._route: RouteFn = route or (lambda text, tools: ())
        self._extract: ExtractFn = extract or (lambda text, tool: None)
        self._judge: JudgeFn = judge or (lambda question, documents, guaranteed: True)
        self._answer = answer or context_answer
        self._read: ReadFn = read or (lambda question, passage: None)
        self._decompose = decompose

    def normalize(
        self, message: str, history: Sequence[BaseMessage], *, default_lang: str = "en"
    ) -> Normalized:
        """``normalize(message, history)``, or the message as is."""
        if self._normalize is None:
            return Normalized(question=message, user_lang=default_lang)
        return self._normalized(_now(self._normalize(message, history)))

    async def anormalize(
        self, message: str, history: Sequence[BaseMessage], *, default_lang: str = "en"
    ) -> Normalized:
        """Async :meth:`normalize`."""
        if self._normalize is None:
            return Normalized(question=message, user_lang=default_lang)
        return self._normalized(await _awaited(self._normalize(message, history)))

    @staticmethod
    def _normalized(result: object) -> Normalized:
        if isinstance(result, str):
            return Normalized(question=result, user_lang="en")
        if isinstance(result, Normalized):
            return result
        raise TypeError(f"normalize() must return Normalized or str, not {type(result).__name__}")

    def route(self, task_prompt: str, tools: Tools) -> list[port.RoutingVerdict]:
        """``route(task_text, tools)`` names the tools that run; default: none."""
        return self._verdicts(_now(self._route(task_prompt, tools)), tools)

    async def aroute(self, task_prompt: str, tools: Tools) -> list[port.RoutingVerdict]:
        """Async :meth:`route`."""
        return self._verdicts(await _awaited(self._route(task_prompt, tools)), tools)

    @staticmethod
    def _verdicts(chosen: Iterable[str], tools: Tools) -> list[port.RoutingVerdict]:
        names = set(chosen)
        return [
            port.RoutingVerdict(tool=t.name, run=t.name in names and bool(t.executable_instruction),
                                reason="chosen by route()" if t.name in names else "")
            for t in tools
        ]  # fmt: skip

    def generate_tool_request(
        self, user_prompt: str, system_prompt: str, tasks: str | None, tool: AnyTool
    ) -> dict[str, ExtractedRequest]:
        """``{tool.name: extract(user_prompt, tool)}``; default ``None``."""
        return {tool.name: _now(self._extract(user_prompt, tool))}

    async def agenerate_tool_request(
        self, user_prompt: str, system_prompt: str, tasks: str | None, tool: AnyTool
    ) -> dict[str, ExtractedRequest]:
        """Async :meth:`generate_tool_request`."""
        return {tool.name: await _awaited(self._extract(user_prompt, tool))}

    def extract_decompositions(self, task_prompt: str, schemas: Schemas) -> Decompositions:
        """``decompose(task_prompt, schema)`` per schema; default: the offline extraction."""
        if self._decompose is None:
            return super().extract_decompositions(task_prompt, schemas)
        values = {s.name: _now(self._decompose(task_prompt, s)) for s in schemas}
        return Decompositions(values=values, llm_calls=1 if schemas else 0)

    async def aextract_decompositions(self, task_prompt: str, schemas: Schemas) -> Decompositions:
        """Async :meth:`extract_decompositions`."""
        if self._decompose is None:
            return super().extract_decompositions(task_prompt, schemas)
        values = {s.name: await _awaited(self._decompose(task_prompt, s)) for s in schemas}
        return Decompositions(values=values, llm_calls=1 if schemas else 0)

    def read_passage(self, question: str, passage: str, *, user_lang: str) -> str | None:
        """``read(question, passage)``; default ``None`` (the passage does not answer)."""
        return _now(self._read(question, passage))

    async def aread_passage(self, question: str, passage: str, *, user_lang: str) -> str | None:
        """Async :meth:`read_passage`."""
        return await _awaited(self._read(question, passage))

    def judge_context(
        self, question: str, documents: Documents, guaranteed: Texts
    ) -> ContextVerdict:
        """``judge(question, documents, guaranteed)``; default: sufficient."""
        return self._verdict(_now(self._judge(question, documents, guaranteed)))

    async def ajudge_context(
        self, question: str, documents: Documents, guaranteed: Texts
    ) -> ContextVerdict:
        """Async :meth:`judge_context`."""
        return self._verdict(await _awaited(self._judge(question, documents, guaranteed)))

    @staticmethod
    def _verdict(verdict: object) -> ContextVerdict:
        return verdict if isinstance(verdict, ContextVerdict) else ContextVerdict(bool(verdict))

    def answer(self, request: AnswerRequest) -> AIMessage:
        """``answer(request)``, streamed through a chat model so listeners see tokens."""
        return stream_message(_now(self._answer(request)))

    async def aanswer(self, request: AnswerRequest) -> AIMessage:
        """Async :meth:`answer` (the tokens still stream)."""
        return stream_message(await _awaited(self._answer(request)))


@dataclass(frozen=True)
class RecordedCall:
    """One call a :class:`ScriptedChatModel` received."""

    messages: list[BaseMessage]
    tools: list[dict[str, Any]] = field(default_factory=list)
    """OpenAI-format tool schemas bound for the call (structured output uses them)."""
    tags: list[str] = field(default_factory=list)

    @property
    def system(self) -> str:
        """Text of the first system message, or ``""``."""
        return next((m.text for m in self.messages if m.type == "system"), "")

    @property
    def human(self) -> str:
        """Text of the last human message, or ``""``."""
        return next((m.text for m in reversed(self.messages) if m.type == "human"), "")


ScriptItem = str | dict[str, Any] | AIMessage | BaseException
"""A reply: text, a structured answer (becomes a tool call), a message, or an error."""


class ScriptedChatModel(BaseChatModel):
    """A chat model that replays ``script`` in order and records calls in :attr:`calls`.

    A ``dict`` reply becomes a call of the bound tool (``with_structured_output``), an
    exception is raised, so is ``AssertionError`` once the script is exhausted; text streams
    word by word with a ``finish_reason`` (script an ``AIMessage`` without one to cut it).

    Example:
        >>> ScriptedChatModel(script=["Hello!"]).invoke("hi").text
        'Hello!'
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    script: list[Any] = Field(default_factory=list)
    """The replies, consumed in order (:data:`ScriptItem`)."""
    latency: float = 0.0
    """Seconds each reply takes."""

    _calls: list[RecordedCall] = PrivateAttr(default_factory=list)
    _lock: Any = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "toolweave-scripted"

    @property
    def calls(self) -> list[RecordedCall]:
        """The calls received so far."""
        return list(self._calls)

    def bind_tools(
        self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Record the tool schemas with the call, so structured output works."""
        formatted = [convert_to_openai_tool(tool) for tool in tools]
        return self.bind(tools=formatted, **kwargs)

    def _take(
        self, messages: list[BaseMessage], run_manager: Any, kwargs: dict[str, Any]
    ) -> tuple[Any, list[dict[str, Any]], int]:
        """Record the call and take the next script item (before any latency)."""
        tools = list(kwargs.get("tools") or [])
        tags = list(run_manager.tags) if run_manager is not None else []
        with self._lock:
            self._calls.append(RecordedCall(list(messages), tools, tags))
            if not self.script:
                raise AssertionError(
                    f"ScriptedChatModel: script exhausted at call {len(self._calls)}"
                )
            return self.script.pop(0), tools, len(self._calls)

    @staticmethod
    def _reply(item: Any, tools: list[dict[str, Any]], number: int) -> AIMessage:
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, AIMessage):
            return item
        if isinstance(item, dict):
            name = tools[0]["function"]["name"] if tools else "reply"
            call = {"name": name, "args": item, "id": f"call_{number}"}
            return AIMessage(
                content="", tool_calls=[call], response_metadata={"finish_reason": "tool_calls"}
            )
        return AIMessage(content=str(item), response_metadata={"finish_reason": "stop"})

    @staticmethod
    def _chunks(message: AIMessage) -> list[ChatGenerationChunk]:
        """The message as stream chunks; the last carries the finish reason."""
        meta = dict(message.response_metadata)
        if message.tool_calls:
            calls = [
                {"name": c["name"], "args": json.dumps(c["args"]), "id": c["id"], "index": i}
                for i, c in enumerate(message.tool_calls)
            ]
            chunk = AIMessageChunk(content="", tool_call_chunks=calls, response_metadata=meta)
            return [ChatGenerationChunk(message=chunk)]
        pieces = split_for_streaming(message.text) or [""]
        ends = {len(pieces) - 1: meta}
        return [
            ChatGenerationChunk(
                message=AIMessageChunk(content=p, response_metadata=ends.get(i, {}))
            )
            for i, p in enumerate(pieces)
        ]

    def _generate(
        self, messages: Messages, stop: Stop = None, run_manager: SyncRun = None, **kwargs: Any
    ) -> ChatResult:
        taken = self._take(messages, run_manager, kwargs)
        if self.latency:
            time.sleep(self.latency)
        return ChatResult(generations=[ChatGeneration(message=self._reply(*taken))])

    async def _agenerate(
        self, messages: Messages, stop: Stop = None, run_manager: AsyncRun = None, **kwargs: Any
    ) -> ChatResult:
        taken = self._take(messages, run_manager, kwargs)
        if self.latency:
            await asyncio.sleep(self.latency)
        return ChatResult(generations=[ChatGeneration(message=self._reply(*taken))])

    def _stream(
        self, messages: Messages, stop: Stop = None, run_manager: SyncRun = None, **kwargs: Any
    ) -> Iterator[ChatGenerationChunk]:
        result = self._generate(messages, stop, run_manager, **kwargs)
        for chunk in self._chunks(cast(AIMessage, result.generations[0].message)):
            if run_manager is not None and chunk.text:
                run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk

    async def _astream(
        self, messages: Messages, stop: Stop = None, run_manager: AsyncRun = None, **kwargs: Any
    ) -> AsyncIterator[ChatGenerationChunk]:
        result = await self._agenerate(messages, stop, run_manager, **kwargs)
        for chunk in self._chunks(cast(AIMessage, result.generations[0].message)):
            if run_manager is not None and chunk.text:
                await run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk

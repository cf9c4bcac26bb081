"""The tool contract (SPEC §1-§2): ``ChatbotTool`` and what one call of it receives."""

from __future__ import annotations

import asyncio
from collections.abc import (
    AsyncIterable,
    Awaitable,
    Callable,
    Coroutine,
    Iterable,
    Mapping,
    Sequence,
)
from dataclasses import KW_ONLY, dataclass, field
from enum import Enum
from typing import Any, ClassVar, Final, Generic, Protocol, TypeVar

from pydantic import BaseModel

from toolweave.state.results import ToolResult
from toolweave.state.task import PromptAndContext, TaskInfo
from toolweave.tools.progress import ProgressEmitter, ProgressMessages
from toolweave.tools.sync_loop import run_on_sync_loop
from toolweave.tools.text import readable


class PassageReader(Protocol):
    """A tool's counted handle on the run's model (``ctx.llm``), implemented by the LLM port."""

    @property
    def exhausted(self) -> bool:
        """True when the call's budget is spent (D7)."""
        ...

    def read_passage(self, question: str, passage: str) -> str | None:
        """Answer ``question`` from ``passage``; ``None`` if it does not say or no call is left."""
        ...

    async def aread_passage(self, question: str, passage: str) -> str | None:
        """Async :meth:`read_passage`."""
        ...


class Systems(Enum):
    """Sentinels for ``eligible_system``."""

    ALL = "ALL"
    """The tool may activate whatever the request's system filter (T3)."""


ALL: Final = Systems.ALL
"""``IChatbotTool.ALL``: eligible for every system filter (T3)."""

EligibleSystem = Systems | str | frozenset[str] | None


class EmptyRequest(BaseModel):
    """Request model of a tool that needs nothing from the user's text."""


RequestT = TypeVar("RequestT", bound=BaseModel)

MISSING_EXECUTE = "{cls} must implement {method}() or its async twin a{method}()"
_LIBRARY_DEFAULTS = (__name__, "toolweave.tools.consumers")  # modules of the async defaults


def run_async_twin(tool: object, method: str, *args: Any) -> ToolResult | None:
    """A sync ``method`` of a tool that implements only its async twin, on the sync loop.

    Raises:
        NotImplementedError: The twin is the library's default too: neither is implemented.
    """
    twin = f"a{method}"
    if getattr(getattr(type(tool), twin), "__module__", None) in _LIBRARY_DEFAULTS:
        raise NotImplementedError(MISSING_EXECUTE.format(cls=type(tool).__name__, method=method))
    coro: Coroutine[Any, Any, ToolResult | None] = getattr(tool, twin)(*args)
    return run_on_sync_loop(coro)


AnswerStreamer = Callable[[Iterable[str]], str]
"""Streams answer chunks to the client (R4) and returns the whole text."""


AsyncAnswerStreamer = Callable[[AsyncIterable[str] | Iterable[str]], Awaitable[str]]
"""Async :data:`AnswerStreamer`: streams (async) chunks to the client and returns the text."""


async def _no_astream(chunks: AsyncIterable[str] | Iterable[str]) -> str:
    if isinstance(chunks, AsyncIterable):
        return "".join([piece async for piece in chunks])
    return "".join(chunks)


@dataclass(frozen=True, kw_only=True)
class CallContext:
    """What every tool call receives besides its input (T9, Q6), made fresh for each (T11)."""

    idempotency_key: str = ""
    """Q6: the same for every re-execution of this call, different for any other call;
    dedupe side effects on it. ``""``: a direct call outside a graph."""
    user_lang: str = "en"
    """The user's language, decided once per message (T10)."""
    systems: tuple[str, ...] = ()
    """The request's system filter (T3)."""
    user_data: Mapping[str, Any] | None = None
    """The request's user data (T4): never log it (X4)."""
    progress: ProgressEmitter = field(default_factory=lambda: ProgressEmitter("tool"))
    """Null-safe progress emitter (P1-P3)."""
    amends: tuple[str, ...] = ()
    """Q2, Q6: the keys of the earlier calls whose effect this call replaces, oldest first
    (an amended request); update or cancel that effect instead of acting anew."""

    @property
    def effect_key(self) -> str:
        """The key of the effect this call makes or changes (Q6): the first call's key."""
        return self.amends[0] if self.amends else self.idempotency_key


@dataclass(frozen=True)
class ToolCallContext(CallContext):
    """Everything one execution of a tool receives besides its request (T9)."""

    task: TaskInfo
    """The task the tool runs on."""
    text: str
    """The execution text (M3): prompt context, marker, task prompt."""
    _: KW_ONLY
    important_words: tuple[str, ...] = ()
    """Key words of the question (A1)."""
    search_words: str = ""
    """Words the routing call gave for searching the documents (D9); ``""``: none."""
    stream_answer: AnswerStreamer = "".join
    """Streams a finished answer to the client; return ``as_answered`` after it (R4)."""
    astream_answer: AsyncAnswerStreamer = _no_astream
    """Async :attr:`stream_answer` for ``aexecute``."""
    llm: PassageReader | None = None
    """The run's model for tools that read text with it, counted and capped (D7)."""
    replies: tuple[str, ...] = ()
    """Q2: in ``execute_with_clarification``, the person's replies to this tool's questions
    on this task in this request, oldest first; the last is the method's ``reply``. A tool
    that asks more than once ("Which district?", then "Which day?") reads the earlier
    answers here. ``()`` in ``execute``."""

    @property
    def task_no(self) -> str:
        """The id of the task the tool runs on."""
        return self.task.task_no


class ChatbotTool(Generic[RequestT]):
    """A pluggable tool (``IChatbotTool<R>``): set the class attributes, implement :meth:`execute`.

    Instances are singletons shared by concurrent runs (T11): no per-request data on ``self``.
    """

    name: ClassVar[str]
    """Unique id, lower_snake_case (T1)."""
    domain: ClassVar[str | None] = None
    """``None``: every domain; a string: only that domain (T2)."""
    eligible_system: ClassVar[EligibleSystem] = None
    """``None``: only requests with no system filter; ``ALL``; or system name(s) (T3)."""
    priority: ClassVar[int] = 100
    """Execution order on a task, lower first (A6, R8); also the coordinator order (C2)."""
    request_model: ClassVar[type[BaseModel]] = EmptyRequest
    """The pydantic model filled from the user's text (T6)."""
    instruction: ClassVar[str] = ""
    """Field-filling instruction for extraction (T7)."""
    executable_instruction: ClassVar[str | None] = None
    """The routing question, starting with the tool's name; ``None``: only forced (T5)."""
    description: ClassVar[str] = ""
    """A sentence for people (``toolweave tools``) and for lexical routing offline."""
    required_inputs: ClassVar[tuple[str, ...]] = ()
    """Request fields the tool cannot run without (T13): unfilled, it is not called (R1, Q1)."""
    ask_for_missing_inputs: ClassVar[bool] = False
    """Ask the user for an unfilled required input instead of declining (T13, Q1)."""
    source_name: ClassVar[str | None] = None
    """The outside name an adapted tool came from (T14); ``None``: the tool's own ``name``."""
    system_prompt_supplement: ClassVar[str | None] = None
    """Appended to the final answer's system prompt when the tool ran (T8)."""
    returns_answer: ClassVar[bool] = False
    """True when the tool's result may be a finished answer (R3/R4); routed on clear yes (A8)."""
    progress_messages: ClassVar[ProgressMessages | None] = None
    """Phrases for people of the tool's progress events, by event and language (P4)."""
    routing_examples: ClassVar[tuple[str, ...]] = ()
    """A few questions the tool is for: its declared intent (A9)."""
    not_for: ClassVar[tuple[str, ...]] = ()
    """Questions that look like the tool's but are not for it (A9)."""
    side_effects: ClassVar[bool] = False
    """True when running the tool changes something outside the run (A9, Q6)."""
    takes_amendments: ClassVar[bool] = False
    """True: called again for an amended request, it updates its effect (``ctx.amends``, Q2);
    False: its earlier result stands (S5, Q6)."""

    def is_eligible(self, user_data: Mapping[str, Any] | None) -> bool:
        """Non-LLM gate run before routing (T4); default ``True``."""
        return True

    def request_schema(self) -> dict[str, Any]:
        """JSON schema used for constrained decoding (T6)."""
        return self.request_model.model_json_schema()

    def execute(self, request: RequestT, ctx: ToolCallContext) -> ToolResult | None:
        """Run the tool (T9); ``None`` means "not mine" (R1). Implement it or :meth:`aexecute`."""
        return run_async_twin(self, "execute", request, ctx)

    async def aexecute(self, request: RequestT, ctx: ToolCallContext) -> ToolResult | None:
        """Async :meth:`execute`; the default runs :meth:`execute` in a worker thread."""
        return await asyncio.to_thread(self.execute, request, ctx)

    def result_text(self, text: str, *, user_lang: str) -> str:
        """How a result reads in the answer (R10): JSON as ``"Field: value"`` lines by default."""
        return readable(text)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


PriorContext = Mapping[str, Sequence[PromptAndContext]]
"""A snapshot of the context buffer, keyed ``"task_no:tool_name"`` (B2)."""

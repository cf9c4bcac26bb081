"""The typed LangGraph state (input ⊂ state → output), ``typing_extensions`` TypedDicts."""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, NotRequired

from langchain_core.messages import AnyMessage
from langgraph.channels import DeltaChannel
from langgraph.graph.message import add_messages
from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from toolweave.state.documents import AnswerSentence, Source, UniqueTextDocument, merge_documents
from toolweave.state.ledger import LedgerEntry
from toolweave.state.pauses import Pause
from toolweave.state.task import PromptAndContext, TaskInfo, TaskNode


# Batch reducers: a step's writes folded at once, copying the value once.
def append_all(value: list[Any], writes: Sequence[list[Any]]) -> list[Any]:
    """Batch reducer: the lists written in one step, appended in order."""
    merged = list(value)
    for write in writes:
        merged.extend(write)
    return merged


def merge_all_tasks(value: dict[str, TaskNode], writes: Sequence[dict[str, TaskNode]]) -> Any:
    """Batch reducer of the flat task map: a write replaces only the tasks it names."""
    merged = dict(value)
    for write in writes:
        merged.update(write)
    return merged


def merge_all_buffers(value: dict[str, Any], writes: Sequence[dict[str, Any]]) -> Any:
    """Batch reducer of the context buffer: entries under one key are appended (B1)."""
    merged = dict(value)
    for write in writes:
        for key, entries in write.items():
            merged[key] = [*merged.get(key, []), *entries]
    return merged


def merge_all_documents(value: list[Any], writes: Sequence[list[Any]]) -> Any:
    """Batch reducer of :func:`merge_documents` (which also reads plain mappings)."""
    return merge_documents(value or [], [doc for write in writes for doc in write])


def add_all_messages(value: list[AnyMessage], writes: Sequence[Any]) -> Any:
    """Batch reducer of LangChain's ``add_messages`` (ids dedupe and replace as usual)."""
    merged: Any = value
    for write in writes:
        merged = add_messages(merged, write)
    return merged


class StateDeltaChannel(DeltaChannel[Any]):
    """LangGraph's ``DeltaChannel``, copied after each node without re-running its checks."""

    __slots__ = ()

    def copy(self) -> Any:
        """The channel with the same fields and a shallow copy of its value."""
        value = self.value
        if type(value) is not list and type(value) is not dict:
            return super().copy()
        new = object.__new__(type(self))
        for slot in _DELTA_SLOTS:
            setattr(new, slot, getattr(self, slot))
        new.value = value.copy()
        return new


_DELTA_SLOTS = tuple(
    dict.fromkeys(slot for cls in DeltaChannel.__mro__ for slot in getattr(cls, "__slots__", ()))
)
# Channels checkpointed as their writes: the state grows with what happened, not steps x size
TASKS_CHANNEL: DeltaChannel[Any] = StateDeltaChannel(merge_all_tasks)
BUFFER_CHANNEL: DeltaChannel[Any] = StateDeltaChannel(merge_all_buffers)
DOCUMENTS_CHANNEL: DeltaChannel[Any] = StateDeltaChannel(merge_all_documents)
APPEND_CHANNEL: DeltaChannel[Any] = StateDeltaChannel(append_all)
MESSAGES_CHANNEL: DeltaChannel[Any] = StateDeltaChannel(add_all_messages)


class ActedCall(BaseModel):
    """A call of a tool that acts whose effect stands for a request (Q6), kept on amending (S5)."""

    model_config = ConfigDict(frozen=True)

    tool: str  # the tool that acted
    task_no: str  # the task it acted on, in the amended request's task tree
    key: str  # the call's idempotency key (Q6)
    amends: tuple[str, ...] = ()  # keys of the earlier calls it replaced, oldest first
    result: str = ""  # its result as the tool gave it (B1), read through ``result_text`` (R10)
    finished: bool = False  # the result was a finished answer (R3): it stands as one (S5)


class MessageFacts(BaseModel):
    """What normalization decided about the current message: one channel, written once (A1, A2)."""

    model_config = ConfigDict(frozen=True)

    question: str  # the standalone question after normalization (A1)
    user_lang: str  # decided once per message (T10)
    important_words: list[str] = Field(default_factory=list)  # A1
    prompt_type: str | None = None  # A1, D2
    offered: list[str] = Field(default_factory=list)  # tools that passed every gate (A2)
    coordinators: list[str] = Field(default_factory=list)  # the offered ones, by priority (C2)
    amends: tuple[ActedCall, ...] = ()  # the acted calls of the request it amends (Q2, Q6, S5)
    follow_up: str = ""  # the person's words when the question borrows an earlier one's (A1, A9)


def message_of(values: Mapping[str, Any] | None) -> MessageFacts | None:
    """The message facts of stored state values (``None`` before the first normalization)."""
    facts = (values or {}).get("message")
    if facts is None or isinstance(facts, MessageFacts):
        return facts
    return MessageFacts.model_validate(facts)  # read back as a plain mapping


class InputState(TypedDict):
    """What a caller sends: the LangChain chat convention plus the request's filters."""

    messages: Annotated[list[AnyMessage], MESSAGES_CHANNEL]
    """The conversation; the last human message is the question (A1)."""
    systems: NotRequired[list[str]]
    """The request's system filter (T3); empty or absent means no filter."""
    user_data: NotRequired[dict[str, Any] | None]
    """Data about the user that eligibility gates and tools read (T4)."""
    client_tools: NotRequired[list[str]]
    """Ids of the AI tools the client implements and runs itself (W3)."""


class OutputState(TypedDict):
    """What a run returns."""

    messages: Annotated[list[AnyMessage], MESSAGES_CHANNEL]
    """The conversation, with the answer appended as an AI message."""
    answer: str | None
    """The final answer text (``None`` while a run is paused)."""
    sources: list[Source]
    """The documents the final answer used, in answer order (R9); every surface shows these."""
    answer_sentences: list[AnswerSentence]
    """A generated answer's sentences with their sources and support (R9); else empty."""
    documents: Annotated[list[UniqueTextDocument], DOCUMENTS_CHANNEL]
    """The deduplicated context documents the answer was built from (R2, R6)."""
    guaranteed: Annotated[list[PromptAndContext], APPEND_CHANNEL]
    """Guaranteed context that always reaches the answer (R5, M6)."""
    activated: Annotated[list[str], APPEND_CHANNEL]
    """Every tool execution of the run as ``"task_no:tool_name"``, in order."""
    task: TaskInfo | None
    """The task tree, nested, as it stood when the run finished."""
    context_buffer: Annotated[dict[str, list[PromptAndContext]], BUFFER_CHANNEL]
    """Results keyed ``"task_no:tool_name"`` (B1, S4)."""
    ledger: Annotated[list[LedgerEntry], APPEND_CHANNEL]
    """Every decision of the run (L1)."""
    llm_calls: Annotated[int, operator.add]
    """LLM calls spent by the run (normalization, routing, extraction, answer, ...)."""
    deep_fallback_calls: Annotated[int, operator.add]
    """Of those, the calls deep fallback spent: gatekeeper and page reading (D7 cap)."""


class GraphState(InputState, OutputState):
    """The whole state of a run; everything in it is checkpointed."""

    message: MessageFacts
    """The current message's question, language, key words and offered tools (A1, A2)."""
    tasks: Annotated[dict[str, TaskNode], TASKS_CHANNEL]
    """The task tree, flat, keyed by ``task_no``; children ids are on each node."""
    terminal: str | None
    """``"task_no:tool_name"`` of a terminal result (R3, R4) that ended the walk (S3)."""
    answer_id: str | None
    """Message id under which a tool streamed its answer itself (R4), kept in ``messages``."""
    deep_fallback_done: bool
    """Deep fallback had its one turn for this message (D7)."""
    pause: Pause | None
    """The pending pause (Q7), or the reply or results waiting for its tool (Q1, Q2, W3)."""
    deep_fallback_owner: str | None
    """The deep-search coordinator whose subtasks draw on the deep-fallback cap (D7)."""
    clarification_rounds: int
    """Clarification questions asked for this message so far (Q2 limit)."""
    acted_on: str | None
    """A digest (X4) of the message a tool that acts last acted on: sent again, checked (S5)."""

"""A thread's status, replies to paused threads and interrupted runs (X1, Q2, Q5)."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, Protocol, TypeGuard, runtime_checkable

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END
from langgraph.pregel import Pregel
from langgraph.types import Command, StateSnapshot, StateUpdate

from toolweave.graph.langgraph_private import checkpointer_of
from toolweave.graph.pause import MESSAGE_RESUME
from toolweave.graph.validation import reply_text
from toolweave.state.errors import InvalidRequestError, NothingPendingError, UnknownThreadError
from toolweave.state.graph_state import message_of
from toolweave.state.ledger import LedgerEntry, LedgerKind
from toolweave.state.pauses import (
    ClarificationPayload,
    PausePayload,
    clarification_of,
    describe,
    pause_payloads,
)

CompiledGraph = Pregel[Any, Any, Any, Any]
"""Any compiled LangGraph graph (a ``ToolweaveGraph`` here)."""

NO_THREAD = "no conversation is stored under thread {thread!r}"
NOTHING_PENDING = "thread {thread!r} is not waiting for a reply"
NOT_WAITING = "thread {thread!r} is not waiting for a reply: {why}"
NOT_INTERRUPTED = "thread {thread!r} has no interrupted run: {why}"
NO_CHECKPOINTER = "thread status and replies need a graph compiled with a checkpointer"
WHY = {
    "new": "nothing is stored under it",
    "finished": "its last run finished",
    "waiting_for_reply": "it is waiting for a reply (use toolweave.reply)",
    "interrupted_mid_run": (
        "its last run stopped mid-way (finish it with toolweave.resume_interrupted)"
    ),
    "running": "a run is going on it now (wait for it to end)",
}
ABANDONED_REASON = "the run stopped before {next} and was abandoned; it will not be finished"


class ThreadStatusKind(StrEnum):
    """Where a thread stands (Q5)."""

    NEW = "new"
    """Nothing is stored under the thread id."""
    FINISHED = "finished"
    """The last run ended with an answer (or was abandoned); a new message starts a run."""
    WAITING_FOR_REPLY = "waiting_for_reply"
    """The run is paused (Q7): on a question (Q1) or client-tool calls (W3); see
    :attr:`ThreadStatus.pause` for which."""
    INTERRUPTED_MID_RUN = "interrupted_mid_run"
    """The run stopped between steps (a crash, a killed process, a failed step)."""
    RUNNING = "running"
    """A run is going on the thread now (its steps are not all saved): one of this
    process, or, over a PostgreSQL checkpointer, of another process."""


@dataclass(frozen=True)
class ThreadStatus:
    """A thread's status and what is pending on it."""

    thread_id: str
    kind: ThreadStatusKind
    next: tuple[str, ...] = ()
    """The graph nodes that would run next (an interrupted or paused run)."""
    interrupts: tuple[Any, ...] = ()
    """Every pending interrupt's value (questions and client-tool calls)."""
    error: str | None = None
    """The error a failed step left, if the run stopped on one."""
    checkpoint_id: str | None = None
    """The thread's latest checkpoint."""
    question: str | None = None
    """The question of the last run (after normalization), if it got that far."""

    @property
    def describe(self) -> str:
        """One line for people: the kind and what is pending."""
        match self.kind:
            case ThreadStatusKind.NEW | ThreadStatusKind.FINISHED:
                return self.kind.value
            case ThreadStatusKind.WAITING_FOR_REPLY:
                return "waiting for a reply" if self.pause is None else describe(self.pause)
            case ThreadStatusKind.INTERRUPTED_MID_RUN:
                line = f"interrupted mid-run; next: {', '.join(self.next)}"
                return f"{line} (failed: {self.error})" if self.error else line
            case ThreadStatusKind.RUNNING:
                return "running now"

    @property
    def pause(self) -> PausePayload | None:
        """The pause the run waits on, of whichever kind (Q7), if it waits."""
        return next(iter(pause_payloads(self.interrupts)), None)

    @property
    def pending_question(self) -> ClarificationPayload | None:
        """The open clarification payload (``"type": "clarification"``), if any."""
        return clarification_of(pause_payloads(self.interrupts))

    @property
    def pause_kind(self) -> str | None:
        """The kind of pause the run waits on (``"clarification"``, ...), if it waits."""
        return None if self.pause is None else self.pause["type"]


def thread_id_of(config: RunnableConfig) -> str:
    """The ``thread_id`` a config names, or :class:`InvalidRequestError`."""
    thread = (config.get("configurable") or {}).get("thread_id")
    if not thread:
        raise InvalidRequestError("the config names no thread_id")
    return str(thread)


def _config(thread: RunnableConfig | str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread}} if isinstance(thread, str) else thread


def cut_after_its_writes(snapshot: StateSnapshot) -> bool:
    """Whether a run stopped after a step's writes were saved but before its checkpoint (Q5).

    A stream its reader closes (``break``, a web client gone) ends the run there: LangGraph
    keeps the finished step's writes, shows no ``next`` step, and the run never reached
    the steps after it (the answer). Its tasks still hold their results; a finished run's
    snapshot has no tasks left.
    """
    return bool(snapshot.tasks) and all(
        task.error is None and not task.interrupts and task.result is not None
        for task in snapshot.tasks
    )


def status_of(snapshot: StateSnapshot, thread_id: str) -> ThreadStatus:
    """The status a thread's latest snapshot shows (Q5)."""
    if not snapshot.values and snapshot.created_at is None:
        return ThreadStatus(thread_id=thread_id, kind=ThreadStatusKind.NEW)
    values = [interrupt.value for interrupt in snapshot.interrupts]
    error = next((str(task.error) for task in snapshot.tasks if task.error is not None), None)
    if values:
        kind = ThreadStatusKind.WAITING_FOR_REPLY
    elif snapshot.next or cut_after_its_writes(snapshot):
        kind = ThreadStatusKind.INTERRUPTED_MID_RUN
    else:
        kind = ThreadStatusKind.FINISHED
    checkpoint = (snapshot.config.get("configurable") or {}).get("checkpoint_id")
    message = message_of(snapshot.values)
    return ThreadStatus(
        thread_id=thread_id,
        kind=kind,
        next=tuple(snapshot.next),
        interrupts=tuple(values),
        error=error,
        checkpoint_id=None if checkpoint is None else str(checkpoint),
        question=None if message is None else message.question,
    )


def _checked(graph: CompiledGraph, config: RunnableConfig) -> str:
    if graph.checkpointer is None and checkpointer_of(config.get("configurable") or {}) is None:
        raise InvalidRequestError(NO_CHECKPOINTER)
    return thread_id_of(config)


def thread_status(graph: CompiledGraph, thread: RunnableConfig | str) -> ThreadStatus:
    """Where a thread stands: new, finished, waiting for a reply or interrupted mid-run (Q5).

    Args:
        graph: The compiled graph, with a checkpointer.
        thread: The run config naming the thread, or the thread id.
    """
    config = _config(thread)
    thread_id = _checked(graph, config)
    status = _running(graph, config, status_of(graph.get_state(config), thread_id))
    if _maybe_elsewhere(graph, status) and graph.thread_running_elsewhere(config):
        return replace(status, kind=ThreadStatusKind.RUNNING)
    return status


async def athread_status(graph: CompiledGraph, thread: RunnableConfig | str) -> ThreadStatus:
    """Async :func:`thread_status` (for async checkpointers)."""
    config = _config(thread)
    thread_id = _checked(graph, config)
    status = _running(graph, config, status_of(await graph.aget_state(config), thread_id))
    if _maybe_elsewhere(graph, status) and await graph.athread_running_elsewhere(config):
        return replace(status, kind=ThreadStatusKind.RUNNING)
    return status


@runtime_checkable
class _KnowsItsRuns(Protocol):
    """A graph whose runs take turns on a thread (a ``ToolweaveGraph``, S5)."""

    def thread_running(self, config: RunnableConfig) -> bool: ...

    def thread_running_elsewhere(self, config: RunnableConfig) -> bool: ...

    async def athread_running_elsewhere(self, config: RunnableConfig) -> bool: ...

    def holding_thread(self, config: RunnableConfig) -> AbstractContextManager[None]: ...


def _running(graph: CompiledGraph, config: RunnableConfig, status: ThreadStatus) -> ThreadStatus:
    """``status``, or ``running`` while a run of this process holds the thread (Q5, S5).

    The checkpoints of a run in flight look like a run cut mid-way (or like the last one's
    end before its first step is saved): only the run's lock tells them apart.
    """
    if isinstance(graph, _KnowsItsRuns) and graph.thread_running(config):
        return replace(status, kind=ThreadStatusKind.RUNNING)
    return status


def _maybe_elsewhere(graph: CompiledGraph, status: ThreadStatus) -> TypeGuard[_KnowsItsRuns]:
    """Whether ``status`` may be a run of another process in flight, for the database to tell.

    Its checkpoints look like a run cut mid-way; asked only then (a database round trip).
    """
    return status.kind is ThreadStatusKind.INTERRUPTED_MID_RUN and isinstance(graph, _KnowsItsRuns)


def next_input(graph: CompiledGraph, thread: RunnableConfig | str, message: str) -> Any:
    """What to invoke ``graph`` with for the person's next message on a thread (Q2).

    While a toolweave question waits, a message resume
    (``Command(resume={"type": "message", "content": message})``): the paused run reads it as
    a reply, an amended request, a new question or a cancel. Otherwise the message as a new
    input. Use it for a graph of your own with toolweave's graph as a node: a new input on a
    thread whose node waits starts the parent over, and LangGraph drops the waiting question.

    Args:
        graph: Any compiled graph with a checkpointer (yours, or toolweave's).
        thread: The run config naming the thread, or the thread id.
        message: What the person wrote.
    """
    return _next_input(thread_status(graph, thread), message)


async def anext_input(graph: CompiledGraph, thread: RunnableConfig | str, message: str) -> Any:
    """Async :func:`next_input` (for async checkpointers)."""
    return _next_input(await athread_status(graph, thread), message)


def _next_input(status: ThreadStatus, message: str) -> Any:
    if status.pending_question is not None:
        return Command(resume={"type": MESSAGE_RESUME, "content": message})
    return {"messages": [HumanMessage(message)]}


def require_interrupted(status: ThreadStatus) -> ThreadStatus:
    """``status`` if it is ``interrupted_mid_run``, else :class:`NothingPendingError`."""
    if status.kind is not ThreadStatusKind.INTERRUPTED_MID_RUN:
        raise NothingPendingError(
            NOT_INTERRUPTED.format(thread=status.thread_id, why=WHY[status.kind.value])
        )
    return status


def resume_interrupted(graph: CompiledGraph, thread: RunnableConfig | str, **kwargs: Any) -> Any:
    """Finish a run that stopped mid-way (Q5): it goes on from its last saved step.

    Steps whose writes were saved are not run again; the step that was running
    when the process died runs again from its start (Q6: tools are at least once).

    Args:
        graph: The compiled graph, with the checkpointer the thread is stored in.
        thread: The run config naming the thread, or the thread id.
        **kwargs: Passed on to ``graph.invoke`` (e.g. ``context=``).

    Returns:
        What ``graph.invoke`` returns: the finished (or newly paused) run's output.

    Raises:
        NothingPendingError: The thread has no interrupted run (it is new,
            finished, or waiting for a reply).
    """
    config = _config(thread)
    require_interrupted(thread_status(graph, config))
    return graph.invoke(None, config, **kwargs)


async def aresume_interrupted(
    graph: CompiledGraph, thread: RunnableConfig | str, **kwargs: Any
) -> Any:
    """Async :func:`resume_interrupted`."""
    config = _config(thread)
    require_interrupted(await athread_status(graph, config))
    return await graph.ainvoke(None, config, **kwargs)


def abandon_updates(status: ThreadStatus) -> list[list[StateUpdate]]:
    """The state updates that abandon an interrupted run (Q5), for ``bulk_update_state``."""
    failed = {"error": status.error} if status.error else {}
    entry = LedgerEntry(
        kind=LedgerKind.RUN_ABANDONED,
        verdict="abandoned",
        reason=ABANDONED_REASON.format(next=", ".join(status.next)),
        details={"next": ",".join(status.next), **failed},
    )
    return [[StateUpdate({"ledger": [entry]}, status.next[0])], [StateUpdate(None, END)]]


def abandon_interrupted(graph: CompiledGraph, thread: RunnableConfig | str) -> ThreadStatus:
    """Drop a run that stopped mid-way, with a ``run_abandoned`` ledger entry (Q5).

    The thread then counts as finished: the next message starts a new run.

    Raises:
        NothingPendingError: The thread has no interrupted run.
    """
    config = _config(thread)
    status = require_interrupted(thread_status(graph, config))
    graph.bulk_update_state(config, abandon_updates(status))
    return thread_status(graph, config)


async def aabandon_interrupted(graph: CompiledGraph, thread: RunnableConfig | str) -> ThreadStatus:
    """Async :func:`abandon_interrupted`."""
    config = _config(thread)
    status = require_interrupted(await athread_status(graph, config))
    await graph.abulk_update_state(config, abandon_updates(status))
    return await athread_status(graph, config)


def pending_clarification(graph: CompiledGraph, config: RunnableConfig) -> Any:
    """The open clarification payload of a thread (Q1), or ``None`` when nothing is pending.

    Raises:
        UnknownThreadError: Nothing is stored under the thread.
    """
    status = thread_status(graph, config)
    if status.kind is ThreadStatusKind.NEW:
        raise UnknownThreadError(NO_THREAD.format(thread=status.thread_id))
    return None if status.pending_question is None else dict(status.pending_question)


def reply(graph: CompiledGraph, config: RunnableConfig, text: Any, **kwargs: Any) -> Any:
    """Resume a thread paused on a clarification question with the user's reply (Q2).

    Args:
        graph: The compiled graph (with a checkpointer).
        config: The run config naming the thread.
        text: The reply: a string, or ``{"reply": "..."}``.
        **kwargs: Passed on to ``graph.invoke`` (e.g. ``context=``).

    Raises:
        UnknownThreadError: Nothing is stored under the thread.
        NothingPendingError: The thread is not waiting for a reply (read after the thread's
            run in flight, such as the same reply sent a moment before, has ended).
        InvalidRequestError: The reply is empty.
        ThreadBusyError: The thread's run in flight did not end within ``thread_wait_s``.
    """
    answer = reply_text(text)
    turn: AbstractContextManager[None] = nullcontext()
    if isinstance(graph, _KnowsItsRuns):  # a ToolweaveGraph's runs take turns (S5)
        turn = graph.holding_thread(config)
    with turn:
        status = thread_status(graph, config)
        if status.kind is ThreadStatusKind.NEW:
            raise UnknownThreadError(NO_THREAD.format(thread=status.thread_id))
        if status.pending_question is not None:
            return graph.invoke(Command(resume=answer), config, **kwargs)
    if status.kind is ThreadStatusKind.WAITING_FOR_REPLY:  # on the client's tool results
        raise NothingPendingError(NOTHING_PENDING.format(thread=status.thread_id))
    why = WHY[status.kind.value]  # a stopped run is finished, not replied to again
    raise NothingPendingError(NOT_WAITING.format(thread=status.thread_id, why=why))

"""Replying to a paused thread, with clear errors instead of LangGraph's silent cases (X1, Q2).

``graph.invoke(Command(resume=...), config)`` on an unknown thread runs the graph
from the start with no input, and on a thread with nothing pending it quietly
returns the state. :func:`reply` checks first and changes nothing when the
reply has nowhere to go.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.pregel import Pregel
from langgraph.types import Command

from toolweave.graph.clarify import reply_text
from toolweave.state.errors import InvalidRequestError, NothingPendingError, UnknownThreadError

NO_THREAD = "no conversation is stored under thread {thread!r}"
NOTHING_PENDING = "thread {thread!r} is not waiting for a reply"
NO_CHECKPOINTER = "replying needs a graph compiled with a checkpointer"


def _thread(config: RunnableConfig) -> str:
    thread = (config.get("configurable") or {}).get("thread_id")
    if not thread:
        raise InvalidRequestError("the config names no thread_id")
    return str(thread)


def pending_clarification(graph: Pregel[Any, Any, Any, Any], config: RunnableConfig) -> Any:
    """The open clarification payload of a thread (Q1), or ``None`` when nothing is pending.

    Raises:
        UnknownThreadError: Nothing is stored under the thread.
    """
    if graph.checkpointer is None:
        raise InvalidRequestError(NO_CHECKPOINTER)
    thread = _thread(config)
    snapshot = graph.get_state(config)
    if not snapshot.values and snapshot.created_at is None:
        raise UnknownThreadError(NO_THREAD.format(thread=thread))
    for interrupt in snapshot.interrupts:
        if isinstance(interrupt.value, dict) and interrupt.value.get("type") == "clarification":
            return interrupt.value
    return None


def reply(
    graph: Pregel[Any, Any, Any, Any], config: RunnableConfig, text: Any, **kwargs: Any
) -> Any:
    """Resume a thread paused on a clarification question with the user's reply (Q2).

    Args:
        graph: The compiled graph (with a checkpointer).
        config: The run config naming the thread.
        text: The reply: a string, or ``{"reply": "..."}``.
        **kwargs: Passed on to ``graph.invoke`` (e.g. ``context=``).

    Raises:
        UnknownThreadError: Nothing is stored under the thread.
        NothingPendingError: The thread is not waiting for a reply.
        InvalidRequestError: The reply is empty.
    """
    answer = reply_text(text)
    if pending_clarification(graph, config) is None:
        raise NothingPendingError(NOTHING_PENDING.format(thread=_thread(config)))
    return graph.invoke(Command(resume=answer), config, **kwargs)
